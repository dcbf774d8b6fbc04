//! `sessions` and `discover`: every agent's store under a fake home, never the real one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use session_doctor::discover::{self, Env};

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)).expect("sample")
}

/// Writes `bytes` at `home/rel`, modified `age_min` minutes ago.
fn put(home: &Path, rel: &str, bytes: &[u8], age_min: u64) -> PathBuf {
    let path = home.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, bytes).expect("write");
    let when = SystemTime::now() - Duration::from_secs(age_min * 60);
    std::fs::File::options().write(true).open(&path).and_then(|f| f.set_modified(when)).expect("set mtime");
    path
}

/// A fake home with one session per agent, newest first in this order:
/// opencode db, mux (healthy), gemini-cli, pi (unreadable), codex, claude-code (twice: a cut PNG, an unanswered tool call), copilot, cline, kilo db, qwen-code.
fn fake_home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    let mux = String::from_utf8(sample("mux.jsonl")).expect("utf-8");
    // The pasted screenshot alone, before anything failed.
    let healthy: Vec<&str> = mux.lines().take(1).collect();
    put(home, ".local/share/opencode/opencode.db", b"SQLite format 3\0", 1);
    put(home, ".mux/sessions/ws-1/chat.jsonl", format!("{}\n", healthy.join("\n")).as_bytes(), 2);
    put(home, ".mux/sessions/ws-1/partial.json", b"{}", 2);
    put(home, ".gemini/tmp/0a1b/chats/session-2026-08-01T10-00-1f0e2d3c.jsonl", &sample("gemini-cli.jsonl"), 3);
    // Compressed: scan refuses it (exit 2), so it is unreadable.
    put(home, ".pi/agent/sessions/--home-dev-shop--/2026-08-01T10-00-00-000Z_1f0e.jsonl", b"\x1f\x8b\x08\x00\x00", 4);
    put(home, ".codex/sessions/2026/08/01/rollout-2026-08-01T10-00-00-1f0e.jsonl", &sample("codex.jsonl"), 5);
    put(home, ".claude/projects/-home-dev-shop/1f0e2d3c.jsonl", &sample("claude-code.jsonl"), 6);
    // No media at all, so `scan` finds nothing wrong; the provider refused its
    // history, and every retry sends it again (issue 36, item 2).
    put(home, ".claude/projects/-home-dev-shop/2a0e2d3c.jsonl", crate::common::CLAUDE_UNANSWERED_CALL.as_bytes(), 6);
    put(home, ".copilot/session-state/77ee96c5-e46b-4f2b-8874-8b5c969c004b/events.jsonl", &sample("copilot.jsonl"), 7);
    let cline = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/agents/cline/stuck/1796121856311_l5u09/1796121856311_l5u09.messages.json"),
    )
    .expect("cline fixture");
    put(home, ".cline/data/sessions/1796121856311_l5u09/1796121856311_l5u09.messages.json", &cline, 8);
    put(home, ".local/share/kilo/kilo.db", b"SQLite format 3\0", 9);
    put(
        home,
        ".qwen/projects/-tmp-sd-qwen-code-i73t-5df-work/chats/a8383ef4-f550-4f0b-b924-27d5d81bf89b.jsonl",
        &qwen(),
        10,
    );
    // Not sessions: a subagent transcript, a Codex index, a note beside the store.
    put(home, ".claude/projects/-home-dev-shop/1f0e2d3c/subagents/agent-1.jsonl", &sample("claude-code.jsonl"), 0);
    put(home, ".codex/session_index.jsonl", b"{}\n", 0);
    dir
}

/// Qwen Code's session stuck on an image route's 404 (tests/data/agents/qwen-code).
fn qwen() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/agents/qwen-code/image-route-404/a8383ef4-f550-4f0b-b924-27d5d81bf89b.jsonl"),
    )
    .expect("qwen-code fixture")
}

fn env(home: &Path) -> Env {
    Env { home: home.to_path_buf(), ..Env::default() }
}

fn bin(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_session-doctor"));
    cmd.env("HOME", home);
    for var in discover::VARS {
        cmd.env_remove(var);
    }
    cmd
}

#[test]
fn every_agent_is_found_newest_first() {
    let home = fake_home();
    let found = discover::find(&env(home.path()), None);
    let agents: Vec<&str> = found.iter().map(|f| f.agent).collect();
    assert_eq!(
        agents,
        [
            "opencode",
            "mux",
            "gemini-cli",
            "pi",
            "codex",
            "claude-code",
            "claude-code",
            "copilot",
            "cline",
            "kilo",
            "qwen-code"
        ],
        "{found:#?}"
    );
    assert!(found[0].format.is_none(), "opencode's database is not read");
    assert_eq!(found[1].bytes, std::fs::metadata(&found[1].path).expect("meta").len());
}

