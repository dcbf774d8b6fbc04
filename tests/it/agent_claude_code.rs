//! Claude Code 2.1.332 as the real agent wrote its sessions (tests/data/agents/claude-code/,
//! captured by `tests/agents/capture_claude_code.py` against the suite's fake provider):
//! what session-doctor says about them and the request it previews must be what the
//! agent does and sends.

use crate::common;

use std::path::{Path, PathBuf};

use common::run;
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/claude-code").join(name)
}

/// The fixture copied into a fresh folder (exclude writes its overlay beside it).
fn copy(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(fixture(name), &to).expect("copy fixture");
    to
}

fn ok_json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What the agent sent (`<fixture>.sent.json`), and preview, in the spellings
/// that mean the same to the provider: a string is one text block, a
/// `cache_control` mark is not history, and only `role` and `content` are the
/// message (Claude Code also puts its per-turn `output_config` on a message).
fn normalise(m: &Value) -> Value {
    fn block(b: &Value) -> Value {
        match b {
            Value::Object(o) => {
                let mut o: serde_json::Map<String, Value> =
                    o.iter().filter(|(k, _)| *k != "cache_control").map(|(k, v)| (k.clone(), block(v))).collect();
                if o.get("type") == Some(&json!("tool_result"))
                    && let Some(Value::String(t)) = o.get("content")
                {
                    let t = t.clone();
                    o.insert("content".into(), json!([{"type": "text", "text": t}]));
                }
                Value::Object(o)
            }
            Value::Array(a) => Value::Array(a.iter().map(block).collect()),
            v => v.clone(),
        }
    }
    let content = match &m["content"] {
        Value::String(t) => json!([{"type": "text", "text": t}]),
        c => block(c),
    };
    json!({"role": m["role"], "content": content})
}

fn assert_preview_is_sent(preview: &Value, sent_fixture: &str) {
    let sent: Value = serde_json::from_str(&std::fs::read_to_string(fixture(sent_fixture)).unwrap()).unwrap();
    let sent: Vec<Value> = sent.as_array().unwrap().iter().map(normalise).collect();
    let shown: Vec<Value> = preview["messages"].as_array().expect("messages").iter().map(normalise).collect();
    for (i, (p, w)) in shown.iter().zip(&sent).enumerate() {
        assert_eq!(p, w, "message {i}: preview (left) is not what Claude Code sent (right)");
    }
    assert_eq!(shown.len(), sent.len(), "preview has {} messages, Claude Code sent {}", shown.len(), sent.len());
}

fn preview(file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["preview", s(file)];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "preview: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("preview is JSON")
}

/// The base64 payloads of every media block in a session's messages.
fn payloads(session: &str) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(d) = o.get("source").and_then(|src| src.get("data")).and_then(Value::as_str) {
                    out.push(d.to_string());
                }
                o.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for l in session.lines() {
        walk(&serde_json::from_str::<Value>(l).unwrap()["message"], &mut out);
    }
    out.retain(|d| d.len() > 40);
    out
}

fn media_blocks(v: &Value) -> usize {
    match v {
        Value::Object(o) => {
            usize::from(matches!(o.get("type").and_then(Value::as_str), Some("image" | "document")))
                + o.values().map(media_blocks).sum::<usize>()
        }
        Value::Array(a) => a.iter().map(media_blocks).sum(),
        _ => 0,
    }
}

/// The cut PNG the suite reads (`lib.cut_png()`: a 16×16 PNG cut inside IDAT), as the session holds it.
const CUT_PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAF0lEQVR4nGP4z8BAEiJN9aiGUQ1DSgMA";

#[test]
fn bookkeeping_records_are_neither_history_nor_damage() {
    // queue-operation, attachment, atis-latch, last-prompt, api-request-shape,
    // api-request-blob, api-request, tools-used, cost-state, mode: all in one session.
    let file = fixture("gateway-png.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    for t in [
        "queue-operation",
        "attachment",
        "atis-latch",
        "last-prompt",
        "api-request-shape",
        "api-request-blob",
        "api-request",
        "tools-used",
        "cost-state",
        "mode",
    ] {
        assert!(text.contains(&format!("\"type\":\"{t}\"")), "the fixture holds a {t} record");
    }
    let (scan, _) = common::scan_json(&file, &[]);
    assert_eq!(scan["format"], "claude-code");
    assert_eq!(scan["findings"], json!([]), "no record is taken for damage");
    // The prompt, the call, the result and the resume's prompt: the failures are not sent.
    let atts = scan["attachments"].as_array().unwrap();
    assert_eq!(atts.len(), 1, "the PNG once: its copies in toolUseResult and api-request-blob are not sent: {scan}");
}

