//! GitHub Copilot CLI: `~/.copilot/session-state/<id>/events.jsonl` (or under
//! `$COPILOT_HOME`).
//!
//! One event per line, `{type, data, id, timestamp, parentId}`. On resume the
//! CLI rebuilds the request from these events (checked against 1.0.102 and a
//! loopback provider): `user.message` (its `transformedContent`, then for each
//! `file` attachment a text "Image file at path …" and the file itself),
//! `assistant.message` (`content` and `toolRequests`), and
//! `tool.execution_complete` (its `result.content`). Everything else (turn
//! markers, usage, the `system.message` it writes afresh on every start) is
//! not history.
//!
//! What is and is not sent, as the CLI showed it:
//! * a `file` attachment sends the bytes of the `session.binary_asset` event its
//!   `assetId` names (the file at `path` only when no such event is left: a
//!   file changed on disk since is not what goes);
//! * a tool's images (`result.binaryResultsForLlm`, bytes in a
//!   `session.binary_asset`) were not sent in custom-provider (BYOK) mode, to
//!   Anthropic or OpenAI-compatible endpoints alike: they are not history here.
//!
//! A provider's 400 on an image does not strand a session: the CLI retries the
//! same request without images (`session.warning` `image_error`) and goes on,
//! and sends the image again on the next request.

pub mod request;

use crate::json::Value;
use crate::model::{ErrorRecord, Origin, Role, Session};
use crate::request::{Canon, Dialect, ReadRange, Render, To};

use super::{Adapter, LineOut, RawCall, RawEntry, RawPayload, Site, Unit, http_status, path_argument, ptr};

/// Copilot CLI: any provider; it answers an interrupted call on resume, in its own words, not as an error.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour {
    answers_interrupted_calls: true,
    holds_synthetic_results: true,
    interrupted_result: Some((TOOL_INTERRUPTED, false)),
    retries_without_media: true,
    ..super::Behaviour::agent("GitHub Copilot CLI")
};

pub struct Copilot;

/// The result the CLI records (`tool.execution_complete`, `success: false`) and
/// sends for a call its run left unanswered, when it resumes (1.0.102).
pub const TOOL_INTERRUPTED: &str = "Tool execution was interrupted before a result was recorded. Its effects may be absent, partial, or already complete, and other tools may have completed successfully. Check the current state before retrying; do not assume success or replay this operation blindly.";

/// The event types that are part of the request the CLI rebuilds.
const HISTORY: [&str; 3] = ["user.message", "assistant.message", "tool.execution_complete"];

