//! `check` end to end: a folder mixing healthy and stuck sessions of several
//! formats, in every output form; `--allow`, `--max-images`, the walk's rules
//! (overlays, non-session files, symbolic link loops).

use crate::common;
use crate::common::media_corpus;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::wrap::{self, Item};
use common::{b64, bin, sha256_file, write};
use serde_json::Value;

/// A PNG cut short inside its image data, as an interrupted download leaves it.
fn cut_png() -> Vec<u8> {
    let png = media_corpus::png(64, 48);
    png[..png.len() * 2 / 3].to_vec()
}

/// Valid media, the last turn accepted: a user image and a tool's image.
fn healthy(format: &str) -> String {
    let (a, b) = (b64(&media_corpus::png(32, 32)), b64(&media_corpus::png(16, 16)));
    wrap::session(format, &[Item { base64: &a, mime: "image/png" }, Item { base64: &b, mime: "image/png" }])
}

/// A tool read a cut PNG; no failure recorded: the next request will fail.
fn broken(format: &str) -> String {
    let (a, b) = (b64(&media_corpus::png(32, 32)), b64(&cut_png()));
    wrap::session(format, &[Item { base64: &a, mime: "image/png" }, Item { base64: &b, mime: "image/png" }])
}

/// `broken`, with the provider's rejection recorded after it.
fn stuck(format: &str) -> String {
    wrap::failed(format, &broken(format), "messages.2.content.0.content.0.image.source.base64: Could not process image")
}