#[test]
fn a_repaired_copy_holds_the_excluded_bytes_nowhere_not_even_in_api_request_blob() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy(dir.path(), "gateway-png.jsonl");
    let before = std::fs::read_to_string(&file).unwrap();
    let blob_lines = before.lines().filter(|l| l.contains("\"api-request-blob\"") && l.contains(CUT_PNG_B64)).count();
    assert_eq!(blob_lines, 1, "the agent logged the PNG in one api-request-blob");
    let (scan, _) = common::scan_json(&file, &[]);
    let a = &scan["attachments"][0];
    assert_eq!(a["mirrors"].as_array().unwrap().len(), 2, "toolUseResult and the blob are the PNG's copies: {a}");
    assert_eq!(run(&["exclude", s(&file), "--suspects"]).status.code(), Some(0));
    let rep = ok_json(&["repair", s(&file), "--out", s(dir.path()), "--json"]);
    let out = std::fs::read_to_string(rep["out"].as_str().unwrap()).unwrap();
    assert!(!out.contains(CUT_PNG_B64), "no line of the copy holds the excluded PNG");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "the original is unchanged");
}

#[test]
fn behind_a_gateway_the_rescue_previews_what_the_agent_then_sends() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy(dir.path(), "gateway-png.jsonl");
    let d = ok_json(&["diagnose", s(&file), "--json"]);
    assert_eq!(d["stuck"], true, "{d}");
    assert_eq!(d["failure"]["class"], "media_rejected", "{d}");
    assert_eq!(run(&["exclude", s(&file), "--suspects"]).status.code(), Some(0));
    // gateway-png.sent.json: what Claude Code sent when it resumed the repaired copy.
    assert_preview_is_sent(&preview(&file, &[]), "gateway-png.sent.json");
}

#[test]
fn the_agents_own_heal_is_not_stuck_and_its_class_comes_from_the_providers_reply() {
    for (name, kind) in [("heal-image.jsonl", "image"), ("heal-pdf.jsonl", "document")] {
        let file = fixture(name);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("\"apiError\":\"media_removed\"") && text.contains("\"healsDistinctCarrier\":true"));
        let d = ok_json(&["diagnose", s(&file), "--json"]);
        assert_eq!(d["stuck"], false, "{name}: the agent healed itself: {d}");
        // The line's text is the agent's paraphrase ("a document in the conversation
        // could not be processed…"); errorDetails holds the provider's reply.
        assert_eq!(d["failure"]["class"], "media_rejected", "{name} ({kind}): {d}");
        assert_eq!(d["failure"]["status"], 400, "{name}: {d}");
    }
}

