//! Claude Code: `~/.claude/projects/<cwd>/<session>.jsonl`.
//!
//! One record per line, chained by `uuid`/`parentUuid`; the history is the path
//! from the last line back to the root (rewinds leave dead branches behind).
//! One API response is split over several assistant lines sharing `message.id`.
//! Failed requests are synthetic assistant lines with `isApiErrorMessage`.
//! Tool media sits in `tool_result.content` and again in `toolUseResult`.
//!
//! Since 2.1.3xx the file also logs what each request sent: `api-request`
//! records chain `api-request-blob` messages by hash. They are never sent
//! again (a resume rebuilds the request from the history), so they are not
//! history; media in a blob is an agent-side copy of an attachment of the
//! history, which a rewrite must change too. `queue-operation`, `atis-latch`,
//! `last-prompt`, `api-request-shape`, `tools-used`, `cost-state` and `mode`
//! are bookkeeping without `uuid`: hidden.
//!
//! On Anthropic's own media wording the agent heals itself: an error line with
//! `apiError: "media_removed"` and `healsDistinctCarrier`, after which every
//! request carries [`MEDIA_REMOVED`] in place of the media of that kind in the
//! nearest earlier message carrying one.

pub mod request;
mod saved;
pub mod subagent;

use crate::json::Value;
use crate::model::{ErrorRecord, MediaKind, Origin, Role, Session};
use crate::request::{AGENT_ADDS, Dialect, ReadRange, Render, To};

use super::blocks::anthropic_content;
use super::{Adapter, Id, LineOut, RawEntry, RawPayload, Site, Unit};

/// Claude Code: Anthropic's API; it answers an interrupted call and heals refused media itself.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour {
    default_provider: Some("anthropic"),
    pairing: super::Pairing::Anthropic,
    answers_interrupted_calls: true,
    holds_synthetic_results: true,
    sends_results_as_recorded: true,
    interrupted_result: Some((TOOL_INTERRUPTED, true)),
    heal_placeholder: Some(MEDIA_REMOVED),
    ..super::Behaviour::agent("Claude Code")
};

pub struct ClaudeCode;

/// What Claude Code sends in place of a tool result's media it healed away.
pub const MEDIA_REMOVED: &str = "(media removed \u{2014} rejected by API)";

/// What Claude Code sends, on resume, as the result of a call its run left unanswered.
pub const TOOL_INTERRUPTED: &str = "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]";

const TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "attachment",
    "custom-title",
    "api-request",
    "api-request-blob",
    "api-request-shape",
    "last-prompt",
    "atis-latch",
    "tools-used",
    "cost-state",
    "mode",
];

