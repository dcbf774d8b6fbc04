//! opencode, as `{info, parts}` lines (the `MessageV2.WithParts` shape of its
//! API), or the one document `opencode export` writes: `{info, messages:[{info,
//! parts}]}`. (The live store is sqlite.)
//!
//! User attachments are `file` parts with data URLs; tool media is in a tool
//! part's `state.attachments`. A failed request is an assistant message whose
//! `info.error` is `{name, data:{message, statusCode, responseBody}}`.

pub mod request;

use crate::json::Value;
use crate::model::{ErrorRecord, Fork, Origin, Role, Session};
use crate::request::{Canon, Dialect, ReadRange, Render, To};

use super::ai_sdk::{Replay, provider_reasoning};
use super::blocks::url_payload;
use super::{Adapter, LineOut, RawCall, RawEntry, Site, path_argument, ptr};

/// Who keeps a store: Kilo Code CLI (`@kilocode/cli`, opencode's fork, which
/// keeps opencode's format in `$XDG_DATA_HOME/kilo/kilo.db`, `kilo-<channel>.db`,
/// or an `opencode-<channel>.db` it finds in that folder), else opencode
/// (`None`). The store's messages carry no version: its place says it.
pub fn fork_of_store(path: &std::path::Path) -> Option<Fork> {
    let name = |p: Option<&std::ffi::OsStr>| p.and_then(std::ffi::OsStr::to_str).unwrap_or_default().to_string();
    let in_kilo = name(path.parent().and_then(std::path::Path::file_name)) == "kilo";
    (name(path.file_name()).starts_with("kilo") || in_kilo).then_some(Fork::Kilo)
}

/// Who wrote an export, by the version of the CLI that wrote its session
/// (`info.version`): Kilo Code CLI stamps its own (7.7.7 writes `7.7.7`; its
/// releases on npm run from 7.0.33 to 7.8.1), opencode its own (1.18.33
/// writes `1.18.33`): a major version of 7 or more is taken for Kilo's.
pub fn fork_of_export(version: Option<&str>) -> Option<Fork> {
    let major = version.and_then(|v| v.split('.').next()).and_then(|m| m.parse::<u32>().ok());
    major.is_some_and(|m| m >= 7).then_some(Fork::Kilo)
}

/// The command that exports, imports and resumes a session in this format:
/// `kilo` for Kilo Code CLI's, else `opencode`.
pub fn command(written_by: Option<Fork>) -> &'static str {
    written_by.map_or(OPENCODE, Fork::command)
}

/// opencode's command.
pub const OPENCODE: &str = "opencode";

/// opencode: any provider, through the AI SDK.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour::agent("opencode");

pub struct Opencode;

impl Adapter for Opencode {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let message = |m: &Value<'_>| {
            let info = m.get("info");
            info.has("sessionID") && info.get("role").as_str().is_some() && m.get("parts").is_array()
        };
        if message(v) || v.get("messages").items().iter().any(message) { 8 } else { 0 }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        if is_export(v) {
            out.written_by = fork_of_export(v.get("info").get("version").as_str());
            let revert = export_revert(v);
            for (i, m) in entry_messages(v) {
                message(m, &ptr("/messages", i), revert.as_ref(), out);
            }
        } else {
            message(v, "", None, out);
        }
    }

    fn dialect(&self, _: &Session, provider: &str) -> Dialect {
        crate::request::of_provider(provider)
    }

    fn not_in_session(&self, session: &Session, dialect: Dialect) -> &'static [&'static str] {
        // Kilo Code CLI on the Responses API is not driven: opencode's words stand there.
        const KILO: &[&str] = &["the system prompt (Kilo Code CLI writes it for each request)", "the tool definitions"];
        const ALWAYS: &[&str] = &["the system prompt (opencode writes it for each request)", "the tool definitions"];
        const RESPONSES: &[&str] = &[
            "the system prompt (opencode writes it for each request)",
            "the tool definitions",
            "its provider options: this is the request under opencode's default store: false (a model set to store: true sends each item's id as an item_reference instead)",
        ];
        match (dialect, session.written_by) {
            (Dialect::OpenaiResponses, _) => RESPONSES,
            (_, Some(Fork::Kilo)) => KILO,
            _ => ALWAYS,
        }
    }

    /// An export's reverted messages are not sent.
    /// An export's entries are its messages, from its latest completed compaction on.
    fn entry_messages<'v, 'a>(&self, doc: &'v Value<'a>) -> Vec<&'v Value<'a>> {
        if !is_export(doc) {
            return Vec::new();
        }
        entry_messages(doc).map(|(_, m)| m).collect()
    }

    fn request<'a>(&self, to: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        let (provider, model) = (to.provider, to.model);
        // opencode's own `store: false` (ProviderTransform.options): no item goes by reference.
        let mut replay = Replay::new(to.dialect, false);
        let kilo = to.session.written_by == Some(Fork::Kilo);
        // A store's messages, one a record: Kilo's block comes from the session's row.
        let row = to.session.store_info.as_ref().filter(|_| kilo);
        let messages = move |v: &serde_json::Value, _| {
            let with = row.and_then(|row| request::kilo_environment_part(v, row)).map(|part| {
                let mut v = v.clone();
                if let Some(parts) = v.get_mut("parts").and_then(serde_json::Value::as_array_mut) {
                    parts.push(part);
                }
                v
            });
            request::messages(with.as_ref().unwrap_or(v), (provider, model), &mut replay)
        };
        let prepare = move |doc: &mut serde_json::Value| {
            request::reverted(doc);
            if kilo {
                request::kilo_environment(doc);
            }
        };
        Ok(Box::new(Canon::new(messages).on_document(Box::new(prepare))))
    }
}

