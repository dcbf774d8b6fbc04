//! A lone surrogate escape (`"\ud83c"`: what `JSON.stringify` writes of a tool
//! output cut inside an emoji) in a Claude Code session, and Anthropic's refusal
//! of the request carrying it ("The request body is not valid JSON: no low
//! surrogate in string"): diagnose names the line and the cure, `repair` and
//! `preview` put U+FFFD in its place and keep the record (issue 37 item 4).

use crate::common;

use std::path::{Path, PathBuf};

/// A Claude Code session: a Bash result whose output ends in half of an emoji
/// (line 3), then the 400 Claude Code recorded for the next request (line 4).
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lone_surrogate/claude-code.jsonl")
}

fn run(dir: &Path, args: &[&str]) -> (String, Option<i32>) {
    common::run_in(dir, args)
}

fn copied() -> tempfile::TempDir {
    common::copied(&fixture(), "s.jsonl")
}

#[test]
fn the_fixture_holds_one_lone_surrogate_in_a_tool_result() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let line3 = text.lines().nth(2).unwrap();
    assert!(line3.contains(r#""type":"tool_result","content":"deployed 3 pages \ud83c""#), "{line3}");
    assert!(text.lines().nth(3).unwrap().contains("no low surrogate in string"));
}

#[test]
fn diagnose_names_the_line_and_the_cure() {
    let dir = copied();
    let (out, code) = run(dir.path(), &["diagnose", "s.jsonl"]);
    assert_eq!(
        out,
        "s.jsonl: claude-code (detected), judged by anthropic rules
stuck: the provider's JSON parser refuses a lone surrogate (half of a character) on every request

failure   history_invalid (not retryable; recorded at line 4)
provider  anthropic, status 400, model claude-sonnet-4-5
message   The request body is not valid JSON: no low surrogate in string: line 1 column 1735 (char 1734)

note      line 3 holds a lone surrogate escape (half of a character cut in two), which every request sends again; `repair` writes a copy with U+FFFD in its place, the record kept

next:
  session-doctor repair s.jsonl
"
    );
    assert_eq!(code, Some(1));
}

/// The refusal with no lone surrogate in the session: the broken character is
/// in what the agent adds to each request, and no copy of the session helps.
#[test]
fn diagnose_says_when_no_line_holds_one() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap().replace(r"\ud83c", "!");
    std::fs::write(dir.path().join("s.jsonl"), text).unwrap();
    let (out, code) = run(dir.path(), &["diagnose", "s.jsonl", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["failure"]["class"], "history_invalid", "{v:#}");
    assert_eq!(v["next"], serde_json::json!([]), "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("no line of the session holds a lone surrogate escape"), "{notes}");
    assert_eq!(code, Some(1));
}

#[test]
fn repair_replaces_the_half_character_and_keeps_the_record() {
    let dir = copied();
    let (out, code) = run(dir.path(), &["repair", "s.jsonl", "--json"]);
    assert_eq!(code, Some(0), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["changes"]["surrogates_replaced"], serde_json::json!([3]), "{v:#}");
    assert_eq!(v["changes"]["failures_dropped"], serde_json::json!([4]), "{v:#}");
    assert_eq!(v["still_stuck"], serde_json::Value::Null, "{v:#}");
    let copy = dir.path().join(v["out"].as_str().unwrap());
    let (orig, repaired) = (std::fs::read_to_string(fixture()).unwrap(), std::fs::read_to_string(&copy).unwrap());
    assert!(!repaired.contains(r"\ud83c"), "no lone surrogate is left");
    assert_eq!(repaired.lines().count(), 3, "the record is kept, the error record left out");
    // The record is the original's, but for the new session id and the escape.
    let old_id = "5b0e4c2a-7d1f-4e8a-9c3b-2f6a1d8e4b70";
    let new_id = v["id"].as_str().unwrap();
    for (a, b) in orig.lines().zip(repaired.lines()) {
        assert_eq!(a.replace(old_id, new_id).replace(r"\ud83c", r"\ufffd"), b);
    }
    assert!(repaired.lines().nth(2).unwrap().contains(r#""content":"deployed 3 pages \ufffd""#));
    let (out, code) = run(dir.path(), &["diagnose", copy.to_str().unwrap(), "--json"]);
    let d: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((d["stuck"].as_bool(), code), (Some(false), Some(0)), "{d:#}");
    assert!(d["verdict"].as_str().unwrap().starts_with("healthy"), "{d:#}");
    let (scan, _) = common::scan_json(&copy, &[]);
    assert!(!scan["findings"].to_string().contains("line.lone_surrogate"), "{scan:#}");
}

#[test]
fn preview_sends_the_replacement_character() {
    let dir = copied();
    let (out, code) = run(dir.path(), &["preview", "s.jsonl"]);
    assert_eq!(code, Some(0));
    assert!(!out.contains(r"\ud83c") && !out.contains(r"\uD83C"), "{out}");
    let request: serde_json::Value = serde_json::from_str(&out).unwrap();
    let text = request.to_string();
    assert!(text.contains("deployed 3 pages \u{fffd}"), "{text}");
}

#[test]
fn scan_names_the_line() {
    let (v, _) = common::scan_json(&fixture(), &[]);
    let found: Vec<&serde_json::Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "line.lone_surrogate").collect();
    assert_eq!(found.len(), 1, "{v:#}");
    assert_eq!(found[0]["line"], 3);
    assert_eq!(found[0]["severity"], "warning");
}
