//! `scan` end to end: every format's sample, damaged files, refs, visibility rules.

use crate::common;

use std::io::Write as _;
use std::path::Path;

use common::{b64, run, sample, scan_json, sha256_file};
use serde_json::Value;

/// A valid 1×1 RGBA PNG, as base64.
const ONE_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn expected() -> Value {
    let text = std::fs::read_to_string(sample("expected.json")).expect("samples/expected.json");
    serde_json::from_str(&text).expect("valid manifest")
}

fn attachments(doc: &Value) -> &Vec<Value> {
    doc["attachments"].as_array().expect("attachments array")
}

#[test]
fn every_sample_yields_exactly_its_attachments() {
    let manifest = expected();
    let manifest = manifest.as_object().expect("object");
    assert_eq!(manifest.len(), session_doctor::model::Format::ALL.len(), "one sample per format");
    for (file, want) in manifest {
        let path = sample(file);
        let before = sha256_file(&path);
        let (doc, _) = scan_json(&path, &[]);
        assert_eq!(sha256_file(&path), before, "{file} was modified");
        assert_eq!(doc["format"], file.trim_end_matches(".jsonl").trim_end_matches(".json"), "{file}: detected format");
        assert_eq!(doc["format_detected"], true);
        let got = attachments(&doc);
        let want = want.as_array().expect("array");
        assert_eq!(got.len(), want.len(), "{file}: attachment count in {doc:#}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g["line"], w["line"], "{file}");
            assert_eq!(g["origin"], w["origin"], "{file} line {}", w["line"]);
            assert_eq!(g["name"], w["name"], "{file} line {}", w["line"]);
            assert_eq!(g["mime_declared"], w["mime"], "{file} line {}", w["line"]);
            assert_eq!(g["sha256"], w["sha256"], "{file} line {}", w["line"]);
            assert_eq!(g["bytes"], w["bytes"], "{file} line {}", w["line"]);
            let r = g["ref"].as_str().expect("ref");
            assert!(r.starts_with(&format!("L{}.", w["line"])), "{file}: ref {r}");
            for key in ["call_id", "mime_detected", "width", "height", "pages", "verdict", "problems"] {
                assert!(g.get(key).is_some(), "{file}: field {key} missing");
            }
        }
        for key in ["file", "lines", "entries", "findings"] {
            assert!(doc.get(key).is_some(), "{file}: field {key} missing");
        }
    }
}

#[test]
fn tool_results_carry_their_call_id() {
    let (doc, _) = scan_json(&sample("claude-code.jsonl"), &[]);
    let a = attachments(&doc);
    assert_eq!(a[1]["call_id"], "toolu_01PDF");
    assert_eq!(a[2]["call_id"], "toolu_01IMG");
    assert_eq!(a[2]["tool"], "Read");
    // The toolUseResult copy is the same attachment, kept as a mirror for rewrites.
    assert_eq!(a[2]["mirrors"].as_array().map(Vec::len), Some(1));
    let (doc, _) = scan_json(&sample("codex.jsonl"), &[]);
    assert_eq!(attachments(&doc)[1]["call_id"], "call_Vx81");
}

#[test]
fn spans_point_at_the_payload_bytes() {
    let path = sample("codex.jsonl");
    let bytes = std::fs::read(&path).expect("read");
    let (doc, _) = scan_json(&path, &[]);
    for a in attachments(&doc) {
        use base64::Engine as _;
        use sha2::Digest as _;
        let off = usize::try_from(a["span"]["offset"].as_u64().expect("offset")).unwrap();
        let len = usize::try_from(a["span"]["len"].as_u64().expect("len")).unwrap();
        let text = std::str::from_utf8(&bytes[off..off + len]).expect("utf-8");
        let decoded = base64::engine::general_purpose::STANDARD.decode(text).expect("the span is the base64 payload");
        assert_eq!(format!("{:x}", sha2::Sha256::digest(&decoded)), a["sha256"].as_str().expect("sha"));
    }
}

