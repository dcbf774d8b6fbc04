//! pi against its own requests: sessions the real pi 0.73.1 wrote and the
//! requests it sent from them (tests/data/agents/pi/, made by the round-trip
//! suite), and the same stories as pi 1.6.0 wrote them (`1.6.0/`: session
//! version 3 with version-7 UUIDs, a `model_change` and a `thinking_level_change`
//! first, pi's system prompt as a `system` message). `preview` must be that request, message by message, and the
//! verdicts must hold for what pi itself does on resume.

use crate::common;

use std::path::{Path, PathBuf};

use common::{json_of, run};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/pi").join(name)
}

/// A copy of a fixture session in its own folder (exclude and repair write beside it).
fn session(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    let to = dir.path().join("2026-12-01T08-00-00-000Z_01a230a8-0861-7751-b652-a311c97c6887.jsonl");
    std::fs::copy(fixture(&format!("{name}.jsonl")), &to).expect("copy the fixture");
    to
}

fn sent(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(fixture(&format!("{name}.sent.json"))).expect("the logged request");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    v["messages"].as_array().expect("messages").clone()
}

/// The request body `preview` writes and its `--json` summary.
fn preview(file: &Path) -> (Value, Value) {
    let out = run(&["preview", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8_lossy(&out.stderr).lines().rfind(|l| l.starts_with('{')).unwrap().to_string();
    (serde_json::from_slice(&out.stdout).expect("a JSON request"), serde_json::from_str(&summary).unwrap())
}

fn diagnose(file: &Path) -> (Value, i32) {
    json_of(&["diagnose", file.to_str().unwrap(), "--json"])
}

/// Where two message lists differ, one line per message.
fn differences(previewed: &[Value], sent: &[Value]) -> Vec<String> {
    (0..previewed.len().max(sent.len()))
        .filter(|&i| previewed.get(i) != sent.get(i))
        .map(|i| format!("messages.{i}:\n  preview {:?}\n  sent    {:?}", previewed.get(i), sent.get(i)))
        .collect()
}

/// The stories both pinned pis ran, as the round-trip suite names their fixtures.
const STORIES: [&str; 9] = [
    "cut-png-stuck",
    "cut-png-repaired",
    "consecutive-users",
    "auto-resize-refused",
    "cut-pdf-as-text",
    "too-many-images",
    "text-only-route",
    "killed-mid-tool",
    "killed-then-user-turn",
];

#[test]
fn preview_is_the_request_pi_sent_from_each_session() {
    assert_preview_is_sent(&STORIES);
}

#[test]
fn preview_is_the_request_pi_1_6_sent_from_each_session() {
    assert_preview_is_sent(&STORIES.map(|name| format!("1.6.0/{name}")));
}

fn assert_preview_is_sent(names: &[impl AsRef<str>]) {
    for name in names {
        let name = name.as_ref();
        let dir = tempfile::tempdir().unwrap();
        let (body, summary) = preview(&session(&dir, name));
        let sent = sent(name);
        // pi's resume appends its prompt: the rest is the session's history.
        let diffs = differences(body["messages"].as_array().unwrap(), &sent[..sent.len() - 1]);
        assert!(diffs.is_empty(), "{name}: preview differs from what pi sent:\n{}", diffs.join("\n"));
        let absent: Vec<&str> =
            summary["not_in_session"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(absent.contains(&"system prompt") && absent.contains(&"tool list"), "{name}: {summary}");
    }
}

#[test]
fn the_block_pi_numbers_after_two_user_turns_is_the_cut_png() {
    // pi sends `hello` and `READ-THE-FILE shot.png` as two messages (its failed
    // first reply is skipped), so the provider's messages.3 is the tool result.
    let dir = tempfile::tempdir().unwrap();
    let (d, code) = diagnose(&session(&dir, "consecutive-users"));
    assert_eq!((code, d["stuck"].as_bool()), (1, Some(true)), "{d:#}");
    let prime = common::primes(&d);
    assert_eq!(prime.len(), 1, "{d:#}");
    assert_eq!((prime[0]["name"].as_str(), prime[0]["named"].as_bool()), (Some("shot.png"), Some(true)), "{d:#}");
    let notes = d["notes"].to_string();
    assert!(!notes.contains("holds no attachment"), "a note says the named block is empty: {notes}");
}

#[test]
fn the_stuck_png_is_excluded_and_preview_is_what_pi_sent_from_the_copy() {
    stuck_png_excluded("");
}

#[test]
fn pi_1_6_the_stuck_png_is_excluded_and_preview_is_what_pi_sent_from_the_copy() {
    stuck_png_excluded("1.6.0/");
}

/// `prefix` is the fixtures' folder (`""` for pi 0.73.1, `"1.6.0/"`).
fn stuck_png_excluded(prefix: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, &format!("{prefix}cut-png-stuck"));
    let path = file.to_str().unwrap();
    let (d, code) = diagnose(&file);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("media_rejected")), "{d:#}");
    let prime = common::primes(&d);
    assert_eq!(prime[0]["named"].as_bool(), Some(true), "{d:#}");
    assert_eq!(run(&["exclude", path, "--suspects"]).status.code(), Some(0));
    // The copy pi resumed (cut-png-repaired) sent this history first.
    let (body, _) = preview(&file);
    let previewed = body["messages"].as_array().unwrap();
    let sent = sent(&format!("{prefix}cut-png-repaired"));
    let diffs = differences(previewed, &sent[..previewed.len()]);
    assert!(diffs.is_empty(), "preview with the exclusion differs from what pi sent:\n{}", diffs.join("\n"));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (rep, code) = json_of(&["repair", path, "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{rep:#}");
    assert_eq!(rep["resume"], format!("pi --session {}", rep["out"].as_str().unwrap()));
    let (d2, code) = diagnose(Path::new(rep["out"].as_str().unwrap()));
    assert_eq!((code, d2["stuck"].as_bool()), (0, Some(false)), "{d2:#}");
}

#[test]
fn a_run_killed_mid_tool_is_healthy_and_repair_leaves_pi_its_own_answer() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, "killed-mid-tool");
    let (d, code) = diagnose(&file);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // Nothing to repair (--force writes the copy anyway, to look at it).
    let (rep, code) = json_of(&["repair", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json", "--force"]);
    assert_eq!(code, 0, "{rep:#}");
    // pi answers the orphaned call itself ("No result provided") on every
    // request; a result written into the copy would change what it sends.
    assert_eq!(rep["changes"]["calls_answered"], serde_json::json!([]), "{rep:#}");
    let (body, _) = preview(Path::new(rep["out"].as_str().unwrap()));
    let sent = sent("killed-mid-tool");
    let previewed = body["messages"].as_array().unwrap();
    assert!(differences(previewed, &sent[..sent.len() - 1]).is_empty(), "{body:#}");
}

#[test]
fn an_orphaned_call_before_a_user_turn_is_not_a_broken_history_for_pi() {
    // pi sent "No result provided" for the killed bash call, then a user turn;
    // the provider refused only the key. The history is not what is broken.
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, "killed-then-user-turn");
    let (d, _) = diagnose(&file);
    assert_eq!(d["history"], serde_json::json!([]), "{d:#}");
    assert_ne!(d["failure"]["class"], "history_invalid", "{d:#}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("answers it itself when it sends") && notes.contains("No result provided"), "{notes}");
    let (scan, code) = common::scan_json(&file, &[]);
    assert_eq!(code, 0, "scan calls pi's orphaned call an error: {scan:#}");
}

#[test]
fn preview_is_the_input_pi_sent_on_the_responses_api() {
    for name in ["responses-reasoning", "1.6.0/responses-reasoning"] {
        preview_is_the_input_sent(name);
    }
}

fn preview_is_the_input_sent(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (body, summary) = preview(&session(&dir, name));
    let text = std::fs::read_to_string(fixture(&format!("{name}.sent.json"))).unwrap();
    let sent: Value = serde_json::from_str(&text).unwrap();
    let sent = sent["input"].as_array().unwrap();
    let diffs = differences(body["input"].as_array().unwrap(), &sent[..sent.len() - 1]);
    assert!(diffs.is_empty(), "preview differs from what pi sent:\n{}", diffs.join("\n"));
    assert!(summary["not_in_session"].to_string().contains("system prompt"), "{summary}");
}

#[test]
fn drop_reasoning_ids_reaches_the_item_pi_serializes_in_thinking_signature() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, "responses-reasoning");
    let path = file.to_str().unwrap();
    let (body, ()) = {
        let out = run(&["preview", path, "--drop-reasoning-ids"]);
        (serde_json::from_slice::<Value>(&out.stdout).expect("JSON"), ())
    };
    let item = body["input"].as_array().unwrap().iter().find(|i| i["type"] == "reasoning").expect("the reasoning item");
    assert!(item.get("id").is_none() && item["encrypted_content"].is_string(), "{item}");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (rep, code) = json_of(&["repair", path, "--drop-reasoning-ids", "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!((code, &rep["changes"]["reasoning_ids_dropped"]), (0, &serde_json::json!(1)), "{rep:#}");
    let copy = std::fs::read_to_string(rep["out"].as_str().unwrap()).unwrap();
    assert!(!copy.contains("rs_"), "the copy still replays an rs_ id: {copy}");
    assert!(copy.contains("encrypted_content"), "the encrypted reasoning stays to replay");
    // The copy still reads as pi, its thinking signature a reasoning item pi can parse.
    let (scan, code) = common::scan_json(Path::new(rep["out"].as_str().unwrap()), &[]);
    assert_eq!((code, scan["format"].as_str()), (0, Some("pi")), "{scan:#}");
}

#[test]
fn pis_own_refusal_is_not_stuck_and_repair_keeps_its_note() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, "auto-resize-refused");
    let (d, code) = diagnose(&file);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (rep, _) = json_of(&["repair", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json", "--force"]);
    let copy = std::fs::read_to_string(rep["out"].as_str().unwrap()).unwrap();
    assert!(copy.contains("[Image omitted: could not be resized below the inline image size limit.]"));
}

/// pi's too-many-images refusal, then a user turn whose reply failed with a
/// 429: the rate limit passes, and pi sends the same three images again (it
/// drops failed replies, not the images), so the session is still stuck on
/// the refusal. Before, the later 429 made it "not stuck: transient", exit 0.
#[test]
fn a_transient_failure_after_a_refusal_does_not_unstick_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, "too-many-images");
    let text = std::fs::read_to_string(&file).unwrap();
    let refusal: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let id = refusal["id"].as_str().unwrap();
    let user = serde_json::json!({"type":"message","id":"ffff0001","parentId":id,"timestamp":"2026-12-01T09:00:00.000Z",
        "message":{"role":"user","content":[{"type":"text","text":"continue"}],"timestamp":1_796_120_000_000u64}});
    let mut limited = refusal.clone();
    limited["id"] = "ffff0002".into();
    limited["parentId"] = "ffff0001".into();
    limited["message"]["errorMessage"] = r#"429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#.into();
    std::fs::write(&file, format!("{text}{user}\n{limited}\n")).unwrap();
    let (d, code) = diagnose(&file);
    assert_eq!(code, 1, "{d:#}");
    assert_eq!(d["stuck"], true, "{d:#}");
    assert_eq!(d["failure"]["class"], "image_limit", "{d:#}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("transient or a cancel"), "{notes}");
}

/// The oversized screenshot Anthropic refused, then `/model openai/gpt-4o`
/// (pi writes a `model_change` entry): pi's next request goes to OpenAI,
/// which takes the image, and its preview is that request. Before, diagnose
/// judged by the refusing provider's rules (stuck, `repair --fit`) and the
/// preview was an Anthropic request to the old model.
#[test]
fn a_model_chosen_after_the_refusal_takes_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, "stuck-oversized-screenshot");
    let text = std::fs::read_to_string(&file).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let change = serde_json::json!({"type":"model_change","id":"dddd0001","parentId":last["id"],
        "timestamp":"2026-12-01T09:00:00.000Z","provider":"openai","modelId":"gpt-4o"});
    let (before, code) = diagnose(&file);
    assert_eq!((code, &before["stuck"]), (1, &Value::Bool(true)), "{before:#}");
    std::fs::write(&file, format!("{text}{change}\n")).unwrap();
    let (d, code) = diagnose(&file);
    assert_eq!((code, &d["stuck"]), (0, &Value::Bool(false)), "{d:#}");
    assert!(d["verdict"].as_str().unwrap().contains("gpt-4o"), "{d:#}");
    let (request, _) = preview(&file);
    assert_eq!(request["model"], "gpt-4o");
    assert!(request["input"].is_array(), "an OpenAI Responses request: {request:#}");
}

