//! Qwen Code 0.24.4 sessions as the real CLI wrote them (tests/data/agents/qwen-code,
//! see its README): stuck on a route that takes no images (404), before and after
//! its own `/compress`; a cut PDF its own retry sent as a placeholder; a cut PNG
//! its `read_file` never sent.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

const ROUTE_404: &str = "image-route-404/a8383ef4-f550-4f0b-b924-27d5d81bf89b.jsonl";
const COMPACTED: &str = "compacted-image-404/77741906-02a4-4400-9cef-21a40a367e0f.jsonl";
const CUT_PDF: &str = "cut-pdf-retried/49d39634-efe8-4395-adfb-2272bf8673ea.jsonl";
const CUT_PNG: &str = "cut-png-omitted/69b089b3-9e37-4e92-b3e3-5b609caf2cae.jsonl";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/qwen-code").join(name)
}

/// A copy laid out as Qwen Code keeps it: `<home>/.qwen/projects/<project>/chats/<id>.jsonl`.
fn session(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let chats = dir.path().join(".qwen/projects/-tmp-work/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let path = chats.join(Path::new(name).file_name().unwrap());
    std::fs::copy(fixture(name), &path).unwrap();
    (dir, path)
}

fn preview(path: &Path, extra: &[&str]) -> (Value, Value) {
    let mut args = vec!["preview", path.to_str().unwrap(), "--json"];
    args.extend(extra);
    let out = common::run(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8_lossy(&out.stderr).lines().rev().find(|l| l.starts_with('{')).unwrap().to_string();
    (serde_json::from_slice(&out.stdout).unwrap(), serde_json::from_str(&summary).unwrap())
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_tools_image_is_read_from_its_function_response() {
    let (v, code) = common::scan_json(&fixture(ROUTE_404), &[]);
    assert_eq!(v["format"], json!("qwen-code"), "{v:#}");
    let atts = v["attachments"].as_array().unwrap();
    assert_eq!(atts.len(), 1, "{v:#}");
    // read_file's overview of the PNG: a JPEG, in the tool_result's functionResponse.parts.
    assert_eq!(
        (&atts[0]["origin"], &atts[0]["mime_declared"], &atts[0]["name"]),
        (&json!("tool_result"), &json!("image/jpeg"), &json!("shot.png")),
        "{v:#}"
    );
    assert_eq!(atts[0]["line"], json!(6), "{v:#}");
    assert_eq!(atts[0]["verdict"], json!("ok"), "{v:#}");
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn the_route_that_takes_no_images_is_the_recorded_failure() {
    let (d, code) = common::diagnose(&fixture(ROUTE_404), &[]);
    assert_eq!(code, 1, "{d:#}");
    assert_eq!(d["stuck"], json!(true), "{d:#}");
    // Recorded only as a ui_telemetry `qwen-code.api_error`, the last line.
    assert_eq!(
        (&d["failure"]["class"], &d["failure"]["status"], &d["failure"]["line"]),
        (&json!("image_limit"), &json!(404), &json!(10)),
        "{d:#}"
    );
    assert!(d["next"].as_array().unwrap().iter().any(|c| c.as_str().unwrap().contains("--max-images 0")), "{d:#}");
}

/// The same refusal, once the history no longer sends the image (its `read_file`
/// result kept its words and lost the picture): the route takes no images and the
/// next request carries none, so nothing is stuck on it. Before, diagnose called it
/// stuck and offered `repair --max-images 0`, which refused ("nothing this repair
/// changes answers the `image_limit` failure") and offered itself again.
#[test]
fn a_route_that_takes_no_images_is_no_dead_end_once_no_image_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let text: String = lines(&fixture(ROUTE_404))
        .into_iter()
        .map(|mut v| {
            if let Some(parts) = v.pointer_mut("/message/parts/0/functionResponse/parts") {
                *parts = json!([]);
            }
            v.to_string() + "\n"
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    let (d, code) = common::diagnose(&path, &[]);
    assert_eq!(d["failure"]["class"], json!("image_limit"), "{d:#}");
    assert_eq!(d["stuck"], json!(false), "{d:#}");
    assert_eq!(
        d["verdict"],
        json!("not stuck: the model or route takes no images, and the next request carries none"),
        "{d:#}"
    );
    assert!(!d["next"].to_string().contains("--max-images"), "{d:#}");
    assert!(!d["notes"].to_string().contains("takes no images: it refuses"), "{d:#}");
    assert_eq!(code, 0, "{d:#}");
}

#[test]
fn preview_is_the_chat_request_qwen_code_sends() {
    let (body, summary) = preview(&fixture(ROUTE_404), &[]);
    assert_eq!(summary["target"], json!("openai-chat"), "{summary:#}");
    assert!(summary["not_in_session"].to_string().contains("startup context"), "{summary:#}");
    let roles: Vec<&str> = body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    // The tool message keeps its text; its image follows in a user message of its own.
    assert_eq!(roles, ["user", "assistant", "tool", "user", "user"], "{body:#}");
    let m = &body["messages"];
    assert!(m[2]["content"].as_str().unwrap().starts_with("Image overview: 4x4"), "{body:#}");
    assert_eq!(
        m[3]["content"][0],
        json!({"type":"text","text":"(attached media from previous tool call)"}),
        "{body:#}"
    );
    assert!(
        m[3]["content"][1]["image_url"]["url"].as_str().unwrap().starts_with("data:image/jpeg;base64,/9j/"),
        "{body:#}"
    );
    assert_eq!(m[4]["content"], json!([{"type":"text","text":"continue"}]), "{body:#}");
    assert_eq!(body["model"], json!("qwen3-vl-plus"), "{body:#}");
}

#[test]
fn repair_writes_a_new_session_beside_the_original_that_is_not_stuck() {
    let (_dir, s) = session(ROUTE_404);
    let before = std::fs::read(&s).unwrap();
    let (copy, code) = common::json_of(&["repair", s.to_str().unwrap(), "--max-images", "0", "--json"]);
    assert_eq!(code, 0, "{copy:#}");
    let id = copy["id"].as_str().unwrap();
    let out = PathBuf::from(copy["out"].as_str().unwrap());
    assert_eq!(out, s.with_file_name(format!("{id}.jsonl")), "{copy:#}");
    assert_eq!(copy["resume"], json!(format!("qwen --resume {id}")), "{copy:#}");
    assert_eq!(std::fs::read(&s).unwrap(), before, "the original is never written");
    let records = lines(&out);
    assert!(records.iter().all(|r| r["sessionId"] == json!(id)), "every record names the new session");
    assert!(!records.iter().any(|r| r.to_string().contains("api_error")), "the failures are left out");
    // The chain stands over the records left out: every parent is in the copy.
    let uuids: std::collections::HashSet<&str> = records.iter().map(|r| r["uuid"].as_str().unwrap()).collect();
    assert!(records.iter().all(|r| r["parentUuid"].is_null() || uuids.contains(r["parentUuid"].as_str().unwrap())));
    let (d, code) = common::diagnose(&out, &[]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    let (body, _) = preview(&out, &[]);
    assert!(!body.to_string().contains("image_url"), "{body:#}");
    assert!(
        body.to_string().contains("[Earlier image omitted: this request keeps only the 0 most recent images."),
        "{body:#}"
    );
}

#[test]
fn a_compaction_replaces_what_came_before_and_keeps_its_image() {
    let (v, code) = common::scan_json(&fixture(COMPACTED), &[]);
    assert_eq!(code, 0, "{v:#}");
    let atts = v["attachments"].as_array().unwrap();
    assert_eq!(atts.len(), 1, "{v:#}");
    let at = usize::try_from(atts[0]["line"].as_u64().unwrap()).unwrap();
    assert_eq!(lines(&fixture(COMPACTED))[at - 1]["subtype"], json!("chat_compression"), "{v:#}");
    let (body, _) = preview(&fixture(COMPACTED), &[]);
    let text = body.to_string();
    assert!(!text.contains("line 0 of a long file"), "the file read before the compaction is not sent");
    assert!(
        body["messages"][0]["content"][0]["text"].as_str().unwrap().starts_with("Done.\n\nResume the prior task"),
        "{body:#}"
    );
    // The model of the requests before the compaction, which names none: the image goes as an image.
    assert_eq!(body["model"], json!("qwen3-vl-plus"), "{body:#}");
    assert!(text.contains("\"image_url\""), "{body:#}");
    let (d, code) = common::diagnose(&fixture(COMPACTED), &[]);
    assert_eq!((code, &d["failure"]["class"]), (1, &json!("image_limit")), "{d:#}");
}

#[test]
fn a_pdf_its_retry_left_out_is_named_and_not_called_accepted() {
    let (v, code) = common::scan_json(&fixture(CUT_PDF), &[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["attachments"][0]["mime_declared"], json!("application/pdf"), "{v:#}");
    assert_eq!(v["attachments"][0]["verdict"], json!("invalid"), "{v:#}");
    let (d, code) = common::diagnose(&fixture(CUT_PDF), &[]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    // Qwen Code's answered retry went without the PDF, and the file says nothing of it:
    // no claim that the model took the PDF.
    let verdict = d["verdict"].as_str().unwrap();
    assert!(!verdict.contains("accepted it"), "{verdict}");
    assert!(verdict.contains("Qwen Code sends a request refused with a 400 once more"), "{verdict}");
    let (body, _) = preview(&fixture(CUT_PDF), &[]);
    let file = body["messages"][3]["content"][1].clone();
    assert_eq!(file["type"], json!("file"), "{body:#}");
    assert_eq!(file["file"]["filename"], json!("doc.pdf"), "{body:#}");
}

#[test]
fn a_png_read_file_could_not_decode_is_no_attachment() {
    let (v, code) = common::scan_json(&fixture(CUT_PNG), &[]);
    assert_eq!((code, v["attachments"].as_array().unwrap().len()), (0, 0), "{v:#}");
}

#[test]
fn claude_codes_reader_does_not_take_qwen_code_lines() {
    // The same ids as Claude Code's lines: before, `--format claude-code` read the
    // records as Claude Code's and made a history of them.
    let out = common::run(&["scan", fixture(ROUTE_404).to_str().unwrap(), "--format", "claude-code"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stderr).contains("qwen-code"), "{}", String::from_utf8_lossy(&out.stderr));
}
