//! Layouts the agents really write, in the project's own fixtures (real shapes,
//! real bytes): pi's earlier sessions, one JSON document laid out over many
//! lines, references without bytes, damaged parent links, Cline's history,
//! opencode's database and storage tree.

use crate::common;
use crate::common::media_corpus;

use std::path::PathBuf;

use common::{b64, run, scan_json, sha256_file};
use serde_json::{Value, json};

fn temp_with(name: &str, content: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join(name);
    std::fs::write(&p, content).expect("write");
    (dir, p)
}

fn lines(v: &[Value]) -> String {
    v.iter().map(|l| l.to_string() + "\n").collect()
}

fn attachments(doc: &Value) -> &Vec<Value> {
    doc["attachments"].as_array().expect("attachments array")
}

fn png_b64() -> String {
    b64(&media_corpus::png(3, 2))
}

/// A PNG cut short: header and part of the image data.
fn cut_png_b64() -> String {
    let p = media_corpus::png(8, 8);
    b64(&p[..p.len() / 2])
}

#[test]
fn pi_v1_layout_is_pi_in_file_order_with_the_header_provider() {
    // pi before session v2 (Dec 2025): a header naming provider and model, entries
    // without id/parentId; a read tool returns an image.
    let content = lines(&[
        json!({"type":"session","id":"ffae836b-0000-4000-8000-000000000001","timestamp":"2025-12-09T00:53:29.825Z",
            "cwd":"/home/u/app","provider":"openai","modelId":"gpt-5","thinkingLevel":"off"}),
        json!({"type":"message","timestamp":"2025-12-08T22:41:05.306Z","message":{"role":"user",
            "content":[{"type":"text","text":"read the screenshot"}],"timestamp":1_765_233_665_292_u64}}),
        json!({"type":"message","timestamp":"2025-12-08T22:41:09.389Z","message":{"role":"assistant",
            "content":[{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"/home/u/app/shot.png"}}],
            "api":"openai-responses","provider":"openai","model":"gpt-5",
            "usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"toolUse","timestamp":1_765_233_669_389_u64}}),
        json!({"type":"message","timestamp":"2025-12-08T22:41:09.394Z","message":{"role":"toolResult","toolCallId":"call_1",
            "toolName":"read","content":[{"type":"text","text":"Read image file [image/png]"},
            {"type":"image","data":cut_png_b64(),"mimeType":"image/png"}],"isError":false,"timestamp":1_765_233_669_394_u64}}),
        json!({"type":"thinking_level_change","timestamp":"2025-12-08T22:45:42.397Z","thinkingLevel":"low"}),
    ]);
    let (_dir, path) = temp_with("2025-12-09T00-53-29-825Z_ffae836b.jsonl", content.as_bytes());
    let (doc, code) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "pi", "{doc:#}");
    assert_eq!(doc["provider"], "openai", "the header's provider judges the media");
    let got = attachments(&doc);
    assert_eq!(got.len(), 1, "{doc:#}");
    assert_eq!(got[0]["line"], 4);
    assert_eq!(got[0]["origin"], "tool_result");
    assert_eq!(got[0]["name"], "/home/u/app/shot.png");
    assert_eq!(got[0]["verdict"], "invalid", "the cut PNG is found");
    assert_eq!(doc["entries"], 3);
    assert_eq!(code, 1);
    // `--format pi` reads the same.
    let (doc, _) = scan_json(&path, &["--format", "pi"]);
    assert_eq!(attachments(&doc).len(), 1);
}

#[test]
fn pi_v1_compaction_keeps_entries_from_its_index() {
    let img = |t: &str| {
        json!({"type":"message","timestamp":t,"message":{"role":"user",
        "content":[{"type":"image","data":png_b64(),"mimeType":"image/png"}],"timestamp":1}})
    };
    let content = lines(&[
        json!({"type":"session","id":"s","timestamp":"t","cwd":"/","provider":"anthropic","modelId":"claude-sonnet-4-5"}),
        img("a"), // entry 1: compacted away
        img("b"), // entry 2: kept
        json!({"type":"compaction","timestamp":"c","summary":"so far","firstKeptEntryIndex":2,"tokensBefore":1000}),
        json!({"type":"model_change","timestamp":"d","provider":"openai","modelId":"gpt-5"}),
        img("e"),
    ]);
    let (_dir, path) = temp_with("v1.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "pi");
    let lines: Vec<u64> = attachments(&doc).iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    assert_eq!(lines, vec![3, 6], "{doc:#}");
    assert_eq!(doc["provider"], "openai", "model_change names the provider in use now");
}

#[test]
fn one_document_one_element_per_line_is_read_as_one_document() {
    // A valid JSON document laid out one message per line (not JSON Lines: the
    // lines end in commas): every line is one element, its image on its own line.
    let msgs = [
        json!({"role":"user","content":[{"type":"text","text":"look"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":png_b64()}}]}),
        json!({"role":"assistant","content":[{"type":"text","text":"a red square"}]}),
        json!({"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":cut_png_b64()}}]}),
    ];
    let body: Vec<String> = msgs.iter().map(Value::to_string).collect();
    let text =
        format!("{{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":1024,\"messages\":[\n{}\n]}}\n", body.join(",\n"));
    let (_dir, path) = temp_with("checkpoint.json", text.as_bytes());
    let (doc, code) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "anthropic", "{doc:#}");
    assert!(doc["findings"].as_array().is_some_and(Vec::is_empty), "no line is 'not valid JSON': {doc:#}");
    let got = attachments(&doc);
    let lines: Vec<u64> = got.iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    assert_eq!(lines, vec![2, 4]);
    assert_eq!(got[1]["verdict"], "invalid");
    assert_eq!(code, 1);
}

#[test]
fn an_array_of_request_bodies_reads_the_last_one() {
    // Each element is a logged request; the last holds the whole history.
    let first = json!({"model":"gpt-4o","messages":[{"role":"system","content":"x"},{"role":"user","content":[
        {"type":"image_url","image_url":{"url":format!("data:image/png;base64,{}", png_b64())}}]}]});
    let mut second = first.clone();
    second["messages"].as_array_mut().expect("array").push(json!({"role":"user","content":[
        {"type":"image_url","image_url":{"url":format!("data:image/png;base64,{}", cut_png_b64())}}]}));
    let text = format!("[\n{first},\n{second}\n]\n");
    let (_dir, path) = temp_with("requests.json", text.as_bytes());
    let (doc, code) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "openai-chat", "{doc:#}");
    let got = attachments(&doc);
    assert_eq!(got.len(), 2, "only the last request's history: {doc:#}");
    assert!(got.iter().all(|a| a["line"] == 3));
    assert_eq!(got[0]["pointer"], "/1/messages/1/content/0");
    assert_eq!(code, 1);
    // The same, pretty-printed.
    let text = serde_json::to_string_pretty(&json!([first, second])).expect("json");
    let (_dir, path) = temp_with("requests-pretty.json", text.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(attachments(&doc).len(), 2);
}

#[test]
fn cline_history_with_an_image_and_its_task_metadata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let task = dir.path().join("tasks").join("1770912345678");
    std::fs::create_dir_all(&task).expect("mkdir");
    let history = json!([
        {"role":"user","content":[
            {"type":"text","text":"<task>\nwhat is in this screenshot?\n</task>"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":png_b64()}},
            {"type":"text","text":"<environment_details>\n# VSCode Visible Files\n</environment_details>"}]},
        {"role":"assistant","content":[{"type":"text","text":"Let me look."},
            {"type":"tool_use","id":"toolu_01A","name":"read_file","input":{"path":"shot.png"}}]},
        {"role":"user","content":[
            {"type":"tool_result","tool_use_id":"toolu_01A","content":[{"type":"text","text":"[read_file for 'shot.png'] Result:"},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":cut_png_b64()}}]},
            {"type":"text","text":"<environment_details>\n# VSCode Visible Files\n</environment_details>"}]}
    ]);
    let path = task.join("api_conversation_history.json");
    std::fs::write(&path, serde_json::to_string(&history).expect("json")).expect("write");
    let metadata = json!({"files_in_context":[],"model_usage":[
        {"ts":1,"model_id":"claude-sonnet-4-5","model_provider_id":"anthropic","mode":"act"},
        {"ts":2,"model_id":"gemini-2.5-pro","model_provider_id":"gemini","mode":"act"}],"environment_history":[]});
    std::fs::write(task.join("task_metadata.json"), metadata.to_string()).expect("write");
    let before = sha256_file(&path);
    let (doc, code) = scan_json(&path, &[]);
    assert_eq!(sha256_file(&path), before);
    assert_eq!(doc["format"], "cline", "{doc:#}");
    assert_eq!(doc["provider"], "gemini", "task_metadata.json names the model in use");
    let got = attachments(&doc);
    assert_eq!(got.len(), 2, "{doc:#}");
    assert_eq!(got[0]["origin"], "user");
    assert_eq!(got[1]["origin"], "tool_result");
    assert_eq!(got[1]["call_id"], "toolu_01A");
    assert_eq!(got[1]["name"], "shot.png");
    assert_eq!(got[1]["verdict"], "invalid");
    assert_eq!(code, 1);
    // Without its folder's metadata, Cline talks to Anthropic.
    std::fs::remove_file(task.join("task_metadata.json")).expect("rm");
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["provider"], "anthropic");
}

#[test]
fn references_without_bytes_are_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let here = dir.path().join("here.png");
    std::fs::write(&here, media_corpus::png(2, 2)).expect("write");
    let gone = dir.path().join("gone.png");
    let url = |u: &str| json!({"type":"image_url","image_url":{"url":u}});
    let body = json!({"model":"gpt-4o","messages":[{"role":"system","content":"x"},{"role":"user","content":[
        url("https://example.com/a.png"),
        url("file-abc123"),
        url(""),
        url("[REDACTED]"),
        url(&format!("file://{}", here.display())),
        url(gone.to_str().expect("utf-8")),
    ]}]});
    let path = dir.path().join("refs.jsonl");
    std::fs::write(&path, format!("{body}\n")).expect("write");
    let (doc, code) = scan_json(&path, &[]);
    let got = attachments(&doc);
    assert_eq!(got.len(), 6, "{doc:#}");
    let verdicts: Vec<&str> = got.iter().map(|a| a["verdict"].as_str().unwrap_or("")).collect();
    assert_eq!(verdicts, ["ok", "ok", "invalid", "invalid", "ok", "invalid"], "{doc:#}");
    assert!(got.iter().all(|a| a["encoding"] == "reference"));
    assert_eq!(got[2]["problems"][0]["code"], "reference.unfetchable");
    assert_eq!(got[3]["problems"][0]["code"], "reference.unfetchable");
    assert!(got[3]["problems"][0]["message"].as_str().is_some_and(|m| m.contains("[REDACTED]")));
    // The local file that exists is read and judged like inline bytes.
    assert_eq!(got[4]["mime_detected"], "image/png");
    assert_eq!(got[4]["width"], 2);
    assert!(got[4]["sha256"].is_string());
    assert_eq!(got[5]["problems"][0]["code"], "reference.missing");
    assert!(got[5]["problems"][0]["message"].as_str().is_some_and(|m| m.contains("no longer available")));
    assert_eq!(code, 1);
}

#[test]
fn a_copilot_cli_event_log_is_read_as_its_session() {
    let content = lines(&[
        json!({"type":"session.start","data":{"sessionId":"s","version":1,"producer":"copilot-agent"},"id":"a","timestamp":"t","parentId":null}),
        json!({"type":"user.message","data":{"content":"hi"},"id":"b","timestamp":"t","parentId":"a"}),
    ]);
    let (_dir, path) = temp_with("events.jsonl", content.as_bytes());
    let out = run(&["scan", "--json", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["format"], "copilot", "{v:#}");
}

#[test]
fn a_parent_cycle_is_a_finding_and_the_history_is_kept() {
    let rec = |uuid: &str, parent: Value| {
        json!({"parentUuid":parent,"isSidechain":false,"type":"user","uuid":uuid,"sessionId":"s",
            "message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":png_b64()}}]}})
    };
    // Line 2 names itself as its parent.
    let content = lines(&[rec("a", Value::Null), rec("b", json!("b")), rec("c", json!("b"))]);
    let (_dir, path) = temp_with("self.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    let got: Vec<u64> = attachments(&doc).iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    assert_eq!(got, vec![1, 2, 3], "{doc:#}");
    assert_eq!(doc["entries"], 3);
    let f = &doc["findings"][0];
    assert_eq!(f["line"], 2, "{doc:#}");
    assert_eq!(f["code"], "history.parent_cycle");
    assert!(f["message"].as_str().is_some_and(|m| m.contains("itself")));

    // pi: line 3 names line 4 (its own child) as its parent.
    let msg = |id: &str, parent: &str| {
        json!({"type":"message","id":id,"parentId":parent,"timestamp":"t","message":{"role":"user",
            "content":[{"type":"image","data":png_b64(),"mimeType":"image/png"}],"timestamp":1}})
    };
    // A pi header, a first message, then two with images linked as given.
    let pi = |second: Value, third: Value| {
        lines(&[
            json!({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}),
            json!({"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}),
            second,
            third,
        ])
    };
    let content = pi(msg("00000002", "00000003"), msg("00000003", "00000002"));
    let (_dir, path) = temp_with("cycle.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "pi");
    let got: Vec<u64> = attachments(&doc).iter().map(|a| a["line"].as_u64().unwrap_or(0)).collect();
    assert_eq!(got, vec![3, 4], "{doc:#}");
    assert_eq!(doc["entries"], 3, "the first message is kept too");
    assert_eq!(doc["findings"][0]["line"], 3);
    assert_eq!(doc["findings"][0]["code"], "history.parent_cycle");

    // A parent that is nowhere in the file.
    let content = lines(&[rec("a", Value::Null), rec("b", json!("zzz")), rec("c", json!("b"))]);
    let (_dir, path) = temp_with("missing.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(attachments(&doc).len(), 3);
    assert_eq!(doc["findings"][0]["line"], 2);
    assert_eq!(doc["findings"][0]["code"], "history.parent_missing");
    let message = doc["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("the entries before it are read in file order"), "{message}");

    // pi walks back from its last entry and stops at such a link (its session
    // manager's buildSessionContext): the finding says what pi sends, not only
    // how the file was read.
    let content = pi(msg("00000002", "0000dead"), msg("00000003", "00000002"));
    let (_dir, path) = temp_with("pi-missing.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "pi");
    assert_eq!(
        (&doc["findings"][0]["line"], &doc["findings"][0]["code"]),
        (&json!(3), &json!("history.parent_missing"))
    );
    let message = doc["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("pi stops there, and sends only the entries from this line on"), "{message}");
    // And the history is what pi sends: the first message is not in it.
    assert_eq!(doc["entries"], 2, "{doc:#}");
    let out = run(&["preview", path.to_str().unwrap()]);
    let request: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!request.to_string().contains("\"hi\""), "{request:#}");
}

/// An opencode message: its id, its info (without ids) and its parts (id, data).
type Message = (&'static str, Value, Vec<(&'static str, Value)>);

/// A user message pasting an image, an assistant turn reading a file whose
/// result attaches a cut PNG, and the provider's rejection.
fn opencode_messages() -> Vec<Message> {
    let url = |b: &str| format!("data:image/png;base64,{b}");
    vec![
        (
            "msg_01",
            json!({"role":"user","time":{"created":1},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}),
            vec![
                ("prt_01a", json!({"type":"text","text":"what is wrong here?"})),
                ("prt_01b", json!({"type":"file","mime":"image/png","filename":"shot.png","url":url(&png_b64())})),
            ],
        ),
        (
            "msg_02",
            json!({"role":"assistant","time":{"created":2,"completed":3},"parentID":"msg_01","modelID":"claude-sonnet-4-5",
                "providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/w","root":"/w"},"cost":0,
                "tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"tool-calls"}),
            vec![(
                "prt_02a",
                json!({"type":"tool","callID":"toolu_01","tool":"read","state":{"status":"completed",
                "input":{"filePath":"/w/diagram.png"},"output":"Image read","title":"diagram.png","metadata":{},
                "time":{"start":2,"end":3},"attachments":[{"type":"file","mime":"image/png","filename":"diagram.png","url":url(&cut_png_b64())}]}}),
            )],
        ),
        (
            "msg_03",
            json!({"role":"assistant","time":{"created":4},"parentID":"msg_01","modelID":"claude-sonnet-4-5","providerID":"anthropic",
                "mode":"build","agent":"build","path":{"cwd":"/w","root":"/w"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},
                "error":{"name":"APIError","data":{"message":"Could not process image","statusCode":400,"isRetryable":false}}}),
            vec![],
        ),
    ]
}

fn opencode_db(path: &std::path::Path) {
    let db = rusqlite::Connection::open(path).expect("create db");
    db.pragma_update(None, "journal_mode", "WAL").expect("wal");
    db.execute_batch(common::OPENCODE_SCHEMA).expect("schema");
    db.execute("INSERT INTO project VALUES ('prj_1','/w','git','w',NULL,NULL,1,1,NULL,'[]')", []).expect("project");
    for (id, title, updated) in [("ses_old", "an older session", 10), ("ses_new", "the screenshot", 20)] {
        db.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?1,'prj_1','s','/w',?2,'1.2.3',1,?3)",
            rusqlite::params![id, title, updated],
        )
        .expect("session");
    }
    for (n, (id, info, parts)) in opencode_messages().into_iter().enumerate() {
        db.execute(
            "INSERT INTO message VALUES (?1,'ses_new',?2,?2,?3)",
            rusqlite::params![id, i64::try_from(n).unwrap(), info.to_string()],
        )
        .expect("message");
        for (pid, p) in parts {
            db.execute(
                "INSERT INTO part VALUES (?1,?2,'ses_new',?3,?3,?4)",
                rusqlite::params![pid, id, i64::try_from(n).unwrap(), p.to_string()],
            )
            .expect("part");
        }
    }
    db.execute(
        "INSERT INTO message VALUES ('msg_00','ses_old',0,0,?1)",
        [json!({"role":"user","time":{"created":0},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5"}})
            .to_string()],
    )
    .expect("message");
}

#[test]
fn opencode_database_most_recent_session_or_the_one_asked_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("opencode.db");
    opencode_db(&path);
    // opencode keeps it open: its WAL is beside it. Read, never written.
    let keep_open = rusqlite::Connection::open(&path).expect("opencode has it open");
    let before = sha256_file(&path);
    let out = run(&["scan", "--json", path.to_str().expect("utf-8")]);
    assert_eq!(sha256_file(&path), before);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ses_new") && err.contains("--session"), "says which session: {err}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["format"], "opencode");
    assert_eq!(doc["provider"], "anthropic");
    let got = attachments(&doc);
    assert_eq!(got.len(), 2, "{doc:#}");
    assert_eq!(got[0]["origin"], "user");
    assert_eq!(got[0]["name"], "shot.png");
    assert_eq!(got[0]["verdict"], "ok");
    assert_eq!(got[1]["origin"], "tool_result");
    assert_eq!(got[1]["call_id"], "toolu_01");
    assert_eq!(got[1]["verdict"], "invalid");
    assert_eq!(got[1]["line"], 2, "one message per line: the ref names the message");
    assert_eq!(out.status.code(), Some(1));

    let (doc, code) = scan_json(&path, &["--session", "ses_old"]);
    assert_eq!(attachments(&doc).len(), 0);
    assert_eq!(doc["entries"], 1);
    assert_eq!(code, 0);
    let out = run(&["scan", "--session", "ses_nope", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ses_new"));
    // An exclusion of a stored session sits beside the store, named by the session.
    let out = run(&["exclude", path.to_str().expect("utf-8"), "--session", "ses_new", "--ref", "L2.1"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("ses_new.doctor").exists());
    assert_eq!(sha256_file(&path), before);
    let (doc, _) = scan_json(&path, &["--session", "ses_new"]);
    assert_eq!(attachments(&doc)[1]["excluded"], true);
    drop(keep_open);
}

#[test]
fn opencode_storage_tree_by_folder_and_by_session_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = dir.path().join("storage");
    let write = |p: PathBuf, v: &Value| {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, serde_json::to_string_pretty(v).expect("json")).expect("write");
    };
    write(
        storage.join("session/prj_1/ses_1.json"),
        &json!({"id":"ses_1","projectID":"prj_1","directory":"/w","title":"t","version":"0.9.0","time":{"created":1,"updated":5}}),
    );
    for (id, mut info, parts) in opencode_messages() {
        info["id"] = json!(id);
        info["sessionID"] = json!("ses_1");
        write(storage.join(format!("message/ses_1/{id}.json")), &info);
        for (pid, mut p) in parts {
            p["id"] = json!(pid);
            p["messageID"] = json!(id);
            p["sessionID"] = json!("ses_1");
            write(storage.join(format!("part/{id}/{pid}.json")), &p);
        }
    }
    for target in [dir.path().to_path_buf(), storage.clone(), storage.join("session/prj_1/ses_1.json")] {
        let (doc, code) = scan_json(&target, &[]);
        assert_eq!(doc["format"], "opencode", "{}", target.display());
        let got = attachments(&doc);
        assert_eq!(got.len(), 2, "{}: {doc:#}", target.display());
        assert_eq!(got[1]["verdict"], "invalid");
        assert_eq!(code, 1);
    }
    // One part record: the error names the folder to point at.
    let part = storage.join("part/msg_01/prt_01b.json");
    let out = run(&["scan", part.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("scan {} --session ses_1", storage.display())), "{err}");
}

#[test]
fn codex_user_message_event_images_are_mirrors() {
    let url = format!("data:image/png;base64,{}", png_b64());
    let content = lines(&[
        json!({"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/","originator":"codex_cli_rs","cli_version":"0.58.0","model_provider":"openai"}}),
        json!({"timestamp":"t","type":"turn_context","payload":{"cwd":"/","model":"gpt-5-codex","approval_policy":"never","sandbox_policy":{"mode":"read-only"},"summary":"auto"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[
            {"type":"input_text","text":"<image name=[Image #1]>"},{"type":"input_image","image_url":url},{"type":"input_text","text":"</image>"},
            {"type":"input_text","text":"what is this?"}]}}),
        json!({"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"what is this?","images":[url],"local_images":[]}}),
    ]);
    let (_dir, path) = temp_with("rollout.jsonl", content.as_bytes());
    let (doc, _) = scan_json(&path, &[]);
    assert_eq!(doc["format"], "codex");
    let got = attachments(&doc);
    assert_eq!(got.len(), 1, "counted once: {doc:#}");
    assert_eq!(got[0]["line"], 3);
    let mirrors = got[0]["mirrors"].as_array().expect("mirrors");
    assert_eq!(mirrors.len(), 1, "the event's copy keeps its place");
    let off = usize::try_from(mirrors[0]["offset"].as_u64().expect("offset")).unwrap();
    let line4 = content.lines().take(3).map(|l| l.len() + 1).sum::<usize>();
    assert!(off > line4, "the mirror is on line 4");
}

#[test]
fn an_explicit_format_that_recognises_nothing_is_an_error() {
    let content = lines(&[
        json!({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}),
        json!({"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}),
    ]);
    let (_dir, path) = temp_with("pi.jsonl", content.as_bytes());
    for format in ["mux", "opencode", "codex", "gemini-cli", "claude-code"] {
        let out = run(&["scan", "--format", format, path.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(2), "{format}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("0 entries") && err.contains("--format pi"), "{format}: {err}");
    }
}
