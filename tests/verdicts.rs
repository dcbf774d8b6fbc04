//! Verdicts that hold (issue 18): every case where `diagnose`, `check`,
//! `sessions` or `repair` said something untrue of the file, each pinned.

mod common;
#[path = "common/media_corpus.rs"]
mod media_corpus;

use std::path::{Path, PathBuf};

use common::wrap::{self, FORMATS, Item};
use common::{b64, run};
use serde_json::{Value, json};

/// A PNG cut short inside its image data, as an interrupted download leaves it.
fn cut_png() -> Vec<u8> {
    let png = media_corpus::png(64, 48);
    png[..png.len() * 2 / 3].to_vec()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write session");
    p
}

fn diagnose(file: &Path, extra: &[&str]) -> (Value, i32) {
    let mut args = vec!["diagnose", "--json"];
    args.extend_from_slice(extra);
    args.push(file.to_str().expect("utf-8"));
    let out = run(&args);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("diagnose --json printed no JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr))
    });
    (v, out.status.code().expect("exited"))
}

fn sha(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

fn ref_of(file: &Path, bytes: &[u8]) -> String {
    let (doc, _) = common::scan_json(file, &[]);
    let want = sha(bytes);
    doc["attachments"]
        .as_array()
        .expect("attachments")
        .iter()
        .find(|a| a["sha256"] == want.as_str())
        .and_then(|a| a["ref"].as_str())
        .unwrap_or_else(|| panic!("no attachment with those bytes in {doc:#}"))
        .to_string()
}

/// Item 2: with the only invalid attachment excluded, a recorded "Could not
/// process image" blames nothing left; the images the model answered after
/// are no suspects, and the session is not stuck.
#[test]
fn excluding_the_only_invalid_attachment_unsticks_every_format() {
    let (image, pdf, cut) = (media_corpus::png(40, 30), media_corpus::pdf(1), cut_png());
    let (image64, pdf64, cut64) = (b64(&image), b64(&pdf), b64(&cut));
    let items = [
        Item { base64: &image64, mime: "image/png" },
        Item { base64: &pdf64, mime: "application/pdf" },
        Item { base64: &cut64, mime: "image/png" },
    ];
    let mut failures = Vec::new();
    for format in FORMATS {
        let dir = tempfile::tempdir().unwrap();
        let text = wrap::failed(format, &wrap::session(format, &items), "Could not process image");
        let file = write(dir.path(), "s.jsonl", &text);
        let cut_ref = ref_of(&file, &cut);
        let out = run(&["exclude", file.to_str().unwrap(), "--ref", &cut_ref]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        let (d, code) = diagnose(&file, &[]);
        if (code, &d["stuck"]) != (0, &json!(false)) {
            failures.push(format!("{format}: {} suspects {}", d["verdict"], d["suspects"]));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `session` (in `format`) with an accepted text answer appended: the model
/// took every attachment before it.
fn answered(format: &str, session: &str) -> String {
    let mut lines: Vec<Value> = session.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    let last = lines.last().cloned().unwrap_or(Value::Null);
    let line = match format {
        "codex" => json!({"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant",
            "content":[{"type":"output_text","text":"Both images show a login form."}]}}),
        "pi" => json!({"type":"message","id":"000000aa","parentId":last["id"],"timestamp":"t","message":{"role":"assistant",
            "content":[{"type":"text","text":"Both images show a login form."}],"api":"anthropic-messages","provider":"anthropic",
            "model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"stop","timestamp":4}}),
        "gemini-cli" => json!({"id":"g2","timestamp":"t","type":"gemini","content":"Both images show a login form.","model":"gemini-2.5-pro",
            "tokens":{"input":1,"output":1,"cached":0,"thoughts":0,"tool":0,"total":2}}),
        "anthropic" | "openai-chat" => {
            let msgs = lines[0]["messages"].as_array_mut().expect("messages");
            msgs.push(json!({"role":"assistant","content":"Both images show a login form."}));
            msgs.push(json!({"role":"user","content":"thanks, now fix it"}));
            return lines.iter().map(|l| l.to_string() + "\n").collect();
        }
        "openai-responses" => {
            let input = lines[0]["input"].as_array_mut().expect("input");
            input.push(json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Both images show a login form."}]}));
            input.push(json!({"type":"message","role":"user","content":[{"type":"input_text","text":"thanks, now fix it"}]}));
            return lines.iter().map(|l| l.to_string() + "\n").collect();
        }
        "gemini" => {
            let contents = lines[0]["contents"].as_array_mut().expect("contents");
            contents.push(json!({"role":"model","parts":[{"text":"Both images show a login form."}]}));
            contents.push(json!({"role":"user","parts":[{"text":"thanks, now fix it"}]}));
            return lines.iter().map(|l| l.to_string() + "\n").collect();
        }
        other => panic!("no answer shape for {other}"),
    };
    lines.push(line);
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

/// Item 2, as it was seen: a lenient model answered after the cut PNG, then
/// a request was rejected with "Could not process image". The cut PNG is the
/// prime suspect; once it is excluded, the images the model accepted are no
/// suspects and the session is not stuck.
#[test]
fn an_accepted_invalid_image_excluded_leaves_nothing_to_blame() {
    let (image, cut) = (media_corpus::png(40, 30), cut_png());
    let (image64, cut64) = (b64(&image), b64(&cut));
    let items = [Item { base64: &image64, mime: "image/png" }, Item { base64: &cut64, mime: "image/png" }];
    let mut failures = Vec::new();
    for format in ["codex", "pi", "gemini-cli", "anthropic", "openai-chat", "openai-responses", "gemini"] {
        let dir = tempfile::tempdir().unwrap();
        let text = wrap::failed(format, &answered(format, &wrap::session(format, &items)), "Could not process image");
        let file = write(dir.path(), "s.jsonl", &text);
        let cut_ref = ref_of(&file, &cut);
        let (d, code) = diagnose(&file, &[]);
        let primes: Vec<&str> = d["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["prime"] == true)
            .filter_map(|s| s["ref"].as_str())
            .collect();
        if code != 1 || primes != [cut_ref.as_str()] {
            failures.push(format!("{format} before: {} primes {primes:?}, want [{cut_ref}]", d["verdict"]));
        }
        let out = run(&["exclude", file.to_str().unwrap(), "--ref", &cut_ref]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        let (d, code) = diagnose(&file, &[]);
        if (code, &d["stuck"]) != (0, &json!(false)) {
            failures.push(format!("{format} after: {} suspects {}", d["verdict"], d["suspects"]));
        }
        let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        if next.iter().any(|c| c.contains("--suspects")) {
            failures.push(format!("{format} after: next {next:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
