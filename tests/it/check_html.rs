//! `check --output-format html`: one self-contained page for a folder, a
//! summary row and a section per session (the diagnose page's parts), ids
//! unique across the page, every link landing on the page, nothing loaded from
//! the network, the session's text escaped, and one preview budget for all.

use crate::common;
use crate::common::media_corpus;
use crate::common::page;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use common::wrap::{self, Item};
use common::{b64, run, sha256_file, write};
use page::{assert_offline, sel};
use scraper::{ElementRef, Html};

const SCRIPT: &str = "<script>alert(1)</script>";
const ESC: &str = "\u{1b}[31m";
/// A file name cannot hold the `/` of a closing tag.
const OPEN: &str = "<script>alert(1)";

/// A PNG cut short inside its image data, as an interrupted download leaves it.
fn cut_png() -> Vec<u8> {
    let png = media_corpus::png(64, 48);
    png[..png.len() * 2 / 3].to_vec()
}

/// The folder: a healthy codex session, and two stuck ones (Claude Code and
/// pi) whose provider rejected a cut PNG; the Claude Code one has a hostile
/// name and error message.
fn folder(dir: &Path) -> Vec<PathBuf> {
    let (good, small, cut) = (b64(&media_corpus::png(40, 30)), b64(&media_corpus::jpeg(30, 20)), b64(&cut_png()));
    let healthy = wrap::session(
        "codex",
        &[Item { base64: &good, mime: "image/png" }, Item { base64: &small, mime: "image/jpeg" }],
    );
    let broken = |format: &str, message: &str| {
        let s = wrap::session(
            format,
            &[Item { base64: &good, mime: "image/png" }, Item { base64: &cut, mime: "image/png" }],
        );
        wrap::failed(format, &s, message)
    };
    let hostile = format!("messages.2.content.0.image.source.base64: Could not process image {SCRIPT} {ESC}red");
    vec![
        write(dir, "a-codex-ok.jsonl", &healthy),
        write(dir, &format!("b-claude{OPEN}{ESC}.jsonl"), &broken("claude-code", &hostile)),
        write(
            dir,
            "c-pi-stuck.jsonl",
            &broken("pi", "messages.2.content.0.image.source.base64: Could not process image"),
        ),
    ]
}

/// Runs `check --output-format html --out PAGE DIR`: the page and the exit code.
fn page(dir: &Path, out: &Path) -> (String, i32) {
    let o = run(&["check", "--output-format", "html", "--out", out.to_str().unwrap(), dir.to_str().unwrap()]);
    assert!(o.stdout.is_empty(), "with --out, nothing on stdout");
    let code = o.status.code().expect("exited");
    (
        std::fs::read_to_string(out)
            .unwrap_or_else(|e| panic!("no page ({e}): {}", String::from_utf8_lossy(&o.stderr))),
        code,
    )
}

/// Every id on the page, each once; every `href="#…"` names one of them.
fn assert_links_resolve(doc: &Html) -> HashSet<String> {
    let mut ids = HashSet::new();
    for el in doc.select(&sel("[id]")) {
        let id = el.value().attr("id").unwrap().to_string();
        assert!(ids.insert(id.clone()), "id {id} is on the page twice");
    }
    let mut links = 0;
    for a in doc.select(&sel("[href]")) {
        let href = a.value().attr("href").unwrap();
        if let Some(target) = href.strip_prefix('#') {
            assert!(ids.contains(target), "href={href} names no id on the page");
            links += 1;
        }
    }
    assert!(links > 0);
    ids
}

