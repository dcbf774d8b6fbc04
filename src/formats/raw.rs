//! Logged provider bodies, one JSON body per line (or one document): requests,
//! responses and errors, told apart by their keys. Each request carries the
//! whole history, so the last request is what the provider saw.
//!
//! A line may also wrap its body as `{"request": …}`, `{"body": …}` or
//! `{"response": …}`, as logging proxies do.

use crate::json::Value;
use crate::model::{ErrorRecord, Origin, Role, Session};
use crate::request::{Canon, Dialect, ReadRange, Render, To, read};

use super::blocks::{anthropic_content, gemini_parts, openai_content, responses_item};
use super::{Adapter, LineOut, RawCall, RawEntry, Site, Unit, path_in_arguments, ptr};

/// A logged Chat Completions request.
pub const OPENAI_CHAT: super::Behaviour = super::Behaviour::logged("openai", super::Pairing::Chat);
/// A logged Responses request.
pub const OPENAI_RESPONSES: super::Behaviour = super::Behaviour::logged("openai", super::Pairing::Responses);
/// A logged Messages request.
pub const ANTHROPIC: super::Behaviour = super::Behaviour::logged("anthropic", super::Pairing::Anthropic);
/// A logged generateContent request.
pub const GEMINI: super::Behaviour = super::Behaviour::logged("gemini", super::Pairing::Gemini);

pub struct OpenaiChat;
pub struct OpenaiResponses;
pub struct Anthropic;
pub struct Gemini;

/// The body of a line and the pointer prefix to it.
fn body<'v, 'a>(v: &'v Value<'a>) -> (&'v Value<'a>, &'static str) {
    for (key, at) in [("request", "/request"), ("body", "/body"), ("response", "/response")] {
        if v.get(key).is_object() {
            return (v.get(key), at);
        }
    }
    (v, "")
}

/// An error body (`{"error": …}`, `{"type":"error"}`, a failed Responses event):
/// one system entry carrying the whole body as text for the classifier.
fn error_line(v: &Value<'_>, out: &mut LineOut<'_>) -> bool {
    let err = v.get("error");
    let failed = v.get("type").as_str().is_some_and(|t| t == "error" || t == "response.failed")
        || (!err.is_null() && !v.has("messages") && !v.has("input") && !v.has("contents"));
    if !failed {
        return false;
    }
    let mut e = RawEntry::new(Role::System);
    let status =
        err.get("code").as_f64().or_else(|| v.get("status").as_f64()).or_else(|| v.get("status_code").as_f64());
    e.error = Some(ErrorRecord { text: v.to_string(), status: status.and_then(super::http_status) });
    out.entry(e);
    true
}

fn response_entry(model: Option<String>, out: &mut LineOut<'_>) {
    let mut e = RawEntry::new(Role::Assistant);
    e.model = model;
    e.accepted = true;
    out.entry(e);
}

/// Top-level keys only a Chat Completions request carries.
const CHAT_KEYS: &[&str] = &[
    "max_completion_tokens",
    "response_format",
    "stream_options",
    "logprobs",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "n",
    "functions",
    "parallel_tool_calls",
    "logit_bias",
    "reasoning_effort",
];

/// Top-level keys only an Anthropic Messages request carries.
const ANTHROPIC_KEYS: &[&str] =
    &["system", "anthropic_version", "stop_sequences", "top_k", "thinking", "anthropic_beta"];

/// Chat and Anthropic requests share `messages`, `model`, `max_tokens`: score
/// what tells them apart — block types, dialect-only keys, and (weakest, since
/// gateways take any model in any dialect) the model's vendor.
fn request_score(b: &Value<'_>, dialect_blocks: bool, keys: &[&str], vendor: &str) -> u32 {
    let mut score = 1;
    if dialect_blocks {
        score += 3;
    }
    if keys.iter().any(|k| b.has(k)) {
        score += 2;
    }
    if b.get("model").as_str().and_then(crate::provider::for_model) == Some(vendor) {
        score += 1;
    }
    score
}

