//! `session-doctor guard`: a broken file is denied, an oversized one fitted,
//! a valid one passes, in the CLI's own form and in Claude Code's hook protocol;
//! `guard install` merges into the user's settings and is idempotent.

use crate::common;
use crate::common::media_corpus;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use session_doctor::media::{Depth, Facts, Verdict};

fn guard(cache: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    guard_bytes(cache, args, stdin.unwrap_or("").as_bytes())
}

fn guard_bytes(cache: &Path, args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut cmd = common::bin();
    cmd.arg("guard")
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn files_are_denied_fitted_or_passed_and_the_fitted_copy_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.png");
    let cut = dir.path().join("cut.png");
    let wide = dir.path().join("wide.png");
    let text = dir.path().join("notes.txt");
    std::fs::write(&good, media_corpus::png(40, 30)).unwrap();
    let png = media_corpus::png(64, 64);
    std::fs::write(&cut, &png[..png.len() - 20]).unwrap();
    // Anthropic refuses a side over 8000 px.
    std::fs::write(&wide, media_corpus::png(8400, 20)).unwrap();
    std::fs::write(&text, "hello").unwrap();
    let cache = dir.path().join("cache");
    let paths: Vec<&str> = [&good, &cut, &wide, &text].iter().map(|p| p.to_str().unwrap()).collect();
    let mut args = vec!["--json"];
    args.extend(&paths);
    let (code, out, err) = guard(&cache, &args, None);
    assert_eq!(code, 1, "a denied file exits 1: {err}");
    let rows: Value = serde_json::from_str(&out).unwrap();
    let decisions: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["decision"].as_str().unwrap()).collect();
    assert_eq!(decisions, ["pass", "deny", "fitted", "pass"], "{out}");
    assert!(rows[1]["reason"].as_str().unwrap().contains("cut.png was not read"), "{out}");
    let fitted = Path::new(rows[2]["fitted"].as_str().unwrap());
    // A fitted copy of a private image is private: 0600, in folders only its user enters.
    let mode = |p: &Path| std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions()) & 0o777;
    assert_eq!(mode(fitted), 0o600, "the fitted copy");
    assert_eq!(mode(fitted.parent().unwrap()), 0o700, "its folder");
    assert_eq!(mode(fitted.parent().unwrap().parent().unwrap()), 0o700, "the folder above");
    assert!(fitted.starts_with(cache.join("session-doctor/fitted")), "{}", fitted.display());
    let bytes = std::fs::read(fitted).unwrap();
    let facts = Facts::examine(&bytes, None, Depth::Deep);
    assert_eq!((facts.width, facts.height), (Some(8000), Some(19)));
    assert!(facts.damage.iter().all(|p| p.severity != Verdict::Invalid));
    assert!(
        rows[2]["reason"]
            .as_str()
            .unwrap()
            .starts_with("[Image resized from 8400×20 to 8000×19 to fit anthropic's limits.")
    );
}

#[test]
fn claude_code_hook_denies_a_broken_read_fits_an_oversized_one_and_is_silent_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let png = media_corpus::png(64, 64);
    std::fs::write(dir.path().join("cut.png"), &png[..png.len() - 20]).unwrap();
    std::fs::write(dir.path().join("wide.png"), media_corpus::png(8400, 20)).unwrap();
    std::fs::write(dir.path().join("ok.png"), &png).unwrap();
    let event = |tool: &str, file: &str| {
        json!({"session_id": "s", "transcript_path": "/x.jsonl", "cwd": dir.path(), "hook_event_name": "PreToolUse",
               "tool_name": tool, "tool_input": {"file_path": file, "limit": 10}, "tool_use_id": "toolu_1"})
        .to_string()
    };
    let (code, out, _) = guard(&cache, &["--hook", "claude-code"], Some(&event("Read", "cut.png")));
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("cut short"));

    let (_, out, _) = guard(&cache, &["--hook", "claude-code"], Some(&event("Read", "wide.png")));
    let v: Value = serde_json::from_str(&out).unwrap();
    // The input changes; the permission stays Claude Code's to decide ("allow" would skip its prompt).
    assert!(v["hookSpecificOutput"].get("permissionDecision").is_none(), "{v:#}");
    let updated = &v["hookSpecificOutput"]["updatedInput"];
    assert_eq!(updated["limit"], 10, "other arguments are kept");
    assert!(Path::new(updated["file_path"].as_str().unwrap()).exists());

    for (tool, file) in [("Read", "ok.png"), ("Bash", "cut.png"), ("Read", "missing.png")] {
        let (code, out, _) = guard(&cache, &["--hook", "claude-code"], Some(&event(tool, file)));
        assert_eq!((code, out.as_str()), (0, ""), "{tool} {file}");
    }
    let (code, out, err) = guard(&cache, &["--hook", "claude-code"], Some("not json"));
    assert_eq!((code, out.as_str()), (0, ""), "fails open");
    assert!(err.contains("not JSON"));
}