/// A route that takes no images (Copilot's proxy after a switch to a text-only
/// model: "image media type not supported") refuses the valid PNG pi read
/// before the switch. Before, diagnose called it `media_rejected` and offered
/// to exclude the valid image (what validation cannot blame); now it is a
/// limit of zero images, the model that refused is named, and the remedy is
/// the image-free copy, whose request carries a note where the image was.
#[test]
fn a_route_that_takes_no_images_is_cured_by_an_image_free_copy() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, "text-only-route");
    let (d, code) = diagnose(&file);
    assert_eq!((code, &d["stuck"]), (1, &Value::Bool(true)), "{d:#}");
    assert_eq!((&d["failure"]["class"], &d["failure"]["limit"]), (&"image_limit".into(), &0.into()), "{d:#}");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(next.iter().any(|n| n.starts_with("session-doctor repair") && n.ends_with("--max-images 0")), "{next:?}");
    assert!(!next.iter().any(|n| n.contains("exclude")), "{next:?}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("claude-sonnet-4-5") && notes.contains("takes no images"), "{notes}");
    let out = run(&["repair", file.to_str().unwrap(), "--max-images", "0", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let rep: Value = serde_json::from_slice(&out.stdout).unwrap();
    let copy = rep["out"].as_str().unwrap();
    let (body, _) = preview(Path::new(copy));
    let kinds: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter_map(|b| b["type"].as_str())
        .collect();
    assert!(!kinds.contains(&"image"), "{kinds:?}");
    let (d, code) = diagnose(Path::new(copy));
    assert_eq!((code, &d["stuck"]), (0, &Value::Bool(false)), "{d:#}");
}

/// Turn 1 on Anthropic, then `pi --provider openai` read a cut PNG: stuck on the
/// Responses API (pi writes no `model_change` for the switch; it resumes on the
/// model of the last assistant message). The repaired copy no longer holds the
/// failed replies that named openai, but its last answer is gpt-5-mini's: its
/// preview is the Responses request pi sent from it (a 200), judged by openai.
/// Before, the copy was previewed as an Anthropic request to claude-sonnet-4-5
/// (the user turns after the reply took the first `model_change`'s provider).
#[test]
fn a_copy_stuck_after_a_provider_switch_is_previewed_for_the_provider_pi_resumes_on() {
    for prefix in ["", "1.6.0/"] {
        let dir = tempfile::tempdir().unwrap();
        let file = session(&dir, &format!("{prefix}provider-switch"));
        let path = file.to_str().unwrap();
        let (d, code) = diagnose(&file);
        assert_eq!((code, d["provider"].as_str()), (1, Some("openai")), "{prefix}: {d:#}");
        assert_eq!(run(&["exclude", path, "--suspects"]).status.code(), Some(0));
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let (rep, code) = json_of(&["repair", path, "--out", out.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{rep:#}");
        let copy = Path::new(rep["out"].as_str().unwrap());
        let (d, code) = diagnose(copy);
        assert_eq!(
            (code, d["provider"].as_str(), d["model"].as_str()),
            (0, Some("openai"), Some("gpt-5-mini")),
            "{prefix}: {d:#}"
        );
        let (body, _) = preview(copy);
        let text = std::fs::read_to_string(fixture(&format!("{prefix}provider-switch-repaired.sent.json"))).unwrap();
        let sent: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body["model"], sent["model"], "{prefix}");
        let sent = sent["input"].as_array().unwrap();
        let previewed =
            body["input"].as_array().unwrap_or_else(|| panic!("{prefix}: not a Responses request: {body:#}"));
        let diffs = differences(previewed, &sent[..sent.len() - 1]);
        assert!(diffs.is_empty(), "{prefix}: preview differs from what pi sent:\n{}", diffs.join("\n"));
    }
}

/// The same session, then a turn branched from before the switch (pi's `/tree`):
/// the path pi resumes holds Anthropic's answer last, so it goes to Anthropic;
/// gpt-5-mini's answers are on the abandoned branch, later in the file. An
/// assistant message names the model of what follows it on its own branch only.
#[test]
fn a_branch_from_before_the_switch_goes_back_to_the_model_of_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(&dir, "provider-switch");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let answer = lines.iter().find(|v| v["message"]["provider"] == "anthropic").expect("turn 1's answer");
    let branch = serde_json::json!({"type":"message","id":"eeee0001","parentId":answer["id"],"timestamp":"2026-12-01T09:00:00.000Z",
        "message":{"role":"user","content":[{"type":"text","text":"again"}],"timestamp":1_796_120_000_000u64}});
    std::fs::write(&file, format!("{text}{branch}\n")).unwrap();
    let (body, _) = preview(&file);
    assert_eq!(body["model"], "claude-sonnet-4-5", "{body:#}");
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(3), "{body:#}");
}
