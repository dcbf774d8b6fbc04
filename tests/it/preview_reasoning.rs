//! `preview` shows the reasoning the agent replays, as its provider receives
//! it, for every agent that keeps any: a user sees what `--drop-reasoning-ids`
//! and `--strip-reasoning` change. One test per agent, on its on-disk shape.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents").join(rel)
}

/// `lines` as a JSON Lines file `name` in `dir`.
fn jsonl(dir: &Path, name: &str, lines: &[Value]) -> PathBuf {
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    common::write(dir, name, &text)
}

/// The request `preview` writes, with `extra` arguments.
fn preview(file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["preview", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = common::run(&args);
    assert_eq!(out.status.code(), Some(0), "preview failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the preview is JSON")
}

/// Every element of the request's list (`messages`, `input`, `contents`) and
/// the blocks or parts inside each, flattened.
fn blocks(request: &Value) -> Vec<Value> {
    let list = ["messages", "input", "contents"].iter().find_map(|k| request[*k].as_array()).expect("a list");
    let mut out = Vec::new();
    for m in list {
        out.push(m.clone());
        for k in ["content", "parts"] {
            out.extend(m[k].as_array().into_iter().flatten().cloned());
        }
    }
    out
}

#[test]
fn claude_code_sends_its_thinking_with_its_signature() {
    let dir = tempfile::tempdir().unwrap();
    let sid = "5c82b306-9236-4f44-b9eb-7bc20e7c4fc1";
    let line = |uuid: &str, parent: Value, ty: &str, message: Value| json!({"parentUuid":parent,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":sid,"version":"2.1.332","gitBranch":"","type":ty,"message":message,"uuid":uuid,"timestamp":"2026-12-01T08:00:00.000Z"});
    let reply = |content: Value, stop: Value| json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":content,"stop_reason":stop,"usage":{"input_tokens":1,"output_tokens":1}});
    let file = jsonl(
        dir.path(),
        &format!("{sid}.jsonl"),
        &[
            line("u1", Value::Null, "user", json!({"role":"user","content":"plan it"})),
            line(
                "a1",
                json!("u1"),
                "assistant",
                reply(json!([{"type":"thinking","thinking":"weighing","signature":"EqQBsig"}]), Value::Null),
            ),
            line("a2", json!("a1"), "assistant", reply(json!([{"type":"text","text":"the plan"}]), json!("end_turn"))),
            line("u2", json!("a2"), "user", json!({"role":"user","content":"go on"})),
        ],
    );
    let thinking = json!({"type":"thinking","thinking":"weighing","signature":"EqQBsig"});
    assert!(blocks(&preview(&file, &[])).contains(&thinking), "{}", preview(&file, &[]));
    assert!(!blocks(&preview(&file, &["--strip-reasoning"])).contains(&thinking));
}

#[test]
fn codex_sends_its_reasoning_items_with_their_encrypted_content() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rollout.jsonl");
    std::fs::copy(data("codex/reasoning-rejected-store-false.jsonl"), &file).unwrap();
    let items = blocks(&preview(&file, &[]));
    let reasoning: Vec<&Value> = items.iter().filter(|i| i["type"] == "reasoning").collect();
    assert!(!reasoning.is_empty() && reasoning.iter().all(|r| r["encrypted_content"].is_string()), "{items:#?}");
    let dropped = blocks(&preview(&file, &["--drop-reasoning-ids"]));
    let kept: Vec<&Value> = dropped.iter().filter(|i| i["type"] == "reasoning").collect();
    assert_eq!(kept.len(), reasoning.len());
    assert!(kept.iter().all(|r| r.get("id").is_none() && r["encrypted_content"].is_string()), "{kept:#?}");
}

#[test]
fn pi_sends_the_reasoning_item_its_thinking_signature_holds() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::copy(data("pi/responses-reasoning.jsonl"), &file).unwrap();
    let items = blocks(&preview(&file, &[]));
    let r = items.iter().find(|i| i["type"] == "reasoning").expect("a reasoning item");
    assert!(r["id"].as_str().is_some_and(|i| i.starts_with("rs_")) && r["encrypted_content"].is_string(), "{r}");
    let dropped = blocks(&preview(&file, &["--drop-reasoning-ids"]));
    let r = dropped.iter().find(|i| i["type"] == "reasoning").expect("a reasoning item");
    assert!(r.get("id").is_none() && r["encrypted_content"].is_string(), "{r}");
}

#[test]
fn gemini_cli_sends_its_thoughts_as_thought_parts() {
    let dir = tempfile::tempdir().unwrap();
    let meta = json!({"sessionId":"c5d9e38f-0000-4000-8000-000000000001","projectHash":"ab","startTime":"2026-12-01T08:00:00.000Z","lastUpdated":"2026-12-01T08:00:02.000Z","kind":"main"});
    let user = |id: &str, text: &str| json!({"id":id,"timestamp":"2026-12-01T08:00:00.000Z","type":"user","content":[{"text":text}]});
    let thoughts = json!([{"subject":"Weighing","description":"two ways","timestamp":"2026-12-01T08:00:01.000Z"}]);
    let reply = json!({"id":"g1","timestamp":"2026-12-01T08:00:01.000Z","type":"gemini","content":"the plan","thoughts":thoughts,"tokens":{"input":1,"output":1,"cached":0,"thoughts":1,"tool":0,"total":3},"model":"gemini-2.5-flash"});
    let file = jsonl(
        dir.path(),
        "session-2026-12-01T08-00-c5d9e38f.jsonl",
        &[meta, user("u1", "plan it"), reply, user("u2", "go on")],
    );
    let parts = blocks(&preview(&file, &[]));
    assert!(parts.contains(&json!({"text":"**Weighing** two ways","thought":true})), "{parts:#?}");
}

/// An opencode export of a reply by `provider`/`model` whose reasoning part
/// holds `metadata`, then a user turn to `next` (provider, model).
fn opencode_export(dir: &Path, wrote: (&str, &str), metadata: &Value, next: (&str, &str)) -> PathBuf {
    let user = |id: &str, text: &str, (p, m): (&str, &str)| {
        json!({"info":{"role":"user","time":{"created":1},"agent":"build","model":{"providerID":p,"modelID":m},"id":id,"sessionID":"ses_x"},
            "parts":[{"type":"text","text":text,"id":format!("prt_{id}"),"sessionID":"ses_x","messageID":id}]})
    };
    let reply = json!({"info":{"parentID":"msg_1","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/w","root":"/"},"cost":0,
            "tokens":{"total":110,"input":100,"output":10,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":wrote.1,"providerID":wrote.0,
            "time":{"created":2,"completed":3},"finish":"stop","id":"msg_2","sessionID":"ses_x"},
        "parts":[{"type":"step-start","id":"prt_a","sessionID":"ses_x","messageID":"msg_2"},
            {"type":"reasoning","text":"weighing","time":{"start":2,"end":2},"metadata":metadata,"id":"prt_b","sessionID":"ses_x","messageID":"msg_2"},
            {"type":"text","text":"the plan","id":"prt_c","sessionID":"ses_x","messageID":"msg_2"}]});
    let doc = json!({"info":{"id":"ses_x","slug":"x","projectID":"p","directory":"/w","title":"t","version":"1.18.33","time":{"created":1,"updated":4}},
        "messages":[user("msg_1", "plan it", wrote), reply, user("msg_3", "go on", next)]});
    common::write(dir, "export.json", &doc.to_string())
}

#[test]
fn opencode_sends_reasoning_as_the_ai_sdk_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    // OpenAI, as opencode stores it (seen in the round-trip suite): under its own
    // store: false opencode takes the itemId out, and the SDK sends the blob alone.
    let openai = json!({"openai":{"itemId":"rs_0a1","reasoningEncryptedContent":"gAAAAABblob"}});
    let gpt = ("openai", "gpt-5");
    let items = blocks(&preview(&opencode_export(dir.path(), gpt, &openai, gpt), &[]));
    let want = json!({"type":"reasoning","encrypted_content":"gAAAAABblob","summary":[{"type":"summary_text","text":"weighing"}]});
    assert!(items.contains(&want), "{items:#?}");
    assert!(!items.iter().any(|i| i["type"] == "reasoning") || items.iter().all(|i| i.get("id").is_none()));
    let stripped = blocks(&preview(&opencode_export(dir.path(), gpt, &openai, gpt), &["--strip-reasoning=openai"]));
    assert!(!stripped.iter().any(|i| i["type"] == "reasoning"), "{stripped:#?}");
    // Anthropic: a thinking block with its signature.
    let claude = ("anthropic", "claude-sonnet-4-5");
    let signed = json!({"anthropic":{"signature":"EqQBsig"}});
    let blocks_sent = blocks(&preview(&opencode_export(dir.path(), claude, &signed, claude), &[]));
    assert!(
        blocks_sent.contains(&json!({"type":"thinking","thinking":"weighing","signature":"EqQBsig"})),
        "{blocks_sent:#?}"
    );
    // Another model's reasoning goes as its text.
    let other = ("anthropic", "claude-opus-4-1");
    let blocks_sent = blocks(&preview(&opencode_export(dir.path(), claude, &signed, other), &[]));
    assert!(blocks_sent.contains(&json!({"type":"text","text":"weighing"})), "{blocks_sent:#?}");
    assert!(!blocks_sent.iter().any(|b| b["type"] == "thinking"), "{blocks_sent:#?}");
    // Google: a thought part carrying its signature.
    let gemini = ("google", "gemini-2.5-pro");
    let thought = json!({"google":{"thoughtSignature":"CiQBsig"}});
    let parts = blocks(&preview(&opencode_export(dir.path(), gemini, &thought, gemini), &[]));
    assert!(parts.contains(&json!({"text":"weighing","thought":true,"thoughtSignature":"CiQBsig"})), "{parts:#?}");
}

