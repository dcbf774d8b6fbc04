//! `diagnose --html`: the page is self-contained, escapes everything from the
//! session, shows a thumbnail for every decodable image, names every suspect,
//! and renders in a real browser when one is installed.

use crate::common;
use crate::common::media_corpus;
use crate::common::page;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{b64, run, sha256_file};
use page::{assert_offline, sel};
use scraper::Html;
use serde_json::{Value, json};

const SCRIPT: &str = "<script>alert(1)</script>";
const ESC: &str = "\u{1b}[31m";

/// A screenshot-like PNG: a window with a title bar and lines of "text".
fn screenshot(w: u32, h: u32) -> Vec<u8> {
    let mut img = image::RgbImage::from_pixel(w, h, image::Rgb([246, 247, 249]));
    for y in 0..h {
        for x in 0..w {
            let px = if y < h / 10 {
                image::Rgb([52, 58, 70])
            } else if x < w / 5 {
                image::Rgb([228, 232, 238])
            } else if (y / 18) % 2 == 0 && (y % 18) > 6 && x > w / 5 + 20 && x < w / 5 + 40 + ((y * 37) % (w / 2)) {
                image::Rgb([90, 100, 115])
            } else if x > w - w / 4 && y > h / 3 && y < h / 3 + h / 6 {
                image::Rgb([59, 91, 219])
            } else {
                continue;
            };
            img.put_pixel(x, y, px);
        }
    }
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).expect("png");
    out.into_inner()
}

/// A PNG cut short inside its image data, as an interrupted download leaves it.
fn cut_png() -> Vec<u8> {
    let png = media_corpus::png(320, 240);
    png[..png.len() * 3 / 5].to_vec()
}

/// A PDF cut short before its cross-reference table.
fn cut_pdf() -> Vec<u8> {
    let pdf = media_corpus::pdf(2);
    pdf[..pdf.len() / 2].to_vec()
}

