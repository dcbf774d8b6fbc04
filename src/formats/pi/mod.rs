//! pi coding agent: `~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl`.
//!
//! Every layout pi has written is read as pi reads it after its own migrations:
//! - v1 (to Dec 2025): a header `{type:"session", id, cwd, provider, modelId,
//!   thinkingLevel}` without `version`, then entries without `id`/`parentId`, in
//!   file order; a `compaction` keeps the entries from `firstKeptEntryIndex` (an
//!   index into the file's entries, the header being 0).
//! - v2: `version:2`, entries linked by `id`/`parentId`; `compaction.firstKeptEntryId`.
//! - v3: as v2, with custom messages' role `hookMessage` renamed `custom`.
//! - v3 as the agent harness of `@earendil-works/pi-agent-core` 0.81.0–0.83.x
//!   writes it (its `JsonlSessionStorage`; the `pi` CLI itself, through 1.6.0,
//!   never does): a `compaction` may carry `retainedTail`, the kept messages
//!   materialized into the entry. Then the context is the summary, those
//!   messages, and what follows: nothing before the compaction is sent, not
//!   even from `firstKeptEntryId` (an empty `retainedTail` keeps nothing).
//!
//! With ids the file is a tree and the context is the path from the last entry to
//! the root; `compaction` entries replace the path before `firstKeptEntryId`.
//! Failed requests are assistant messages with `stopReason:"error"` and `errorMessage`.

mod canonical;
pub mod request;

use crate::json::Value;
use crate::model::{ErrorRecord, Origin, ReasoningKind, Role, Session};
use crate::request::{AGENT_ADDS, Canon, Dialect, ReadRange, Render, Sent, To};

use super::{Adapter, Id, LineOut, RawCall, RawEntry, RawPayload, Site, Unit, path_argument, ptr};

/// pi: any provider; it answers an orphaned or interrupted call itself on every request.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour {
    orphaned_call_answer: Some(request::NO_RESULT),
    answers_interrupted_calls: true,
    results_are_records: true,
    stops_at_missing_parent: true,
    ..super::Behaviour::agent("pi")
};

pub struct Pi;

impl Adapter for Pi {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        match v.get("type").as_str() {
            // v2/v3 headers carry `version`; v1 headers `cwd` and the model.
            Some("session") if v.has("id") && (v.has("version") || v.has("cwd")) => 10,
            Some("message") if v.has("timestamp") && v.at(&["message", "role"]).as_str().is_some() => 3,
            Some("model_change" | "thinking_level_change" | "compaction" | "branch_summary")
                if v.has("parentId") || v.has("timestamp") =>
            {
                3
            }
            _ => 0,
        }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let ty = v.get("type").as_str().unwrap_or("");
        if ty == "session" {
            // v1 headers name the model the session started with.
            out.unit = Unit::Hidden;
            out.context_model = v.get("modelId").to_text();
            out.context_provider = v.get("provider").to_text();
            return;
        }
        let mut keep_from = None;
        out.at = v.get("timestamp").to_text();
        match ty {
            "message" => message(v.get("message"), "/message", out),
            "custom_message" => {
                let e = out.entry(RawEntry::new(Role::User));
                parts(v.get("content"), &Site::new(e, Origin::User), "/content", out);
            }
            // Sent as a user message holding the summary.
            "branch_summary" => {
                out.entry(RawEntry::new(Role::User));
            }
            "model_change" => {
                out.context_model = v.get("modelId").to_text();
                out.context_provider = v.get("provider").to_text();
            }
            "compaction" => {
                out.entry(RawEntry::new(Role::User));
                keep_from = Id::of_value(v.get("firstKeptEntryId"));
                if v.get("retainedTail").is_array() {
                    // Kept from itself: the path before the compaction is not sent.
                    keep_from = Id::of_value(v.get("id"));
                    for (i, m) in v.get("retainedTail").items().iter().enumerate() {
                        message(m, &ptr("/retainedTail", i), out);
                    }
                }
            }
            _ => {}
        }
        out.unit = match Id::of_value(v.get("id")) {
            Some(id) => {
                Unit::Node { id, parent: Id::of_value(v.get("parentId")), sidechain: false, group: None, keep_from }
            }
            // v1: no ids, the entries are the history in file order.
            None => match v.get("firstKeptEntryIndex").as_f64() {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "an index pi wrote: `as` drops a fraction and saturates, a negative or NaN is 0 (keep all)"
                )]
                Some(i) if ty == "compaction" => Unit::ResetKeeping(i as u64),
                _ if ty == "compaction" => Unit::Reset,
                _ if out.entries.is_empty() => Unit::Hidden,
                _ => Unit::Plain,
            },
        };
    }

    fn dialect(&self, _: &Session, provider: &str) -> Dialect {
        crate::request::of_provider(provider)
    }

    fn not_in_session(&self, _: &Session, dialect: Dialect) -> &'static [&'static str] {
        match dialect {
            Dialect::Anthropic => {
                &["system prompt", "tool list", "request options (max_tokens, thinking, cache_control)"]
            }
            Dialect::OpenaiResponses => {
                &["system prompt (pi's first input item)", "tool list", "request options (store, reasoning, include)"]
            }
            _ => AGENT_ADDS,
        }
    }

    /// pi's system prompt is the first message on Chat Completions and
    /// Responses, but for ChatGPT's Codex route, which takes it as `instructions`.
    fn leading_items(&self, session: &Session, dialect: Dialect) -> u64 {
        match dialect {
            Dialect::OpenaiResponses if session.provider.as_deref() == Some("openai-codex") => 0,
            Dialect::OpenaiChat | Dialect::OpenaiResponses => 1,
            Dialect::Anthropic | Dialect::Gemini => 0,
        }
    }

    fn request<'a>(&self, to: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(match to.dialect {
            Dialect::Anthropic | Dialect::OpenaiResponses | Dialect::OpenaiChat => {
                Box::new(Sent(request::PiRequest::new(to.dialect, to.provider, to.model)))
            }
            Dialect::Gemini => Box::new(Canon::new(|v, _| canonical::messages(v))),
        })
    }
}

