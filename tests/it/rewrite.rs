//! `preview` and `repair` end to end, on sessions in each format's real shape.

use crate::common;
use crate::common::media_corpus;

use std::path::{Path, PathBuf};

use common::wrap::{self, FORMATS, Item};
use common::{b64, run, sha256_file, write};
use serde_json::{Value, json};

fn preview(file: &Path, extra: &[&str]) -> (String, Value) {
    let mut args = vec!["preview", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "preview failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("preview is not JSON ({e}): {text}"));
    (text, v)
}

/// Three distinct images, as base64, and the items holding them.
fn images(n: usize) -> Vec<String> {
    (0..n).map(|i| b64(&media_corpus::png(6 + u32::try_from(i).unwrap(), 5))).collect()
}

#[test]
fn preview_after_an_exclusion_carries_the_note_and_every_other_attachment() {
    let imgs = images(3);
    let items: Vec<Item<'_>> = imgs.iter().map(|b| Item { base64: b, mime: "image/png" }).collect();
    for format in FORMATS {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "s.jsonl", &wrap::session(format, &items));
        let (doc, _) = common::scan_json(&file, &[]);
        let victim = doc["attachments"][1]["ref"].as_str().unwrap().to_string();
        let out = run(&["exclude", file.to_str().unwrap(), "--ref", &victim]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        let (text, _) = preview(&file, &[]);
        assert!(text.contains("[Attachment omitted: "), "{format}: no note in {text}");
        assert!(!text.contains(&imgs[1]), "{format}: the excluded bytes are still sent");
        assert!(text.contains(&imgs[0]) && text.contains(&imgs[2]), "{format}: another attachment went missing");
    }
}

#[test]
fn max_images_keeps_the_newest_across_user_messages_and_tool_results() {
    let imgs = images(31);
    let items: Vec<Item<'_>> = imgs.iter().map(|b| Item { base64: b, mime: "image/png" }).collect();
    for format in ["claude-code", "codex", "pi", "openai-chat"] {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "s.jsonl", &wrap::session(format, &items));
        let (text, _) = preview(&file, &["--max-images", "20"]);
        let kept = imgs.iter().filter(|b| text.contains(b.as_str())).count();
        assert_eq!(kept, 20, "{format}");
        assert!(imgs[11..].iter().all(|b| text.contains(b.as_str())), "{format}: not the newest 20");
        assert_eq!(
            text.matches("[Earlier image omitted: this request keeps only the 20 most recent images.").count(),
            11,
            "{format}"
        );
        // The first, pasted by the user, is among those dropped; its note names its file.
        assert!(!text.contains(&imgs[0]));
    }
}

