//! The history's structure (issue 14, detection): tool calls without results,
//! results without calls, in each format's real shape, with the provider's
//! error recorded and without; and no false positive on healthy sessions.

use crate::common;
use crate::common::media_corpus;

use std::path::{Path, PathBuf};

use common::wrap::{self, FORMATS, Item};
use common::{b64, run, sha256_file, write};
use serde_json::{Value, json};

const ANTHROPIC_ERROR: &str = "messages.4: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01ABC. Each `tool_use` block must have a corresponding `tool_result` block in the next message.";
const OPENAI_ERROR: &str = "No tool output found for function call call_abc123.";

fn lines(v: &[Value]) -> String {
    v.iter().map(|l| l.to_string() + "\n").collect()
}

fn diagnose(file: &Path) -> (Value, i32) {
    let out = run(&["diagnose", "--json", file.to_str().expect("utf-8")]);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("diagnose --json printed no JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr))
    });
    (v, out.status.code().expect("exited"))
}

/// The `history.*` findings of `scan --json`.
fn structural(file: &Path) -> Vec<Value> {
    let (doc, _) = common::scan_json(file, &[]);
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"].as_str().is_some_and(|c| c.starts_with("history.") && !c.starts_with("history.parent")))
        .cloned()
        .collect()
}

fn usage() -> Value {
    json!({"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0})
}

/// Claude Code: a Bash call interrupted, then a new prompt (line 3).
fn claude_code_interrupted() -> String {
    lines(&[
        json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","isSidechain":false,"timestamp":"2026-01-05T10:00:00.000Z",
            "message":{"role":"user","content":"run the tests"}}),
        json!({"type":"assistant","uuid":"a0","parentUuid":"u0","sessionId":"s","isSidechain":false,"timestamp":"2026-01-05T10:00:02.000Z","requestId":"req_1",
            "message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"tool_use","id":"toolu_01ABC","name":"Bash","input":{"command":"cargo test"}}],"stop_reason":"tool_use","usage":usage()}}),
        json!({"type":"user","uuid":"u1","parentUuid":"a0","sessionId":"s","isSidechain":false,"timestamp":"2026-01-05T10:05:00.000Z",
            "message":{"role":"user","content":[{"type":"text","text":"never mind, look at the README instead"}]}}),
    ])
}

/// Codex: a shell call interrupted (`turn_aborted`), then a new prompt.
fn codex_interrupted() -> String {
    lines(&[
        json!({"timestamp":"2026-01-05T10:00:00.000Z","type":"session_meta","payload":{"id":"x","cwd":"/","originator":"codex_cli_rs","cli_version":"0.58.0","model_provider":"openai"}}),
        json!({"timestamp":"2026-01-05T10:00:00.000Z","type":"turn_context","payload":{"cwd":"/","model":"gpt-5-codex","approval_policy":"never","sandbox_policy":{"mode":"read-only"},"summary":"auto"}}),
        json!({"timestamp":"2026-01-05T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run the tests"}]}}),
        json!({"timestamp":"2026-01-05T10:00:03.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"call_abc123","arguments":"{\"command\":[\"cargo\",\"test\"]}"}}),
        json!({"timestamp":"2026-01-05T10:01:00.000Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}),
        json!({"timestamp":"2026-01-05T10:02:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"look at the README instead"}]}}),
    ])
}

/// pi: a bash call interrupted, then a new prompt.
fn pi_interrupted() -> String {
    lines(&[
        json!({"type":"session","version":3,"id":"s","timestamp":"2026-01-05T10:00:00.000Z","cwd":"/"}),
        json!({"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-05T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"run the tests"}],"timestamp":1}}),
        json!({"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-01-05T10:00:03.000Z","message":{"role":"assistant",
            "content":[{"type":"toolCall","id":"toolu_01ABC","name":"bash","arguments":{"command":"cargo test"}}],
            "api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"toolUse","timestamp":2}}),
        json!({"type":"message","id":"00000003","parentId":"00000002","timestamp":"2026-01-05T10:02:00.000Z","message":{"role":"user","content":[{"type":"text","text":"look at the README instead"}],"timestamp":3}}),
    ])
}

/// Checks diagnose's answer for an interrupted call `id` on `line`.
fn assert_interrupted(d: &Value, code: i32, file: &Path, id: &str, line: u64, tool: &str, source: &str) {
    let ctx = serde_json::to_string_pretty(d).unwrap();
    assert_eq!(code, 1, "{ctx}");
    assert_eq!(d["stuck"], true, "{ctx}");
    assert_eq!(d["failure"]["class"], "history_invalid", "{ctx}");
    assert_eq!(d["failure"]["source"], source, "{ctx}");
    let h = d["history"].as_array().expect("history");
    assert_eq!(h.len(), 1, "{ctx}");
    assert_eq!(h[0]["kind"], "call_without_result", "{ctx}");
    assert_eq!(h[0]["code"], "history.call_without_result", "{ctx}");
    assert_eq!(h[0]["call_id"], id, "{ctx}");
    assert_eq!(h[0]["line"], line, "{ctx}");
    assert_eq!(h[0]["tool"], tool, "{ctx}");
    assert_eq!(h[0]["pending"], false, "{ctx}");
    assert!(h[0]["at"].as_str().is_some_and(|a| a.starts_with("2026-01-05T10:00:0")), "{ctx}");
    assert!(d["suspects"].as_array().expect("suspects").is_empty(), "{ctx}");
    let repair = format!("session-doctor repair {}", file.display());
    assert_eq!(d["next"], json!([repair]), "{ctx}");
}

#[test]
fn interrupted_calls_with_the_providers_error_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("claude-code", claude_code_interrupted(), ANTHROPIC_ERROR, "toolu_01ABC", 2, "Bash"),
        ("codex", codex_interrupted(), OPENAI_ERROR, "call_abc123", 4, "shell"),
        // Not pi: it answers an orphaned call itself on every request
        // (`pi_answers_its_interrupted_calls_itself`).
    ];
    for (format, text, error, id, line, tool) in cases {
        let file = write(dir.path(), &format!("{format}-err.jsonl"), &wrap::failed(format, &text, error));
        let before = sha256_file(&file);
        let (d, code) = diagnose(&file);
        assert_interrupted(&d, code, &file, id, line, tool, "recorded");
        assert_eq!(d["history"][0]["named"], true, "{format}: the provider names {id}");
        assert_eq!(d["failure"]["call_ids"], json!([id]), "{format}");
        assert_eq!(sha256_file(&file), before, "{format}: the original is unchanged");
    }
}

/// Codex, Claude Code and pi answer a call the run left without a result
/// themselves when they next send the history (issue 18 item 6): with no
/// error recorded, the cut-off call is a warning, not a stuck session, and
/// `check` passes it with that warning.
#[test]
fn interrupted_calls_without_an_error_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("claude-code", claude_code_interrupted(), "toolu_01ABC", 2, "Bash"),
        // Not Codex: it answers such a call itself ("aborted") when it sends; see
        // tests/it/agent_codex.rs, on a rollout the agent wrote. Not pi: it answers an
        // orphaned call itself on every request (`pi_answers_its_interrupted_calls_itself`).
    ];
    for (format, text, id, line, tool) in cases {
        let file = write(dir.path(), &format!("{format}.jsonl"), &text);
        let (d, code) = diagnose(&file);
        let ctx = serde_json::to_string_pretty(&d).unwrap();
        assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{format}: {ctx}");
        let h = d["history"].as_array().expect("history");
        assert_eq!(h.len(), 1, "{ctx}");
        assert_eq!(
            (&h[0]["call_id"], &h[0]["tool"], &h[0]["agent_pairs"]),
            (&json!(id), &json!(tool), &json!(true)),
            "{ctx}"
        );
        // scan tells it too, with its code, as a warning.
        let f = structural(&file);
        assert_eq!(f.len(), 1, "{format}: {f:?}");
        assert_eq!(f[0]["code"], "history.call_without_result");
        assert_eq!(f[0]["severity"], "warning");
        assert_eq!(f[0]["line"], line);
        let message = f[0]["message"].as_str().unwrap();
        assert!(message.contains(id) && message.contains("answers it itself"), "{format}: {f:?}");
        let out = run(&["check", file.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{format}: {text}");
        assert!(text.contains("history.call_without_result"), "{format}: {text}");
    }
}

#[test]
fn pi_answers_its_interrupted_calls_itself() {
    // pi 0.73.1 sends `No result provided` for a call left without a result
    // (tests/it/agent_pi.rs checks it on sessions the real pi wrote): not stuck,
    // not a scan error, and a note says so.
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "pi.jsonl", &pi_interrupted());
    let (d, code) = diagnose(&file);
    assert_eq!((code, &d["stuck"], &d["history"]), (0, &json!(false), &json!([])), "{d:#}");
    assert!(d["notes"].to_string().contains("toolu_01ABC (line 3) has no result: pi answers it itself"), "{d:#}");
    assert!(structural(&file).is_empty());
    assert_eq!(run(&["scan", file.to_str().unwrap()]).status.code(), Some(0));
}

/// A broken history is blamed on its calls and results, never on an
/// attachment: with none recorded failing, every attachment since the last
/// answer was a suspect, decoded in full and then dropped with the suspects.
/// None is decoded now.
#[test]
fn a_broken_history_decodes_no_suspect() {
    use session_doctor::{diagnose, reader};
    let dir = tempfile::tempdir().unwrap();
    let image = |k: u8| {
        let mut png = media_corpus::png(8, 8);
        png.splice(33..33, media_corpus::png_chunk(b"tEXt", &[b'n', 0, k]));
        json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(&png)}})
    };
    // An answer, then a result whose call is in no message, beside three images.
    let mut content = vec![json!({"type":"tool_result","tool_use_id":"toolu_gone","content":"ok"})];
    content.extend((0..3).map(image));
    let mut text = vec![
        json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","isSidechain":false,"message":{"role":"user","content":"look"}}),
        json!({"type":"assistant","uuid":"a0","parentUuid":"u0","sessionId":"s","isSidechain":false,
            "message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"text","text":"at what?"}],"stop_reason":"end_turn","usage":usage()}}),
        json!({"type":"user","uuid":"u1","parentUuid":"a0","sessionId":"s","isSidechain":false,"message":{"role":"user","content":content}}),
    ];
    let file = write(dir.path(), "s.jsonl", &lines(&text));
    let opts = reader::ReadOptions::default();
    let plan = reader::plan(&file, &opts).unwrap();
    let decoded = std::sync::atomic::AtomicUsize::new(0);
    let deepen = |_: &session_doctor::model::Attachment| {
        decoded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        None
    };
    let judge = |text: &str| {
        std::fs::write(&file, text).unwrap();
        let session = reader::read_with_plan(&file, &opts, &plan, None).unwrap();
        let judging = diagnose::Judging {
            rules: &plan.rules,
            forced: false,
            overrides: None,
            deepen: Some(&deepen),
            source: None,
            single_document: false,
        };
        decoded.store(0, std::sync::atomic::Ordering::Relaxed);
        let d = diagnose::diagnose(session, &judging, &diagnose::DiagnoseOptions::default()).unwrap();
        (
            d.failure.map(|f| f.classification.class.to_string()),
            d.suspects.len(),
            decoded.load(std::sync::atomic::Ordering::Relaxed),
        )
    };
    assert_eq!(judge(&lines(&text)), (Some("history_invalid".into()), 0, 0));
    // Without the orphan, the same images are suspects, and are decoded.
    text[2]["message"]["content"].as_array_mut().unwrap().remove(0);
    let (_, suspects, decoded) = judge(&lines(&text));
    assert_eq!((suspects, decoded), (3, 3));
}

#[test]
fn the_human_report_names_the_orphaned_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "s.jsonl", &wrap::failed("claude-code", &claude_code_interrupted(), ANTHROPIC_ERROR));
    let out = run(&["diagnose", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("history_invalid"), "{text}");
    assert!(text.contains("toolu_01ABC"), "{text}");
    assert!(text.contains("call without result"), "{text}");
    assert!(text.contains(&format!("session-doctor repair {}", file.display())), "{text}");
    assert!(!text.contains("damaged line"), "{text}");
}

/// A result whose call is gone, in the Anthropic, Chat and Responses logs and
/// in Claude Code after a compaction cut between a call and its result.
fn orphan_cases() -> Vec<(&'static str, String, &'static str)> {
    let anthropic = json!({"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[
        {"role":"user","content":"hello"},
        {"role":"assistant","content":[{"type":"text","text":"hi"}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01GONE","content":"ok"},{"type":"text","text":"go on"}]}]});
    let chat = json!({"model":"gpt-4o","messages":[
        {"role":"user","content":"hello"},
        {"role":"assistant","content":"hi"},
        {"role":"tool","tool_call_id":"call_gone","content":"ok"},
        {"role":"user","content":"go on"}]});
    let responses = json!({"model":"gpt-5","input":[
        {"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]},
        {"type":"function_call_output","call_id":"call_gone","output":"ok"},
        {"type":"message","role":"user","content":[{"type":"input_text","text":"go on"}]}]});
    // Claude Code after a compaction that cut between a call and its result.
    let claude = lines(&[
        json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"summary of the earlier conversation"}}),
        json!({"type":"user","uuid":"u1","parentUuid":"u0","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01GONE","content":"ok"}]}}),
    ]);
    vec![
        ("anthropic", lines(&[anthropic]), "toolu_01GONE"),
        ("openai-chat", lines(&[chat]), "call_gone"),
        ("openai-responses", lines(&[responses]), "call_gone"),
        ("claude-code", claude, "toolu_01GONE"),
    ]
}

#[test]
fn orphan_results_in_the_anthropic_and_openai_dialects() {
    let dir = tempfile::tempdir().unwrap();
    let cases = orphan_cases();
    for (format, text, id) in cases {
        let file = write(dir.path(), &format!("{format}.jsonl"), &text);
        let (d, code) = diagnose(&file);
        let ctx = serde_json::to_string_pretty(&d).unwrap();
        assert_eq!(d["format"], format, "{ctx}");
        assert_eq!(code, 1, "{ctx}");
        assert_eq!(d["failure"]["class"], "history_invalid", "{ctx}");
        let h = d["history"].as_array().expect("history");
        assert_eq!(h.len(), 1, "{ctx}");
        assert_eq!(h[0]["kind"], "result_without_call", "{ctx}");
        assert_eq!(h[0]["call_id"], id, "{ctx}");
        let f = structural(&file);
        assert_eq!(f.len(), 1, "{format}: {f:?}");
        assert_eq!(f[0]["code"], "history.result_without_call", "{format}");
    }
}

#[test]
fn healthy_sessions_of_every_format_have_no_structural_finding() {
    let dir = tempfile::tempdir().unwrap();
    let png = b64(&media_corpus::png(8, 8));
    let pdf = b64(&media_corpus::pdf(1));
    let items = [
        Item { base64: &png, mime: "image/png" },
        Item { base64: &png, mime: "image/png" },
        Item { base64: &pdf, mime: "application/pdf" },
    ];
    for format in FORMATS {
        for n in 1..=items.len() {
            let file = write(dir.path(), &format!("{format}-{n}.jsonl"), &wrap::session(format, &items[..n]));
            let f = structural(&file);
            assert!(f.is_empty(), "{format} with {n} items: {f:?}");
            let (d, _) = diagnose(&file);
            assert_eq!(d["history"], json!([]), "{format} with {n} items");
            assert_ne!(d["failure"]["class"], "history_invalid", "{format} with {n} items");
        }
    }
}

#[test]
fn samples_have_no_structural_finding() {
    for name in [
        "anthropic.jsonl",
        "claude-code.jsonl",
        "cline.json",
        "codex.jsonl",
        "gemini-cli.jsonl",
        "gemini.jsonl",
        "mux.jsonl",
        "openai-chat.jsonl",
        "openai-responses.jsonl",
        "opencode.jsonl",
        "pi.jsonl",
    ] {
        let f = structural(&common::sample(name));
        assert!(f.is_empty(), "{name}: {f:?}");
    }
}

/// What is not broken: split assistant lines, parallel calls answered in one
/// message in another order, a call the agent is still running.
#[test]
fn what_is_not_broken() {
    let dir = tempfile::tempdir().unwrap();
    let a = |uuid: &str, parent: &str, id: &str| {
        json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"sessionId":"s","requestId":"req_1",
        "message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
        "content":[{"type":"tool_use","id":id,"name":"Read","input":{"file_path":"/tmp/x"}}],"stop_reason":"tool_use","usage":usage()}})
    };
    let r = |uuid: &str, parent: &str, id: &str| {
        json!({"type":"user","uuid":uuid,"parentUuid":parent,"sessionId":"s",
        "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":id,"content":"ok"}]}})
    };
    let u0 = json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"read both"}});
    let parallel = lines(&[
        u0.clone(),
        json!({"type":"assistant","uuid":"t0","parentUuid":"u0","sessionId":"s","requestId":"req_1",
            "message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"reading"}],"stop_reason":null,"usage":usage()}}),
        a("a1", "t0", "toolu_A"),
        a("a2", "a1", "toolu_B"),
        r("r1", "a2", "toolu_B"),
        r("r2", "r1", "toolu_A"),
    ]);
    let file = write(dir.path(), "parallel.jsonl", &parallel);
    assert!(structural(&file).is_empty(), "{:?}", structural(&file));

    let codex = lines(&[
        json!({"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/","originator":"codex_cli_rs","cli_version":"0.58.0"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"call_A","arguments":"{}"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"call_B","arguments":"{}"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_B","output":"ok"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_A","output":"ok"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}),
    ]);
    let file = write(dir.path(), "codex.jsonl", &codex);
    assert!(structural(&file).is_empty(), "{:?}", structural(&file));

    // Still running: the call is the session's last entry (with the rest of its response).
    let running = lines(&[u0, a("a1", "u0", "toolu_A"), a("a2", "a1", "toolu_B")]);
    let file = write(dir.path(), "running.jsonl", &running);
    let f = structural(&file);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f.iter().all(|f| f["severity"] == "warning" && f["code"] == "history.call_without_result"), "{f:?}");
    let (d, code) = diagnose(&file);
    assert_eq!(code, 0, "{d}");
    assert_eq!(d["stuck"], false, "{d}");
    assert!(d["history"].as_array().unwrap().iter().all(|h| h["pending"] == true), "{d}");
    assert!(d["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("may still be running")), "{d}");
}

/// pi and Codex pair an interrupted call themselves when they send: a later
/// accepted request proves the history was taken, so it is not reported.
#[test]
fn a_later_accepted_request_clears_an_old_gap() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = pi_interrupted();
    text.push_str(
        &(json!({"type":"message","id":"00000004","parentId":"00000003","timestamp":"t","message":{"role":"assistant",
        "content":[{"type":"text","text":"The README says…"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",
        "usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"stop","timestamp":4}})
        .to_string()
            + "\n"),
    );
    let file = write(dir.path(), "pi.jsonl", &text);
    assert!(structural(&file).is_empty(), "{:?}", structural(&file));
    let (d, code) = diagnose(&file);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d}");
}

#[test]
fn an_empty_message_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let chat = json!({"model":"gpt-4o","messages":[
        {"role":"user","content":"hello"},
        {"role":"assistant","content":null},
        {"role":"user","content":"go on"}]});
    let file = write(dir.path(), "chat.jsonl", &lines(&[chat]));
    let f = structural(&file);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["code"], "history.empty_message");
}

#[test]
fn the_calls_the_provider_names_come_first() {
    let dir = tempfile::tempdir().unwrap();
    let a = |uuid: &str, parent: &str, id: &str| {
        json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"sessionId":"s","requestId":"req_1",
        "message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
        "content":[{"type":"tool_use","id":id,"name":"Read","input":{"file_path":"/tmp/x"}}],"stop_reason":"tool_use","usage":usage()}})
    };
    let text = lines(&[
        json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"read both"}}),
        a("a1", "u0", "toolu_01AAA"),
        a("a2", "a1", "toolu_01ABC"),
        json!({"type":"user","uuid":"u1","parentUuid":"a2","sessionId":"s","message":{"role":"user","content":"stop"}}),
    ]);
    let file = write(dir.path(), "s.jsonl", &wrap::failed("claude-code", &text, ANTHROPIC_ERROR));
    let (d, _) = diagnose(&file);
    let ids: Vec<&str> = d["history"].as_array().unwrap().iter().map(|h| h["call_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["toolu_01ABC", "toolu_01AAA"], "{d}");
    assert_eq!(d["history"][0]["named"], true);
    assert_eq!(d["history"][1]["named"], false);
}

/// Formats where one object is the call and its result: a call left without
/// output, followed by a new prompt, is found — but in opencode, which
/// answers it itself.
#[test]
fn unanswered_calls_in_formats_that_keep_call_and_result_together() {
    let dir = tempfile::tempdir().unwrap();
    let gemini = lines(&[
        json!({"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}),
        json!({"id":"u","timestamp":"t1","type":"user","content":[{"text":"run it"}]}),
        json!({"id":"g","timestamp":"t2","type":"gemini","content":"","model":"gemini-2.5-pro",
            "toolCalls":[{"id":"c0","name":"run_shell_command","args":{"command":"make"},"status":"executing"}],"tokens":{"input":1,"output":1,"total":2}}),
        json!({"id":"u2","timestamp":"t3","type":"user","content":[{"text":"stop"}]}),
    ]);
    let info = |id: &str, role: &str| {
        json!({"id":id,"sessionID":"ses_1","role":role,"time":{"created":1},"modelID":"claude-sonnet-4-5","providerID":"anthropic",
        "tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}})
    };
    let opencode = lines(&[
        json!({"info":info("msg_0","user"),"parts":[{"type":"text","text":"run it"}]}),
        json!({"info":info("msg_1","assistant"),"parts":[{"type":"tool","callID":"call_0","tool":"bash","state":{"status":"running","input":{"command":"make"}}}]}),
        json!({"info":info("msg_2","user"),"parts":[{"type":"text","text":"stop"}]}),
    ]);
    let mux = lines(&[
        json!({"id":"m0","role":"user","metadata":{"historySequence":1},"workspaceId":"w","parts":[{"type":"text","text":"run it"}]}),
        json!({"id":"m1","role":"assistant","workspaceId":"w","metadata":{"historySequence":2,"model":"anthropic:claude-sonnet-4-5","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}},
            "parts":[{"type":"dynamic-tool","toolCallId":"call_0","toolName":"bash","input":{"script":"make"},"state":"input-available"}]}),
        json!({"id":"m2","role":"user","metadata":{"historySequence":3},"workspaceId":"w","parts":[{"type":"text","text":"stop"}]}),
    ]);
    // opencode answers a call it never finished itself ("[Tool execution was
    // interrupted]", `toModelMessages`): nothing to report.
    let file = write(dir.path(), "opencode.jsonl", &opencode);
    let (d, code) = diagnose(&file);
    assert_eq!((code, &d["failure"], &d["history"]), (0, &json!(null), &json!([])), "opencode: {d}");
    let out = common::run(&["preview", file.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("[Tool execution was interrupted]"),
        "opencode's answer is sent"
    );
    for (format, text, id, line) in [("gemini-cli", gemini, "c0", 3), ("mux", mux, "call_0", 2)] {
        let file = write(dir.path(), &format!("{format}.jsonl"), &text);
        let (d, code) = diagnose(&file);
        assert_eq!(d["format"], format, "{d}");
        assert_eq!((code, &d["failure"]["class"]), (1, &json!("history_invalid")), "{format}: {d}");
        assert_eq!(d["history"][0]["call_id"], id, "{format}: {d}");
        assert_eq!(d["history"][0]["line"], line, "{format}: {d}");
    }
}

/// Repairs `file` (written even where the agent mends it itself: --force) and
/// returns the copy's path and the report.
fn repair(file: &Path) -> (PathBuf, Value) {
    let out = run(&["repair", "--json", "--force", file.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "repair failed: {}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).expect("repair --json");
    (PathBuf::from(r["out"].as_str().expect("out")), r)
}

/// In a previewed Anthropic or Responses request, every call is answered by the next message(s).
fn calls_paired(v: &Value) -> bool {
    if let Some(input) = v["input"].as_array() {
        return input
            .iter()
            .filter(|i| i["type"] == "function_call")
            .all(|c| input.iter().any(|o| o["type"] == "function_call_output" && o["call_id"] == c["call_id"]));
    }
    let msgs = v["messages"].as_array().expect("messages");
    msgs.iter().enumerate().all(|(i, m)| {
        let calls: Vec<&Value> =
            m["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "tool_use").collect();
        calls.iter().all(|c| {
            msgs.get(i + 1)
                .and_then(|n| n["content"].as_array())
                .is_some_and(|next| next.iter().any(|b| b["type"] == "tool_result" && b["tool_use_id"] == c["id"]))
        })
    })
}

#[test]
fn repair_answers_interrupted_calls_and_the_copy_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("claude-code", claude_code_interrupted(), ANTHROPIC_ERROR),
        ("codex", codex_interrupted(), OPENAI_ERROR),
        ("pi", pi_interrupted(), ANTHROPIC_ERROR),
    ];
    for (format, text, error) in cases {
        // Codex answers an unnamed interrupted call itself (tests/it/agent_codex.rs).
        for recorded in [true, false].into_iter().filter(|r| *r || format != "codex") {
            let text = if recorded { wrap::failed(format, &text, error) } else { text.clone() };
            let file = write(dir.path(), &format!("{format}-{recorded}.jsonl"), &text);
            let before = sha256_file(&file);
            // The preview mends it too, and pairs every call.
            let out = run(&["preview", file.to_str().unwrap()]);
            let v: Value = serde_json::from_slice(&out.stdout).expect("preview JSON");
            assert!(calls_paired(&v), "{format}: preview leaves a call unanswered: {v:#}");
            if let Some(input) = v["input"].as_array() {
                let outputs = input.iter().filter(|i| i["type"] == "function_call_output").count();
                assert_eq!(outputs, 1, "{format}: one output for the one call: {v:#}");
            }
            let (copy, r) = repair(&file);
            assert_eq!(sha256_file(&file), before, "{format}: the original changed");
            // pi answers an orphaned call itself on every request (pi 0.73.1,
            // tests/it/agent_pi.rs): the copy is left for it to answer.
            let (answered, says): (usize, &[u8]) =
                if format == "pi" { (0, b"No result provided") } else { (1, b"[Tool call interrupted: the") };
            assert_eq!(r["changes"]["calls_answered"].as_array().map(Vec::len), Some(answered), "{format}: {r:#}");
            let (doc, code) = common::scan_json(&copy, &[]);
            assert_eq!(doc["format"], format, "{format}: the copy reads as its format");
            assert!(structural(&copy).is_empty(), "{format}: the copy still breaks the rules: {doc:#}");
            assert_eq!(code, 0, "{format}: {doc:#}");
            let (d, code) = diagnose(&copy);
            assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{format}: {d:#}");
            let out = run(&["preview", copy.to_str().unwrap()]);
            let v: Value = serde_json::from_slice(&out.stdout).expect("preview JSON");
            assert!(calls_paired(&v), "{format}: {v:#}");
            assert!(out.stdout.windows(says.len()).any(|w| w == says), "{format}");
        }
    }
}

#[test]
fn repair_removes_orphan_results_in_the_anthropic_and_openai_dialects() {
    let dir = tempfile::tempdir().unwrap();
    for (format, text, id) in orphan_cases() {
        let file = write(dir.path(), &format!("{format}-orphan.jsonl"), &text);
        let (copy, r) = repair(&file);
        assert_eq!(r["changes"]["results_removed"], json!([id]), "{format}: {r:#}");
        let copied = std::fs::read_to_string(&copy).unwrap();
        assert!(!copied.contains(id), "{format}: {copied}");
        assert!(copied.contains("go on") || format == "claude-code", "{format}: other content went with it");
        assert!(structural(&copy).is_empty(), "{format}: {copied}");
        assert_eq!(diagnose(&copy).1, 0, "{format}");
    }
}
