//! The CLI definition: clap's own consistency checks and the process-level contract
//! (the man pages are checked in `tests/man.rs`).

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
    for cmd in ["scan", "classify"] {
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