/// What filterCompacted reads of a message: where a completed compaction
/// starts the history.
pub struct Compaction<'s> {
    pub user: bool,
    pub id: &'s str,
    pub parent: &'s str,
    /// A summary reply that finished without an error: its parent's compaction is done.
    pub summary_done: bool,
    /// A user message holding a `compaction` part.
    pub compacts: bool,
}

impl Compaction<'_> {
    fn of_json<'s>(m: &'s Value<'s>) -> Compaction<'s> {
        let info = m.get("info");
        Compaction {
            user: info.get("role").as_str() == Some("user"),
            id: info.get("id").as_str().unwrap_or(""),
            parent: info.get("parentID").as_str().unwrap_or(""),
            summary_done: info.get("summary").as_bool() == Some(true)
                && info.get("finish").as_str().is_some()
                && !info.get("error").is_object(),
            compacts: m.get("parts").items().iter().any(|p| p.get("type").as_str() == Some("compaction")),
        }
    }
}

impl<'s> Compaction<'s> {
    /// The same of a message's `info` as `serde_json` holds it (a database's
    /// rows, a preview's document), `compacts` saying whether its parts ask for one.
    pub fn of_info(
        id: &'s str,
        info: &'s serde_json::Map<String, serde_json::Value>,
        compacts: bool,
    ) -> Compaction<'s> {
        let str_of = |k: &str| info.get(k).and_then(serde_json::Value::as_str);
        Compaction {
            user: str_of("role") == Some("user"),
            id,
            parent: str_of("parentID").unwrap_or(""),
            summary_done: info.get("summary").and_then(serde_json::Value::as_bool) == Some(true)
                && str_of("finish").is_some()
                && !info.get("error").is_some_and(serde_json::Value::is_object),
            compacts,
        }
    }
}

/// The index of the first message opencode sends (`filterCompacted`): the
/// latest user message that asked for a compaction a summary reply then
/// finished; everything before it is replaced by that summary. 0 when none.
/// `view` gives `None` for a message a pending `/undo` removes.
pub fn compacted_from<'s, M>(messages: &'s [M], view: impl Fn(&'s M) -> Option<Compaction<'s>>) -> usize {
    let mut done: Vec<&str> = Vec::new();
    for (i, m) in messages.iter().enumerate().rev() {
        let Some(c) = view(m) else { continue };
        if c.user && c.compacts && done.contains(&c.id) {
            return i;
        }
        if !c.user && c.summary_done {
            done.push(c.parent);
        }
    }
    0
}

/// What `/undo` left pending in a session (its `revert`): before its next
/// request opencode removes every message from `message` on, or, when a part
/// is named, that message's parts from `part` on (`SessionRevert.cleanup`).
/// Ids sort in the order opencode wrote them.
#[derive(Clone, Copy, Debug)]
pub struct Revert<'s> {
    pub message: &'s str,
    pub part: Option<&'s str>,
}

