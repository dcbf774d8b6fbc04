//! `--fit`: a session stuck on a valid but oversized image (a real pi 0.73.1
//! session, `images.autoResize: false`, its read tool on a 9000×40 PNG, refused
//! by Anthropic's 8000 px side limit; made by the round-trip suite's
//! `pi/repair_fit…` scenario) gets the image fitted, not dropped.

use crate::common;

use std::path::Path;

use base64::Engine as _;
use serde_json::Value;
use session_doctor::media::{Depth, Facts, Verdict};

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/pi/stuck-oversized-screenshot.jsonl")
}

fn json_of(args: &[&str]) -> (i32, Value) {
    let out = common::run(args);
    let v =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), v)
}

/// Every image block in a pi tool result of `lines`, decoded, with the text after it.
fn images(lines: &str) -> Vec<(Vec<u8>, Option<String>)> {
    let mut out = Vec::new();
    for line in lines.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let Some(content) = v.pointer("/message/content").and_then(Value::as_array) else { continue };
        for (i, block) in content.iter().enumerate() {
            if block["type"] == "image" {
                let bytes = base64::engine::general_purpose::STANDARD.decode(block["data"].as_str().unwrap()).unwrap();
                out.push((bytes, content.get(i + 1).and_then(|b| b["text"].as_str()).map(String::from)));
            }
        }
    }
    out
}

#[test]
fn diagnose_offers_fit_when_every_suspect_is_valid_but_oversized() {
    let f = fixture();
    let (code, d) = json_of(&["diagnose", "--json", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(d["failure"]["class"], "media_rejected");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(next.iter().any(|n| n.starts_with("session-doctor repair") && n.ends_with("--fit")), "{next:?}");
    assert!(!next.iter().any(|n| n.contains("exclude")), "the image need not be lost: {next:?}");
}

#[test]
fn repair_fit_writes_the_image_fitted_with_a_note_and_the_copy_is_not_stuck() {
    let f = fixture();
    let before = common::sha256_file(&f);
    let dir = tempfile::tempdir().unwrap();
    let (code, r) = json_of(&["repair", f.to_str().unwrap(), "--fit", "--out", dir.path().to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["changes"]["fitted"], serde_json::json!(["L6.1"]));
    assert_eq!(common::sha256_file(&f), before, "the original is untouched");
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    let imgs = images(&copy);
    assert_eq!(imgs.len(), 1);
    let (bytes, note) = &imgs[0];
    let facts = Facts::examine(bytes, None, Depth::Deep);
    assert_eq!((facts.width, facts.height, facts.mime_detected()), (Some(8000), Some(35), Some("image/png")));
    assert!(facts.damage.iter().all(|p| p.severity != Verdict::Invalid));
    let note = note.as_deref().expect("a note after the image");
    assert!(
        note.starts_with("[Image resized from 9000×40 to 8000×35 to fit anthropic's limits. Original file: wide.png"),
        "{note}"
    );
    let (code, d) = json_of(&["diagnose", "--json", r["out"].as_str().unwrap()]);
    assert_eq!((code, &d["stuck"]), (0, &Value::Bool(false)), "{d}");
}

#[test]
fn preview_fit_shows_the_fitted_image_and_without_it_the_original() {
    let f = fixture();
    let sides = |args: &[&str]| -> Vec<(Option<u32>, Option<u32>)> {
        let out = common::run(args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut found = Vec::new();
        let text = v.to_string();
        for piece in text.split("\"data\":\"").skip(1) {
            let b64 = &piece[..piece.find('"').unwrap()];
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(b64) {
                let facts = Facts::examine(&bytes, None, Depth::Structural);
                found.push((facts.width, facts.height));
            }
        }
        found
    };
    let path = f.to_str().unwrap();
    assert_eq!(sides(&["preview", path]), [(Some(9000), Some(40))]);
    assert_eq!(sides(&["preview", path, "--fit"]), [(Some(8000), Some(35))]);
}

#[test]
fn fit_never_touches_bytes_that_do_not_decode() {
    // The same session with the screenshot cut short: --fit leaves it (exclusion is its remedy).
    let text = std::fs::read_to_string(fixture()).unwrap();
    let line = text.lines().find(|l| l.contains("\"type\":\"image\"")).unwrap();
    let v: Value = serde_json::from_str(line).unwrap();
    let data = v.pointer("/message/content/1/data").unwrap().as_str().unwrap();
    let mut bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    bytes.truncate(bytes.len() - 30);
    let cut = text.replace(data, &base64::engine::general_purpose::STANDARD.encode(&bytes));
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("cut.jsonl");
    std::fs::write(&session, cut).unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let (code, r) =
        json_of(&["repair", session.to_str().unwrap(), "--fit", "--out", out_dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["changes"]["fitted"], serde_json::json!([]), "{r}");
}