#[test]
fn a_folder_of_three_sessions_on_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("recordings");
    std::fs::create_dir(&sessions).unwrap();
    let files = folder(&sessions);
    let before: Vec<String> = files.iter().map(|f| sha256_file(f)).collect();
    let out = dir.path().join("check.html");
    let (html, code) = page(&sessions, &out);
    assert_eq!(code, 1, "two sessions would be rejected");
    assert_eq!(files.iter().map(|f| sha256_file(f)).collect::<Vec<_>>(), before, "a session was modified");

    let doc = Html::parse_document(&html);
    assert_offline(&html, &doc);
    let ids = assert_links_resolve(&doc);

    // Escaped: the hostile file name and message are text, not markup.
    assert!(!html.contains('\u{1b}'), "a raw terminal escape reached the page");
    assert!(!html.contains(OPEN), "raw markup reached the page");
    let text: String = doc.root_element().text().collect();
    assert!(text.contains(&format!("b-claude{OPEN}\\u{{1b}}[31m.jsonl")), "the file name shows as text");
    assert!(text.contains(&format!("Could not process image {SCRIPT} \\u{{1b}}[31mred")), "the error shows as text");

    // The summary: one row per session, in the walk's order, linking to its section.
    let rows: Vec<ElementRef> = doc.select(&sel("table.sessions tbody tr")).collect();
    assert_eq!(rows.len(), 3);
    let sections: Vec<ElementRef> = doc.select(&sel("main > div.session")).collect();
    assert_eq!(sections.len(), 3, "one section per session");
    let want = [
        ("a-codex-ok", "codex", "ok", "not stuck"),
        ("b-claude", "claude-code", "fail", "stuck"),
        ("c-pi-stuck", "pi", "fail", "stuck"),
    ];
    for ((row, section), (name, format, check, state)) in rows.iter().zip(&sections).zip(want) {
        let cells: Vec<String> = row.select(&sel("td")).map(|c| c.text().collect::<String>()).collect();
        assert!(cells[1].contains(name), "{cells:?}");
        assert_eq!((cells[2].as_str(), cells[3].as_str(), cells[4].as_str()), (format, check, state), "{cells:?}");
        let problems: usize = cells[5].split_whitespace().next().unwrap().parse().unwrap();
        assert_eq!(problems == 0, check == "ok", "{cells:?}");
        let href = row.select(&sel("a")).next().unwrap().value().attr("href").unwrap();
        assert_eq!(Some(&href[1..]), section.value().attr("id"), "the row links to its section");

        // The section: the diagnose page's parts, each with the section's ids.
        let sid = section.value().attr("id").unwrap();
        let prefix = format!("{sid}-");
        let header: String = section.select(&sel("header.summary")).next().expect("a header").text().collect();
        assert!(header.contains(name) && header.contains(format), "{header}");
        assert!(header.contains(if state == "stuck" { "STUCK" } else { "NOT STUCK" }), "{header}");
        for part in ["summary", "problems", "failure", "timeline"] {
            assert!(ids.contains(&format!("{prefix}{part}")), "{sid} has no {part}");
        }
        assert_eq!(section.select(&sel("article.card")).count(), 2, "{sid}: a card per attachment");
        assert!(section.select(&sel("figure.thumb img")).count() >= 1, "{sid}: thumbnails");
        for el in section.select(&sel("[id]")) {
            let id = el.value().attr("id").unwrap();
            assert!(id.starts_with(&prefix), "{id} in section {sid}");
        }
        // Links inside a section stay in it (but the way back to the summary).
        for a in section.select(&sel("a[href]")) {
            let href = a.value().attr("href").unwrap();
            assert!(href == "#top" || href.starts_with(&format!("#{prefix}")), "{href} leaves section {sid}");
        }
        if state == "stuck" {
            assert!(section.select(&sel("[id$='-next'] li code")).count() >= 1, "{sid}: next commands");
            let prime = section.select(&sel("article.card.prime")).count();
            assert_eq!(prime, 1, "{sid}: the cut PNG is the prime suspect");
            let suspect = section.select(&sel("[id$='-suspects'] a.ref")).next().expect("a suspect links its card");
            let target = &suspect.value().attr("href").unwrap()[1..];
            assert!(section.select(&sel("article.card")).any(|c| c.value().attr("id") == Some(target)));
            let failure: String = section.select(&sel("[id$='-failure']")).next().unwrap().text().collect();
            assert!(failure.contains("Could not process image"), "{failure}");
        }
    }
}

