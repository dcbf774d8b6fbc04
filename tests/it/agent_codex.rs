//! Codex CLI 0.171.0, on rollouts the real agent wrote against the suite's fake
//! provider (`tests/agents/`, trimmed by `tests/agents/trim.py`; see
//! `tests/data/agents/codex/README.md`). Each test pins one thing the agent
//! does that session-doctor must match: where it records a failed turn, what
//! it sends (ids, `status`, image `detail`, arguments as written, the calls it
//! pairs itself), and where it looks for a session to resume.

use crate::common;

use std::path::{Path, PathBuf};

use common::run;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/codex").join(name)
}

/// The fixture copied into `dir/rel` (so that nothing is ever written beside the original).
fn copy_to(name: &str, dir: &Path, rel: &str) -> PathBuf {
    let to = dir.join(rel).join(name);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(fixture(name), &to).unwrap();
    to
}

fn diagnose(file: &Path) -> (Value, i32) {
    let out = run(&["diagnose", "--json", file.to_str().unwrap()]);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("diagnose printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap())
}

/// preview's body and its `--json` summary.
fn preview(file: &Path, extra: &[&str]) -> (Value, Value) {
    let mut args = vec!["preview", "--json", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "preview failed: {}", String::from_utf8_lossy(&out.stderr));
    let body = serde_json::from_slice(&out.stdout).expect("preview is JSON");
    let err = String::from_utf8(out.stderr).unwrap();
    let summary = serde_json::from_str(err.lines().last().unwrap()).expect("the summary is JSON");
    (body, summary)
}

fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The Responses items of the rollout, as written (payloads of `response_item` lines).
fn response_items(file: &Path) -> Vec<Value> {
    lines(file).into_iter().filter(|v| v["type"] == "response_item").map(|v| v["payload"].clone()).collect()
}

fn notes(d: &Value) -> String {
    d["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_turn_that_failed_is_read_from_task_complete_error() {
    // 0.171.0 records "Item with id 'rs_…' not found" only in `task_complete.error`.
    let f = fixture("reasoning-rejected-store-false.jsonl");
    let (d, code) = diagnose(&f);
    assert_eq!(code, 1, "{d:#}");
    assert_eq!(d["stuck"], true, "{d:#}");
    assert_eq!(d["failure"]["class"], "reasoning_rejected", "{d:#}");
    // The status sits inside the `codex_error_info` variant: {"http_connection_failed": {"http_status_code": 404}}.
    assert_eq!(d["failure"]["status"], 404, "{d:#}");
    assert!(
        d["next"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("--drop-reasoning-ids")),
        "{d:#}"
    );
}

#[test]
fn a_turn_that_ended_well_is_no_failure() {
    let (d, code) = diagnose(&fixture("view-image-refused.jsonl"));
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
    assert!(d["failure"].is_null(), "{d:#}");
}

#[test]
fn the_copy_repaired_with_drop_reasoning_ids_is_not_stuck_and_is_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to("reasoning-rejected-store-false.jsonl", dir.path(), "sessions/2026/12/01");
    let out = run(&["repair", "--json", "--drop-reasoning-ids", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = r["id"].as_str().unwrap();
    assert_eq!(r["resume"], format!("codex resume {id}"));
    assert!(r.get("resume_note").is_none(), "a copy beside the original needs nothing more: {r:#}");
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    let meta = &lines(&copy)[0]["payload"];
    assert_eq!((meta["id"].as_str(), meta["session_id"].as_str()), (Some(id), Some(id)), "both ids are the copy's");
    for item in response_items(&copy).iter().filter(|i| i["type"] == "reasoning") {
        assert!(item.get("id").is_none() && item["encrypted_content"].is_string(), "{item}");
    }
    let (d, code) = diagnose(&copy);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
}

/// A copy that changes nothing the failure blames (no exclusion: the
/// provider refused the image) keeps its record of the refusal. It dropped it,
/// and diagnose and check then called the copy healthy though it sends the
/// request the provider refused.
#[test]
fn a_copy_that_answers_nothing_keeps_the_refusal_and_stays_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to("image-refused-by-provider.jsonl", dir.path(), "sessions/2026/12/01");
    let out = run(&["repair", "--json", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "still stuck: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_dir(f.parent().unwrap()).unwrap().count(), 1, "no copy is written");
    let out = run(&["repair", "--json", "--force", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (d, code) = diagnose(Path::new(r["out"].as_str().unwrap()));
    assert_eq!(
        (code, &d["stuck"], &d["failure"]["class"]),
        (1, &Value::Bool(true), &Value::from("media_rejected")),
        "{d:#}"
    );
}

#[test]
fn preview_is_the_items_codex_sends() {
    let f = fixture("reasoning-rejected-store-false.jsonl");
    let (body, summary) = preview(&f, &[]);
    let previewed = body["input"].as_array().unwrap();
    // What Codex re-sends: each item as written, ids, `status`, `detail` and arguments
    // included, without the rollout-only metadata field.
    let mut expected = response_items(&f);
    for item in &mut expected {
        item.as_object_mut().unwrap().remove("internal_chat_message_metadata_passthrough");
    }
    assert_eq!(previewed, &expected);
    let call = previewed.iter().find(|i| i["type"] == "function_call").unwrap();
    assert_eq!(call["arguments"], "{\"path\": \"pic.png\"}", "arguments as written, not re-encoded");
    assert_eq!(call["status"], "completed");
    assert!(call["id"].as_str().unwrap().starts_with("fc_"));
    let output = previewed.iter().find(|i| i["type"] == "function_call_output").unwrap();
    assert_eq!(output["output"][0]["detail"], "high");
    assert!(previewed.iter().all(|i| i.get("internal_chat_message_metadata_passthrough").is_none()));
    let absent = summary["not_in_session"].as_array().unwrap();
    assert!(absent.iter().any(|a| a.as_str().unwrap().contains("leading developer message")), "{summary}");
    assert!(absent.iter().any(|a| a.as_str().unwrap().starts_with("tools")), "{summary}");
}

#[test]
fn preview_with_drop_reasoning_ids_sends_the_reasoning_without_its_id() {
    let (body, _) = preview(&fixture("reasoning-rejected-store-false.jsonl"), &["--drop-reasoning-ids"]);
    let reasoning: Vec<&Value> =
        body["input"].as_array().unwrap().iter().filter(|i| i["type"] == "reasoning").collect();
    assert!(!reasoning.is_empty());
    assert!(reasoning.iter().all(|r| r.get("id").is_none() && r["encrypted_content"].is_string()), "{reasoning:?}");
}

#[test]
fn a_call_killed_mid_tool_is_answered_by_codex_itself() {
    let f = fixture("killed-mid-tool.jsonl");
    let (d, code) = diagnose(&f);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
    assert_eq!(d["history"], serde_json::json!([]), "Codex pairs the call itself: no structural problem");
    assert!(notes(&d).contains("Codex sends \"aborted\""), "{d:#}");
    let (body, _) = preview(&f, &[]);
    let input = body["input"].as_array().unwrap();
    let at = input.iter().position(|i| i["type"] == "function_call").unwrap();
    let call_id = &input[at]["call_id"];
    assert_eq!(
        input[at + 1],
        serde_json::json!({"type": "function_call_output", "call_id": call_id, "output": "aborted"})
    );
}

#[test]
fn an_output_without_its_call_after_an_answer_is_left_out_as_codex_does() {
    // Issue 18 item 12, for Codex: the agent drops an orphaned output before it sends.
    let f = fixture("orphan-output-after-answer.jsonl");
    let (d, code) = diagnose(&f);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
    assert!(notes(&d).contains("Codex leaves it out"), "{d:#}");
    let items = response_items(&f);
    let orphan = items.iter().position(|i| i["type"] == "function_call_output").unwrap();
    assert_eq!(items[orphan - 1]["role"], "assistant", "the fixture's output follows an answer without a call");
    let (body, _) = preview(&f, &[]);
    assert!(!body["input"].as_array().unwrap().iter().any(|i| i["type"] == "function_call_output"), "{body}");
    assert_eq!(body["input"].as_array().unwrap().len(), items.len() - 1);
}

#[test]
fn an_image_codex_refused_itself_is_not_a_suspect_and_stays_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to("view-image-refused.jsonl", dir.path(), "sessions/2026/12/01");
    let (d, _) = diagnose(&f);
    assert_eq!(d["suspects"], serde_json::json!([]), "{d:#}");
    // Nothing to repair (--force writes the copy anyway): the refusal must stay in it.
    let out = run(&["repair", "--json", "--force", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    assert!(
        copy.contains("unable to process image: invalid or unsupported image data") && !copy.contains("data:image")
    );
}

#[test]
fn a_copy_outside_codex_sessions_folder_says_it_must_move_there() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_to("reasoning-rejected-store-false.jsonl", dir.path(), "home/.codex/sessions/2026/12/01");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out =
        run(&["repair", "--json", "--drop-reasoning-ids", "--out", elsewhere.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    assert_eq!(copy.parent().unwrap(), elsewhere);
    let id = r["id"].as_str().unwrap();
    let resume = r["resume"].as_str().unwrap();
    let (mv, then) = resume.split_once(" && ").expect("the resume command moves the copy first");
    assert_eq!(then, format!("codex resume {id}"));
    assert!(mv.starts_with("mv ") && mv.contains(copy.to_str().unwrap()) && mv.contains("sessions/2026/12/01"), "{mv}");
    assert!(r["resume_note"].as_str().unwrap().contains("sessions folder"), "{r:#}");
}

#[test]
fn a_block_path_the_provider_blames_counts_codex_s_leading_developer_message() {
    // The provider's reply to the request Codex sent (logged by the suite's fake provider):
    // input[0] is Codex's own developer message, so input[9] is the session's item 8.
    let f = fixture("image-refused-by-provider.jsonl");
    let reply = r#"{"error": {"message": "The image data you provided does not represent a valid image. Please check your input and try again with one of the supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'].", "type": "invalid_request_error", "param": "input[9].output[0].image_url", "code": "invalid_image_format"}}"#;
    let out = run(&["diagnose", "--json", "--error", reply, f.to_str().unwrap()]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["failure"]["block"], "input[9].output[0]", "{d:#}");
    let prime: Vec<&str> = d["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["prime"] == true)
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(prime, ["bad.png"], "{d:#}");
    // Codex's own record of it: its paraphrase, still a media rejection.
    let (d, code) = diagnose(&f);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("media_rejected")), "{d:#}");
}

/// The compacted rollout the real Codex wrote, its compactions in the older
/// form (no `replacement_history`, as local compaction wrote them): Codex
/// rebuilds the history from its initial context, the text of the earlier
/// user messages and the summary (`build_compacted_history`), so the image
/// the replacement history carried is not sent. The session is not stuck on
/// it, the preview holds the summary as a user message and names what Codex
/// rebuilds, and scan says so. Before, the summary was missing and nothing
/// named what was.
#[test]
fn a_compaction_without_replacement_history_drops_its_images() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_to("compacted-image-carried.jsonl", dir.path(), "sessions/2026/12/01");
    let text: Vec<String> = lines(&file)
        .into_iter()
        .map(|mut v| {
            if v["type"] == "compacted" {
                v["payload"].as_object_mut().unwrap().remove("replacement_history");
            }
            v.to_string()
        })
        .collect();
    std::fs::write(&file, text.join("\n") + "\n").unwrap();
    let (d, code) = diagnose(&file);
    assert_eq!((code, &d["stuck"]), (0, &Value::Bool(false)), "{d:#}");
    let (body, summary) = preview(&file, &[]);
    let first = &body["input"][0];
    assert_eq!((first["role"].as_str(), first["content"][0]["type"].as_str()), (Some("user"), Some("input_text")));
    assert!(first["content"][0]["text"].as_str().unwrap().starts_with("Another language model"), "{body:#}");
    assert!(summary["not_in_session"].to_string().contains("rebuilt history"), "{summary:#}");
    let out = run(&["scan", file.to_str().unwrap(), "--json"]);
    let scan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(scan["findings"].to_string().contains("codex.compaction_rebuilt"), "{scan:#}");
    assert_eq!(scan["attachments"].as_array().unwrap().iter().filter(|a| a["sent"] != false).count(), 0, "{scan:#}");
}

/// Codex 0.171.0 refused for the window (`context_window_exceeded`) marks the
/// window full in its last `token_count` (line 15), and its own resume
/// compacts first and gets a 200 (the round trip's
/// `context_overflow_trimmed`): diagnose does not call that rollout stuck,
/// and says why. The same rollout claims no heal where none was seen: an
/// older Codex, OpenAI's own provider (remote compaction), or no full mark.
#[test]
fn an_overflow_codex_compacts_on_resume_is_not_stuck() {
    let name = "context-overflow-compacts-on-resume.jsonl";
    let (d, code) = diagnose(&fixture(name));
    assert_eq!(
        (code, &d["stuck"], &d["failure"]["class"]),
        (0, &Value::Bool(false), &"context_overflow".into()),
        "{d:#}"
    );
    assert_eq!(
        d["verdict"],
        "not stuck: Codex compacts it on resume: the rollout's last token count (line 15) fills Codex's window (258400 of 258400 tokens), and Codex 0.171.0 compacts such a history before it sends again",
        "{d:#}"
    );
    assert_eq!(d["next"], serde_json::json!([]), "{d:#}");
    assert!(notes(&d).contains("Codex 0.171.0 compacts locally (provider fake)"), "{d:#}");

    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let full_mark = text.lines().nth(14).unwrap();
    assert!(full_mark.contains(r#""total_tokens":258400},"last_token_usage""#), "line 15 is the full mark");
    let without_mark: String = text.lines().filter(|l| *l != full_mark).map(|l| format!("{l}\n")).collect();
    for (what, edited) in [
        ("an older Codex", text.replace(r#""cli_version":"0.171.0""#, r#""cli_version":"0.170.0""#)),
        ("OpenAI's remote compaction", text.replace(r#""model_provider":"fake""#, r#""model_provider":"openai""#)),
        ("no full mark", without_mark),
    ] {
        assert_ne!(edited, text, "{what}: the edit applies");
        let file = dir.path().join("rollout.jsonl");
        std::fs::write(&file, edited).unwrap();
        let (d, code) = diagnose(&file);
        assert_eq!((code, &d["stuck"]), (1, &Value::Bool(true)), "{what}: {d:#}");
        assert!(d["next"].to_string().contains("--fit-context"), "{what}: {d:#}");
    }
}
