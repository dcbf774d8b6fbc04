//! Verdicts that hold (issue 18): every case where `diagnose`, `check`,
//! `sessions` or `repair` said something untrue of the file, each pinned.

use crate::common;
use crate::common::media_corpus;

use std::path::{Path, PathBuf};

use common::wrap::{self, FORMATS, Item};
use common::{b64, diagnose, run, write};
use serde_json::{Value, json};

/// A PNG cut short inside its image data, as an interrupted download leaves it.
fn cut_png() -> Vec<u8> {
    let png = media_corpus::png(64, 48);
    png[..png.len() * 2 / 3].to_vec()
}

fn sha(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

fn ref_of(file: &Path, bytes: &[u8]) -> String {
    let (doc, _) = common::scan_json(file, &[]);
    let want = sha(bytes);
    doc["attachments"]
        .as_array()
        .expect("attachments")
        .iter()
        .find(|a| a["sha256"] == want.as_str())
        .and_then(|a| a["ref"].as_str())
        .unwrap_or_else(|| panic!("no attachment with those bytes in {doc:#}"))
        .to_string()
}

/// Item 2: with the only invalid attachment excluded, a recorded "Could not
/// process image" blames nothing left; the images the model answered after
/// are no suspects. The agent, which never reads the overlay, stays stuck
/// until it resumes the repaired copy (issue 36, item 1), and that copy is not.
#[test]
fn excluding_the_only_invalid_attachment_leaves_only_the_copy_to_resume_in_every_format() {
    let (image, pdf, cut) = (media_corpus::png(40, 30), media_corpus::pdf(1), cut_png());
    let (image64, pdf64, cut64) = (b64(&image), b64(&pdf), b64(&cut));
    let items = [
        Item { base64: &image64, mime: "image/png" },
        Item { base64: &pdf64, mime: "application/pdf" },
        Item { base64: &cut64, mime: "image/png" },
    ];
    // The same with a cut PDF that "The PDF specified was not valid." blames and
    // a healthy image beside it: excluding the PDF leaves a valid suspect, yet
    // what validation blames is gone and the next request differs.
    let (cut_pdf, shot) = (media_corpus::pdf(2), media_corpus::png(20, 10));
    let cut_pdf = cut_pdf[..cut_pdf.len() / 2].to_vec();
    let (cut_pdf64, shot64) = (b64(&cut_pdf), b64(&shot));
    let pdf_items = [
        Item { base64: &image64, mime: "image/png" },
        Item { base64: &cut_pdf64, mime: "application/pdf" },
        Item { base64: &shot64, mime: "image/png" },
    ];
    let cases =
        [(&items[..], "Could not process image", &cut), (&pdf_items[..], "The PDF specified was not valid.", &cut_pdf)];
    let mut failures = Vec::new();
    for (format, (items, message, broken)) in FORMATS.iter().flat_map(|f| cases.map(|c| (*f, c))) {
        let dir = tempfile::tempdir().unwrap();
        let text = wrap::failed(format, &wrap::session(format, items), message);
        let file = write(dir.path(), "s.jsonl", &text);
        let cut_ref = ref_of(&file, broken);
        let out = run(&["exclude", file.to_str().unwrap(), "--ref", &cut_ref]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        let (d, code) = diagnose(&file, &[]);
        if let Err(e) = common::stuck_until_repaired(&d, code) {
            failures.push(format!("{format} ({message}): {e}"));
        }
        let (copy, code) = diagnose(&repaired_copy(&file), &[]);
        if (code, &copy["stuck"]) != (0, &json!(false)) {
            failures.push(format!("{format} ({message}) copy: {}", copy["verdict"]));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `session` (in `format`) with an accepted text answer appended: the model
/// took every attachment before it.
fn answered(format: &str, session: &str) -> String {
    let mut lines: Vec<Value> = session.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    let last = lines.last().cloned().unwrap_or(Value::Null);
    let line = match format {
        "codex" => json!({"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant",
            "content":[{"type":"output_text","text":"Both images show a login form."}]}}),
        "pi" => {
            json!({"type":"message","id":"000000aa","parentId":last["id"],"timestamp":"t","message":{"role":"assistant",
            "content":[{"type":"text","text":"Both images show a login form."}],"api":"anthropic-messages","provider":"anthropic",
            "model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"stop","timestamp":4}})
        }
        "gemini-cli" => {
            json!({"id":"g2","timestamp":"t","type":"gemini","content":"Both images show a login form.","model":"gemini-2.5-pro",
            "tokens":{"input":1,"output":1,"cached":0,"thoughts":0,"tool":0,"total":2}})
        }
        "anthropic" | "openai-chat" => {
            let msgs = lines[0]["messages"].as_array_mut().expect("messages");
            msgs.push(json!({"role":"assistant","content":"Both images show a login form."}));
            msgs.push(json!({"role":"user","content":"thanks, now fix it"}));
            return lines.iter().map(|l| l.to_string() + "\n").collect();
        }
        "openai-responses" => {
            let input = lines[0]["input"].as_array_mut().expect("input");
            input.push(json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Both images show a login form."}]}));
            input.push(
                json!({"type":"message","role":"user","content":[{"type":"input_text","text":"thanks, now fix it"}]}),
            );
            return lines.iter().map(|l| l.to_string() + "\n").collect();
        }
        "gemini" => {
            let contents = lines[0]["contents"].as_array_mut().expect("contents");
            contents.push(json!({"role":"model","parts":[{"text":"Both images show a login form."}]}));
            contents.push(json!({"role":"user","parts":[{"text":"thanks, now fix it"}]}));
            return lines.iter().map(|l| l.to_string() + "\n").collect();
        }
        other => panic!("no answer shape for {other}"),
    };
    lines.push(line);
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

/// Item 2, as it was seen: a lenient model answered after the cut PNG, then
/// a request was rejected with "Could not process image". The cut PNG is the
/// prime suspect; once it is excluded, the images the model accepted are no
/// suspects, and only the repaired copy is left to resume.
#[test]
fn an_accepted_invalid_image_excluded_leaves_nothing_to_blame() {
    let (image, cut) = (media_corpus::png(40, 30), cut_png());
    let (image64, cut64) = (b64(&image), b64(&cut));
    let items = [Item { base64: &image64, mime: "image/png" }, Item { base64: &cut64, mime: "image/png" }];
    let mut failures = Vec::new();
    for format in ["codex", "pi", "gemini-cli", "anthropic", "openai-chat", "openai-responses", "gemini"] {
        let dir = tempfile::tempdir().unwrap();
        let text = wrap::failed(format, &answered(format, &wrap::session(format, &items)), "Could not process image");
        let file = write(dir.path(), "s.jsonl", &text);
        let cut_ref = ref_of(&file, &cut);
        let (d, code) = diagnose(&file, &[]);
        let primes = common::prime_refs(&d);
        if code != 1 || primes != [cut_ref.as_str()] {
            failures.push(format!("{format} before: {} primes {primes:?}, want [{cut_ref}]", d["verdict"]));
        }
        let out = run(&["exclude", file.to_str().unwrap(), "--ref", &cut_ref]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        let (d, code) = diagnose(&file, &[]);
        if let Err(e) = common::stuck_until_repaired(&d, code) {
            failures.push(format!("{format} after: {e}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The copy `repair` writes of `file`.
fn repaired_copy(file: &Path) -> PathBuf {
    let (r, code) = common::json_of(&["repair", "--json", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    PathBuf::from(r["out"].as_str().expect("out"))
}

/// A data URL of `bytes` as a PNG.
fn png_url(bytes: &[u8]) -> String {
    format!("data:image/png;base64,{}", b64(bytes))
}

/// A Codex rollout as Codex 0.58 writes it: the initial context items, a
/// `view_image` that returned a cut PNG, the 400 naming it, and a retry. Codex
/// records its undo snapshots (`ghost_snapshot`) among the items but never
/// sends them: one lands between the call and its output, one after the retry.
fn codex_rejected_rollout(cut: &[u8]) -> String {
    // Codex sends a developer message of its own ahead of the rollout's items
    // (tests/it/agent_codex.rs, on what 0.171.0 sent): the output is input[7].
    let error = json!({"error":{"message":"Invalid image data: the image at input[7].output[0].image_url could not be decoded.",
        "type":"invalid_request_error","param":"input[7].output[0].image_url","code":"invalid_image_format"}});
    let ghost = |id: &str| {
        json!({"timestamp":"2026-11-20T10:00:05.000Z","type":"response_item","payload":{"type":"ghost_snapshot",
        "ghost_commit":{"id":id,"parent":"a1b2c3d4","preexisting_untracked_files":[],"preexisting_untracked_dirs":[]}}})
    };
    let failed = json!({"timestamp":"2026-11-20T10:00:06.000Z","type":"event_msg","payload":{"type":"error",
        "message":format!("unexpected status 400 Bad Request: {error}")}});
    let lines = [
        json!({"timestamp":"2026-11-20T10:00:00.000Z","type":"session_meta","payload":{"id":"019a8b2c-3d4e-7f50-8a6b-7c8d9e0f1a2b",
            "timestamp":"2026-11-20T10:00:00.000Z","cwd":"/home/dev/shop","originator":"codex_cli_rs","cli_version":"0.58.0","source":"cli","model_provider":"openai"}}),
        json!({"timestamp":"2026-11-20T10:00:00.100Z","type":"response_item","payload":{"type":"message","role":"developer",
            "content":[{"type":"input_text","text":"<permissions instructions>approval policy: on-request</permissions instructions>"}]}}),
        json!({"timestamp":"2026-11-20T10:00:00.200Z","type":"response_item","payload":{"type":"message","role":"user",
            "content":[{"type":"input_text","text":"<user_instructions>Run the tests before you finish.</user_instructions>"}]}}),
        json!({"timestamp":"2026-11-20T10:00:00.300Z","type":"response_item","payload":{"type":"message","role":"user",
            "content":[{"type":"input_text","text":"<environment_context><cwd>/home/dev/shop</cwd></environment_context>"}]}}),
        json!({"timestamp":"2026-11-20T10:00:01.000Z","type":"turn_context","payload":{"cwd":"/home/dev/shop","approval_policy":"on-request",
            "sandbox_policy":{"mode":"workspace-write"},"model":"gpt-5-codex","effort":"medium","summary":"auto"}}),
        json!({"timestamp":"2026-11-20T10:00:02.000Z","type":"response_item","payload":{"type":"message","role":"user",
            "content":[{"type":"input_text","text":"What does tmp/chart.png show?"}]}}),
        json!({"timestamp":"2026-11-20T10:00:02.100Z","type":"event_msg","payload":{"type":"user_message","message":"What does tmp/chart.png show?","images":[]}}),
        json!({"timestamp":"2026-11-20T10:00:03.000Z","type":"response_item","payload":{"type":"reasoning","summary":[],"content":null,"encrypted_content":"gAAAAABpQ3Zk"}}),
        json!({"timestamp":"2026-11-20T10:00:04.000Z","type":"response_item","payload":{"type":"function_call","name":"view_image",
            "arguments":"{\"path\":\"/home/dev/shop/tmp/chart.png\"}","call_id":"call_Vx81"}}),
        ghost("5f0e7c1a"),
        json!({"timestamp":"2026-11-20T10:00:05.500Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_Vx81",
            "output":[{"type":"input_image","image_url":png_url(cut)}]}}),
        failed.clone(),
        json!({"timestamp":"2026-11-20T10:01:00.000Z","type":"response_item","payload":{"type":"message","role":"user",
            "content":[{"type":"input_text","text":"try again"}]}}),
        json!({"timestamp":"2026-11-20T10:01:00.100Z","type":"event_msg","payload":{"type":"user_message","message":"try again","images":[]}}),
        ghost("9c2d4e6f"),
        failed,
    ];
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

/// Item 1: Codex's undo snapshots are neither sent nor an answer. Counted as
/// both, they moved the acceptance boundary past the cut PNG and the request
/// numbering off by one, and a recorded 400 naming the PNG read "not stuck".
#[test]
fn a_codex_400_naming_an_invalid_image_is_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let cut = cut_png();
    let file = write(
        dir.path(),
        "rollout-2026-11-20T10-00-00-019a8b2c-3d4e-7f50-8a6b-7c8d9e0f1a2b.jsonl",
        &codex_rejected_rollout(&cut),
    );
    let cut_ref = ref_of(&file, &cut);
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{d:#}");
    let first = &d["suspects"][0];
    assert_eq!(
        (first["ref"].as_str(), &first["named"], &first["prime"]),
        (Some(cut_ref.as_str()), &json!(true), &json!(true)),
        "{d:#}"
    );
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(next[0].ends_with(&format!("--ref {cut_ref}")), "{next:?}");
    let out = run(&["check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "check passed it: {}", String::from_utf8_lossy(&out.stdout));
}

/// Item 1, the rule: a named block that maps to no attachment is said so, and
/// the suspects widen; a failed mapping never reads "not stuck". Claude Code
/// sends this real-shaped session's screenshot at messages.4.content.0.content.1;
/// the error names messages.3, an assistant message.
#[test]
fn a_named_block_that_maps_to_nothing_widens_the_suspects() {
    let dir = tempfile::tempdir().unwrap();
    let shot = media_corpus::png(30, 20);
    let usage =
        json!({"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0});
    let lines = [
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","isSidechain":false,"userType":"external","cwd":"/w","version":"2.1.38",
            "message":{"role":"user","content":"open the page and take a screenshot"}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","isSidechain":false,"version":"2.1.38","requestId":"req_1",
            "message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5-20251101",
            "content":[{"type":"tool_use","id":"toolu_1","name":"mcp__chrome-devtools__take_screenshot","input":{}}],"stop_reason":"tool_use","usage":usage}}),
        json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","isSidechain":false,"version":"2.1.38",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[
                {"type":"text","text":"Took a screenshot of the current page."},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(&shot)}}]}]}}),
        json!({"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":"s","isSidechain":false,"version":"2.1.38","requestId":"req_2",
            "message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5-20251101",
            "content":[{"type":"text","text":"The page shows a login form."}],"stop_reason":"end_turn","usage":usage}}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    let file = write(dir.path(), "0b6f8a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", &text);
    let error = "messages.3.content.0.content.0.image.source.base64: image exceeds 5 MB maximum";
    let (d, code) = diagnose(&file, &["--error", error]);
    assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{d:#}");
    let notes: Vec<&str> = d["notes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(!notes.iter().any(|n| n.contains("a repaired copy carries a note")), "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("messages.3.content.0.content.0") && n.contains("no attachment")),
        "{notes:?}"
    );
    assert_eq!(d["suspects"].as_array().unwrap().len(), 1, "{d:#}");
    assert!(!d["next"].as_array().unwrap().is_empty(), "{d:#}");
}

/// A Claude Code session whose pasted image is `image` (a payload block), answered.
fn claude_code_answered(image: &Value) -> String {
    let usage =
        json!({"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0});
    let lines = [
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","isSidechain":false,"userType":"external","cwd":"/w","version":"2.1.38",
            "message":{"role":"user","content":[{"type":"text","text":"what is this chart?"},image]}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","isSidechain":false,"version":"2.1.38","requestId":"req_1",
            "message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"text","text":"A bar chart of sales."}],"stop_reason":"end_turn","usage":usage}}),
    ];
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

/// Item 5: an invalid attachment the model accepted is no reason to call the
/// session stuck, but "nothing the next request carries is invalid" is untrue:
/// the verdict names it and the answer that accepted it. The same for a
/// redacted image URL.
#[test]
fn healthy_names_the_invalid_attachment_the_model_accepted() {
    let cut = cut_png();
    let blocks = [
        json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(&cut)}}),
        json!({"type":"image","source":{"type":"url","url":"[REDACTED]"}}),
    ];
    for block in blocks {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "0b6f8a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", &claude_code_answered(&block));
        let (scan, scan_code) = common::scan_json(&file, &[]);
        assert_eq!((scan_code, &scan["attachments"][0]["verdict"]), (1, &json!("invalid")), "{scan:#}");
        let (d, code) = diagnose(&file, &[]);
        assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
        let verdict = d["verdict"].as_str().unwrap();
        assert!(!verdict.contains("nothing the next request carries is invalid"), "{verdict}");
        assert!(verdict.contains("L1.1 is invalid") && verdict.contains("accepted it at line 2"), "{verdict}");
        assert_eq!(d["accepted_invalid"][0]["ref"], "L1.1", "{d:#}");
    }
}

/// Runs `check --output-format json` and parses it.
fn check_json(file: &Path, extra: &[&str]) -> (Value, i32) {
    let mut args = vec!["check", "--output-format", "json"];
    args.extend_from_slice(extra);
    args.push(file.to_str().expect("utf-8"));
    let out = run(&args);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("check printed no JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().expect("exited"))
}

/// Item 6: `check` gates content. An invalid attachment a lenient model once
/// accepted fails it (and the problem says it was accepted) unless `--allow`
/// names its code.
#[test]
fn check_fails_invalid_media_a_lenient_model_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let block = json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(&cut_png())}});
    let file = write(dir.path(), "0b6f8a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", &claude_code_answered(&block));
    let (c, code) = check_json(&file, &[]);
    assert_eq!((code, &c["ok"]), (1, &json!(false)), "{c:#}");
    let p = &c["sessions"][0]["problems"][0];
    assert_eq!((p["ref"].as_str(), p["severity"].as_str()), (Some("L1.1"), Some("error")), "{c:#}");
    assert!(p["message"].as_str().unwrap().contains("accepted it at line 2"), "{c:#}");
    let code_name = p["code"].as_str().unwrap().to_string();
    let (c, code) = check_json(&file, &["--allow", &code_name]);
    assert_eq!((code, &c["ok"]), (0, &json!(true)), "{c:#}");
}

/// Item 12: a result without its call, right after an assistant turn that made
/// no call, in small Claude Code and Codex sessions that went on: the provider
/// rejects it, and a later answer excuses nothing.
#[test]
fn a_result_without_its_call_after_a_turn_without_calls_is_found() {
    let usage =
        json!({"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0});
    let answer = |uuid: &str, parent: &str, id: &str, text: &str| {
        json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"sessionId":"s","isSidechain":false,"version":"2.1.38","requestId":format!("req_{id}"),
            "message":{"id":id,"type":"message","role":"assistant","model":"claude-sonnet-4-5",
            "content":[{"type":"text","text":text}],"stop_reason":"end_turn","usage":usage}})
    };
    let claude = [
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","isSidechain":false,"version":"2.1.38","message":{"role":"user","content":"hi"}}),
        answer("a1", "u1", "msg_1", "Hello."),
        json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","isSidechain":false,"version":"2.1.38",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01GONE","content":"ok"}]}}),
        answer("a2", "u2", "msg_2", "Done."),
        json!({"type":"user","uuid":"u3","parentUuid":"a2","sessionId":"s","isSidechain":false,"version":"2.1.38","message":{"role":"user","content":"thanks"}}),
    ];
    let item =
        |payload: Value| json!({"timestamp":"2026-11-20T10:00:01.000Z","type":"response_item","payload":payload});
    let codex = [
        json!({"timestamp":"2026-11-20T10:00:00.000Z","type":"session_meta","payload":{"id":"019a","timestamp":"2026-11-20T10:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.58.0","model_provider":"openai"}}),
        json!({"timestamp":"2026-11-20T10:00:00.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex","approval_policy":"never","sandbox_policy":{"mode":"read-only"},"summary":"auto"}}),
        item(json!({"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]})),
        item(json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello."}]})),
        item(json!({"type":"function_call_output","call_id":"call_GONE","output":"ok"})),
        item(json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]})),
        item(json!({"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]})),
    ];
    // Codex itself leaves an output without its call out of what it sends (it
    // resumes such a rollout with a 200: tests/it/agent_codex.rs), so there it is no
    // problem; the rollout stays here to say so.
    let (dir, text) = (tempfile::tempdir().unwrap(), codex.iter().map(|l| l.to_string() + "\n").collect::<String>());
    let (d, code) = diagnose(&write(dir.path(), "rollout.jsonl", &text), &[]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "codex: {d:#}");
    // Claude Code sends it as recorded: the provider rejects it.
    let dir = tempfile::tempdir().unwrap();
    let text: String = claude.iter().map(|l| l.to_string() + "\n").collect();
    let file = write(dir.path(), "claude.jsonl", &text);
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{d:#}");
    assert_eq!(d["history"][0]["kind"], "result_without_call", "{d:#}");
    assert_eq!(d["history"][0]["call_id"], "toolu_01GONE", "{d:#}");
    let (_, scan_code) = common::scan_json(&file, &[]);
    assert_eq!(scan_code, 1);
    let (c, check_code) = check_json(&file, &[]);
    assert_eq!(check_code, 1, "{c:#}");
}

/// Claude Code 2.1.38 running two tools of one response in parallel: one
/// assistant line per `tool_use` (sharing `message.id`), each result on a line
/// whose parent is the line of its own call. The first call's result (the user
/// refused it) hangs off the first assistant line, a sibling of the second:
/// walking parents back from the leaf never meets it.
fn claude_code_parallel_calls() -> String {
    let usage = json!({"input_tokens":1200,"output_tokens":85,"cache_creation_input_tokens":0,"cache_read_input_tokens":9000,"service_tier":"standard"});
    let base = |uuid: &str, parent: Option<&str>, ts: &str| {
        json!({"parentUuid":parent,"isSidechain":false,"userType":"external","cwd":"/home/dev/shop","sessionId":"0b6f8a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b",
            "version":"2.1.38","gitBranch":"main","uuid":uuid,"timestamp":ts})
    };
    let with = |mut line: Value, extra: Value| {
        for (k, v) in extra.as_object().unwrap() {
            line[k] = v.clone();
        }
        line
    };
    let call = |uuid: &str, parent: &str, ts: &str, block: Value| {
        with(
            base(uuid, Some(parent), ts),
            json!({"type":"assistant","requestId":"req_011CVq8mS1",
            "message":{"id":"msg_01XbQ7","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
            "content":[block],"stop_reason":null,"stop_sequence":null,"usage":usage}}),
        )
    };
    let refused = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
    let lines = [
        with(
            base("u1", None, "2026-11-20T10:00:00.000Z"),
            json!({"type":"user","message":{"role":"user","content":"clean the build and show me the config"}}),
        ),
        call(
            "a1",
            "u1",
            "2026-11-20T10:00:03.000Z",
            json!({"type":"tool_use","id":"toolu_01Bash","name":"Bash","input":{"command":"rm -rf build","description":"Remove the build folder"}}),
        ),
        call(
            "a2",
            "a1",
            "2026-11-20T10:00:03.400Z",
            json!({"type":"tool_use","id":"toolu_01Read","name":"Read","input":{"file_path":"/home/dev/shop/config.toml"}}),
        ),
        with(
            base("r1", Some("a1"), "2026-11-20T10:00:09.000Z"),
            json!({"type":"user",
            "message":{"role":"user","content":[{"type":"tool_result","content":refused,"is_error":true,"tool_use_id":"toolu_01Bash"}]},
            "toolUseResult":"Error: The user doesn't want to proceed with this tool use.","sourceToolAssistantUUID":"a1"}),
        ),
        with(
            base("r2", Some("a2"), "2026-11-20T10:00:09.100Z"),
            json!({"type":"user",
            "message":{"role":"user","content":[{"tool_use_id":"toolu_01Read","type":"tool_result","content":"     1\t[build]\n     2\tjobs = 4\n"}]},
            "toolUseResult":{"type":"text","file":{"filePath":"/home/dev/shop/config.toml","content":"[build]\njobs = 4\n","numLines":2,"startLine":1,"totalLines":2}},
            "sourceToolAssistantUUID":"a2"}),
        ),
        with(
            base("u2", Some("r2"), "2026-11-20T10:00:10.000Z"),
            json!({"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}),
        ),
        with(
            base("u3", Some("u2"), "2026-11-20T10:00:20.000Z"),
            json!({"type":"user","message":{"role":"user","content":"keep the build, just show the config"}}),
        ),
    ];
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

/// Item 3: parallel calls are paired as Claude Code pairs them (the split lines
/// of one message, with the results on their sibling branches); `repair` keeps
/// the recorded result and invents none.
#[test]
fn claude_code_parallel_calls_keep_their_recorded_results() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "0b6f8a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", &claude_code_parallel_calls());
    let (scan, _) = common::scan_json(&file, &[]);
    let structural: Vec<&Value> = scan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"].as_str().is_some_and(|c| c.starts_with("history.")))
        .collect();
    assert!(structural.is_empty(), "{structural:#?}");
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    assert!(d["history"].as_array().unwrap().is_empty(), "{d:#}");

    let out_dir = tempfile::tempdir().unwrap();
    // Nothing needs repair (so --force); the copy must keep every recorded result.
    let out = run(&["repair", "--json", "--force", file.to_str().unwrap(), "--out", out_dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["changes"]["calls_answered"], json!([]), "{r:#}");
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    assert!(copy.contains("The user doesn't want to proceed with this tool use"), "the recorded result is kept");
    assert!(!copy.contains("Tool call interrupted"), "no invented result: {copy}");
}

/// Item 7: in a one-document session (Cline's `api_conversation_history.json`
/// is one line) every attachment has its own ref, and `scan --ref`,
/// `exclude --suspects` and `repair` all mean the same one.
#[test]
fn one_document_refs_name_one_attachment_each() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("api_conversation_history.json");
    std::fs::copy(common::sample("cline.json"), &file).unwrap();
    let (doc, _) = common::scan_json(&file, &[]);
    let atts = doc["attachments"].as_array().unwrap();
    let refs: Vec<&str> = atts.iter().filter_map(|a| a["ref"].as_str()).collect();
    assert_eq!(refs.len(), 2);
    assert_ne!(refs[0], refs[1], "{refs:?}");
    let broken = atts.iter().find(|a| a["verdict"] == "invalid").unwrap();
    let (broken_ref, broken_sha) = (broken["ref"].as_str().unwrap(), broken["sha256"].as_str().unwrap());
    let (one, _) = common::scan_json(&file, &["--ref", broken_ref]);
    assert_eq!(one["attachments"].as_array().unwrap().len(), 1, "{one:#}");
    assert_eq!(one["attachments"][0]["sha256"], broken_sha);

    let out = run(&["exclude", file.to_str().unwrap(), "--suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let overlay = std::fs::read_to_string(dir.path().join("api_conversation_history.json.doctor")).unwrap();
    assert!(overlay.contains(broken_sha), "exclude recorded another attachment: {overlay}");
    assert_eq!(overlay.matches("sha256").count(), 1, "{overlay}");

    let out_dir = tempfile::tempdir().unwrap();
    let out = run(&["repair", "--json", file.to_str().unwrap(), "--out", out_dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["changes"]["excluded"], json!([broken_ref]), "{r:#}");
    let (copy, code) = common::scan_json(Path::new(r["out"].as_str().unwrap()), &[]);
    assert_eq!(code, 0, "{copy:#}");
    assert_eq!(copy["attachments"].as_array().unwrap().len(), 1, "{copy:#}");
    assert_eq!(copy["attachments"][0]["verdict"], "ok", "{copy:#}");
}

/// Item 10: a value no command can use is a usage error at parse time, from the
/// one vocabulary, never "no session found"; and a walk passes over a file
/// only when it is not a session.
#[test]
fn unknown_values_are_usage_errors_not_missing_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let items = [Item { base64: &b64(&media_corpus::png(8, 8)), mime: "image/png" }];
    write(dir.path(), "s.jsonl", &wrap::session("codex", &items));
    write(dir.path(), "notes.txt", "not a session\n");
    let d = dir.path().to_str().unwrap();
    let cases: [&[&str]; 4] = [
        &["check", "--provider", "bogus", d],
        &["scan", "--provider", "bogus", d],
        &["diagnose", "--agent", "bogus", "--latest"],
        &["classify", "--provider", "bogus", "Could not process image"],
    ];
    for args in cases {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("bogus") && (err.contains("unknown provider") || err.contains("unknown agent")),
            "{args:?}: {err}"
        );
        assert!(!err.contains("no session found") && !err.contains("no bogus session"), "{args:?}: {err}");
    }
    // A model no provider is known for fails every file alike: told, not skipped.
    let out = run(&["check", "--model", "llama-3", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot tell which provider serves model `llama-3`"), "{err}");
    assert!(!err.contains("no session found"), "{err}");
    // The aliases the two tables disagreed on mean one provider everywhere.
    for (alias, want) in [("amazon_bedrock", "bedrock"), ("Amazon Bedrock", "bedrock"), ("vertex_ai", "vertex-gemini")]
    {
        let out = run(&["classify", "--json", "--provider", alias, "Could not process image"]);
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{alias}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(v["provider"], want, "{alias}");
        let out = run(&["scan", "--json", "--provider", alias, &format!("{d}/s.jsonl")]);
        assert_eq!(out.status.code(), Some(0), "{alias}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// Item 9: next commands read the session this one read. `diagnose opencode.db
/// --session ses_new` (and the newest-at-the-time choice) must not suggest
/// commands that read `ses_newer`; the read flags are repeated; `repair`,
/// which refuses stores, is not suggested.
#[test]
fn next_commands_repeat_the_settings_actually_used() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode.db");
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(common::OPENCODE_SCHEMA).unwrap();
    db.execute("INSERT INTO project VALUES ('prj_1','/w','git','w',NULL,NULL,1,1,NULL,'[]')", []).unwrap();
    let session = |id: &str, updated: i64| {
        db.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?1,'prj_1','s','/w','t','1.2.3',1,?2)",
            rusqlite::params![id, updated],
        )
        .unwrap();
    };
    let message = |ses: &str, id: &str, n: i64, info: Value, parts: Vec<Value>| {
        db.execute("INSERT INTO message VALUES (?1,?2,?3,?3,?4)", rusqlite::params![id, ses, n, info.to_string()])
            .unwrap();
        for (k, p) in parts.into_iter().enumerate() {
            db.execute(
                "INSERT INTO part VALUES (?1,?2,?3,?4,?4,?5)",
                rusqlite::params![format!("prt_{id}_{k}"), id, ses, n, p.to_string()],
            )
            .unwrap();
        }
    };
    session("ses_new", 20);
    let user = json!({"role":"user","time":{"created":1},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}});
    message(
        "ses_new",
        "msg_01",
        1,
        user.clone(),
        vec![
            json!({"type":"text","text":"what is wrong here?"}),
            json!({"type":"file","mime":"image/png","filename":"shot.png","url":png_url(&cut_png())}),
        ],
    );
    message(
        "ses_new",
        "msg_02",
        2,
        json!({"role":"assistant","time":{"created":2},"parentID":"msg_01","modelID":"claude-sonnet-4-5","providerID":"anthropic",
        "mode":"build","agent":"build","path":{"cwd":"/w","root":"/w"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},
        "error":{"name":"APIError","data":{"message":"Could not process image","statusCode":400,"isRetryable":false}}}),
        vec![],
    );
    let (d, code) =
        diagnose(&path, &["--session", "ses_new", "--provider", "anthropic", "--model", "claude-sonnet-4-5"]);
    assert_eq!(code, 1, "{d:#}");
    let next: Vec<String> =
        d["next"].as_array().unwrap().iter().filter_map(|c| c.as_str().map(str::to_string)).collect();
    // A store's session goes through its export: the export names the
    // session, the commands on the export repeat the rules flags.
    assert_eq!(next[0], "opencode export ses_new > ses_new.json", "{next:?}");
    assert!(next.len() > 1, "{d:#}");
    for c in &next[1..] {
        assert!(c.starts_with("session-doctor ") && c.contains(" ses_new.json"), "{c} reads the export");
        for flag in ["--provider anthropic", "--model claude-sonnet-4-5"] {
            assert!(c.contains(flag), "{c} drops {flag}");
        }
        assert!(!c.contains("--session"), "{c}: the export is a file of one session");
    }
    // Chosen as the newest: the export names it, so a newer session changes nothing.
    let (d, _) = diagnose(&path, &[]);
    assert_eq!(d["next"][0], "opencode export ses_new > ses_new.json", "{d:#}");
    session("ses_newer", 30);
    message("ses_newer", "msg_09", 9, user, vec![json!({"type":"text","text":"hello"})]);
    // An exclusion made on the store is read back; opencode still reads its
    // store, so the export is what to repair.
    let out = run(&["exclude", path.to_str().unwrap(), "--session", "ses_new", "--suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let (d, code) = diagnose(&path, &["--session", "ses_new"]);
    assert_eq!((code, d["excluded"].as_array().unwrap().len()), (1, 1), "{d:#}");
    assert!(
        d["notes"].to_string().contains("opencode's database")
            && d["next"][0] == "opencode export ses_new > ses_new.json",
        "{d:#}"
    );
}

/// Item 11: Gemini CLI's `$set` checkpoint of the whole message list is the
/// history: `scan` and `preview` agree on every message in it (and the one
/// appended after it).
#[test]
fn gemini_cli_checkpoints_are_previewed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let shot = b64(&media_corpus::png(12, 9));
    let tokens = json!({"input":10,"output":5,"cached":0,"thoughts":0,"tool":0,"total":15});
    let lines = [
        json!({"sessionId":"2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f","projectHash":"9f8e7d6c","startTime":"2026-11-20T10:00:00.000Z","lastUpdated":"2026-11-20T10:00:00.000Z","kind":"main"}),
        json!({"$set":{"lastUpdated":"2026-11-20T10:02:00.000Z","messages":[
            {"id":"u1","timestamp":"2026-11-20T10:00:00.000Z","type":"user","content":[{"text":"what is in this screenshot?"},{"inlineData":{"mimeType":"image/png","data":shot}}]},
            {"id":"g1","timestamp":"2026-11-20T10:00:05.000Z","type":"gemini","content":"A login form.","model":"gemini-2.5-pro","tokens":tokens},
            {"id":"u2","timestamp":"2026-11-20T10:01:00.000Z","type":"user","content":[{"text":"make the button bigger"}]}]}}),
        json!({"id":"g2","timestamp":"2026-11-20T10:01:05.000Z","type":"gemini","content":"Done.","model":"gemini-2.5-pro","tokens":tokens}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    let file = write(dir.path(), "session-2026-11-20T10-00-2c3d4e5f.jsonl", &text);
    let (doc, _) = common::scan_json(&file, &[]);
    assert_eq!((&doc["entries"], doc["attachments"].as_array().unwrap().len()), (&json!(4), 1), "{doc:#}");
    let out = run(&["preview", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    let contents = body["contents"].as_array().unwrap();
    let texts: Vec<String> = contents.iter().map(|c| c["parts"].to_string()).collect();
    assert_eq!(contents.len(), 4, "{texts:#?}");
    assert!(texts[0].contains("inlineData") && texts[0].contains(&shot), "{texts:#?}");
    assert!(
        texts[1].contains("A login form.") && texts[2].contains("make the button bigger") && texts[3].contains("Done."),
        "{texts:#?}"
    );
}

/// Item 13: plain `repair` of a stuck session leaves out the prime suspect
/// `diagnose` names (and says so), so the copy it tells you to resume is not
/// stuck; `--keep-suspects` keeps it, and then no "resume it" is printed for
/// a copy that fails the same way.
#[test]
fn repair_never_calls_a_stuck_copy_resumable() {
    let (image, cut) = (b64(&media_corpus::png(40, 30)), b64(&cut_png()));
    let items = [Item { base64: &image, mime: "image/png" }, Item { base64: &cut, mime: "image/png" }];
    let dir = tempfile::tempdir().unwrap();
    let text = wrap::failed("claude-code", &wrap::session("claude-code", &items), "Could not process image");
    let file = write(dir.path(), "0b6f8a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", &text);
    let cut_ref = ref_of(&file, &cut_png());

    let out = run(&["repair", "--json", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["suspects_left_out"], json!([cut_ref]), "{r:#}");
    assert!(r["still_stuck"].is_null(), "{r:#}");
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    let (d, code) = diagnose(&copy, &[]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    let (scan, _) = common::scan_json(&copy, &[]);
    assert!(scan["attachments"].as_array().unwrap().iter().all(|a| a["verdict"] == "ok"), "{scan:#}");

    let out = run(&["repair", "--keep-suspects", file.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(!said.contains("resume it"), "{said}");
    // Nothing else would change: no copy is written, and repair says what to run first.
    assert!(said.contains("nothing was written: still stuck") && said.contains(&format!("--ref {cut_ref}")), "{said}");
}

/// mux's sample (stuck on a cut PNG) followed by the rows mux writes: a
/// context reset, after which mux sends only what follows it, and a
/// compaction summary, from which (itself included) it sends the rest
/// (`compactionBoundary.ts`). Neither session is stuck on the PNG any more,
/// and the preview holds no image. Before, both were stuck on it.
#[test]
fn mux_sends_from_its_last_reset_or_compaction_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let stuck = std::fs::read_to_string(common::sample("mux.jsonl")).unwrap();
    let user = r#"{"id":"user-1763632910000-q8w7e6r5t","role":"user","metadata":{"historySequence":9,"timestamp":1763632910000},"parts":[{"type":"text","text":"Let us start over."}],"workspaceId":"shop-a1b2c3"}"#;
    let reset = r#"{"id":"context-reset-1763632900000-k3j9x0a2b","role":"assistant","metadata":{"timestamp":1763632900000,"contextBoundaryKind":"reset","historySequence":8},"parts":[],"workspaceId":"shop-a1b2c3"}"#;
    let summary = r#"{"id":"summary-1763632950000-a1s2d3f4g","role":"assistant","metadata":{"timestamp":1763632950000,"compacted":"user","compactionEpoch":1,"compactionBoundary":true,"model":"anthropic:claude-sonnet-4-5","usage":{"inputTokens":2300,"outputTokens":120,"totalTokens":2420},"muxMetadata":{"type":"compaction-summary"},"historySequence":8},"parts":[{"type":"text","text":"Summary: a diagram was attached."}],"workspaceId":"shop-a1b2c3"}"#;
    // A marker mux ignores (no epoch) cuts nothing.
    let malformed = summary.replace(r#""compactionEpoch":1,"#, "");
    for (name, boundary, healed) in
        [("reset", reset, true), ("summary", summary, true), ("malformed", &malformed, false)]
    {
        let file = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&file, format!("{stuck}{boundary}\n{user}\n")).unwrap();
        if healed {
            let (d, code) = diagnose(&file, &[]);
            assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{name}: {d:#}");
        }
        let out = run(&["preview", file.to_str().unwrap()]);
        let request = String::from_utf8_lossy(&out.stdout);
        assert_eq!(request.contains("\"image\""), !healed, "{name}: {request}");
    }
}

/// A pi session on `provider`/`model`: a `read` of `png` whose reply the
/// model accepted, then `after` (lines appended as they are, ids chained).
fn pi_session(provider: &str, api: &str, model: &str, png: &[u8], after: &[Value]) -> String {
    let usage = json!({"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,
        "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}});
    let reply = |content: Value, stop: &str| {
        json!({"role":"assistant","content":content,"api":api,"provider":provider,"model":model,
            "usage":usage,"stopReason":stop,"timestamp":2})
    };
    let mut lines = vec![json!({"type":"session","version":3,"id":"5b6c7d8e-9f01-4a2b-8c3d-4e5f6a7b8c9d",
        "timestamp":"2026-11-20T10:00:00.000Z","cwd":"/w"})];
    let mut entries = vec![
        json!({"type":"model_change","provider":provider,"modelId":model}),
        json!({"type":"message","message":{"role":"user","content":[{"type":"text","text":"look"}],"timestamp":1}}),
        json!({"type":"message","message":reply(json!([{"type":"toolCall","id":"call_1","name":"read",
            "arguments":{"path":"/w/a.png"}}]), "toolUse")}),
        json!({"type":"message","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read",
            "content":[{"type":"text","text":"Read image file [image/png]"},
                       {"type":"image","data":b64(png),"mimeType":"image/png"}],"isError":false,"timestamp":3}}),
        json!({"type":"message","message":reply(json!([{"type":"text","text":"a chart"}]), "stop")}),
    ];
    entries.extend(after.iter().cloned());
    let mut parent = Value::Null;
    for (i, mut e) in entries.into_iter().enumerate() {
        let id = format!("a{i:07}");
        e["id"] = json!(id);
        e["parentId"] = parent;
        e["timestamp"] = json!(format!("2026-11-20T10:0{}:00.000Z", i % 10));
        parent = json!(id);
        lines.push(e);
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// pi names its providers its own way (`google`, `openai-codex`,
/// `google-vertex`): preview spoke Chat Completions to them while diagnose
/// read block paths in the provider's own API. Both now take the dialect from
/// the provider the session names, spelled any way the vocabulary knows.
#[test]
fn preview_speaks_the_api_of_a_provider_pi_names_its_own_way() {
    let dir = tempfile::tempdir().unwrap();
    let png = media_corpus::png(8, 8);
    for (provider, api, model, dialect, list) in [
        ("google", "google-generative-ai", "gemini-2.5-pro", "gemini", "contents"),
        ("google-vertex", "google-vertex", "gemini-2.5-pro", "gemini", "contents"),
        ("openai-codex", "openai-codex-responses", "gpt-5.1-codex", "openai-responses", "input"),
        ("azure-openai-responses", "azure-openai-responses", "gpt-5", "openai-responses", "input"),
    ] {
        let file = write(dir.path(), &format!("{provider}.jsonl"), &pi_session(provider, api, model, &png, &[]));
        let out = run(&["preview", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("{dialect} request")), "{provider}: {stderr}");
        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(body[list].is_array(), "{provider}: {body:#}");
    }
}

/// A model chosen after the latest reply (pi's `/model`, with or without the
/// prompt the run died on) takes the next request: it has accepted nothing,
/// so a cut PNG the old model answered is its suspect. diagnose said
/// "healthy … the model accepted it" by the old model's rules, and preview
/// sent the old model's name to the new provider.
#[test]
fn a_model_switched_to_with_no_reply_yet_has_accepted_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let png = cut_png();
    let change = json!({"type":"model_change","provider":"openai","modelId":"gpt-5"});
    let prompt =
        json!({"type":"message","message":{"role":"user","content":[{"type":"text","text":"again"}],"timestamp":5}});
    for (name, after) in [("switched", vec![change.clone()]), ("prompted", vec![change, prompt])] {
        let text = pi_session("anthropic", "anthropic-messages", "claude-sonnet-4-5", &png, &after);
        let file = write(dir.path(), &format!("{name}.jsonl"), &text);
        let (d, code) = diagnose(&file, &[]);
        assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{name}: {d:#}");
        assert_eq!((&d["model"], &d["provider"]), (&json!("gpt-5"), &json!("openai")), "{name}: {d:#}");
        assert_eq!(common::prime_refs(&d), vec![ref_of(&file, &png).as_str()], "{name}: {d:#}");
        let out = run(&["preview", file.to_str().unwrap()]);
        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((&body["model"], body["input"].is_array()), (&json!("gpt-5"), true), "{name}: {body:#}");
    }
}

/// On Responses pi sends its system prompt as the first input item (on
/// ChatGPT's Codex route it goes as `instructions` instead), so a provider's
/// `input[N]` is the preview's item N-1: diagnose read it as item N and named
/// no attachment, or the wrong one.
#[test]
fn a_responses_path_counts_the_system_prompt_pi_sends_first() {
    let dir = tempfile::tempdir().unwrap();
    let png = cut_png();
    for (provider, api, leading) in [("openai", "openai-responses", 1), ("openai-codex", "openai-codex-responses", 0)] {
        let file = write(dir.path(), &format!("{provider}.jsonl"), &pi_session(provider, api, "gpt-5", &png, &[]));
        let out = run(&["preview", file.to_str().unwrap()]);
        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
        let at = body["input"].as_array().unwrap().iter().position(|i| i["type"] == "function_call_output").unwrap();
        let param = format!("input[{}].output[1].image_url", at + leading);
        assert_eq!(named_by_openai(&file, &param), vec![ref_of(&file, &png)], "{provider}");
    }
}

/// pi on a Chat Completions provider sends a tool result's images after the
/// `tool` messages, in a user message of their own opened by its words, and
/// its system prompt first: the provider's `messages.N.content.M` counts both.
/// The preview sent each image in a user message between the tool messages (a
/// request pi never sends), so that path named nothing.
#[test]
fn a_chat_path_names_the_image_pi_sends_after_its_tool_messages() {
    let dir = tempfile::tempdir().unwrap();
    let png = cut_png();
    let file =
        write(dir.path(), "chat.jsonl", &pi_session("openrouter", "openai-completions", "qwen/qwen3-vl", &png, &[]));
    let out = run(&["preview", file.to_str().unwrap()]);
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "user", "assistant"], "{body:#}");
    assert_eq!(messages[3]["content"][0]["text"], json!("Attached image(s) from tool result:"), "{body:#}");
    assert_eq!(named_by_openai(&file, "messages.4.content.1.image_url"), vec![ref_of(&file, &png)]);
}

/// The refs diagnose names for OpenAI's invalid-image error on `param`.
fn named_by_openai(file: &Path, param: &str) -> Vec<String> {
    let err = json!({"error": {"message": "The image data you provided does not represent a valid image.",
        "type": "invalid_request_error", "param": param, "code": "invalid_image_format"}});
    let (d, _) = diagnose(file, &["--error", &err.to_string()]);
    let suspects = d["suspects"].as_array().unwrap_or_else(|| panic!("{d:#}"));
    suspects.iter().filter(|s| s["named"] == true).map(|s| s["ref"].as_str().unwrap().to_string()).collect()
}

/// Codex rolls its turns back newest first, and a rollback that reaches past
/// the turns since a compaction takes the compaction along: the history before
/// it comes back and loses those turns too. A rollback of two turns here
/// leaves nothing, though it kept the compaction's copy of the cut PNG (stuck).
#[test]
fn a_codex_rollback_past_a_compaction_undoes_it() {
    let dir = tempfile::tempdir().unwrap();
    let png = cut_png();
    let line = |ty: &str, payload: Value| json!({"timestamp":"2026-11-20T10:00:00.000Z","type":ty,"payload":payload});
    let context = json!({"cwd":"/w","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write"},
        "model":"gpt-5-codex","summary":"auto"});
    let text =
        |role: &str, kind: &str, t: &str| json!({"type":"message","role":role,"content":[{"type":kind,"text":t}]});
    let u1 = json!({"type":"message","role":"user","content":[{"type":"input_text","text":"turn one"},
        {"type":"input_image","image_url":format!("data:image/png;base64,{}", b64(&png))}]});
    let rollout = |n: u64| {
        [
            line("session_meta", json!({"id":"019a8b2c-3d4e-7f50-8a6b-7c8d9e0f1a2b","timestamp":"2026-11-20T10:00:00.000Z",
                "cwd":"/w","originator":"codex_cli_rs","cli_version":"0.171.0","source":"cli","model_provider":"openai"})),
            line("turn_context", context.clone()),
            line("response_item", u1.clone()),
            line("response_item", text("assistant", "output_text", "ok one")),
            line("compacted", json!({"message":"summary","replacement_history":[u1.clone(),
                text("user", "input_text", "summary of things")]})),
            line("turn_context", context.clone()),
            line("response_item", text("user", "input_text", "turn two")),
            line("response_item", text("assistant", "output_text", "ok two")),
            line("event_msg", json!({"type":"thread_rolled_back","num_turns":n})),
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
    };
    // One turn back: the compaction stands, and its copy of the PNG is sent.
    let file = write(dir.path(), "one.jsonl", &rollout(1));
    let out = run(&["preview", file.to_str().unwrap()]);
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["input"].as_array().unwrap().len(), 2, "{body:#}");
    // Two turns back: past the compaction, which goes with them.
    let file = write(dir.path(), "two.jsonl", &rollout(2));
    let out = run(&["preview", file.to_str().unwrap()]);
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["input"], json!([]), "{body:#}");
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
}

/// `claude --resume <id>` and `gemini --resume <id>` find a session only in
/// the agent's own folder for the project: a copy written anywhere else was
/// handed a bare resume command that answers "No conversation found".
#[test]
fn a_copy_outside_the_agents_folder_says_where_to_move_it() {
    for (sample, inside) in
        [("claude-code.jsonl", ".claude/projects/-w"), ("gemini-cli.jsonl", ".gemini/tmp/abc/chats")]
    {
        let dir = tempfile::tempdir().unwrap();
        for (place, moved) in [(dir.path().join("out"), true), (dir.path().join(inside), false)] {
            std::fs::create_dir_all(&place).unwrap();
            let out = run(&[
                "repair",
                common::sample(sample).to_str().unwrap(),
                "--out",
                place.to_str().unwrap(),
                "--json",
                "--force",
            ]);
            let r: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{sample}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
            let note = r.get("resume_note").and_then(Value::as_str).unwrap_or_default();
            assert_eq!(note.contains("move the copy there first"), moved, "{sample} in {}: {r:#}", place.display());
        }
    }
}

/// A reasoning item `--strip-reasoning` takes out is said once, as removed:
/// it was also listed as a line "damaged or dropped", though no line was damaged.
#[test]
fn a_stripped_reasoning_item_is_not_called_a_damaged_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&[
        "repair",
        common::sample("codex.jsonl").to_str().unwrap(),
        "--strip-reasoning",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("reasoning") && !said.contains("damaged"), "{said}");
}

/// Issue 36, item 7: a recorded "`tool_use` ids were found without
/// `tool_result`" 400 said "stuck" beside "the agent answers it itself", and
/// printed a note about attachments for a failure that has no suspects (and
/// two blank lines before `next:`).
#[test]
fn a_refused_unanswered_call_is_named_without_contradiction() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "2a0e2d3c.jsonl", common::CLAUDE_UNANSWERED_CALL);
    let out = run(&["diagnose", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout).replace(file.to_str().unwrap(), "S");
    let want = "\
S: claude-code (detected), judged by anthropic rules
stuck: the history breaks the provider's rules: 1 tool call without a result; every retry sends it again

failure   history_invalid (not retryable; recorded at line 4)
provider  anthropic, status 400, model claude-sonnet-4-5-20250929
message   messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01XFDUDYJgAACzvnptvVer6u. Each `tool_use` block must have a corresponding `tool_result` block in the next message.
block     messages.1

1 structural problem:
   problem              line  tool  call id                         at
*  call without result     2  Bash  toolu_01XFDUDYJgAACzvnptvVer6u  2026-08-01T10:00:01.000Z
  line 2: Bash call toolu_01XFDUDYJgAACzvnptvVer6u has no result, and the provider's error names it: the agent sent it unanswered; `repair` answers it
  * named in the provider's error

next:
  session-doctor repair S
";
    assert_eq!(text, want);
}

/// A Claude Code session: `lines` as records of one chain, each
/// `(type, message)`, uuids and parents filled in.
fn claude_chain(lines: &[(&str, Value)]) -> String {
    let mut out = String::new();
    for (n, (kind, message)) in lines.iter().enumerate() {
        let mut r = json!({"type":kind,"uuid":format!("u{n}"),"parentUuid":null,"sessionId":"9c1e",
            "timestamp":format!("2026-08-01T10:00:0{n}.000Z"),"message":message});
        if n > 0 {
            r["parentUuid"] = json!(format!("u{}", n - 1));
        }
        if message["model"] == "<synthetic>" {
            r["isApiErrorMessage"] = json!(true);
        }
        out.push_str(&format!("{r}\n"));
    }
    out
}

/// Issue 36, item 8: the count is the cause of an `image_limit`, so no
/// attachment is a suspect; bytes the model took before are not "not yet
/// accepted"; an unknown failure is not "every retry fails the same way".
#[test]
fn suspects_are_said_as_they_are() {
    let png = b64(&media_corpus::png(40, 30));
    let image = json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":png}});
    let model = "claude-sonnet-4-5-20250929";
    let answer = json!({"id":"msg_1","type":"message","role":"assistant","model":model,
        "content":[{"type":"text","text":"A login form."}],"stop_reason":"end_turn","usage":{"input_tokens":900,"output_tokens":9}});
    let error = |text: &str| {
        json!({"id":"e1","type":"message","role":"assistant","model":"<synthetic>",
        "content":[{"type":"text","text":text}],"stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}})
    };
    let dir = tempfile::tempdir().unwrap();
    let again = [
        ("user", json!({"role":"user","content":[image.clone(), {"type":"text","text":"what is this?"}]})),
        ("assistant", answer),
        ("user", json!({"role":"user","content":[image, {"type":"text","text":"and now?"}]})),
        ("assistant", error("API Error: 400 Could not process image")),
    ];
    let file = write(dir.path(), "again.jsonl", &claude_chain(&again));
    let (d, _) = diagnose(&file, &[]);
    let why = d["suspects"][0]["why"].as_str().unwrap_or_default();
    assert!(why.starts_with("the model accepted the same bytes at line 1 (L1.1)"), "{d:#}");

    let (d, code) = diagnose(
        &file,
        &["--error", r#"400 {"error":{"message":"Number of images exceeds the limit: at most 1 images"}}"#],
    );
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("image_limit")), "{d:#}");
    assert_eq!(d["suspects"], json!([]), "the count is the cause: {d:#}");
    assert!(!d["notes"].to_string().contains("suspect"), "{d:#}");

    let cut = b64(&cut_png());
    let cut = json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":cut}});
    let unknown = [("user", json!({"role":"user","content":[cut]})), ("assistant", error("API Error: something odd"))];
    let file = write(dir.path(), "unknown.jsonl", &claude_chain(&unknown));
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("unknown")), "{d:#}");
    assert_eq!(
        d["verdict"], "stuck: the failure is of no known class, but every retry sends the 1 prime suspect again",
        "{d:#}"
    );
}

/// Issue 36, item 3: 22 valid screenshots, each wider than 2000 px, and
/// Anthropic's refusal of sides over 2000 px past 20 images. Diagnose blamed
/// the one image the error names and offered to exclude it (21 are left,
/// still refused); `--fit` fitted none of them.
#[test]
fn the_many_image_rule_is_cured_by_fitting_every_image() {
    let model = "claude-sonnet-4-5-20250929";
    let mut records = Vec::new();
    for i in 0..22u32 {
        let png = b64(&media_corpus::png(2400 + i, 60));
        let image = json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":png}});
        records.push(("user", json!({"role":"user","content":[image, {"type":"text","text":format!("shot {i}")}]})));
        if i < 21 {
            records.push(("assistant", json!({"id":format!("m{i}"),"type":"message","role":"assistant","model":model,
                "content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":2}})));
        }
    }
    let refusal = r#"API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.42.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"},"request_id":"req_011CVx"}"#;
    records.push(("assistant", json!({"id":"e1","type":"message","role":"assistant","model":"<synthetic>",
        "content":[{"type":"text","text":refusal}],"stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}})));
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "many.jsonl", &claude_chain(&records));
    let f = file.to_str().unwrap();

    let (d, code) = diagnose(&file, &[]);
    assert_eq!(code, 1, "{d:#}");
    assert!(d["verdict"].as_str().unwrap().starts_with("stuck: the request carries 22 images"), "{d:#}");
    let fit = [format!("session-doctor preview {f} --fit"), format!("session-doctor repair {f} --fit")];
    assert_eq!(d["next"], json!(fit), "{d:#}");

    // Without --fit nothing written: leaving one image out answers nothing.
    let out = run(&["repair", f]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&fit[1]), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing written");

    let (r, code) = common::json_of(&["repair", "--json", "--fit", f]);
    assert_eq!(code, 0, "{r:#}");
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    let (d, code) = diagnose(&copy, &[]);
    assert_eq!((code, d["stuck"].clone()), (0, json!(false)), "{d:#}");
    let (scan, _) = common::scan_json(&copy, &[]);
    let sides: Vec<u64> = (scan["attachments"].as_array().unwrap().iter())
        .map(|a| a["width"].as_u64().unwrap().max(a["height"].as_u64().unwrap()))
        .collect();
    assert_eq!(sides.len(), 22, "every image kept: {sides:?}");
    assert!(sides.iter().all(|&s| s <= 2000), "{sides:?}");
}

/// The request-level limits, each with its own remedy (`diagnose/limits.rs`):
/// Anthropic counts PDF pages with images ("60 document pages + 50 images >
/// 100"), so a cap at 100 images changed nothing (diagnose offered
/// `--max-images 100`); the copy may keep 40. Too many PDF pages is no count
/// of images either: `--max-images` left every page in, and the cure is to
/// leave the oldest PDFs out. And a predicted failure states the maximum of
/// the limit it breaks, not the count of images (it said 100 for the
/// many-image side rule, whose maximum is 2000 px).
#[test]
fn each_request_limit_carries_its_own_remedy() {
    let model = "claude-sonnet-4-5-20250929";
    let pdf = |pages: u32| json!({"type":"document","source":{"type":"base64","media_type":"application/pdf","data":b64(&media_corpus::pdf(pages))}});
    let png = |w: u32| json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(&media_corpus::png(w, 20))}});
    let answer = |i: usize| {
        json!({"id":format!("m{i}"),"type":"message","role":"assistant","model":model,
        "content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":2}})
    };
    let refusal = |text: &str| {
        json!({"id":"e1","type":"message","role":"assistant","model":"<synthetic>",
        "content":[{"type":"text","text":format!(r#"API Error: 400 {{"type":"error","error":{{"type":"invalid_request_error","message":"{text}"}}}}"#)}],
        "stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}})
    };
    let dir = tempfile::tempdir().unwrap();

    // 60 pages of PDF, then 50 images; Anthropic's refusal names both.
    let mut content = vec![pdf(60)];
    content.extend((0..50).map(|_| png(30)));
    content.push(json!({"type":"text","text":"look"}));
    let records = [
        ("user", json!({"role":"user","content":content})),
        ("assistant", refusal("messages: Too much media: 60 document pages + 50 images > 100")),
    ];
    let file = write(dir.path(), "media.jsonl", &claude_chain(&records));
    let f = file.to_str().unwrap();
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("image_limit")), "{d:#}");
    let cap =
        [format!("session-doctor preview {f} --max-images 40"), format!("session-doctor repair {f} --max-images 40")];
    assert_eq!(d["next"], json!(cap), "{d:#}");

    // Three PDFs of 40 pages, nothing recorded, the last request unanswered:
    // 120 pages, Anthropic takes 100, leaving the oldest out is the cure.
    let records = [
        ("user", json!({"role":"user","content":[pdf(40), {"type":"text","text":"one"}]})),
        ("assistant", answer(1)),
        ("user", json!({"role":"user","content":[pdf(40), {"type":"text","text":"two"}]})),
        ("assistant", answer(2)),
        ("user", json!({"role":"user","content":[pdf(40), {"type":"text","text":"three"}]})),
    ];
    let file = write(dir.path(), "pages.jsonl", &claude_chain(&records));
    let f = file.to_str().unwrap();
    let (d, code) = diagnose(&file, &["--provider", "anthropic"]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("image_limit")), "{d:#}");
    assert_eq!(d["failure"]["limit"], 100, "{d:#}");
    assert!(d["verdict"].as_str().unwrap().starts_with("stuck: the request carries 120 document pages"), "{d:#}");
    assert!(d["limits"].to_string().contains("request.too_many_pdf_pages"), "{d:#}");
    let exclude = [
        format!("session-doctor exclude {f} --provider anthropic --ref L1.1"),
        format!("session-doctor repair {f} --provider anthropic"),
    ];
    assert_eq!(d["next"], json!(exclude), "{d:#}");
    let out = run(&["exclude", f, "--provider", "anthropic", "--ref", "L1.1"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let (r, code) = common::json_of(&["repair", "--json", f, "--provider", "anthropic"]);
    assert_eq!(code, 0, "{r:#}");
    let (d, code) = diagnose(Path::new(r["out"].as_str().unwrap()), &["--provider", "anthropic"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "the copy carries 80 pages: {d:#}");

    // 21 images wider than 2000 px, nothing recorded: the maximum is the side.
    let mut records = Vec::new();
    for i in 0..21 {
        records.push(("user", json!({"role":"user","content":[png(2100 + i), {"type":"text","text":"shot"}]})));
        if i < 20 {
            records.push(("assistant", answer(i as usize)));
        }
    }
    let file = write(dir.path(), "sides.jsonl", &claude_chain(&records));
    let (d, code) = diagnose(&file, &["--provider", "anthropic"]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("media_rejected")), "{d:#}");
    assert_eq!(d["failure"]["limit"], 2000, "{d:#}");
}