#[test]
fn without_out_the_page_goes_to_stdout_and_healthy_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let good = b64(&media_corpus::png(20, 20));
    write(dir.path(), "ok.jsonl", &wrap::session("claude-code", &[Item { base64: &good, mime: "image/png" }]));
    let o = run(&["check", "--output-format", "html", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html:.80}");
    let doc = Html::parse_document(&html);
    assert_offline(&html, &doc);
    assert_links_resolve(&doc);
    assert_eq!(doc.select(&sel("main > div.session")).count(), 1);

    // --out takes any form; the file is replaced whole.
    let out = dir.path().join("report.json");
    std::fs::write(&out, "stale").unwrap();
    let o = run(&[
        "check",
        "--output-format",
        "json",
        "--out",
        out.to_str().unwrap(),
        dir.path().join("ok.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).expect("the JSON report");
    assert_eq!(v["ok"], true);
}

#[test]
fn an_unreadable_session_gets_a_section_too() {
    let dir = tempfile::tempdir().unwrap();
    let good = b64(&media_corpus::png(20, 20));
    let ok = write(dir.path(), "ok.jsonl", &wrap::session("pi", &[Item { base64: &good, mime: "image/png" }]));
    let missing = dir.path().join("gone.jsonl");
    let o = run(&["check", "--output-format", "html", ok.to_str().unwrap(), missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let html = String::from_utf8(o.stdout).unwrap();
    let doc = Html::parse_document(&html);
    assert_links_resolve(&doc);
    let sections: Vec<ElementRef> = doc.select(&sel("main > div.session")).collect();
    assert_eq!(sections.len(), 2);
    let text: Vec<String> = sections.iter().map(|s| s.text().collect()).collect();
    assert!(text.iter().any(|t| t.contains("UNREADABLE") && t.contains("session.unreadable")), "{text:?}");
}

/// A 256×256 PNG of pure noise: its thumbnail is as large as thumbnails get.
fn noise_png() -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut img = image::RgbImage::new(256, 256);
    for p in img.pixels_mut() {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let b = state.to_le_bytes();
        *p = image::Rgb([b[5], b[6], b[7]]);
    }
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).expect("png");
    out.into_inner()
}

#[test]
fn previews_share_one_budget_across_the_page() {
    let dir = tempfile::tempdir().unwrap();
    // Each session alone fits the budget; together they do not.
    let noise = b64(&noise_png());
    let items: Vec<Item<'_>> = (0..25).map(|_| Item { base64: &noise, mime: "image/png" }).collect();
    for format in ["claude-code", "codex"] {
        write(dir.path(), &format!("{format}.jsonl"), &wrap::session(format, &items));
    }
    let out = dir.path().join("page.html");
    let (html, code) = page(dir.path(), &out);
    assert_eq!(code, 0);
    let doc = Html::parse_document(&html);
    let cards = doc.select(&sel("article.card")).count();
    let thumbs = doc.select(&sel("figure.thumb img")).count();
    let left_out = html.matches("preview left out to keep the page small").count();
    println!(
        "2 sessions of 25 images: page is {} bytes, {cards} cards, {thumbs} thumbnails, {left_out} left out",
        html.len()
    );
    assert_eq!(cards, 50);
    assert!(html.len() < 3_000_000, "{} bytes", html.len());
    assert!(left_out > 0 && thumbs + left_out == cards, "{thumbs} + {left_out} != {cards}");
    let per_section: Vec<usize> =
        doc.select(&sel("main > div.session")).map(|s| s.select(&sel("figure.thumb img")).count()).collect();
    assert_eq!(per_section[0], 25, "the first session is shown whole: {per_section:?}");
}

/// The page keeps every session's diagnosis until it is written, but no open
/// file of each: 200 sessions under a limit of 64 descriptors all get their
/// section (a handle kept per session ran out of descriptors).
#[cfg(unix)]
#[test]
fn a_page_of_many_sessions_holds_no_file_open_for_each() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    let image = b64(&media_corpus::png(8, 8));
    let text = wrap::session("claude-code", &[Item { base64: &image, mime: "image/png" }]);
    for i in 0..200 {
        write(&sessions, &format!("s{i:03}.jsonl"), &text);
    }
    let out = dir.path().join("page.html");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 64 && exec "$0" check --output-format html --out "$1" "$2""#)
        .arg(env!("CARGO_BIN_EXE_session-doctor"))
        .arg(&out)
        .arg(&sessions)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let doc = Html::parse_document(&std::fs::read_to_string(&out).unwrap());
    let sections = doc.select(&sel("main > div.session")).count();
    assert_eq!(sections, 200, "{stderr}");
}
