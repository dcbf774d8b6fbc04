//! mux (coder/mux, now "xum"): `~/.mux/sessions/<workspace>/chat.jsonl`.
//!
//! One AI-SDK `UIMessage` per line: `{id, role, parts, metadata}`. Attachments
//! are `file` parts with data URLs; tool media sits in a tool part's
//! `output.value[]` as `{type:"media", data, mediaType}`. A failed stream is an
//! assistant message with `metadata.error` and no usage.

use crate::json::Value;
use crate::model::{ErrorRecord, Origin, Role, Session};
use crate::request::{Canon, Dialect, ReadRange, Render, To, canon, read};

use super::ai_sdk::{Replay, provider_reasoning, split_model};
use super::blocks::url_payload;
use super::{Adapter, LineOut, RawCall, RawEntry, RawPayload, Site, path_argument, ptr};

/// mux: any provider, through the AI SDK.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour::agent("mux");

pub struct Mux;

impl Adapter for Mux {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let shaped = v.has("id") && v.get("role").as_str().is_some() && v.get("parts").is_array();
        if !shaped {
            return 0;
        }
        if v.at(&["metadata", "historySequence"]).as_f64().is_some() || v.has("workspaceId") { 6 } else { 2 }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        if v.get("role").as_str().is_none() || !v.get("parts").is_array() {
            out.unit = super::Unit::Hidden;
            return;
        }
        let meta = v.get("metadata");
        out.at = meta.get("timestamp").to_text();
        // Where mux starts each request (`compactionBoundary.ts`): from its latest
        // compaction summary, the summary included; after a context reset, whose
        // own row is not sent.
        let kind = meta.get("contextBoundaryKind").as_str();
        if kind == Some("reset") {
            out.unit = super::Unit::Reset;
            return;
        }
        if kind == Some("compaction") || compaction_boundary(v) {
            out.unit = super::Unit::Reset;
        }
        let (role, origin) = match v.get("role").as_str().unwrap_or("") {
            "assistant" => (Role::Assistant, Origin::Assistant),
            "system" => (Role::System, Origin::User),
            _ => (Role::User, Origin::User),
        };
        let mut entry = RawEntry::new(role);
        if let Some(m) = meta.get("model").as_str() {
            let (provider, model) = split_model(m);
            entry.provider = provider;
            entry.model = Some(model);
        }
        let error = meta.get("error").to_text();
        entry.accepted = role == Role::Assistant
            && meta.get("usage").is_object()
            && error.is_none()
            && meta.get("partial").as_bool() != Some(true);
        if let Some(text) = error {
            let kind = meta.get("errorType").to_text().map(|t| format!(" [{t}]")).unwrap_or_default();
            entry.error = Some(ErrorRecord { text: format!("{text}{kind}"), status: None });
        }
        let e = out.entry(entry);
        for (i, p) in v.get("parts").items().iter().enumerate() {
            let at = ptr("/parts", i);
            let ty = p.get("type").as_str().unwrap_or("");
            if ty == "file" {
                if let Some(pl) = url_payload(p.get("url")) {
                    let mut m = Site::new(e, origin).media(pl, p.get("mediaType").as_str(), at);
                    m.name = p.get("filename").to_text();
                    out.media.push(m);
                }
            } else if ty == "reasoning" {
                let metas =
                    [(p.get("providerOptions"), "providerOptions"), (p.get("providerMetadata"), "providerMetadata")];
                provider_reasoning(&metas, &at, true, out);
            } else if let Some(id) = p.get("toolCallId").to_text() {
                let name = p.get("toolName").to_text().or_else(|| ty.strip_prefix("tool-").map(str::to_string));
                let path = path_argument(p.get("input"));
                out.calls.push(RawCall { entry: e, call_id: id.clone(), name: name.clone(), path: path.clone() });
                // AI SDK: the part is the call and, once it has output (or an error), its result.
                let state = p.get("state").as_str().unwrap_or("");
                if p.has("output") || p.has("errorText") || state.starts_with("output-") {
                    out.result(e, Some(id.clone()));
                }
                let mut site = Site::tool_result(e, Some(id));
                site.tool = name;
                site.name = path;
                tool_output(p.get("output"), &site, &ptr(&at, "output"), out);
            }
        }
    }

    fn dialect(&self, _: &Session, provider: &str) -> Dialect {
        crate::request::of_provider(provider)
    }

    /// mux leaves OpenAI's `store` unset unless its providers config sets it:
    /// the AI SDK's default, true, sends a reasoning item's id by reference.
    fn request<'a>(&self, to: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        let mut replay = Replay::new(to.dialect, true);
        Ok(Box::new(Canon::new(move |v, _| messages(v, &mut replay))))
    }
}