/// One message; `base` is its JSON pointer in the line (`/message`, or one of a
/// compaction's `/retainedTail/<i>`).
fn message<'a>(m: &'a Value<'a>, base: &str, out: &mut LineOut<'a>) {
    let content = format!("{base}/content");
    let content = content.as_str();
    match m.get("role").as_str().unwrap_or("") {
        "user" => {
            let e = out.entry(RawEntry::new(Role::User));
            parts(m.get("content"), &Site::new(e, Origin::User), content, out);
        }
        // Extension messages (`hookMessage` before v3) and `!` commands go to the
        // provider as user messages.
        "custom" | "hookMessage" | "bashExecution" | "branchSummary" | "compactionSummary" => {
            let e = out.entry(RawEntry::new(Role::User));
            parts(m.get("content"), &Site::new(e, Origin::User), content, out);
        }
        "toolResult" => {
            let e = out.entry(RawEntry::new(Role::Tool));
            out.result(e, m.get("toolCallId").to_text());
            let mut site = Site::tool_result(e, m.get("toolCallId").to_text());
            site.tool = m.get("toolName").to_text();
            parts(m.get("content"), &site, content, out);
        }
        "assistant" => {
            let stop = m.get("stopReason").as_str().unwrap_or("");
            let mut e = RawEntry::new(Role::Assistant);
            e.model = m.get("model").to_text();
            e.provider = m.get("provider").to_text();
            // pi resumes on the model of the last `model_change` or assistant message
            // on the path, a failed one too (`buildSessionContext`): a `--provider`
            // switch writes no `model_change`, so the turns after this reply go to its model.
            if e.model.is_some() || e.provider.is_some() {
                out.context_model.clone_from(&e.model);
                out.context_provider.clone_from(&e.provider);
            }
            e.accepted = matches!(stop, "stop" | "length" | "toolUse") && m.get("usage").is_object();
            if matches!(stop, "error" | "aborted") {
                let text = m.get("errorMessage").to_text().unwrap_or_else(|| format!("request {stop}"));
                e.error = Some(ErrorRecord { text, status: None });
            }
            let e = out.entry(e);
            // pi leaves a failed or aborted reply out of every request, its calls,
            // thinking and media with it: a result for one of its calls answers nothing.
            let unsent = matches!(stop, "error" | "aborted");
            for (i, b) in m.get("content").items().iter().enumerate().filter(|_| !unsent) {
                match b.get("type").as_str().unwrap_or("") {
                    "thinking" => thinking(b, &ptr(content, i), out),
                    "toolCall" => {
                        if let Some(id) = b.get("id").to_text() {
                            out.calls.push(RawCall {
                                entry: e,
                                // OpenAI Responses ids are "<call_id>|<fc_id>".
                                call_id: id,
                                name: b.get("name").to_text(),
                                path: path_argument(b.get("arguments")),
                            });
                        }
                        if b.has("thoughtSignature") {
                            out.reasoning(ReasoningKind::GeminiSignature, None, &ptr(content, i));
                        }
                    }
                    "image" => {
                        let site = Site::new(e, Origin::Assistant);
                        image(b, &site, &ptr(content, i), out);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// pi keeps OpenAI reasoning as the whole item serialized into `thinkingSignature`.
fn thinking(b: &Value<'_>, at: &str, out: &mut LineOut<'_>) {
    if b.get("redacted").as_bool() == Some(true) {
        out.reasoning(ReasoningKind::AnthropicRedacted, None, at);
        return;
    }
    let Some(sig) = b.get("thinkingSignature").as_str() else {
        return;
    };
    if sig.starts_with('{')
        && let Ok(item) = Value::parse(sig.as_bytes())
        && item.get("type").as_str() == Some("reasoning")
    {
        let kind = if item.has("encrypted_content") { ReasoningKind::OpenaiEncrypted } else { ReasoningKind::OpenaiId };
        out.reasoning(kind, item.get("id").to_text(), at);
        return;
    }
    out.reasoning(ReasoningKind::AnthropicSignature, None, at);
}

fn parts<'a>(content: &'a Value<'a>, site: &Site, base: &str, out: &mut LineOut<'a>) {
    for (i, b) in content.items().iter().enumerate() {
        if b.get("type").as_str() == Some("image") {
            image(b, site, &ptr(base, i), out);
        }
    }
}

fn image<'a>(b: &'a Value<'a>, site: &Site, at: &str, out: &mut LineOut<'a>) {
    if let Some(data) = b.get("data").as_cow() {
        out.media.push(site.media(RawPayload::Base64(data), b.get("mimeType").as_str(), at.to_string()));
    }
}
