//! Gemini CLI's request, built from its session records the way the CLI builds
//! it when it resumes (checked against 0.61.0's wire requests):
//!
//! - `convertSessionToClientHistory`: `info`/`error`/`warning` records are not
//!   sent; a `user` record whose text is empty or starts with `/`, `?`,
//!   `<session_context>` or `<hook_context>` is not sent (the CLI writes a fresh
//!   session context on every start); a `gemini` record sends its `content` as
//!   it is when that holds calls or thoughts, else its thoughts, its content and
//!   one `functionCall` per `toolCalls` entry; the results of its `toolCalls`
//!   follow as a user turn (a string result as a response, a list as its parts);
//! - `stripToolCallIdPrefixes`: call and response ids lose the `<tool>__` prefix
//!   the CLI records them with (a stripped response keeps only its name, id and
//!   response), and empty text parts go;
//! - a `$set` line that holds `messages` is the whole history at that point.
//!
//! Consecutive turns of one role merge, as the CLI coalesces them; the writer
//! does that for Gemini.

use serde_json::{Value, json};

use crate::request::canon::{Msg, Part, WireRole, text_of};
use crate::request::read::gemini_part;

/// What every Gemini CLI request holds that no session file does.
pub const NOT_IN_SESSION: &[&str] = &[
    "the system instruction (Gemini CLI writes it for each run)",
    "the tool declarations",
    "the generation config",
    "the session context message (written fresh on each start, never the recorded one)",
];

/// The turns one line of a Gemini CLI session stands for.
pub fn record(v: &Value) -> Vec<Msg> {
    match keyed(v) {
        Some(list) => list.flat_map(message).collect(),
        None => message(v),
    }
}

/// The turns of the `part`-th message of a line that holds a whole history
/// (a checkpoint a later record took apart, [`crate::model::Record::part`]).
pub fn message_of(v: &Value, part: u32) -> Vec<Msg> {
    keyed(v).and_then(|mut list| list.nth(part as usize)).map_or_else(Vec::new, message)
}

/// The messages of a `$set.messages` checkpoint or a metadata line (a whole
/// legacy `ConversationRecord`), as the CLI loads them: those with a string id.
fn keyed(v: &Value) -> Option<impl Iterator<Item = &Value>> {
    let list = match v.get("$set").and_then(|s| s.get("messages")).and_then(Value::as_array) {
        Some(list) => list,
        None if v.get("projectHash").is_some() => {
            v.get("messages").and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
        }
        None => return None,
    };
    Some(list.iter().filter(|m| m.get("id").is_some_and(Value::is_string)))
}

fn message(v: &Value) -> Vec<Msg> {
    match v.get("type").and_then(Value::as_str) {
        Some("user") => {
            let content = v.get("content").unwrap_or(&Value::Null);
            if ignored(content) {
                return Vec::new();
            }
            vec![Msg::new(WireRole::User, parts(content))]
        }
        Some("gemini") => gemini(v),
        _ => Vec::new(),
    }
}

fn gemini(v: &Value) -> Vec<Msg> {
    let content = parts(v.get("content").unwrap_or(&Value::Null));
    let calls = v.get("toolCalls").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let in_content = content.iter().any(|p| matches!(p, Part::Call { .. } | Part::Reasoning { .. }));
    let mut said = Vec::new();
    if in_content {
        said = content;
    } else {
        for t in v.get("thoughts").and_then(Value::as_array).into_iter().flatten() {
            let description = t.get("description").and_then(Value::as_str).unwrap_or("");
            let text = match t.get("subject").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                Some(subject) => format!("**{subject}** {description}"),
                None => description.to_string(),
            };
            said.push(Part::Reasoning { family: "gemini", raw: json!({"text": text, "thought": true}) });
        }
        said.extend(content);
        for c in calls {
            let Some(name) = c.get("name").and_then(Value::as_str) else { continue };
            let id = c.get("id").and_then(Value::as_str).map_or_else(|| name.to_string(), |id| strip(id, name));
            let args = c.get("args").cloned().unwrap_or_else(|| json!({}));
            said.push(Part::Call { id, name: name.to_string(), args });
        }
    }
    if said.is_empty() {
        return Vec::new();
    }
    let mut out = vec![Msg::new(WireRole::Assistant, said)];
    let mut results = Vec::new();
    for c in calls {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("generic_tool");
        match c.get("result") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(Value::String(s)) => {
                let id = c.get("id").and_then(Value::as_str).map_or_else(|| name.to_string(), |id| strip(id, name));
                results.push(Part::Result {
                    id,
                    name: Some(name.to_string()),
                    parts: vec![Part::Text(s.clone())],
                    error: false,
                    extra: None,
                });
            }
            Some(r) => results.extend(parts(r)),
        }
    }
    if !results.is_empty() {
        out.push(Msg::new(WireRole::User, results));
    }
    out
}

/// A `PartListUnion` (a string, one part, or a list of strings and parts) as parts.
fn parts(content: &Value) -> Vec<Part> {
    let one = |p: &Value| -> Option<Part> {
        match p {
            Value::String(t) => (!t.is_empty()).then(|| Part::Text(t.clone())),
            p => part(p),
        }
    };
    match content {
        Value::Array(list) => list.iter().filter_map(one).collect(),
        Value::Null => Vec::new(),
        p => one(p).into_iter().collect(),
    }
}

