//! `--fit-context` on a real Claude Code session over its window
//! (tests/data/agents/claude-code/context-overflow.jsonl, which Claude Code
//! 2.1.332 wrote against the suite's fake provider), its bulk made one 800 kB
//! Read output: diagnose offers the trim, repair elides that output and
//! nothing else, and the copy is not stuck.

use crate::common;

use std::path::{Path, PathBuf};

use common::run;
use serde_json::Value;

/// The fixture, its first Read output (line 24) made 800 kB and its errors a
/// 200,000-token window's, written into `dir`.
fn bulky(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/claude-code/context-overflow.jsonl"),
    )
    .unwrap();
    let big = "1\tzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n".repeat(14_036);
    let mut lines: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if i + 1 == 24 {
            v["message"]["content"][0]["content"] = Value::String(big.clone());
            v["toolUseResult"]["file"]["content"] = Value::String(big.clone());
        }
        lines.push(
            v.to_string()
                .replace("63053 tokens > 32388", "215632 tokens > 200000")
                .replace("63044 tokens > 32388", "215623 tokens > 200000"),
        );
    }
    let path = dir.join("d722b32e-73e8-43ae-997a-5405d9738b10.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn json_of(args: &[&str]) -> (Value, i32) {
    let out = run(args);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap_or(-1))
}

#[test]
fn diagnose_offers_the_trim_and_no_image_cap_where_there_is_no_image() {
    let dir = tempfile::tempdir().unwrap();
    let f = bulky(dir.path());
    let (d, code) = json_of(&["diagnose", f.to_str().unwrap(), "--json"]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("context_overflow")), "{d:#}");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(next.iter().any(|n| n.starts_with("session-doctor repair ") && n.ends_with(" --fit-context")), "{next:?}");
    assert!(!next.iter().any(|n| n.contains("--max-images")), "no image: no --max-images 0 ({next:?})");
}

