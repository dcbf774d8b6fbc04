//! Cline CLI 3.0.65 tasks as the real CLI wrote them (tests/data/agents/cline,
//! see its README): a task stuck on a cut PNG its `read_files` read, after
//! Cline's own failed resume, and a task killed mid-tool then resumed.

mod common;

use std::path::{Path, PathBuf};

use common::run;
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

fn json_of(args: &[&str]) -> (Value, i32) {
    let out = run(args);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap())
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