/// Runs the binary, killing it if it takes longer than a minute (a walk that loops).
fn check(args: &[&str]) -> Output {
    let mut child =
        bin().arg("check").args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("the binary runs");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            panic!("check did not finish within a minute: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn json(args: &[&str]) -> (Value, i32) {
    let mut a = vec!["--output-format", "json"];
    a.extend_from_slice(args);
    let out = check(&a);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("check printed no JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().expect("exited"))
}

/// healthy/ (three formats) and stuck/ (two recorded failures, one predicted).
fn corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (ok, bad) = (dir.path().join("healthy"), dir.path().join("stuck"));
    std::fs::create_dir_all(&ok).unwrap();
    std::fs::create_dir_all(bad.join("nested")).unwrap();
    write(&ok, "claude.jsonl", &healthy("claude-code"));
    write(&ok, "codex.jsonl", &healthy("codex"));
    write(&ok, "pi.jsonl", &healthy("pi"));
    write(&bad, "claude.jsonl", &stuck("claude-code"));
    write(&bad.join("nested"), "codex.jsonl", &stuck("codex"));
    write(&bad, "pi.jsonl", &broken("pi"));
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn sessions(doc: &Value) -> &Vec<Value> {
    doc["sessions"].as_array().expect("sessions")
}

#[test]
fn a_mixed_folder_fails_and_json_follows_the_schema() {
    let dir = corpus();
    let before = sha256_file(&dir.path().join("stuck/claude.jsonl"));
    let (doc, code) = json(&[s(dir.path())]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["ok"], false);
    let all = sessions(&doc);
    assert_eq!(all.len(), 6, "{doc:#}");
    for sess in all {
        let file = sess["file"].as_str().expect("file");
        assert!(sess["format"].is_string(), "{sess:#}");
        assert!(sess["ok"].is_boolean());
        let problems = sess["problems"].as_array().expect("problems");
        for p in problems {
            for key in ["code", "severity", "message", "line", "ref"] {
                assert!(p.get(key).is_some(), "problem without {key}: {p:#}");
            }
            let code = p["code"].as_str().unwrap();
            assert!(session_doctor::codes::lookup(code).is_some(), "unregistered code {code}");
        }
        let is_stuck = file.contains("/stuck/");
        assert_eq!(sess["ok"], !is_stuck, "{sess:#}");
        if is_stuck {
            // The cut PNG is named, by its ref and line.
            let png = problems.iter().find(|p| p["code"] == "png.truncated").expect("png.truncated");
            assert!(png["ref"].is_string() && png["line"].is_u64(), "{png:#}");
        } else {
            assert!(problems.is_empty(), "{sess:#}");
        }
        if file.ends_with("stuck/claude.jsonl") || file.ends_with("nested/codex.jsonl") {
            assert!(problems.iter().any(|p| p["code"] == "session.stuck.media_rejected"), "{sess:#}");
        }
    }
    assert_eq!(sha256_file(&dir.path().join("stuck/claude.jsonl")), before, "check never writes a session");
}

#[test]
fn healthy_sessions_alone_pass() {
    let dir = corpus();
    let out = check(&[s(&dir.path().join("healthy"))]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("3 sessions checked: 3 ok, 0 failing; 0 problems"), "{stdout}");
}

#[test]
fn human_output_lists_problems_under_each_session() {
    let dir = corpus();
    let out = check(&["--color", "never", s(dir.path())]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text.lines().any(|l| l.starts_with("FAIL  ") && l.ends_with("stuck/pi.jsonl (pi)")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("ok    ") && l.ends_with("healthy/pi.jsonl (pi)")), "{text}");
    assert!(text.contains("      error[png.truncated] line "), "{text}");
    assert!(text.trim_end().ends_with("6 sessions checked: 3 ok, 3 failing; 5 problems"), "{text}");
}

#[test]
fn junit_has_a_testcase_per_session_and_a_failure_per_problem() {
    let dir = corpus();
    // A file name that needs escaping in XML and in GitHub's properties.
    let odd = write(&dir.path().join("stuck"), "odd, name: a&b<c>.jsonl", &broken("claude-code"));
    let (doc, _) = json(&[s(dir.path())]);
    let out = check(&["--output-format", "junit", s(dir.path())]);
    assert_eq!(out.status.code(), Some(1));
    let xml = String::from_utf8(out.stdout).unwrap();
    let tree = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("junit does not parse ({e}):\n{xml}"));
    let suites: Vec<_> = tree.descendants().filter(|n| n.has_tag_name("testsuite")).collect();
    assert_eq!(suites.len(), 1, "{xml}");
    let cases: Vec<_> = suites[0].children().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), sessions(&doc).len(), "{xml}");
    assert_eq!(suites[0].attribute("tests"), Some("7"));
    assert_eq!(suites[0].attribute("failures"), Some("4"));
    for sess in sessions(&doc) {
        let file = sess["file"].as_str().unwrap();
        let case = cases.iter().find(|c| c.attribute("name") == Some(file)).expect("a testcase per session");
        let failures: Vec<_> = case.children().filter(|n| n.has_tag_name("failure")).collect();
        let errors = sess["problems"].as_array().unwrap().iter().filter(|p| p["severity"] == "error").count();
        assert_eq!(failures.len(), errors, "{file}:\n{xml}");
        assert_eq!(failures.is_empty(), sess["ok"] == true);
        for (f, p) in failures.iter().zip(sess["problems"].as_array().unwrap()) {
            assert_eq!(f.attribute("type"), p["code"].as_str());
        }
    }
    assert!(cases.iter().any(|c| c.attribute("name") == Some(s(&odd))), "escaped name reads back:\n{xml}");
}