fn usage() -> Value {
    json!({"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0})
}

fn image_block(mime: &str, bytes: &[u8]) -> Value {
    json!({"type":"image","source":{"type":"base64","media_type":mime,"data":b64(bytes)}})
}

fn pdf_block(bytes: &[u8]) -> Value {
    json!({"type":"document","source":{"type":"base64","media_type":"application/pdf","data":b64(bytes)}})
}

/// The Done-when session (Claude Code): the user pastes a healthy screenshot,
/// the model answers, then reads three files — a truncated PNG, a healthy JPEG,
/// a corrupt PDF — and the next request is rejected.
fn stuck_session(paths: [&str; 3], message: &str) -> String {
    let calls: Vec<Value> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| json!({"type":"tool_use","id":format!("toolu_{i}"),"name":"Read","input":{"file_path":p}}))
        .collect();
    let results = [
        image_block("image/png", &cut_png()),
        image_block("image/jpeg", &media_corpus::jpeg(480, 320)),
        pdf_block(&cut_pdf()),
    ];
    let results: Vec<Value> = results
        .into_iter()
        .enumerate()
        .map(|(i, b)| json!({"type":"tool_result","tool_use_id":format!("toolu_{i}"),"content":[b]}))
        .collect();
    let lines = [
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","isSidechain":false,"message":{"role":"user","content":[
            {"type":"text","text":"why does the login page look like this?"},image_block("image/png", &screenshot(1280, 800))]}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"text","text":"The form overlaps the sidebar."}],"usage":usage()}}),
        json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":"compare with the files in /srv/assets"}}),
        json!({"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":"s","message":{"id":"msg_2","role":"assistant","model":"claude-sonnet-4-5",
            "content":calls,"usage":usage()}}),
        json!({"type":"user","uuid":"u3","parentUuid":"a2","sessionId":"s","message":{"role":"user","content":results}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    common::wrap::failed("claude-code", &text, message)
}

const PATHS: [&str; 3] = ["/srv/assets/login-full.png", "/srv/assets/team-photo.jpg", "/srv/assets/q3-report.pdf"];

/// Runs `diagnose FILE --html OUT` and returns the page, its exit code and the JSON diagnosis.
fn page(file: &Path) -> (String, i32, Value) {
    let out = file.with_extension("html");
    let o = run(&["diagnose", file.to_str().unwrap(), "--html", out.to_str().unwrap()]);
    let code = o.status.code().expect("exited");
    assert!(code == 0 || code == 1, "diagnose failed: {}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).expect("the page was written");
    let j = run(&["diagnose", "--json", file.to_str().unwrap()]);
    let d: Value = serde_json::from_slice(&j.stdout).expect("json");
    (html, code, d)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn the_stuck_claude_code_session() {
    let dir = tempfile::tempdir().unwrap();
    let text = stuck_session(PATHS, "messages.3.content.0.image.source.base64: Could not process image");
    let file = write(dir.path(), "stuck.jsonl", &text);
    let before = sha256_file(&file);
    let (html, code, d) = page(&file);
    assert_eq!(code, 1, "stuck: exit 1");
    assert_eq!(sha256_file(&file), before, "the session was modified");
    let doc = Html::parse_document(&html);
    assert_offline(&html, &doc);

    // Header: file, format, agent, verdict, failure, next commands.
    let header = doc.select(&sel("header#summary")).next().expect("header").text().collect::<String>();
    assert!(header.contains("STUCK"), "{header}");
    assert!(header.contains("stuck.jsonl") && header.contains("claude-code") && header.contains("Claude Code"));
    assert!(header.contains("claude-sonnet-4-5"), "{header}");
    let failure = doc.select(&sel("#failure")).next().expect("failure").text().collect::<String>();
    assert!(failure.contains("media_rejected") && failure.contains("not retryable"), "{failure}");
    assert!(failure.contains("Could not process image"), "{failure}");
    let next: Vec<String> = doc.select(&sel("#next li code")).map(|c| c.text().collect()).collect();
    let want: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(next, want);

    // The timeline: one row per entry, the boundary marked, five cards.
    assert!(doc.select(&sel("ol.timeline > li.entry")).count() >= 4);
    assert_eq!(doc.select(&sel("li.boundary")).count(), 1);
    let cards: Vec<_> = doc.select(&sel("article.card")).collect();
    assert_eq!(cards.len(), 4, "one card per attachment");

    // A thumbnail per decodable image: the screenshot, the JPEG and what decodes of the cut PNG.
    let thumbs: Vec<_> = doc.select(&sel("article.card figure.thumb img")).collect();
    assert_eq!(thumbs.len(), 3, "{html}");
    for t in &thumbs {
        let src = t.value().attr("src").unwrap();
        assert!(src.starts_with("data:image/png;base64,") || src.starts_with("data:image/jpeg;base64,"));
        let (w, h): (u32, u32) =
            (t.value().attr("width").unwrap().parse().unwrap(), t.value().attr("height").unwrap().parse().unwrap());
        assert!(w.max(h) <= 256 && w.min(h) > 0, "{w}×{h}");
    }
    assert_eq!(doc.select(&sel("figure.thumb.broken img")).count(), 1, "the cut PNG is shown broken");

    // Every suspect by ref, the prime ones marked.
    let suspects = d["suspects"].as_array().unwrap();
    assert!(!suspects.is_empty());
    for s in suspects {
        let r = s["ref"].as_str().unwrap();
        let id = format!("att-{r}").replace('.', "\\.");
        let card = doc.select(&sel(&format!("article#{id}"))).next().unwrap_or_else(|| panic!("no card for {r}"));
        let classes: Vec<&str> = card.value().classes().collect();
        assert!(classes.contains(&"suspect"), "{r}: {classes:?}");
        assert_eq!(classes.contains(&"prime"), s["prime"] == true, "{r}: {classes:?}");
        let listed = doc.select(&sel("#suspects li")).any(|li| {
            let t: String = li.text().collect();
            t.contains(r) && (s["prime"] == false || li.value().classes().any(|c| c == "prime"))
        });
        assert!(listed, "{r} is not listed in #suspects");
    }
    let primes: Vec<&str> =
        suspects.iter().filter(|s| s["prime"] == true).map(|s| s["ref"].as_str().unwrap()).collect();
    assert_eq!(primes.len(), 2, "the cut PNG and the corrupt PDF: {suspects:?}");
    assert_eq!(doc.select(&sel("article.card.prime .badge.prime")).count(), 2);

    // The corrupt PDF says why it fails.
    let pdf =
        doc.select(&sel("article.card")).find(|c| c.text().collect::<String>().contains("q3-report.pdf")).unwrap();
    let t: String = pdf.text().collect();
    assert!(t.contains("does not open"), "{t}");
    assert!(html.len() < 400_000, "{} bytes", html.len());
}

#[test]
fn untrusted_text_is_text_not_markup() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = format!("/tmp/{SCRIPT}{ESC}evil.png");
    let message = format!("Could not process image {SCRIPT} {ESC}red");
    let text = stuck_session([&hostile, "/srv/a.jpg", "/srv/b.pdf"], &message);
    let name = format!("{}{ESC}.jsonl", "<script>alert(1)");
    let file = write(dir.path(), &name, &text);
    let (html, _, _) = page(&file);
    assert!(!html.contains('\u{1b}'), "a raw terminal escape reached the page");
    assert!(!html.contains(SCRIPT), "raw markup reached the page");
    let doc = Html::parse_document(&html);
    assert_eq!(doc.select(&sel("script")).count(), 0);
    assert_offline(&html, &doc);
    let body: String = doc.root_element().text().collect();
    assert!(body.contains(&format!("{SCRIPT}\\u{{1b}}[31mevil.png")), "the file name shows as text");
    assert!(body.contains(&format!("Could not process image {SCRIPT} \\u{{1b}}[31mred")), "the error shows as text");
    assert!(body.contains("<script>alert(1)\\u{1b}[31m.jsonl"), "the session name shows as text");
}

#[test]
fn fifty_images_stay_under_three_megabytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut content = vec![json!({"type":"text","text":"fifty screenshots"})];
    for i in 0..50u32 {
        // Noisy images: the worst case for a thumbnail's size.
        content.push(image_block("image/png", &media_corpus::png(400 + i, 300)));
    }
    let lines = [
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":content}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"m","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"text","text":"ok"}],"usage":usage()}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    let file = write(dir.path(), "fifty.jsonl", &text);
    let (html, code, _) = page(&file);
    assert_eq!(code, 0);
    let doc = Html::parse_document(&html);
    let thumbs = doc.select(&sel("figure.thumb img")).count();
    println!("50 images of ~400×300: page is {} bytes, {thumbs} thumbnails", html.len());
    assert!(html.len() < 3_000_000, "{} bytes", html.len());
    assert_eq!(thumbs, 50);
}

