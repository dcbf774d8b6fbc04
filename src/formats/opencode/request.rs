//! The request opencode sends, from its messages as `toModelMessages`
//! (`message-v2.ts`) builds it, through canonical messages.

use serde_json::Value;

use crate::formats::ai_sdk::Replay;
use crate::request::canon::{Msg, Part, WireRole, text_of};
use crate::request::read::{self, items, s};

/// An opencode export as opencode sends it: without what a pending `/undo`
/// removes before its next request ([`super::Revert`]),
/// and from its latest completed compaction on
/// ([`super::compacted_from`]).
pub fn reverted(doc: &mut Value) {
    use super::{Compaction, Revert, compacted_from};
    let id = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let revert = doc.get("info").and_then(|i| i.get("revert"));
    let (message, part) = (revert.and_then(|r| id(r, "messageID")), revert.and_then(|r| id(r, "partID")));
    let revert = Revert::of(message.as_deref(), part.as_deref());
    let Some(messages) = doc.get_mut("messages").and_then(Value::as_array_mut) else { return };
    if let Some(revert) = revert {
        let id_of = |m: &Value| m.get("info").and_then(|i| id(i, "id")).unwrap_or_default();
        messages.retain(|m| revert.keeps_message(&id_of(m)));
        for m in messages.iter_mut() {
            let mid = id_of(m);
            if let Some(parts) = m.get_mut("parts").and_then(Value::as_array_mut) {
                parts.retain(|p| revert.keeps_part(&mid, &id(p, "id").unwrap_or_default()));
            }
        }
    }
    let from = compacted_from(messages, |m| {
        let info = m.get("info")?.as_object()?;
        let compacts =
            items(m.get("parts")).iter().any(|p| p.get("type").and_then(Value::as_str) == Some("compaction"));
        Some(Compaction::of_info(info.get("id").and_then(Value::as_str).unwrap_or(""), info, compacts))
    });
    messages.drain(..from);
}

/// What Kilo Code CLI adds to each user message of an export it sends
/// ([`kilo_environment_part`]), from the export's own `info`.
pub fn kilo_environment(doc: &mut Value) {
    let session = doc.get("info").cloned().unwrap_or(Value::Null);
    let Some(messages) = doc.get_mut("messages").and_then(Value::as_array_mut) else { return };
    for m in messages.iter_mut() {
        if let Some(part) = kilo_environment_part(m, &session)
            && let Some(parts) = m.get_mut("parts").and_then(Value::as_array_mut)
        {
            parts.push(part);
        }
    }
}

/// The part Kilo Code CLI adds, last, to a user message (`m`, `{info, parts}`)
/// it sends (`injectEditorContext`, 7.7.7): a synthetic text holding
/// `<environment_details>` built from the session alone: the message's
/// creation time (whole seconds), the session's directory, and its workspace
/// root (the directory, up as many folders as the session's `path` has),
/// which the message's `editorContext` overrides or adds to (active file,
/// visible files, open tabs). `session` is the session's record (an export's
/// `info`, a store's row). `None` for any other message, and for one already
/// holding such a part. Not opencode's: it adds nothing.
pub fn kilo_environment_part(m: &Value, session: &Value) -> Option<Value> {
    let directory = session.get("directory").and_then(Value::as_str).unwrap_or("");
    let up = session.get("path").and_then(Value::as_str).map_or(0, |p| p.split('/').filter(|s| !s.is_empty()).count());
    let worktree = up_from(directory, up);
    let info = m.get("info").unwrap_or(&Value::Null);
    if info.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let created = info.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64)?;
    let has = items(m.get("parts")).iter().any(|p| {
        p.get("type").and_then(Value::as_str) == Some("text")
            && p.get("synthetic").and_then(Value::as_bool) == Some(true)
            && s(p, "text").is_some_and(|t| t.trim_start().starts_with("<environment_details>"))
    });
    if has || !m.get("parts").is_some_and(Value::is_array) {
        return None;
    }
    let editor = info.get("editorContext");
    let field = |k: &str, base: Option<&str>| {
        editor.and_then(|e| e.get(k)).and_then(Value::as_str).or(base).filter(|v| !v.is_empty()).map(str::to_string)
    };
    let mut lines = vec![format!("Message time: {}", crate::clock::rfc3339_secs(created.div_euclid(1000)))];
    lines.extend(field("directory", Some(directory)).map(|d| format!("Working directory: {d}")));
    lines.extend(field("worktree", worktree.as_deref()).map(|w| format!("Workspace root folder: {w}")));
    lines.extend(field("activeFile", None).map(|f| format!("Active file: {f}")));
    for (key, title) in [("visibleFiles", "Visible files:"), ("openTabs", "Open tabs:")] {
        let files = items(editor.and_then(|e| e.get(key)));
        if !files.is_empty() {
            lines.push(title.to_string());
            lines.extend(files.iter().map(|f| format!("  {}", f.as_str().unwrap_or_default())));
        }
    }
    let text = format!("\n\n<environment_details>\n{}\n</environment_details>", lines.join("\n"));
    let (sid, id) = (session.get("id").cloned(), info.get("id").cloned());
    let (sid, id) = (sid.unwrap_or(Value::Null), id.unwrap_or(Value::Null));
    Some(serde_json::json!({"type": "text", "text": text, "synthetic": true, "sessionID": sid, "messageID": id}))
}