/// A mux `chat.jsonl`: a reply by `model` whose reasoning part holds `options`, then a user turn.
fn mux_chat(dir: &Path, model: &str, part: &Value) -> PathBuf {
    let usage = json!({"inputTokens":1,"outputTokens":1,"totalTokens":2});
    jsonl(
        dir,
        "chat.jsonl",
        &[
            json!({"id":"m0","role":"user","metadata":{"historySequence":1},"workspaceId":"w","parts":[{"type":"text","text":"plan it"}]}),
            json!({"id":"m1","role":"assistant","workspaceId":"w","metadata":{"historySequence":2,"model":model,"usage":usage},"parts":[part,{"type":"text","text":"the plan"}]}),
            json!({"id":"m2","role":"user","metadata":{"historySequence":3},"workspaceId":"w","parts":[{"type":"text","text":"go on"}]}),
        ],
    )
}

#[test]
fn mux_sends_reasoning_as_the_ai_sdk_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    // OpenAI, store unset: the AI SDK's default sends the id by reference.
    let part = json!({"type":"reasoning","text":"weighing","providerOptions":{"openai":{"itemId":"rs_0a1","reasoningEncryptedContent":"gAAAAABblob"}}});
    let items = blocks(&preview(&mux_chat(dir.path(), "openai:gpt-5.1", &part), &[]));
    assert!(items.contains(&json!({"type":"item_reference","id":"rs_0a1"})), "{items:#?}");
    // Anthropic: the legacy top-level signature too.
    let part = json!({"type":"reasoning","text":"weighing","signature":"EqQBsig"});
    let sent = blocks(&preview(&mux_chat(dir.path(), "anthropic:claude-sonnet-4-5", &part), &[]));
    assert!(sent.contains(&json!({"type":"thinking","thinking":"weighing","signature":"EqQBsig"})), "{sent:#?}");
    // Google: a thought part.
    let part =
        json!({"type":"reasoning","text":"weighing","providerOptions":{"google":{"thoughtSignature":"CiQBsig"}}});
    let parts = blocks(&preview(&mux_chat(dir.path(), "google:gemini-2.5-pro", &part), &[]));
    assert!(parts.contains(&json!({"text":"weighing","thought":true,"thoughtSignature":"CiQBsig"})), "{parts:#?}");
}

