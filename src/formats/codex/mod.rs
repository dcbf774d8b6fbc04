//! OpenAI Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-…-<uuid>.jsonl`.
//!
//! Every line is `{timestamp, type, payload}`. `response_item` payloads are the
//! Responses API items Codex re-sends; they are written only after a successful
//! stream, so model output in them was accepted. `turn_context` names the model
//! for the items after it. `compacted.replacement_history` replaces everything
//! before it. Errors are `event_msg` lines (only in newer builds): `error`,
//! `stream_error`, `turn_aborted`, and the `error` of a `task_complete` (0.171.0
//! records a failed turn only there).
//!
//! Builds before the `{timestamp, type, payload}` envelope wrote a metadata
//! line `{id, timestamp, instructions?, git?}`, then bare Responses items, with
//! `{"record_type":"state"}` lines in between; those are read too.

pub mod pairs;
pub mod request;
pub mod resume;

use crate::json::Value;
use crate::model::{ErrorRecord, Origin, Role, Session};
use crate::request::{AGENT_ADDS, Canon, Dialect, ReadRange, Render, Sent, To};

use super::blocks::{responses_item, url_payload};
use super::{Adapter, LineOut, RawEntry, RawPayload, Site, Unit, ptr};

/// Codex: the Responses API, one item per record, a developer message first;
/// it answers an interrupted call with an aborted output.
pub const BEHAVIOUR: super::Behaviour = super::Behaviour {
    default_provider: Some("openai"),
    pairing: super::Pairing::Responses,
    answers_interrupted_calls: true,
    holds_synthetic_results: true,
    sends_results_as_recorded: true,
    results_are_records: true,
    ..super::Behaviour::agent("OpenAI Codex CLI")
};

pub struct Codex;

const TYPES: &[&str] = &["session_meta", "turn_context", "response_item", "event_msg", "compacted"];

/// Responses item types an envelope-less rollout line may be.
const LEGACY_ITEMS: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
];

/// `{id, timestamp, …}` without a type: the first line of an old rollout.
fn legacy_meta(v: &Value<'_>) -> bool {
    v.has("id") && v.has("timestamp") && !v.has("type")
}

impl Adapter for Codex {
    #[allow(clippy::bool_to_int_with_if, reason = "a ladder of scores (5, 4, 1, 0), not a bool")]
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let t = v.get("type").as_str().unwrap_or("");
        if v.has("payload") && v.has("timestamp") && TYPES.contains(&t) {
            5
        } else if v.has("record_type") || (legacy_meta(v) && (v.has("instructions") || v.has("git"))) {
            4
        } else if !v.has("payload")
            && LEGACY_ITEMS.contains(&t)
            && !v.has("input")
            && !v.has("messages")
            // pi's entries wrap their message (`{type:"message", message:{…}}`); a bare item does not.
            && !v.get("message").is_object()
        {
            1
        } else {
            0
        }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let p = v.get("payload");
        let ty = v.get("type").as_str().unwrap_or("");
        out.at = v.get("timestamp").to_text();
        if !v.has("payload") {
            // The envelope-less format of older builds.
            if LEGACY_ITEMS.contains(&ty) && !v.get("message").is_object() && !unsent(v) {
                let e = out.entry(item_entry(v));
                responses_item(v, e, "", out);
            } else {
                out.unit = Unit::Hidden;
            }
            return;
        }
        match ty {
            "session_meta" => {
                out.unit = Unit::Hidden;
                out.context_provider = p.get("model_provider").to_text();
            }
            "turn_context" => {
                out.unit = Unit::Hidden;
                out.context_model = p.get("model").to_text();
            }
            "response_item" if unsent(p) => out.unit = Unit::Hidden,
            "response_item" => {
                let e = out.entry(item_entry(p));
                out.turn = starts_turn(p);
                responses_item(p, e, "/payload", out);
            }
            "compacted" => {
                out.unit = Unit::Replace;
                if !p.get("replacement_history").is_array() {
                    // Rebuilt from the history before it, which a rollback does not bring back.
                    out.unit = Unit::Reset;
                    // A local compaction of older builds: Codex rebuilds the history
                    // as its initial context, the text of the user messages before
                    // (their images dropped), then this summary as a user message.
                    out.entry(RawEntry::new(Role::User));
                    out.findings.push((crate::model::Severity::Info, LEGACY_COMPACTION, LEGACY_COMPACTION_SAYS.into()));
                }
                for (i, item) in p.get("replacement_history").items().iter().enumerate().filter(|(_, it)| !unsent(it)) {
                    let e = out.entry(item_entry(item));
                    responses_item(item, e, &ptr("/payload/replacement_history", i), out);
                }
            }
            "event_msg" => event(p, out),
            _ => out.unit = Unit::Hidden,
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::OpenaiResponses
    }

