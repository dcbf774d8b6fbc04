//! No output flag can make a command write over what it reads: every
//! command, every output flag, spelled as the session itself, through a
//! symlink, through a hard link, as its overlay or another file it reads.
//! Each is refused with exit 2 and a sentence, and every input keeps its bytes.

use crate::common;

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
    // (An overlay that is a symlink to the session is refused before: see tests/it/hostile.rs.)
    let rules = c.path("rules.json");
    std::fs::write(&rules, "{}").unwrap();
    let r = rules.to_str().unwrap();
    refused(&["exclude", s, "--ref", "L7.1", "--rules", r, "--overlay", r], &[&rules]);
}

#[test]
fn an_overlay_is_appended_to_only_when_it_is_one() {
    // Another session named as the overlay is not read by the command, but it is
    // no overlay: it is left as it is.
    let c = Case::new("claude-code.jsonl");
    let other = c.path("other-session.jsonl");
    std::fs::copy(sample("codex.jsonl"), &other).unwrap();
    let before = sha256_file(&other);
    let out = bin().args(["exclude", c.s(), "--ref", "L7.1", "--overlay", other.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not an overlay"), "{stderr}");
    assert_eq!(sha256_file(&other), before);
    // An overlay whose last line was torn by a crash is still appended to.
    let overlay = c.path("mine.doctor");
    let o = overlay.to_str().unwrap();
    assert!(bin().args(["exclude", c.s(), "--ref", "L7.1", "--overlay", o]).status().unwrap().success());
    let mut text = std::fs::read_to_string(&overlay).unwrap();
    text.push_str(r#"{"event":"attachments.incl"#);
    std::fs::write(&overlay, text).unwrap();
    let out = bin().args(["exclude", c.s(), "--ref", "L7.1", "--undo", "--overlay", o]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
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

#[test]
fn an_output_is_never_the_file_behind_stdin() {
    // `diagnose - --html s.jsonl < s.jsonl`: the command reads a spooled copy of
    // stdin, but the session is the file behind it.
    let c = Case::new("claude-code.jsonl");
    let s = c.s();
    let before = sha256_file(&c.session);
    for args in [vec!["diagnose", "-", "--html", s], vec!["diagnose", "--json", "-", "--html", s]] {
        let out = bin().args(&args).stdin(std::fs::File::open(&c.session).unwrap()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("read from on stdin") && stderr.contains("nothing was written"), "{stderr}");
        assert_eq!(sha256_file(&c.session), before, "{args:?} wrote the session");
    }
    // Piped, there is no file behind stdin, and the page is written.
    let page = c.path("page.html");
    let mut child = bin()
        .args(["diagnose", "-", "--html", page.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &std::fs::read(&c.session).unwrap()).unwrap();
    child.wait().unwrap();
    assert!(std::fs::read_to_string(&page).unwrap().starts_with("<!DOCTYPE html>"));
}

#[test]
fn the_sweep_of_leftover_temporary_files_never_removes_what_the_command_reads() {
    // A session that bears a leftover's name (copied back by hand) whose pid is gone.
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join(".x.sd-tmp.3999999.abcdef");
    std::fs::copy(sample("claude-code.jsonl"), &session).unwrap();
    let before = sha256_file(&session);
    let out = bin().args(["exclude", session.to_str().unwrap(), "--ref", "L7.1"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(session.exists(), "the sweep removed the session");
    assert_eq!(sha256_file(&session), before);
    // A real leftover beside it still goes.
    let stale = dir.path().join(".s.json.sd-tmp.3999999.abcdef");
    std::fs::write(&stale, "{").unwrap();
    let out =
        bin().args(["preview", session.to_str().unwrap(), "--out"]).arg(dir.path().join("s.json")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!stale.exists() && session.exists());
}

#[test]
fn a_system_path_is_refused_even_where_it_resolves_to_a_regular_file() {
    // With stdout redirected to a file, `/dev/stdout` resolves to that file, and
    // the rename would replace the system's link (as root). Tested on the paths
    // of the same rule whose rename the kernel refuses anyway, so that a
    // regression cannot replace the machine's `/dev/stdout`: the refusal must
    // be the rule's, before any temporary file is tried.
    let c = Case::new("claude-code.jsonl");
    let redirected = std::fs::File::create(c.path("out.txt")).unwrap();
    for target in ["/proc/self/fd/1", "/dev/fd/1"] {
        let out =
            bin().args(["diagnose", c.s(), "--html", target]).stdout(redirected.try_clone().unwrap()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{target}: {stderr}");
        assert!(stderr.contains("is a system path (in /dev or /proc)"), "{target}: {stderr}");
    }
}

#[test]
fn an_overlay_lock_is_never_a_file_the_command_reads() {
    // `--overlay o` locks `o.lock`: the session may not be that file, and a
    // refusal creates no lock.
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("o.lock");
    std::fs::copy(sample("claude-code.jsonl"), &session).unwrap();
    let s = session.to_str().unwrap();
    refused(&["exclude", s, "--ref", "L7.1", "--overlay", dir.path().join("o").to_str().unwrap()], &[&session]);
    let other = dir.path().join("s.jsonl");
    std::fs::copy(sample("claude-code.jsonl"), &other).unwrap();
    let o = other.to_str().unwrap();
    refused(&["exclude", o, "--ref", "L7.1", "--overlay", o], &[&other]);
    assert!(!dir.path().join("s.jsonl.lock").exists(), "a refused exclude created the lock");
}

#[test]
fn check_out_replaces_its_own_earlier_report_inside_the_folder_it_walks() {
    // The report is no session: the walk skips it, so it is not a file the run reads.
    let c = Case::new("claude-code.jsonl");
    let report = c.path("report.json");
    let dir = c.dir.path().to_str().unwrap();
    let args = ["check", dir, "--output-format", "json", "--out", report.to_str().unwrap()];
    for _ in 0..2 {
        let out = bin().args(args).output().unwrap();
        assert_ne!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&report).unwrap()).is_ok());
    }
}

#[test]
fn a_usage_error_under_json_is_answered_in_json_too() {
    let c = Case::new("claude-code.jsonl");
    let out = bin().args(["preview", c.s(), "--json", "--max-images", "-1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty(), "clap's words stay on stderr");
}

#[test]
fn an_overlay_lock_another_process_holds_is_waited_for_with_a_note() {
    let c = Case::new("claude-code.jsonl");
    let lock_path = c.path("claude-code.jsonl.doctor.lock");
    let lock = std::fs::File::create(&lock_path).unwrap();
    lock.lock().unwrap();
    let child = bin()
        .args(["exclude", c.s(), "--ref", "L7.1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    lock.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("waiting for") && err.contains("another process is changing the overlay"), "{err}");
}

/// Files a session makes the command read besides itself are inputs too: the
/// parent a Claude Code fork subagent's requests begin with, and a local image
/// a session names by path. `preview --out` and `check --out` at either are
/// refused, and the file is unchanged. Before, both were overwritten.
#[test]
fn outputs_never_name_a_forks_parent_or_a_file_the_session_names() {
    let dir = tempfile::tempdir().unwrap();
    let layouts =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/claude-code/layouts/fork-subagent");
    let copy = dir.path().join("fork-subagent");
    let status = std::process::Command::new("cp").arg("-r").arg(&layouts).arg(&copy).status().unwrap();
    assert!(status.success());
    let parent = copy.join("2e8782ef-6549-4a76-99f7-7cc10b5c8426.jsonl");
    let fork = copy.join("2e8782ef-6549-4a76-99f7-7cc10b5c8426/subagents/agent-af85ca60d8988bc98.jsonl");
    let before = std::fs::read(&parent).unwrap();
    for cmd in ["preview", "check"] {
        let out = common::run(&[cmd, fork.to_str().unwrap(), "--out", parent.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read(&parent).unwrap(), before, "{cmd} wrote over the fork's parent");
    }
    let image = dir.path().join("local.png");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\n").unwrap();
    let line = serde_json::json!({"model":"gpt-4o","messages":[{"role":"user","content":[
        {"type":"image_url","image_url":{"url":image.to_str().unwrap()}}]}]});
    let session = dir.path().join("s.jsonl");
    std::fs::write(&session, format!("{line}\n")).unwrap();
    let out = common::run(&["preview", session.to_str().unwrap(), "--out", image.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&image).unwrap(), b"\x89PNG\r\n\x1a\n");
}
