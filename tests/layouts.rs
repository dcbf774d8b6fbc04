//! Layouts the agents really write, in the project's own fixtures (real shapes,
//! real bytes): pi's earlier sessions, one JSON document laid out over many
//! lines, references without bytes, damaged parent links, Cline's history,
//! opencode's database and storage tree.

mod common;
#[path = "common/media_corpus.rs"]
mod media_corpus;

use std::path::{Path, PathBuf};

use common::{b64, run, scan_json, sha256_file};
use serde_json::{Value, json};

fn temp_with(name: &str, content: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join(name);
    std::fs::write(&p, content).expect("write");
    (dir, p)
}

fn lines(v: &[Value]) -> String {
    v.iter().map(|l| l.to_string() + "\n").collect()
}

fn attachments(doc: &Value) -> &Vec<Value> {
    doc["attachments"].as_array().expect("attachments array")
}

fn png_b64() -> String {
    b64(&media_corpus::png(3, 2))
}

/// A PNG cut short: header and part of the image data.
fn cut_png_b64() -> String {
    let p = media_corpus::png(8, 8);
    b64(&p[..p.len() / 2])
}

#[test]
fn pi_v1_layout_is_pi_in_file_order_with_the_header_provider() {
    // pi before session v2 (Dec 2025): a header naming provider and model, entries
    // without id/parentId; a read tool returns an image.
    let content = lines(&[
        json!({"type":"session","id":"ffae836b-0000-4000-8000-000000000001","timestamp":"2025-12-09T00:53:29.825Z",
            "cwd":"/home/u/app","provider":"openai","modelId":"gpt-5","thinkingLevel":"off"}),
        json!({"type":"message","timestamp":"2025-12-08T22:41:05.306Z","message":{"role":"user",
            "content":[{"type":"text","text":"read the screenshot"}],"timestamp":1765233665292_u64}}),
        json!({"type":"message","timestamp":"2025-12-08T22:41:09.389Z","message":{"role":"assistant",
            "content":[{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"/home/u/app/shot.png"}}],
            "api":"openai-responses","provider":"openai","model":"gpt-5",
            "usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"toolUse","timestamp":1765233669389_u64}}),
        json!({"type":"message","timestamp":"2025-12-08T22:41:09.394Z","message":{"role":"toolResult","toolCallId":"call_1",
            "toolName":"read","content":[{"type":"text","text":"Read image file [image/png]"},
            {"type":"image","data":cut_png_b64(),"mimeType":"image/png"}],"isError":false,"timestamp":1765233669394_u64}}),
        json!({"type":"thinking_level_change","timestamp":"2025-12-08T22:45:42.397Z","thinkingLevel":"low"}),
    ]);
    let (_dir, path) = temp_with("2025-12-09T00-53-29-825Z_ffae836b.jsonl", content.as_bytes());
    let (doc, code) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "pi", "{doc:#}");
    assert_eq!(doc["provider"], "openai", "the header's provider judges the media");
    let got = attachments(&doc);
    assert_eq!(got.len(), 1, "{doc:#}");
    assert_eq!(got[0]["line"], 4);
    assert_eq!(got[0]["origin"], "tool_result");
    assert_eq!(got[0]["name"], "/home/u/app/shot.png");
    assert_eq!(got[0]["verdict"], "invalid", "the cut PNG is found");
    assert_eq!(doc["entries"], 3);
    assert_eq!(code, 1);
    // `--format pi` reads the same.
    let (doc, _) = scan_json(&path, &["--format", "pi"]);
    assert_eq!(attachments(&doc).len(), 1);
}

#[test]
fn pi_v1_compaction_keeps_entries_from_its_index() {
    let img = |t: &str| json!({"type":"message","timestamp":t,"message":{"role":"user",
        "content":[{"type":"image","data":png_b64(),"mimeType":"image/png"}],"timestamp":1}});
    let content = lines(&[
        json!({"type":"session","id":"s","timestamp":"t","cwd":"/","provider":"anthropic","modelId":"claude-sonnet-4-5"}),
        img("a"), // entry 1: compacted away
        img("b"), // entry 2: kept
        json!({"type":"compaction","timestamp":"c","summary":"so far","firstKeptEntryIndex":2,"tokensBefore":1000}),
        json!({"type":"model_change","timestamp":"d","provider":"openai","modelId":"gpt-5"}),
        img("e"),
    ]);
    let (_dir, path) = temp_with("v1.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "pi");
    let lines: Vec<u64> = attachments(&doc).iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    assert_eq!(lines, vec![3, 6], "{doc:#}");
    assert_eq!(doc["provider"], "openai", "model_change names the provider in use now");
}