#[test]
fn a_bomb_is_not_decoded_for_its_thumbnail() {
    // A PNG header claiming 100000×100000 RGBA pixels, with a valid CRC.
    let png = media_corpus::png_bomb();
    let html_page = b"<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>nginx</body></html>";
    let (a, b) = (b64(&png), b64(html_page));
    let items = [
        common::wrap::Item { base64: &a, mime: "image/png" },
        common::wrap::Item { base64: &b, mime: "application/pdf" },
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bomb.jsonl", &common::wrap::session("claude-code", &items));
    let (html, _, _) = page(&file);
    let doc = Html::parse_document(&html);
    let text: String = doc.root_element().text().collect();
    assert!(text.contains("too large to preview"), "{text}");
    assert_eq!(doc.select(&sel("figure.thumb img")).count(), 0);
    // A "PDF" that is an error page shows its first bytes, as text.
    let bytes = doc.select(&sel("figure.bytes pre")).next().expect("first bytes").text().collect::<String>();
    assert!(bytes.contains("<title>404 Not Found</title>"), "{bytes}");
}

/// A Chromium on PATH, if any.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

#[test]
fn renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        println!("skipped: no chromium, chromium-browser or google-chrome on PATH");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let text = stuck_session(PATHS, "Could not process image");
    let file = write(dir.path(), "stuck.jsonl", &text);
    let (_, _, _) = page(&file);
    let html = file.with_extension("html");
    let shot = dir.path().join("shot.png");
    let profile = dir.path().join("profile");
    let out = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000",
        ])
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    let png = std::fs::read(&shot)
        .unwrap_or_else(|e| panic!("no screenshot ({e}); chromium said: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000, "{} bytes", png.len());
    // To look at it (and refresh docs/diagnose-html.png): SESSION_DOCTOR_SCREENSHOT=/tmp/shot.png
    // keeps the screenshot, the page (shot.html) and the session (shot.jsonl).
    if let Some(keep) = std::env::var_os("SESSION_DOCTOR_SCREENSHOT") {
        let keep = PathBuf::from(keep);
        std::fs::copy(&shot, &keep).expect("copy the screenshot");
        std::fs::copy(&html, keep.with_extension("html")).expect("copy the page");
        std::fs::copy(&file, keep.with_extension("jsonl")).expect("copy the session");
    }
}

#[test]
fn every_image_type_gets_a_thumbnail_and_a_pdf_its_first_text() {
    let media = [
        (media_corpus::png(300, 100), "image/png"),
        (media_corpus::jpeg(64, 400), "image/jpeg"),
        (media_corpus::gif(40, 30, 3), "image/gif"),
        (media_corpus::webp(50, 20), "image/webp"),
        (media_corpus::png_1bit(600, 8), "image/png"),
        (media_corpus::pdf(3), "application/pdf"),
        (media_corpus::png(300, 100), "image/png"),
    ];
    let texts: Vec<String> = media.iter().map(|(b, _)| b64(b)).collect();
    let items: Vec<common::wrap::Item<'_>> =
        media.iter().zip(&texts).map(|((_, mime), t)| common::wrap::Item { base64: t, mime }).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "types.jsonl", &common::wrap::session("claude-code", &items));
    let (html, code, _) = page(&file);
    assert_eq!(code, 0);
    let doc = Html::parse_document(&html);
    let sizes: Vec<(u32, u32)> = doc
        .select(&sel("figure.thumb img"))
        .map(|i| {
            (i.value().attr("width").unwrap().parse().unwrap(), i.value().attr("height").unwrap().parse().unwrap())
        })
        .collect();
    // Downscaled to 256 on the long side, aspect kept; small images are not enlarged.
    assert_eq!(sizes, vec![(256, 86), (41, 256), (40, 30), (50, 20), (256, 4), (256, 86)], "{html}");
    let pdf = doc.select(&sel("figure.doc")).next().expect("a PDF preview").text().collect::<String>();
    assert!(pdf.contains("3 pages") && pdf.contains("Page 1"), "{pdf}");
}

