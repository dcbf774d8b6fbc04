//! Qwen Code: `~/.qwen/projects/<cwd, each non-alphanumeric as ->/chats/<sessionId>.jsonl`
//! (under `$QWEN_RUNTIME_DIR` when set).
//!
//! A Gemini CLI fork, with a session format of its own (checked against
//! 0.24.4): one record per line, `{uuid, parentUuid, sessionId, timestamp,
//! type, subtype?, cwd, version, message?, toolCallResult?, systemPayload?,
//! model?}`, chained by `parentUuid` as Claude Code's are. On resume the CLI
//! walks the chain back from the last record and rebuilds the history from it
//! (`SessionApiHistoryAccumulator`):
//!
//! - every `user`, `assistant` and `tool_result` record is one Gemini `Content`,
//!   its `message` (`{role, parts}`); a `mid_turn_user_message` joins the user
//!   content before it, a `realtime_message` is not sent;
//! - a `system` / `chat_compression` record's `systemPayload.compressedHistory`
//!   replaces everything before it;
//! - other `system` records (`ui_telemetry`, `attribution_snapshot`, …) are not
//!   history. A failed request is recorded only as a `ui_telemetry` whose
//!   `uiEvent` is `qwen-code.api_error` (`error_message`, `status_code`).
//!
//! Media are Gemini `inlineData` parts, in a user's parts or in a
//! `functionResponse.parts` (what `read_file` returns: an image re-rendered as
//! an overview, a PDF as it is).

pub mod request;

use crate::json::Value;
use crate::model::{ErrorRecord, Origin, Role, Session};
use crate::request::{Dialect, ReadRange, Render, Sent, To};

use super::blocks::gemini_parts;
use super::{Adapter, Id, LineOut, RawEntry, Site, Unit, http_status};

/// Qwen Code: OpenAI-compatible Chat Completions (its default auth type).
///
/// A 400 to a request that carries media is sent once more with every image,
/// PDF, audio and video part as a text placeholder (`executeWithErrorHandling`,
/// "retrying once with media degraded to placeholders"); neither the refusal
/// nor the retry is recorded when the retry is answered.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour {
    default_provider: Some("openai"),
    pairing: super::Pairing::Chat,
    silent_media_retry: Some(
        "Qwen Code sends a request refused with a 400 once more with every image and document as a text placeholder, and records neither",
    ),
    drops_unpaired: true,
    ..super::Behaviour::agent("Qwen Code")
};

pub struct QwenCode;

/// The record types Qwen Code writes.
const TYPES: [&str; 4] = ["user", "assistant", "tool_result", "system"];

impl Adapter for QwenCode {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let t = v.get("type").as_str().unwrap_or("");
        if !TYPES.contains(&t) || !v.has("uuid") || !v.has("sessionId") {
            return 0;
        }
        // Gemini parts in the message, or a system payload: not Claude Code's `content`.
        if v.at(&["message", "parts"]).is_array() || v.has("systemPayload") || t == "tool_result" { 10 } else { 0 }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let Some(uuid) = Id::of_value(v.get("uuid")) else {
            out.unit = Unit::Hidden;
            return;
        };
        let t = v.get("type").as_str().unwrap_or("");
        let subtype = v.get("subtype").as_str();
        let compaction = t == "system"
            && subtype == Some("chat_compression")
            && v.at(&["systemPayload", "compressedHistory"]).is_array();
        out.unit = Unit::Node {
            id: uuid,
            parent: Id::of_value(v.get("parentUuid")),
            sidechain: false,
            group: None,
            keep_from: compaction.then_some(uuid),
        };
        if matches!(t, "user" | "assistant" | "tool_result") {
            out.at = v.get("timestamp").to_text();
        }
        if compaction {
            for (i, c) in v.at(&["systemPayload", "compressedHistory"]).items().iter().enumerate() {
                let role = if c.get("role").as_str() == Some("model") { Role::Assistant } else { Role::User };
                content(c, role, None, &format!("/systemPayload/compressedHistory/{i}"), out);
            }
            return;
        }
        match t {
            "user" if subtype != Some("realtime_message") => {
                content(v.get("message"), Role::User, None, "/message", out);
            }
            "tool_result" => content(v.get("message"), Role::Tool, None, "/message", out),
            "assistant" => content(v.get("message"), Role::Assistant, v.get("model").to_text(), "/message", out),
            "system" if subtype == Some("ui_telemetry") => {
                let ev = v.at(&["systemPayload", "uiEvent"]);
                // Each request's model: what a compacted path, whose records name none, goes on with.
                if matches!(ev.get("event.name").as_str(), Some("qwen-code.api_response" | "qwen-code.api_error")) {
                    out.context_model = ev.get("model").to_text();
                }
                if ev.get("event.name").as_str() == Some("qwen-code.api_error") {
                    let mut entry = RawEntry::new(Role::System);
                    entry.model = ev.get("model").to_text();
                    let text = ev.get("error_message").as_str().unwrap_or("").to_string();
                    entry.error =
                        Some(ErrorRecord { text, status: ev.get("status_code").as_f64().and_then(http_status) });
                    out.entry(entry);
                }
            }
            _ => {}
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::OpenaiChat
    }

    fn not_in_session(&self, _: &Session, _: Dialect) -> &'static [&'static str] {
        request::NOT_IN_SESSION
    }

    /// Qwen Code's converter shapes its request itself: a tool's media in a
    /// user message after the tool messages, orphaned calls left out, an
    /// image's fate decided by the model's modalities.
    fn request<'a>(&self, to: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(Box::new(Sent(request::Converter::new(to.model))))
    }
}

/// One Gemini `Content` (`{role, parts}`) as an entry: its calls, results and media.
fn content<'a>(c: &'a Value<'a>, role: Role, model: Option<String>, at: &str, out: &mut LineOut<'a>) {
    let parts = c.get("parts");
    let mut entry = RawEntry::new(role);
    // An assistant record is written once its reply is complete.
    entry.accepted = role == Role::Assistant;
    entry.model = model;
    entry.empty = parts.items().is_empty();
    let e = out.entry(entry);
    let origin = match role {
        Role::Assistant => Origin::Assistant,
        Role::Tool => Origin::ToolResult,
        _ => Origin::User,
    };
    gemini_parts(parts, &Site::new(e, origin), &format!("{at}/parts"), out);
}
