//! GitHub Copilot CLI 1.0.102 sessions as the real CLI wrote them
//! (tests/data/agents/copilot, see its README): a prompt with a cut PNG
//! attached, which the provider refused and the CLI retried without (twice:
//! the first run and its own resume), and a `view` of a PNG whose image the
//! CLI kept in a `session.binary_asset` but did not send.
//!
//! The CLI reads an attached file again from its path for every request, so
//! each test writes the file the event names into a folder of its own and
//! points the event at it.

use crate::common;
use crate::common::media_corpus;

use std::path::{Path, PathBuf};

use common::{json_of, run};
use serde_json::{Value, json};

const HEALED: &str = "attachment-healed/77ee96c5-e46b-4f2b-8874-8b5c969c004b/events.jsonl";
const HEALED_WORK: &str = "/tmp/sd-cop-uf9uyoax/work";
const VIEW: &str = "view-tool-image/b9c54508-80a9-4797-8f00-fb492193a50b/events.jsonl";
const VIEW_WORK: &str = "/tmp/sd-cop-u1ybobnq/work";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/copilot").join(name)
}

/// A copy laid out as the CLI keeps it (`<home>/session-state/<id>/events.jsonl`),
/// its work folder moved into the temp dir, and `attached` written as `cut.png` there.
fn session(name: &str, work: &str, attached: &[u8]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let new_work = dir.path().join("work");
    std::fs::create_dir_all(&new_work).unwrap();
    std::fs::write(new_work.join("cut.png"), attached).unwrap();
    let id = Path::new(name).parent().unwrap().file_name().unwrap();
    let folder = dir.path().join(".copilot/session-state").join(id);
    std::fs::create_dir_all(&folder).unwrap();
    let text = std::fs::read_to_string(fixture(name)).unwrap().replace(work, new_work.to_str().unwrap());
    let path = folder.join("events.jsonl");
    std::fs::write(&path, text).unwrap();
    (dir, path, new_work.join("cut.png"))
}

/// The PNG the recorded run attached: its `session.binary_asset` snapshot.
fn recorded_png() -> Vec<u8> {
    use base64::Engine as _;
    let text = std::fs::read_to_string(fixture(HEALED)).unwrap();
    let asset =
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|e| e["type"] == "session.binary_asset");
    let data = asset.unwrap()["data"]["data"].as_str().unwrap().to_string();
    base64::engine::general_purpose::STANDARD.decode(data).unwrap()
}

#[test]
fn scan_counts_the_attached_png_and_names_it_broken() {
    let (_dir, s, png) = session(HEALED, HEALED_WORK, &recorded_png());
    let (v, code) = common::scan_json(&s, &[]);
    assert_eq!(v["format"], json!("copilot"), "{v:#}");
    let atts = v["attachments"].as_array().unwrap();
    assert_eq!(atts.len(), 1, "{v:#}");
    assert_eq!(atts[0]["name"], json!(png.to_str().unwrap()), "{v:#}");
    assert_eq!(atts[0]["origin"], json!("user"), "{v:#}");
    assert_eq!(atts[0]["verdict"], json!("invalid"), "{v:#}");
    assert_eq!(code, 1, "{v:#}");
}

#[test]
fn the_asset_is_what_the_cli_sends_not_the_file_on_disk() {
    // 1.0.102 sent the asset's cut bytes with a valid PNG at the path: the file is
    // read only when no asset event holds the bytes.
    let (_dir, s, _) = session(HEALED, HEALED_WORK, &media_corpus::png(16, 16));
    let (v, code) = common::scan_json(&s, &[]);
    assert_eq!(v["attachments"][0]["verdict"], json!("invalid"), "{v:#}");
    assert_eq!(code, 1, "{v:#}");
    let p = run(&["preview", s.to_str().unwrap()]);
    let body: Value = serde_json::from_slice(&p.stdout).unwrap();
    let image = &body["messages"][0]["content"][2];
    assert_eq!(image["source"]["data"], json!(common::b64(&recorded_png())), "{body:#}");
}

/// Takes the attachment's `session.binary_asset` event and its `assetId` out
/// of the session: the CLI then sends the file at its path.
fn without_asset(s: &Path) {
    let text = std::fs::read_to_string(s).unwrap();
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("\"session.binary_asset\"")).collect();
    let without = kept
        .join("\n")
        .replace("\"assetId\":\"sha256:da735875d286bc9e1a01db319f2069ef6dc27b86734d085f2aba050701351482\",", "");
    std::fs::write(s, without + "\n").unwrap();
}