fn part(p: &Value) -> Option<Part> {
    if let Some(r) = p.get("functionResponse").or_else(|| p.get("function_response")) {
        let name = r.get("name").and_then(Value::as_str).unwrap_or("generic_tool");
        let id = r.get("id").and_then(Value::as_str).map_or_else(|| name.to_string(), |id| strip(id, name));
        let response = r.get("response").unwrap_or(&Value::Null);
        let text = match response.get("output") {
            Some(Value::String(s)) => s.clone(),
            _ => text_of(response),
        };
        let mut inner = vec![Part::Text(text)];
        // A response whose id the CLI strips is rebuilt from its name, id and response alone.
        let stripped = r.get("id").and_then(Value::as_str).is_some_and(|i| i.starts_with(&format!("{name}__")));
        if !stripped {
            inner.extend(r.get("parts").map(parts).unwrap_or_default());
        }
        return Some(Part::Result { id, name: Some(name.to_string()), parts: inner, error: false, extra: None });
    }
    if let Some(c) = p.get("functionCall").or_else(|| p.get("function_call")) {
        let name = c.get("name").and_then(Value::as_str)?;
        let id = c.get("id").and_then(Value::as_str).map_or_else(|| name.to_string(), |id| strip(id, name));
        return Some(Part::Call {
            id,
            name: name.to_string(),
            args: c.get("args").cloned().unwrap_or_else(|| json!({})),
        });
    }
    match gemini_part(p)? {
        Part::Text(t) if t.is_empty() => None,
        other => Some(other),
    }
}

/// The id the CLI sends: without the `<tool>__` prefix it records.
fn strip(id: &str, name: &str) -> String {
    id.strip_prefix(&format!("{}__", name.trim())).unwrap_or(id).to_string()
}

/// A user turn the CLI does not send again (`isIgnoredUserContent`).
fn ignored(content: &Value) -> bool {
    let text = summary(content);
    let t = text.trim();
    t.is_empty() || ["/", "?", "<session_context>", "<hook_context>"].iter().any(|p| t.starts_with(p))
}

/// The CLI's one-line summary of a content (`partListUnionToString`): a part of
/// another kind (a thought included) is a bracketed label, else its text.
fn summary(content: &Value) -> String {
    const LABELLED: [&str; 8] = [
        "videoMetadata",
        "thought",
        "codeExecutionResult",
        "executableCode",
        "fileData",
        "functionCall",
        "functionResponse",
        "inlineData",
    ];
    match content {
        Value::String(s) => s.clone(),
        Value::Array(list) => list.iter().map(summary).collect(),
        Value::Object(o) if LABELLED.iter().any(|k| o.contains_key(*k)) => "[part]".into(),
        Value::Object(o) => o.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_in_content_is_sent_once_and_ids_lose_their_prefix() {
        let v = json!({"id":"m","type":"gemini","content":[{"functionCall":{"id":"read_file__r_0","name":"read_file","args":{"file_path":"/a.png"}}}],
            "toolCalls":[{"id":"read_file__r_0","name":"read_file","args":{"file_path":"/a.png"},
                "result":[{"functionResponse":{"id":"read_file__r_0","name":"read_file","response":{"output":"Binary content provided (1 item(s))."}}},
                          {"inlineData":{"mimeType":"image/png","data":"AAAA"}}]}]});
        let msgs = record(&v);
        assert_eq!(msgs.len(), 2);
        assert_eq!(
            msgs[0].parts,
            vec![Part::Call { id: "r_0".into(), name: "read_file".into(), args: json!({"file_path":"/a.png"}) }]
        );
        assert_eq!(
            msgs[1].parts,
            vec![
                Part::Result {
                    id: "r_0".into(),
                    name: Some("read_file".into()),
                    parts: vec![Part::Text("Binary content provided (1 item(s)).".into())],
                    error: false,
                    extra: None
                },
                Part::Media { mime: Some("image/png".into()), data: Some("AAAA".into()), url: None, name: None },
            ]
        );
    }

    #[test]
    fn session_context_and_slash_commands_are_not_sent() {
        for text in ["<session_context>\nThis is the Gemini CLI.", "/stats", "  ", "?help"] {
            let v = json!({"id":"u","type":"user","content":[{"text": text}]});
            assert!(record(&v).is_empty(), "{text:?}");
        }
        let v = json!({"id":"u","type":"user","content":[{"functionResponse":{"id":"x","name":"t","response":{}}}]});
        assert_eq!(record(&v).len(), 1);
    }

    #[test]
    fn a_set_checkpoint_is_the_whole_history() {
        let v = json!({"$set":{"messages":[{"id":"a","type":"user","content":"hi"},{"id":"b","type":"gemini","content":"Done."},{"id":"c","type":"info","content":"x"}]}});
        let msgs = record(&v);
        assert_eq!(msgs.iter().map(|m| m.role).collect::<Vec<_>>(), vec![WireRole::User, WireRole::Assistant]);
    }
}
