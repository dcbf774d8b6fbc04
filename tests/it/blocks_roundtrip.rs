//! One test for every format (issue 17): the request `preview` writes is the
//! one the provider numbers, so each attachment's block path in it, given back
//! to `diagnose --error` in that provider's own error wording, must name that
//! very attachment as the prime suspect. Block numbering modelled twice would
//! drift (Claude Code's attachment merge, Codex's leading developer message,
//! pi's separate user turns); this is where it shows.

use crate::common;

use std::collections::BTreeSet;

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

/// Chat Completions parts: `messages[N].content[M]`, after the messages the
/// agent sends ahead of its history (`leading`: its system prompt).
fn chat(messages: &[Value], leading: usize, out: &mut Vec<Block>) {
    for (i, m) in messages.iter().enumerate() {
        let i = i + leading;
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
    fn part(path: &str, p: &Value, out: &mut Vec<Block>) {
        let data = p.get("inlineData").or_else(|| p.get("inline_data"));
        if let Some(data) = data {
            let pdf = data["mimeType"] == "application/pdf" || data["mime_type"] == "application/pdf";
            if let Some(sha256) = data["data"].as_str().and_then(sha) {
                out.push(Block { path: path.to_string(), pdf, sha256 });
            }
        }
        let response = p.get("functionResponse").or_else(|| p.get("function_response"));
        for (k, inner) in response.map(|r| &r["parts"]).and_then(Value::as_array).into_iter().flatten().enumerate() {
            part(&format!("{path}.function_response.parts[{k}]"), inner, out);
        }
    }
    for (i, c) in contents.iter().enumerate() {
        for (j, p) in c["parts"].as_array().into_iter().flatten().enumerate() {
            part(&format!("contents[{i}].parts[{j}]"), p, out);
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
        // Chat Completions: an image, or a PDF as a `file` part (Qwen Code's).
        let chat_media =
            |m: &Value| ["\"image_url\"", "\"file_data\""].iter().any(|k| m["content"].to_string().contains(k));
        if messages.iter().any(chat_media) {
            chat(messages, leading, &mut blocks);
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
        // Qwen Code's system prompt is the first message; a tool's image a user message's.
        ("qwen-code.jsonl", 1),
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

/// Every sample and every session the real agents wrote (tests/data/agents),
/// with the request `preview` builds of it; those preview refuses (a pi
/// store, a file that is no session) are left out, after saying why.
fn previewed_sessions() -> Vec<(String, Value)> {
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
    let mut out = Vec::new();
    for file in &files {
        let path = file.to_str().unwrap();
        let ran = common::run(&["preview", path]);
        if ran.status.code() == Some(2) {
            assert!(!ran.stderr.is_empty(), "{path}");
            continue;
        }
        let request = serde_json::from_slice::<Value>(&ran.stdout).unwrap_or_else(|e| panic!("{path}: {e}"));
        out.push((path.to_string(), request));
    }
    assert!(out.len() >= 55, "{} previewed", out.len());
    out
}

/// What the per-request limits count (every attachment the agent sends: not
/// excluded, not healed away) is what the request `preview` builds holds, on
/// every sample and on every session the real agents wrote: one model of the
/// request, not two that could drift (a healed image was counted, and one in
/// an output Codex leaves out).
#[test]
fn the_limits_count_the_media_the_previewed_request_holds() {
    for (path, _) in previewed_sessions() {
        let path = path.as_str();
        // The request the agent sends from the file as it stands: `preview` also
        // mends (Gemini CLI's repeated responses go), and the limits count what is sent.
        let (request, _) = unmended(std::path::Path::new(path));
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
    }
}

/// The call ids a previewed request leaves unpaired, by the rules of its
/// provider: a call without its result (in the next message for Anthropic,
/// Chat and Gemini; anywhere later for Responses) and a result without its call.
fn unpaired(request: &Value) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let ids = |v: &Value, key: &str, ty: &str, id: &str| -> Vec<String> {
        v[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| ty.is_empty() || b["type"] == ty)
            .filter_map(|b| b[id].as_str().map(str::to_string))
            .collect()
    };
    if let Some(input) = request["input"].as_array() {
        let of = |kinds: &[&str]| -> Vec<String> {
            input
                .iter()
                .filter(|i| kinds.iter().any(|k| i["type"] == *k))
                .filter_map(|i| i["call_id"].as_str().map(str::to_string))
                .collect()
        };
        let calls = of(&["function_call", "custom_tool_call"]);
        let outputs = of(&["function_call_output", "custom_tool_call_output"]);
        out.extend(calls.iter().filter(|c| !outputs.contains(c)).cloned());
        out.extend(outputs.iter().filter(|o| !calls.contains(o)).cloned());
        return out;
    }
    if let Some(contents) = request["contents"].as_array() {
        let of = |c: &Value, key: &str| -> Vec<String> {
            c["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.get(key))
                .map(|f| f["id"].as_str().or(f["name"].as_str()).unwrap_or_default().to_string())
                .collect()
        };
        for (i, c) in contents.iter().enumerate() {
            let calls = of(c, "functionCall");
            let next = contents.get(i + 1).map(|n| of(n, "functionResponse")).unwrap_or_default();
            out.extend(calls.iter().filter(|x| !next.contains(x)).cloned());
            let before = if i == 0 { Vec::new() } else { of(&contents[i - 1], "functionCall") };
            out.extend(of(c, "functionResponse").into_iter().filter(|r| !before.contains(r)));
        }
        return out;
    }
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    for (i, m) in messages.iter().enumerate() {
        let (calls, results): (Vec<String>, Vec<String>) = if m["tool_calls"].is_array() || m["role"] == "tool" {
            (ids(m, "tool_calls", "", "id"), m["tool_call_id"].as_str().map(str::to_string).into_iter().collect())
        } else {
            (ids(m, "content", "tool_use", "id"), ids(m, "content", "tool_result", "tool_use_id"))
        };
        // Chat: the tool messages right after; Anthropic: the next message.
        let mut answered = Vec::new();
        for n in messages.iter().skip(i + 1) {
            if n["role"] == "tool" {
                answered.extend(n["tool_call_id"].as_str().map(str::to_string));
                continue;
            }
            if answered.is_empty() {
                answered = ids(n, "content", "tool_result", "tool_use_id");
            }
            break;
        }
        out.extend(calls.iter().filter(|c| !answered.contains(c)).cloned());
        let mut asked = Vec::new();
        for p in messages[..i].iter().rev() {
            if p["role"] == "tool" && m["role"] == "tool" {
                continue;
            }
            asked = if p["tool_calls"].is_array() {
                ids(p, "tool_calls", "", "id")
            } else {
                ids(p, "content", "tool_use", "id")
            };
            break;
        }
        out.extend(results.into_iter().filter(|r| !asked.contains(r)));
    }
    out
}

/// Takes the first tool call block out of `v` (an element of an array whose
/// type names a call, or a Gemini `functionCall` part, or a Chat `tool_calls`
/// entry); whether there was one.
fn without_first_call(v: &mut Value) -> bool {
    let is_call = |b: &Value| {
        matches!(b["type"].as_str(), Some("tool_use" | "function_call" | "custom_tool_call" | "toolCall"))
            || b.get("functionCall").is_some()
    };
    match v {
        Value::Array(items) => {
            if let Some(i) = items.iter().position(is_call) {
                items.remove(i);
                return true;
            }
            items.iter_mut().any(without_first_call)
        }
        Value::Object(map) => {
            if let Some(Value::Array(calls)) = map.get_mut("tool_calls")
                && !calls.is_empty()
            {
                calls.remove(0);
                return true;
            }
            map.values_mut().any(without_first_call)
        }
        _ => false,
    }
}

/// The request the agent sends from the session at `path`, as `preview`
/// builds it but with no mending (no call answered, no result removed or
/// record dropped): the agent's own heals only, and the session.
fn unmended(path: &std::path::Path) -> (Value, session_doctor::model::Session) {
    use session_doctor::rewrite::{Op, Rewrite, RewriteOptions};
    use session_doctor::{preview, reader};
    let opts = reader::ReadOptions::default();
    let plan = reader::plan(path, &opts).unwrap();
    let session = reader::read_with_plan(path, &opts, &plan, None).unwrap();
    let provider = session
        .provider
        .clone()
        .filter(|p| session_doctor::provider::canonical(p).is_some())
        .unwrap_or_else(|| plan.rules.provider.clone());
    let dialect = session_doctor::formats::native_of(&session, &provider);
    let source = reader::Source::of(&plan, path);
    let mut out = Vec::new();
    let mut rewrite = Rewrite::plan(&session, &RewriteOptions::default(), plan.single_document);
    for ops in rewrite.ops.values_mut() {
        ops.retain(|op| {
            !matches!(op, Op::Answer { .. } | Op::RemoveResult { .. } | Op::RemoveRepeat { .. } | Op::Drop)
        });
    }
    preview::preview(&source, &session, rewrite, plan.single_document, dialect, false, 0, &mut out).unwrap();
    (serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{}: {e}", path.display())), session)
}

/// The call ids the history check reports unpaired: those that block the
/// next request, and those the agent answers itself when it sends.
fn reported(session: &session_doctor::model::Session, request: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    use session_doctor::model::FaultKind as Kind;
    let problems: Vec<_> = session_doctor::history::check(session)
        .faults
        .into_iter()
        .filter(|p| matches!(p.kind, Kind::CallWithoutResult | Kind::ResultWithoutCall))
        .collect();
    // An id as the request spells it: Gemini CLI strips the `<tool>__` prefix it
    // records; pi on the Responses API sends the `<call_id>` of its `<call_id>|<fc_id>`.
    let responses = request["input"].is_array();
    let wire = |p: &session_doctor::model::Fault| -> Option<String> {
        let id = p.call_id.clone()?;
        let format = session.format;
        match (id.split_once("__"), id.split_once('|')) {
            (Some((_, rest)), _) if format == session_doctor::model::Format::GeminiCli => Some(rest.to_string()),
            (_, Some((call, _))) if format == session_doctor::model::Format::Pi && responses => Some(call.to_string()),
            _ => Some(id),
        }
    };
    let ids = |agent_pairs: bool| -> BTreeSet<String> {
        problems.iter().filter(|p| p.agent_pairs == agent_pairs).filter_map(wire).collect()
    };
    (ids(false), ids(true))
}

/// The history check pairs calls as the request the agent sends does: the
/// calls and results `diagnose` reports the provider would see unpaired (its
/// history problems but those the agent pairs itself) are exactly those the
/// request `preview` builds leaves unpaired, on every sample and every
/// session the real agents wrote.
#[test]
fn the_history_check_pairs_calls_as_the_previewed_request_does() {
    let (mut compared, mut broken) = (0, 0);
    let dir = tempfile::tempdir().unwrap();
    let mut sessions = previewed_sessions();
    // Each JSON Lines session again with its first tool call taken out of its
    // record (the record and its ids kept): the call's result is left without
    // it, which each agent sends, or leaves out, in its own way.
    for (path, _) in sessions.clone() {
        if !common::has_extension(&path, "jsonl") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        // A record that is itself the call (a Codex item) goes whole.
        let whole = |v: &Value| {
            [v, &v["payload"]].iter().any(|r| matches!(r["type"].as_str(), Some("function_call" | "custom_tool_call")))
        };
        let Some(at) = lines
            .iter()
            .position(|l| serde_json::from_str::<Value>(l).is_ok_and(|mut v| whole(&v) || without_first_call(&mut v)))
        else {
            continue;
        };
        let mut v: Value = serde_json::from_str(&lines[at]).unwrap();
        if whole(&v) {
            lines.remove(at);
        } else {
            without_first_call(&mut v);
            lines[at] = v.to_string();
        }
        let cut = lines;
        let name = std::path::Path::new(&path).file_name().unwrap().to_string_lossy().into_owned();
        let file = dir.path().join(format!("{broken}-{name}"));
        std::fs::write(&file, cut.join("\n") + "\n").unwrap();
        let ran = common::run(&["preview", file.to_str().unwrap()]);
        let Ok(request) = serde_json::from_slice::<Value>(&ran.stdout) else { continue };
        sessions.push((file.to_str().unwrap().to_string(), request));
        broken += 1;
    }
    let real = sessions.len() - broken;
    let mut unpaired_somewhere = 0;
    for (n, (path, mended)) in sessions.into_iter().enumerate() {
        // The request built from the session as it stands: `preview` mends what
        // the check reports, so it is built here without the rewrite.
        let (request, session) = unmended(std::path::Path::new(&path));
        let (blocking, answered_by_agent) = reported(&session, &request);
        let previewed = unpaired(&request);
        // What the check calls broken is unpaired in the request: no stuck
        // verdict of a history the provider takes.
        assert!(blocking.is_subset(&previewed), "{path}: reported {blocking:?}, unpaired {previewed:?}\n{request:#}");
        // What is unpaired there in a session an agent wrote is either that or a
        // call the agent answers itself when it next sends: no healthy verdict of
        // a history the provider refuses. (Not of a cut copy: the check rightly
        // excuses what a request the model accepted later held, and the cut
        // was made before that acceptance.)
        let rest: std::collections::BTreeSet<String> = previewed.difference(&blocking).cloned().collect();
        if n < real {
            assert!(rest.is_subset(&answered_by_agent), "{path}: unpaired {rest:?}, not reported\n{request:#}");
        }
        // And the request `preview` writes (and `repair`'s copy sends) pairs every call it reports.
        let left = unpaired(&mended);
        assert!(left.is_disjoint(&blocking), "{path}: the preview leaves {left:?} unpaired\n{mended:#}");
        if n < real {
            assert_eq!(left, BTreeSet::new(), "{path}: the preview leaves calls unpaired\n{mended:#}");
        }
        unpaired_somewhere += usize::from(!blocking.is_empty());
        compared += 1;
    }
    assert!(compared >= 55 && broken >= 10, "{compared} sessions, {broken} broken");
    // Some agents send a result without its call as recorded: the check is not of empty sets alone.
    assert!(unpaired_somewhere >= 3, "{unpaired_somewhere} sessions with unpaired calls");
}

/// The same on every state an agent's session was in on the way: each prefix
/// of each JSON Lines session the real agents wrote (cut after a line, as a
/// run killed there leaves it) is checked as the whole session is, in both
/// directions — what the check calls broken is unpaired in the request the
/// agent sends, and what is unpaired there is reported or answered by the
/// agent itself — and the limits count the media that request holds. States
/// no fixture was cut to (a killed run, a failed reply as the last line, a
/// heal's error line without its retry) come for free.
#[test]
fn every_prefix_of_an_agents_session_is_judged_on_the_request_it_stands_for() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, _) in previewed_sessions() {
        if !common::has_extension(&path, "jsonl") || !path.contains("tests/data/agents") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let name = std::path::Path::new(&path).file_name().unwrap().to_string_lossy().into_owned();
        for cut in 1..lines.len() {
            let file = dir.path().join(format!("{cut}-{name}"));
            std::fs::write(&file, lines[..cut].join("\n") + "\n").unwrap();
            let ran = std::panic::catch_unwind(|| unmended(&file));
            let Ok((request, session)) = ran else {
                // Not a session yet (a subagent's file holding its fork reference alone): refused, and said why.
                let refused = common::run(&["preview", file.to_str().unwrap()]);
                if refused.status.code() != Some(2) || refused.stderr.is_empty() {
                    failures.push(format!("{path} cut after line {cut}: no request"));
                }
                continue;
            };
            let (blocking, answered_by_agent) = reported(&session, &request);
            let previewed = unpaired(&request);
            if !blocking.is_subset(&previewed) {
                failures.push(format!("{path} cut after line {cut}: reported {blocking:?}, unpaired {previewed:?}"));
            }
            let rest: std::collections::BTreeSet<String> = previewed.difference(&blocking).cloned().collect();
            if !rest.is_subset(&answered_by_agent) {
                failures.push(format!("{path} cut after line {cut}: unpaired {rest:?}, not reported"));
            }
            // And the limits count the media that request holds.
            let mut held: Vec<String> = blocks_of(&request, 0).1.into_iter().map(|b| b.sha256).collect();
            let mut counted: Vec<String> = session
                .sent_attachments()
                .filter(|a| a.encoding != session_doctor::model::Encoding::Reference)
                .filter_map(|a| a.sha256.clone())
                .collect();
            held.sort();
            counted.sort();
            if held != counted {
                failures.push(format!(
                    "{path} cut after line {cut}: the request holds {held:?}, the limits count {counted:?}"
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{} of {checked} prefixes:\n{}", failures.len(), failures.join("\n"));
    assert!(checked >= 500, "{checked} prefixes");
}