fn temp_with(name: &str, content: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join(name);
    std::fs::write(&p, content).expect("write");
    (dir, p)
}

#[test]
fn damaged_file_still_yields_every_undamaged_attachment() {
    let text = std::fs::read_to_string(sample("claude-code.jsonl")).expect("sample");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Line 3 becomes junk; the pasted image on line 2 gets base64 that does not decode;
    // the file ends in half a record, as when the agent died mid-write.
    lines[2] = "{\"type\":\"assistant\",\"uuid\": oops".to_string();
    let bad = lines[1].replacen("\"data\":\"iVBOR", "\"data\":\"iV#OR", 1);
    assert_ne!(bad, lines[1]);
    lines[1] = bad;
    let last = lines[lines.len() - 1].clone();
    let mut content = lines.join("\n") + "\n";
    content.push_str(&last[..last.len() / 2]);
    let (_dir, path) = temp_with("damaged.jsonl", content.as_bytes());
    let before = sha256_file(&path);
    let (doc, code) = scan_json(&path, &["--format", "claude-code"]);
    assert_eq!(sha256_file(&path), before);
    assert_eq!(code, 1, "an invalid attachment is a problem");
    let got = attachments(&doc);
    // The tree is broken at line 3, so the provider-visible path is rebuilt from
    // what survives; every undamaged media line is still read.
    let lines_seen: Vec<u64> = got.iter().map(|a| a["line"].as_u64().expect("line")).collect();
    assert!(lines_seen.contains(&5) && lines_seen.contains(&7), "{doc:#}");
    // The pasted image whose base64 broke is still listed, as invalid, with the bad byte named.
    let pasted = got.iter().find(|a| a["line"] == 2).expect("line 2's image is listed");
    assert_eq!(pasted["verdict"], "invalid");
    assert!(pasted["sha256"].is_null());
    assert!(pasted["problems"][0]["message"].as_str().is_some_and(|m| m.contains("'#'")), "{pasted:#}");
    let findings = doc["findings"].as_array().expect("findings");
    let messages: Vec<&str> = findings.iter().filter_map(|f| f["message"].as_str()).collect();
    assert!(findings.iter().any(|f| f["line"] == 3), "junk line named: {messages:?}");
    assert!(
        findings.iter().any(|f| f["line"] == 11 && f["message"].as_str().is_some_and(|m| m.contains("cut short"))),
        "{messages:?}"
    );
}

#[test]
fn bad_base64_is_an_invalid_attachment_not_a_crash() {
    // A valid 1×1 PNG, then base64 that does not decode: only the second is a problem.
    let line = format!(
        "{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"{ONE_PIXEL_PNG}\"}}}},{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"not*base64!\"}}}}]}}"
    );
    let body = format!("{{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":10,\"messages\":[{line}]}}\n");
    let (_dir, path) = temp_with("req.jsonl", body.as_bytes());
    let (doc, code) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "anthropic");
    let got = attachments(&doc);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["verdict"], "ok", "{doc:#}");
    assert_eq!(got[1]["verdict"], "invalid");
    assert_eq!(got[1]["problems"][0]["code"], "base64.invalid");
    assert!(got[1]["problems"][0]["message"].as_str().is_some_and(|m| m.contains("byte 3")), "{doc:#}");
    assert!(got[1]["sha256"].is_null());
    assert!(!got[1]["problems"].as_array().expect("problems").is_empty());
    assert_eq!(code, 1);
}

#[test]
fn bom_crlf_and_invalid_utf8_are_findings() {
    let text = std::fs::read_to_string(sample("pi.jsonl")).expect("sample");
    let mut content = b"\xEF\xBB\xBF".to_vec();
    content.extend_from_slice(text.replace('\n', "\r\n").as_bytes());
    let (_dir, path) = temp_with("crlf.jsonl", &content);
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "pi");
    assert_eq!(attachments(&doc).len(), 2);
    let msgs = doc["findings"].to_string();
    assert!(msgs.contains("CRLF") && msgs.contains("byte-order mark"), "{msgs}");

    let mut lines: Vec<Vec<u8>> = text.lines().map(|l| l.as_bytes().to_vec()).collect();
    // An invalid UTF-8 byte inside a text field of the user message (line 3).
    let pos = lines[2].windows(8).position(|w| w == b"checkout").expect("text");
    lines[2][pos] = 0xFF;
    let content = lines.join(&b'\n');
    let (_dir2, path) = temp_with("utf8.jsonl", &content);
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(attachments(&doc).len(), 2, "the line is still read");
    assert!(doc["findings"].to_string().contains("UTF-8"));
}