impl<'s> Revert<'s> {
    pub fn of(message: Option<&'s str>, part: Option<&'s str>) -> Option<Revert<'s>> {
        Some(Revert { message: message.filter(|m| !m.is_empty())?, part: part.filter(|p| !p.is_empty()) })
    }

    pub fn keeps_message(&self, id: &str) -> bool {
        id < self.message || (id == self.message && self.part.is_some())
    }

    pub fn keeps_part(&self, message: &str, part: &str) -> bool {
        message != self.message || self.part.is_none_or(|p| part < p)
    }
}

/// One `{info, parts}` message; `base` is its JSON pointer.
/// The one document `opencode export` writes, rather than one `{info, parts}` message.
fn is_export(v: &Value<'_>) -> bool {
    v.get("messages").is_array() && !v.has("parts")
}

/// What a pending `/undo` of an export removes.
fn export_revert<'v>(v: &'v Value<'_>) -> Option<Revert<'v>> {
    Revert::of(v.at(&["info", "revert", "messageID"]).as_str(), v.at(&["info", "revert", "partID"]).as_str())
}

/// Whether a pending `/undo` keeps a message.
fn kept(m: &Value<'_>, revert: Option<&Revert<'_>>) -> bool {
    revert.is_none_or(|r| r.keeps_message(m.at(&["info", "id"]).as_str().unwrap_or("")))
}

/// Whether a message is an entry: it has a role, and a pending `/undo` keeps it.
fn is_entry(m: &Value<'_>, revert: Option<&Revert<'_>>) -> bool {
    m.at(&["info", "role"]).as_str().is_some() && kept(m, revert)
}

/// The messages of an export that are entries, one each, with their index:
/// from the latest completed compaction on ([`compacted_from`]).
fn entry_messages<'v, 'a>(v: &'v Value<'a>) -> impl Iterator<Item = (usize, &'v Value<'a>)> {
    let revert = export_revert(v);
    let messages = v.get("messages").items();
    let from = compacted_from(messages, |m| kept(m, revert.as_ref()).then(|| Compaction::of_json(m)));
    messages.iter().enumerate().skip(from).filter(move |(_, m)| is_entry(m, revert.as_ref()))
}

fn message<'a>(v: &'a Value<'a>, base: &str, revert: Option<&Revert<'_>>, out: &mut LineOut<'a>) {
    let info = v.get("info");
    if !is_entry(v, revert) {
        return;
    }
    let id = info.get("id").as_str().unwrap_or("");
    let assistant = info.get("role").as_str() == Some("assistant");
    let parts = v.get("parts").items();
    let mut entry = RawEntry::new(if assistant { Role::Assistant } else { Role::User });
    entry.model = info.get("modelID").to_text().or_else(|| info.at(&["model", "modelID"]).to_text());
    entry.provider = info.get("providerID").to_text().or_else(|| info.at(&["model", "providerID"]).to_text());
    let err = info.get("error");
    if err.is_object() && !sent_despite(err, parts) {
        entry.error = Some(error_record(err));
    } else if assistant && !err.is_object() {
        let tokens = info.get("tokens");
        let used = tokens.get("input").as_f64().unwrap_or(0.0) + tokens.get("output").as_f64().unwrap_or(0.0);
        entry.accepted = used > 0.0 || info.get("finish").as_str().is_some();
    }
    let e = out.entry(entry);
    out.at = info.at(&["time", "created"]).to_text();
    let origin = if assistant { Origin::Assistant } else { Origin::User };
    for (i, p) in parts.iter().enumerate() {
        if revert.is_some_and(|r| !r.keeps_part(id, p.get("id").as_str().unwrap_or(""))) {
            continue;
        }
        let at = ptr(&ptr(base, "parts"), i);
        match p.get("type").as_str().unwrap_or("") {
            "file" if !assistant && sends_file(p.get("mime").as_str()) => file_part(p, &Site::new(e, origin), at, out),
            kind @ ("reasoning" | "text") => {
                provider_reasoning(&[(p.get("metadata"), "metadata")], &at, kind == "reasoning", out);
            }
            "tool" => {
                let state = p.get("state");
                let id = p.get("callID").to_text();
                let name = p.get("tool").to_text();
                let path = path_argument(state.get("input"));
                if let Some(id) = &id {
                    out.calls.push(RawCall { entry: e, call_id: id.clone(), name: name.clone(), path: path.clone() });
                    // The part is the call and its result: completed, failed, or
                    // (pending, running) answered by opencode itself as interrupted.
                    out.result(e, Some(id.clone()));
                }
                let mut site = Site::tool_result(e, id);
                site.tool = name;
                site.name = path;
                // A completed tool's attachments, but for those a prune cleared
                // (`state.time.compacted`: sent as "[Old tool result content
                // cleared]") and those held by reference, which opencode leaves out.
                let cleared = !state.at(&["time", "compacted"]).is_null()
                    && state.at(&["time", "compacted"]).as_bool() != Some(false);
                let completed = state.get("status").as_str() == Some("completed");
                for (j, a) in state.get("attachments").items().iter().enumerate().filter(|_| completed && !cleared) {
                    if a.get("url").as_str().is_some_and(|u| u.starts_with("data:") && u.contains(',')) {
                        file_part(a, &site, ptr(&ptr(&at, "state/attachments"), j), out);
                    }
                }
                provider_reasoning(&[(p.get("metadata"), "metadata")], &at, false, out);
            }
            _ => {}
        }
    }
}

