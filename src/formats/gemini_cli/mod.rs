//! Gemini CLI: `~/.gemini/tmp/<project>/chats/session-<ts>-<id>.jsonl`.
//!
//! A metadata line, then message records. A record is re-appended in full each
//! time it changes (the last copy wins); `$rewindTo` drops a record and all
//! after it; `$set` updates metadata or checkpoints the whole message list.
//! Tool calls and their results live in the same `gemini` record. The legacy
//! `.json` form (one `ConversationRecord` document) is read too.

pub mod request;

use crate::json::Value;
use crate::model::{ErrorRecord, Origin, Role, Session};
use crate::request::{Canon, Dialect, ReadRange, Render, To};

use super::blocks::gemini_part;
use super::{Adapter, Id, LineOut, RawCall, RawEntry, Site, Unit, path_argument, ptr};

/// Gemini CLI: Gemini's API.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour {
    default_provider: Some("gemini"),
    pairing: super::Pairing::Gemini,
    // 0.61.0 sends every tool response twice once it resumes (the call record's
    // `toolCalls[].result` and the `user` record it also writes), and Gemini refuses
    // that ("the number of function response parts is equal to the number of function
    // call parts", gemini-cli#16212): a reply the live run got before the resume
    // proves nothing about the resumed request.
    sends_results_as_recorded: true,
    // Its `error` records come from the interactive UI's history (`useHistory`'s
    // `addItem`); a headless `-p` run that the provider refuses writes none.
    unrecorded_failures: Some("Gemini CLI records no failed request of a headless (`-p`) run"),
    ..super::Behaviour::agent("Gemini CLI")
};

pub struct GeminiCli;

/// The last line `repair` writes into a Gemini CLI copy: a metadata update the
/// CLI merges and ignores. Gemini CLI records no failure of a headless run, so
/// a history ending in an unanswered request says nothing by itself; while
/// this line is still the last, nothing was sent from the copy since it was
/// written ([`fresh_copy`]).
pub const REPAIRED: &str = r#"{"$set":{"repairedBy":"session-doctor"}}"#;

/// Whether `path` is a copy `repair` wrote that has not changed since: its
/// last line is still [`REPAIRED`] (the CLI appends to the file it resumes).
pub fn fresh_copy(path: &std::path::Path) -> bool {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else { return false };
    let len = f.metadata().map_or(0, |m| m.len());
    let back = len.min(REPAIRED.len() as u64 + 64);
    let mut tail = Vec::new();
    if f.seek(SeekFrom::Start(len - back)).is_err() || f.take(back).read_to_end(&mut tail).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&tail);
    text.trim_end().rsplit('\n').next() == Some(REPAIRED)
}

impl Adapter for GeminiCli {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        if v.has("sessionId") && v.has("projectHash") {
            return 10;
        }
        if v.has("$rewindTo") || v.has("$set") {
            return 5;
        }
        let t = v.get("type").as_str().unwrap_or("");
        if v.has("id") && v.has("content") && matches!(t, "user" | "gemini" | "info" | "error" | "warning") {
            return 3;
        }
        0
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        if let Some(id) = Id::of_value(v.get("$rewindTo")) {
            out.unit = Unit::RewindTo(id);
        } else if v.has("$set") {
            let msgs = v.at(&["$set", "messages"]);
            if msgs.is_array() {
                out.unit = Unit::Reset;
                records(msgs, "/$set/messages", out);
            } else {
                out.unit = Unit::Hidden;
            }
        } else if v.has("projectHash") {
            // The metadata line, or a whole legacy ConversationRecord.
            out.unit = Unit::Plain;
            records(v.get("messages"), "/messages", out);
        } else if let Some(id) = Id::of_value(v.get("id")) {
            out.unit = Unit::Keyed(id);
            record(v, "", out);
        } else {
            out.unit = Unit::Hidden;
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::Gemini
    }

    fn not_in_session(&self, _: &Session, _: Dialect) -> &'static [&'static str] {
        request::NOT_IN_SESSION
    }

    /// A checkpoint a later record took apart is read one message at a time.
    fn request<'a>(&self, _: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(Box::new(Canon::new(|v, part: Option<u32>| match part {
            Some(part) => request::message_of(v, part),
            None => request::record(v),
        })))
    }
}

/// The parts of a call's `result` list that are its own: the `functionResponse`
/// answering `call_id` (recorded with or without the `<tool>__` prefix) and
/// the media and text after it, up to the next response. A checkpoint the CLI
/// writes when it resumes in a later minute than the session began holds every
/// response of the turn in each call's result, and the CLI sends them all:
/// `None` when the list holds no response to `call_id` (it is taken whole).
/// `responses` holds the id of each part that is a response.
pub fn own_parts(call_id: &str, name: &str, responses: &[Option<Option<&str>>]) -> Option<std::ops::Range<usize>> {
    let bare = |id: &str| -> String { id.strip_prefix(&format!("{}__", name.trim())).unwrap_or(id).to_string() };
    let start = responses.iter().position(|r| r.flatten().is_some_and(|id| bare(id) == bare(call_id)))?;
    let end = (start + 1..responses.len()).find(|&j| responses[j].is_some()).unwrap_or(responses.len());
    Some(start..end)
}

