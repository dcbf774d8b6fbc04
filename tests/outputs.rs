//! No output flag can make a command write over what it reads: every
//! command, every output flag, spelled as the session itself, through a
//! symlink, through a hard link, as its overlay or another file it reads.
//! Each is refused with exit 2 and a sentence, and every input keeps its bytes.

mod common;

use std::path::{Path, PathBuf};

use common::{bin, sample, sha256_file};

struct Case {
    dir: tempfile::TempDir,
    session: PathBuf,
}

impl Case {
    fn new(name: &str) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join(name);
        std::fs::copy(sample(name), &session).unwrap();
        Case { dir, session }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn s(&self) -> &str {
        self.session.to_str().unwrap()
    }
}

/// Runs `args`; it must be refused (exit 2, a sentence naming the clash) and
/// leave every file in `keep` as it was.
fn refused(args: &[&str], keep: &[&Path]) {
    let before: Vec<Option<String>> = keep.iter().map(|p| p.exists().then(|| sha256_file(p))).collect();
    let out = bin().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?} was not refused; stderr: {stderr}");
    assert!(
        stderr.contains("never writes over what it reads") && stderr.contains("nothing was written"),
        "{args:?}: {stderr}"
    );
    let after: Vec<Option<String>> = keep.iter().map(|p| p.exists().then(|| sha256_file(p))).collect();
    assert_eq!(before, after, "{args:?} changed a file it read");
}

#[test]
fn preview_out_is_never_the_session_or_its_overlay() {
    let c = Case::new("claude-code.jsonl");
    let s = c.s();
    refused(&["preview", s, "--out", s], &[&c.session]);
    // The same file spelled another way, through a symlink, through a hard link.
    let dotted = c.dir.path().join(".").join("claude-code.jsonl");
    refused(&["preview", s, "--out", dotted.to_str().unwrap()], &[&c.session]);
    let link = c.path("link.json");
    std::os::unix::fs::symlink(&c.session, &link).unwrap();
    refused(&["preview", s, "--out", link.to_str().unwrap()], &[&c.session]);
    let hard = c.path("hard.json");
    std::fs::hard_link(&c.session, &hard).unwrap();
    refused(&["preview", s, "--out", hard.to_str().unwrap()], &[&c.session]);
    // A session read through a link, the output naming the file it points to.
    refused(&["preview", link.to_str().unwrap(), "--out", s], &[&c.session]);
    // The overlay, whether it exists yet or not.
    let overlay = c.path("claude-code.jsonl.doctor");
    refused(&["preview", s, "--out", overlay.to_str().unwrap()], &[&overlay]);
    assert!(bin().args(["exclude", s, "--ref", "L7.1"]).output().unwrap().status.success());
    refused(&["preview", s, "--out", overlay.to_str().unwrap()], &[&overlay]);
    // The rules file.
    let rules = c.path("rules.json");
    std::fs::write(&rules, "{}").unwrap();
    refused(&["preview", s, "--rules", rules.to_str().unwrap(), "--out", rules.to_str().unwrap()], &[&rules]);
    // Another path is written.
    let fine = c.path("request.json");
    let out = bin().args(["preview", s, "--out", fine.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn diagnose_html_is_never_an_input() {
    let c = Case::new("claude-code.jsonl");
    let s = c.s();
    refused(&["diagnose", s, "--html", s], &[&c.session]);
    let overlay = c.path("claude-code.jsonl.doctor");
    refused(&["diagnose", s, "--html", overlay.to_str().unwrap()], &[&overlay]);
    let error = c.path("error.json");
    std::fs::write(&error, r#"{"error":{"message":"Could not process image"}}"#).unwrap();
    let e = error.to_str().unwrap();
    refused(&["diagnose", s, "--error-file", e, "--html", e], &[&error, &c.session]);
    // `--json` too: the page is written before the answer.
    refused(&["diagnose", "--json", s, "--html", s], &[&c.session]);
}

#[test]
fn check_out_is_never_a_session_it_checks() {
    let c = Case::new("claude-code.jsonl");
    let s = c.s();
    refused(&["check", s, "--out", s], &[&c.session]);
    for form in ["human", "json", "junit", "github", "html"] {
        refused(&["check", "--output-format", form, s, "--out", s], &[&c.session]);
    }
    // A folder walked: any session found in it.
    let d = c.dir.path().to_str().unwrap();
    refused(&["check", d, "--out", s], &[&c.session]);
    let overlay = c.path("claude-code.jsonl.doctor");
    refused(&["check", d, "--out", overlay.to_str().unwrap()], &[&overlay]);
}

#[test]
fn exclude_overlay_is_never_the_session() {
    let c = Case::new("claude-code.jsonl");
    let s = c.s();
    refused(&["exclude", s, "--ref", "L7.1", "--overlay", s], &[&c.session]);
    // (An overlay that is a symlink to the session is refused before: see tests/hostile.rs.)
    let rules = c.path("rules.json");
    std::fs::write(&rules, "{}").unwrap();
    let r = rules.to_str().unwrap();
    refused(&["exclude", s, "--ref", "L7.1", "--rules", r, "--overlay", r], &[&rules]);
}

#[test]
fn repair_never_writes_its_copy_where_it_reads() {
    // Formats without a naming of their own are copied to `<stem>.repaired.<ext>`:
    // an overlay given that name (not written yet) would become the copy.
    let c = Case::new("anthropic.jsonl");
    let s = c.s();
    let copy = c.path("anthropic.repaired.jsonl");
    let d = c.dir.path().to_str().unwrap();
    refused(&["repair", s, "--out", d, "--overlay", copy.to_str().unwrap()], &[&c.session]);
    assert!(!copy.exists(), "the copy was written where the overlay is read");
    std::fs::write(&copy, "{}").unwrap();
    refused(&["repair", s, "--out", d, "--rules", copy.to_str().unwrap()], &[&copy]);
}

#[test]
fn an_output_that_is_not_a_regular_file_is_refused() {
    let c = Case::new("claude-code.jsonl");
    let out = bin().args(["preview", c.s(), "--out", c.dir.path().to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a regular file"));
}
