//! Salvage before dropping (issue 38, item 4): a record split over lines by a
//! raw newline inside a string is rejoined, two records glued on one line are
//! split at their boundary, and only what neither makes readable is left out.
//! The sessions are ones the real agents wrote (tests/data/agents/), damaged
//! here the two ways; before, `repair` left both out and the copy lost them.

use crate::common;

use std::path::{Path, PathBuf};

use common::{json_of, run};
use serde_json::Value;

/// `fixture` (an agent's session) damaged: the first space after `READ-THE-FILE`
/// (the user's prompt) made a raw newline, and the two lines before the prompt
/// glued into one. Returns the file and its damaged lines: (the split record's
/// first line, the glued line).
fn damaged(dir: &tempfile::TempDir, fixture: &str, as_name: &str) -> (PathBuf, (u64, u64)) {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents").join(fixture))
        .expect("the fixture");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // The first prompt with two lines before it (Claude Code's queue lines hold it too).
    let at = 2 + lines[2..].iter().position(|l| l.contains("READ-THE-FILE ")).expect("a prompt");
    lines[at] = lines[at].replacen("READ-THE-FILE ", "READ-THE-FILE\n", 1);
    let second = lines.remove(at - 1);
    lines[at - 2].push_str(&second);
    let file = dir.path().join(as_name);
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    (file, (at as u64, at as u64 - 1))
}

fn check_salvaged(fixture: &str, as_name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (file, (split, glued)) = damaged(&dir, fixture, as_name);
    let (d, _) = json_of(&["diagnose", file.to_str().unwrap(), "--json"]);
    let notes = d["notes"].to_string();
    assert!(notes.contains(&format!("lines {split}–{}: one record split", split + 1)), "{fixture}: {notes}");
    assert!(notes.contains("repair rejoins it"), "{fixture}: {notes}");
    assert!(notes.contains(&format!("line {glued}: 2 records glued on one line")), "{fixture}: {notes}");

    std::fs::create_dir(dir.path().join("copy")).unwrap();
    let out = run(&["repair", file.to_str().unwrap(), "--out", dir.path().join("copy").to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{fixture}: {}", String::from_utf8_lossy(&out.stderr));
    let rep: Value = serde_json::from_slice(&out.stdout).unwrap();
    let salvaged = rep["salvaged"].to_string();
    assert!(salvaged.contains("rejoined") && salvaged.contains("split at their boundary"), "{fixture}: {rep:#}");
    assert!(
        !rep["dropped"].as_array().unwrap().iter().any(|l| [split, split + 1, glued].contains(&l.as_u64().unwrap())),
        "{rep:#}"
    );
    // Every line of the copy is a record; the prompt is there with its newline
    // escaped; both glued records are there, each on a line of its own.
    let copy = std::fs::read_to_string(rep["out"].as_str().unwrap()).unwrap();
    let records: Vec<Value> = copy.lines().map(|l| serde_json::from_str(l).expect("a record per line")).collect();
    assert!(copy.contains(r"READ-THE-FILE\n"), "{fixture}: the rejoined prompt");
    let original: Vec<Value> =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents").join(fixture))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let types = |v: &Value| v.get("type").cloned();
    let at = 2 + original[2..].iter().position(|r| r.to_string().contains("READ-THE-FILE ")).unwrap();
    let pair: Vec<_> = original[at - 2..at].iter().map(types).collect();
    let found = records.windows(2).any(|w| w.iter().map(types).collect::<Vec<_>>() == pair);
    assert!(found, "{fixture}: the glued records, apart");
    let (d, _) = json_of(&["diagnose", rep["out"].as_str().unwrap(), "--json"]);
    assert!(!d["notes"].to_string().contains("glued"), "{fixture}: the copy reads whole: {d:#}");
}

#[test]
fn claude_code_lines_are_rejoined_and_split() {
    check_salvaged("claude-code/killed-mid-tool.jsonl", "0d6c3f55-6c32-4bf1-8a3c-8b7a1d2b6e01.jsonl");
}

#[test]
fn codex_lines_are_rejoined_and_split() {
    check_salvaged(
        "codex/killed-mid-tool.jsonl",
        "rollout-2026-12-01T08-00-00-019ae0b0-0000-7000-8000-000000000001.jsonl",
    );
}

#[test]
fn pi_lines_are_rejoined_and_split() {
    check_salvaged("pi/killed-mid-tool.jsonl", "2026-12-01T08-00-00-000Z_01a230a8-0861-7751-b652-a311c97c6887.jsonl");
}
