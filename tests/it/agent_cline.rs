//! Cline CLI 3.0.65 tasks as the real CLI wrote them (tests/data/agents/cline,
//! see its README): a task stuck on a cut PNG its `read_files` read, after
//! Cline's own failed resume, and a task killed mid-tool then resumed.

use crate::common;
use crate::common::media_corpus;

use std::path::{Path, PathBuf};

use common::{json_of, run};
use serde_json::{Value, json};

const STUCK: &str = "1796121856311_l5u09";
const KILLED: &str = "1796121938894_peax0";
const KILLED_BEFORE_RESUME: &str = "1796122644719_3895x";
const PNG_PATH: &str = "/tmp/sd-cline-mby8xtgx/work/pic.png";

fn fixture(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/cline").join(kind)
}

/// The task folder copied into a `sessions` folder of its own, as Cline keeps
/// it (overlays and repaired copies land there); returns its messages file.
fn sessions(kind: &str, id: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("sessions").join(id);
    std::fs::create_dir_all(&task).unwrap();
    for name in [format!("{id}.messages.json"), format!("{id}.json")] {
        std::fs::copy(fixture(kind).join(id).join(&name), task.join(&name)).unwrap();
    }
    (dir, task.join(format!("{id}.messages.json")))
}

fn sent(kind: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixture(kind).join("resumed-request.json")).unwrap()).unwrap()
}