/// Seed 004 in opencode under a model's `store: true`: the AI SDK sends the
/// reply's `msg_` item id by reference too, so a route that lost the stored
/// items refuses that after the `rs_` one. `--drop-reasoning-ids` takes both
/// ids out (the reply's text and the encrypted content stay); before, the copy
/// kept the `msg_` reference (and renamed it as if it were opencode's own id).
#[test]
fn drop_reasoning_ids_takes_the_replys_item_id_out_too() {
    let dir = tempfile::tempdir().unwrap();
    let openai = json!({"openai":{"itemId":"rs_0a1","reasoningEncryptedContent":"gAAAAABblob"}});
    let gpt = ("openai", "gpt-5");
    let file = opencode_export(dir.path(), gpt, &openai, gpt);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["messages"][1]["parts"][2]["metadata"] = json!({"openai":{"itemId":"msg_5be687de7531"}});
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let args = ["repair", file.to_str().unwrap(), "--drop-reasoning-ids", "--out", out.to_str().unwrap(), "--json"];
    let (r, code) = common::json_of(&args);
    assert_eq!((code, &r["changes"]["reasoning_ids_dropped"]), (0, &json!(2)), "{r:#}");
    let copy: Value = serde_json::from_str(&std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap()).unwrap();
    let parts = &copy["messages"][1]["parts"];
    assert_eq!(parts[1]["metadata"], json!({"openai":{"reasoningEncryptedContent":"gAAAAABblob"}}), "{parts:#}");
    assert_eq!((&parts[2]["metadata"], &parts[2]["text"]), (&json!({"openai":{}}), &json!("the plan")), "{parts:#}");
    // Stripping OpenAI's reasoning takes the part and, beside it, the reply's id
    // (two removals in nested containers: before, the inner one was lost).
    let out = dir.path().join("stripped");
    std::fs::create_dir(&out).unwrap();
    let args = ["repair", file.to_str().unwrap(), "--strip-reasoning=openai", "--out", out.to_str().unwrap(), "--json"];
    let (r, code) = common::json_of(&args);
    assert_eq!(code, 0, "{r:#}");
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    assert!(!copy.contains("gAAAAABblob") && !copy.contains("msg_5be687de7531") && copy.contains("the plan"), "{copy}");
    // A reply's item id is no reasoning another provider would refuse.
    doc["messages"][1]["parts"][1]["metadata"] = json!({});
    std::fs::write(&file, doc.to_string()).unwrap();
    let (d, code) = common::json_of(&["diagnose", file.to_str().unwrap(), "--json", "--provider", "anthropic"]);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
}

