//! What an adversary's review (2026-12-02) found untrue in verdicts and
//! advice, each pinned on a Claude Code session in its on-disk shape: a copy
//! that dropped every image where the advice was a cap, a transient error that
//! hid a session stuck on its media, and a `--fit` offered for an image no
//! decoder can fit, whose repair then advised the same again.

use crate::common;
use crate::common::media_corpus;

use std::path::Path;

use common::{b64, diagnose, json_of, write};
use serde_json::{Value, json};

const USAGE: &str =
    r#"{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}"#;

/// One user message holding `images`, then Claude Code's record of the API's
/// answer `status` with `body` (its `API Error: <status> <body>` line).
fn pasted_then_failed(images: &[Vec<u8>], status: u16, body: &Value) -> String {
    let mut content = vec![json!({"type":"text","text":"look"})];
    content.extend(
        images
            .iter()
            .map(|i| json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":b64(i)}})),
    );
    let user = json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","isSidechain":false,
        "message":{"role":"user","content":content}});
    let usage: Value = serde_json::from_str(USAGE).unwrap();
    let error = json!({"type":"assistant","uuid":"e1","parentUuid":"u1","sessionId":"s","isSidechain":false,
        "isApiErrorMessage":true,"apiErrorStatus":status,"error":"unknown",
        "message":{"id":"e1","type":"message","role":"assistant","model":"<synthetic>",
        "content":[{"type":"text","text":format!("API Error: {status} {body}")}],"stop_reason":"stop_sequence","usage":usage}});
    format!("{user}\n{error}\n")
}