#[test]
fn repair_elides_the_800_kb_output_and_the_copy_is_not_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let f = bulky(dir.path());
    let before = std::fs::read(&f).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (r, code) =
        json_of(&["repair", f.to_str().unwrap(), "--fit-context", "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    assert!(r["still_stuck"].is_null(), "{r:#}");
    let elided = r["changes"]["elided"].as_array().unwrap();
    assert_eq!(elided.len(), 1, "only the bulky output goes: {r:#}");
    assert_eq!((elided[0]["line"].as_u64(), elided[0]["kind"].as_str()), (Some(24), Some("tool_output")));
    assert_eq!(elided[0]["bytes"].as_u64(), Some(800_052), "{r:#}");
    let c = &r["changes"]["context"];
    assert_eq!(
        (c["before"].as_u64(), c["window"].as_u64(), c["window_from"].as_str()),
        (Some(215_632), Some(200_000), Some("error"))
    );
    assert!(c["after"].as_u64().unwrap() <= c["budget"].as_u64().unwrap(), "{c}");
    assert_eq!(c["budget"].as_u64(), Some(200_000 - 32_000 - 20_000));
    // The note in place of the output; the call, its result block and the other reads stay.
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    let line24: Value = serde_json::from_str(copy.lines().nth(23).unwrap()).unwrap();
    let block = &line24["message"]["content"][0];
    assert_eq!(block["type"], "tool_result");
    let note = block["content"].as_str().unwrap();
    assert!(
        note.starts_with(
            "[Tool output omitted to fit the context window: the output of Read was 800.1 kB (about 200013 tokens)."
        ) && note.ends_with(
            "The original session keeps it in full (line 24); run the tool again, or ask the user, if you need it.]"
        ),
        "{note}"
    );
    let line25: Value = serde_json::from_str(copy.lines().nth(24).unwrap()).unwrap();
    assert!(
        line25["message"]["content"][0]["content"].as_str().unwrap().starts_with("1\tzzzz"),
        "the small reads stay"
    );
    assert_eq!(std::fs::read(&f).unwrap(), before, "the original is never written");
    let (d, code) = json_of(&["diagnose", r["out"].as_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &Value::Bool(false)), "{d:#}");
}

#[test]
fn without_the_trim_repair_still_says_why_the_copy_would_fail() {
    let dir = tempfile::tempdir().unwrap();
    let f = bulky(dir.path());
    let out = run(&["repair", f.to_str().unwrap(), "--out", dir.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("nothing this repair changes answers the context_overflow failure"), "{text}");
}

#[test]
fn human_output_says_what_was_elided_and_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let f = bulky(dir.path());
    let out = run(&["repair", f.to_str().unwrap(), "--fit-context", "--out", dir.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&"  elided       1 tool output (line 24): each a note in place, to fit the context window"),
        "{text}"
    );
    let context = lines.iter().find(|l| l.starts_with("  context: ")).unwrap();
    assert!(
        context.starts_with("  context: about 215632 tokens before, ")
            && context.ends_with(" of a budget of 148000 (a window of 200000 as the provider's error states, which counted 215632 tokens, less the agent's output reserve and a margin): fits"),
        "{context}"
    );
    let p =
        run(&["preview", f.to_str().unwrap(), "--fit-context", "--out", dir.path().join("req.json").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&p.stderr);
    assert!(err.contains(": 4 items, 1 elided to fit the context window\n"), "{err}");
    assert!(err.contains("\n  context: about 215632 tokens before, "), "{err}");
}

#[test]
fn an_unknown_window_is_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let line =
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hello"}}"#;
    let f = common::write(dir.path(), "s.jsonl", &format!("{line}\n"));
    let out = run(&["preview", f.to_str().unwrap(), "--fit-context", "--model", "llama3", "--provider", "ollama"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--fit-context: the context window is not known (model llama3, and no recorded error states it): name it with --context-tokens N"), "{err}");
    let ok = run(&[
        "preview",
        f.to_str().unwrap(),
        "--fit-context",
        "--model",
        "llama3",
        "--provider",
        "ollama",
        "--context-tokens",
        "8000",
    ]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
}

/// pi 0.73.1's own session of the round trip (tests/data/agents/pi/context-overflow.jsonl):
/// it compacted on each refusal, the second compaction keeping from before the first;
/// pi sends only the latest compaction's summary, first, and so does preview.
#[test]
fn pi_sends_only_the_latest_compactions_summary() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/pi/context-overflow.jsonl");
    let out = run(&["preview", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let body: Value = serde_json::from_slice(&out.stdout).unwrap();
    let texts: Vec<String> = (body["messages"].as_array().unwrap().iter())
        .map(|m| m["content"][0]["text"].as_str().unwrap_or("(result)").chars().take(40).collect())
        .collect();
    assert_eq!(
        texts,
        ["The conversation history before this poi", "READ-THE-FILE big.txt", "(result)", "(result)", "continue"],
        "{body:#}"
    );
}

/// Images count in the estimate (w × h / 750, at most 1,600 a one): where no
/// tool output is bulky, the oldest go first, each a note; `--max-images`
/// composes (the images it caps are not counted, so fewer go).
#[test]
fn images_count_and_max_images_composes() {
    let dir = tempfile::tempdir().unwrap();
    let png = common::b64(&common::media_corpus::png(1000, 1000));
    let items: Vec<common::wrap::Item<'_>> =
        (0..3).map(|_| common::wrap::Item { base64: &png, mime: "image/png" }).collect();
    let f = common::write(dir.path(), "s.jsonl", &common::wrap::session("claude-code", &items));
    let args = |extra: &[&str]| {
        let mut a = vec!["preview", f.to_str().unwrap(), "--json", "--fit-context", "--context-tokens", "3000"];
        a.extend_from_slice(extra);
        let out = run(&a);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let summary: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
        (serde_json::from_slice::<Value>(&out.stdout).unwrap(), summary)
    };
    let (body, summary) = args(&[]);
    let elided = summary["changes"]["elided"].as_array().unwrap();
    let lines: Vec<u64> = elided.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [1, 3], "the two oldest images go: {summary:#}");
    assert!(elided.iter().all(|e| e["kind"] == "image" && e["tokens"] == 1333), "{summary:#}");
    let text = body.to_string();
    assert_eq!(
        text.matches("[Image omitted to fit the context window. The original session keeps it (line ").count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("\"type\":\"image\"").count(), 1, "the newest image stays");
    // Capped to one, the one left fits: nothing more goes.
    let (_, capped) = args(&["--max-images", "1"]);
    assert_eq!(capped["changes"]["capped"].as_array().unwrap().len(), 2, "{capped:#}");
    assert!(capped["changes"].get("elided").is_none(), "{capped:#}");
    assert!(
        capped["changes"]["context"]["after"].as_u64().unwrap()
            <= capped["changes"]["context"]["budget"].as_u64().unwrap()
    );
}

/// `exclude --fit-context` records the trim in the overlay: `preview` and
/// `repair` then fit the window without the flag, and `--undo` stops it.
#[test]
fn the_trim_recorded_in_the_overlay_and_undone() {
    let dir = tempfile::tempdir().unwrap();
    let f = bulky(dir.path());
    let file = f.to_str().unwrap();
    let x = run(&["exclude", file, "--fit-context", "--context-tokens", "150000"]);
    let said = String::from_utf8_lossy(&x.stdout);
    assert_eq!(x.status.code(), Some(0), "{said}");
    assert!(
        said.starts_with(
            "recorded: preview and repair fit the context window from now on (--fit-context --undo stops it)\n"
        ),
        "{said}"
    );
    let overlay = std::fs::read_to_string(format!("{file}.doctor")).unwrap();
    let event: Value = serde_json::from_str(overlay.lines().last().unwrap()).unwrap();
    assert_eq!((event["event"].as_str(), event["context_tokens"].as_u64()), (Some("context.fitted"), Some(150_000)));
    let again = run(&["exclude", file, "--fit-context", "--context-tokens", "150000"]);
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("nothing to change"), "recorded once");
    let p = run(&["preview", file, "--json"]);
    let err = String::from_utf8_lossy(&p.stderr);
    let summary: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert_eq!(summary["changes"]["elided"].as_array().map(Vec::len), Some(1), "{err}");
    assert_eq!(summary["changes"]["context"]["window_from"], "--context-tokens", "the recorded window: {err}");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (r, code) = json_of(&["repair", file, "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!((code, r["changes"]["elided"].as_array().map(Vec::len)), (0, Some(1)), "{r:#}");
    let undo = run(&["exclude", file, "--fit-context", "--undo"]);
    assert!(
        String::from_utf8_lossy(&undo.stdout)
            .starts_with("recorded: preview and repair no longer fit the context window\n")
    );
    let p = run(&["preview", file, "--json"]);
    let err = String::from_utf8_lossy(&p.stderr);
    let summary: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert!(summary["changes"].get("elided").is_none(), "undone: {err}");
}

/// Gemini CLI 0.61.0's own session of a read and its resume
/// (tests/data/agents/gemini-cli/session-2026-12-01T08-00-c5d9e38f.jsonl),
/// the read's output made 414 kB, written into `dir`. The resume's
/// checkpoint (line 15) holds the response and the CLI's repeat of it.
fn gemini_cli_bulky(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/agents/gemini-cli/session-2026-12-01T08-00-c5d9e38f.jsonl"),
    )
    .unwrap();
    let big = "zzzz zzzz zzzz zzzz zzzz zzzz zzzz zzzz zzzz zzzz zzzz zzzz zzzz zzz\\n".repeat(6000);
    let path = dir.join("session-2026-12-01T08-00-c5d9e38f.jsonl");
    std::fs::write(&path, text.replace("hello notes\\n", &big)).unwrap();
    path
}

/// Gemini CLI's `functionResponse` outputs are trim candidates (they were
/// not: a Gemini CLI session over its window had no cure). The one the CLI
/// sends becomes the note; its repeat goes with the repair, and is neither
/// elided nor counted.
#[test]
fn gemini_cli_function_responses_are_elided() {
    let dir = tempfile::tempdir().unwrap();
    let f = gemini_cli_bulky(dir.path());
    let before = std::fs::read(&f).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (r, code) = json_of(&[
        "repair",
        f.to_str().unwrap(),
        "--fit-context",
        "--context-tokens",
        "50000",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{r:#}");
    let elided = r["changes"]["elided"].as_array().unwrap();
    assert_eq!(elided.len(), 1, "{r:#}");
    assert_eq!((elided[0]["line"].as_u64(), elided[0]["bytes"].as_u64()), (Some(15), Some(414_000)), "{r:#}");
    assert_eq!(r["changes"]["repeats_removed"].as_array().map(Vec::len), Some(1), "{r:#}");
    let c = &r["changes"]["context"];
    // The output once (103,500 tokens): the repeat is not sent, and not counted.
    assert!((103_500..106_000).contains(&c["before"].as_u64().unwrap()), "{c}");
    assert!(c["after"].as_u64().unwrap() <= c["budget"].as_u64().unwrap(), "{c}");
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    let line15: Value = serde_json::from_str(copy.lines().nth(14).unwrap()).unwrap();
    let messages = line15["$set"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "the repeat is left out");
    let note = messages[3]["content"][0]["functionResponse"]["response"]["output"].as_str().unwrap();
    assert_eq!(
        note,
        "[Tool output omitted to fit the context window: the output of read_file was 414.0 kB (about 103500 tokens). The original session keeps it in full (line 15); run the tool again, or ask the user, if you need it.]"
    );
    assert_eq!(std::fs::read(&f).unwrap(), before, "the original is never written");
    let (d, code) = json_of(&["diagnose", r["out"].as_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &Value::Bool(false)), "{d:#}");
}

/// A headless Gemini CLI run records no failure: given its error, diagnose
/// offers the trim with the window the error states, which repair cannot read.
#[test]
fn a_given_error_names_its_window_for_the_trim() {
    let dir = tempfile::tempdir().unwrap();
    let f = gemini_cli_bulky(dir.path());
    let error = r#"{"error": {"code": 400, "message": "The input token count (120000) exceeds the maximum number of tokens allowed (50000).", "status": "INVALID_ARGUMENT"}}"#;
    let (d, code) = json_of(&["diagnose", f.to_str().unwrap(), "--error", error, "--json"]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("context_overflow")), "{d:#}");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(
        next.iter()
            .any(|n| n.starts_with("session-doctor repair ") && n.ends_with(" --fit-context --context-tokens 50000")),
        "{next:?}"
    );
}

/// An opencode export (`tests/data/agents/opencode/ses_dcf4acb6effeFDuECCUCfTrlJb.json`,
/// opencode 1.18.33's own), its `read` output made 400 kB: one JSON document,
/// which the trim refused. The tool part's `state.output` becomes the note, its
/// pointer document-wide, its line the one its message starts on.
#[test]
fn an_opencode_export_is_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/opencode/ses_dcf4acb6effeFDuECCUCfTrlJb.json"),
    )
    .unwrap();
    let big = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\\n".repeat(6250);
    let was = r#""output": "Image read successfully\n\n[1 image omitted: could not be resized below the image size limit.]","#;
    assert!(text.contains(was));
    let f = dir.path().join("ses_dcf4acb6effeFDuECCUCfTrlJb.json");
    std::fs::write(&f, text.replace(was, &format!(r#""output": "{big}","#))).unwrap();
    let before = std::fs::read(&f).unwrap();
    let out = run(&["preview", f.to_str().unwrap(), "--fit-context", "--context-tokens", "50000", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let summary: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    let elided = summary["changes"]["elided"].as_array().unwrap();
    assert_eq!(elided.len(), 1, "{summary:#}");
    assert_eq!((elided[0]["line"].as_u64(), elided[0]["bytes"].as_u64()), (Some(82), Some(400_000)), "{summary:#}");
    assert_eq!(elided[0]["call_id"], "toolu_a2f6c3c1fee9484ab1f20764");
    let c = &summary["changes"]["context"];
    assert!(c["after"].as_u64().unwrap() <= c["budget"].as_u64().unwrap(), "{c}");
    let body = String::from_utf8_lossy(&out.stdout);
    assert!(
        body.contains("[Tool output omitted to fit the context window: the output of read was 400.0 kB (about 100000 tokens). The original session keeps it in full (line 82)"),
        "{body}"
    );
    assert!(!body.contains("0123456789abcdef"), "no byte of the output is sent");
    let copies = dir.path().join("out");
    std::fs::create_dir(&copies).unwrap();
    let (r, code) = json_of(&[
        "repair",
        f.to_str().unwrap(),
        "--fit-context",
        "--context-tokens",
        "50000",
        "--out",
        copies.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!((code, r["changes"]["elided"].as_array().map(Vec::len)), (0, Some(1)), "{r:#}");
    let copy: Value = serde_json::from_slice(&std::fs::read(r["out"].as_str().unwrap()).unwrap()).unwrap();
    let state = &copy["messages"][1]["parts"][1]["state"];
    assert!(
        state["output"].as_str().unwrap().starts_with("[Tool output omitted to fit the context window:"),
        "{state}"
    );
    assert_eq!(state["metadata"]["preview"], "Image read successfully", "what is never sent stays");
    assert_eq!(std::fs::read(&f).unwrap(), before, "the original is never written");
}

/// A Cline CLI task (tests/data/agents/cline/stuck, Cline 3.0.65's own), its
/// `read_files` result made a 400 kB text read and its failures the Chat
/// Completions overflow: the recorded error states the window, the trim
/// reaches into Cline's raw output (`[{query, result, success}]`), and the
/// copy is not stuck.
/// The Cline task of `tests/data/agents/cline/stuck`, its read a 400 kB text
/// file's and its two failures `overflow`, written under `dir`.
fn cline_bulky(dir: &Path, overflow: &str) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/cline/stuck/1796121856311_l5u09");
    let task = dir.join("sessions/1796121856311_l5u09");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::copy(from.join("1796121856311_l5u09.json"), task.join("1796121856311_l5u09.json")).unwrap();
    let text = std::fs::read_to_string(from.join("1796121856311_l5u09.messages.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    let big = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n".repeat(6250);
    v["messages"][2]["content"][0]["content"] =
        serde_json::json!([{"query": "/tmp/sd-fixture/work/notes.txt", "result": big, "success": true}]);
    for i in [3, 5] {
        v["messages"][i]["content"][0]["text"] = Value::String(overflow.into());
    }
    let f = task.join("1796121856311_l5u09.messages.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    f
}

#[test]
fn a_cline_task_is_trimmed_by_the_window_its_error_states() {
    let dir = tempfile::tempdir().unwrap();
    let overflow = "This model's maximum context length is 50000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.";
    let f = cline_bulky(dir.path(), overflow);
    let (d, code) = json_of(&["diagnose", f.to_str().unwrap(), "--json"]);
    assert_eq!((code, d["failure"]["class"].as_str()), (1, Some("context_overflow")), "{d:#}");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(next.iter().any(|n| n.starts_with("session-doctor repair ") && n.ends_with(" --fit-context")), "{next:?}");
    let (r, code) = json_of(&["repair", f.to_str().unwrap(), "--fit-context", "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let elided = r["changes"]["elided"].as_array().unwrap();
    assert_eq!(elided.len(), 1, "{r:#}");
    assert_eq!(elided[0]["call_id"], "call_bc19fbe73e124273b2876dcc");
    let c = &r["changes"]["context"];
    assert_eq!(
        (c["before"].as_u64(), c["window"].as_u64(), c["window_from"].as_str()),
        (Some(130_000), Some(50_000), Some("error")),
        "{c}"
    );
    assert!(c["after"].as_u64().unwrap() <= c["budget"].as_u64().unwrap(), "{c}");
    let copy: Value = serde_json::from_slice(&std::fs::read(r["out"].as_str().unwrap()).unwrap()).unwrap();
    let result = copy["messages"][2]["content"][0]["content"][0]["result"].as_str().unwrap();
    assert!(
        result.starts_with("[Tool output omitted to fit the context window: the output of read_files was 400.0 kB"),
        "{result}"
    );
    assert_eq!(copy["messages"][2]["content"][0]["content"][0]["query"], "/tmp/sd-fixture/work/notes.txt");
    let (d, code) = json_of(&["diagnose", r["out"].as_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &Value::Bool(false)), "{d:#}");
}

/// A count stated below the estimate is of a request the agent had cut
/// (Cline's compaction sends a summary in place of the history it keeps
/// whole): it never lowers the estimate, else the copy would be trimmed too
/// little (it was, in the round trip: Cline's resume of it was refused).
#[test]
fn a_count_below_the_estimate_does_not_lower_it() {
    let dir = tempfile::tempdir().unwrap();
    let overflow = "This model's maximum context length is 6383 tokens. However, your messages resulted in 7672 tokens. Please reduce the length of the messages.";
    let f = cline_bulky(dir.path(), overflow);
    let (r, code) = json_of(&["repair", f.to_str().unwrap(), "--fit-context", "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let c = &r["changes"]["context"];
    assert_eq!((c["stated"].as_u64(), c["window"].as_u64()), (Some(7_672), Some(6_383)), "{c}");
    assert!(c["before"].as_u64().unwrap() > 100_000, "the task as stored, not the cut request: {c}");
    assert!(c["after"].as_u64().unwrap() <= c["budget"].as_u64().unwrap(), "{c}");
}
