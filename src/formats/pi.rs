//! pi coding agent (session v3): `~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl`.
//!
//! A tree of entries linked by `id`/`parentId`; the context is the path from the
//! last entry to the root. `compaction` entries replace the path before
//! `firstKeptEntryId`. Failed requests are assistant messages with
//! `stopReason:"error"` and `errorMessage`.

use crate::json::Value;
use crate::model::{ErrorRecord, Origin, ReasoningKind, Role};

use super::{Adapter, Id, LineOut, RawCall, RawEntry, RawPayload, Site, Unit, path_argument, ptr};

pub struct Pi;

impl Adapter for Pi {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        match v.get("type").as_str() {
            Some("session") if v.has("version") && v.has("id") => 10,
            Some("message") if v.has("parentId") && v.at(&["message", "role"]).as_str().is_some() => 3,
            Some("model_change" | "thinking_level_change" | "compaction" | "branch_summary") if v.has("parentId") => 3,
            _ => 0,
        }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let Some(id) = Id::of_value(v.get("id")).filter(|_| v.get("type").as_str() != Some("session")) else {
            out.unit = Unit::Hidden;
            return;
        };
        let mut keep_from = None;
        match v.get("type").as_str().unwrap_or("") {
            "message" => message(v.get("message"), out),
            "custom_message" => {
                let e = out.entry(RawEntry::new(Role::User));
                parts(v.get("content"), &Site::new(e, Origin::User), "/content", out);
            }
            "model_change" => {
                out.context_model = v.get("modelId").to_text();
                out.context_provider = v.get("provider").to_text();
            }
            "compaction" => keep_from = Id::of_value(v.get("firstKeptEntryId")),
            _ => {}
        }
        out.unit = Unit::Node { id, parent: Id::of_value(v.get("parentId")), sidechain: false, keep_from };
    }
}

fn message<'a>(m: &'a Value<'a>, out: &mut LineOut<'a>) {
    match m.get("role").as_str().unwrap_or("") {
        "user" => {
            let e = out.entry(RawEntry::new(Role::User));
            parts(m.get("content"), &Site::new(e, Origin::User), "/message/content", out);
        }
        "toolResult" => {
            let e = out.entry(RawEntry::new(Role::Tool));
            let mut site = Site::tool_result(e, m.get("toolCallId").to_text());
            site.tool = m.get("toolName").to_text();
            parts(m.get("content"), &site, "/message/content", out);
        }
        "assistant" => {
            let stop = m.get("stopReason").as_str().unwrap_or("");
            let mut e = RawEntry::new(Role::Assistant);
            e.model = m.get("model").to_text();
            e.provider = m.get("provider").to_text();
            e.accepted = matches!(stop, "stop" | "length" | "toolUse") && m.get("usage").is_object();
            if stop == "error" || stop == "aborted" {
                let text = m.get("errorMessage").to_text().unwrap_or_else(|| format!("request {stop}"));
                e.error = Some(ErrorRecord { text, status: None });
            }
            let e = out.entry(e);
            for (i, b) in m.get("content").items().iter().enumerate() {
                match b.get("type").as_str().unwrap_or("") {
                    "thinking" => thinking(b, out),
                    "toolCall" => {
                        if let Some(id) = b.get("id").to_text() {
                            out.calls.push(RawCall {
                                // OpenAI Responses ids are "<call_id>|<fc_id>".
                                call_id: id,
                                name: b.get("name").to_text(),
                                path: path_argument(b.get("arguments")),
                            });
                        }
                        if b.has("thoughtSignature") {
                            out.reasoning.push((ReasoningKind::GeminiSignature, None));
                        }
                    }
                    "image" => {
                        let site = Site::new(e, Origin::Assistant);
                        image(b, &site, &ptr("/message/content", i), out);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// pi keeps OpenAI reasoning as the whole item serialized into `thinkingSignature`.
fn thinking(b: &Value<'_>, out: &mut LineOut<'_>) {
    if b.get("redacted").as_bool() == Some(true) {
        out.reasoning.push((ReasoningKind::AnthropicRedacted, None));
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
        out.reasoning.push((kind, item.get("id").to_text()));
        return;
    }
    out.reasoning.push((ReasoningKind::AnthropicSignature, None));
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
