//! Cline and its forks (Roo Code, Kilo Code): `tasks/<id>/api_conversation_history.json`.
//!
//! One JSON document: an array of Anthropic `MessageParam`s, the history Cline
//! re-sends, with Cline's own additions: `modelInfo {modelId, providerId, mode}`
//! and `metrics` on assistant messages, `ts`, `call_id` on blocks, and its
//! wrappers in the text (`<task>`, `<environment_details>`, `[tool for 'x']
//! Result:`). Images are base64 `image` blocks in user content, as tool
//! results or attached by the user. The task folder's `task_metadata.json`
//! (`model_usage`) and `ui_messages.json` (`modelInfo`) name the model where
//! the messages do not (the reader looks there).

use crate::json::Value;
use crate::model::{Origin, Role};

use super::blocks::anthropic_content;
use super::{Adapter, LineOut, RawEntry, Site};

pub struct Cline;

/// Text only Cline puts in a user message.
const WRAPPERS: &[&str] = &["<environment_details>", "<task>", "<feedback>", "] Result:", "<user_message>"];

/// A bare message: a role and content, none of a request body's or another agent's keys.
fn is_message(v: &Value<'_>) -> bool {
    matches!(v.get("role").as_str(), Some("user" | "assistant"))
        && (v.get("content").is_array() || v.get("content").as_str().is_some())
        && !["model", "messages", "type", "parts", "info"].iter().any(|k| v.has(k))
}

impl Adapter for Cline {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        if !is_message(v) {
            return 0;
        }
        let wrapped = v.has("modelInfo")
            || v.has("metrics")
            || v.get("content").items().iter().any(|b| {
                b.get("text").as_str().is_some_and(|t| WRAPPERS.iter().any(|w| t.contains(w))) || b.has("call_id")
            });
        if wrapped { 4 } else { 1 }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        if !matches!(v.get("role").as_str(), Some("user" | "assistant")) {
            out.unit = super::Unit::Hidden;
            return;
        }
        let assistant = v.get("role").as_str() == Some("assistant");
        let mut entry = RawEntry::new(if assistant { Role::Assistant } else { Role::User });
        if assistant {
            let info = v.get("modelInfo");
            entry.model = info.get("modelId").to_text();
            entry.provider = info.get("providerId").as_str().and_then(|p| provider(p, entry.model.as_deref()));
            // Cline writes an assistant message once its stream completed.
            entry.accepted = true;
        }
        let e = out.entry(entry);
        let origin = if assistant { Origin::Assistant } else { Origin::User };
        anthropic_content(v.get("content"), &Site::new(e, origin), "/content", out);
    }
}

/// Cline's `providerId` (its API provider setting) as a provider of the shared
/// vocabulary; `None` for gateways whose route is not known (the model tells).
pub fn provider(id: &str, model: Option<&str>) -> Option<String> {
    let claude = model.is_some_and(|m| m.contains("claude"));
    let p = match id {
        "anthropic" | "claude-code" => "anthropic",
        "openai-native" | "openai" => "openai",
        "gemini" => "gemini",
        "bedrock" => "bedrock",
        "vertex" if claude => "vertex-anthropic",
        "vertex" => "vertex-gemini",
        "openrouter" => "openrouter",
        "mistral" => "mistral",
        "xai" => "xai",
        "groq" => "groq",
        _ => return None,
    };
    Some(p.to_string())
}
