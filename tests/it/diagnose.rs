//! `diagnose` and `exclude` end to end, on sessions in each format's real shape.

use crate::common;
use crate::common::media_corpus;

use std::path::Path;

use common::wrap::{self, FORMATS, Item};
use common::{b64, diagnose, run, sha256_file, write};
use serde_json::{Value, json};

/// A PNG cut short inside its image data, as an interrupted download leaves it.
fn cut_png() -> Vec<u8> {
    let png = media_corpus::png(64, 48);
    png[..png.len() * 2 / 3].to_vec()
}

/// A PDF cut short before its cross-reference table.
fn cut_pdf() -> Vec<u8> {
    let pdf = media_corpus::pdf(2);
    pdf[..pdf.len() / 2].to_vec()
}

fn suspects(d: &Value) -> Vec<(String, bool)> {
    d["suspects"]
        .as_array()
        .expect("suspects")
        .iter()
        .map(|s| (s["ref"].as_str().expect("ref").to_string(), s["prime"].as_bool().expect("prime")))
        .collect()
}

fn scan_refs(file: &Path) -> Vec<Value> {
    let (doc, _) = common::scan_json(file, &[]);
    doc["attachments"].as_array().expect("attachments").clone()
}

/// The ref of the attachment whose declared type is `mime` and whose bytes are `sha`.
fn ref_of(atts: &[Value], sha: &str) -> String {
    atts.iter().find(|a| a["sha256"] == sha).and_then(|a| a["ref"].as_str()).expect("attachment").to_string()
}