impl Adapter for ClaudeCode {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        // Qwen Code's records share the ids, with Gemini parts and system payloads.
        if v.at(&["message", "parts"]).is_array() || v.has("systemPayload") {
            return 0;
        }
        let known = v.get("type").as_str().is_some_and(|t| TYPES.contains(&t));
        let ids: u32 =
            ["uuid", "parentUuid", "sessionId", "leafUuid", "messageId"].iter().map(|k| u32::from(v.has(k))).sum();
        if known && ids > 0 { 2 + ids } else { 0 }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        if v.get("type").as_str() == Some("api-request-blob") {
            return request_blob(v, out);
        }
        // Qwen Code's records (Gemini parts, system payloads) are no history of Claude Code's.
        let qwen = v.at(&["message", "parts"]).is_array() || v.has("systemPayload");
        let Some(uuid) = Id::of_value(v.get("uuid")).filter(|_| !qwen) else {
            out.unit = Unit::Hidden;
            return;
        };
        out.unit = Unit::Node {
            id: uuid,
            parent: Id::of_value(v.get("parentUuid")),
            sidechain: v.get("isSidechain").as_bool().unwrap_or(false),
            group: (v.get("type").as_str() == Some("assistant"))
                .then(|| Id::of_value(v.at(&["message", "id"])))
                .flatten(),
            keep_from: None,
        };
        let msg = v.get("message");
        out.at = v.get("timestamp").to_text();
        match v.get("type").as_str().unwrap_or("") {
            "user" => {
                let mut entry = RawEntry::new(Role::User);
                entry.blocks = blocks(msg.get("content"));
                entry.empty = empty(msg.get("content"));
                let e = out.entry(entry);
                anthropic_content(msg.get("content"), &Site::new(e, Origin::User), "/message/content", out);
                tool_use_result(v, e, out);
                saved::check(v, out);
            }
            "assistant" => {
                let model = msg.get("model").to_text();
                let synthetic = model.as_deref() == Some("<synthetic>");
                let mut entry = RawEntry::new(Role::Assistant);
                entry.accepted = !synthetic && msg.get("usage").is_object();
                entry.model = model.filter(|_| !synthetic);
                if v.get("isApiErrorMessage").as_bool() == Some(true) {
                    entry.accepted = false;
                    let status = v.get("apiErrorStatus").as_f64().and_then(super::http_status);
                    // The provider's own reply, where kept, before the agent's paraphrase of it.
                    entry.error = Some(match provider_reply(v.get("errorDetails")) {
                        Some((code, text)) => ErrorRecord { text, status: status.or(code) },
                        None => ErrorRecord {
                            text: content_text(msg.get("content")).unwrap_or_else(|| v.get("error").to_string()),
                            status,
                        },
                    });
                    entry.heals = heals(v);
                }
                entry.blocks = blocks(msg.get("content"));
                entry.empty = empty(msg.get("content"));
                let e = out.entry(entry);
                anthropic_content(msg.get("content"), &Site::new(e, Origin::Assistant), "/message/content", out);
            }
            // A slash command's output: a text block of a user message (request.rs).
            "system" if v.get("subtype").as_str() == Some("local_command") && v.get("content").as_str().is_some() => {
                let mut entry = RawEntry::new(Role::User);
                entry.blocks = 1;
                out.entry(entry);
            }
            "system" if is_error(v) => {
                let mut entry = RawEntry::new(Role::System);
                let text = v.get("content").as_str().map(str::to_string).unwrap_or_else(|| v.get("error").to_string());
                entry.error =
                    Some(ErrorRecord { text, status: v.get("apiErrorStatus").as_f64().and_then(super::http_status) });
                out.entry(entry);
            }
            _ => {}
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::Anthropic
    }

    fn not_in_session(&self, session: &Session, _: Dialect) -> &'static [&'static str] {
        if request::fork_of(std::path::Path::new(&session.file)) { request::FORK_ADDS } else { AGENT_ADDS }
    }

    /// Claude Code orders each turn itself: its attachments' text moves to the
    /// turn's start, as `role: "system"` messages or as user text by model.
    fn request<'a>(&self, to: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        if request::system_turns(to.model) {
            Ok(Box::new(request::Turn::new(to.dialect == Dialect::Anthropic)))
        } else {
            Ok(Box::new(request::Plain::new()))
        }
    }
}

/// How many content blocks a message sends: a string is one text block.
fn blocks(content: &Value<'_>) -> u32 {
    if content.as_str().is_some() { 1 } else { u32::try_from(content.items().len()).unwrap_or(u32::MAX) }
}

/// Content with nothing in it: an empty string or an empty list of blocks.
pub(super) fn empty(content: &Value<'_>) -> bool {
    content.as_str().is_some_and(|s| s.trim().is_empty()) || (content.is_array() && content.items().is_empty())
}

fn is_error(v: &Value<'_>) -> bool {
    v.get("level").as_str() == Some("error")
        && (v.has("error") || v.get("subtype").as_str().is_some_and(|s| s.contains("error")))
}