#[test]
fn without_its_asset_event_an_attachment_is_the_file_at_its_path() {
    let (_dir, s, png) = session(HEALED, HEALED_WORK, &media_corpus::png(16, 16));
    without_asset(&s);
    let (v, code) = common::scan_json(&s, &[]);
    assert_eq!(v["attachments"][0]["verdict"], json!("ok"), "{v:#}");
    assert_eq!(v["attachments"][0]["sha256"], json!(common::sha256_file(&png)), "{v:#}");
    assert_eq!(code, 0, "{v:#}");
}

/// An attached file with no asset whose path reads no bytes (here a folder
/// where the file was) is named unreadable by scan, and preview sends no
/// image for it: it wrote an image block whose URL was null.
#[test]
fn an_attachment_with_no_bytes_to_read_sends_no_image() {
    let (_dir, s, png) = session(HEALED, HEALED_WORK, &media_corpus::png(16, 16));
    without_asset(&s);
    std::fs::remove_file(&png).unwrap();
    std::fs::create_dir(&png).unwrap();
    let out = run(&["preview", s.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let body = String::from_utf8_lossy(&out.stdout);
    assert!(!body.contains("null") && !body.contains("image"), "{body}");
}

#[test]
fn a_broken_png_asset_is_named_with_its_path() {
    // The asset event holding a PNG cut inside IDAT (built by the test's own helper).
    let mut broken = media_corpus::png(32, 24);
    broken.truncate(broken.len() / 2);
    let (_dir, s, png) = session(HEALED, HEALED_WORK, &broken);
    let text = std::fs::read_to_string(&s).unwrap();
    let recorded = common::b64(&recorded_png());
    let sha = |b: &[u8]| {
        use sha2::Digest as _;
        sha2::Sha256::digest(b).iter().map(|x| format!("{x:02x}")).collect::<String>()
    };
    let edited = text
        .replace(&recorded, &common::b64(&broken))
        .replace(&sha(&recorded_png()), &sha(&broken))
        .replace("\"byteLength\":60", &format!("\"byteLength\":{}", broken.len()));
    std::fs::write(&s, edited).unwrap();
    let out = run(&["scan", s.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(png.to_str().unwrap()) && text.contains("INVALID"), "{text}");
    assert!(text.contains(&sha(&broken)[..12]), "{text}");
}

#[test]
fn the_cli_healed_the_refusal_itself_so_diagnose_says_not_stuck() {
    let (_dir, s, _) = session(HEALED, HEALED_WORK, &recorded_png());
    let (d, code) = common::diagnose(&s, &[]);
    assert_eq!(d["stuck"], json!(false), "{d:#}");
    assert_eq!(code, 0, "{d:#}");
    // The CLI's warning is the recorded failure, in its own words.
    let failure = d["failure"].to_string();
    assert!(failure.contains("Image input was rejected by the model"), "{d:#}");
}

#[test]
fn a_tool_image_the_cli_does_not_send_is_not_in_the_request() {
    let (_dir, s, _) = session(VIEW, VIEW_WORK, &media_corpus::png(8, 8));
    let (v, code) = common::scan_json(&s, &[]);
    assert_eq!(v["attachments"].as_array().unwrap().len(), 0, "{v:#}");
    assert_eq!(code, 0, "{v:#}");
    // The call and its result pair up, as the CLI sends them.
    let p = run(&["preview", s.to_str().unwrap()]);
    let body: Value = serde_json::from_slice(&p.stdout).unwrap();
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4, "{body:#}");
    assert_eq!(msgs[1]["content"][0]["type"], json!("tool_use"), "{body:#}");
    assert_eq!(msgs[2]["content"][0]["type"], json!("tool_result"), "{body:#}");
    assert!(msgs[2]["content"][0]["content"].to_string().contains("Viewed image file successfully."), "{body:#}");
    assert!(!p.stdout.windows(7).any(|w| w == b"\"image\""), "{body:#}");
}

/// On an OpenAI-compatible provider (Chat Completions) the CLI sends each tool
/// message with `__copilotMessageSource`: the call's tool and its
/// `intentionSummary` (1.0.102's resumed request, tests/agents: the
/// `openai_compatible_provider_preview_matches` scenario); on Anthropic, nothing of it.
#[test]
fn a_chat_tool_message_carries_the_clis_message_source() {
    let (dir, s, _) = session(VIEW, VIEW_WORK, &media_corpus::png(8, 8));
    let p = run(&["preview", s.to_str().unwrap(), "--target", "openai-chat"]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let body: Value = serde_json::from_slice(&p.stdout).unwrap();
    let tool: Vec<&Value> = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool.len(), 1, "{body:#}");
    let summary = format!("view the file at {}/pic.png.", dir.path().join("work").display());
    assert_eq!(
        tool[0]["__copilotMessageSource"],
        json!({"kind": "tool", "name": "view", "summary": summary}),
        "{body:#}"
    );
    let p = run(&["preview", s.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&p.stdout).contains("__copilotMessageSource"));
}

#[test]
fn exclude_then_preview_sends_the_note_in_the_prompt_and_no_image() {
    let (_dir, s, _) = session(HEALED, HEALED_WORK, &recorded_png());
    let x = run(&["exclude", s.to_str().unwrap(), "--ref", "L3.1"]);
    assert!(x.status.success(), "{}", String::from_utf8_lossy(&x.stderr));
    let p = run(&["preview", s.to_str().unwrap()]);
    let body: Value = serde_json::from_slice(&p.stdout).unwrap();
    let first = &body["messages"][0]["content"];
    assert_eq!(first.as_array().unwrap().len(), 1, "{body:#}");
    let text = first[0]["text"].as_str().unwrap();
    assert!(text.contains("hello\n[Attachment omitted:"), "{text}");
    assert!(!body.to_string().contains("\"image\""), "{body:#}");
}

#[test]
fn repair_writes_a_new_session_folder_the_cli_resumes_by_id() {
    use base64::Engine as _;
    let (_dir, s, _) = session(HEALED, HEALED_WORK, &recorded_png());
    let before = std::fs::read(&s).unwrap();
    run(&["exclude", s.to_str().unwrap(), "--ref", "L3.1"]);
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let id = r["id"].as_str().unwrap();
    let out = PathBuf::from(r["out"].as_str().unwrap());
    let state = s.parent().unwrap().parent().unwrap();
    assert_eq!(out, state.join(id).join("events.jsonl"), "{r:#}");
    assert_eq!(r["resume"], json!(format!("copilot --resume={id}")), "{r:#}");
    let copy = std::fs::read_to_string(&out).unwrap();
    let first: Value = serde_json::from_str(copy.lines().next().unwrap()).unwrap();
    assert_eq!(first["data"]["sessionId"], json!(id), "{first:#}");
    // The user message keeps valid attachments only (the CLI drops a message it cannot parse).
    let user: Value =
        copy.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|e| e["type"] == "user.message").unwrap();
    assert_eq!(user["data"]["attachments"], json!([]), "{user:#}");
    assert!(user["data"]["transformedContent"].as_str().unwrap().contains("[Attachment omitted:"), "{user:#}");
    // The excluded bytes leave the copy: its asset event, which only the removed attachment named, is emptied.
    let excluded = base64::engine::general_purpose::STANDARD.encode(recorded_png());
    assert!(!copy.contains(&excluded), "the copy still holds the excluded PNG in its asset event");
    let (scanned, _) = common::scan_json(&out, &[]);
    assert_eq!(scanned["attachments"].as_array().map(Vec::len), Some(0), "{scanned:#}");
    assert_eq!(std::fs::read(&s).unwrap(), before, "the original is unchanged");
    let (d, _) = common::diagnose(&out, &[]);
    assert_eq!(d["stuck"], json!(false), "{d:#}");
}

#[test]
fn sessions_finds_the_cli_sessions_under_copilot_home() {
    let (dir, s, _) = session(HEALED, HEALED_WORK, &recorded_png());
    let out = common::bin()
        .args(["sessions", "--json"])
        .env("HOME", dir.path().join("nowhere"))
        .env("COPILOT_HOME", dir.path().join(".copilot"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(s.to_str().unwrap()) && text.contains("\"copilot\""), "{text}");
}

#[test]
fn a_recorded_rate_limit_is_classified_from_the_session_error() {
    let s = fixture("rate-limited/bd60c02d-b327-436f-a5ea-5a967fc8230f/events.jsonl");
    let (d, code) = common::diagnose(&s, &[]);
    assert_eq!(d["failure"]["class"], json!("rate_limit"), "{d:#}");
    assert_eq!(d["failure"]["status"], json!(429), "{d:#}");
    assert_eq!(d["stuck"], json!(false), "{d:#}");
    assert_eq!(code, 0, "{d:#}");
}

const KILLED: &str = "killed-mid-tool/827b31f3-9e25-44ce-bf62-1beeade17cf9/events.jsonl";
const KILLED_WORK: &str = "/tmp/sd-copilot-0yhhzi71/work";
const CLI_INTERRUPTED: &str = "Tool execution was interrupted before a result was recorded.";

#[test]
fn a_call_killed_mid_tool_is_answered_in_the_clis_own_event_and_words() {
    let (_dir, s, _) = session(KILLED, KILLED_WORK, b"");
    let (d, code) = common::diagnose(&s, &[]);
    assert_eq!(d["stuck"], json!(false), "{d:#}");
    assert_eq!(code, 0, "{d:#}");
    // The CLI answers such a call itself when it resumes: the next request does not fail.
    assert!(d.to_string().contains("the agent answers it itself on resume"), "{d:#}");
    // preview sends what the CLI sends on resume: its words, not marked an error.
    let p = run(&["preview", s.to_str().unwrap()]);
    let body: Value = serde_json::from_slice(&p.stdout).unwrap();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["type"], json!("tool_result"), "{body:#}");
    assert!(last["content"][0]["content"].to_string().contains(CLI_INTERRUPTED), "{body:#}");
    assert!(last["content"][0].get("is_error").is_none(), "{body:#}");
    // repair appends the event the CLI would, chained to the call's message.
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json", "--force"]);
    assert_eq!(code, 0, "{r:#}");
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    let events: Vec<Value> = copy.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let call = events.iter().position(|e| e["type"] == "assistant.message").unwrap();
    let answer = &events[call + 1];
    assert_eq!(answer["type"], json!("tool.execution_complete"), "{copy}");
    assert_eq!(answer["data"]["success"], json!(false), "{answer:#}");
    assert_eq!(answer["data"]["toolCallId"], events[call]["data"]["toolRequests"][0]["toolCallId"], "{answer:#}");
    assert_eq!(answer["parentId"], events[call]["id"], "{answer:#}");
    assert!(answer["data"]["error"]["message"].as_str().unwrap().starts_with(CLI_INTERRUPTED), "{answer:#}");
}

/// The CLI's `image_error` warnings are notices of a retry without images, not
/// failed requests: a copy keeps them, so its diagnosis does not turn the
/// retried request into one "the model accepted" with the broken PNG in it.
#[test]
fn a_copy_keeps_the_notices_that_say_the_image_was_never_accepted() {
    let (_dir, s, _) = session(HEALED, HEALED_WORK, &recorded_png());
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json", "--force"]);
    assert_eq!(code, 0, "{r:#}");
    let (d, _) = common::diagnose(Path::new(r["out"].as_str().unwrap()), &[]);
    let said = d.to_string();
    assert!(!said.contains("the model accepted it"), "{d:#}");
    assert_eq!(d["failure"]["class"], json!("media_rejected"), "{d:#}");
    assert!(d["accepted_invalid"][0]["failed_at"].is_number(), "{d:#}");
}

/// `-p hello --attachment doc.pdf` with a PDF cut at 200 bytes, as the real
/// CLI wrote it: Anthropic refused the PDF, the CLI does not heal a refused
/// document, and its own resume met the same 400 (stuck for real). Then the
/// same session with the attachment in the `blob` form an SDK's or a pasted
/// attachment takes (edited by hand from the real one), which the CLI sends
/// from its asset too. Both are stuck on the PDF, and the preview introduces
/// it as the CLI does: a file as `Document file "doc.pdf" at path "…"`, a
/// blob by its name. Before, the blob was not counted (not stuck, exit 0)
/// and the file was introduced as an image.
#[test]
fn an_attached_pdf_file_or_blob_is_sent_and_stuck_on() {
    for (name, intro) in
        [("cut-pdf-attachment", "Document file \"doc.pdf\" at path \""), ("blob-pdf-attachment", "doc.pdf")]
    {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(".copilot/session-state/2fd4bcc0-8470-45f9-8fd3-2a79b860f393");
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join("events.jsonl");
        std::fs::copy(fixture(&format!("{name}/2fd4bcc0-8470-45f9-8fd3-2a79b860f393/events.jsonl")), &file).unwrap();
        let (d, code) = json_of(&["diagnose", file.to_str().unwrap(), "--json"]);
        assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{name}: {d:#}");
        let primes = common::primes(&d);
        assert!(primes.len() == 1 && primes[0]["mime_declared"] == "application/pdf", "{name}: {d:#}");
        let out = run(&["preview", file.to_str().unwrap()]);
        let request: Value = serde_json::from_slice(&out.stdout).unwrap();
        let blocks = request["messages"][0]["content"].as_array().unwrap();
        assert!(blocks[1]["text"].as_str().unwrap().starts_with(intro), "{name}: {request:#}");
        assert_eq!(blocks[2]["type"], "document", "{name}: {request:#}");
    }
}