fn sha(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

/// The incident of the design: an accepted turn with a healthy image, then a
/// tool returns [text, corrupt report.pdf, healthy notes.pdf] and the next
/// request is rejected.
#[test]
fn the_rejected_pdf_incident() {
    let dir = tempfile::tempdir().unwrap();
    let image = media_corpus::png(32, 32);
    let (report, notes) = (cut_pdf(), media_corpus::pdf(1));
    let usage =
        json!({"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0});
    let doc = |pdf: &[u8], title: &str| json!({"type":"document","title":title,"source":{"type":"base64","media_type":"application/pdf","data":b64(pdf)}});
    let lines = [
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","isSidechain":false,"message":{"role":"user","content":[
            {"type":"text","text":"what is in this screenshot?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(&image)}}]}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"text","text":"A login form."}],"usage":usage}}),
        json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":"now read the reports"}}),
        json!({"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":"s","message":{"id":"msg_2","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"tool_use","id":"toolu_1","name":"fetch_reports","input":{"path":"/srv/reports"}}],"usage":usage}}),
        json!({"type":"user","uuid":"u3","parentUuid":"a2","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[
            {"type":"text","text":"2 files"},doc(&report,"report.pdf"),doc(&notes,"notes.pdf")]}]}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    let text = wrap::failed("claude-code", &text, "The PDF specified was not valid.");
    let file = write(dir.path(), "incident.jsonl", &text);
    let before = sha256_file(&file);

    let (d, code) = diagnose(&file, &[]);
    assert_eq!(code, 1, "{d:#}");
    assert_eq!(d["stuck"], true);
    assert_eq!(d["failure"]["class"], "media_rejected");
    assert_eq!(d["failure"]["retryable"], false);
    let atts = scan_refs(&file);
    let (report_ref, notes_ref) = (ref_of(&atts, &sha(&report)), ref_of(&atts, &sha(&notes)));
    assert_eq!(suspects(&d), vec![(report_ref.clone(), true), (notes_ref.clone(), false)], "{d:#}");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(next[0].ends_with(&format!("exclude {} --ref {report_ref}", file.display())), "{next:?}");

    let out = run(&["exclude", file.to_str().unwrap(), "--ref", &report_ref]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let (d, _) = diagnose(&file, &[]);
    assert_eq!(d["excluded"], json!([report_ref]));
    assert_eq!(suspects(&d), vec![(notes_ref, false)]);
    let (doc, _) = common::scan_json(&file, &[]);
    let excluded: Vec<&Value> =
        doc["attachments"].as_array().unwrap().iter().filter(|a| a["excluded"] == true).collect();
    assert_eq!(excluded.len(), 1);
    assert_eq!(excluded[0]["ref"], report_ref.as_str());

    assert_eq!(sha256_file(&file), before, "the session was modified");
    let beside: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(beside.iter().filter(|n| common::has_extension(n, "jsonl")).count(), 1, "{beside:?}");
    assert!(beside.contains(&"incident.jsonl.doctor".to_string()), "{beside:?}");
}

/// In every format: a healthy image pasted, then a healthy PDF and a truncated
/// PNG from tools. With the error recorded and without, the session is stuck,
/// the truncated PNG is the prime suspect and nothing healthy is; excluding it
/// takes it off the suspects.
#[test]
fn every_format_names_the_truncated_png() {
    let (image, pdf, cut) = (media_corpus::png(40, 30), media_corpus::pdf(1), cut_png());
    let (image64, pdf64, cut64) = (b64(&image), b64(&pdf), b64(&cut));
    let items = [
        Item { base64: &image64, mime: "image/png" },
        Item { base64: &pdf64, mime: "application/pdf" },
        Item { base64: &cut64, mime: "image/png" },
    ];
    for format in FORMATS {
        for recorded in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let mut text = wrap::session(format, &items);
            if recorded {
                text = wrap::failed(format, &text, "Could not process image");
            }
            let file = write(dir.path(), "s.jsonl", &text);
            let before = sha256_file(&file);
            let (d, code) = diagnose(&file, &[]);
            let what = format!("{format} (error recorded: {recorded}): {d:#}");
            assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{what}");
            assert_eq!(d["format"], format, "{what}");
            assert_eq!(d["failure"]["class"], "media_rejected", "{what}");
            assert_eq!(d["failure"]["source"], if recorded { "recorded" } else { "predicted" }, "{what}");
            let atts = scan_refs(&file);
            let cut_ref = ref_of(&atts, &sha(&cut));
            let s = suspects(&d);
            assert_eq!(s.first(), Some(&(cut_ref.clone(), true)), "{what}");
            assert!(s[1..].iter().all(|(_, prime)| !prime), "{what}");
            assert!(
                !s.iter().any(|(r, _)| *r == ref_of(&atts, &sha(&image))),
                "{what}: the accepted image is no suspect"
            );

            let out = run(&["exclude", file.to_str().unwrap(), "--suspects"]);
            assert_eq!(out.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&out.stderr));
            let (d, _) = diagnose(&file, &[]);
            assert_eq!(d["excluded"], json!([cut_ref]), "{format}");
            assert!(!suspects(&d).iter().any(|(r, _)| *r == cut_ref), "{format}: {d:#}");
            assert!(!suspects(&d).iter().any(|(_, prime)| *prime), "{format}: {d:#}");
            assert_eq!(sha256_file(&file), before, "{format}: the session was modified");
        }
    }
}

/// pi records the model of each answer: a request to a model that never
/// answered in this session makes every attachment a suspect.
#[test]
fn a_model_switch_makes_every_attachment_a_suspect() {
    let (a, b) = (b64(&media_corpus::png(8, 8)), b64(&media_corpus::png(9, 9)));
    let items = [Item { base64: &a, mime: "image/png" }, Item { base64: &b, mime: "image/png" }];
    let dir = tempfile::tempdir().unwrap();
    let text = wrap::failed("pi", &wrap::session("pi", &items), "Could not process image");
    // The failed request went to another model than the answers before it.
    let (history, error) = text.trim_end().rsplit_once('\n').unwrap();
    let text = format!("{history}\n{}\n", error.replace("claude-sonnet-4-5", "claude-opus-4-1"));
    let file = write(dir.path(), "s.jsonl", &text);
    let (d, _) = diagnose(&file, &[]);
    assert_eq!(d["model"], "claude-opus-4-1", "{d:#}");
    assert_eq!(suspects(&d).len(), 2, "{d:#}");
    assert!(d["boundary"].is_null());
    // The same history, diagnosed for the model that did answer: only the last result.
    let (d, _) = diagnose(&file, &["--model", "claude-sonnet-4-5"]);
    assert_eq!(suspects(&d).len(), 1, "{d:#}");
}

/// An error that names `messages.N.content.M…` pins that attachment, even one
/// the model had already accepted, in the agent's own message numbering.
#[test]
fn an_error_naming_a_block_pins_that_attachment() {
    let imgs: Vec<String> = (0..3).map(|i| b64(&media_corpus::png(10 + i, 10))).collect();
    let items: Vec<Item<'_>> = imgs.iter().map(|b| Item { base64: b, mime: "image/png" }).collect();
    // Claude Code sends: 0 user (pasted), 1 assistant, 2 user (result 0), 3 assistant, 4 user (result 1).
    let cases = [
        ("claude-code", "messages.2.content.0.content.0.image.source.base64: image exceeds 5 MB maximum", 1),
        ("pi", "messages.4.content.0.content.0.image.source.base64: image exceeds 5 MB maximum", 2),
        ("anthropic", "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum", 0),
        // Codex sends its developer message first (input[0]): the session's item 2 is input[3].
        ("codex", "Invalid image data at input[3].output[0]", 1),
        ("openai-responses", "Invalid image data at input[4].output[0]", 2),
    ];
    for (format, message, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "s.jsonl", &wrap::failed(format, &wrap::session(format, &items), message));
        let (d, code) = diagnose(&file, &[]);
        assert_eq!(code, 1, "{format}: {d:#}");
        let atts = scan_refs(&file);
        let want_ref = atts[want]["ref"].as_str().unwrap().to_string();
        let first = &d["suspects"][0];
        assert_eq!(
            (first["ref"].as_str(), &first["named"]),
            (Some(want_ref.as_str()), &json!(true)),
            "{format}: {d:#}"
        );
    }
}

#[test]
fn a_failure_followed_by_an_accepted_turn_is_not_stuck() {
    let (a, cut) = (b64(&media_corpus::png(8, 8)), b64(&cut_png()));
    let items = [Item { base64: &a, mime: "image/png" }, Item { base64: &cut, mime: "image/png" }];
    let dir = tempfile::tempdir().unwrap();
    let failed = wrap::failed("claude-code", &wrap::session("claude-code", &items), "Could not process image");
    let usage =
        json!({"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0});
    let later = [
        json!({"type":"user","uuid":"u9","parentUuid":"err-1","sessionId":"s","message":{"role":"user","content":"never mind"}}),
        json!({"type":"assistant","uuid":"a9","parentUuid":"u9","sessionId":"s","message":{"id":"msg_9","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"usage":usage}}),
    ];
    let text = failed + &later.iter().map(|l| l.to_string() + "\n").collect::<String>();
    let file = write(dir.path(), "s.jsonl", &text);
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["stuck"], &d["failure"]["recovered"]), (0, &json!(false), &json!(true)), "{d:#}");
    // A cut image pasted after the recovery is judged as if no failure were recorded.
    let pasted = json!({"type":"user","uuid":"u10","parentUuid":"a9","sessionId":"s","message":{"role":"user","content":[
        {"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(&cut_png()[..100])}}]}});
    let file = write(dir.path(), "s2.jsonl", &format!("{text}{pasted}\n"));
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["failure"]["source"]), (1, &json!("predicted")), "{d:#}");
    assert_eq!(suspects(&d), vec![("L7.1".to_string(), true)], "{d:#}");
}

#[test]
fn a_transient_failure_is_not_stuck_and_a_given_error_wins() {
    let a = b64(&media_corpus::png(8, 8));
    let items = [Item { base64: &a, mime: "image/png" }];
    let dir = tempfile::tempdir().unwrap();
    let body = json!({"error":{"message":"Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}});
    let event = json!({"timestamp":"t","type":"event_msg","payload":{"type":"error","message":format!("unexpected status 429 Too Many Requests: {body}")}});
    let file = write(dir.path(), "s.jsonl", &format!("{}{event}\n", wrap::session("codex", &items)));
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["stuck"], &d["failure"]["class"]), (0, &json!(false), &json!("rate_limit")), "{d:#}");
    let (d, code) = diagnose(&file, &["--error", "Too many images in request: 31 > 30"]);
    assert_eq!(
        (code, &d["failure"]["class"], &d["failure"]["source"]),
        (1, &json!("image_limit"), &json!("given")),
        "{d:#}"
    );
    let next = d["next"][0].as_str().unwrap();
    assert!(next.contains("preview") && next.ends_with("--max-images 30"), "{next}");
}

#[test]
fn exclude_refuses_unknown_refs_and_writes_nothing() {
    let a = b64(&media_corpus::png(8, 8));
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "s.jsonl", &wrap::session("claude-code", &[Item { base64: &a, mime: "image/png" }]));
    let out = run(&["exclude", file.to_str().unwrap(), "--ref", "L9.1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("L9.1 names no attachment") && err.contains("nearby: L1.1"), "{err}");
    assert!(!dir.path().join("s.jsonl.doctor").exists());
    // Excluding twice changes nothing; --undo includes again.
    for _ in 0..2 {
        assert_eq!(run(&["exclude", file.to_str().unwrap(), "--ref", "L1.1"]).status.code(), Some(0));
    }
    let overlay = std::fs::read_to_string(dir.path().join("s.jsonl.doctor")).unwrap();
    assert_eq!(overlay.lines().count(), 1, "{overlay}");
    let out = run(&["exclude", file.to_str().unwrap(), "--ref", "L1.1", "--undo"]);
    assert_eq!(out.status.code(), Some(0));
    let (doc, _) = common::scan_json(&file, &[]);
    assert_eq!(doc["attachments"][0]["excluded"], false);
}

#[test]
fn concurrent_excludes_both_land() {
    let imgs: Vec<String> = (0..8).map(|i| b64(&media_corpus::png(4 + i, 4))).collect();
    let items: Vec<Item<'_>> = imgs.iter().map(|b| Item { base64: b, mime: "image/png" }).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "s.jsonl", &wrap::session("codex", &items));
    let refs: Vec<String> = scan_refs(&file).iter().map(|a| a["ref"].as_str().unwrap().to_string()).collect();
    let children: Vec<_> = refs
        .iter()
        .map(|r| common::bin().args(["exclude", file.to_str().unwrap(), "--ref", r]).spawn().expect("spawn"))
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let (d, _) = diagnose(&file, &[]);
    let mut excluded: Vec<String> =
        d["excluded"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    excluded.sort();
    let mut want = refs.clone();
    want.sort();
    assert_eq!(excluded, want);
}

#[test]
fn latest_finds_the_newest_session_under_home() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-home-me-app");
    std::fs::create_dir_all(&project).unwrap();
    let cut = b64(&cut_png());
    let text = wrap::session("claude-code", &[Item { base64: &cut, mime: "image/png" }]);
    write(&project, "1f0e.jsonl", &text);
    let out = common::bin()
        .args(["diagnose", "--latest", "--agent", "claude-code", "--json"])
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap();
    let d: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!((out.status.code(), &d["stuck"]), (Some(1), &json!(true)), "{d:#}");
    assert!(d["file"].as_str().unwrap().ends_with("1f0e.jsonl"));
}
