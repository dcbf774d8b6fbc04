//! One test for every format (issue 17): the request `preview` writes is the
//! one the provider numbers, so each attachment's block path in it, given back
//! to `diagnose --error` in that provider's own error wording, must name that
//! very attachment as the prime suspect. Block numbering modelled twice would
//! drift (Claude Code's attachment merge, Codex's leading developer message,
//! pi's separate user turns); this is where it shows.

mod common;

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// One media block of a previewed request: its path as the provider spells it
/// in an error, whether it is a PDF, and the sha256 of its bytes.
struct Block {
    path: String,
    pdf: bool,
    sha256: String,
}

fn sha(b64: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    Some(format!("{:x}", Sha256::digest(bytes)))
}

fn data_url(url: &str) -> Option<&str> {
    url.strip_prefix("data:")?.split_once(";base64,").map(|(_, b)| b)
}

/// Anthropic blocks: `messages.N.content.M[.content.K]`.
fn anthropic(messages: &[Value], out: &mut Vec<Block>) {
    let mut one = |path: String, b: &Value| {
        let kind = b["type"].as_str().unwrap_or_default();
        if let ("image" | "document", Some(data)) = (kind, b["source"]["data"].as_str())
            && let Some(sha256) = sha(data)
        {
            out.push(Block { path, pdf: kind == "document", sha256 });
        }
    };
    for (i, m) in messages.iter().enumerate() {
        for (j, b) in m["content"].as_array().into_iter().flatten().enumerate() {
            one(format!("messages.{i}.content.{j}"), b);
            for (k, inner) in b["content"].as_array().into_iter().flatten().enumerate() {
                one(format!("messages.{i}.content.{j}.content.{k}"), inner);
            }
        }
    }
}

/// Chat Completions parts: `messages[N].content[M]`.
fn chat(messages: &[Value], out: &mut Vec<Block>) {
    for (i, m) in messages.iter().enumerate() {
        for (j, p) in m["content"].as_array().into_iter().flatten().enumerate() {
            if let Some(sha256) = p["image_url"]["url"].as_str().and_then(data_url).and_then(sha) {
                out.push(Block { path: format!("messages[{i}].content[{j}]"), pdf: false, sha256 });
            }
            if let Some(sha256) = p["file"]["file_data"].as_str().and_then(data_url).and_then(sha) {
                out.push(Block { path: format!("messages[{i}].content[{j}]"), pdf: true, sha256 });
            }
        }
    }
}

/// Responses items: `input[N].content[M]` or `input[N].output[M]`, after the
/// items the agent sends ahead of its history (`leading`).
fn responses(input: &[Value], leading: usize, out: &mut Vec<Block>) {
    for (i, item) in input.iter().enumerate() {
        for key in ["content", "output"] {
            for (j, p) in item[key].as_array().into_iter().flatten().enumerate() {
                if let Some(sha256) = p["image_url"].as_str().and_then(data_url).and_then(sha) {
                    out.push(Block { path: format!("input[{}].{key}[{j}]", i + leading), pdf: false, sha256 });
                }
            }
        }
    }
}

/// Gemini parts: `contents[N].parts[M]`, and the parts of a function
/// response there (`contents[N].parts[M].function_response.parts[K]`).
fn gemini(contents: &[Value], out: &mut Vec<Block>) {
    fn part(path: String, p: &Value, out: &mut Vec<Block>) {
        let data = p.get("inlineData").or_else(|| p.get("inline_data"));
        if let Some(data) = data {
            let pdf = data["mimeType"] == "application/pdf" || data["mime_type"] == "application/pdf";
            if let Some(sha256) = data["data"].as_str().and_then(sha) {
                out.push(Block { path: path.clone(), pdf, sha256 });
            }
        }
        let response = p.get("functionResponse").or_else(|| p.get("function_response"));
        for (k, inner) in response.map(|r| &r["parts"]).and_then(Value::as_array).into_iter().flatten().enumerate() {
            part(format!("{path}.function_response.parts[{k}]"), inner, out);
        }
    }
    for (i, c) in contents.iter().enumerate() {
        for (j, p) in c["parts"].as_array().into_iter().flatten().enumerate() {
            part(format!("contents[{i}].parts[{j}]"), p, out);
        }
    }
}

/// The dialect of a previewed request and its media blocks.
fn blocks_of(request: &Value, leading: usize) -> (&'static str, Vec<Block>) {
    let mut blocks = Vec::new();
    let dialect = if let Some(contents) = request["contents"].as_array() {
        gemini(contents, &mut blocks);
        "gemini"
    } else if let Some(input) = request["input"].as_array() {
        responses(input, leading, &mut blocks);
        "openai"
    } else {
        let messages = request["messages"].as_array().expect("messages");
        if messages.iter().any(|m| m["content"].to_string().contains("\"image_url\"")) {
            chat(messages, &mut blocks);
            "openai"
        } else {
            anthropic(messages, &mut blocks);
            "anthropic"
        }
    };
    (dialect, blocks)
}