/// A healed attachment is not in the request the agent sends, so it counts
/// toward no per-request limit, a cap leaves it to its placeholder, and the
/// note says the retry went without it (they said "1 images", and "may have").
#[test]
fn a_healed_attachment_counts_toward_no_request_limit() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    std::fs::write(&rules, r#"{"max_images_per_request": 0}"#).unwrap();
    let file = fixture("heal-image.jsonl");
    let d = ok_json(&["diagnose", s(&file), "--rules", s(&rules), "--json"]);
    assert_eq!(d["limits"], json!([]), "{d:#}");
    let note = d["notes"].to_string();
    assert!(note.contains("the agent put its placeholder in its place"), "{note}");
    assert!(!note.contains("may have sent without it"), "{note}");
    let out = run(&["check", s(&file), "--rules", s(&rules)]);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("request.too_many"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A cap of 0 images leaves the healed one as the agent's placeholder, not a cap note.
    let p = preview(&file, &["--max-images", "0"]);
    assert!(p.to_string().contains("(media removed \u{2014} rejected by API)"), "{p}");
    assert!(!p.to_string().contains("Earlier image omitted"), "{p}");
}

#[test]
fn preview_shows_the_healed_form_the_agent_sends() {
    for name in ["heal-image", "heal-pdf"] {
        let p = preview(&fixture(&format!("{name}.jsonl")), &[]);
        assert_eq!(media_blocks(&p["messages"]), 0, "{name}: the agent no longer sends the media: {p}");
        assert_preview_is_sent(&p, &format!("{name}.sent.json"));
    }
    let p = preview(&fixture("heal-image.jsonl"), &[]);
    assert!(p.to_string().contains("(media removed \u{2014} rejected by API)"), "the agent's placeholder: {p}");
}

#[test]
fn repair_keeps_the_heal_and_never_brings_the_media_back() {
    for name in ["heal-image.jsonl", "heal-pdf.jsonl"] {
        let dir = tempfile::tempdir().unwrap();
        let file = copy(dir.path(), name);
        let rep = ok_json(&["repair", s(&file), "--out", s(dir.path()), "--json"]);
        assert_eq!(rep["changes"]["healed"].as_array().map(Vec::len), Some(1), "{name}: {rep}");
        let out = PathBuf::from(rep["out"].as_str().unwrap());
        let text = std::fs::read_to_string(&out).unwrap();
        let sent: usize = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == "user")
            .map(|v| media_blocks(&v["message"]["content"]))
            .sum();
        assert_eq!(sent, 0, "{name}: no message of the copy carries the media");
        for data in payloads(&std::fs::read_to_string(&file).unwrap()) {
            assert!(!text.contains(&data), "{name}: the healed bytes left every record of the copy");
        }
        // A result the heal empties gets the agent's placeholder; the PDF's keeps its text block.
        let placeholder = text.contains("(media removed \u{2014} rejected by API)");
        assert_eq!(placeholder, name.contains("image"), "{name}: the agent's own placeholder where it puts one");
        let d = ok_json(&["diagnose", s(&out), "--json"]);
        assert_eq!(d["stuck"], false, "{name}: {d}");
        // The copy previews as the original does: the same request.
        assert_eq!(preview(&out, &[])["messages"], preview(&file, &[])["messages"], "{name}");
    }
}

#[test]
fn parallel_tool_results_on_side_branches_are_history() {
    // Claude Code chains each result of a parallel call to the assistant line
    // holding that call: only the last is on the path from the leaf.
    let file = fixture("parallel-images.jsonl");
    let (scan, _) = common::scan_json(&file, &[]);
    assert_eq!(scan["attachments"].as_array().unwrap().len(), 3, "three images are sent: {scan}");
    let d = ok_json(&["diagnose", s(&file), "--json"]);
    assert_eq!(d["failure"]["class"], "image_limit", "{d}");
    assert_eq!(d["history"], json!([]), "every call has its result: {d}");
    let dir = tempfile::tempdir().unwrap();
    let f = copy(dir.path(), "parallel-images.jsonl");
    let rep = ok_json(&["repair", s(&f), "--out", s(dir.path()), "--max-images", "2", "--json"]);
    assert_eq!(rep["changes"]["calls_answered"], json!([]), "no call is answered as interrupted: {rep}");
    assert_eq!(rep["changes"]["capped"].as_array().map(Vec::len), Some(1), "{rep}");
    assert_preview_is_sent(&preview(&file, &["--max-images", "2"]), "parallel-images.sent.json");
}

/// `messages.N.content.M…` of every inline media block, with its sha256.
fn media_paths(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    if let Some(d) = v.pointer("/source/data").and_then(Value::as_str) {
        let bytes = base64::engine::general_purpose::STANDARD.decode(d).unwrap();
        out.push((path.to_string(), format!("{:x}", Sha256::digest(&bytes))));
    }
    if let Some(items) = v.get("content").and_then(Value::as_array) {
        for (i, x) in items.iter().enumerate() {
            media_paths(x, &format!("{path}.content.{i}"), out);
        }
    }
}