#[test]
fn hostile_nesting_is_a_finding_and_the_rest_is_read() {
    let text = std::fs::read_to_string(sample("mux.jsonl")).expect("sample");
    let deep = format!("{}{}\n", "[".repeat(50_000), "]".repeat(50_000));
    let content = format!("{deep}{text}");
    let (_dir, path) = temp_with("deep.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &["--format", "mux"]);
    assert_eq!(attachments(&doc).len(), 2);
    assert_eq!(doc["findings"][0]["line"], 1);
}

#[test]
fn refs_survive_appends() {
    let text = std::fs::read_to_string(sample("claude-code.jsonl")).expect("sample");
    let (_dir, path) = temp_with("s.jsonl", text.as_bytes());
    let (before, _) = scan_json(&path, &[]);
    let last_uuid = "00000000-0000-4000-8000-000000000009";
    let more = format!(
        "{{\"parentUuid\":\"{last_uuid}\",\"isSidechain\":false,\"type\":\"user\",\"uuid\":\"00000000-0000-4000-8000-00000000000a\",\"sessionId\":\"x\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"{}\"}}}}]}}}}\n",
        b64(b"\x89PNG\r\n\x1a\nmore")
    );
    std::fs::OpenOptions::new().append(true).open(&path).expect("open").write_all(more.as_bytes()).expect("append");
    let (after, _) = scan_json(&path, &[]);
    let refs =
        |d: &Value| attachments(d).iter().map(|a| a["ref"].as_str().unwrap_or("").to_string()).collect::<Vec<_>>();
    let (b, a) = (refs(&before), refs(&after));
    assert_eq!(&a[..b.len()], &b[..]);
    assert_eq!(a.last().map(String::as_str), Some("L11.1"));
}

#[test]
fn dead_branches_and_side_chains_are_not_in_the_history() {
    // A rewind: line 3 answers line 1 again, so line 2 (with its image) is a dead branch.
    let img = b64(b"\x89PNG\r\n\x1a\nX");
    let rec = |uuid: &str, parent: &str, side: bool| {
        format!(
            "{{\"parentUuid\":{parent},\"isSidechain\":{side},\"type\":\"user\",\"uuid\":\"{uuid}\",\"sessionId\":\"s\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"{img}\"}}}}]}}}}\n"
        )
    };
    let content =
        [rec("a", "null", false), rec("b", "\"a\"", false), rec("c", "\"a\"", false), rec("d", "\"c\"", true)].concat();
    let (_dir, path) = temp_with("branch.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    let lines: Vec<u64> = attachments(&doc).iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    assert_eq!(lines, vec![1, 3]);
}

#[test]
fn gemini_cli_rewinds_and_last_copy_wins() {
    let img = b64(b"\x89PNG\r\n\x1a\nX");
    let part = format!("{{\"inlineData\":{{\"mimeType\":\"image/png\",\"data\":\"{img}\"}}}}");
    let content = [
        "{\"sessionId\":\"s\",\"projectHash\":\"h\",\"startTime\":\"t\",\"lastUpdated\":\"t\",\"kind\":\"main\"}"
            .to_string(),
        format!("{{\"id\":\"u1\",\"timestamp\":\"t\",\"type\":\"user\",\"content\":[{part}]}}"),
        format!("{{\"id\":\"u2\",\"timestamp\":\"t\",\"type\":\"user\",\"content\":[{part}]}}"),
        format!("{{\"id\":\"u1\",\"timestamp\":\"t\",\"type\":\"user\",\"content\":[{{\"text\":\"edited\"}},{part}]}}"),
        "{\"$rewindTo\":\"u2\"}".to_string(),
    ]
    .join("\n");
    let (_dir, path) = temp_with("g.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "gemini-cli");
    let lines: Vec<u64> = attachments(&doc).iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    assert_eq!(lines, vec![4], "u1's last copy survives; u2 was rewound away");
}

#[test]
fn codex_compaction_replaces_history() {
    let url = format!("data:image/png;base64,{}", b64(b"\x89PNG\r\n\x1a\nX"));
    let item = format!(
        "{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_image\",\"image_url\":\"{url}\"}}]}}"
    );
    let content = [
        "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\",\"cwd\":\"/\",\"originator\":\"codex_cli_rs\",\"cli_version\":\"0.58.0\"}}".to_string(),
        format!("{{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":{item}}}"),
        format!("{{\"timestamp\":\"t\",\"type\":\"compacted\",\"payload\":{{\"message\":\"summary\",\"replacement_history\":[{item}]}}}}"),
        format!("{{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":{item}}}"),
    ]
    .join("\n");
    let (_dir, path) = temp_with("c.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    let lines: Vec<u64> = attachments(&doc).iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    assert_eq!(lines, vec![3, 4]);
}

#[test]
fn one_pretty_printed_document_keeps_payload_lines() {
    let body = serde_json::json!({
        "model": "claude-sonnet-4-5", "max_tokens": 100,
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(b"\x89PNG\r\n\x1a\nA")}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(b"\x89PNG\r\n\x1a\nB")}}
        ]}]
    });
    let text = serde_json::to_string_pretty(&body).expect("json");
    let (_dir, path) = temp_with("req.json", text.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "anthropic");
    let got = attachments(&doc);
    assert_eq!(got.len(), 2);
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map(|i| i as u64 + 1);
    assert_eq!(got[0]["line"].as_u64(), line_of(&b64(b"\x89PNG\r\n\x1a\nA")));
    assert_eq!(
        got[1]["ref"].as_str().map(str::to_string),
        line_of(&b64(b"\x89PNG\r\n\x1a\nB")).map(|l| format!("L{l}.1"))
    );
}

