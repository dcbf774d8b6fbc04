//! `guard install` / `guard uninstall` for the agents past Claude Code, pi and
//! opencode (issue 40, item 1): Gemini CLI's `BeforeTool` hook in its
//! settings.json, merged by byte range and taken out the same way, Cline's
//! `PreToolUse` hook file, and the hooks' answers in each agent's protocol.
//! Claude Code's uninstall too.

use crate::common;
use crate::common::media_corpus;

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

fn sd(home: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = common::bin()
        .arg("guard")
        .args(args)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("HOME", home)
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Settings as Gemini CLI's own docs write them: two-space indents, the user's
/// own hook for another tool, keys in the user's order.
const GEMINI_SETTINGS: &str = r#"{
  "security": {
    "auth": {
      "selectedType": "gemini-api-key"
    }
  },
  "model": { "name": "gemini-2.5-flash" },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "write_file",
        "hooks": [{ "type": "command", "command": "./audit.sh", "timeout": 5000 }]
      }
    ]
  }
}
"#;

#[test]
fn gemini_cli_install_merges_by_byte_range_keeps_the_mode_and_is_idempotent() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    std::fs::write(&settings, GEMINI_SETTINGS).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).unwrap();

    let (code, out, _) = sd(home.path(), &["install", "gemini-cli", "--dry-run"], "");
    assert_eq!(code, 0, "{out}");
    // The dry run shows the entry as it is written, and writes nothing.
    let shown = out.lines().next().unwrap().split_once("adds to hooks.BeforeTool: ").unwrap().1;
    let shown: Value = serde_json::from_str(shown).unwrap();
    assert!(out.contains("nothing written"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), GEMINI_SETTINGS);

    let (code, _, err) = sd(home.path(), &["install", "gemini-cli"], "");
    assert_eq!(code, 0, "{err}");
    let once = std::fs::read_to_string(&settings).unwrap();
    // Everything before the user's own hook entry's end is as they wrote it.
    let theirs = GEMINI_SETTINGS.find("}]\n      }").unwrap() + "}]\n      }".len();
    assert_eq!(once[..theirs], GEMINI_SETTINGS[..theirs], "{once}");
    let v: Value = serde_json::from_str(&once).unwrap();
    let list = v["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["hooks"][0]["command"], "./audit.sh");
    assert_eq!(list[1], shown, "what the dry run showed is what was written");
    assert_eq!(list[1]["matcher"], "^read_file$");
    let command = list[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(command.ends_with("guard --hook gemini-cli --provider gemini"), "{command}");
    assert_eq!(list[1]["hooks"][0]["timeout"], 60000, "milliseconds, Gemini CLI's unit");
    assert_eq!(mode(&settings), 0o600, "the settings keep their mode");
    let backup = dir.join("settings.json.session-doctor-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), GEMINI_SETTINGS);
    assert_eq!(mode(&backup), 0o600, "so does the backup");

    let (code, out, _) = sd(home.path(), &["install", "gemini-cli"], "");
    assert_eq!(code, 0);
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), once, "a second install changes nothing");

    // Another provider is not "already installed": the entry is replaced where it stands.
    let (code, _, _) = sd(home.path(), &["install", "gemini-cli", "--provider", "vertex-gemini"], "");
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let list = v["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert!(list[1]["hooks"][0]["command"].as_str().unwrap().ends_with("--provider vertex-gemini"));
}

#[test]
fn gemini_cli_uninstall_takes_out_only_the_guard_and_gives_the_file_back() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    // With the user's own hook, and with none: both come back byte for byte.
    let bare = "{\n  \"model\": {\"name\": \"gemini-2.5-pro\"}\n}\n";
    for old in [GEMINI_SETTINGS, bare] {
        std::fs::write(&settings, old).unwrap();
        std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(sd(home.path(), &["install", "gemini-cli"], "").0, 0);
        let installed = std::fs::read_to_string(&settings).unwrap();
        let (code, out, _) = sd(home.path(), &["uninstall", "gemini-cli", "--dry-run"], "");
        assert_eq!(code, 0);
        assert!(out.contains("removes from hooks.BeforeTool") && out.contains("guard --hook gemini-cli"), "{out}");
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed, "--dry-run writes nothing");
        let (code, _, err) = sd(home.path(), &["uninstall", "gemini-cli"], "");
        assert_eq!(code, 0, "{err}");
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), old);
        assert_eq!(mode(&settings), 0o640);
        assert_eq!(std::fs::read_to_string(dir.join("settings.json.session-doctor-backup")).unwrap(), installed);
        let (code, out, _) = sd(home.path(), &["uninstall", "gemini-cli"], "");
        assert_eq!(code, 0);
        assert!(out.contains("not installed"), "{out}");
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), old, "nothing to take out: nothing changes");
    }
    std::fs::write(&settings, "{ \"hooks\": ").unwrap();
    let (code, _, err) = sd(home.path(), &["uninstall", "gemini-cli"], "");
    assert_eq!(code, 2);
    assert!(err.contains("not valid JSON"), "{err}");
}

