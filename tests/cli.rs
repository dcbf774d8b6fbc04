//! The CLI definition and its docs: clap's own consistency checks, and the man
//! page in `man/` kept in step with `--help`.

use clap::CommandFactory as _;
use session_doctor::cli::Cli;

#[test]
fn clap_definition_is_consistent() {
    Cli::command().debug_assert();
}

/// One page for the tool and one per subcommand, as `man session-doctor-scan`.
fn pages() -> Vec<(String, clap::Command)> {
    let top = Cli::command();
    let mut pages = vec![("session-doctor".to_string(), top.clone())];
    for sub in top.get_subcommands() {
        // clap names are &'static str without its `string` feature; a test may leak two.
        let name: &'static str = Box::leak(format!("session-doctor-{}", sub.get_name()).into_boxed_str());
        let version: &'static str = Box::leak(top.get_version().unwrap_or_default().to_string().into_boxed_str());
        pages.push((name.to_string(), sub.clone().name(name).version(version)));
    }
    pages
}

#[test]
fn man_pages_are_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    for (name, cmd) in pages() {
        let mut rendered = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut rendered).expect("renders");
        let path = dir.join(format!("{name}.1"));
        if std::env::var_os("UPDATE_MAN").is_some() {
            std::fs::write(&path, &rendered).expect("write man page");
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(committed == rendered, "man/{name}.1 is stale: run `UPDATE_MAN=1 cargo test --test cli`");
    }
}

#[test]
fn help_names_every_command() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_session-doctor")).arg("--help").output().expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    for cmd in ["scan", "diagnose", "exclude", "classify"] {
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