    fn not_in_session(&self, session: &Session, dialect: Dialect) -> &'static [&'static str] {
        match dialect {
            Dialect::OpenaiResponses if rebuilt(session) => request::NOT_IN_SESSION_REBUILT,
            Dialect::OpenaiResponses => request::NOT_IN_SESSION,
            _ => AGENT_ADDS,
        }
    }

    /// Its records are its request items: passed through in its own dialect.
    fn request<'a>(&self, to: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        Ok(match to.dialect {
            Dialect::OpenaiResponses => Box::new(Sent(request::CodexRequest::new(to.session))),
            _ => Box::new(Canon::new(|v, _| request::messages(v))),
        })
    }
}

/// The finding of a compaction without `replacement_history`.
pub const LEGACY_COMPACTION: &str = "codex.compaction_rebuilt";
const LEGACY_COMPACTION_SAYS: &str = "a compaction without replacement history: Codex rebuilds the history before it as its initial context and the text of the user messages (their images dropped), ahead of the summary; what it rebuilds is in no line";

/// The history the provider sees starts at a compaction without replacement
/// history: what Codex puts ahead of its summary is in no record, so items
/// are numbered from an unknown start.
pub fn rebuilt(session: &crate::model::Session) -> bool {
    session.format == crate::model::Format::Codex
        && session
            .records
            .first()
            .is_some_and(|r| session.findings.iter().any(|f| f.code == Some(LEGACY_COMPACTION) && f.line == r.line))
}

/// Items Codex records but never sends (`is_api_message` drops them from
/// every prompt): undo snapshots, compaction triggers, system messages and
/// items of a kind it does not know. They are neither part of the request's
/// numbering nor an answer that accepted anything.
fn unsent(item: &Value<'_>) -> bool {
    match item.get("type").as_str().unwrap_or("message") {
        "message" => item.get("role").as_str() == Some("system"),
        "ghost_snapshot" | "compaction_trigger" | "other" => true,
        _ => false,
    }
}

/// A user message Codex counts as a turn of the user's when it rolls turns
/// back (`drop_last_n_user_turns`): not one of the context fragments it writes
/// as user messages itself. Newer builds name each content item's kind in
/// `internal_chat_message_metadata_passthrough.content_item_kinds` and count a
/// message with a `user.` kind (or an unknown one) as a turn; without kinds,
/// a message is a fragment when a text opens with a fragment's tag
/// (`is_contextual_user_fragment`).
fn starts_turn(item: &Value<'_>) -> bool {
    const FRAGMENTS: &[&str] = &[
        "# AGENTS.md instructions for ",
        "<user_instructions>",
        "<environment_context>",
        "<skill>",
        "<user_shell_command>",
        "<turn_aborted>",
        "<subagents>",
        "<subagent_notification>",
    ];
    if item.get("type").as_str().unwrap_or("message") != "message" || item.get("role").as_str() != Some("user") {
        return false;
    }
    let content = item.get("content").items();
    let kinds = item.at(&["internal_chat_message_metadata_passthrough", "content_item_kinds"]).items();
    if !kinds.is_empty() && kinds.len() == content.len() {
        return kinds.iter().any(|k| {
            let k = k.as_str().unwrap_or("");
            k.starts_with("user.")
                || matches!(k, "" | "unknown" | "images.preparation_error" | "images.unsupported" | "audio.unsupported")
        });
    }
    let fragment = |text: &str| {
        let head = text.trim_start().as_bytes();
        FRAGMENTS.iter().any(|open| head.get(..open.len()).is_some_and(|h| h.eq_ignore_ascii_case(open.as_bytes())))
    };
    !content
        .iter()
        .any(|c| c.get("type").as_str() == Some("input_text") && c.get("text").as_str().is_some_and(fragment))
}