/// A Codex rollout with encrypted reasoning before each tool call.
fn codex_with_reasoning() -> String {
    let lines = [
        json!({"timestamp":"t","type":"session_meta","payload":{"id":"019a0000-0000-7000-8000-000000000001","cwd":"/","originator":"codex_cli_rs","cli_version":"0.58.0","model_provider":"openai"}}),
        json!({"timestamp":"t","type":"turn_context","payload":{"cwd":"/","model":"gpt-5-codex","approval_policy":"never","sandbox_policy":{"mode":"read-only"},"summary":"auto"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"reasoning","id":"rs_0a1","summary":[],"content":null,"encrypted_content":"gAAAAABpQ3Zk"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"a.txt\nb.txt"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"reasoning","id":"rs_0a2","summary":[],"content":null,"encrypted_content":"gAAAAABpQ3Zl"}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two files"}]}}),
        json!({"timestamp":"t","type":"response_item","payload":{"type":"reasoning","id":"rs_0a3","summary":[]}}),
    ];
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

#[test]
fn reasoning_is_stripped_or_made_self_contained() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "rollout.jsonl", &codex_with_reasoning());
    let (text, v) = preview(&file, &["--strip-reasoning"]);
    assert!(!text.contains("encrypted_content") && !text.contains("rs_0a"), "{text}");
    let items = v["input"].as_array().unwrap();
    assert_eq!(items.len(), 4, "{v:#}");
    for want in ["list the files", "call_1", "a.txt\\nb.txt", "two files"] {
        assert!(text.contains(want), "{want} missing: {text}");
    }
    let (text, v) = preview(&file, &["--drop-reasoning-ids"]);
    assert!(!text.contains("\"rs_"), "{text}");
    assert_eq!(text.matches("encrypted_content").count(), 2, "{text}");
    // The item with nothing to replay is gone; the two others stay, without ids.
    assert_eq!(v["input"].as_array().unwrap().len(), 6, "{v:#}");
}

#[test]
fn target_converts_claude_code_with_calls_and_results_paired() {
    let imgs = images(3);
    let items: Vec<Item<'_>> = imgs.iter().map(|b| Item { base64: b, mime: "image/png" }).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "s.jsonl", &wrap::session("claude-code", &items));
    let (_, v) = preview(&file, &["--target", "openai-responses"]);
    let input = v["input"].as_array().unwrap();
    let calls: Vec<&Value> = input.iter().filter(|i| i["type"] == "function_call").collect();
    let outputs: Vec<&Value> = input.iter().filter(|i| i["type"] == "function_call_output").collect();
    assert_eq!(calls.len(), 2);
    for c in &calls {
        let at = input.iter().position(|i| i == *c).unwrap();
        assert_eq!(input[at + 1]["call_id"], c["call_id"], "the output follows its call");
        assert_eq!(input[at + 1]["output"][0]["type"], "input_image");
    }
    assert_eq!(outputs.len(), 2);
    let (_, v) = preview(&file, &["--target", "gemini"]);
    let contents = v["contents"].as_array().unwrap();
    let roles: Vec<&str> = contents.iter().map(|c| c["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "model", "user", "model", "user"]);
    for (i, c) in contents.iter().enumerate().filter(|(_, c)| c["role"] == "model") {
        let call = &c["parts"][0]["functionCall"];
        let resp = &contents[i + 1]["parts"][0]["functionResponse"];
        assert_eq!((&call["id"], &call["name"]), (&resp["id"], &resp["name"]), "{v:#}");
        assert!(resp["parts"][0]["inlineData"]["data"].is_string());
    }
}

#[test]
fn repair_writes_a_resumable_copy_in_the_agents_own_naming() {
    let (image, cut) = (b64(&media_corpus::png(9, 9)), {
        let p = media_corpus::png(30, 30);
        b64(&p[..p.len() / 2])
    });
    let items = [Item { base64: &image, mime: "image/png" }, Item { base64: &cut, mime: "image/png" }];
    for format in FORMATS {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "s.jsonl",
            &wrap::failed(format, &wrap::session(format, &items), "Could not process image"),
        );
        let before = sha256_file(&file);
        assert_eq!(run(&["exclude", file.to_str().unwrap(), "--suspects"]).status.code(), Some(0), "{format}");
        let out = run(&["repair", "--json", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let copy = PathBuf::from(r["out"].as_str().unwrap());
        assert_eq!(copy.parent(), Some(dir.path()), "{format}: beside the original");
        assert_eq!(sha256_file(&file), before, "{format}: the original changed");
        let (doc, code) = common::scan_json(&copy, &[]);
        assert_eq!(doc["format"], format, "{format}: the copy reads as its format");
        assert_eq!(code, 0, "{format}: the copy still holds an invalid attachment: {doc:#}");
        // Untouched lines are byte-identical, apart from the id where the agent keeps it.
        let (a, b) = (std::fs::read_to_string(&file).unwrap(), std::fs::read_to_string(&copy).unwrap());
        let id = r["id"].as_str().unwrap_or("\u{0}");
        let same = |x: &str, y: &str| ["s", "x"].iter().any(|old| y.replace(id, old) == x);
        // A Gemini CLI copy ends in the line that says repair wrote it.
        let b =
            b.strip_suffix(&format!("{}\n", session_doctor::formats::gemini_cli::REPAIRED)).unwrap_or(&b).to_string();
        let foreign: Vec<&str> = b.lines().filter(|y| !a.lines().any(|x| same(x, y))).collect();
        // The rewritten record, and a line re-parented around the failure left out.
        assert_eq!(r["touched"], 1, "{format}");
        assert!((1..=2).contains(&foreign.len()), "{format}: {foreign:#?}");
        // The failure record is left out: agents do not send it, and the copy has not failed yet.
        let dropped = r["changes"]["failures_dropped"].as_array().unwrap().len();
        assert_eq!(dropped, 1, "{format}: {r:#}");
        assert_eq!(b.lines().count(), a.lines().count() - dropped, "{format}");
        let d = run(&["diagnose", copy.to_str().unwrap()]);
        assert_eq!(
            d.status.code(),
            Some(0),
            "{format}: the copy is still stuck: {}",
            String::from_utf8_lossy(&d.stdout)
        );
        // Repairing again never overwrites: a fresh id is a new file, a fixed name is refused.
        let copy_hash = sha256_file(&copy);
        let again = run(&["repair", "--json", file.to_str().unwrap()]);
        if r["id"].is_null() {
            assert_eq!(again.status.code(), Some(2), "{format}: overwrote a copy");
            assert_eq!(sha256_file(&copy), copy_hash, "{format}: the first copy changed");
        } else {
            let r2: Value = serde_json::from_slice(&again.stdout).unwrap();
            assert_ne!(r["out"], r2["out"], "{format}");
        }
    }
}

#[test]
fn a_claude_code_copy_has_a_fresh_id_on_every_line_and_an_intact_chain() {
    let imgs = images(3);
    let items: Vec<Item<'_>> = imgs.iter().map(|b| Item { base64: b, mime: "image/png" }).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "s.jsonl", &wrap::session("claude-code", &items));
    let out = run(&["repair", "--json", "--max-images", "1", file.to_str().unwrap()]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = r["id"].as_str().unwrap();
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    assert_eq!(copy.file_name().unwrap().to_str().unwrap(), format!("{id}.jsonl"));
    assert_eq!(r["resume"], format!("claude --resume {id}"));
    let lines: Vec<Value> =
        std::fs::read_to_string(&copy).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut seen = std::collections::HashSet::new();
    for l in &lines {
        assert_eq!(l["sessionId"], id);
        if !l["parentUuid"].is_null() {
            assert!(seen.contains(l["parentUuid"].as_str().unwrap()), "broken chain at {l}");
        }
        seen.insert(l["uuid"].as_str().unwrap().to_string());
    }
    assert_eq!(r["changes"]["capped"].as_array().unwrap().len(), 2);
}

#[test]
fn a_codex_copy_names_itself_by_its_session_meta_id() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "rollout-2026-11-01T10-00-00-019a0000-0000-7000-8000-000000000001.jsonl",
        &codex_with_reasoning(),
    );
    let out = run(&["repair", "--json", "--drop-reasoning-ids", file.to_str().unwrap()]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = r["id"].as_str().unwrap();
    let name = PathBuf::from(r["out"].as_str().unwrap()).file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("rollout-") && name.ends_with(&format!("-{id}.jsonl")), "{name}");
    let copy = std::fs::read_to_string(dir.path().join(&name)).unwrap();
    let meta: Value = serde_json::from_str(copy.lines().next().unwrap()).unwrap();
    assert_eq!(meta["payload"]["id"], id);
    assert_eq!(r["resume"], format!("codex resume {id}"));
    assert!(!copy.contains("\"rs_"), "{copy}");
    assert_eq!(r["dropped"], json!([9]), "the reasoning item with nothing to replay is left out");
}

/// `repair --json` of `file`: its report, and its copy's records.
fn repaired(file: &std::path::Path) -> (Value, Vec<Value>) {
    repaired_with(file, &[])
}

/// [`repaired`] with `args` after `repair --json`.
fn repaired_with(file: &std::path::Path, args: &[&str]) -> (Value, Vec<Value>) {
    let mut all = vec!["repair", "--json"];
    all.extend_from_slice(args);
    all.push(file.to_str().unwrap());
    let out = run(&all);
    let r: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every copied line is JSON"))
        .collect();
    (r, copy)
}

#[test]
fn a_damaged_line_is_left_out_and_the_chain_bridged_around_it() {
    let lines = [
        json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hello"}}).to_string(),
        // Damaged mid-write: not JSON, its uuid (a1) unknown to the reader.
        r#"{"type":"assistant","uuid":"a1","parentUuid":"u0","sessionId":"s","message":{"role":"assis"#.to_string(),
        json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":"go on"}}).to_string(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "s.jsonl", &(lines.join("\n") + "\n"));
    let (r, copy) = repaired(&file);
    assert_eq!(r["dropped"], json!([2]));
    assert_eq!(copy.len(), 2);
    assert_eq!(copy[1]["uuid"], "u2");
    assert_eq!(copy[1]["parentUuid"], "u0", "re-parented onto the line written before the damaged one");
    // Said of one line as of one ("1 line (2) … could not read them" before).
    let out = run(&["repair", "--force", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\n  left out     line 2: damaged, the reader could not read it\n"), "{text}");
}

/// pi stops at a parent that is not in the file (it skips a line that is not
/// JSON, and walks back from its last entry): the copy leaves the link as it
/// is, so it sends what the original sent, and the reader reads both as pi does.
#[test]
fn a_damaged_pi_line_is_left_out_and_pi_still_stops_where_it_did() {
    let lines = [
        json!({"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}).to_string(),
        json!({"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"hello","timestamp":1}}).to_string(),
        r#"{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assis"#.to_string(),
        json!({"type":"message","id":"00000003","parentId":"00000002","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":"go on","timestamp":3}}).to_string(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "s.jsonl", &(lines.join("\n") + "\n"));
    let scan = run(&["scan", "--json", file.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&scan.stdout).unwrap();
    assert_eq!(v["entries"], 1, "pi sends only what follows the missing parent: {v:#}");
    let (r, copy) = repaired(&file);
    assert_eq!(r["dropped"], json!([3]));
    assert_eq!(copy.len(), 3);
    assert_eq!(copy[2]["parentId"], "00000002", "the link is left as pi reads it");
    let again = run(&["scan", "--json", r["out"].as_str().unwrap()]);
    let v: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["entries"], 1, "{v:#}");
}

/// A line whose first long image is replaced and whose second, after it, is
/// kept: the record is read without the first (its payload is never read
/// again) and the second goes out as the file holds it, found at its own
/// place in the file, not where the shortened record has it.
#[test]
fn preview_of_a_line_read_without_a_replaced_payload_sends_the_next_one_whole() {
    let (a, b) = (b64(&media_corpus::png(400, 200)), b64(&media_corpus::png(401, 200)));
    assert!(a.len() > 64 << 10 && b.len() > 64 << 10, "both are stood in for");
    let image = |data: &str| json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":data}});
    let line = json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","isSidechain":false,
        "message":{"role":"user","content":[{"type":"text","text":"look"}, image(&a), image(&b)]}});
    for how in [&["--max-images", "1"][..], &[]] {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "s.jsonl", &format!("{line}\n"));
        if how.is_empty() {
            let out = run(&["exclude", file.to_str().unwrap(), "--ref", "L1.1"]);
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        }
        let (text, v) = preview(&file, how);
        assert!(!text.contains(&a[..1000]), "{how:?}: the replaced image is still sent");
        let sent: Vec<&str> = v["messages"][0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["source"]["data"].as_str())
            .collect();
        assert_eq!(sent, [b.as_str()], "{how:?}");
        assert!(text.contains("[Attachment omitted: ") || text.contains("omitted"), "{how:?}: no note in the request");
    }
}

/// An image whose deflate data is corrupt behind valid CRCs looks valid to
/// the structural read; only the suspects' full decode sees it. `repair` plans
/// its copy after that decode: the broken image is left out as a note, the
/// good ones stay, and nothing but the copy is left in the folder.
#[test]
fn a_suspect_the_full_decode_finds_broken_is_left_out_of_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let (good, broken, other) =
        (b64(&media_corpus::png(7, 5)), b64(&media_corpus::png_corrupt_deflate()), b64(&media_corpus::png(9, 4)));
    let items: Vec<Item<'_>> =
        [&good, &other, &broken].iter().map(|b| Item { base64: b.as_str(), mime: "image/png" }).collect();
    let text = wrap::failed("claude-code", &wrap::session("claude-code", &items), "Could not process image");
    let file = write(dir.path(), "s.jsonl", &text);
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = run(&["repair", "--json", "--out", out_dir.to_str().unwrap(), file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(r["suspects_left_out"], json!(["L5.1"]), "{r:#}");
    assert_eq!(r["still_stuck"], Value::Null, "{r:#}");
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    assert!(!copy.contains(broken.as_str()), "the broken image is still in the copy");
    assert!(copy.contains(good.as_str()) && copy.contains(other.as_str()), "a good image went missing");
    assert!(copy.contains("[Attachment omitted"), "no note in the broken image's place");
    let left: Vec<_> = std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "only the copy is left in the folder: {left:?}");
}

/// A Claude Code result whose call is gone goes from the copy with the image
/// it holds: that payload is planned as replaced, so the copy does not read
/// it again; and an image left beside it in the same message, inside the
/// content a removal writes anew, is written from the file, never as the
/// filler a copy reads in place of a payload it does not need.
#[test]
fn an_orphan_results_image_is_not_read_again_and_nothing_is_written_as_filler() {
    use session_doctor::reader::{ReadOptions, plan, read_with_plan};
    use session_doctor::rewrite::{self, Rewrite, copy};
    let (gone, beside) = (b64(&media_corpus::png(300, 200)), b64(&media_corpus::png(301, 200)));
    let image = |data: &str| json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":data}});
    let record = |n: u32, kind: &str, content: Value| {
        let parent = if n == 1 { Value::Null } else { json!(format!("00000000-0000-4000-8000-00000000000{}", n - 1)) };
        json!({"parentUuid":parent,"isSidechain":false,"type":kind,"uuid":format!("00000000-0000-4000-8000-00000000000{n}"),
            "sessionId":"0b4d6c8e-1111-4222-8333-944455556666","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/p",
            "message":{"role":kind,"content":content}})
        .to_string()
    };
    let lines = [
        record(1, "user", json!([{"type":"text","text":"look"}])),
        record(2, "assistant", json!([{"type":"text","text":"ok"}])),
        record(3, "user", json!([{"type":"tool_result","tool_use_id":"toolu_gone","content":[image(&gone)]}])),
        record(4, "assistant", json!([{"type":"text","text":"seen"}])),
        record(5, "user", json!([{"type":"tool_result","tool_use_id":"toolu_lost","content":"done"}, image(&beside)])),
        record(6, "assistant", json!([{"type":"text","text":"seen too"}])),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.jsonl", &(lines.join("\n") + "\n"));
    let text = std::fs::read_to_string(&path).unwrap();
    let planned = session_doctor::alias::Snapshot::of(&path).unwrap();
    let opts = ReadOptions::default();
    let p = plan(&path, &opts).unwrap();
    let session = read_with_plan(&path, &opts, &p, None).unwrap();
    let cap = rewrite::RewriteOptions { max_images: Some(0), ..Default::default() };
    let rw = Rewrite::plan(&session, &cap, p.single_document);
    assert_eq!(rw.summary.results_removed, ["toolu_gone", "toolu_lost"]);
    let span = (text.find(gone.as_str()).unwrap() as u64, gone.len() as u64);
    assert!(rw.replaced.contains(&span), "the removed result's image is read again: {:?}", rw.replaced);
    assert!(!rw.kept().contains(&span), "the removed result's image is passed through");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let source = copy::CopySource { path: &path, planned, reads: &[], written_by: session.written_by };
    let w = copy::repair(&source, p.format, p.single_document, &rw, &[], Some(&out)).unwrap();
    let copy = std::fs::read_to_string(&w.identity.path).unwrap();
    assert!(!copy.contains(&gone[..1000]), "the orphan's image is still in the copy");
    for line in copy.lines() {
        let v: Value = serde_json::from_str(line).expect("every copied line is JSON");
        for block in v["message"]["content"].as_array().into_iter().flatten() {
            if let Some(data) = block["source"]["data"].as_str() {
                assert_eq!(data, beside, "an image of the copy is not the file's: {}", &data[..data.len().min(40)]);
            }
        }
    }
}

/// A mux `chat.jsonl` of `lines`, in a folder of its own (kept while the guard lives).
fn mux_session(lines: &[Value]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    let file = write(dir.path(), "chat.jsonl", &text);
    (dir, file)
}

/// Seed 004: mux keeps `providerOptions.openai.{itemId, reasoningEncryptedContent}`
/// on a reasoning part (and may keep the same under `providerMetadata`); the
/// AI SDK sends `item_reference` for an `itemId`. `--drop-reasoning-ids` removed
/// `<part>/id`, which AI SDK parts do not use, and left every `rs_` id in place.
#[test]
fn drop_reasoning_ids_takes_the_item_id_out_of_an_ai_sdk_part_and_keeps_the_blob() {
    let openai = json!({"openai":{"itemId":"rs_stale01","reasoningEncryptedContent":"gAAAAABblob"}});
    let lines = [
        json!({"id":"m0","role":"user","metadata":{"historySequence":1},"workspaceId":"w","parts":[{"type":"text","text":"plan it"}]}),
        json!({"id":"m1","role":"assistant","workspaceId":"w","metadata":{"historySequence":2,"model":"openai:gpt-5.1","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}},
            "parts":[{"type":"reasoning","text":"thinking","providerOptions":openai,"providerMetadata":openai},{"type":"text","text":"the plan"}]}),
        json!({"id":"m2","role":"user","metadata":{"historySequence":3},"workspaceId":"w","parts":[{"type":"text","text":"go on"}]}),
        json!({"id":"m3","role":"assistant","workspaceId":"w","metadata":{"historySequence":4,"model":"openai:gpt-5.1","error":"Item with id 'rs_stale01' not found.","errorType":"api"},"parts":[]}),
    ];
    let (_dir, file) = mux_session(&lines);
    let (d, code) = common::diagnose(&file, &[]);
    assert_eq!((code, d["stuck"].as_bool()), (1, Some(true)), "{d:#}");
    assert!(d["next"].to_string().contains("--drop-reasoning-ids"), "{d:#}");
    // The AI SDK (store unset: true) sends the id by reference.
    let (_, sent) = preview(&file, &[]);
    assert_eq!(sent["input"][1], json!({"type":"item_reference","id":"rs_stale01"}), "{sent:#}");
    let (r, lines) = repaired_with(&file, &["--drop-reasoning-ids"]);
    let copy = Value::from(lines.clone()).to_string();
    assert!(!copy.contains("rs_stale01"), "an rs_ id is left: {copy}");
    // The copy's reasoning goes as its encrypted content alone.
    let (text, sent) = preview(Path::new(r["out"].as_str().unwrap()), &[]);
    assert!(!text.contains("rs_"), "{text}");
    let want = json!({"type":"reasoning","encrypted_content":"gAAAAABblob","summary":[{"type":"summary_text","text":"thinking"}]});
    assert_eq!(sent["input"][1], want, "{sent:#}");
    assert_eq!(copy.matches("gAAAAABblob").count(), 2, "the encrypted content stays: {copy}");
    let part = &lines[1]["parts"][0];
    assert_eq!(part["providerOptions"]["openai"], json!({"reasoningEncryptedContent":"gAAAAABblob"}), "{part}");
    assert_eq!(part["type"], "reasoning");
    let (d, code) = common::diagnose(Path::new(r["out"].as_str().unwrap()), &[]);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
}

/// Seed 004, phase 2: after a cross-organisation switch OpenAI refuses its
/// encrypted reasoning (`invalid_encrypted_content`). The cure strips that
/// provider's reasoning only; another provider's thinking and every visible
/// part stay. Diagnose prescribed a `--strip-reasoning` that removed it all.
#[test]
fn a_refused_blob_strips_only_the_refusing_providers_reasoning() {
    let openai = json!({"openai":{"itemId":"rs_0b1","reasoningEncryptedContent":"gAAAAABbroken"}});
    let anthropic = json!({"anthropic":{"signature":"EqQBCkYIBxgCKkBsig"}});
    let lines = [
        json!({"id":"m0","role":"user","metadata":{"historySequence":1},"workspaceId":"w","parts":[{"type":"text","text":"plan it"}]}),
        json!({"id":"m1","role":"assistant","workspaceId":"w","metadata":{"historySequence":2,"model":"anthropic:claude-sonnet-4-5","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}},
            "parts":[{"type":"reasoning","text":"weighing","providerOptions":anthropic},{"type":"text","text":"draft"}]}),
        json!({"id":"m2","role":"user","metadata":{"historySequence":3},"workspaceId":"w","parts":[{"type":"text","text":"refine"}]}),
        json!({"id":"m3","role":"assistant","workspaceId":"w","metadata":{"historySequence":4,"model":"openai:gpt-5.1","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}},
            "parts":[{"type":"reasoning","text":"thinking","providerOptions":openai},{"type":"text","text":"the plan"}]}),
        json!({"id":"m4","role":"user","metadata":{"historySequence":5},"workspaceId":"w","parts":[{"type":"text","text":"go on"}]}),
        json!({"id":"m5","role":"assistant","workspaceId":"w","metadata":{"historySequence":6,"model":"openai:gpt-5.1","error":"invalid_encrypted_content","errorType":"api"},"parts":[]}),
    ];
    let (_dir, file) = mux_session(&lines);
    let (d, code) = common::diagnose(&file, &[]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("reasoning_rejected")), "{d:#}");
    assert!(d["next"].to_string().contains("--strip-reasoning=openai"), "{d:#}");
    let (r, lines) = repaired_with(&file, &["--strip-reasoning=openai"]);
    let copy = Value::from(lines).to_string();
    assert!(!copy.contains("gAAAAABbroken") && !copy.contains("rs_0b1"), "the refused blob stays: {copy}");
    for kept in ["EqQBCkYIBxgCKkBsig", "weighing", "draft", "the plan", "go on"] {
        assert!(copy.contains(kept), "{kept} is lost: {copy}");
    }
    // The refusal, given again, no longer holds on the copy: what it refused is gone.
    let out = Path::new(r["out"].as_str().unwrap());
    let (d, code) = common::diagnose(out, &["--error", "The encrypted content gAAA...oken could not be verified."]);
    let verdict =
        "not stuck: the history no longer holds the reasoning the provider refused, so the next request differs";
    assert_eq!((code, d["verdict"].as_str()), (0, Some(verdict)), "{d:#}");
    // Nor an 'Item … not found' once the rs_ id it names is gone; one still held is stuck.
    for (error, stuck) in [("Item with id 'rs_0b1' not found.", false), ("Item with id 'rs_0b1' not found.", true)] {
        let file = if stuck { &file } else { out };
        let (d, _) = common::diagnose(file, &["--error", error]);
        assert_eq!(d["stuck"].as_bool(), Some(stuck), "{error}: {d:#}");
    }
}
