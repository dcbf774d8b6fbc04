//! GitHub Copilot CLI's request, built from its events the way the CLI builds it
//! when it resumes (checked against 1.0.102's wire requests to Anthropic):
//!
//! - `user.message`: its `transformedContent` (the prompt with the CLI's
//!   `<current_datetime>` stamp), then per `file` attachment a text "Image file
//!   at path P" (`P` its path) and the bytes of the `session.binary_asset` its `assetId`
//!   names (the file at the path when there is no such event);
//! - `assistant.message`: its `content` (when not empty) and one call per
//!   `toolRequests` entry;
//! - `tool.execution_complete`: a result holding `result.content` (an error's
//!   `error.message` when it failed, not marked an error). The tool's images are not sent (custom
//!   provider mode sent none). On Chat Completions its `tool` message also carries
//!   `__copilotMessageSource: {"kind": "tool", "name", "summary"}`: the name and the
//!   `intentionSummary` of the `toolRequests` entry that made the call (a resumed
//!   request's, as 1.0.102 sends it; a summary it has none of is left out).
//!
//! Consecutive turns of one role merge; the writer does that.

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::Value;

use crate::model::Session;

use crate::request::canon::{Msg, Part, WireRole};

/// What every Copilot CLI request holds that its events do not.
pub const NOT_IN_SESSION: &[&str] =
    &["the system prompt (the CLI writes a `system.message` afresh on each start)", "the tool list"];

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string)
}

/// The base64 text of each attachment's asset, by its `assetId`, read from
/// where the reader found it (`read` reads a byte range of the session file).
pub fn assets(
    session: &Session,
    read: &mut dyn FnMut(u64, u64) -> anyhow::Result<Vec<u8>>,
) -> anyhow::Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    for a in &session.attachments {
        let (Some(sha), Some(span)) = (&a.sha256, a.span) else { continue };
        if span.line == 0 {
            continue;
        }
        let text = String::from_utf8_lossy(&read(span.offset, span.len)?).replace("\\/", "/");
        out.insert(format!("sha256:{sha}"), text);
    }
    Ok(out)
}

/// The request's turns, event by event: what a call's result is sent with
/// comes from the event that made the call.
pub struct Records {
    /// Each attachment's base64 by its `assetId`, as [`assets`] gives them.
    assets: HashMap<String, String>,
    /// `__copilotMessageSource` of each call's result, by call id.
    sources: HashMap<String, Value>,
}

impl Records {
    pub fn new(assets: HashMap<String, String>) -> Records {
        Records { assets, sources: HashMap::new() }
    }

    /// The turns one event stands for.
    pub fn record(&mut self, v: &Value) -> Vec<Msg> {
        let mut msgs = record(v, &self.assets);
        for m in &mut msgs {
            for p in &mut m.parts {
                match p {
                    Part::Call { id, name, .. } => {
                        let summary = call_request(v, id).and_then(|r| text(r, "intentionSummary"));
                        let mut source = serde_json::json!({"kind": "tool", "name": name});
                        if let Some(summary) = summary {
                            source["summary"] = Value::String(summary);
                        }
                        self.sources.insert(id.clone(), source);
                    }
                    Part::Result { id, extra, .. } => {
                        *extra = self.sources.get(id).map(|s| serde_json::json!({"__copilotMessageSource": s}));
                    }
                    _ => {}
                }
            }
        }
        msgs
    }
}

/// The `toolRequests` entry of an `assistant.message` that made call `id`.
fn call_request<'v>(v: &'v Value, id: &str) -> Option<&'v Value> {
    v.get("data")?
        .get("toolRequests")?
        .as_array()?
        .iter()
        .find(|r| r.get("toolCallId").and_then(Value::as_str) == Some(id))
}

/// The turns one event stands for; `assets` as [`assets`] gives them.
fn record(v: &Value, assets: &HashMap<String, String>) -> Vec<Msg> {
    let Some(d) = v.get("data") else { return Vec::new() };
    match v.get("type").and_then(Value::as_str) {
        Some("user.message") => {
            let mut parts: Vec<Part> =
                text(d, "transformedContent").or_else(|| text(d, "content")).map(Part::Text).into_iter().collect();
            for a in d.get("attachments").and_then(Value::as_array).into_iter().flatten() {
                let blob = match a.get("type").and_then(Value::as_str) {
                    Some("file") => false,
                    Some("blob") => true,
                    _ => continue,
                };
                if a.get("omittedReason").is_some() {
                    continue;
                }
                let path = a.get("path").and_then(Value::as_str);
                let shown = text(a, "displayName")
                    .or_else(|| path.map(|p| p.rsplit('/').next().unwrap_or(p).to_string()))
                    .unwrap_or_default();
                let mime = text(a, "mimeType");
                let asset = a.get("assetId").and_then(Value::as_str).and_then(|id| assets.get(id)).cloned();
                let data = asset.or_else(|| if blob { text(a, "data") } else { None }).or_else(|| {
                    path.filter(|_| !blob)
                        .and_then(|p| crate::media::refs::read_local(std::path::Path::new(p)).ok()?.ok())
                        .map(|b| base64::engine::general_purpose::STANDARD.encode(b))
                });
                // Neither an asset, nor a blob's data, nor a file that could be read
                // (a device, a folder, a path gone): no bytes, nothing to send.
                if data.is_none() {
                    continue;
                }
                // How the CLI introduces each (1.0.102's requests): a blob by its
                // name; a file by what it is and where.
                parts.push(Part::Text(match (blob, path) {
                    (true, _) | (false, None) => shown.clone(),
                    (false, Some(p)) if mime.as_deref() == Some("application/pdf") => {
                        format!("Document file \"{shown}\" at path \"{p}\"")
                    }
                    (false, Some(p)) => format!("Image file at path {p}"),
                }));
                // The CLI sends a document without a title.
                let name = (mime.as_deref() != Some("application/pdf")).then(|| path.map_or(shown, str::to_string));
                parts.push(Part::Media { mime, data, url: None, name });
            }
            vec![Msg::new(WireRole::User, parts)]
        }
        Some("assistant.message") => {
            let mut parts: Vec<Part> = text(d, "content").map(Part::Text).into_iter().collect();
            for r in d.get("toolRequests").and_then(Value::as_array).into_iter().flatten() {
                let (Some(id), Some(name)) = (text(r, "toolCallId"), text(r, "name")) else { continue };
                let args = r.get("arguments").cloned().unwrap_or_else(|| Value::Object(serde_json::Map::new()));
                parts.push(Part::Call { id, name, args });
            }
            if parts.is_empty() { Vec::new() } else { vec![Msg::new(WireRole::Assistant, parts)] }
        }
        Some("tool.execution_complete") => {
            let Some(id) = text(d, "toolCallId") else { return Vec::new() };
            let ok = d.get("success").and_then(Value::as_bool) != Some(false);
            let body = if ok {
                d.get("result").and_then(|r| text(r, "content"))
            } else {
                d.get("error").and_then(|e| text(e, "message"))
            };
            let parts = vec![Part::Text(body.unwrap_or_default())];
            // The CLI sends a failed result's message without marking it an error.
            vec![Msg::new(WireRole::User, vec![Part::Result { id, name: None, parts, error: false, extra: None }])]
        }
        Some("session.compaction_complete") => {
            let summary = text(d, "summaryContent").unwrap_or_default();
            vec![Msg::new(WireRole::User, vec![Part::Text(summary)])]
        }
        _ => Vec::new(),
    }
}