#[test]
fn claude_code_uninstall_takes_out_the_pre_tool_use_entry() {
    let home = tempfile::tempdir().unwrap();
    let settings = home.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let old = "{\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"audit.sh\"}]}]}\n}\n";
    std::fs::write(&settings, old).unwrap();
    assert_eq!(sd(home.path(), &["install", "claude-code"], "").0, 0);
    assert_ne!(std::fs::read_to_string(&settings).unwrap(), old);
    let (code, _, err) = sd(home.path(), &["uninstall", "claude-code"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), old);
}

#[test]
fn gemini_cli_hook_blocks_a_broken_read_and_hands_over_a_fitted_copy_gemini_can_read() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let png = media_corpus::png(64, 64);
    std::fs::write(work.join("cut.png"), &png[..png.len() - 20]).unwrap();
    std::fs::write(work.join("wide.png"), media_corpus::png(8400, 20)).unwrap();
    std::fs::write(work.join("ok.png"), &png).unwrap();
    let project = home.path().join(".gemini/tmp/work");
    let transcript = project.join("chats/session-2026-12-04T02-00-abcd1234.jsonl");
    let event = |tool: &str, file: &str, transcript: &Path| {
        json!({"session_id": "s", "transcript_path": transcript, "cwd": work, "hook_event_name": "BeforeTool",
               "timestamp": "2026-12-04T02:00:00.000Z", "tool_name": tool,
               "tool_input": {"file_path": file, "start_line": 1}})
        .to_string()
    };
    let hook = ["--hook", "gemini-cli", "--provider", "gemini"];
    let (code, out, _) = sd(home.path(), &hook, &event("read_file", "cut.png", &transcript));
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"], "deny", "{v:#}");
    assert!(v["reason"].as_str().unwrap().contains("cut.png was not read"), "{v:#}");

    // 8400 px passes Gemini; Anthropic's limits make it oversized.
    let anthropic = ["--hook", "gemini-cli", "--provider", "anthropic"];
    let (_, out, _) = sd(home.path(), &anthropic, &event("read_file", "wide.png", &transcript));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("decision").is_none(), "the input changes, the policy stays Gemini CLI's: {v:#}");
    let input = &v["hookSpecificOutput"]["tool_input"];
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "BeforeTool");
    assert_eq!(input["start_line"], 1, "the other arguments are kept");
    let copy = Path::new(input["file_path"].as_str().unwrap());
    assert!(copy.starts_with(project.join("session-doctor/fitted")), "where Gemini CLI reads: {}", copy.display());
    assert_eq!((mode(copy), mode(copy.parent().unwrap())), (0o600, 0o700));

    // No transcript to place the copy by: denied, the copy named.
    let (_, out, _) = sd(home.path(), &anthropic, &event("read_file", "wide.png", Path::new("")));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"], "deny");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains(home.path().join("cache/session-doctor/fitted").to_str().unwrap()), "{reason}");

    for (tool, file) in [("read_file", "ok.png"), ("write_file", "cut.png"), ("read_file", "missing.png")] {
        let (code, out, _) = sd(home.path(), &hook, &event(tool, file, &transcript));
        assert_eq!((code, out.as_str()), (0, ""), "{tool} {file}");
    }
    let (code, out, err) = sd(home.path(), &hook, "not json");
    assert_eq!((code, out.as_str()), (0, ""), "fails open");
    assert!(err.contains("unguarded"), "{err}");
}

