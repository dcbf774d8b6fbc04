//! pi sessions whose `compaction` carries `retainedTail` (the agent harness of
//! `@earendil-works/pi-agent-core` 0.81.0–0.83.x writes them; the `pi` CLI does
//! not): the kept messages are materialized into the compaction, and the
//! harness sends the summary, then those copies, then what follows — never
//! the entries from `firstKeptEntryId` on, which stay in the file. An image in
//! the copies is what the provider sees, so it is the one counted, judged,
//! excluded, previewed and repaired.

use crate::common;

use std::path::{Path, PathBuf};

use common::{diagnose, run};
use serde_json::Value;

const FIXTURE: &str = "tests/data/agents/pi/harness-retained-tail.jsonl";

fn session(dir: &tempfile::TempDir) -> PathBuf {
    let to = dir.path().join("2026-12-01T09-00-00-000Z_019a3c2e-7f10-7b2c-9d41-5e0c8a1f2b33.jsonl");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &to).expect("copy the fixture");
    to
}

fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn preview_messages(file: &Path) -> Vec<Value> {
    let out = run(&["preview", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let body: Value = serde_json::from_slice(&out.stdout).expect("a JSON request");
    body["messages"].as_array().expect("messages").clone()
}

#[test]
fn the_suspect_is_the_image_in_the_retained_tail_not_the_entry_it_copies() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir);
    let (v, code) = diagnose(&file, &[]);
    assert_eq!(code, 1, "stuck: {v}");
    let text = v.to_string();
    // Line 8 is the compaction; line 7 the original tool result the harness does not send.
    assert!(text.contains("L8.1"), "the suspect is the copy in the compaction's retainedTail: {v:#}");
    assert!(!text.contains("L7.1"), "the entry before the compaction is not sent: {v:#}");
}

#[test]
fn preview_is_the_summary_then_the_retained_messages_as_the_harness_sends_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir);
    let m = preview_messages(&file);
    assert_eq!(m.len(), 4, "summary, user, call, result: {m:#?}");
    let summary = m[0]["content"][0]["text"].as_str().unwrap();
    assert!(summary.starts_with("The conversation history before this point was compacted"), "{summary}");
    assert!(!m.iter().any(|x| x.to_string().contains("Summarise the repository layout")), "summarized: {m:#?}");
    assert_eq!(m[1]["content"][0]["text"], "READ-THE-FILE shot.png");
    assert_eq!(m[2]["content"][0]["type"], "tool_use");
    let result = &m[3]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["content"][1]["type"], "image", "{result:#}");
}

#[test]
fn exclude_and_repair_take_the_image_out_of_the_retained_tail() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir);
    let before = std::fs::read(&file).unwrap();
    let out = run(&["exclude", file.to_str().unwrap(), "--suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // The preview after the exclusion sends no image at all.
    let m = preview_messages(&file);
    assert!(!m.iter().any(|x| x.to_string().contains("\"image\"")), "{m:#?}");
    let out = run(&["repair", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // The `pi` CLI (0.73.1, driven by hand) resumes the copy from firstKeptEntryId:
    // it sends the original entries, cut PNG included, and gets the same 400.
    let report: Value = serde_json::from_slice(&out.stdout).expect("repair --json");
    let note = report["resume_note"].as_str().unwrap_or_default();
    assert!(note.contains("firstKeptEntryId") && note.contains("program that wrote it"), "{report:#}");
    assert_eq!(std::fs::read(&file).unwrap(), before, "the original is never written");
    let copy = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p != &file && p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a repaired copy");
    let compaction = lines(&copy).into_iter().find(|l| l["type"] == "compaction").expect("the compaction kept");
    let tail = compaction["retainedTail"].as_array().expect("retainedTail kept");
    assert_eq!(tail.len(), 3);
    assert!(!tail.iter().any(|m| m.to_string().contains("\"type\":\"image\"")), "{tail:#?}");
    let (v, code) = diagnose(&copy, &[]);
    assert_eq!(code, 0, "the repaired copy is not stuck: {v:#}");
}

#[test]
fn an_empty_retained_tail_keeps_nothing_before_the_compaction() {
    // The harness tests `if (compaction.retainedTail)`: an empty list is kept as
    // it is, so nothing from `firstKeptEntryId` on is sent.
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir);
    let text: Vec<String> = lines(&file)
        .into_iter()
        .map(|mut l| {
            if l["type"] == "compaction" {
                l["retainedTail"] = Value::Array(Vec::new());
            }
            l.to_string()
        })
        .collect();
    std::fs::write(&file, text.join("\n") + "\n").unwrap();
    let m = preview_messages(&file);
    assert_eq!(m.len(), 1, "the summary alone: {m:#?}");
    let (v, code) = diagnose(&file, &[]);
    assert!(!v.to_string().contains("shot.png"), "no attachment is sent: {v:#}");
    assert_ne!(code, 1, "{v:#}");
}