#[test]
fn github_emits_one_annotation_per_problem_naming_the_file() {
    let dir = corpus();
    let odd = write(&dir.path().join("stuck"), "odd, name: a.jsonl", &broken("claude-code"));
    let (doc, _) = json(&[s(dir.path())]);
    let out = check(&["--output-format", "github", s(dir.path())]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let annotations: Vec<&str> = text.lines().filter(|l| l.starts_with("::")).collect();
    let problems: usize = sessions(&doc).iter().map(|s| s["problems"].as_array().unwrap().len()).sum();
    assert_eq!(annotations.len(), problems, "{text}");
    for sess in sessions(&doc) {
        let file = sess["file"].as_str().unwrap().replace(',', "%2C").replace(':', "%3A");
        for p in sess["problems"].as_array().unwrap() {
            let head = format!("::error file={file},line={},title={}::", p["line"], p["code"].as_str().unwrap());
            let head = head.replace(",line=null", "");
            assert!(annotations.iter().any(|a| a.starts_with(&head)), "no {head} in:\n{text}");
        }
    }
    assert!(text.contains("odd%2C name%3A a.jsonl"), "{text}");
    assert!(odd.exists());
}

#[test]
fn allowing_the_only_problem_code_passes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pi.jsonl", &broken("pi"));
    write(dir.path(), "codex.jsonl", &healthy("codex"));
    let (doc, code) = json(&[s(dir.path())]);
    assert_eq!(code, 1, "{doc:#}");
    let codes: Vec<&str> = sessions(&doc)
        .iter()
        .flat_map(|s| s["problems"].as_array().unwrap())
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["png.truncated"], "{doc:#}");
    let (doc, code) = json(&["--allow", "png.truncated", s(dir.path())]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["ok"], true);
    let pi = sessions(&doc).iter().find(|s| s["format"] == "pi").unwrap();
    assert_eq!(pi["allowed"][0]["code"], "png.truncated", "allowed problems are still reported");
    // A code the registry does not know is a usage error (a typo in CI must not pass silently).
    assert_eq!(check(&["--allow", "png.truncatd", s(dir.path())]).status.code(), Some(2));
}

#[test]
fn max_images_adds_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "claude.jsonl", &healthy("claude-code"));
    assert_eq!(check(&["--max-images", "2", s(dir.path())]).status.code(), Some(0));
    let (doc, code) = json(&["--max-images", "1", s(dir.path())]);
    assert_eq!(code, 1);
    assert_eq!(sessions(&doc)[0]["problems"][0]["code"], "request.over_max_images", "{doc:#}");
}

#[test]
fn overlays_and_non_sessions_are_skipped_and_links_do_not_loop() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    write(&sub, "claude.jsonl", &healthy("claude-code"));
    write(&sub, "claude.jsonl.doctor", "{\"event\":\"attachments.excluded\",\"attachments\":[]}\n");
    write(&sub, "claude.jsonl.doctor.lock", "");
    write(&sub, "notes.txt", "not a session\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path(), sub.join("loop")).unwrap();
        std::os::unix::fs::symlink(sub.join("claude.jsonl"), sub.join("again.jsonl")).unwrap();
    }
    let (doc, code) = json(&[s(dir.path())]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(sessions(&doc).len(), 1, "the overlay, the lock and the linked copy are not sessions: {doc:#}");
    let skipped = doc["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{doc:#}");
    assert!(skipped[0]["file"].as_str().unwrap().ends_with("notes.txt"));
    let out = check(&[s(dir.path())]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("note: skipped") && err.contains("notes.txt"), "{err}");
}

/// A binary file the walk meets (a zip kept beside recordings, the `-shm` of
/// a live opencode database) is no session: skipped with a note, like an
/// image. It was counted as an unreadable session, and check exited 2.
#[test]
fn binary_files_beside_sessions_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "claude.jsonl", &healthy("claude-code"));
    std::fs::write(dir.path().join("support.zip"), b"PK\x03\x04\x14\x00\x00\x00\x08\x00").unwrap();
    std::fs::write(dir.path().join("opencode.db-shm"), vec![0u8; 32768]).unwrap();
    let (doc, code) = json(&[s(dir.path())]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(sessions(&doc).len(), 1, "{doc:#}");
    assert_eq!(doc["skipped"].as_array().unwrap().len(), 2, "{doc:#}");
}