/// mux's durable compaction boundary: an assistant row marked
/// `compactionBoundary: true`, `compacted` set, and a positive whole
/// `compactionEpoch`; a malformed marker mux ignores, and so do we.
fn compaction_boundary(v: &Value<'_>) -> bool {
    let meta = v.get("metadata");
    let compacted = meta.get("compacted");
    let epoch = meta.get("compactionEpoch").as_f64();
    meta.get("compactionBoundary").as_bool() == Some(true)
        && v.get("role").as_str() == Some("assistant")
        && !compacted.is_null()
        && compacted.as_bool() != Some(false)
        && epoch.is_some_and(|e| e >= 1.0 && e.fract() == 0.0)
}

/// `{"type":"content","value":[{type:"media", data, mediaType, filename?}, …]}`.
fn tool_output<'a>(o: &'a Value<'a>, site: &Site, at: &str, out: &mut LineOut<'a>) {
    for (i, item) in o.get("value").items().iter().enumerate() {
        let at = ptr(&ptr(at, "value"), i);
        let mime = item.get("mediaType").as_str();
        let payload = match item.get("type").as_str().unwrap_or("") {
            "media" | "image-data" | "file-data" => item.get("data").as_cow().map(RawPayload::Base64),
            "image-url" | "file-url" => url_payload(item.get("url")),
            _ => None,
        };
        if let Some(pl) = payload {
            let mut m = site.media(pl, mime, at);
            if let Some(n) = item.get("filename").to_text() {
                m.name = Some(n);
            }
            out.media.push(m);
        }
    }
}

/// The messages one line stands for, as the AI SDK sends a `UIMessage`: an
/// assistant message's tool results go as the next message, its reasoning as
/// the provider's package replays it ([`Replay`]).
pub fn messages(v: &serde_json::Value, replay: &mut Replay) -> Vec<canon::Msg> {
    if v.pointer("/metadata/error").is_some() {
        return Vec::new();
    }
    let role = match v.get("role").and_then(serde_json::Value::as_str) {
        Some("assistant") => canon::WireRole::Assistant,
        Some("system") => canon::WireRole::System,
        _ => canon::WireRole::User,
    };
    let (mut said, mut results) = (Vec::new(), Vec::new());
    for p in read::items(v.get("parts")) {
        let ty = p.get("type").and_then(serde_json::Value::as_str).unwrap_or("");
        match ty {
            "text" => said.extend(read::s(p, "text").map(canon::Part::Text)),
            "reasoning" if role == canon::WireRole::Assistant => {
                let text = p.get("text").and_then(serde_json::Value::as_str).unwrap_or("");
                said.extend(replay.part(text, &replay_options(p)));
            }
            "file" => said.extend(read::s(p, "url").map(|u| {
                canon::Part::from_url(
                    &u,
                    p.get("mediaType").and_then(serde_json::Value::as_str),
                    read::s(p, "filename"),
                )
            })),
            _ if p.get("toolCallId").is_some() => {
                let name =
                    read::s(p, "toolName").or_else(|| ty.strip_prefix("tool-").map(str::to_string)).unwrap_or_default();
                let (c, r) = read::sdk_tool(p, p.get("input"), p.get("output"), name);
                said.extend(c);
                results.extend(r);
            }
            _ => {}
        }
    }
    read::split(role, said, results)
}

/// What mux hands the AI SDK of a reasoning part (`attachReasoningReplayMetadata`):
/// its `providerOptions` over the legacy top-level `signature` (Anthropic's),
/// provider by provider (an empty `providerOptions` object, too); with
/// neither, the part's own `providerMetadata`.
fn replay_options(p: &serde_json::Value) -> serde_json::Value {
    let legacy = p.get("signature").filter(|s| s.as_str().is_some_and(|s| !s.is_empty()));
    let options = p.get("providerOptions").and_then(serde_json::Value::as_object);
    if legacy.is_none() && options.is_none() {
        return p.get("providerMetadata").cloned().unwrap_or_default();
    }
    let mut merged = serde_json::Map::new();
    if let Some(sig) = legacy {
        merged.insert("anthropic".into(), serde_json::json!({ "signature": sig }));
    }
    // mergeReasoningProviderOptions takes these four from the part, and no other.
    let known = |(k, _): &(&String, &serde_json::Value)| ["anthropic", "google", "openai", "xai"].contains(&k.as_str());
    for (provider, o) in options.into_iter().flatten().filter(known) {
        match (merged.get_mut(provider).and_then(serde_json::Value::as_object_mut), o.as_object()) {
            (Some(had), Some(o)) => had.extend(o.clone()),
            _ => {
                merged.insert(provider.clone(), o.clone());
            }
        }
    }
    serde_json::Value::Object(merged)
}