/// `path.resolve(directory, "..", …)` with `up` of them, for an absolute
/// directory (Kilo's sessions keep one); `None` for a relative one, which
/// would resolve against Kilo's working directory.
fn up_from(directory: &str, up: usize) -> Option<String> {
    if !directory.starts_with('/') {
        return None;
    }
    let mut kept: Vec<&str> = Vec::new();
    for seg in directory.split('/').filter(|s| !s.is_empty() && *s != ".") {
        if seg == ".." {
            kept.pop();
        } else {
            kept.push(seg);
        }
    }
    kept.truncate(kept.len().saturating_sub(up));
    Some(format!("/{}", kept.join("/")))
}

/// The model a request goes to (`providerID`, `modelID`), when known:
/// reasoning replays only to the model that wrote it.
pub type Model<'a> = (Option<&'a str>, Option<&'a str>);

/// An opencode message as `toModelMessages` sends it: a failed reply not at
/// all (but one the user aborted after it did something), a mentioned file or
/// folder as the text beside it, a compaction as its question, a pruned tool
/// result as its placeholder, an unfinished call answered as interrupted,
/// reasoning as the AI SDK replays it (the `reasoning` module).
pub fn messages(v: &Value, to: Model<'_>, replay: &mut Replay) -> Vec<Msg> {
    let info = v.get("info").unwrap_or(&Value::Null);
    let parts = items(v.get("parts"));
    if let Some(err) = info.get("error") {
        let aborted = err.get("name").and_then(Value::as_str) == Some("MessageAbortedError");
        let did =
            parts.iter().any(|p| !matches!(p.get("type").and_then(Value::as_str), Some("step-start" | "reasoning")));
        if !(aborted && did) {
            return Vec::new();
        }
    }
    let role = if info.get("role").and_then(Value::as_str) == Some("assistant") {
        WireRole::Assistant
    } else {
        WireRole::User
    };
    let (mut said, mut results) = (Vec::new(), Vec::new());
    for p in parts {
        match p.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" if role == WireRole::User && p.get("ignored").and_then(Value::as_bool) == Some(true) => {}
            "text" if p.get("synthetic").and_then(Value::as_bool) != Some(true) || role == WireRole::User => {
                said.extend(s(p, "text").map(Part::Text));
            }
            "file" if role == WireRole::User && super::sends_file(p.get("mime").and_then(Value::as_str)) => said
                .extend(
                    s(p, "url").map(|u| Part::from_url(&u, p.get("mime").and_then(Value::as_str), s(p, "filename"))),
                ),
            "reasoning" if role == WireRole::Assistant => said.extend(reasoning(p, info, to, replay)),
            "compaction" if role == WireRole::User => said.push(Part::Text(COMPACTION.into())),
            "subtask" if role == WireRole::User => said.push(Part::Text(SUBTASK.into())),
            "tool" => {
                let state = p.get("state").unwrap_or(&Value::Null);
                let status = state.get("status").and_then(Value::as_str).unwrap_or("");
                let name = s(p, "tool").unwrap_or_default();
                let (c, _) = read::sdk_tool(p, state.get("input"), None, name.clone());
                said.extend(c);
                let Some(id) = s(p, "callID") else { continue };
                let cleared =
                    state.get("time").and_then(|t| t.get("compacted")).is_some_and(|c| !c.is_null() && c != false);
                let (parts, error) =
                    match status {
                        "completed" if cleared => (vec![Part::Text(CLEARED.into())], false),
                        "completed" => {
                            let mut parts = vec![Part::Text(state.get("output").map(text_of).unwrap_or_default())];
                            let inline =
                                |a: &&Value| s(a, "url").is_some_and(|u| u.starts_with("data:") && u.contains(','));
                            for a in items(state.get("attachments")).iter().filter(inline) {
                                parts.extend(s(a, "url").map(|u| {
                                    Part::from_url(&u, a.get("mime").and_then(Value::as_str), s(a, "filename"))
                                }));
                            }
                            (parts, false)
                        }
                        "error" => {
                            let meta = state.get("metadata");
                            match meta
                                .filter(|m| m.get("interrupted") == Some(&Value::Bool(true)))
                                .and_then(|m| s(m, "output"))
                            {
                                Some(out) => (vec![Part::Text(out)], false),
                                None => (vec![Part::Text(s(state, "error").unwrap_or_default())], true),
                            }
                        }
                        _ => (vec![Part::Text(INTERRUPTED.into())], true),
                    };
                results.push(Part::Result { id, name: Some(name), parts, error, extra: None });
            }
            _ => {}
        }
    }
    read::split(role, said, results)
}