impl Adapter for Copilot {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let t = v.get("type").as_str().unwrap_or("");
        let event = v.get("data").is_object() && v.has("id") && v.has("parentId");
        if !event {
            return 0;
        }
        if t == "session.start" && v.at(&["data", "producer"]).as_str() == Some("copilot-agent") {
            return 10;
        }
        let family = ["session.", "user.", "assistant.", "tool.", "system.", "model.", "hook.", "subagent."];
        if family.iter().any(|f| t.starts_with(f)) { 3 } else { 0 }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let d = v.get("data");
        let t = v.get("type").as_str().unwrap_or("");
        if HISTORY.contains(&t) {
            out.at = v.get("timestamp").to_text();
        }
        match t {
            "session.start" | "session.resume" => {
                out.unit = Unit::Hidden;
                out.context_model = d.get("selectedModel").to_text();
            }
            "session.model_change" => {
                out.unit = Unit::Hidden;
                out.context_model = d.get("newModel").to_text();
            }
            "session.usage_record" => {
                out.unit = Unit::Hidden;
                out.context_provider = d.at(&["usage", "providerType"]).as_str().and_then(provider);
            }
            "user.message" => user(d, out),
            "assistant.message" => {
                let mut entry = RawEntry::new(Role::Assistant);
                entry.model = d.get("model").to_text();
                // Written once the model's reply is complete.
                entry.accepted = true;
                entry.empty =
                    d.get("content").as_str().is_none_or(str::is_empty) && d.get("toolRequests").items().is_empty();
                let e = out.entry(entry);
                for r in d.get("toolRequests").items() {
                    if let Some(id) = r.get("toolCallId").to_text() {
                        out.calls.push(RawCall {
                            entry: e,
                            call_id: id,
                            name: r.get("name").to_text(),
                            path: path_argument(r.get("arguments")),
                        });
                    }
                }
            }
            "tool.execution_complete" => {
                let e = out.entry(RawEntry::new(Role::Tool));
                out.result(e, d.get("toolCallId").to_text());
            }
            "session.error" => {
                let mut entry = RawEntry::new(Role::System);
                let text = d.get("message").as_str().unwrap_or("").to_string();
                let status = d.get("statusCode").as_f64().and_then(http_status);
                entry.error = Some(ErrorRecord { text, status });
                out.entry(entry);
            }
            "session.warning" if d.get("warningType").as_str() == Some("image_error") => {
                // The provider refused the request's images; the CLI sent it again
                // without them (and will send them again on the next request).
                let mut entry = RawEntry::new(Role::System);
                entry.error =
                    Some(ErrorRecord { text: d.get("message").as_str().unwrap_or("").to_string(), status: None });
                out.entry(entry);
            }
            "session.binary_asset" => {
                // Bytes an attachment names by their hash: never sent as a record of
                // their own (the reader joins them to the attachment).
                out.unit = Unit::Hidden;
                if let Some(data) = d.get("data").as_cow() {
                    let mut site = Site::new(0, Origin::User);
                    site.name = d.get("description").to_text();
                    out.media.push(site.media(
                        RawPayload::Base64(data),
                        d.get("mimeType").as_str(),
                        "/data/data".into(),
                    ));
                }
            }
            "session.compaction_complete" if d.get("success").as_bool() == Some(true) => {
                // The summary replaces everything before it.
                out.unit = Unit::Reset;
                out.entry(RawEntry::new(Role::User));
            }
            "session.context_cleared" => out.unit = Unit::Reset,
            _ => out.unit = Unit::Hidden,
        }
    }

    /// An OpenAI-compatible provider is spoken to over Chat Completions unless
    /// told otherwise (`COPILOT_PROVIDER_WIRE_API=responses`).
    fn dialect(&self, _: &Session, provider: &str) -> Dialect {
        match crate::request::of_provider(provider) {
            Dialect::OpenaiResponses => Dialect::OpenaiChat,
            d => d,
        }
    }

    fn not_in_session(&self, _: &Session, _: Dialect) -> &'static [&'static str] {
        request::NOT_IN_SESSION
    }

    /// It sends an attachment's bytes from the asset event its `assetId` names.
    fn request<'a>(&self, to: &To<'a>, read: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        let mut records = request::Records::new(request::assets(to.session, read)?);
        Ok(Box::new(Canon::new(move |v, _| records.record(v))))
    }
}

/// A user turn: its text, then each attached file or blob (a pasted image, an
/// SDK's attachment), as the bytes of the asset its `assetId` names
/// (`sha256:<hex>`; the reader finds them on the asset's line), else a blob's
/// inline `data`, else the file at its path.
fn user<'a>(d: &'a Value<'a>, out: &mut LineOut<'a>) {
    let e = out.entry(RawEntry::new(Role::User));
    for (i, a) in d.get("attachments").items().iter().enumerate() {
        let blob = match a.get("type").as_str() {
            Some("file") => false,
            Some("blob") => true,
            _ => continue,
        };
        if a.has("omittedReason") {
            continue;
        }
        let asset = a.get("assetId").as_str().filter(|id| id.starts_with("sha256:"));
        let path = a.get("path").as_str();
        let payload = match (asset, path, a.get("data").as_cow()) {
            (Some(id), _, _) => RawPayload::Reference(id.to_string()),
            (None, Some(p), _) if !blob => RawPayload::Reference(p.to_string()),
            (None, _, Some(data)) if blob => RawPayload::Base64(data),
            _ => continue,
        };
        let mut site = Site::new(e, Origin::User);
        site.name = path.or(a.get("displayName").as_str()).map(str::to_string);
        out.media.push(site.media(payload, a.get("mimeType").as_str(), ptr("/data/attachments", i)));
    }
}

/// The CLI's custom-provider type (`COPILOT_PROVIDER_TYPE`) as a provider name.
fn provider(t: &str) -> Option<String> {
    match t {
        "anthropic" => Some("anthropic".into()),
        "openai" => Some("openai".into()),
        "azure" => Some("azure-openai".into()),
        _ => None,
    }
}