/// A store of many sessions (opencode's database) is every one of them:
/// check judged only the most recently updated, and passed a database whose
/// other session was stuck.
#[test]
fn every_session_of_a_store_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/opencode/v1-and-v2.db");
    std::fs::copy(fixture, &db).unwrap();
    // The healthy session is the latest: the stuck one is only found by looking at both.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute("UPDATE session SET time_updated = 1796121999999 WHERE id = 'ses_dced07f2effeOuLXUQAA0iO7CK'", [])
        .unwrap();
    drop(c);
    let (doc, code) = json(&[s(dir.path())]);
    assert_eq!(code, 1, "{doc:#}");
    let checked: Vec<(&str, bool)> =
        sessions(&doc).iter().map(|c| (c["session"].as_str().unwrap(), c["ok"].as_bool().unwrap())).collect();
    assert_eq!(checked.len(), 2, "{doc:#}");
    assert!(checked.contains(&("ses_dced059e6ffeCrRUbVHgxPpitm", false)), "{doc:#}");
    assert!(checked.contains(&("ses_dced07f2effeOuLXUQAA0iO7CK", true)), "{doc:#}");
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["opencode.db"], "nothing is left beside the database");
}

#[test]
fn nothing_to_check_or_an_unreadable_path_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(check(&[s(dir.path())]).status.code(), Some(2), "an empty folder holds no session");
    let notes = write(dir.path(), "notes.txt", "not a session\n");
    assert_eq!(check(&[s(&notes)]).status.code(), Some(2), "a file named on the command line must be a session");
    let ok = write(dir.path(), "codex.jsonl", &healthy("codex"));
    let out = check(&[s(&ok), s(&dir.path().join("missing"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
}

/// Claude Code: the cut PNG was rejected, the user went on (an accepted answer),
/// then pasted another image. Only what the next request carries counts.
fn recovered_then(image: &[u8]) -> String {
    use serde_json::json;
    let usage =
        json!({"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0});
    let mut text = stuck("claude-code");
    let lines = [
        json!({"type":"user","uuid":"u9","parentUuid":"err-1","sessionId":"s","isSidechain":false,
            "message":{"role":"user","content":[{"type":"text","text":"go on without it"}]}}),
        json!({"type":"assistant","uuid":"a9","parentUuid":"u9","sessionId":"s","requestId":"req_9",
            "message":{"id":"msg_9","type":"message","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":usage}}),
        json!({"type":"user","uuid":"u10","parentUuid":"a9","sessionId":"s","isSidechain":false,
            "message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(image)}}]}}),
    ];
    for l in lines {
        text.push_str(&format!("{l}\n"));
    }
    text
}

#[test]
fn a_recovered_failure_does_not_hide_what_came_after() {
    let dir = tempfile::tempdir().unwrap();
    let ok = write(dir.path(), "ok.jsonl", &recovered_then(&media_corpus::png(8, 8)));
    let bad = write(dir.path(), "bad.jsonl", &recovered_then(&cut_png()));
    // check gates content (DESIGN): the old cut PNG (line 3) fails even though
    // the model answered after it, and says so; it is not a failure that blocks.
    let (doc, code) = json(&[s(&ok)]);
    assert_eq!(code, 1, "{doc:#}");
    let problems = sessions(&doc)[0]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{doc:#}");
    assert_eq!(
        (&problems[0]["line"], &problems[0]["code"]),
        (&serde_json::json!(3), &serde_json::json!("png.truncated")),
        "{doc:#}"
    );
    // A failure came between: the answer was to a retry, which is all the file tells.
    let message = problems[0]["message"].as_str().unwrap();
    assert!(message.contains("failed at line 4; the model answered a retry at line 6"), "{doc:#}");
    let (doc, code) = json(&[s(&bad)]);
    assert_eq!(code, 1, "{doc:#}");
    let problems = sessions(&doc)[0]["problems"].as_array().unwrap();
    let mut lines: Vec<u64> = problems.iter().filter_map(|p| p["line"].as_u64()).collect();
    lines.sort_unstable();
    assert_eq!(lines, [3, 7], "{doc:#}");
    assert!(problems.iter().all(|p| p["code"] == "png.truncated"), "{doc:#}");
}