/// A content walker of one block dialect.
type Walk = for<'a> fn(&'a Value<'a>, &Site, &str, &mut LineOut<'a>);

/// A logged request: each of `list` (messages, contents) is one entry whose
/// `content` field is walked with `walk`.
fn request<'a>(b: &'a Value<'a>, (list, content): (&str, &str), base: &str, out: &mut LineOut<'a>, walk: Walk) {
    out.unit = Unit::Request;
    for (i, m) in b.get(list).items().iter().enumerate() {
        let (role, origin) = role_of(m.get("role").as_str());
        let mut entry = RawEntry::new(role);
        entry.accepted = role == Role::Assistant;
        // Anthropic messages need content (Gemini turns are not judged: parts may be thought-only).
        entry.empty = list == "messages" && super::claude_code::empty(m.get(content));
        let e = out.entry(entry);
        walk(m.get(content), &Site::new(e, origin), &ptr(&ptr(&ptr(base, list), i), content), out);
    }
}

fn role_of(r: Option<&str>) -> (Role, Origin) {
    match r {
        Some("assistant" | "model") => (Role::Assistant, Origin::Assistant),
        Some("system" | "developer") => (Role::System, Origin::User),
        Some("tool" | "function") => (Role::Tool, Origin::ToolResult),
        _ => (Role::User, Origin::User),
    }
}

impl Adapter for OpenaiChat {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let (b, _) = body(v);
        if b.has("choices") && b.get("object").as_str() != Some("response") {
            return 4;
        }
        if !b.get("messages").is_array() {
            return u32::from(b.get("error").has("param"));
        }
        let openai_msg = b.get("messages").items().iter().any(|m| {
            matches!(m.get("role").as_str(), Some("system" | "developer" | "tool" | "function"))
                || m.has("tool_calls")
                || m.get("content")
                    .items()
                    .iter()
                    .any(|p| matches!(p.get("type").as_str(), Some("image_url" | "input_audio" | "file" | "refusal")))
        });
        request_score(b, openai_msg, CHAT_KEYS, "openai")
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let (b, base) = body(v);
        if b.get("messages").is_array() {
            out.unit = Unit::Request;
            out.context_model = b.get("model").to_text();
            for (i, m) in b.get("messages").items().iter().enumerate() {
                let at = ptr(&ptr(base, "messages"), i);
                let (role, origin) = role_of(m.get("role").as_str());
                let mut entry = RawEntry::new(role);
                entry.accepted = role == Role::Assistant;
                let e = out.entry(entry);
                let site = if role == Role::Tool {
                    out.result(e, m.get("tool_call_id").to_text());
                    Site::tool_result(e, m.get("tool_call_id").to_text())
                } else {
                    Site::new(e, origin)
                };
                openai_content(m.get("content"), &site, &ptr(&at, "content"), out);
                // An assistant message needs content or tool calls; no message takes an empty list of parts.
                let content = m.get("content");
                let calls = m.get("tool_calls").items().iter().any(Value::is_object) || m.has("function_call");
                out.entries[e].empty = (content.is_array() && content.items().is_empty())
                    || (role == Role::Assistant && content.is_null() && !calls && !m.has("audio"));
                for c in m.get("tool_calls").items() {
                    if let Some(id) = c.get("id").to_text() {
                        let f = c.get("function");
                        out.calls.push(RawCall {
                            entry: e,
                            call_id: id,
                            name: f.get("name").to_text(),
                            path: path_in_arguments(f.get("arguments")),
                        });
                    }
                }
            }
        } else if !error_line(b, out) && b.has("choices") {
            response_entry(b.get("model").to_text(), out);
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::OpenaiChat
    }

    fn request<'a>(&self, _: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(Box::new(Canon::new(|v, _| read::chat_body(read::logged(v)))))
    }
}