/// The provider's own error naming `b`, in the dialect of the request.
fn error_for(dialect: &str, b: &Block) -> String {
    match dialect {
        "anthropic" if b.pdf => json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": format!("{}.pdf.source.base64.data: The PDF specified was not valid.", b.path)}}),
        "anthropic" => json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": format!("{}.image.source.base64: Could not process image", b.path)}}),
        "gemini" => json!({"error": {"code": 400, "status": "INVALID_ARGUMENT",
            "message": format!("Invalid value at '{}.inline_data.data' (TYPE_BYTES), Base64 decoding failed", b.path)}}),
        _ => json!({"error": {"message": "The image data you provided does not represent a valid image.",
            "type": "invalid_request_error", "param": format!("{}.image_url", b.path), "code": "invalid_image_format"}}),
    }
    .to_string()
}

#[test]
fn every_block_preview_writes_names_its_own_attachment_back() {
    let mut checked = Vec::new();
    for (sample, leading) in [
        ("anthropic.jsonl", 0),
        ("claude-code.jsonl", 0),
        ("cline.json", 0),
        ("mux.jsonl", 0),
        ("opencode.jsonl", 0),
        ("pi.jsonl", 0),
        ("openai-chat.jsonl", 0),
        ("openai-responses.jsonl", 0),
        ("gemini.jsonl", 0),
        ("gemini-cli.jsonl", 0),
        ("copilot.jsonl", 0),
        // Codex sends a developer message of its own ahead of the rollout's items.
        ("codex.jsonl", 1),
    ] {
        let file = common::sample(sample);
        let path = file.to_str().unwrap();
        let out = common::run(&["preview", path]);
        assert!(out.status.success(), "{sample}: {}", String::from_utf8_lossy(&out.stderr));
        let request: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (dialect, blocks) = blocks_of(&request, leading);
        assert!(!blocks.is_empty(), "{sample}: the preview holds no media block");
        // OpenAI's wording for a file it cannot read is not known here: images only.
        for b in blocks.iter().filter(|b| !(b.pdf && dialect == "openai")) {
            let err = error_for(dialect, b);
            let out = common::run(&["diagnose", path, "--json", "--error", &err]);
            let d: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{sample}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
            let named: Vec<&Value> = d["suspects"].as_array().unwrap().iter().filter(|s| s["named"] == true).collect();
            assert!(
                named.len() == 1 && named[0]["sha256"] == b.sha256.as_str() && named[0]["prime"] == true,
                "{sample}: {} names {:?}, the preview holds {} there\n{d:#}",
                b.path,
                named.iter().map(|s| (&s["ref"], &s["sha256"])).collect::<Vec<_>>(),
                b.sha256
            );
            checked.push(format!("{sample} {}", b.path));
        }
    }
    assert!(checked.len() >= 12, "{checked:?}");
}

/// What the per-request limits count (every attachment the agent sends: not
/// excluded, not healed away) is what the request `preview` builds holds, on
/// every sample and on every session the real agents wrote: one model of the
/// request, not two that could drift (a healed image was counted).
#[test]
fn the_limits_count_the_media_the_previewed_request_holds() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, out);
            } else if [".jsonl", ".json", ".zst"].iter().any(|x| name.ends_with(x)) && !name.ends_with(".sent.json") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&common::sample(""), &mut files);
    walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents"), &mut files);
    files.sort();
    let mut checked = Vec::new();
    for file in &files {
        let path = file.to_str().unwrap();
        let out = common::run(&["preview", path]);
        if out.status.code() == Some(2) {
            // Not a session preview reads (a pi store, a folder of sessions): said, not guessed.
            assert!(!out.stderr.is_empty(), "{path}");
            continue;
        }
        let Ok(request) = serde_json::from_slice::<Value>(&out.stdout) else { continue };
        let (_, blocks) = blocks_of(&request, 0);
        let mut previewed: Vec<String> = blocks.into_iter().map(|b| b.sha256).collect();
        let scan = common::run(&["scan", path, "--json"]);
        let v: Value = serde_json::from_slice(&scan.stdout).unwrap_or_else(|e| panic!("{path}: {e}"));
        let carried = v["request"]["refs"].as_array().unwrap_or_else(|| panic!("{path}: {v}"));
        let mut sent: Vec<String> = v["attachments"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| carried.contains(&a["ref"]) && a["encoding"] != "reference")
            .filter_map(|a| a["sha256"].as_str().map(str::to_string))
            .collect();
        let images = v["attachments"].as_array().unwrap().iter().filter(|a| carried.contains(&a["ref"]));
        let images = images.filter(|a| {
            a["mime_detected"].as_str().or(a["mime_declared"].as_str()).is_some_and(|m| m.starts_with("image/"))
        });
        assert_eq!(v["request"]["images"].as_u64(), Some(images.count() as u64), "{path}: {v:#}");
        previewed.sort();
        sent.sort();
        assert_eq!(previewed, sent, "{path}: the request preview builds holds other media than the limits count");
        checked.push(path.to_string());
    }
    assert!(checked.len() >= 55, "{} checked: {checked:#?}", checked.len());
}
