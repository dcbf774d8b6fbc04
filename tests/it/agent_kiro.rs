//! Kiro CLI sessions (`~/.kiro/sessions/cli/<id>.jsonl` beside `<id>.json`),
//! built here in the layout real kiro-cli 2.24 and 2.27 runs wrote (see
//! docs/formats.md for the sources): Kiro CLI is not on npm, so it is not
//! driven. Images are real PNG bytes, spelled as Kiro spells them: a list of
//! numbers under `source.data`.

use crate::common;
use crate::common::media_corpus;

use std::path::PathBuf;

use common::{json_of, run};
use serde_json::{Value, json};

const ID: &str = "d2db899b-7e34-4f60-be19-750e06623c82";

/// An image block's data as Kiro writes it.
fn image(png: &[u8]) -> Value {
    json!({"format": "png", "source": {"kind": "bytes", "data": png}})
}

fn prompt(id: &str, text: &str, images: &[&[u8]]) -> Value {
    let mut content = vec![json!({"kind": "text", "data": text})];
    content.extend(images.iter().map(|p| json!({"kind": "image", "data": image(p)})));
    json!({"version": "v1", "kind": "Prompt", "data": {"message_id": id, "content": content, "meta": {"timestamp": 1_790_244_823}}})
}

fn reply(id: &str, text: &str) -> Value {
    json!({"version": "v1", "kind": "AssistantMessage", "data": {"message_id": id, "content": [{"kind": "text", "data": text}]}})
}

fn read_call(id: &str, call: &str, path: &str) -> Value {
    json!({"version": "v1", "kind": "AssistantMessage", "data": {"message_id": id, "content": [
        {"kind": "text", "data": ""},
        {"kind": "toolUse", "data": {"toolUseId": call, "name": "read",
            "input": {"operations": [{"mode": "Image", "image_paths": [path]}]}}}]}})
}

/// The tool's result, and Kiro's record of the run in `results` repeating its image.
fn read_result(id: &str, call: &str, path: &str, png: &[u8]) -> Value {
    json!({"version": "v1", "kind": "ToolResults", "data": {"message_id": id,
        "content": [{"kind": "toolResult", "data": {"toolUseId": call,
            "content": [{"kind": "image", "data": image(png)}], "status": "success"}}],
        "results": {call: {"tool": {"tool_use_purpose": null, "kind": {"BuiltIn": {"FileRead": {"operations": [{"mode": "Image", "paths": [path]}]}}}},
            "result": {"Success": {"items": [{"Image": image(png)}]}}}}}})
}

/// The metadata Kiro keeps beside the transcript.
fn metadata(id: &str) -> Value {
    json!({"session_id": id, "cwd": "/work", "created_at": "2026-09-24T10:13:43.578042402Z",
        "updated_at": "2026-09-24T10:13:54.113253287Z", "title": "what is in this image",
        "session_created_reason": "user",
        "session_state": {"version": "v1", "conversation_metadata": {"user_turn_metadatas": []},
            "rts_model_state": {"conversation_id": id, "model_info": {"model_name": "auto", "model_id": "auto", "context_window_tokens": 200_000}},
            "agent_name": "kiro_default"}})
}

/// `<home>/.kiro/sessions/cli/<ID>.jsonl` and its `.json`.
fn session(lines: &[Value]) -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let cli = home.path().join(".kiro/sessions/cli");
    std::fs::create_dir_all(&cli).unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = cli.join(format!("{ID}.jsonl"));
    std::fs::write(&path, text).unwrap();
    std::fs::write(cli.join(format!("{ID}.json")), serde_json::to_vec_pretty(&metadata(ID)).unwrap()).unwrap();
    (home, path)
}

/// A PNG cut short: its IEND and the end of its IDAT gone.
fn cut_png() -> Vec<u8> {
    let png = media_corpus::png(24, 24);
    png[..png.len() - 20].to_vec()
}

/// A prompt with a valid PNG, then a read of a cut one: what users of
/// kirodotdev/Kiro#8884 and #10075 saw stick.
fn stuck() -> Vec<Value> {
    let ok = media_corpus::png(8, 8);
    vec![
        prompt("m1", "what is in this image", &[&ok]),
        reply("m2", "A square."),
        prompt("m3", "now read shot.png", &[]),
        read_call("m4", "tooluse_1", "/work/shot.png"),
        read_result("m5", "tooluse_1", "/work/shot.png", &cut_png()),
    ]
}

fn atts(v: &Value) -> &Vec<Value> {
    v["attachments"].as_array().unwrap()
}