/// A reasoning part as opencode hands it to the AI SDK: another model's as its
/// text (none when blank); the same model's as `reasoning` with its metadata
/// as provider options, under the SDK's key (opencode stores it under the
/// provider's id for a custom provider, `ProviderTransform.message` renames it),
/// without the `itemId` opencode itself takes out of OpenAI's under its
/// default `store: false`: the SDK then sends the encrypted content alone.
fn reasoning(p: &Value, info: &Value, to: Model<'_>, replay: &mut Replay) -> Option<Part> {
    let text = p.get("text").and_then(Value::as_str).unwrap_or("");
    let wrote = (info.get("providerID").and_then(Value::as_str), info.get("modelID").and_then(Value::as_str));
    let known = |m: Model<'_>| m.0.is_some() && m.1.is_some();
    if known(to) && known(wrote) && to != wrote {
        return (!text.trim().is_empty()).then(|| Part::Text(text.to_string()));
    }
    let meta = p.get("metadata").and_then(Value::as_object);
    let mut options = serde_json::Map::new();
    for (key, provider) in [("openai", "openai"), ("anthropic", "anthropic"), ("google", "google")] {
        let held = meta.and_then(|m| m.get(key).or_else(|| wrote.0.and_then(|id| m.get(id))));
        if let Some(held) = held.and_then(Value::as_object) {
            let mut held = held.clone();
            if provider == "openai" {
                held.remove("itemId");
            }
            options.insert(provider.into(), Value::Object(held));
        }
    }
    replay.part(text, &Value::Object(options))
}

/// What opencode sends for a compaction part, a subtask part, a pruned tool
/// result and a call it never finished (`message-v2.ts`).
const COMPACTION: &str = "What did we do so far?";
const SUBTASK: &str = "The following tool was executed by the user";
const CLEARED: &str = "[Old tool result content cleared]";
const INTERRUPTED: &str = "[Tool execution was interrupted]";