/// The text blocks of a message, joined.
fn content_text(content: &Value<'_>) -> Option<String> {
    if let Some(s) = content.as_str() {
        return Some(s.to_string());
    }
    let texts: Vec<&str> = content.items().iter().filter_map(|b| b.get("text").as_str()).collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// `toolUseResult` repeats the media of the line's tool result for the UI; it is
/// not sent, but a rewrite must change it too. Where the result itself holds
/// no media (a PDF read as a string result, as older versions wrote it), the
/// agent sends none: 2.1.332, resuming such a line, sends the string alone.
fn tool_use_result<'a>(v: &'a Value<'a>, entry: usize, out: &mut LineOut<'a>) {
    let r = v.get("toolUseResult");
    if r.is_null() || out.media.iter().all(|m| m.entry != entry) {
        return;
    }
    let call_id = v
        .at(&["message", "content"])
        .items()
        .iter()
        .find_map(|b| b.get("tool_use_id").to_text())
        .or_else(|| v.get("sourceToolUseID").to_text());
    let site = Site::tool_result(entry, call_id);
    let first = out.media.len();
    // A copy for the UI: whatever it holds is not a call or result the provider sees.
    let (calls, results) = (out.calls.len(), out.results.len());
    if r.is_array() {
        anthropic_content(r, &site, "/toolUseResult", out);
    } else if r.is_object() {
        anthropic_content(r.get("content"), &site, "/toolUseResult/content", out);
        let file = r.get("file");
        if let Some(data) = file.get("base64").as_cow() {
            let mime = file
                .get("type")
                .as_str()
                .filter(|t| t.contains('/'))
                .map(str::to_string)
                .or_else(|| (r.get("type").as_str() == Some("pdf")).then(|| "application/pdf".to_string()));
            let mut m = site.media(RawPayload::Base64(data), mime.as_deref(), "/toolUseResult/file/base64".into());
            m.name = file.get("filePath").to_text();
            out.media.push(m);
        }
    }
    for m in &mut out.media[first..] {
        m.mirror = true;
    }
    out.calls.truncate(calls);
    out.results.truncate(results);
}

/// `errorDetails` as Claude Code keeps it: the provider's reply, after its
/// HTTP status (`400 {"type":"error",…}`). `None` when it is not a reply.
fn provider_reply(details: &Value<'_>) -> Option<(Option<u16>, String)> {
    let d = details.as_str()?.trim();
    let (head, rest) = d.split_once(' ').unwrap_or(("", d));
    match head.parse::<u16>() {
        Ok(code) if (100..600).contains(&code) && !rest.trim().is_empty() => {
            Some((Some(code), rest.trim().to_string()))
        }
        _ if d.starts_with('{') => Some((None, d.to_string())),
        _ => None,
    }
}

/// The kind of media a `media_removed` line heals away, when the agent heals
/// a message other than the error line itself (`healsDistinctCarrier`).
fn heals(v: &Value<'_>) -> Option<MediaKind> {
    if v.get("apiError").as_str() != Some("media_removed") || v.get("healsDistinctCarrier").as_bool() != Some(true) {
        return None;
    }
    match v.at(&["apiErrorParams", "media"]).as_str()? {
        "image" => Some(MediaKind::Image),
        "document" | "pdf" => Some(MediaKind::Document),
        _ => None,
    }
}

/// An `api-request-blob`: one message as a request sent it. Not history; its
/// media are agent-side copies of attachments of the history (mirrors).
fn request_blob<'a>(v: &'a Value<'a>, out: &mut LineOut<'a>) {
    out.unit = Unit::Hidden;
    let content = v.at(&["message", "content"]);
    if !content.is_array() {
        return;
    }
    let origin =
        if v.at(&["message", "role"]).as_str() == Some("assistant") { Origin::Assistant } else { Origin::User };
    let (calls, results) = (out.calls.len(), out.results.len());
    anthropic_content(content, &Site::new(0, origin), "/message/content", out);
    for m in &mut out.media {
        m.mirror = true;
    }
    out.calls.truncate(calls);
    out.results.truncate(results);
}
