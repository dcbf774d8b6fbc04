//! Shared helpers for the integration tests: run the binary, hash files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

pub mod media_corpus;
pub mod page;
pub mod wrap;

/// Every `.rs` file under `dir`, in order.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("a source folder") {
            let p = e.expect("a folder entry").path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_session-doctor"))
}

pub fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

/// Runs the binary in `dir` (so that the file names it prints are relative),
/// without colour: its stdout and exit code.
pub fn run_in(dir: &Path, args: &[&str]) -> (String, Option<i32>) {
    let out = bin().current_dir(dir).args(args).env("NO_COLOR", "1").output().expect("the binary runs");
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

/// A new folder holding a copy of `fixture` named `name`.
pub fn copied(fixture: &Path, name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture, dir.path().join(name)).unwrap();
    dir
}

/// Runs the binary with `args`, whose output is JSON: the document and the exit code.
pub fn json_of(args: &[&str]) -> (serde_json::Value, i32) {
    let out = run(args);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().expect("exited"))
}

/// The prime suspects of a `diagnose --json` document, in its order.
pub fn primes(d: &serde_json::Value) -> Vec<&serde_json::Value> {
    d["suspects"].as_array().into_iter().flatten().filter(|s| s["prime"] == true).collect()
}

/// The refs of [`primes`].
pub fn prime_refs(d: &serde_json::Value) -> Vec<&str> {
    primes(d).into_iter().filter_map(|s| s["ref"].as_str()).collect()
}

/// Runs `scan --json` on one file and parses the document.
pub fn scan_json(file: &Path, extra: &[&str]) -> (serde_json::Value, i32) {
    let mut args = vec!["scan", "--json"];
    args.extend_from_slice(extra);
    args.push(file.to_str().expect("utf-8 path"));
    json_of(&args)
}

pub fn sha256_file(p: &Path) -> String {
    let bytes = std::fs::read(p).expect("readable");
    format!("{:x}", Sha256::digest(&bytes))
}

pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// opencode's tables as its drizzle schema declares them (`session.sql.ts`,
/// `project.sql.ts`): `data` holds each object without its ids.
pub const OPENCODE_SCHEMA: &str = "
CREATE TABLE `project` (`id` text PRIMARY KEY NOT NULL, `worktree` text NOT NULL, `vcs` text, `name` text,
  `icon_url` text, `icon_color` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_initialized` integer, `sandboxes` text NOT NULL);
CREATE TABLE `session` (`id` text PRIMARY KEY NOT NULL, `project_id` text NOT NULL, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL,
  `share_url` text, `summary_additions` integer, `summary_deletions` integer, `summary_files` integer,
  `summary_diffs` text, `revert` text, `permission` text, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer,
  FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE cascade);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE TABLE `message` (`id` text PRIMARY KEY NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE cascade);
CREATE INDEX `message_session_idx` ON `message` (`session_id`);
CREATE TABLE `part` (`id` text PRIMARY KEY NOT NULL, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE cascade);
CREATE INDEX `part_message_idx` ON `part` (`message_id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
";

/// Writes a session file `name` into `dir`.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write session");
    p
}

/// Runs `diagnose --json [extra] file`: the report and the exit code.
pub fn diagnose(file: &Path, extra: &[&str]) -> (serde_json::Value, i32) {
    let mut args = vec!["diagnose", "--json"];
    args.extend_from_slice(extra);
    args.push(file.to_str().expect("utf-8"));
    json_of(&args)
}

/// Whether `diagnose --json` of a session whose failure only its overlay's
/// exclusions answer says what is true (issue 36, item 1): the agent, which
/// never reads the overlay, is stuck until it resumes the repaired copy, and
/// `repair` is the one thing to run.
pub fn stuck_until_repaired(d: &serde_json::Value, code: i32) -> Result<(), String> {
    let next: Vec<&str> =
        d["next"].as_array().map(|n| n.iter().filter_map(|c| c.as_str()).collect()).unwrap_or_default();
    let verdict = d["verdict"].as_str().unwrap_or("");
    let ok = code == 1
        && d["stuck"] == true
        && verdict.starts_with("stuck for the agent")
        && next.len() == 1
        && next[0].starts_with("session-doctor repair ");
    if ok { Ok(()) } else { Err(format!("exit {code}: {verdict}; next {next:?}; suspects {}", d["suspects"])) }
}

/// Does the file `name` end in `.ext`, in any case (`a.jsonl`, `A.JSONL`)?
pub fn has_extension(name: impl AsRef<Path>, ext: &str) -> bool {
    name.as_ref().extension().is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// A Claude Code session whose `tool_use` has no result, and the 400 Anthropic
/// answers that history with.
pub const CLAUDE_UNANSWERED_CALL: &str = concat!(
    r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"2a0e2d3c","timestamp":"2026-08-01T10:00:00.000Z","message":{"role":"user","content":"list the files"}}"#,
    "\n",
    r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"2a0e2d3c","timestamp":"2026-08-01T10:00:01.000Z","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"toolu_01XFDUDYJgAACzvnptvVer6u","name":"Bash","input":{"command":"ls"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}}"#,
    "\n",
    r#"{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"2a0e2d3c","timestamp":"2026-08-01T10:00:05.000Z","message":{"role":"user","content":"go on"}}"#,
    "\n",
    r#"{"type":"assistant","uuid":"e1","parentUuid":"u2","sessionId":"2a0e2d3c","timestamp":"2026-08-01T10:00:06.000Z","isApiErrorMessage":true,"error":"invalid_request","message":{"id":"e1","type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: 400 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01XFDUDYJgAACzvnptvVer6u. Each `tool_use` block must have a corresponding `tool_result` block in the next message.\"}}"}],"stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}}}"#,
    "\n",
);
