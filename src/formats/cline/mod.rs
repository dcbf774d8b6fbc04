//! Cline and its forks (Roo Code, Kilo Code): `tasks/<id>/api_conversation_history.json`.
//!
//! One JSON document: an array of Anthropic `MessageParam`s, the history Cline
//! re-sends, with Cline's own additions: `modelInfo {modelId, providerId, mode}`
//! and `metrics` on assistant messages, `ts`, `call_id` on blocks, and its
//! wrappers in the text (`<task>`, `<environment_details>`, `[tool for 'x']
//! Result:`). Images are base64 `image` blocks in user content, as tool
//! results or attached by the user. The task folder's `task_metadata.json`
//! (`model_usage`) and `ui_messages.json` (`modelInfo`) name the model where
//! the messages do not (the reader looks there); a failed request is recorded
//! only in `ui_messages.json` (`reader::sidecar` reads it).
//!
//! Cline CLI 3 (`cline` on npm, built on `@cline/core`) keeps a task as
//! `<data>/sessions/<id>/<id>.messages.json` (`<data>` is `~/.cline/data`, or
//! `--data-dir`) beside its manifest `<id>.json`: one document
//! `{version, sessionId, origin, messages, system_prompt}` whose messages are
//! Anthropic-like with Cline's own blocks. Images are
//! `{"type":"image","data":…,"mediaType":…}` (no `source`); a tool result's
//! `content` is the tool's raw output, any JSON (`read_files` answers
//! `[{query, result: [text, image…], success}]`), and Cline sends every image
//! it finds in it, at any depth. A failed request is recorded as a
//! display-only assistant message (`id: "error_…"`, `metadata.displayOnly`)
//! holding the provider's error text; Cline never sends those back.

pub mod request;

use crate::json::Value;
use crate::model::{Cut, ErrorRecord, Origin, ReasoningKind, Role, Session};
use crate::request::{AGENT_ADDS, Canon, Dialect, ReadRange, Render, Sent, To, read};

use super::blocks::anthropic_content;
use super::{Adapter, LineOut, RawCall, RawEntry, RawPayload, Site};

/// Cline: Anthropic's message shape; it keeps tool results as text and pairs them itself.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour {
    default_provider: Some("anthropic"),
    pairing: super::Pairing::Anthropic,
    orphaned_call_answer: Some(request::INTERRUPTED),
    ..super::Behaviour::agent("Cline")
};

pub struct Cline;

/// Text only Cline puts in a user message.
const WRAPPERS: &[&str] = &["<environment_details>", "<task>", "<feedback>", "] Result:", "<user_message>"];

/// A bare message: a role and content, none of a request body's or another agent's keys.
fn is_message(v: &Value<'_>) -> bool {
    matches!(v.get("role").as_str(), Some("user" | "assistant"))
        && (v.get("content").is_array() || v.get("content").as_str().is_some())
        && !["model", "messages", "type", "parts", "info"].iter().any(|k| v.has(k))
}

/// Cline CLI 3's task document: `sessionId` and `origin` beside `messages`.
fn is_sdk_document(v: &Value<'_>) -> bool {
    v.get("messages").is_array() && v.get("sessionId").as_str().is_some() && v.get("origin").is_object()
}

/// A display-only message: Cline shows it, never sends it (its failure records).
fn display_only(m: &Value<'_>) -> bool {
    m.at(&["metadata", "displayOnly"]).as_bool() == Some(true)
}

/// The messages of a Cline CLI 3 task document that are entries, in order:
/// all but the display-only ones that record no failure.
fn entry_messages<'v, 'a>(v: &'v Value<'a>) -> impl Iterator<Item = (usize, &'v Value<'a>)> {
    v.get("messages")
        .items()
        .iter()
        .enumerate()
        .filter(|(_, m)| !display_only(m) || m.at(&["metadata", "displayRole"]).as_str() == Some("error"))
}

/// Reads a Cline CLI 3 task document: one entry per message ([`entry_messages`]).
fn read_sdk<'a>(v: &'a Value<'a>, out: &mut LineOut<'a>) {
    for (i, m) in entry_messages(v) {
        let at = format!("/messages/{i}");
        if display_only(m) {
            // The failure record: the provider's error, as Cline showed it.
            let text = m.get("content").items().iter().filter_map(|b| b.get("text").as_str()).collect::<Vec<_>>();
            let mut e = RawEntry::new(Role::System);
            e.error = Some(ErrorRecord { text: text.join("\n"), status: None });
            e.model = m.at(&["modelInfo", "id"]).to_text();
            out.entry(e);
            continue;
        }
        let assistant = m.get("role").as_str() == Some("assistant");
        let mut entry = RawEntry::new(if assistant { Role::Assistant } else { Role::User });
        if assistant {
            entry.model = m.at(&["modelInfo", "id"]).to_text();
            entry.provider =
                m.at(&["modelInfo", "provider"]).as_str().and_then(|p| provider(p, entry.model.as_deref()));
            entry.accepted = true;
        }
        let e = out.entry(entry);
        let origin = if assistant { Origin::Assistant } else { Origin::User };
        sdk_content(m.get("content"), &Site::new(e, origin), &format!("{at}/content"), out);
    }
}