#[test]
fn unreadable_or_unknown_input_exits_2_naming_the_file() {
    let out = run(&["scan", "/nonexistent/session.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/session.jsonl"));
    let (_dir, path) = temp_with("other.jsonl", b"{\"hello\":\"world\"}\n");
    let out = run(&["scan", path.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("other.jsonl") && err.contains("--format"), "{err}");
    let out = run(&["scan", "--format", "nope", path.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn several_files_give_a_json_array() {
    let a = sample("pi.jsonl");
    let b = sample("mux.jsonl");
    let out = run(&["scan", "--json", a.to_str().unwrap_or_default(), b.to_str().unwrap_or_default()]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(2));
}

#[test]
fn split_reading_matches_single_threaded_reading() {
    // Large enough that the reader splits it between workers.
    let text = std::fs::read_to_string(sample("openai-chat.jsonl")).expect("sample");
    let mut content = String::new();
    while content.len() < 6 << 20 {
        content.push_str(&text);
    }
    // Windows line endings: a file-wide note, said once however many workers read.
    let content = content.replace('\n', "\r\n");
    let (_dir, path) = temp_with("big.jsonl", content.as_bytes());
    let read = |threads| {
        let opts = session_doctor::reader::ReadOptions { threads, ..Default::default() };
        session_doctor::reader::read_session(Path::new(&path), &opts).expect("reads")
    };
    let (one, two) = (read(1), read(2));
    assert_eq!(one.findings, two.findings);
    assert_eq!(one.lines, two.lines);
    assert_eq!(one.attachments, two.attachments);
    assert_eq!(one.entries, two.entries);
    assert_eq!(one.attachments.len(), 3, "the last request holds the history");
    assert_eq!(two.findings.len(), 1, "{:?}", two.findings);
}

/// Writes `content` to a temp file and returns (format, attachment lines).
fn detect_and_lines(name: &str, content: &str) -> (String, Vec<u64>) {
    let (_dir, path) = temp_with(name, content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    let lines = attachments(&doc).iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    (doc["format"].as_str().unwrap_or("").to_string(), lines)
}

#[test]
fn older_and_exported_shapes_are_read() {
    let url = format!("data:image/png;base64,{}", b64(b"\x89PNG\r\n\x1a\nX"));
    // Codex before the {timestamp,type,payload} envelope.
    let legacy = [
        "{\"id\":\"0b3c\",\"timestamp\":\"2025-05-01T10:00:00Z\",\"instructions\":null,\"git\":{}}".to_string(),
        "{\"record_type\":\"state\"}".to_string(),
        format!("{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_image\",\"image_url\":\"{url}\"}}]}}"),
        "{\"type\":\"function_call\",\"name\":\"view_image\",\"arguments\":\"{\\\"path\\\":\\\"/a.png\\\"}\",\"call_id\":\"call_1\"}".to_string(),
        format!("{{\"type\":\"function_call_output\",\"call_id\":\"call_1\",\"output\":[{{\"type\":\"input_image\",\"image_url\":\"{url}\"}}]}}"),
    ]
    .join("\n");
    assert_eq!(detect_and_lines("rollout.jsonl", &legacy), ("codex".to_string(), vec![3, 5]));

    // Gemini CLI `/chat save` checkpoint: one document of genai contents.
    let checkpoint = serde_json::json!({"history": [
        {"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": b64(b"\x89PNG\r\n\x1a\nY")}}]},
        {"role": "model", "parts": [{"text": "ok"}]}
    ], "authType": "oauth-personal"});
    let text = serde_json::to_string_pretty(&checkpoint).expect("json");
    let (format, lines) = detect_and_lines("checkpoint-x.json", &text);
    assert_eq!(format, "gemini");
    assert_eq!(lines.len(), 1);

    // Gemini CLI's legacy `.json`: one pretty-printed ConversationRecord.
    let legacy = serde_json::json!({"sessionId": "s", "projectHash": "h", "startTime": "t", "lastUpdated": "t",
    "messages": [
        {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "look"},
            {"inlineData": {"mimeType": "image/png", "data": b64(b"\x89PNG\r\n\x1a\nZ")}}]},
        {"id": "g1", "timestamp": "t", "type": "gemini", "content": "ok", "model": "gemini-2.5-pro",
            "tokens": {"input": 1, "output": 1, "cached": 0, "thoughts": 0, "tool": 0, "total": 2}}
    ]});
    let text = serde_json::to_string_pretty(&legacy).expect("json");
    let (format, lines) = detect_and_lines("session-2025-09-01T10-00-abcd1234.json", &text);
    assert_eq!(format, "gemini-cli");
    let data_line = text.lines().position(|l| l.contains("\"data\"")).map(|i| i as u64 + 1);
    assert_eq!(lines.first().copied(), data_line, "the payload's own line");

    // `opencode export`: one document holding every message.
    let export = serde_json::json!({"info": {"id": "ses_1", "title": "t"}, "messages": [
        {"info": {"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": {"created": 1}},
         "parts": [{"type": "file", "mime": "image/png", "filename": "a.png", "url": url}]},
        {"info": {"id": "msg_2", "sessionID": "ses_1", "role": "assistant", "modelID": "m", "providerID": "anthropic",
                  "tokens": {"input": 1, "output": 1}}, "parts": []}
    ]});
    let text = serde_json::to_string_pretty(&export).expect("json");
    let (format, lines) = detect_and_lines("export.json", &text);
    assert_eq!(format, "opencode");
    assert_eq!(lines.len(), 1);
}

