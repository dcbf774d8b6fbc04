//! The CLI definition: clap's own consistency checks and the process-level contract
//! (the man pages are checked in `tests/it/man.rs`).

use clap::CommandFactory as _;
use session_doctor::cli::Cli;

#[test]
fn clap_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn help_names_every_command() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_session-doctor")).arg("--help").output().expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    for cmd in ["scan", "diagnose", "exclude", "classify", "sessions", "completions"] {
        assert!(help.contains(cmd), "{cmd} missing from --help:\n{help}");
    }
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    use std::process::{Command, Stdio};
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/claude-code.jsonl");
    // Far more output than a pipe buffers, to a reader that has gone away.
    let args: Vec<_> = std::iter::repeat_n(sample.as_os_str(), 400).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_session-doctor"))
        .arg("scan")
        .arg("--json")
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("waits");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn help_into_a_closed_pipe_is_not_an_error() {
    // `session-doctor exclude --help | head -1`: the reader is gone before the examples are written.
    for args in [&["exclude", "--help"][..], &["--help"], &["help", "repair"]] {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = bin().args(args).stdout(writer).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// `classify` printed with `println!`, which panics on a closed pipe
/// (`classify --json … | head -c 400`).
#[test]
fn classify_into_a_closed_pipe_is_not_an_error() {
    for args in [&["classify", "--json", "Could not process image"][..], &["classify", "Could not process image"]] {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = bin().args(args).stdout(writer).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_session-doctor"))
}

fn sample(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

/// Runs the binary with `stdin` piped in.
fn run_with_stdin(args: &[&str], stdin: &[u8]) -> std::process::Output {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child =
        bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawns");
    child.stdin.take().expect("stdin").write_all(stdin).expect("writes stdin");
    child.wait_with_output().expect("waits")
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = bin().args(["completions", shell]).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains("session-doctor") && script.contains("classify"), "{shell}:\n{script}");
    }
    let out = bin().args(["completions", "tcsh"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_dash_reads_the_session_from_stdin() {
    let session = std::fs::read(sample("pi.jsonl")).expect("sample");
    let out = run_with_stdin(&["scan", "--json", "-"], &session);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["file"], "<stdin>");
    assert_eq!(doc["format"], "pi");
    assert_eq!(doc["attachments"].as_array().map(Vec::len), Some(2));
    let human = run_with_stdin(&["scan", "-"], &session);
    assert!(String::from_utf8_lossy(&human.stdout).starts_with("<stdin>: pi (detected), 6 lines, 4 entries"));
}

#[test]
fn json_over_several_files_keeps_the_unreadable_ones_as_errors() {
    let pi = sample("pi.jsonl");
    let out =
        bin().args(["scan", "--json", "/nonexistent/a.jsonl"]).arg(&pi).args(["--ref", "L3.1"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let docs: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let docs = docs.as_array().expect("array");
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["file"], "/nonexistent/a.jsonl");
    assert!(docs[0]["error"].as_str().is_some_and(|e| e.contains("/nonexistent/a.jsonl")), "{:#}", docs[0]);
    assert_eq!(docs[1]["attachments"].as_array().map(Vec::len), Some(1));
}

#[test]
fn a_skipped_unreadable_line_exits_1() {
    let mut session = std::fs::read(sample("mux.jsonl")).expect("sample");
    // Keep the healthy attachment, drop the invalid one, and cut a last line short.
    let text = String::from_utf8(session.clone()).expect("utf-8");
    let healthy: Vec<&str> = text.lines().filter(|l| !l.contains("layout-diagram")).collect();
    session = format!("{}\n{{\"id\":\"cut", healthy.join("\n")).into_bytes();
    let out = run_with_stdin(&["scan", "--json", "-"], &session);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(doc["attachments"].as_array().expect("array").iter().all(|a| a["verdict"] == "ok"), "{doc:#}");
    assert!(doc["findings"].as_array().expect("array").iter().any(|f| f["severity"] == "error"), "{doc:#}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn zero_threads_is_a_usage_error() {
    let out = bin().args(["scan", "-j", "0"]).arg(sample("pi.jsonl")).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 1"));
}

#[test]
fn plain_output_has_plurals_and_no_trailing_spaces() {
    let out = bin().args(["scan", "--color", "never"]).arg(sample("codex.jsonl")).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(", 9 lines, 5 entries, 2 attachments,"), "{text}");
    assert!(text.lines().all(|l| l == l.trim_end()), "{text:?}");
    assert!(!text.contains('\u{1b}'));
    // Piped output is never cut: the full path is there.
    assert!(text.contains("/home/dev/shop/tmp/layout-diagram.png"));
    let forced = bin().args(["scan", "--color", "always"]).arg(sample("codex.jsonl")).output().expect("runs");
    assert!(String::from_utf8_lossy(&forced.stdout).contains("\u{1b}[1m\u{1b}[31mINVALID\u{1b}[0m"));
}

#[test]
fn classify_reads_a_file_it_is_given() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("error.json");
    std::fs::write(
        &path,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"Could not process image"}}"#,
    )
    .expect("write");
    let out = bin().args(["classify", "--json"]).arg(&path).output().expect("runs");
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(c["class"], "media_rejected", "{c:#}");
}

/// `preview -`, `repair -` and `exclude -` said "opening -: No such file or
/// directory": they do not read stdin, and say so.
#[test]
fn commands_that_write_beside_a_file_say_they_do_not_read_stdin() {
    for args in [&["preview", "-"][..], &["repair", "-"], &["exclude", "-", "--suspects"]] {
        let out = crate::common::run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "session-doctor: this command does not read stdin ('-'): its overlay and copies sit beside the \
             session's file; save the session to a file and name that (diagnose and scan read stdin)\n",
            "{args:?}"
        );
    }
}