/// Cline CLI 3 content blocks.
fn sdk_content<'a>(content: &'a Value<'a>, site: &Site, base: &str, out: &mut LineOut<'a>) {
    for (j, b) in content.items().iter().enumerate() {
        let at = format!("{base}/{j}");
        match b.get("type").as_str().unwrap_or("") {
            "image" => sdk_image(b, site, &at, out),
            "tool_use" => {
                if let Some(id) = b.get("id").to_text() {
                    let input = b.get("input");
                    let path = super::path_argument(input)
                        .or_else(|| input.get("files").items().first().and_then(|f| f.get("path").to_text()));
                    out.calls.push(RawCall { entry: site.entry, call_id: id, name: b.get("name").to_text(), path });
                }
            }
            "tool_result" => {
                let call = b.get("tool_use_id").to_text();
                out.result(site.entry, call.clone());
                let mut inner = Site::tool_result(site.entry, call);
                inner.tool = b.get("name").to_text();
                images_in(b.get("content"), &inner, &format!("{at}/content"), out);
            }
            "thinking" if b.has("signature") => out.reasoning(ReasoningKind::AnthropicSignature, None, &at),
            "redacted_thinking" => out.reasoning(ReasoningKind::AnthropicRedacted, None, &at),
            _ => {}
        }
    }
}

const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_ENCODED: usize = 5_242_880;
const MAX_DECODED: usize = 6_291_456;

/// The media type and base64 Cline CLI 3 sends for an image block's
/// `mediaType` and `data` (a data URL's type must agree with the block's);
/// `None` for an image it replaces by its placeholder itself (not PNG, JPEG,
/// GIF or WebP, not base64, over 5 MiB of base64 or 6 MiB of bytes): those
/// never reach the provider.
pub fn sendable<'d>(mime: &str, data: &'d str) -> Option<(String, &'d str)> {
    let mime = mime.to_ascii_lowercase();
    let (mime, data) = match data.strip_prefix("data:") {
        Some(rest) => {
            let (head, body) = rest.split_once(',')?;
            let declared = head.strip_suffix(";base64")?.to_ascii_lowercase();
            (declared == mime).then_some((declared, body))?
        }
        None => (mime, data),
    };
    if !IMAGE_TYPES.contains(&mime.as_str()) || data.is_empty() || data.len() > MAX_ENCODED {
        return None;
    }
    (base64_len(data)? <= MAX_DECODED).then_some((mime, data))
}

/// The decoded length of standard base64 text, `None` if it is not base64.
fn base64_len(s: &str) -> Option<usize> {
    let body = s.trim_end_matches('=');
    let pad = s.len() - body.len();
    if pad > 2 || !body.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/') || body.len() % 4 == 1 {
        return None;
    }
    Some(body.len() * 3 / 4)
}

/// An image block Cline sends, if it carries its bytes (one it replaces by its
/// placeholder itself is not in the request).
fn sdk_image<'a>(b: &'a Value<'a>, site: &Site, at: &str, out: &mut LineOut<'a>) {
    let sent = b.get("data").as_str().is_some_and(|d| sendable(b.get("mediaType").as_str().unwrap_or(""), d).is_some());
    if let Some(data) = b.get("data").as_cow().filter(|_| sent) {
        out.media.push(site.media(RawPayload::Base64(data), b.get("mediaType").as_str(), at.to_string()));
    }
}

/// A key as a JSON pointer segment (RFC 6901 escapes).
fn segment(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

/// Every image in a tool's raw output, at any depth, as Cline finds them to send.
fn images_in<'a>(v: &'a Value<'a>, site: &Site, at: &str, out: &mut LineOut<'a>) {
    match v {
        Value::Array(items) => {
            for (k, x) in items.iter().enumerate() {
                images_in(x, site, &format!("{at}/{k}"), out);
            }
        }
        Value::Object(_) if v.get("type").as_str() == Some("image") && v.get("data").as_str().is_some() => {
            let mut site = site.clone();
            site.name = None;
            sdk_image(v, &site, at, out);
        }
        Value::Object(m) => {
            for (k, x) in m {
                images_in(x, site, &format!("{at}/{}", segment(k)), out);
            }
        }
        _ => {}
    }
}

