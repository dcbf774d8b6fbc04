//! Codex's own request, item by item: the Responses items of its rollout as
//! Codex 0.171.0 sends them back to the provider.
//!
//! Codex re-sends each `response_item` payload (and a compaction's
//! `replacement_history`) with its `id`, `status`, image `detail` and
//! `function_call.arguments` exactly as written, without the rollout-only
//! `internal_chat_message_metadata_passthrough`. Converting through the
//! canonical messages would drop those fields, so in its native dialect the
//! preview passes the items through, paired as Codex pairs them
//! ([`crate::formats::codex::pairs`]).

use serde_json::{Value, json};

use crate::formats::codex::pairs::{ABORTED, Pairs};
use crate::request::canon::{Msg, Part, WireRole};
use crate::request::read::{self, s};

/// What Codex sends that no rollout line holds: a preview names it instead of
/// leaving it silently out.
pub const NOT_IN_SESSION: &[&str] = &[
    "instructions: the leading developer message Codex builds for each request from its base instructions and the tools at hand",
    "tools: the tool list Codex sends with each request",
    "ids: the id Codex gives each \"aborted\" output it adds for a call left without one",
];
/// What a rollout whose history starts at a compaction without replacement
/// history leaves out besides [`NOT_IN_SESSION`].
pub const NOT_IN_SESSION_REBUILT: &[&str] = &[
    "instructions: the leading developer message Codex builds for each request from its base instructions and the tools at hand",
    "tools: the tool list Codex sends with each request",
    "ids: the id Codex gives each \"aborted\" output it adds for a call left without one",
    "rebuilt history: the initial context and the text of the user messages before a compaction without replacement history, which Codex puts ahead of its summary",
];

/// Rollout-only fields Codex does not send.
const NOT_SENT: &[&str] = &["internal_chat_message_metadata_passthrough"];

/// Item types Codex keeps in its rollout but never sends.
const NEVER_SENT: &[&str] = &["ghost_snapshot", "other"];

/// Codex's request, record by record: its rollout items as it sends them.
pub struct CodexRequest {
    pairs: Pairs,
}

impl CodexRequest {
    pub fn new(session: &crate::model::Session) -> CodexRequest {
        CodexRequest { pairs: Pairs::of(session) }
    }
}

impl crate::request::Sends for CodexRequest {
    fn record(&mut self, record: &Value) -> Vec<Value> {
        items(record, &self.pairs)
    }

    fn finish(&mut self) -> Vec<Value> {
        Vec::new()
    }
}

/// The items one rollout line puts into Codex's request.
pub fn items(v: &Value, pairs: &Pairs) -> Vec<Value> {
    let p = v.get("payload");
    let list: Vec<&Value> = match v.get("type").and_then(Value::as_str) {
        Some("response_item") => p.into_iter().collect(),
        Some("compacted") => match p.and_then(|p| p.get("replacement_history")).and_then(Value::as_array) {
            Some(items) => items.iter().collect(),
            // Older builds: the summary as the user message Codex makes of it.
            None => {
                let text = p.and_then(|p| p.get("message")).and_then(Value::as_str).filter(|t| !t.is_empty());
                let text = text.unwrap_or("(no summary available)");
                return vec![json!({"type":"message","role":"user","content":[{"type":"input_text","text":text}]})];
            }
        },
        Some(_) if p.is_some() => Vec::new(),
        // Rollouts before the `{timestamp, type, payload}` envelope: bare items.
        _ if v.get("record_type").is_none() && v.get("timestamp").is_none() => vec![v],
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for item in list {
        let ty = item.get("type").and_then(Value::as_str).unwrap_or("message");
        let call_id = item.get("call_id").and_then(Value::as_str);
        if ty.ends_with("_output") && call_id.is_some_and(|c| pairs.orphan(c)) {
            continue;
        }
        out.extend(sent(item));
        if let Some(c) = call_id.filter(|c| !ty.ends_with("_output") && pairs.unanswered(c)) {
            let kind = if ty == "custom_tool_call" { "custom_tool_call_output" } else { "function_call_output" };
            out.push(json!({"type": kind, "call_id": c, "output": ABORTED}));
        }
    }
    out
}

fn sent(item: &Value) -> Option<Value> {
    let ty = item.get("type").and_then(Value::as_str).unwrap_or("message");
    if NEVER_SENT.contains(&ty) || !item.is_object() {
        return None;
    }
    let mut item = item.clone();
    if let Some(o) = item.as_object_mut() {
        for k in NOT_SENT {
            o.remove(*k);
        }
    }
    Some(item)
}

/// The messages one rollout line stands for, in another dialect than Codex's own.
pub fn messages(v: &Value) -> Vec<Msg> {
    let p = v.get("payload");
    match v.get("type").and_then(Value::as_str) {
        Some("response_item") => p.and_then(read::responses_item).into_iter().collect(),
        Some("compacted") => {
            let p = p.unwrap_or(&Value::Null);
            let mut out: Vec<Msg> =
                read::items(p.get("replacement_history")).iter().filter_map(read::responses_item).collect();
            if out.is_empty()
                && let Some(m) = s(p, "message")
            {
                out.push(Msg::new(WireRole::User, vec![Part::Text(m)]));
            }
            out
        }
        Some(_) => Vec::new(),
        // Rollouts before the envelope: bare items.
        None => read::responses_item(v).into_iter().collect(),
    }
}