#[test]
fn cline_install_writes_an_executable_hook_once_never_over_the_users_own() {
    let home = tempfile::tempdir().unwrap();
    let hook = home.path().join(".cline/hooks/PreToolUse");
    let (code, out, _) = sd(home.path(), &["install", "cline", "--dry-run"], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing written") && !hook.exists(), "--dry-run writes nothing: {out}");
    let (code, _, err) = sd(home.path(), &["install", "cline", "--provider", "openai"], "");
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&hook).unwrap();
    assert!(text.starts_with("#!/bin/sh\n"), "{text}");
    assert!(text.trim_end().ends_with("guard --hook cline --provider openai"), "{text}");
    assert_eq!(mode(&hook) & 0o100, 0o100, "Cline runs it as a program");
    let (code, out, _) = sd(home.path(), &["install", "cline", "--provider", "openai"], "");
    assert_eq!(code, 0);
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), text);

    let (code, _, _) = sd(home.path(), &["uninstall", "cline", "--dry-run"], "");
    assert_eq!(code, 0);
    assert!(hook.exists(), "--dry-run removes nothing");
    let (code, _, err) = sd(home.path(), &["uninstall", "cline"], "");
    assert_eq!(code, 0, "{err}");
    assert!(!hook.exists());
    let backup = home.path().join(".cline/hooks/PreToolUse.session-doctor-backup");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), text);

    // A hook of the user's own is neither replaced nor removed.
    let mine = "#!/bin/sh\necho '{}'\n";
    std::fs::write(&hook, mine).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (code, _, err) = sd(home.path(), &["install", "cline"], "");
    assert_eq!(code, 2);
    assert!(err.contains("of your own"), "{err}");
    let (code, out, _) = sd(home.path(), &["uninstall", "cline"], "");
    assert_eq!(code, 0);
    assert!(out.contains("not installed"), "{out}");
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), mine);
    assert_eq!(mode(&hook), 0o700);
}

#[test]
fn cline_hook_swaps_a_broken_file_for_a_note_and_an_oversized_one_for_its_fitted_copy() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let png = media_corpus::png(64, 64);
    std::fs::write(work.join("cut.png"), &png[..png.len() - 20]).unwrap();
    std::fs::write(work.join("wide.png"), media_corpus::png(8400, 20)).unwrap();
    std::fs::write(work.join("ok.png"), &png).unwrap();
    std::fs::write(work.join("notes.txt"), "hello").unwrap();
    let event = |tool: &str, files: Value| {
        json!({"clineVersion": "", "hookName": "tool_call", "workspaceRoots": [work],
               "tool_call": {"id": "call_1", "name": tool, "input": {"files": files}},
               "preToolUse": {"toolName": tool, "parameters": {}}})
        .to_string()
    };
    let hook = ["--hook", "cline", "--provider", "anthropic"];
    let files =
        json!([{"path": "notes.txt"}, {"path": "cut.png"}, {"path": "wide.png", "start_line": 1}, {"path": "ok.png"}]);
    let (code, out, _) = sd(home.path(), &hook, &event("read_files", files));
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("cancel").is_none(), "cancel would end Cline's whole run: {v:#}");
    let got = v["overrideInput"]["files"].as_array().unwrap();
    assert_eq!(got.len(), 4);
    assert_eq!(got[0]["path"], "notes.txt", "what passes is left as it was");
    assert_eq!(got[3]["path"], "ok.png");
    let note = Path::new(got[1]["path"].as_str().unwrap());
    let text = std::fs::read_to_string(note).unwrap();
    assert!(text.contains("session-doctor guard") && text.contains("cut.png was not read"), "{text}");
    assert_eq!(mode(note), 0o600, "the note is private");
    let copy = Path::new(got[2]["path"].as_str().unwrap());
    assert!(copy.starts_with(home.path().join("cache/session-doctor/fitted")), "{}", copy.display());
    assert_eq!(got[2]["start_line"], 1, "the other arguments are kept");

    for (tool, files) in [("read_files", json!([{"path": "ok.png"}])), ("write_to_file", json!([{"path": "cut.png"}]))]
    {
        let (code, out, _) = sd(home.path(), &hook, &event(tool, files));
        assert_eq!((code, out.as_str()), (0, ""), "{tool}");
    }
    let (code, out, _) = sd(home.path(), &hook, "not json");
    assert_eq!((code, out.as_str()), (0, ""), "fails open");
}
