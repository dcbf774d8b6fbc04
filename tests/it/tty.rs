//! The binary on a real terminal: a pseudo-terminal 80 columns wide (rustix, no
//! system tool), as a user sees it. No row may be wider than the terminal (a
//! wrapped row is what the box-drawn table used to print), colour must be there
//! on a terminal and gone under `NO_COLOR`.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// Runs the binary with stdout and stderr on a pseudo-terminal of `cols` columns
/// (0: one that reports no size) and returns what it printed, `\r\n` made `\n`.
fn on_tty(cols: u16, args: &[&str], env: &[(&str, &str)]) -> String {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).expect("openpt");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let slave = File::options().read(true).write(true).open(name.to_str().expect("utf-8")).expect("open the pty");
    tcsetwinsize(&slave, Winsize { ws_row: if cols == 0 { 0 } else { 24 }, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 })
        .expect("window size");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_session-doctor"));
    cmd.args(args).current_dir(env!("CARGO_MANIFEST_DIR")).stdin(Stdio::null());
    cmd.stdout(slave.try_clone().expect("dup")).stderr(slave);
    for var in ["NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "COLUMNS"] {
        cmd.env_remove(var);
    }
    cmd.env("TERM", "xterm-256color").envs(env.iter().copied());
    let mut child = cmd.spawn().expect("spawns");
    drop(cmd); // our copies of the terminal's slave side: EOF once the child is done
    let mut out = Vec::new();
    let mut master = File::from(master);
    let mut buf = [0; 8192];
    // Linux answers EIO on the master once every slave descriptor is closed.
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    child.wait().expect("waits");
    String::from_utf8_lossy(&out).replace("\r\n", "\n")
}

/// Display columns, not counting colour sequences.
fn width(line: &str) -> usize {
    let mut plain = String::new();
    let mut rest = line;
    while let Some(i) = rest.find('\u{1b}') {
        plain.push_str(&rest[..i]);
        rest = rest[i..].find('m').map_or("", |e| &rest[i + e + 1..]);
    }
    plain.push_str(rest);
    plain.chars().count()
}

fn samples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("samples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| format!("samples/{}", p.file_name().unwrap_or_default().to_string_lossy()))
        .collect();
    files.sort();
    files
}

fn scan_args() -> Vec<String> {
    let mut args = vec!["scan".to_string()];
    args.extend(samples());
    args
}

#[test]
fn no_row_is_wider_than_an_80_column_terminal() {
    let args = scan_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = on_tty(80, &args, &[]);
    assert!(out.contains("INVALID"), "{out}");
    for line in out.lines() {
        assert!(width(line) <= 80, "{} columns: {line:?}\n{out}", width(line));
        assert_eq!(line, line.trim_end(), "trailing spaces");
    }
    // Colour on a terminal: INVALID in red bold.
    assert!(out.contains("\u{1b}[1m\u{1b}[31mINVALID\u{1b}[0m"), "{out:?}");
    // Cut names keep their end, where the file name is.
    assert!(out.contains("…") && out.contains("diagram.png"), "{out}");
}

#[test]
fn no_colour_escapes_under_no_color() {
    let args = scan_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = on_tty(80, &args, &[("NO_COLOR", "1")]);
    assert!(out.contains("INVALID"), "{out}");
    assert!(!out.contains('\u{1b}'), "{out:?}");
    let help = on_tty(80, &["scan", "--help"], &[("NO_COLOR", "1")]);
    assert!(help.contains("Examples:") && !help.contains('\u{1b}'), "{help:?}");
}

#[test]
fn a_terminal_without_a_size_is_taken_as_80_columns() {
    let out = on_tty(0, &["scan", "samples/claude-code.jsonl"], &[("NO_COLOR", "1")]);
    let header = out.lines().find(|l| l.starts_with("ref")).unwrap_or_default();
    assert!(header.starts_with("ref   origin     name"), "columns must not collapse:\n{out}");
    assert!(out.lines().all(|l| width(l) <= 80), "{out}");
}

/// Issue 18 item 14: diagnose's header, verdict, failure lines and notes, and
/// scan's header, wrap at spaces to the terminal as the tables are fitted to it.
#[test]
fn prose_wraps_at_spaces_to_a_narrow_terminal() {
    for cols in [60u16, 80] {
        for args in [
            vec!["diagnose", "samples/claude-code.jsonl"],
            vec!["diagnose", "samples/codex.jsonl"],
            vec!["scan", "samples/claude-code.jsonl"],
        ] {
            let out = on_tty(cols, &args, &[("NO_COLOR", "1")]);
            for line in out.lines() {
                // Only a word longer than a line (after its label) may stick out: it is never
                // cut; nor is a command to run, which must stay whole to be copied.
                let one_word = line.split_whitespace().count() <= 2 || line.starts_with("  session-doctor ");
                assert!(
                    width(line) <= usize::from(cols) || one_word,
                    "{args:?} at {cols}: {} columns: {line:?}\n{out}",
                    width(line)
                );
            }
        }
    }
    // A wrapped note continues under its value column.
    let out = on_tty(60, &["diagnose", "samples/claude-code.jsonl"], &[("NO_COLOR", "1")]);
    let note = out.lines().position(|l| l.starts_with("note      suspects are")).expect("the note");
    assert!(out.lines().nth(note + 1).is_some_and(|l| l.starts_with("          ") && !l.trim().is_empty()), "{out}");
}

/// The README's example at 80 columns (the block after its `80-column` marker)
/// is what the binary prints on an 80-column terminal.
#[test]
fn the_readme_80_column_example_is_what_a_terminal_shows() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README");
    let block = (readme.split("80-column terminal; tests/it/tty.rs checks the fitting) -->\n```console\n").nth(1))
        .and_then(|b| b.split("```\n").next())
        .expect("the README's 80-column block");
    let (command, want) = block.split_once('\n').expect("a command and its output");
    let args: Vec<&str> =
        command.strip_prefix("$ session-doctor ").expect("a session-doctor command").split(' ').collect();
    let got = on_tty(80, &args, &[("NO_COLOR", "1")]);
    assert_eq!(got.trim_end(), want.trim_end(), "README.md's 80-column example is stale");
}

#[test]
fn json_on_a_terminal_spells_the_characters_a_terminal_acts_on_as_escapes() {
    // A bidi override and an 8-bit CSI in a path the session holds: legal
    // unescaped JSON, but they reorder or drive a terminal.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("s.jsonl");
    let line = serde_json::json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","isSidechain":false,
        "message":{"role":"user","content":[{"type":"text","text":"see /tmp/a\u{202e}gnp.txt \u{9b}31m"}]}});
    std::fs::write(&file, format!("{line}\n")).expect("write");
    for args in [vec!["preview", file.to_str().unwrap()], vec!["scan", "--json", file.to_str().unwrap()]] {
        let out = on_tty(80, &args, &[]);
        assert!(!out.contains('\u{202e}') && !out.contains('\u{9b}'), "{args:?}: {out:?}");
        if args[0] == "preview" {
            assert!(out.contains("\\u202e") && out.contains("\\u009b"), "{out}");
        }
    }
}