#[test]
fn chat_and_anthropic_requests_are_told_apart() {
    let chat = "{\"model\":\"gpt-4o\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n";
    assert_eq!(detect_and_lines("a.jsonl", chat).0, "openai-chat");
    let claude =
        "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n";
    assert_eq!(detect_and_lines("b.jsonl", claude).0, "anthropic");
    // Shape beats the model's vendor: a Claude model behind a Chat Completions gateway.
    let gateway = "{\"model\":\"anthropic/claude-sonnet-4-5\",\"messages\":[{\"role\":\"system\",\"content\":\"x\"},{\"role\":\"user\",\"content\":\"hi\"}]}\n";
    assert_eq!(detect_and_lines("c.jsonl", gateway).0, "openai-chat");
    let system = "{\"model\":\"gpt-4o\",\"system\":\"be brief\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]}\n";
    assert_eq!(detect_and_lines("d.jsonl", system).0, "anthropic");
}

#[test]
fn a_re_encoded_ui_copy_is_a_mirror_not_a_second_attachment() {
    // Claude Code's `toolUseResult` may hold the original file while the tool
    // result sent to the model holds a resized copy: one attachment, one mirror.
    let sent = b64(b"\x89PNG\r\n\x1a\nresized");
    let original = b64(b"\x89PNG\r\n\x1a\noriginal bytes");
    let line = format!(
        "{{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"s\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":[{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"{sent}\"}}}}]}}]}},\"toolUseResult\":{{\"type\":\"image\",\"file\":{{\"base64\":\"{original}\",\"type\":\"image/png\",\"originalSize\":22}}}}}}\n"
    );
    let (_dir, path) = temp_with("resized.jsonl", line.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    let got = attachments(&doc);
    assert_eq!(got.len(), 1, "{doc:#}");
    assert_eq!(got[0]["pointer"], "/message/content/0/content/0");
    assert_eq!(got[0]["mirrors"].as_array().map(Vec::len), Some(1));
}

#[test]
fn referenced_media_is_listed_with_its_url_and_not_judged() {
    let body = serde_json::json!({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "document", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain text is not media"}}
    ]}]});
    let (_dir, path) = temp_with("refs.jsonl", format!("{body}\n").as_bytes());
    let (doc, code) = scan_json(&path, &[]);
    let got = attachments(&doc);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["encoding"], "reference");
    assert_eq!(got[0]["url"], "https://example.com/a.png");
    assert_eq!(got[1]["url"], "file_011CNha8iCJcU1wXNR6q4V8w");
    assert!(got.iter().all(|a| a["sha256"].is_null() && a["verdict"] == "ok"));
    assert_eq!(code, 0);
}