/// The id of the call of `calls` that a response spelled `response` answers
/// (ids compared without the `<tool>__` prefix), else `response` as spelled.
fn answered_call(calls: &[Value<'_>], response: &str) -> String {
    let bare =
        |id: &str, name: &str| -> String { id.strip_prefix(&format!("{}__", name.trim())).unwrap_or(id).to_string() };
    (calls.iter())
        .find_map(|c| {
            let (id, name) = (c.get("id").as_str()?, c.get("name").as_str().unwrap_or(""));
            (bare(id, name) == bare(response, name)).then(|| id.to_string())
        })
        .unwrap_or_else(|| response.to_string())
}

/// The messages of a checkpoint or metadata line, each keyed by its id as the
/// CLI's loader keys them; one without a string id it does not load.
fn records<'a>(list: &'a Value<'a>, base: &str, out: &mut LineOut<'a>) {
    for (i, r) in list.items().iter().enumerate() {
        let Value::Str(id) = r.get("id") else { continue };
        out.key(Id::of(id));
        record(r, &ptr(base, i), out);
    }
}

/// `content` is a `PartListUnion`: a string, one part, or a list of strings and parts.
///
/// Gemini CLI puts a tool's media beside its `functionResponse` (the API takes no
/// media inside one): parts after a response belong to that tool's result.
fn content<'a>(c: &'a Value<'a>, site: &Site, at: &str, out: &mut LineOut<'a>) {
    if c.is_array() {
        let mut current = site.clone();
        for (i, p) in c.items().iter().enumerate() {
            let resp = p.get("functionResponse");
            if resp.is_object() {
                let id = resp.get("id").to_text().or_else(|| resp.get("name").to_text());
                current = Site::tool_result(site.entry, id);
                current.tool = resp.get("name").to_text();
            }
            gemini_part(p, &current, &ptr(at, i), out);
        }
    } else if c.is_object() {
        gemini_part(c, site, at, out);
    }
}

fn record<'a>(r: &'a Value<'a>, at: &str, out: &mut LineOut<'a>) {
    if let Some(t) = r.get("timestamp").to_text() {
        out.at = Some(t);
    }
    match r.get("type").as_str().unwrap_or("") {
        "user" => {
            let e = out.entry(RawEntry::new(Role::User));
            content(r.get("content"), &Site::new(e, Origin::User), &ptr(at, "content"), out);
        }
        "gemini" => {
            let mut entry = RawEntry::new(Role::Assistant);
            entry.model = r.get("model").to_text();
            entry.accepted = r.get("tokens").is_object();
            let e = out.entry(entry);
            content(r.get("content"), &Site::new(e, Origin::Assistant), &ptr(at, "content"), out);
            let r_calls = r.get("toolCalls").items();
            for (i, call) in r_calls.iter().enumerate() {
                let id = call.get("id").to_text();
                let path = path_argument(call.get("args"));
                // A late resume's checkpoint also holds the calls as `functionCall`
                // parts of its content: the CLI sends each call once.
                let listed = |out: &LineOut<'_>, id: &str| out.calls.iter().any(|c| c.entry == e && c.call_id == id);
                if let Some(id) = id.as_ref().filter(|id| !listed(out, id)) {
                    out.calls.push(RawCall {
                        entry: e,
                        call_id: id.clone(),
                        name: call.get("name").to_text(),
                        path: path.clone(),
                    });
                }
                let mut site = Site::tool_result(e, id.clone());
                site.tool = call.get("name").to_text();
                site.name = path;
                let answered = out.results.len();
                let at_result = ptr(&ptr(&ptr(at, "toolCalls"), i), "result");
                let parts = call.get("result").items();
                let responses: Vec<Option<Option<&str>>> = (parts.iter())
                    .map(|p| p.get("functionResponse").is_object().then(|| p.at(&["functionResponse", "id"]).as_str()))
                    .collect();
                let name = call.get("name").as_str().unwrap_or("");
                let own = id.as_deref().and_then(|c| own_parts(c, name, &responses)).unwrap_or(0..parts.len());
                // Another call's response and media a checkpoint copied in are
                // sent too (the CLI sends every part): they are that call's.
                let mut other = site.clone();
                for (j, p) in parts.iter().enumerate() {
                    let resp = p.get("functionResponse");
                    if !own.contains(&j) && resp.is_object() {
                        other = Site::tool_result(e, resp.get("id").to_text());
                        other.tool = resp.get("name").to_text();
                    }
                    gemini_part(p, if own.contains(&j) { &site } else { &other }, &ptr(&at_result, j), out);
                }
                // The call and its result are one record: a finished call is answered
                // (Gemini CLI sends its result, or says it was cancelled), even when
                // the result holds no `functionResponse` part.
                let finished = !call.get("result").is_null()
                    || matches!(call.get("status").as_str(), Some("success" | "error" | "cancelled"));
                out.results.truncate(answered);
                if finished {
                    out.result(e, id);
                }
                // Each response copied in is sent again: a result of the call it answers.
                for (_, r) in responses.iter().enumerate().filter(|(j, _)| !own.contains(j)) {
                    if let Some(Some(copied)) = r {
                        out.result(e, Some(answered_call(r_calls, copied)));
                    }
                }
            }
        }
        "error" => {
            let mut entry = RawEntry::new(Role::System);
            let text = match r.get("content") {
                Value::Str(s) => s.to_string(),
                c => c.to_string(),
            };
            entry.error = Some(ErrorRecord { text, status: None });
            out.entry(entry);
        }
        _ => {}
    }
}
