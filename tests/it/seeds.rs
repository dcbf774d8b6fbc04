//! shared/seeds/000 word for word: opencode, a PDF whose bytes look valid, and
//! OpenAI's `invalid_file` 400. No validator catches every bad file, and a valid
//! file can still be refused by one provider: diagnose names the attachment the
//! model has not accepted yet, offers to continue without it, and the copy puts
//! the seed's note in its place and keeps every other file.

use crate::common;

use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/seeds/opencode-valid-pdf-refused.jsonl")
}

fn run(dir: &Path, args: &[&str]) -> (String, Option<i32>) {
    common::run_in(dir, args)
}

fn copied() -> tempfile::TempDir {
    common::copied(&fixture(), "s.jsonl")
}

#[test]
fn the_seeds_error_on_a_valid_looking_pdf_is_stuck_and_names_it() {
    let dir = copied();
    let (out, code) = run(dir.path(), &["diagnose", "s.jsonl"]);
    assert_eq!(
        out,
        "s.jsonl: opencode (detected), judged by openai rules
stuck: media_rejected — every retry sends the same request and fails the same way

failure   media_rejected (not retryable; recorded at line 3)
provider  openai, status 400, model gpt-5
message   The file you uploaded is badly formatted or corrupted

1 suspect:
  ref   line  origin     name        type              size  dims  verdict
  L2.1     2  tool:read  report.pdf  application/pdf  329 B  1 p.  ok
  L2.1 suspect: not yet accepted by the model; its bytes look valid

note      suspects are the attachments after the answer on line 2 (its own tool results included, which went out after it), the last request gpt-5 accepted

next:
  session-doctor exclude s.jsonl --suspects
  session-doctor repair s.jsonl
"
    );
    assert_eq!(code, Some(1));
}

#[test]
fn continuing_without_it_puts_the_seeds_note_in_its_place_and_keeps_the_other_file() {
    let dir = copied();
    let (_, code) = run(dir.path(), &["exclude", "s.jsonl", "--suspects"]);
    assert_eq!(code, Some(0));
    let (out, code) = run(dir.path(), &["repair", "s.jsonl"]);
    assert_eq!(code, Some(0), "{out}");
    let original = std::fs::read_to_string(dir.path().join("s.jsonl")).unwrap();
    assert_eq!(original, std::fs::read_to_string(fixture()).unwrap(), "the original is unchanged");
    let copy = std::fs::read_to_string(dir.path().join("s.repaired.jsonl")).unwrap();
    let lines: Vec<&str> = copy.lines().collect();
    assert_eq!(lines.len(), 2, "the failed reply is left out: {copy}");
    // The user's own spec.pdf, which the model accepted, goes as it was.
    let kept = original.lines().next().unwrap();
    assert!(kept.contains("data:application/pdf;base64,"));
    assert_eq!(lines[0].replace(session_id(lines[0]), "ID"), kept.replace(session_id(kept), "ID"));
    assert!(lines[1].contains(
        r#"[Attachment omitted: \"report.pdf\" (application/pdf). The model provider rejected a request that included it, so the user chose to continue without it. Its contents are not available; tell the user if you need them.]"#
    ), "{}", lines[1]);
    assert!(!lines[1].contains("data:application/pdf"), "the refused PDF is not in the copy");
    let (out, code) = run(dir.path(), &["diagnose", "s.repaired.jsonl"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("\nhealthy: "), "{out}");
}

/// The `ses_…` id of a line (a copy has ids of its own).
fn session_id(line: &str) -> &str {
    let at = line.find("\"sessionID\":\"").expect("a sessionID") + 13;
    &line[at..at + line[at..].find('"').unwrap()]
}
