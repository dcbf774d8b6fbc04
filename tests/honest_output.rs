//! Issue 18, "Output that misleads or breaks": every line the binary prints is
//! a claim about the file, and every command it suggests must run. One test per
//! case a newcomer found untrue.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{bin, sample};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the binary in `dir` with `stdin` piped in.
fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write as _;
    let mut child = bin()
        .args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    if let Some(bytes) = stdin {
        child.stdin.take().expect("stdin").write_all(bytes).expect("writes stdin");
    }
    child.wait_with_output().expect("waits")
}

/// The commands under `next:` in a human report.
fn next_commands(report: &str) -> Vec<String> {
    report
        .lines()
        .skip_while(|l| *l != "next:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Runs `command` as a user would paste it: in a POSIX shell, in `dir`, with
/// this build of session-doctor first on the PATH.
fn shell(dir: &Path, command: &str) -> Output {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_session-doctor")).parent().expect("bin dir").to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    Command::new("sh").arg("-c").arg(command).current_dir(dir).env("PATH", path).output().expect("sh runs")
}

// ---- 8. Next commands that cannot run ----------------------------------------

#[test]
fn diagnose_of_stdin_suggests_commands_on_a_saved_file_and_says_how() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = std::fs::read(sample("claude-code.jsonl")).expect("sample");
    let out = run_in(dir.path(), &["diagnose", "-"], Some(&bytes));
    let report = text(&out.stdout);
    let next = next_commands(&report);
    assert!(!next.is_empty(), "{report}");
    assert!(next.iter().all(|c| !c.contains(" - ") && !c.ends_with(" -")), "a command reads stdin again: {next:?}");
    assert!(report.contains("save the same bytes to session.jsonl first"), "{report}");
    // Done as the note says, every next command runs.
    std::fs::write(dir.path().join("session.jsonl"), &bytes).expect("saved");
    for c in &next {
        let ran = shell(dir.path(), c);
        assert_eq!(ran.status.code(), Some(0), "{c}: {}", text(&ran.stderr));
    }
}

#[test]
fn a_next_command_names_the_real_file_even_with_controls_in_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = "it's \u{1b}[31mred.jsonl";
    std::fs::copy(sample("claude-code.jsonl"), dir.path().join(name)).expect("copy");
    let out = run_in(dir.path(), &["diagnose", name], None);
    let report = text(&out.stdout);
    assert!(!report.contains('\u{1b}'), "a raw escape reached the terminal: {report:?}");
    let next = next_commands(&report);
    assert_eq!(next.len(), 2, "{report}");
    for c in &next {
        assert!(!c.contains("\\u{1b}"), "the command names an escaped, other file: {c}");
        let ran = shell(dir.path(), c);
        assert_eq!(ran.status.code(), Some(0), "{c}: {}", text(&ran.stderr));
    }
    // The exclusion landed beside the real file, and the repaired copy exists.
    assert!(dir.path().join(format!("{name}.doctor")).exists());
}