impl Adapter for Cline {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        if is_sdk_document(v) {
            // Beats a logged Anthropic request, which also has `messages`.
            return 16;
        }
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
        if is_sdk_document(v) {
            read_sdk(v, out);
            return;
        }
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
        entry.empty = super::claude_code::empty(v.get("content"));
        let e = out.entry(entry);
        let origin = if assistant { Origin::Assistant } else { Origin::User };
        anthropic_content(v.get("content"), &Site::new(e, origin), "/content", out);
    }

    /// The IDE extension speaks Anthropic's API; Cline CLI 3 each provider's
    /// own (Chat Completions to an OpenAI-compatible one).
    fn dialect(&self, session: &Session, provider: &str) -> Dialect {
        if !request::is_task_document(&session.file) {
            return Dialect::Anthropic;
        }
        match crate::request::of_provider(provider) {
            Dialect::OpenaiResponses => Dialect::OpenaiChat,
            d => d,
        }
    }

    fn not_in_session(&self, session: &Session, dialect: Dialect) -> &'static [&'static str] {
        match dialect {
            Dialect::OpenaiChat if request::is_task_document(&session.file) => request::NOT_IN_SESSION,
            _ => AGENT_ADDS,
        }
    }

    /// A Cline CLI 3 task's entries are its messages, but display-only ones that record no failure.
    fn entry_messages<'v, 'a>(&self, doc: &'v Value<'a>) -> Vec<&'v Value<'a>> {
        if !is_sdk_document(doc) {
            return Vec::new();
        }
        entry_messages(doc).map(|(_, m)| m).collect()
    }

    fn request<'a>(&self, to: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(match to.dialect {
            Dialect::OpenaiChat if request::is_task_document(&to.session.file) => {
                Box::new(Sent(request::ClineRequest::default()))
            }
            _ => {
                let canon = Canon::new(|v, _| read::anthropic_msg(v).into_iter().collect());
                match to.session.cut {
                    Some(cut) => Box::new(canon.on_document(Box::new(move |doc| cut.apply(doc)))),
                    None => Box::new(canon),
                }
            }
        })
    }
}

/// The messages of an IDE task's history that Cline no longer sends: once a
/// task nears the context window, its `ContextManager` keeps the first
/// user-assistant pair and leaves out the messages from index 2 through the
/// end of `conversationHistoryDeletedRange` (kept on the task's `HistoryItem`,
/// `<globalStorage>/state/taskHistory.json`), while the file keeps them all
/// (`getAndAlterTruncatedMessages`, Cline `9ee618111d58`; Cline 4's migration
/// of such a task, `applyLegacyDeletedRange`, does the same). The range's
/// start is always 2 as Cline writes it, and Cline reads only its end.
impl Cut {
    /// The cut a `conversationHistoryDeletedRange` makes in a history of `len`
    /// messages: `None` when it makes none, as Cline 4 decides, so a range
    /// Cline could not have written for this history (an end that is not a
    /// whole number, below 2, or at or past the last message) leaves the
    /// history whole. (The classic extension would, on such an end, duplicate
    /// a message or keep only the first pair; Cline itself writes none.)
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "len, a message count, is exact in f64; end is whole and in 2..len - 1"
    )]
    pub fn of(range: &serde_json::Value, len: usize) -> Option<Cut> {
        let end = range.as_array()?.get(1)?.as_f64()?;
        let whole = end.fract() == 0.0 && end >= 2.0 && end < len as f64 - 1.0;
        whole.then_some(Cut { end: end as usize })
    }

    /// The messages Cline sends, out of the (parsed) history `doc`: the cut
    /// messages gone, and the first after them without its tool results but,
    /// ahead of its other blocks, Cline's answer to each call of the first
    /// reply, whose results the cut took (`ensureToolResultsFollowToolUse`).
    pub fn apply(self, doc: &mut serde_json::Value) {
        use serde_json::Value as J;
        let Some(messages) = doc.as_array_mut().filter(|m| m.len() > self.end + 1) else { return };
        messages.drain(2..=self.end);
        let kind = |b: &J| b.get("type").and_then(J::as_str).map(str::to_string);
        let calls: Vec<J> = (messages[1].get("content").and_then(J::as_array).into_iter().flatten())
            .filter(|b| kind(b).as_deref() == Some("tool_use"))
            .filter_map(|b| b.get("id").cloned())
            .collect();
        let first = &mut messages[2];
        if first.get("role").and_then(J::as_str) != Some("user") {
            return;
        }
        let rest: Vec<J> = match first.get_mut("content").map(J::take) {
            Some(J::Array(blocks)) => {
                blocks.into_iter().filter(|b| kind(b).as_deref() != Some("tool_result")).collect()
            }
            // Cline makes any other content an empty list before it answers.
            _ if !calls.is_empty() => Vec::new(),
            other => return first["content"] = other.unwrap_or(J::Null),
        };
        let answers = calls.into_iter().map(
            |id| serde_json::json!({"type": "tool_result", "tool_use_id": id, "content": request::IDE_INTERRUPTED}),
        );
        first["content"] = J::Array(answers.chain(rest).collect());
    }
}

/// Whether the block at `pointer` (`/content/<j>/…`) of `message`, the first
/// after a [`Cut`], is one Cline drops there: a `tool_result` of a user message.
pub fn orphaned_block(message: &Value<'_>, pointer: &str) -> bool {
    let j = pointer.strip_prefix("/content/").and_then(|p| p.split('/').next()).and_then(|j| j.parse().ok());
    message.get("role").as_str() == Some("user")
        && j.and_then(|j: usize| {
            message.get("content").items().get(j).map(|b| b.get("type").as_str() == Some("tool_result"))
        })
        .unwrap_or(false)
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
