//! Codex's own request, item by item: the Responses items of its rollout as
//! Codex 0.171.0 sends them back to the provider.
//!
//! Codex re-sends each `response_item` payload (and a compaction's
//! `replacement_history`) with its `id`, `status`, image `detail` and
//! `function_call.arguments` exactly as written, without the rollout-only
//! `internal_chat_message_metadata_passthrough`. Converting through the
//! canonical messages would drop those fields, so in its native dialect the
//! preview passes the items through.

use serde_json::Value;

/// What Codex sends that no rollout line holds: a preview names it instead of
/// leaving it silently out.
pub const NOT_IN_SESSION: &[&str] = &[
    "instructions: the leading developer message Codex builds for each request from its base instructions and the tools at hand",
    "tools: the tool list Codex sends with each request",
];

/// Rollout-only fields Codex does not send.
const NOT_SENT: &[&str] = &["internal_chat_message_metadata_passthrough"];

/// Item types Codex keeps in its rollout but never sends.
const NEVER_SENT: &[&str] = &["ghost_snapshot", "other"];

/// The items one rollout line puts into Codex's request.
pub fn items(v: &Value) -> Vec<Value> {
    let p = v.get("payload");
    let list: Vec<&Value> = match v.get("type").and_then(Value::as_str) {
        Some("response_item") => p.into_iter().collect(),
        Some("compacted") => {
            p.and_then(|p| p.get("replacement_history")).and_then(Value::as_array).into_iter().flatten().collect()
        }
        Some(_) if p.is_some() => Vec::new(),
        // Rollouts before the `{timestamp, type, payload}` envelope: bare items.
        _ if v.get("record_type").is_none() && v.get("timestamp").is_none() => vec![v],
        _ => Vec::new(),
    };
    list.into_iter().filter_map(sent).collect()
}

fn sent(item: &Value) -> Option<Value> {
    let ty = item.get("type").and_then(Value::as_str).unwrap_or("message");
    if NEVER_SENT.contains(&ty) || !item.is_object() {
        return None;
    }
    let mut item = item.clone();
    if let Some(o) = item.as_object_mut() {
        NOT_SENT.iter().for_each(|k| {
            o.remove(*k);
        });
    }
    Some(item)
}