/// The entry a Responses item stands for.
fn item_entry(item: &Value<'_>) -> RawEntry {
    let role = match (item.get("type").as_str().unwrap_or("message"), item.get("role").as_str()) {
        ("message", Some("assistant")) => Role::Assistant,
        ("message", Some("developer" | "system")) => Role::System,
        ("message", _) => Role::User,
        (t, _) if t.ends_with("_output") => Role::Tool,
        // Compaction summaries are sent, but the model did not write them in answer to a request.
        ("compaction" | "compaction_summary" | "context_compaction", _) => Role::System,
        _ => Role::Assistant,
    };
    let mut e = RawEntry::new(role);
    e.accepted = role == Role::Assistant;
    e
}

/// Event lines: errors and aborts become entries, a rollback drops turns; the
/// rest are UI mirrors.
fn event<'a>(p: &'a Value<'a>, out: &mut LineOut<'a>) {
    let text = match p.get("type").as_str().unwrap_or("") {
        // The user backtracked: Codex replays it on resume (`drop_last_n_user_turns`).
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a turn count: `as` drops a fraction and saturates, NaN is 0"
        )]
        "thread_rolled_back" => {
            out.unit = Unit::DropTurns(p.get("num_turns").as_f64().map_or(0, |n| n.max(0.0) as u64));
            return;
        }
        // The UI's copy of a user message: its `images` repeat the data URLs of the
        // `response_item` message, which is what is sent; kept as mirrors for rewrites.
        "user_message" => {
            out.unit = Unit::Hidden;
            for (i, img) in p.get("images").items().iter().enumerate() {
                if let Some(pl) = url_payload(img).filter(|pl| matches!(pl, RawPayload::DataUrl(_))) {
                    let mut m = Site::new(0, Origin::User).media(pl, None, ptr("/payload/images", i));
                    m.mirror = true;
                    out.media.push(m);
                }
            }
            return;
        }
        "error" | "stream_error" => p.get("message").to_text().unwrap_or_else(|| p.to_string()),
        "turn_aborted" => format!("turn aborted: {}", p.get("reason").to_text().unwrap_or_default()),
        // A turn that ended on an error: 0.171.0 writes the provider's reply only here
        // (`error.message`, `error.codex_error_info`), not as an `error` event.
        "task_complete" | "turn_complete" if p.get("error").is_object() => {
            let err = p.get("error");
            let text = err.get("message").to_text().unwrap_or_else(|| err.to_string());
            failure(text, err, out);
            return;
        }
        _ => {
            out.unit = Unit::Hidden;
            return;
        }
    };
    failure(text, p, out);
}

/// One recorded failure; `at` holds its `codex_error_info` (or a bare `http_status_code`).
fn failure(text: String, at: &Value<'_>, out: &mut LineOut<'_>) {
    let mut e = RawEntry::new(Role::System);
    let status = http_status(at.get("codex_error_info")).or_else(|| at.get("http_status_code").as_f64());
    e.error = Some(ErrorRecord { text, status: status.and_then(super::http_status) });
    out.entry(e);
}

/// The HTTP status in a `codex_error_info`: flat (`{http_status_code}`) in older builds,
/// inside its variant in newer ones (`{"http_connection_failed": {"http_status_code": 404}}`).
fn http_status(info: &Value<'_>) -> Option<f64> {
    info.get("http_status_code")
        .as_f64()
        .or_else(|| info.keys().find_map(|k| info.at(&[k, "http_status_code"]).as_f64()))
}