/// Issue 38 round 4: OpenAI's 404 for a reply's text sent by reference, "Item
/// with id 'msg_…' not found.", was called `invalid_request` (only an `rs_` id
/// counted): diagnose prescribed no cure, and a copy without the id was still
/// judged stuck by that error given again.
#[test]
fn a_reply_item_id_not_found_is_cured_by_dropping_the_replayed_ids() {
    let dir = tempfile::tempdir().unwrap();
    let gpt = ("openai", "gpt-5");
    let file = opencode_export(dir.path(), gpt, &json!({}), gpt);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["messages"][1]["parts"][2]["metadata"] = json!({"openai":{"itemId":"msg_5be687de7531"}});
    std::fs::write(&file, doc.to_string()).unwrap();
    let error = "Item with id 'msg_5be687de7531' not found.";
    let (d, code) = common::diagnose(&file, &["--error", error]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("reasoning_rejected")), "{d:#}");
    assert!(d["next"].to_string().contains("--drop-reasoning-ids"), "{d:#}");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let args = ["repair", file.to_str().unwrap(), "--drop-reasoning-ids", "--out", out.to_str().unwrap(), "--json"];
    let (r, code) = common::json_of(&args);
    assert_eq!((code, &r["changes"]["reasoning_ids_dropped"]), (0, &json!(1)), "{r:#}");
    let copy = Path::new(r["out"].as_str().unwrap());
    assert!(!std::fs::read_to_string(copy).unwrap().contains("msg_5be687de7531"));
    let (d, code) = common::diagnose(copy, &["--error", error]);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
}

#[test]
fn cline_sends_its_thinking_with_its_signature() {
    // The IDE extension's task history, in Anthropic's shape, as Cline keeps it.
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("1796198400999");
    std::fs::create_dir(&task).unwrap();
    let history = json!([
        {"role":"user","content":[{"type":"text","text":"<task>\nplan it\n</task>"}]},
        {"role":"assistant","content":[{"type":"thinking","thinking":"weighing","signature":"EqQBsig"},{"type":"text","text":"the plan"}]},
        {"role":"user","content":[{"type":"text","text":"go on"}]}
    ]);
    let file = common::write(&task, "api_conversation_history.json", &history.to_string());
    let thinking = json!({"type":"thinking","thinking":"weighing","signature":"EqQBsig"});
    assert!(blocks(&preview(&file, &[])).contains(&thinking));
    assert!(!blocks(&preview(&file, &["--strip-reasoning"])).contains(&thinking));
}