#[test]
fn format_flag_overrides_detection() {
    // A Chat Completions body read as Anthropic finds Anthropic blocks only.
    let text = std::fs::read_to_string(sample("openai-chat.jsonl")).expect("sample");
    let (_dir, path) = temp_with("chat.jsonl", text.as_bytes());
    let (doc, _) = scan_json(&path, &["--format", "anthropic"]);
    assert_eq!(doc["format"], "anthropic");
    assert_eq!(doc["format_detected"], false);
    assert!(attachments(&doc).is_empty());
}

#[test]
fn refs_printed_by_scan_are_accepted_back() {
    let path = sample("claude-code.jsonl");
    let (all, _) = scan_json(&path, &[]);
    let sha = all["attachments"][0]["sha256"].as_str().expect("sha").to_string();
    let (doc, code) = scan_json(&path, &["--ref", "L7.1", "--ref", &format!("sha256:{}", &sha[..8])]);
    let refs: Vec<&str> = attachments(&doc).iter().filter_map(|a| a["ref"].as_str()).collect();
    assert_eq!(refs, ["L2.1", "L7.1"]);
    assert_eq!(code, 1, "L7.1 is the cut PNG");
    let (doc, code) = scan_json(&path, &["--ref", "L2.1"]);
    assert_eq!(attachments(&doc).len(), 1);
    assert_eq!(code, 0);
    for bad in ["L9.1", "sha256:000000", "X1"] {
        let out = run(&["scan", "--ref", bad, path.to_str().unwrap_or_default()]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
}