impl Adapter for OpenaiResponses {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let (b, _) = body(v);
        let t = b.get("type").as_str().unwrap_or("");
        if (b.has("input") && (b.has("model") || b.get("input").is_array()))
            || b.get("object").as_str() == Some("response")
            || t.starts_with("response.")
        {
            4
        } else {
            u32::from(b.get("error").has("param"))
        }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let (b, base) = body(v);
        if b.has("input") {
            out.unit = Unit::Request;
            out.context_model = b.get("model").to_text();
            for (i, item) in b.get("input").items().iter().enumerate() {
                let ty = item.get("type").as_str().unwrap_or("message");
                let (mut role, _) = role_of(item.get("role").as_str());
                if ty.ends_with("_output") {
                    role = Role::Tool;
                } else if ty != "message" {
                    role = Role::Assistant;
                }
                let mut entry = RawEntry::new(role);
                entry.accepted = role == Role::Assistant;
                let e = out.entry(entry);
                responses_item(item, e, &ptr(&ptr(base, "input"), i), out);
            }
            return;
        }
        // A response object, or a stream event wrapping one (`response.completed`).
        let r = if b.get("response").is_object() { b.get("response") } else { b };
        let failed = r.get("status").as_str() == Some("failed") || r.get("error").is_object();
        if r.has("output") && !failed {
            response_entry(r.get("model").to_text(), out);
        } else if !error_line(b, out) {
            out.unit = Unit::Hidden; // another stream event
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::OpenaiResponses
    }

    fn request<'a>(&self, _: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(Box::new(Canon::new(|v, _| read::responses_body(read::logged(v)))))
    }
}

impl Adapter for Anthropic {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let (b, _) = body(v);
        if (b.get("type").as_str() == Some("message") && b.has("stop_reason"))
            || (b.get("type").as_str() == Some("error") && b.get("error").is_object())
        {
            return 4;
        }
        if !b.get("messages").is_array() {
            return 0;
        }
        let anthropic_block = b.get("messages").items().iter().any(|m| {
            m.get("content").items().iter().any(|p| {
                matches!(
                    p.get("type").as_str(),
                    Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "document" | "image")
                ) || p.get("source").is_object()
            })
        });
        request_score(b, anthropic_block, ANTHROPIC_KEYS, "anthropic")
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let (b, base) = body(v);
        if b.get("messages").is_array() {
            out.context_model = b.get("model").to_text();
            request(b, ("messages", "content"), base, out, anthropic_content);
        } else if !error_line(b, out) && b.get("type").as_str() == Some("message") {
            response_entry(b.get("model").to_text(), out);
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::Anthropic
    }

    fn request<'a>(&self, _: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(Box::new(Canon::new(|v, _| read::anthropic_body(read::logged(v)))))
    }
}

impl Adapter for Gemini {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let (b, _) = body(v);
        let status =
            b.at(&["error", "status"]).as_str().is_some_and(|s| s.bytes().all(|c| c.is_ascii_uppercase() || c == b'_'));
        let checkpoint = b.get("history").items().iter().any(|c| c.get("parts").is_array());
        if b.get("contents").is_array() || checkpoint || b.has("candidates") || b.has("usageMetadata") || status {
            4
        } else {
            0
        }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let (b, base) = body(v);
        if b.get("contents").is_array() {
            request(b, ("contents", "parts"), base, out, gemini_parts);
        } else if b.get("history").is_array() {
            // Gemini CLI's `/chat save` checkpoint: `{history: Content[], authType?}`.
            request(b, ("history", "parts"), base, out, gemini_parts);
        } else if !error_line(b, out) && b.has("candidates") {
            response_entry(b.get("modelVersion").to_text(), out);
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::Gemini
    }

    fn request<'a>(&self, _: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(Box::new(Canon::new(|v, _| read::gemini_body(read::logged(v)))))
    }
}
