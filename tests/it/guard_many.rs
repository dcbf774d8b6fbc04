//! The guard judges an image as one of the session's many (issue 37, item 13):
//! a 2556 × 1179 phone screenshot Read into a Claude Code session that already
//! holds 22 images would make a request Anthropic refuses (over 20 images, no
//! side over 2000 px), so the hook hands over a copy fitted to 2000 px; in a
//! session of a few images it passes untouched.

use crate::common;
use crate::common::media_corpus;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use session_doctor::media::{Depth, Facts};

/// A Claude Code transcript holding `images` images (a pasted screenshot per user line).
fn transcript(dir: &Path, images: usize) -> std::path::PathBuf {
    let data = common::b64(&media_corpus::png(8, 8));
    let mut text = String::new();
    for i in 0..images {
        let line = json!({"type":"user","uuid":format!("u{i}"),"sessionId":"s","message":{"role":"user","content":[
            {"type":"text","text":"look"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":data}}]}});
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let p = dir.join(format!("t{images}.jsonl"));
    std::fs::write(&p, text).unwrap();
    p
}

fn hook(cache: &Path, event: &Value) -> String {
    hook_of("claude-code", cache, event)
}

fn hook_of(agent: &str, cache: &Path, event: &Value) -> String {
    let mut child = common::bin()
        .args(["guard", "--hook", agent])
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(event.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A 2556 × 1179 phone screenshot, `shot.png` in `dir`: smooth, as a
/// screenshot is, well under Anthropic's byte limit on its own.
fn screenshot(dir: &Path) {
    let mut png = Vec::new();
    let mut enc = png::Encoder::new(&mut png, 2556, 1179);
    enc.set_color(png::ColorType::Rgb);
    let mut header = enc.write_header().unwrap();
    let rows: Vec<u8> = (0..1179u32)
        .flat_map(|y| (0..2556u32).flat_map(move |x| [u8::try_from(x / 11).unwrap(), u8::try_from(y / 5).unwrap(), 90]))
        .collect();
    header.write_image_data(&rows).unwrap();
    header.finish().unwrap();
    std::fs::write(dir.join("shot.png"), &png).unwrap();
}

#[test]
fn a_screenshot_read_into_a_session_of_many_images_is_fitted_to_the_many_image_limit() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    screenshot(dir.path());
    let event = |t: &Path| {
        json!({"session_id":"s","transcript_path":t,"cwd":dir.path(),"hook_event_name":"PreToolUse",
               "tool_name":"Read","tool_input":{"file_path":"shot.png"},"tool_use_id":"toolu_9"})
    };
    // 22 images held, the screenshot the 23rd.
    let out = hook(&cache, &event(&transcript(dir.path(), 22)));
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let note = v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(note.starts_with("[Image resized from 2556×1179 to 2000×922 to fit anthropic's limits."), "{note}");
    let fitted = std::fs::read(v["hookSpecificOutput"]["updatedInput"]["file_path"].as_str().unwrap()).unwrap();
    let facts = Facts::examine(&fitted, None, Depth::Deep);
    assert_eq!((facts.width, facts.height), (Some(2000), Some(922)));
    // 20 images with this one (19 held): within the rule, the Read goes on as it is.
    assert_eq!(hook(&cache, &event(&transcript(dir.path(), 19))), "");
    // No transcript to read: judged alone, as before.
    assert_eq!(hook(&cache, &event(Path::new("/nonexistent/t.jsonl"))), "");
}

/// A Gemini CLI chat file (its JSONL as 0.61.0 writes it: a header line, then
/// each message, written again whole each time it changes) holding `images`
/// images, each message written `copies` times.
fn gemini_chat(dir: &Path, images: usize, copies: usize) -> std::path::PathBuf {
    let data = common::b64(&media_corpus::png(8, 8));
    let mut text = json!({"sessionId":"1e60ab7e-1f4d-4546-a257-eabf104a80ec","projectHash":"caacef39","startTime":"2026-12-01T08:15:36.313Z",
        "lastUpdated":"2026-12-01T08:15:36.313Z","kind":"main"})
    .to_string()
        + "\n";
    for i in 0..images {
        let line = json!({"id":format!("8a5b870e-ff2d-404e-b3e2-{i:012}"),"timestamp":"2026-12-01T08:15:36.715Z","type":"user",
            "content":[{"text":"look"},{"inlineData":{"data":data,"mimeType":"image/png"}}]});
        for _ in 0..copies {
            text.push_str(&line.to_string());
            text.push('\n');
        }
    }
    let chats = dir.join(format!("tmp/p{images}x{copies}/chats"));
    std::fs::create_dir_all(&chats).unwrap();
    let p = chats.join("session-2026-12-01T08-15-1e60ab7e.jsonl");
    std::fs::write(&p, text).unwrap();
    p
}

/// Gemini CLI's event names its chat file too: the screenshot is judged as
/// one of the images the session's next request carries, each message counted
/// once however often the file writes it again.
#[test]
fn gemini_cli_counts_the_images_its_chat_holds() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    screenshot(dir.path());
    let event = |t: &Path| {
        json!({"session_id":"s","transcript_path":t,"cwd":dir.path(),"hook_event_name":"BeforeTool",
               "timestamp":"2026-12-01T08:16:00.000Z","tool_name":"read_file","tool_input":{"file_path":"shot.png"}})
    };
    let chat = gemini_chat(dir.path(), 22, 1);
    let out = hook_of("gemini-cli", &cache, &event(&chat));
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let note = v["systemMessage"].as_str().unwrap();
    assert!(note.starts_with("[Image resized from 2556×1179 to 2000×922 to fit anthropic's limits."), "{note}");
    let copy = v["hookSpecificOutput"]["tool_input"]["file_path"].as_str().unwrap();
    assert!(copy.starts_with(&chat.parent().unwrap().parent().unwrap().display().to_string()), "{copy}");
    let facts = Facts::examine(&std::fs::read(copy).unwrap(), None, Depth::Deep);
    assert_eq!((facts.width, facts.height), (Some(2000), Some(922)));
    // 11 images, each message written twice: 12 in the request, within the rule.
    assert_eq!(hook_of("gemini-cli", &cache, &event(&gemini_chat(dir.path(), 11, 2))), "");
    assert_eq!(hook_of("gemini-cli", &cache, &event(&gemini_chat(dir.path(), 19, 1))), "");
}