fn file_part<'a>(p: &'a Value<'a>, site: &Site, at: String, out: &mut LineOut<'a>) {
    if let Some(pl) = url_payload(p.get("url")) {
        let mut m = site.media(pl, p.get("mime").as_str(), at);
        m.name = p.get("filename").to_text().or_else(|| p.at(&["source", "path"]).to_text()).or(m.name);
        out.media.push(m);
    }
}

/// Whether opencode sends a user `file` part of this type: a mentioned file
/// (`text/plain`) or folder (`application/x-directory`) goes as the text parts
/// opencode wrote beside it, never as a file (`toModelMessages`).
pub fn sends_file(mime: Option<&str>) -> bool {
    !matches!(mime, Some("text/plain" | "application/x-directory"))
}

/// Whether a message that recorded `err` is sent all the same: opencode sends
/// one the user aborted once it holds more than a step start or reasoning
/// (its completed tools and their results count; its unfinished ones it
/// answers as interrupted).
fn sent_despite(err: &Value<'_>, parts: &[Value<'_>]) -> bool {
    err.get("name").as_str() == Some("MessageAbortedError")
        && parts.iter().any(|p| !matches!(p.get("type").as_str(), Some("step-start" | "reasoning")))
}

/// `NamedError` `{name, data}`: the provider's body when opencode kept it, else its message.
fn error_record(err: &Value<'_>) -> ErrorRecord {
    let data = err.get("data");
    let name = err.get("name").to_text().unwrap_or_default();
    let text = data
        .get("responseBody")
        .to_text()
        .filter(|b| !b.is_empty())
        .or_else(|| data.get("message").to_text().map(|m| format!("{name}: {m}")))
        .unwrap_or(name);
    ErrorRecord { text, status: data.get("statusCode").as_f64().and_then(super::http_status) }
}

#[cfg(test)]
mod tests {
    use super::{Fork, fork_of_export, fork_of_store};
    use std::path::Path;

    #[test]
    fn kilos_stores_and_exports_are_told_from_opencodes() {
        for kilo in ["/h/.local/share/kilo/kilo.db", "kilo-beta.db", "/d/kilo/opencode-dev.db"] {
            assert_eq!(fork_of_store(Path::new(kilo)), Some(Fork::Kilo), "{kilo}");
        }
        for opencode in ["/h/.local/share/opencode/opencode.db", "opencode-dev.db", "x.db"] {
            assert_eq!(fork_of_store(Path::new(opencode)), None, "{opencode}");
        }
        assert_eq!(fork_of_export(Some("7.7.7")), Some(Fork::Kilo));
        for v in [Some("1.18.33"), Some("0.15.2"), Some("local"), None] {
            assert_eq!(fork_of_export(v), None, "{v:?}");
        }
    }
}