#[test]
fn a_block_path_of_the_request_names_the_attachment_at_it() {
    // Claude Code's system messages and moved attachment text shift the
    // provider's numbering: each media block's path in the request the agent
    // sends (preview) must lead diagnose back to that very attachment.
    for name in ["gateway-png.jsonl", "parallel-images.jsonl"] {
        let file = fixture(name);
        let p = preview(&file, &[]);
        let mut paths = Vec::new();
        for (i, m) in p["messages"].as_array().unwrap().iter().enumerate() {
            media_paths(m, &format!("messages.{i}"), &mut paths);
        }
        assert!(!paths.is_empty(), "{name}: the request carries media");
        let (scan, _) = common::scan_json(&file, &[]);
        for (path, sha) in paths {
            let want = scan["attachments"].as_array().unwrap().iter().find(|a| a["sha256"] == sha.as_str()).unwrap();
            let error = format!("{path}.image.source.base64: Could not process image");
            let d = ok_json(&["diagnose", s(&file), "--error", &error, "--json"]);
            let prime: Vec<&Value> = d["suspects"].as_array().unwrap().iter().filter(|x| x["prime"] == true).collect();
            assert_eq!(prime.len(), 1, "{name} {path}: one prime suspect: {d}");
            assert_eq!(prime[0]["ref"], want["ref"], "{name} {path}: the attachment at that path");
        }
    }
}

#[test]
fn a_heal_not_yet_followed_by_an_answer_is_not_stuck_either() {
    // The run stopped right after the agent wrote its media_removed line: the
    // next request (any resume) sends the placeholder, so a retry can work.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("heal-image.jsonl")).unwrap();
    let upto: Vec<&str> =
        text.lines().take(text.lines().position(|l| l.contains("\"media_removed\"")).unwrap() + 1).collect();
    let file = dir.path().join("healed-then-stopped.jsonl");
    std::fs::write(&file, upto.join("\n") + "\n").unwrap();
    let d = ok_json(&["diagnose", s(&file), "--json"]);
    assert_eq!(d["failure"]["class"], "media_rejected", "{d}");
    assert_eq!(d["stuck"], false, "{d}");
    assert!(d["notes"].to_string().contains("healed the rejection itself"), "{d}");
    assert_eq!(media_blocks(&preview(&file, &[])["messages"]), 0, "the next request carries no image");
}

#[test]
fn a_pdf_only_in_tool_use_result_is_not_sent() {
    // pdf-ui-copy.jsonl: the agent's own PDF session with the result spelled as
    // older versions wrote it (a string, the PDF only in `toolUseResult`);
    // resuming it, 2.1.332 sent the string and no document (pdf-ui-copy.sent.json).
    let file = fixture("pdf-ui-copy.jsonl");
    let (scan, _) = common::scan_json(&file, &[]);
    assert_eq!(scan["attachments"], json!([]), "the UI copy is not an attachment the provider sees: {scan}");
    let p = preview(&file, &[]);
    assert_eq!(media_blocks(&p["messages"]), 0);
    assert_preview_is_sent(&p, "pdf-ui-copy.sent.json");
}

#[test]
fn scan_says_what_the_agent_side_copies_and_the_heals_are() {
    let file = fixture("gateway-png.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let blob = 1 + text.lines().position(|l| l.contains("\"api-request-blob\"") && l.contains(CUT_PNG_B64)).unwrap();
    let out = run(&["scan", s(&file)]);
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains(&format!("L22.1 copies: line {blob} holds its bytes again where the agent does not send them")),
        "{said}"
    );
    let (scan, _) = common::scan_json(&file, &[]);
    let lines: Vec<&Value> = scan["attachments"][0]["mirrors"].as_array().unwrap().iter().map(|m| &m["line"]).collect();
    assert!(lines.contains(&&json!(blob)), "--json names the copy's line: {scan}");
    let said = String::from_utf8(run(&["scan", s(&fixture("heal-image.jsonl"))]).stdout).unwrap();
    assert!(said.contains("healed: the agent replaced it with its own placeholder"), "{said}");
}