fn images_in(copy: &Path) -> usize {
    std::fs::read_to_string(copy).unwrap().matches(r#""type":"image""#).count()
}

#[test]
fn a_count_limit_naming_the_message_is_capped_not_every_image_left_out() {
    // "messages.0.content: Too many images": the block holds every image, so
    // every one is a named suspect; the remedy is still the cap diagnose names.
    let dir = tempfile::tempdir().unwrap();
    let images: Vec<Vec<u8>> = (0..4).map(|i| media_corpus::png(4 + i, 4)).collect();
    let body = json!({"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: Too many images in request: 4 > 3"}});
    let file = write(dir.path(), "s.jsonl", &pasted_then_failed(&images, 400, &body));
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["failure"]["class"]), (1, &json!("image_limit")), "{d:#}");
    let repair = format!("session-doctor repair {} --max-images 3", file.display());
    assert!(d["next"].as_array().unwrap().iter().any(|n| n == &json!(repair)), "{d:#}");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (r, code) =
        json_of(&["repair", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--max-images", "3", "--json"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["changes"]["excluded"], json!([]), "no image is left out as rejected: {r:#}");
    assert_eq!(r["changes"]["capped"].as_array().map(Vec::len), Some(1), "{r:#}");
    assert_eq!(images_in(Path::new(r["out"].as_str().unwrap())), 3);
    // What preview shows with the same flag is what the copy holds.
    let preview = common::run(&["preview", file.to_str().unwrap(), "--max-images", "3"]);
    assert_eq!(String::from_utf8_lossy(&preview.stdout).matches(r#""type":"image""#).count(), 3);
}

#[test]
fn a_transient_failure_recorded_last_does_not_hide_media_every_retry_sends() {
    // A 429 after a PNG cut short: the retry it invites carries the PNG again.
    let dir = tempfile::tempdir().unwrap();
    let png = media_corpus::png(8, 8);
    let cut = png[..40].to_vec();
    let body = json!({"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}});
    let file = write(dir.path(), "s.jsonl", &pasted_then_failed(&[cut], 429, &body));
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["stuck"], &d["failure"]["class"]), (1, &json!(true), &json!("media_rejected")), "{d:#}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("the rate_limit failure recorded at line 2 would pass on a retry"), "{d:#}");
    assert!(!notes.contains("no provider error is recorded"), "an error is recorded: {d:#}");
    // With good bytes the 429 is what it says: a retry can work.
    let file = write(dir.path(), "good.jsonl", &pasted_then_failed(&[png], 429, &body));
    let (d, code) = diagnose(&file, &[]);
    assert_eq!((code, &d["failure"]["class"]), (0, &json!("rate_limit")), "{d:#}");
}

/// A PNG header claiming `w`×`h` over a few bytes of image data.
fn claimed(w: u32, h: u32) -> Vec<u8> {
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(media_corpus::png_chunk(b"IHDR", &ihdr));
    png.extend(media_corpus::png_chunk(b"IDAT", &[0x78, 0x9c, 0x03, 0, 0, 0, 0, 1]));
    png.extend(media_corpus::png_chunk(b"IEND", b""));
    png
}

#[test]
fn fit_is_offered_only_for_an_image_it_can_decode() {
    let dir = tempfile::tempdir().unwrap();
    let body = json!({"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content.1.image.source.base64: Could not process image"}});
    // 100000×100000 px: no decoder fits that; leaving it out is the remedy.
    let file = write(dir.path(), "huge.jsonl", &pasted_then_failed(&[claimed(100_000, 100_000)], 400, &body));
    let (d, code) = diagnose(&file, &[]);
    assert_eq!(code, 1, "{d:#}");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(next.iter().all(|n| !n.contains("--fit")) && next.iter().any(|n| n.contains(" exclude ")), "{next:?}");
    // `repair --fit` leaves it out, and the copy is not stuck.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (r, code) = json_of(&["repair", file.to_str().unwrap(), "--fit", "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(images_in(Path::new(r["out"].as_str().unwrap())), 0, "{r:#}");
    // A 9000 px wide image that decodes is fitted, as before.
    let file = write(dir.path(), "wide.jsonl", &pasted_then_failed(&[media_corpus::png(9000, 2)], 400, &body));
    let (d, _) = diagnose(&file, &[]);
    assert!(d["next"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("--fit")), "{d:#}");
}

#[test]
fn a_named_pipe_as_the_session_is_refused_not_waited_on() {
    // A FIFO can be read once; the reader opens a session more than once, and
    // an open with no writer blocks for ever.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("s.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for sub in ["scan", "diagnose", "preview", "repair"] {
        let mut child = common::bin()
            .args([sub, fifo.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if started.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.and_then(|s| s.code()), Some(2), "{sub} waited on the pipe: {stderr}");
        assert!(stderr.contains("is not a regular file"), "{sub}: {stderr}");
    }
}

#[test]
fn a_hash_prefix_two_different_files_share_is_refused_as_ambiguous() {
    // Two 2×2 PNGs whose sha256 both start 0c2045 (found by search).
    let a = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGPQYGEAIgYIBQAFfgCx1Z0XRAAAAABJRU5ErkJggg==";
    let b = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGMIF2EAIgYIBQANHgGt9tUw9QAAAABJRU5ErkJggg==";
    let dir = tempfile::tempdir().unwrap();
    let items =
        [common::wrap::Item { base64: a, mime: "image/png" }, common::wrap::Item { base64: b, mime: "image/png" }];
    let file = write(dir.path(), "s.jsonl", &common::wrap::session("claude-code", &items));
    let s = file.to_str().unwrap();
    let out = common::run(&["exclude", s, "--ref", "sha256:0c2045"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is the start of 2 different files' hashes") && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(!file.with_extension("jsonl.doctor").exists());
    // Enough of the hash names one file.
    let out = common::run(&["exclude", s, "--ref", "sha256:0c2045f3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A real agent's session (tests/data/agents) in a folder of its own.
fn agent_copy(agent: &str, name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join(name);
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents").join(agent).join(name), &to).unwrap();
    (dir, to)
}

#[test]
fn a_copy_that_changes_nothing_the_failure_is_about_is_still_stuck() {
    // Codex: valid PNG bytes the provider refused, no block named; pi: three
    // images where the provider took two. Without an exclusion or a cap a copy
    // would send the same request: none is written (a copy that dropped the
    // refusal was then called healthy), and repair says what to do first.
    for (agent, name, class_next) in
        [("codex", "image-refused-by-provider.jsonl", "exclude"), ("pi", "too-many-images.jsonl", "--max-images 2")]
    {
        let (dir, file) = agent_copy(agent, name);
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let (r, code) = json_of(&["repair", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"]);
        assert_eq!((code, &r["written"]), (1, &Value::Bool(false)), "{agent}: {r:#}");
        assert!(r["still_stuck"].as_str().is_some_and(|v| v.starts_with("still stuck")), "{agent}: {r:#}");
        let next = r["next"].to_string();
        assert!(next.contains(class_next) && next.contains(name), "{agent}: {r:#}");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "{agent}: nothing written");
    }
    // With the cap the limit asks for, the copy resumes.
    let (dir, file) = agent_copy("pi", "too-many-images.jsonl");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (r, code) =
        json_of(&["repair", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--max-images", "2", "--json"]);
    assert_eq!((code, &r["still_stuck"]), (0, &Value::Null), "{r:#}");
}

#[test]
fn an_opencode_row_that_is_no_json_object_is_a_damaged_line_not_passed_unseen() {
    // A part nested past the parser's depth (opencode's JSON.parse reads it):
    // read into its message, told; a part cut short: told with its line, the
    // rest read, and `check` fails.
    for bad in [format!("{}1{}", "[".repeat(200), "]".repeat(200)), r#"{"type":"text","#.to_string()] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("opencode.db");
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch(common::OPENCODE_SCHEMA).unwrap();
        db.execute("INSERT INTO project VALUES ('prj_1','/w','git','w',NULL,NULL,1,1,NULL,'[]')", []).unwrap();
        db.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_1','prj_1','s','/w','t','1.2.3',1,1)",
            [],
        )
        .unwrap();
        let user = json!({"role":"user","time":{"created":1},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}});
        db.execute("INSERT INTO message VALUES ('msg_01','ses_1',1,1,?1)", [user.to_string()]).unwrap();
        let text = json!({"type":"text","text":"hello"}).to_string();
        let deep = format!(r#"{{"type":"text","text":"x","meta":{bad}}}"#);
        for (id, data) in [("prt_a", text), ("prt_b", deep)] {
            db.execute("INSERT INTO part VALUES (?1,'msg_01','ses_1',1,1,?2)", [id, data.as_str()]).unwrap();
        }
        drop(db);
        let (v, code) = common::scan_json(&path, &[]);
        let findings = v["findings"].to_string();
        if bad.starts_with('[') {
            // Valid JSON: the part joins its message, its deep value read as null, and the line says so.
            assert!(findings.contains("line.too_deep"), "{v:#}");
            let out = common::run(&["preview", path.to_str().unwrap()]);
            let sent = String::from_utf8_lossy(&out.stdout);
            assert!(sent.contains("hello") && sent.contains(r#""x""#), "{sent}");
            continue;
        }
        assert!(findings.contains("not valid JSON") && v["entries"].as_u64() >= Some(1), "{v:#}");
        assert_eq!(code, 1, "{v:#}");
        let out = common::run(&["check", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn a_request_converted_to_another_dialect_pairs_every_call_by_its_rules() {
    // The agents' own pairing (Codex's "aborted" output, pi's answer to an
    // orphaned call, Gemini CLI's second response) is their dialect's; converted,
    // the request must pass the target's own rules, as session-doctor checks them.
    let fixtures = [
        ("codex", "killed-mid-tool.jsonl"),
        ("codex", "orphan-output-after-answer.jsonl"),
        ("pi", "killed-mid-tool.jsonl"),
        ("gemini-cli", "session-2026-12-01T08-00-c5d9e38f.jsonl"),
        ("claude-code", "parallel-images.jsonl"),
        ("claude-code", "killed-mid-tool.jsonl"),
    ];
    for (agent, name) in fixtures {
        let (dir, file) = agent_copy(agent, name);
        for target in ["anthropic", "openai-chat", "openai-responses", "gemini"] {
            let out = dir.path().join(format!("{target}.json"));
            let ran =
                common::run(&["preview", file.to_str().unwrap(), "--target", target, "--out", out.to_str().unwrap()]);
            assert!(ran.status.success(), "{agent}/{name} → {target}: {}", String::from_utf8_lossy(&ran.stderr));
            let (v, _) = json_of(&["scan", "--json", "--format", target, out.to_str().unwrap()]);
            let history: Vec<&Value> = v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["code"].as_str().is_some_and(|c| c.starts_with("history.")))
                .collect();
            assert!(
                history.is_empty(),
                "{agent}/{name} → {target}: {history:#?}\n{}",
                std::fs::read_to_string(&out).unwrap()
            );
        }
    }
}

#[test]
fn a_result_answering_an_aborted_reply_pi_does_not_send_is_an_orphan() {
    // pi leaves an aborted (or failed) reply out of every request, its calls
    // with it; a result recorded for one of those calls then answers nothing
    // the provider sees, and Anthropic refuses it.
    let (dir, file) = agent_copy("pi", "killed-mid-tool.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().take(5).map(str::to_string).collect();
    lines[4] = lines[4].replace(r#""stopReason":"toolUse""#, r#""stopReason":"aborted""#);
    assert!(lines[4].contains("aborted"));
    let call = "toolu_643a3fc374aa46f78e6cf0ff";
    lines.push(
        json!({"type":"message","id":"e1f2a3b4","parentId":"d631af68","timestamp":"2026-12-01T08:16:30.000Z",
        "message":{"role":"toolResult","toolCallId":call,"toolName":"bash",
        "content":[{"type":"text","text":"Command aborted"}],"isError":true,"timestamp":1_796_112_990_000u64}})
        .to_string(),
    );
    lines.push(
        json!({"type":"message","id":"f5a6b7c8","parentId":"e1f2a3b4","timestamp":"2026-12-01T08:16:40.000Z",
        "message":{"role":"user","content":[{"type":"text","text":"continue"}],"timestamp":1_796_113_000_000u64}})
        .to_string(),
    );
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let f = file.to_str().unwrap();

    // What pi sends: the result, with no call before it.
    let out = common::run(&["preview", f]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap();
    let uses = sent.to_string().matches(r#""type":"tool_use""#).count();
    assert_eq!(uses, 0, "{sent:#}");
    let (d, _) = json_of(&["diagnose", f, "--json"]);
    let verdict = d["verdict"].as_str().unwrap();
    assert!(!verdict.starts_with("not stuck") && !verdict.contains("healthy"), "{d:#}");
    assert!(d.to_string().contains(call), "the orphan is named: {d:#}");
    // The repaired copy leaves the orphan out, and is not stuck.
    let outdir = dir.path().join("out");
    std::fs::create_dir(&outdir).unwrap();
    let (r, code) = json_of(&["repair", f, "--out", outdir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let copy = r["out"].as_str().unwrap();
    let out = common::run(&["preview", copy]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(sent["messages"].as_array().is_some_and(|m| !m.is_empty()), "{sent:#}");
    assert!(!sent.to_string().contains(call), "{sent:#}");
    let (d, code) = json_of(&["diagnose", copy, "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
}

#[test]
fn a_codex_local_shell_call_keeps_its_command_in_another_dialect() {
    // A `local_shell_call` holds its command in `action`, not `arguments`.
    let (dir, file) = agent_copy("codex", "killed-mid-tool.jsonl");
    let meta = std::fs::read_to_string(&file).unwrap().lines().next().unwrap().to_string();
    let item =
        |payload: Value| json!({"timestamp": "2026-12-01T10:31:31.000Z", "type": "response_item", "payload": payload});
    let lines = [
        meta,
        item(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list the files"}]}))
            .to_string(),
        item(json!({"type": "local_shell_call", "id": "lsh_1", "call_id": "call_shell_1", "status": "completed",
            "action": {"type": "exec", "command": ["bash", "-lc", "ls -la"], "timeout_ms": 10000}}))
        .to_string(),
        item(json!({"type": "function_call_output", "call_id": "call_shell_1", "output": "a.txt"})).to_string(),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = common::run(&["preview", file.to_str().unwrap(), "--target", "anthropic"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let call = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .find(|b| b["type"] == "tool_use")
        .cloned();
    let call = call.unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(call["input"]["command"], json!(["bash", "-lc", "ls -la"]), "{call:#}");
    drop(dir);
}

#[test]
fn an_export_with_a_value_nested_past_the_parser_limit_is_read_with_a_finding() {
    // One JSON document: a tool input nested 300 deep must not cost the whole
    // session. The value reads as null, the line says so, the rest is read.
    let (dir, file) = agent_copy("opencode", "ses_dcf272eddffe2NXrNcmKeu4HO4.json");
    let (before, _) = json_of(&["scan", "--json", file.to_str().unwrap()]);
    let preview = |f: &Path| -> Value {
        let out = common::run(&["preview", f.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let sent = preview(&file);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let tool = doc["messages"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .flat_map(|m| m["parts"].as_array_mut().unwrap())
        .find(|p| p["type"] == "tool")
        .expect("a tool part");
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    tool["state"]["input"]["deep"] = json!("DEEP");
    let text = serde_json::to_string_pretty(&doc).unwrap().replace("\"DEEP\"", &deep);
    let deep_file = dir.path().join("deep.json");
    std::fs::write(&deep_file, text).unwrap();

    let (after, code) = json_of(&["scan", "--json", deep_file.to_str().unwrap()]);
    assert_ne!(code, 2, "{after:#}");
    let refs =
        |v: &Value| v["attachments"].as_array().unwrap().iter().map(|a| a["verdict"].clone()).collect::<Vec<_>>();
    assert_eq!(refs(&after), refs(&before));
    let deep_finding = after["findings"].as_array().unwrap().iter().find(|f| f["code"] == "line.too_deep").cloned();
    let deep_finding = deep_finding.unwrap_or_else(|| panic!("{after:#}"));
    assert!(deep_finding["line"].as_u64().unwrap() > 1, "the line the value starts on: {deep_finding:#}");
    // Preview still shows every message, the deep value as null.
    let got = preview(&deep_file);
    assert_eq!(got["messages"].as_array().unwrap().len(), sent["messages"].as_array().unwrap().len());
    assert!(got.to_string().contains(r#""deep":["#), "{got}");
}

/// The stuck Codex fixture with a rollback of `turns` appended, as Codex
/// writes it when the user backtracks (Esc Esc).
fn rolled_back(turns: u32) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, file) = agent_copy("codex", "image-refused-by-provider.jsonl");
    let mut text = std::fs::read_to_string(&file).unwrap();
    let event = json!({"timestamp": "2026-12-01T08:40:00.000Z", "type": "event_msg",
        "payload": {"type": "thread_rolled_back", "num_turns": turns}});
    text.push_str(&format!("{event}\n"));
    std::fs::write(&file, text).unwrap();
    (dir, file)
}

#[test]
fn a_codex_rollback_drops_the_turns_codex_no_longer_sends() {
    // Two turns back: before the prompt that read bad.png, its failure with it.
    let (_dir, file) = rolled_back(2);
    let f = file.to_str().unwrap();
    let (d, code) = json_of(&["diagnose", f, "--json"]);
    assert_eq!((code, &d["stuck"], &d["suspects"]), (0, &json!(false), &json!([])), "{d:#}");
    let (scan, _) = common::scan_json(&file, &[]);
    let names: Vec<&str> = scan["attachments"].as_array().unwrap().iter().filter_map(|a| a["name"].as_str()).collect();
    assert!(!names.iter().any(|n| n.ends_with("bad.png")), "{names:?}");
    let out = common::run(&["preview", f]);
    let sent = String::from_utf8_lossy(&out.stdout);
    assert!(sent.contains("READ-THE-FILE ok.png") && sent.contains("Done."), "{sent}");
    assert!(!sent.contains("READ-THE-FILE bad.png") && !sent.contains(r#""continue""#), "{sent}");
    // One turn back drops only the `continue`: the failed turn, still stuck on
    // bad.png, stays; the environment context Codex writes is no turn of the user's.
    let (_dir, file) = rolled_back(1);
    let (d, code) = json_of(&["diagnose", file.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{d:#}");
    let (_dir, file) = rolled_back(9);
    let out = common::run(&["preview", file.to_str().unwrap()]);
    let sent = String::from_utf8_lossy(&out.stdout);
    assert!(sent.contains("environment_context") && !sent.contains("READ-THE-FILE"), "{sent}");
}

#[test]
fn of_a_key_given_twice_the_last_is_read_as_the_agents_json_parse_reads_it() {
    // A record with two `message` keys: Claude Code's JSON.parse keeps the last,
    // which holds the cut PNG; the first, benign, copy must not hide it.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::sample("claude-code.jsonl")).unwrap();
    let (plain, _) = json_of(&["scan", "--json", common::sample("claude-code.jsonl").to_str().unwrap()]);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let i = lines[6].find(r#""message":"#).unwrap();
    let benign = r#""message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01IMG","content":"benign"}]},"#;
    lines[6].insert_str(i, benign);
    let file = dir.path().join("dup.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let (scan, _) = json_of(&["scan", "--json", file.to_str().unwrap()]);
    let refs = |v: &Value| v["attachments"].as_array().unwrap().iter().map(|a| a["ref"].clone()).collect::<Vec<_>>();
    assert_eq!(refs(&scan), refs(&plain), "{scan:#}");
    let f = file.to_str().unwrap();
    assert_eq!(common::run(&["exclude", f, "--ref", "L7.1"]).status.code(), Some(0));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (r, _) = json_of(&["repair", f, "--out", out.to_str().unwrap(), "--json"]);
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    let line7: Value = serde_json::from_str(copy.lines().nth(6).unwrap()).unwrap();
    // serde_json, like JSON.parse, keeps the last copy: the one the note replaced the PNG in.
    assert!(line7["message"].to_string().contains("Attachment omitted"), "{line7:#}");
}

#[test]
fn a_compressed_session_far_past_any_ratio_is_refused_and_a_killed_runs_spool_is_swept() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // What a killed run left: a spool named with a process id no run has.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let left = tmp.join(format!("session-doctor-stdin-{dead}-AbCdEf.jsonl"));
    std::fs::write(&left, "left behind").unwrap();
    let other = tmp.join("session-doctor-notes.txt");
    std::fs::write(&other, "not a spool").unwrap();
    // 300 MB of newlines after a Codex header: a few kB compressed.
    let bomb = dir.path().join("rollout-2026-12-02T00-00-00-0198a3f2-7c1d-7e55-b0a4-3c2e1f0d9e8a.jsonl.zst");
    let mut enc = zstd::stream::write::Encoder::new(std::fs::File::create(&bomb).unwrap(), 3).unwrap();
    enc.write_all(br#"{"timestamp":"2026-08-11T09:12:40.000Z","type":"session_meta","payload":{"id":"0198a3f2"}}"#)
        .unwrap();
    let block = vec![b'\n'; 1 << 20];
    for _ in 0..300 {
        enc.write_all(&block).unwrap();
    }
    enc.finish().unwrap();
    assert!(std::fs::metadata(&bomb).unwrap().len() < 1 << 20);
    let out = common::bin().env("TMPDIR", &tmp).args(["scan", bomb.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("decompresses to more than 100 times its size"), "{err}");
    let names: Vec<String> =
        std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["session-doctor-notes.txt"], "the refused spool and the dead run's are gone");
}