fn preview_messages(file: &Path) -> (Vec<Value>, Value) {
    let out = run(&["preview", file.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary: Value = serde_json::from_str(stderr.lines().rfind(|l| l.starts_with('{')).unwrap()).unwrap();
    (body["messages"].as_array().unwrap().clone(), summary)
}

#[test]
fn the_image_read_files_returned_is_counted() {
    let (_dir, s) = sessions("stuck", STUCK);
    let (v, code) = common::scan_json(&s, &[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["format"], json!("cline"), "{v:#}");
    let a = v["attachments"].as_array().unwrap();
    assert_eq!(a.len(), 1, "{v:#}");
    assert_eq!(a[0]["name"], json!(PNG_PATH), "{v:#}");
    assert!(a[0].to_string().contains("image/png"), "{v:#}");
}

#[test]
fn a_cut_png_from_read_files_is_media_rejected_with_the_png_as_prime_suspect() {
    let (_dir, s) = sessions("stuck", STUCK);
    let (d, code) = json_of(&["diagnose", s.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{d:#}");
    assert_eq!(d["failure"]["class"], json!("media_rejected"), "{d:#}");
    assert!(d.to_string().contains("does not represent a valid image"), "the provider's own text: {d:#}");
    // Each message on its own line: the last failure record, the last reply the model gave.
    assert_eq!((&d["failure"]["line"], &d["boundary"]["line"]), (&json!(113), &json!(25)), "{d:#}");
    let prime: Vec<&Value> = d["suspects"].as_array().unwrap().iter().filter(|s| s["prime"] == json!(true)).collect();
    assert_eq!(prime.len(), 1, "{d:#}");
    assert_eq!(prime[0]["name"], json!(PNG_PATH), "{d:#}");
    assert!(d["next"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains(" exclude ")), "{d:#}");
}

#[test]
fn preview_is_the_chat_completions_request_cline_sent() {
    let (_dir, s) = sessions("stuck", STUCK);
    let (messages, summary) = preview_messages(&s);
    assert_eq!(summary["target"], json!("openai-chat"), "{summary:#}");
    let want = sent("stuck");
    assert_eq!(Value::Array(messages), want["messages"], "preview and Cline's resume request differ");
    let absent = summary["not_in_session"].to_string();
    assert!(absent.contains("system prompt") && absent.contains("tool list"), "{summary:#}");
}

#[test]
fn exclude_then_repair_writes_a_task_folder_cline_resumes() {
    let (dir, s) = sessions("stuck", STUCK);
    let before = std::fs::read(&s).unwrap();
    let manifest = s.with_file_name(format!("{STUCK}.json"));
    let manifest_before = std::fs::read(&manifest).unwrap();
    assert!(run(&["exclude", s.to_str().unwrap(), "--suspects"]).status.success());
    let (messages, _) = preview_messages(&s);
    assert!(!Value::Array(messages.clone()).to_string().contains("data:image"), "{messages:#?}");

    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let id = r["id"].as_str().unwrap();
    assert_eq!(r["resume"], json!(format!("cline --id {id}")), "{r:#}");
    let task = dir.path().join("sessions").join(id);
    let copy = task.join(format!("{id}.messages.json"));
    assert_eq!(r["out"], json!(copy.display().to_string()), "{r:#}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&copy).unwrap()).unwrap();
    assert_eq!((&doc["sessionId"], &doc["origin"]["sessionId"]), (&json!(id), &json!(id)), "the copy names itself");
    // Cline finds a task by its manifest: without one `cline --id` starts an empty task over the copy.
    let m: Value = serde_json::from_slice(&std::fs::read(task.join(format!("{id}.json"))).unwrap()).unwrap();
    assert_eq!(m["session_id"], json!(id), "{m:#}");
    assert_eq!(m["messages_path"], json!(copy.display().to_string()), "{m:#}");
    assert_eq!(std::fs::read(&s).unwrap(), before, "the original is never written");
    assert_eq!(std::fs::read(&manifest).unwrap(), manifest_before, "nor its manifest");

    let (d, code) = json_of(&["diagnose", copy.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    // What the copy sends: the excluded image as the note, in the tool's own output.
    let (copied, _) = preview_messages(&copy);
    assert_eq!(copied, messages, "the copy sends what preview showed after the exclusion");
}

#[test]
fn a_call_killed_mid_tool_is_healthy_with_a_note_that_cline_answers_it() {
    let (_dir, s) = sessions("killed-before-resume", KILLED_BEFORE_RESUME);
    let (d, code) = json_of(&["diagnose", s.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    assert!(d["notes"].to_string().contains("interrupted before a result was produced"), "{d:#}");
    let (messages, _) = preview_messages(&s);
    let last = messages.last().unwrap();
    assert_eq!(last["role"], json!("tool"), "{messages:#?}");
    assert!(last["content"].as_str().unwrap().contains("Tool: run_commands."), "{last:#}");
}

#[test]
fn a_call_killed_mid_tool_is_answered_as_cline_answers_it() {
    let (_dir, s) = sessions("killed", KILLED);
    let (d, code) = json_of(&["diagnose", s.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    let (messages, _) = preview_messages(&s);
    // The fixture is the task after that resume: it ends with the model's answer.
    assert_eq!(messages.last(), Some(&json!({"role": "assistant", "content": "Done."})));
    assert_eq!(Value::Array(messages[..messages.len() - 1].to_vec()), sent("killed")["messages"]);
}

#[test]
fn an_image_cline_replaces_itself_is_not_in_the_request() {
    // The stuck task with the image over Cline's own 6 MiB limit: Cline sends
    // its placeholder, so the provider never sees the bytes.
    let (_dir, s) = sessions("stuck", STUCK);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&s).unwrap()).unwrap();
    let big = common::b64(&vec![0u8; 6_400_000]);
    doc["messages"][2]["content"][0]["content"][0]["result"][1]["data"] = json!(big);
    doc["messages"].as_array_mut().unwrap().retain(|m| !m["id"].as_str().unwrap().starts_with("error_"));
    std::fs::write(&s, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let (v, _) = common::scan_json(&s, &[]);
    assert_eq!(v["attachments"], json!([]), "{v:#}");
    let (messages, _) = preview_messages(&s);
    let tool = messages.iter().find(|m| m["role"] == json!("tool")).unwrap();
    assert!(tool["content"].as_str().unwrap().contains("[media omitted: invalid or exceeds size limit]"), "{tool:#}");
    assert!(!messages.iter().any(|m| m.to_string().contains("data:image")), "{messages:#?}");
}

#[test]
fn sessions_lists_clines_newest_task_in_its_data_folder() {
    let home = tempfile::tempdir().unwrap();
    let task = home.path().join(".cline/data/sessions").join(STUCK);
    std::fs::create_dir_all(&task).unwrap();
    for name in [format!("{STUCK}.messages.json"), format!("{STUCK}.json")] {
        std::fs::copy(fixture("stuck").join(STUCK).join(&name), task.join(&name)).unwrap();
    }
    let mut cmd = common::bin();
    cmd.env("HOME", home.path());
    for var in ["CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "XDG_DATA_HOME"] {
        cmd.env_remove(var);
    }
    let out = cmd.args(["sessions", "--agent", "cline", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "only the messages file is a session, not its manifest: {rows:#?}");
    assert_eq!(rows[0]["format"], json!("cline"), "{rows:#?}");
    assert!(rows[0]["path"].as_str().unwrap().ends_with(&format!("{STUCK}.messages.json")), "{rows:#?}");
}

// Cline's IDE (and CLI 2) layout: `tasks/<id>/api_conversation_history.json`
// beside `ui_messages.json`, which alone records a failed request
// (tests/data/agents/cline/ide-task-failed, see its README).

const IDE_TASK: &str = "1796198400123";
const IDE_PNG: &str = "/home/dev/proj/pic.png";

/// The IDE task folder copied into a `tasks` folder of its own; returns its history.
fn ide_task() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("tasks").join(IDE_TASK);
    std::fs::create_dir_all(&task).unwrap();
    for name in ["api_conversation_history.json", "ui_messages.json"] {
        std::fs::copy(fixture("ide-task-failed").join(IDE_TASK).join(name), task.join(name)).unwrap();
    }
    (dir, task.join("api_conversation_history.json"))
}

fn ui_messages(history: &Path) -> Vec<Value> {
    serde_json::from_slice(&std::fs::read(history.with_file_name("ui_messages.json")).unwrap()).unwrap()
}

#[test]
fn a_trailing_api_req_failed_in_ui_messages_is_the_failure_with_the_cut_png_as_prime_suspect() {
    let (_dir, h) = ide_task();
    let (d, code) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{d:#}");
    assert_eq!(d["failure"]["class"], json!("media_rejected"), "{d:#}");
    assert_eq!(d["failure"]["source"], json!("recorded"), "{d:#}");
    assert_eq!(d["failure"]["status"], json!(400), "{d:#}");
    assert!(d["failure"]["message"].as_str().unwrap().contains("Could not process image"), "{d:#}");
    // Recorded in ui_messages.json, on none of the history's lines: no line is claimed.
    assert_eq!(d["failure"]["line"], json!(null), "{d:#}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("recorded in ui_messages.json beside the history"), "{d:#}");
    let prime: Vec<&Value> = d["suspects"].as_array().unwrap().iter().filter(|s| s["prime"] == json!(true)).collect();
    assert_eq!(prime.len(), 1, "{d:#}");
    assert_eq!(prime[0]["name"], json!(IDE_PNG), "{d:#}");
    let text = String::from_utf8_lossy(&run(&["diagnose", h.to_str().unwrap()]).stdout).into_owned();
    assert!(text.contains("recorded beside the history") && !text.contains("recorded at line"), "{text}");
}

#[test]
fn a_failure_retried_by_hand_is_no_failure_and_the_task_stays_healthy() {
    let (_dir, h) = ide_task();
    // A valid PNG where the cut one was, and the user's retry as Cline records
    // it: `streamingFailedMessage` deleted, `api_req_retried` after the ask.
    let mut history: Value = serde_json::from_slice(&std::fs::read(&h).unwrap()).unwrap();
    history[2]["content"][0]["content"][1]["source"]["data"] = json!(common::b64(&media_corpus::png(16, 16)));
    std::fs::write(&h, serde_json::to_vec(&history).unwrap()).unwrap();
    let mut ui = ui_messages(&h);
    let started = ui.iter_mut().rfind(|m| m["say"] == json!("api_req_started")).unwrap();
    let mut info: Value = serde_json::from_str(started["text"].as_str().unwrap()).unwrap();
    info.as_object_mut().unwrap().remove("streamingFailedMessage");
    started["text"] = json!(info.to_string());
    ui.push(json!({"ts": 1_796_198_425_000u64, "type": "say", "say": "api_req_retried"}));
    std::fs::write(h.with_file_name("ui_messages.json"), serde_json::to_vec(&ui).unwrap()).unwrap();
    let (d, code) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"], &d["failure"]), (0, &json!(false), &json!(null)), "{d:#}");
    assert!(d["verdict"].as_str().unwrap().starts_with("healthy"), "{d:#}");
}

#[test]
fn a_hostile_ui_messages_json_is_a_finding_and_the_history_is_still_read() {
    type Make = Box<dyn Fn(&Path)>;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: [(&str, Make); 3] = [
        ("not JSON", Box::new(|p| std::fs::write(p, b"[{\"ts\":1,\"type\":\"ask\",\"ask\":\"api_req_f").unwrap())),
        ("over 64 MiB", Box::new(|p| std::fs::File::create(p).unwrap().set_len((64 << 20) + 1).unwrap())),
        ("nested 100000 deep", Box::new(move |p| std::fs::write(p, &deep).unwrap())),
    ];
    for (what, make) in cases {
        let (_dir, h) = ide_task();
        make(&h.with_file_name("ui_messages.json"));
        let (d, code) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
        let finding = d["findings"].as_array().unwrap().iter().find(|f| f["code"] == json!("sidecar.unreadable"));
        assert!(finding.is_some_and(|f| f["message"].as_str().unwrap().contains("ui_messages.json")), "{what}: {d:#}");
        // The history is still read: the cut PNG, judged without the provider's word.
        assert_eq!((code, &d["failure"]["source"]), (1, &json!("predicted")), "{what}: {d:#}");
        assert_eq!(d["suspects"][0]["name"], json!(IDE_PNG), "{what}: {d:#}");
        let text = String::from_utf8_lossy(&run(&["diagnose", h.to_str().unwrap()]).stdout).into_owned();
        assert!(text.contains("ui_messages.json beside the history") && !text.contains("line 0"), "{what}: {text}");
    }
}

#[test]
fn repair_of_an_ide_task_writes_its_ui_messages_without_the_failure_messages_that_stop_resume() {
    let (_dir, h) = ide_task();
    let before = std::fs::read(h.with_file_name("ui_messages.json")).unwrap();
    let (r, code) = json_of(&["repair", h.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let note = r["resume_note"].as_str().unwrap();
    assert!(note.contains("ui_messages.repaired.json") && note.contains("9948"), "{r:#}");
    let mended: Vec<Value> =
        serde_json::from_slice(&std::fs::read(h.with_file_name("ui_messages.repaired.json")).unwrap()).unwrap();
    let all = ui_messages(&h);
    assert_eq!(mended.len(), all.len() - 1, "{mended:#?}");
    assert!(mended.iter().all(|m| m["ask"] != json!("api_req_failed") && m["say"] != json!("error")), "{mended:#?}");
    assert_eq!(mended[..], all[..all.len() - 1]);
    assert_eq!(std::fs::read(h.with_file_name("ui_messages.json")).unwrap(), before, "the original is never written");
}

#[test]
fn repair_says_how_to_resume_an_ide_task_it_has_no_command_for() {
    let (_dir, h) = ide_task();
    let out = run(&["repair", h.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("to resume it: Cline resumes a task only from its own folder"), "{text}");
}

#[test]
fn a_last_request_that_failed_without_the_ask_is_the_failure_too() {
    // Killed while Cline waited to retry: the request's `api_req_started`
    // holds `streamingFailedMessage`, no `api_req_failed` ask follows.
    let (_dir, h) = ide_task();
    let mut ui = ui_messages(&h);
    ui.retain(|m| m["ask"] != json!("api_req_failed") && m["say"] != json!("error_retry"));
    std::fs::write(h.with_file_name("ui_messages.json"), serde_json::to_vec(&ui).unwrap()).unwrap();
    let (d, code) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    assert_eq!(
        (code, &d["failure"]["class"], &d["failure"]["source"]),
        (1, &json!("media_rejected"), &json!("recorded")),
        "{d:#}"
    );
}

/// `task_metadata.json` is read only up to the same cap as `ui_messages.json`:
/// one that never ends (here `/dev/zero`) used to be read until memory ran out.
#[cfg(unix)]
#[test]
fn a_task_metadata_json_that_never_ends_is_not_read_whole() {
    let (_dir, h) = ide_task();
    let meta = h.with_file_name("task_metadata.json");
    let _ = std::fs::remove_file(&meta);
    std::os::unix::fs::symlink("/dev/zero", &meta).unwrap();
    let (d, code) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{d:#}");
    assert_eq!(d["suspects"][0]["name"], json!(IDE_PNG), "{d:#}");
}

#[test]
fn a_repaired_tasks_manifest_names_its_history_absolutely_wherever_repair_was_run() {
    // Cline reads the history from the manifest's `messages_path` and finds an
    // empty task where it names no file: a path typed relative to the sessions
    // folder, or a copy written elsewhere to be moved there, must still name it.
    let (dir, s) = sessions("stuck", STUCK);
    let sessions_dir = dir.path().join("sessions");
    let relative = s.strip_prefix(&sessions_dir).unwrap();
    let out = common::bin()
        .args(["repair", relative.to_str().unwrap(), "--json", "--force"])
        .current_dir(&sessions_dir)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = r["id"].as_str().unwrap();
    assert_eq!(r["resume_note"], Value::Null, "the copy is in the sessions folder already: {r:#}");
    let m: Value =
        serde_json::from_slice(&std::fs::read(sessions_dir.join(id).join(format!("{id}.json"))).unwrap()).unwrap();
    let want = sessions_dir.canonicalize().unwrap().join(id).join(format!("{id}.messages.json"));
    let got = std::path::PathBuf::from(m["messages_path"].as_str().unwrap());
    assert!(got.is_absolute() && got.canonicalize().unwrap() == want, "{m:#}");
}

/// The IDE task killed (or reloaded) while Cline waited to retry: its
/// `ui_messages.json` ends with the first `error_retry`, and the
/// `api_req_started` lost its `streamingFailedMessage`, which Cline moves into
/// the retry message (`attemptApiRequest`). On resume Cline sends the same
/// request and fails the same way: stuck. Before, "healthy: no failure
/// recorded" and exit 0.
#[test]
fn a_failure_kept_only_in_an_error_retry_is_the_failure() {
    let (_dir, h) = ide_task();
    let mut ui = ui_messages(&h);
    let first_retry = ui.iter().position(|m| m["say"] == json!("error_retry")).unwrap();
    ui.truncate(first_retry + 1);
    let started = ui.iter_mut().rfind(|m| m["say"] == json!("api_req_started")).unwrap();
    let mut info: Value = serde_json::from_str(started["text"].as_str().unwrap()).unwrap();
    info.as_object_mut().unwrap().remove("streamingFailedMessage");
    info["cancelReason"] = json!("streaming_failed");
    started["text"] = json!(info.to_string());
    std::fs::write(h.with_file_name("ui_messages.json"), serde_json::to_vec(&ui).unwrap()).unwrap();
    let (d, code) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{d:#}");
    assert_eq!(d["failure"]["class"], json!("media_rejected"), "{d:#}");
}

/// A `ui_messages.repaired.json` left by an earlier run: repair refuses before
/// it writes anything, so "nothing was written" is true. Before, the history's
/// copy was written and then the run failed on its companion, and the copy
/// left behind blocked the next run.
#[test]
fn repair_writes_both_of_a_pair_or_neither() {
    let (_dir, h) = ide_task();
    let companion = h.with_file_name("ui_messages.repaired.json");
    std::fs::write(&companion, "[]").unwrap();
    let out = run(&["repair", h.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was written"));
    assert!(!h.with_file_name("api_conversation_history.repaired.json").exists(), "half a pair was written");
    assert_eq!(std::fs::read_to_string(&companion).unwrap(), "[]");
}

/// The IDE task killed mid-tool (its history ends with the `read_file` call):
/// the extension answers the call itself on resume, in its own words ("result
/// missing", `ensureToolResultsFollowToolUse`), and the note quotes those, not
/// Cline CLI 3's.
#[test]
fn an_ide_call_killed_mid_tool_is_answered_in_the_extensions_words() {
    let (_dir, h) = ide_task();
    let mut history: Vec<Value> = serde_json::from_slice(&std::fs::read(&h).unwrap()).unwrap();
    history.truncate(2);
    assert_eq!(history[1]["role"], "assistant");
    std::fs::write(&h, serde_json::to_vec(&history).unwrap()).unwrap();
    std::fs::remove_file(h.with_file_name("ui_messages.json")).unwrap();
    let (d, code) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{d:#}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("\"result missing\"") || notes.contains("\\\"result missing\\\""), "{notes}");
    assert!(!notes.contains("Tool execution was interrupted"), "{notes}");
}

// Cline's IDE extension leaves the middle of a long task out of its requests:
// the first user-assistant pair, then the messages after the end of the
// task's `conversationHistoryDeletedRange`, kept in the extension's
// `state/taskHistory.json` (`ContextManager.getAndAlterTruncatedMessages`).

const CUT_TASK: &str = "1796300000000";

/// A tool call reading `path` and the user message answering it with a PNG
/// of `side` pixels (each image its own bytes).
fn read_png(id: &str, path: &str, side: u32, extra: Vec<Value>) -> [Value; 2] {
    let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "read_file", "input": {"path": path}}]});
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": common::b64(&media_corpus::png(side, side))}});
    let mut content = vec![
        json!({"type": "tool_result", "tool_use_id": id, "content": [{"type": "text", "text": format!("[read_file for '{path}'] Result:")}, image]}),
    ];
    content.extend(extra);
    [call, json!({"role": "user", "content": content})]
}

/// An IDE task of nine messages under a globalStorage folder, its last request
/// refused for the block `blamed`, and `range` (if any) as its
/// `conversationHistoryDeletedRange`; returns the history.
fn cut_task(range: Option<Value>, blamed: &str) -> (tempfile::TempDir, PathBuf) {
    let storage = tempfile::tempdir().unwrap();
    let task = storage.path().join("tasks").join(CUT_TASK);
    std::fs::create_dir_all(&task).unwrap();
    std::fs::create_dir_all(storage.path().join("state")).unwrap();
    let pasted = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": common::b64(&media_corpus::png(9, 9))}});
    let mut history =
        vec![json!({"role": "user", "content": [{"type": "text", "text": "<task>\nLook at the pictures\n</task>"}]})];
    history.extend(read_png("toolu_1", "/p/one.png", 5, vec![]));
    history.extend(read_png("toolu_2", "/p/two.png", 6, vec![]));
    history.extend(read_png(
        "toolu_3",
        "/p/three.png",
        7,
        vec![pasted, json!({"type": "text", "text": "<feedback>and this one</feedback>"})],
    ));
    history.extend(read_png("toolu_4", "/p/four.png", 8, vec![]));
    assert_eq!(history.len(), 9);
    std::fs::write(task.join("api_conversation_history.json"), serde_json::to_vec(&history).unwrap()).unwrap();
    let error = json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!("{blamed}.image.source.base64: Could not process image")}});
    let failure = json!({"message": format!("400 {error}"), "status": 400, "modelId": "claude-sonnet-4-5-20250929", "providerId": "anthropic"});
    let ui = json!([
        {"ts": 1_796_300_000_100u64, "type": "say", "say": "task", "text": "Look at the pictures"},
        {"ts": 1_796_300_009_000u64, "type": "say", "say": "api_req_started", "text": json!({"request": "…"}).to_string()},
        {"ts": 1_796_300_009_900u64, "type": "ask", "ask": "api_req_failed", "text": failure.to_string()},
    ]);
    std::fs::write(task.join("ui_messages.json"), serde_json::to_vec(&ui).unwrap()).unwrap();
    let mut item = json!({"id": CUT_TASK, "ts": 1_796_300_009_900u64, "task": "Look at the pictures", "tokensIn": 1, "tokensOut": 1, "totalCost": 0});
    if let Some(r) = range {
        item["conversationHistoryDeletedRange"] = r;
    }
    // Another task's range is not this one's.
    let other = json!({"id": "1796200000000", "ts": 1, "task": "x", "tokensIn": 0, "tokensOut": 0, "totalCost": 0, "conversationHistoryDeletedRange": [2, 3]});
    std::fs::write(storage.path().join("state/taskHistory.json"), serde_json::to_vec(&json!([other, item])).unwrap())
        .unwrap();
    (storage, task.join("api_conversation_history.json"))
}

fn prime_names(d: &Value) -> Vec<Value> {
    d["suspects"].as_array().unwrap().iter().filter(|s| s["prime"] == json!(true)).map(|s| s["name"].clone()).collect()
}

/// Cline sends messages 0, 1, 6, 7, 8 for the range [2, 5]: the provider's
/// `messages.4` is the history's message 8, whose image is four.png. Before,
/// the path was read against the whole history and blamed two.png.
#[test]
fn a_block_path_after_the_cut_names_the_image_cline_sent_there() {
    let (_dir, h) = cut_task(Some(json!([2, 5])), "messages.4.content.0.content.1");
    let (d, code) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["failure"]["class"]), (1, &json!("media_rejected")), "{d:#}");
    assert_eq!(prime_names(&d), vec![json!("/p/four.png")], "{d:#}");
    // The same path without the range names the history's own message 4.
    let (_dir, whole) = cut_task(None, "messages.4.content.0.content.1");
    let (d, _) = json_of(&["diagnose", whole.to_str().unwrap(), "--json"]);
    assert_eq!(prime_names(&d), vec![json!("/p/two.png")], "{d:#}");
}

/// The first message after the cut goes without its tool results (their
/// calls were cut); the image the user pasted beside them is still sent.
#[test]
fn preview_leaves_out_the_cut_messages_and_the_tool_results_orphaned_by_it() {
    let (_dir, h) = cut_task(Some(json!([2, 5])), "messages.2.content.1");
    let out = run(&["preview", h.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "{messages:#?}");
    let text = body.to_string();
    for gone in ["/p/two.png", "/p/three.png", "toolu_2", "toolu_3"] {
        assert!(!text.contains(gone), "{gone} is in the request: {messages:#?}");
    }
    assert!(text.contains("/p/four.png") && text.contains("and this one"), "{messages:#?}");
    // Cline answers the first reply's call, whose result was cut, ahead of the rest.
    let seam = messages[2]["content"].as_array().unwrap();
    assert_eq!((&seam[0]["type"], &seam[0]["tool_use_id"]), (&json!("tool_result"), &json!("toolu_1")), "{seam:#?}");
    assert!(seam[0]["content"].to_string().contains("result missing"), "{seam:#?}");
    assert_eq!((&seam[1]["type"], seam.len()), (&json!("image"), 3), "{seam:#?}");
    // Scan counts what is sent: the pasted image and four.png.
    let (v, _) = common::scan_json(&h, &[]);
    let names: Vec<&Value> = v["attachments"].as_array().unwrap().iter().map(|a| &a["name"]).collect();
    assert_eq!(v["attachments"].as_array().unwrap().len(), 2, "{v:#}");
    assert!(names.contains(&&json!("/p/four.png")), "{v:#}");
    // The pasted image is block 1 of the request's message 2 (after the
    // answer Cline gives the first reply's call, whose result was cut).
    let (d, _) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    let prime: Vec<&Value> = d["suspects"].as_array().unwrap().iter().filter(|s| s["prime"] == json!(true)).collect();
    assert_eq!(prime.len(), 1, "{d:#}");
    assert_eq!(prime[0]["origin"], json!("user"), "{d:#}");
}

/// A range Cline would not act on leaves the history whole, as Cline 4 reads
/// it (an end that is no whole number, below 2, at or past the last message,
/// or no range at all); a taskHistory.json that cannot be read is a finding.
#[test]
fn a_range_cline_does_not_act_on_leaves_the_history_whole() {
    let ranges = [
        json!(null),
        json!("2-5"),
        json!([2]),
        json!([2, 1]),
        json!([2, -3]),
        json!([2, 4.5]),
        json!([2, 8]),
        json!([2, 99]),
        json!({"1": 5}),
    ];
    for range in ranges {
        let (_dir, h) = cut_task(Some(range.clone()), "messages.4.content.0.content.1");
        let (d, _) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
        assert_eq!(prime_names(&d), vec![json!("/p/two.png")], "{range}: {d:#}");
        let out = run(&["preview", h.to_str().unwrap(), "--json"]);
        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(body["messages"].as_array().unwrap().len(), 9, "{range}");
    }
    let (dir, h) = cut_task(Some(json!([2, 5])), "messages.4.content.0.content.1");
    std::fs::write(dir.path().join("state/taskHistory.json"), b"[{\"id\":").unwrap();
    let (d, _) = json_of(&["diagnose", h.to_str().unwrap(), "--json"]);
    assert_eq!(prime_names(&d), vec![json!("/p/two.png")], "{d:#}");
    let finding = d["findings"].as_array().unwrap().iter().find(|f| f["code"] == json!("sidecar.unreadable"));
    assert!(finding.is_some_and(|f| f["message"].as_str().unwrap().contains("taskHistory.json")), "{d:#}");
}

/// taskHistory.json is read because of the session: no output may land on it.
#[test]
fn task_history_json_is_an_input_no_output_may_name() {
    let (dir, h) = cut_task(Some(json!([2, 5])), "messages.4.content.0.content.1");
    let state = dir.path().join("state/taskHistory.json");
    let before = std::fs::read(&state).unwrap();
    let out = run(&["preview", h.to_str().unwrap(), "--out", state.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&state).unwrap(), before);
}