#[test]
fn the_latest_session_is_the_newest_readable_one() {
    let home = fake_home();
    let e = env(home.path());
    let latest = discover::latest_in(&e, None).expect("found");
    assert!(latest.ends_with(".mux/sessions/ws-1/chat.jsonl"), "{}", latest.display());
    let codex = discover::latest_in(&e, Some("codex")).expect("found");
    assert!(codex.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rollout-")));
    assert_eq!(
        discover::latest_in(&e, Some("claude")),
        discover::find(&e, Some("claude-code")).into_iter().next().map(|f| f.path)
    );
    assert_eq!(discover::latest_in(&env(&home.path().join("empty")), None), None);
}

#[test]
fn environment_variables_move_the_stores() {
    let home = fake_home();
    let alt = home.path().join("elsewhere");
    put(&alt, "projects/-p/s.jsonl", &sample("claude-code.jsonl"), 0);
    let mut e = env(home.path());
    e.vars.insert("CLAUDE_CONFIG_DIR".into(), alt.clone().into_os_string());
    let claude = discover::find(&e, Some("claude-code"));
    assert_eq!(claude.len(), 1, "only the configured dir: {claude:#?}");
    assert!(claude[0].path.starts_with(&alt));
    // Qwen Code: $QWEN_RUNTIME_DIR before $QWEN_HOME before ~/.qwen.
    let (runtime, qhome) = (home.path().join("runtime"), home.path().join("qhome"));
    put(&runtime, "projects/-p/chats/r.jsonl", &qwen(), 0);
    put(&qhome, "projects/-p/chats/h.jsonl", &qwen(), 0);
    let mut e = env(home.path());
    e.vars.insert("QWEN_HOME".into(), qhome.clone().into_os_string());
    let found = discover::find(&e, Some("qwen-code"));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].path.starts_with(&qhome));
    e.vars.insert("QWEN_RUNTIME_DIR".into(), runtime.clone().into_os_string());
    let found = discover::find(&e, Some("qwen-code"));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].path.starts_with(&runtime));
}

#[test]
fn sessions_lists_health_and_json() {
    let home = fake_home();
    let out = bin(home.path()).args(["sessions", "--json", "--limit", "20"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = v.as_array().expect("array");
    let health: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["agent"].as_str().unwrap_or(""), r["health"].as_str().unwrap_or(""))).collect();
    assert_eq!(
        health,
        [
            ("opencode", "not_read"),
            ("mux", "ok"),
            ("gemini-cli", "stuck"),
            ("pi", "unreadable"),
            ("codex", "stuck"),
            ("claude-code", "stuck"),
            ("claude-code", "stuck"),
            // Copilot CLI retried without the cut PNG and got an answer; the PNG stays.
            ("copilot", "problems"),
            ("cline", "stuck"),
            ("kilo", "not_read"),
            ("qwen-code", "stuck")
        ]
    );
    // The column is diagnose's verdict: a row is stuck exactly where diagnose exits 1.
    for row in rows.iter().filter(|r| r["format"].is_string() && r["health"] != "unreadable") {
        let path = row["path"].as_str().expect("path");
        let code = bin(home.path()).args(["diagnose", path]).output().expect("runs").status.code();
        assert_eq!(code == Some(1), row["health"] == "stuck", "{row:#}");
    }
    assert!(rows[1]["modified"].as_str().is_some_and(|m| m.ends_with('Z') && m.len() == 20), "{:#}", rows[1]);
    assert_eq!(rows[1]["format"], "mux");

    let limited = bin(home.path()).args(["sessions", "--agent", "codex", "--limit", "1"]).output().expect("runs");
    let text = String::from_utf8_lossy(&limited.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("agent") && lines[0].contains("health"), "{text}");
    assert!(lines[1].starts_with("codex") && lines[1].contains("stuck"), "{text}");
    assert!(lines[1].contains("~/.codex/sessions/2026/08/01/rollout-"), "{text}");

    // `--limit 0` listed nothing and said "No sessions found" with sessions present.
    let none = bin(home.path()).args(["sessions", "--limit", "0"]).output().expect("runs");
    assert_eq!(none.status.code(), Some(2));
    assert!(none.stdout.is_empty(), "{}", String::from_utf8_lossy(&none.stdout));
    assert!(
        String::from_utf8_lossy(&none.stderr)
            .contains("invalid value '0' for '--limit <N>': 0 lists no session: give 1 or more"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
}

#[test]
fn an_empty_home_says_where_it_looked() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = bin(home.path()).arg("sessions").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("No sessions found. Looked in:\n") && text.contains("~/.codex/sessions"), "{text}");
}