#[test]
fn a_cut_jpeg_is_shown_as_far_as_it_decodes_and_marked_broken() {
    let jpeg = media_corpus::jpeg(320, 240);
    let (whole, cut) = (b64(&jpeg), b64(&jpeg[..jpeg.len() * 6 / 10]));
    let items = [
        common::wrap::Item { base64: &whole, mime: "image/jpeg" },
        common::wrap::Item { base64: &cut, mime: "image/jpeg" },
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "jpeg.jsonl", &common::wrap::session("claude-code", &items));
    let (html, _, _) = page(&file);
    let doc = Html::parse_document(&html);
    assert_eq!(doc.select(&sel("figure.thumb img")).count(), 2, "{html}");
    assert_eq!(doc.select(&sel("figure.thumb.broken img")).count(), 1, "{html}");
}

/// The header's "agent" row is a claim about who wrote the file: every
/// agent's sample names its agent (Cline's and Copilot CLI's pages used to say
/// "none (a provider request body)"), and only a logged request names none.
#[test]
fn the_header_names_the_agent_that_wrote_each_sample() {
    let dir = tempfile::tempdir().unwrap();
    for (sample, agent) in [
        ("claude-code.jsonl", "Claude Code"),
        ("codex.jsonl", "OpenAI Codex CLI"),
        ("pi.jsonl", "pi"),
        ("gemini-cli.jsonl", "Gemini CLI"),
        ("mux.jsonl", "mux"),
        ("opencode.jsonl", "opencode"),
        ("cline.json", "Cline"),
        ("copilot.jsonl", "GitHub Copilot CLI"),
        ("anthropic.jsonl", "none (a provider request body)"),
    ] {
        let out = dir.path().join(format!("{sample}.html"));
        let o = run(&["diagnose", common::sample(sample).to_str().unwrap(), "--html", out.to_str().unwrap()]);
        assert!(o.status.code().is_some_and(|c| c <= 1), "{sample}: {}", String::from_utf8_lossy(&o.stderr));
        let doc = Html::parse_document(&std::fs::read_to_string(&out).unwrap());
        let names: Vec<String> = doc.select(&sel("header#summary dt")).map(|r| r.text().collect()).collect();
        let values: Vec<String> = doc.select(&sel("header#summary dd")).map(|r| r.text().collect()).collect();
        let at = names.iter().position(|n| n == "agent").unwrap_or_else(|| panic!("{sample}: no agent row: {names:?}"));
        assert_eq!(values[at], agent, "{sample}");
    }
}

/// Issue 36, item 13: with no failure recorded, an attachment the model has not
/// accepted yet is pending, as the text says, not a suspect.
#[test]
fn a_pending_attachment_is_badged_pending_not_suspect() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","isSidechain":false,"message":{"role":"user","content":[
            {"type":"text","text":"what is on this screen?"},image_block("image/png", &screenshot(320, 200))]}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    let file = write(dir.path(), "pending.jsonl", &text);
    let (html, _, d) = page(&file);
    assert!(d["failure"].is_null(), "{d}");
    assert_eq!(d["suspects"].as_array().unwrap().len(), 1, "{d}");
    let doc = Html::parse_document(&html);
    let badges: Vec<String> = doc.select(&sel(".badge")).map(|b| b.text().collect()).collect();
    assert_eq!(badges, ["pending", "pending"], "the list and the card");
    assert_eq!(doc.select(&sel("article.card.pending")).count(), 1);
    assert_eq!(doc.select(&sel("article.card.suspect")).count(), 0);
    let heading: String = doc.select(&sel("section[id$=suspects] h2")).next().unwrap().text().collect();
    assert_eq!(heading, "1 attachment the model has not accepted yet (the suspects, should it fail)");
}
