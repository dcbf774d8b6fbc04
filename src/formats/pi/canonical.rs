//! pi's entries as canonical messages: the request in a dialect its own
//! renderer ([`super::request`]) does not write (Gemini, Chat Completions).

use serde_json::{Value, json};

use crate::request::canon::{Msg, Part, WireRole};
use crate::request::read::{args, items, s};

/// The messages one entry stands for.
pub fn messages(v: &Value) -> Vec<Msg> {
    let m = match v.get("type").and_then(Value::as_str) {
        Some("message") => v.get("message"),
        // Entries without ids (pi's first layout) are the message themselves.
        None if v.get("role").is_some() => Some(v),
        // The agent harness's kept messages, materialized into its compaction.
        Some("compaction") => {
            return items(v.get("retainedTail"))
                .iter()
                .flat_map(|m| messages(&json!({"type":"message","message":m})))
                .collect();
        }
        _ => None,
    };
    let Some(m) = m else { return Vec::new() };
    let content = m.get("content").unwrap_or(&Value::Null);
    let parts = |c: &Value| -> Vec<Part> {
        if let Some(t) = c.as_str() {
            return vec![Part::Text(t.to_string())];
        }
        items(Some(c))
            .iter()
            .filter_map(|b| match b.get("type")?.as_str()? {
                "text" => Some(Part::Text(s(b, "text")?)),
                "image" => Some(Part::Media { mime: s(b, "mimeType"), data: s(b, "data"), url: None, name: None }),
                "toolCall" => Some(Part::Call { id: s(b, "id")?, name: s(b, "name")?, args: args(b.get("arguments")) }),
                "thinking" => thinking(b),
                _ => None,
            })
            .collect()
    };
    match m.get("role").and_then(Value::as_str) {
        Some("user") => vec![Msg::new(WireRole::User, parts(content))],
        Some("assistant") => {
            let stop = m.get("stopReason").and_then(Value::as_str).unwrap_or("");
            if stop == "error" || stop == "aborted" {
                return Vec::new();
            }
            vec![Msg::new(WireRole::Assistant, parts(content))]
        }
        Some("toolResult") => {
            let Some(id) = s(m, "toolCallId") else { return Vec::new() };
            let error = m.get("isError").and_then(Value::as_bool).unwrap_or(false);
            vec![Msg::new(
                WireRole::User,
                vec![Part::Result { id, name: s(m, "toolName"), parts: parts(content), error, extra: None }],
            )]
        }
        Some("bashExecution" | "custom" | "hookMessage") => {
            let t = s(m, "output").or_else(|| content.as_str().map(str::to_string)).unwrap_or_default();
            vec![Msg::new(WireRole::User, vec![Part::Text(t)])]
        }
        _ => Vec::new(),
    }
}

/// pi keeps Anthropic signatures as they are and OpenAI reasoning as the
/// whole item serialized into `thinkingSignature`.
fn thinking(b: &Value) -> Option<Part> {
    let sig = s(b, "thinkingSignature")?;
    if let Ok(item) = serde_json::from_str::<Value>(&sig)
        && item.get("type").and_then(Value::as_str) == Some("reasoning")
    {
        return Some(Part::Reasoning { family: "openai", raw: item });
    }
    let raw = if b.get("redacted").and_then(Value::as_bool) == Some(true) {
        json!({"type":"redacted_thinking","data":sig})
    } else {
        json!({"type":"thinking","thinking":s(b, "thinking").unwrap_or_default(),"signature":sig})
    };
    Some(Part::Reasoning { family: "anthropic", raw })
}