/// The hook fails open on whatever it cannot use, as `--help` promises (exit 2
/// would block Claude Code's Read): bytes that are not UTF-8.
#[test]
fn the_hook_fails_open_on_bytes_that_are_not_text() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (code, out, err) = guard_bytes(&cache, &["--hook", "claude-code"], b"{\"tool_name\": \"Read\xff\xfe\"}");
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("unguarded"), "{err}");
}

#[test]
fn install_merges_keeps_other_hooks_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    let old = "{\n  \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"audit.sh\"}]}]}\n}\n";
    std::fs::write(&settings, old).unwrap();
    let s = settings.to_str().unwrap();
    let (code, out, _) = guard(dir.path(), &["install", "claude-code", "--settings", s, "--dry-run"], None);
    assert_eq!(code, 0);
    assert!(out.contains("guard --hook claude-code") && out.contains("nothing written"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), old, "--dry-run writes nothing");

    let (code, _, err) = guard(dir.path(), &["install", "claude-code", "--settings", s], None);
    assert_eq!(code, 0, "{err}");
    let once = std::fs::read_to_string(&settings).unwrap();
    let v: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(v["permissions"]["allow"][0], "Bash(ls)");
    let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre[0]["hooks"][0]["command"], "audit.sh");
    assert_eq!(pre[1]["matcher"], "Read");
    assert_eq!(std::fs::read_to_string(dir.path().join("settings.json.session-doctor-backup")).unwrap(), old);

    let (code, out, _) = guard(dir.path(), &["install", "claude-code", "--settings", s], None);
    assert_eq!(code, 0);
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), once, "a second install changes nothing");
}

#[test]
fn the_backup_is_a_new_file_never_a_write_through_a_link_at_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"model":"x"}"#).unwrap();
    let precious = dir.path().join("precious.txt");
    std::fs::write(&precious, "not a backup").unwrap();
    let backup = dir.path().join("settings.json.session-doctor-backup");
    std::os::unix::fs::symlink(&precious, &backup).unwrap();
    let (code, _, err) = guard(dir.path(), &["install", "claude-code", "--settings", settings.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "not a backup");
    assert!(!std::fs::symlink_metadata(&backup).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), r#"{"model":"x"}"#);
}

/// A cache folder another user made first (the shared temporary folder's, with
/// no HOME) is refused, not written into.
#[test]
fn a_cache_folder_of_another_users_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("session-doctor");
    std::fs::create_dir(&theirs).unwrap();
    if std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).is_err() {
        return; // not root: no other user's folder can be made here
    }
    let e = session_doctor::guard::private_dir(&theirs.join("fitted")).unwrap_err();
    assert!(format!("{e:#}").contains("not a folder of this user's own"), "{e:#}");
    // A link in the folder's place is refused too.
    let link = dir.path().join("linked");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    assert!(session_doctor::guard::private_dir(&link).is_err());
}

/// A valid PDF past the provider's page cap, read the way Claude Code reads a
/// large one (`pages: "1-5"`), sends those pages only: it is not denied. Read
/// whole, it is.
#[test]
fn a_long_pdf_read_by_pages_passes() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::write(dir.path().join("long.pdf"), media_corpus::pdf(120)).unwrap();
    let event = |input: Value| {
        json!({"hook_event_name": "PreToolUse", "cwd": dir.path(), "tool_name": "Read", "tool_input": input})
            .to_string()
    };
    let (code, out, err) = guard(&cache, &["--hook", "claude-code"], Some(&event(json!({"file_path": "long.pdf"}))));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "120 pages whole: {out}");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("not broken") && reason.contains("pages") && !reason.contains("is broken"), "{reason}");
    let paged = event(json!({"file_path": "long.pdf", "pages": "1-5"}));
    let (code, out, err) = guard(&cache, &["--hook", "claude-code"], Some(&paged));
    assert_eq!((code, out.as_str()), (0, ""), "read by pages, it passes: {err}");
}

/// `--base64`: a payload handed over as the text a tool result carries is
/// decoded strictly: two payloads glued together (Node's decoder stops at the
/// first `=` and passes the first) are denied; one payload passes.
#[test]
fn base64_text_is_decoded_as_strictly_as_a_session() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    // A payload whose base64 ends in padding: glued to another, the `=` is mid-text.
    let one = (4..64).map(|w| b64(&media_corpus::png(w, 4))).find(|s| s.ends_with('=')).unwrap();
    let two = b64(&media_corpus::png(5, 5));
    std::fs::write(dir.path().join("glued.png"), format!("{one}{two}")).unwrap();
    std::fs::write(dir.path().join("one.png"), &one).unwrap();
    let files = [dir.path().join("glued.png"), dir.path().join("one.png")];
    let (code, out, err) =
        guard(&cache, &["--json", "--base64", files[0].to_str().unwrap(), files[1].to_str().unwrap()], None);
    assert_eq!(code, 1, "{err}");
    let rows: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rows[0]["decision"], "deny", "{out}");
    assert!(rows[0]["reason"].as_str().unwrap().contains("glued"), "{out}");
    assert_eq!(rows[1]["decision"], "pass", "{out}");
}