#[test]
fn scan_reads_the_images_as_kiro_spells_them_and_names_the_cut_one() {
    let (_home, s) = session(&stuck());
    let (v, code) = common::scan_json(&s, &[]);
    assert_eq!(v["format"], json!("kiro"), "{v:#}");
    let a = atts(&v);
    // The copy in `results` is not a third attachment.
    assert_eq!(a.len(), 2, "{v:#}");
    assert_eq!((&a[0]["origin"], &a[0]["verdict"], &a[0]["encoding"]), (&json!("user"), &json!("ok"), &json!("bytes")));
    assert_eq!((&a[1]["origin"], &a[1]["verdict"]), (&json!("tool_result"), &json!("invalid")), "{v:#}");
    assert_eq!(a[1]["call_id"], json!("tooluse_1"), "{v:#}");
    assert_eq!(a[1]["line"], json!(5), "{v:#}");
    assert_eq!(code, 1, "{v:#}");
}

#[test]
fn sessions_lists_kiro_cli_sessions_under_kiro_home() {
    let (home, s) = session(&stuck());
    let out = common::bin()
        .args(["sessions", "--agent", "kiro", "--json"])
        .env("HOME", "/nonexistent")
        .env("KIRO_HOME", home.path().join(".kiro"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(s.to_str().unwrap()), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn diagnose_names_the_cut_png_from_its_bytes() {
    let (_home, s) = session(&stuck());
    let (v, _) = common::diagnose(&s, &[]);
    let prime = common::primes(&v);
    assert_eq!(prime.len(), 1, "{v:#}");
    assert_eq!(prime[0]["call_id"], json!("tooluse_1"), "{v:#}");
    assert_eq!(prime[0]["name"], json!("/work/shot.png"), "{v:#}");
}

/// A healthy history ending in a prompt with no answer: Kiro CLI writes no
/// failed request, so the file cannot say it failed, and diagnose asks.
#[test]
fn diagnose_says_kiro_records_no_failure_and_asks_for_it() {
    let ok = media_corpus::png(8, 8);
    let (_home, s) = session(&[prompt("m1", "look", &[&ok]), reply("m2", "seen"), prompt("m3", "and now?", &[])]);
    let (v, _) = common::diagnose(&s, &[]);
    assert!(v.to_string().contains("Kiro CLI records no failed request"), "{v:#}");
}

/// Kiro's own wording (kirodotdev/Kiro#10075): 101 images where 100 are taken.
#[test]
fn a_hundred_and_one_images_are_over_the_limit_and_a_repair_keeps_a_hundred() {
    let png = media_corpus::png(4, 4);
    let mut lines = Vec::new();
    for i in 0..101 {
        lines.push(prompt(&format!("p{i}"), "look", &[&png]));
        lines.push(reply(&format!("r{i}"), "seen"));
    }
    lines.push(prompt("last", "and now?", &[]));
    let (home, s) = session(&lines);
    let (v, code) = common::scan_json(&s, &[]);
    assert_eq!(atts(&v).len(), 101, "{v:#}");
    assert_eq!(code, 1, "{v:#}");
    let err = "too many inline media segments: 101 exceeds limit 100";
    let (d, _) = common::diagnose(&s, &["--error", err]);
    assert_eq!(d["failure"]["class"], json!("image_limit"), "{d:#}");
    assert_eq!(d["failure"]["limit"], json!(100), "{d:#}");
    // The next step is a repair; preview, which does not model Kiro's request, is not offered.
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(next.iter().any(|c| c.contains("repair") && c.ends_with("--max-images 100")), "{d:#}");
    assert!(next.iter().all(|c| !c.contains(" preview ")), "{d:#}");
    // Its other wording (kirodotdev/Kiro#9629).
    let (d, _) =
        common::diagnose(&s, &["--error", "too many images and documents: 101 + 0 > 100 (Request ID: a21c4d6e)"]);
    assert_eq!((&d["failure"]["class"], &d["failure"]["limit"]), (&json!("image_limit"), &json!(100)), "{d:#}");
    let before = std::fs::read(&s).unwrap();
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--max-images", "100", "--json"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(std::fs::read(&s).unwrap(), before, "the original is never written");
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    let (c, code) = common::scan_json(&copy, &[]);
    assert_eq!(atts(&c).len(), 100, "{c:#}");
    assert_eq!(code, 0, "{c:#}");
    drop(home);
}

#[test]
fn repair_writes_a_resumable_copy_with_its_own_id_and_metadata() {
    let (home, s) = session(&stuck());
    let before = std::fs::read(&s).unwrap();
    let meta_before = std::fs::read(s.with_extension("json")).unwrap();
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(std::fs::read(&s).unwrap(), before);
    assert_eq!(std::fs::read(s.with_extension("json")).unwrap(), meta_before);
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    assert_eq!(copy.parent(), s.parent(), "{r:#}");
    let new_id = copy.file_stem().unwrap().to_str().unwrap().to_string();
    assert_ne!(new_id, ID);
    assert!(r.to_string().contains(&format!("kiro-cli chat --resume-id {new_id}")), "{r:#}");
    // The metadata beside it names the copy.
    let meta: Value = serde_json::from_slice(&std::fs::read(copy.with_extension("json")).unwrap()).unwrap();
    assert_eq!(meta["session_id"], json!(new_id));
    assert_eq!(meta["session_state"]["rts_model_state"]["conversation_id"], json!(new_id));
    assert_eq!(meta["title"], json!("what is in this image"));
    // The cut PNG is gone from the result and from Kiro's record of the run.
    let text = std::fs::read_to_string(&copy).unwrap();
    let last: Value = serde_json::from_str(text.lines().nth(4).unwrap()).unwrap();
    let block = &last["data"]["content"][0]["data"]["content"][0];
    assert_eq!(block["kind"], json!("text"), "{last:#}");
    let item = &last["data"]["results"]["tooluse_1"]["result"]["Success"]["items"][0];
    assert!(item.get("Image").is_none() && item["Text"].is_string(), "{last:#}");
    let (c, code) = common::scan_json(&copy, &[]);
    assert_eq!(atts(&c).len(), 1, "{c:#}");
    assert_eq!(code, 0, "{c:#}");
    // Listed beside the original, as Kiro lists it.
    let out = common::bin()
        .args(["sessions", "--agent", "kiro", "--json"])
        .env("HOME", "/nonexistent")
        .env("KIRO_HOME", home.path().join(".kiro"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains(copy.to_str().unwrap()));
}

#[test]
fn exclude_then_repair_leaves_the_named_image_out() {
    let (_home, s) = session(&stuck());
    let (v, _) = common::scan_json(&s, &[]);
    let reference = atts(&v)[0]["ref"].as_str().unwrap().to_string();
    let out = run(&["exclude", s.to_str().unwrap(), "--ref", &reference]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    let (c, _) = common::scan_json(&copy, &[]);
    // Both the excluded valid PNG and the cut one (left out by repair) are gone.
    assert_eq!(atts(&c).len(), 0, "{c:#}");
    let first: Value = serde_json::from_str(std::fs::read_to_string(&copy).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(first["data"]["content"][1]["kind"], json!("text"), "{first:#}");
}

#[test]
fn clear_compaction_and_a_cancelled_prompt_change_what_is_sent() {
    let cut = cut_png();
    let ok = media_corpus::png(8, 8);
    let compaction = json!({"version": "v1", "kind": "Compaction", "data": {"summary": "we looked at pictures",
        "strategy": {"message_pairs_to_exclude": 2},
        "messages_snapshot": [
            {"id": "k1", "role": "user", "content": [{"kind": "text", "data": "kept"}, {"kind": "image", "data": image(&ok)}], "meta": {"timestamp": 1}},
            {"id": "k2", "role": "assistant", "content": [{"kind": "text", "data": "kept answer"}]}]}});
    let lines = vec![
        prompt("a", "before the clear", &[&cut]),
        reply("b", "ok"),
        json!({"version": "v1", "kind": "Clear"}),
        prompt("c", "after", &[]),
        reply("d", "ok"),
        compaction,
        prompt("e", "cancelled", &[&cut]),
        json!({"version": "v1", "kind": "CancelledPrompt"}),
        prompt("f", "go on", &[]),
    ];
    let (_home, s) = session(&lines);
    let (v, code) = common::scan_json(&s, &[]);
    // The cut PNG before /clear and the one in the cancelled prompt are not sent;
    // the snapshot's image is.
    let a = atts(&v);
    assert_eq!(a.len(), 1, "{v:#}");
    assert_eq!((&a[0]["line"], &a[0]["verdict"]), (&json!(6), &json!("ok")), "{v:#}");
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn preview_says_plainly_that_kiro_requests_are_not_modelled() {
    let (_home, s) = session(&stuck());
    let out = run(&["preview", s.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("preview does not model Kiro CLI's request"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_value_that_is_no_byte_is_a_finding_on_its_line() {
    let mut lines = stuck();
    lines[0]["data"]["content"][1]["data"]["source"]["data"][3] = json!(300);
    let (_home, s) = session(&lines);
    let (v, code) = common::scan_json(&s, &[]);
    assert!(v.to_string().contains("kiro.bytes_invalid"), "{v:#}");
    assert_eq!(code, 1);
}