#[test]
fn preview_names_what_the_agent_adds_from_outside_the_history() {
    // Claude Code sends its system prompt and tool list with every request:
    // preview says it leaves them out rather than leaving them out silently.
    let out = run(&["preview", s(&fixture("heal-image.jsonl")), "--json"]);
    let v: Value = serde_json::from_slice(&out.stderr).expect("--json summary on stderr");
    assert_eq!(v["not_in_session"], json!(["system prompt", "tool list"]), "{v}");
    assert_eq!(v["changes"]["healed"].as_array().map(Vec::len), Some(1), "{v}");
    let out = run(&["preview", s(&fixture("heal-image.jsonl"))]);
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(said.contains("not in the session (the agent adds them): system prompt, tool list"), "{said}");
}

#[test]
fn a_run_killed_mid_tool_is_mended_by_the_agent_and_previewed_as_it_mends_it() {
    let file = fixture("killed-mid-tool.jsonl");
    let d = ok_json(&["diagnose", s(&file), "--json"]);
    assert_eq!(d["stuck"], false, "{d}");
    assert!(d["notes"].as_array().is_some_and(|n| !n.is_empty()), "a note on the unanswered call: {d}");
    // The agent answers the call with its own words on resume: preview says the same.
    assert_preview_is_sent(&preview(&file, &[]), "killed-mid-tool.sent.json");
}

#[test]
fn a_parallel_call_whose_own_line_is_off_the_path_is_history_too() {
    // The last result written answers the second call: the path from the leaf
    // runs through the reply's first two lines only. The third line (same
    // message.id), and the results chained to lines 1 and 3, are sent too.
    let file = fixture("parallel-images-reordered.jsonl");
    let (scan, _) = common::scan_json(&file, &[]);
    assert_eq!(scan["attachments"].as_array().unwrap().len(), 3, "three images are sent: {scan}");
    let d = ok_json(&["diagnose", s(&file), "--json"]);
    assert_eq!(d["failure"]["class"], "image_limit", "{d}");
    assert_eq!(d["history"], json!([]), "every call has its result: {d}");
    let p = preview(&file, &[]);
    let calls: Vec<&Value> = p["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_use")
        .collect();
    assert_eq!(calls.len(), 3, "the reply's three calls are one message: {p}");
    assert_eq!(media_blocks(&p["messages"]), 3);
}

#[test]
fn preview_is_the_request_claude_code_sends_on_each_model_family() {
    // The gateway-png story on claude-opus-5-5 (the default) and on
    // claude-sonnet-4-5, each fixture the session as it was when the agent's
    // own resume sent its first request: preview is that whole request.
    for name in ["model-system-turns", "model-no-system-turns"] {
        let p = preview(&fixture(&format!("{name}.jsonl")), &[]);
        assert_preview_is_sent(&p, &format!("{name}.sent.json"));
    }
}

#[test]
fn on_a_model_before_opus_4_8_reminders_ride_in_the_user_turn() {
    let roles = |name: &str| -> Vec<String> {
        let p = preview(&fixture(name), &[]);
        p["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_string()).collect()
    };
    assert!(roles("model-system-turns.jsonl").contains(&"system".to_string()));
    assert_eq!(roles("model-no-system-turns.jsonl"), ["user", "assistant", "user"]);
    // The reminder written after the tool result is in the result's content, wrapper and all.
    let p = preview(&fixture("model-no-system-turns.jsonl"), &[]);
    let result = &p["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    let texts: Vec<&str> = result["content"].as_array().unwrap().iter().filter_map(|b| b["text"].as_str()).collect();
    assert!(texts.first().is_some_and(|t| t.starts_with("<system-reminder>\n<total_tokens>")), "{texts:?}");
}

#[test]
fn which_models_take_system_turns() {
    use session_doctor::formats::claude_code::request::system_turns;
    for m in [
        "claude-sonnet-4-5",
        "claude-sonnet-4-5-20250929",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "claude-sonnet-4-5@20250929",
        "claude-opus-4-20250514",
        "claude-sonnet-4-20250514",
        "claude-haiku-4-5",
        "claude-opus-4-7",
        "claude-3-7-sonnet-20250219",
    ] {
        assert!(!system_turns(Some(m)), "{m}");
    }
    for m in ["claude-opus-4-8", "claude-opus-5-5", "claude-sonnet-5", "claude-opus-4-8[1m]", "some-gateway-model"] {
        assert!(system_turns(Some(m)), "{m}");
    }
    assert!(system_turns(None), "a session without a model is on the default model");
}
