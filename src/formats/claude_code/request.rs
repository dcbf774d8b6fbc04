//! How Claude Code (2.1.3xx) turns its records into the messages it sends.
//!
//! Besides its `user` and `assistant` lines it sends the `rendered` text of
//! its `attachment` records (environment, model, skill listing, date,
//! reminders…), as the real agent showed against the suite's fake provider:
//!
//! * `renderedRole: "system"`: a `role: "system"` message in place, in the
//!   `messages` list (not the top-level `system`); consecutive ones are one
//!   message, their texts without the `<system-reminder>` wrapper, joined by a
//!   blank line;
//! * `renderedRole: "user"`: a text block that moves up to the start of the
//!   turn — after the last assistant message or tool result — and so joins
//!   the user message there;
//! * a `system` record of subtype `local_command` (a slash command's output)
//!   is the user's text;
//! * consecutive user messages are one message, and a text block that ends
//!   one of them before the next gets a `\n` (`continue` then `continue`
//!   sends `"continue\n"`, `"continue"`).
//!
//! That is its request on a model that takes mid-conversation system turns
//! (claude-opus-4-8 and later: the default); on an earlier one (claude-sonnet-4-5,
//! claude-opus-4-7…) it sends every attachment as text of the user turn
//! instead ([`Plain`]). Which one a session gets follows the model of its
//! latest answer ([`system_turns`]).
//!
//! What the session cannot give — the system prompt and the tool list the
//! agent sends with every request — is not in these messages.

use serde_json::Value;

use crate::request::canon::{Msg, Part, WireRole};
use crate::request::write::Writer;
use crate::request::{Out, Render};

/// One record's messages: a line of the history, or an attachment's text.
pub fn record(v: &Value) -> Vec<Msg> {
    if v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
        return Vec::new();
    }
    match v.get("type").and_then(Value::as_str) {
        Some("user" | "assistant") => {
            v.get("message").and_then(crate::request::read::anthropic_msg).into_iter().collect()
        }
        Some("attachment") => attachment(v).into_iter().collect(),
        // A local command's output (`/compact`'s "Compaction failed · …"): sent
        // as the user's text, as Claude Code 2.1.332 sent it to the suite's provider.
        Some("system") if v.get("subtype").and_then(Value::as_str) == Some("local_command") => (v.get("content"))
            .and_then(Value::as_str)
            .map(|t| Msg::new(WireRole::User, vec![Part::Text(t.to_string())]))
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

fn attachment(v: &Value) -> Option<Msg> {
    let texts = rendered(v)?;
    if v.get("renderedRole").and_then(Value::as_str) == Some("system") {
        let joined = texts.iter().map(|t| unwrap_reminder(t)).collect::<Vec<_>>().join("\n\n");
        return Some(Msg::new(WireRole::System, vec![Part::Text(joined)]));
    }
    Some(Msg::new(WireRole::User, texts.into_iter().map(Part::Text).collect()))
}

/// An attachment's `rendered` texts, as written (a list of text blocks is one text).
fn rendered(v: &Value) -> Option<Vec<String>> {
    let texts: Vec<String> = v
        .get("rendered")?
        .as_array()?
        .iter()
        .filter_map(|r| match r.get("content")? {
            Value::String(s) => Some(s.clone()),
            Value::Array(blocks) => {
                Some(blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"))
            }
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then_some(texts)
}

/// The text inside `<system-reminder>\n…\n</system-reminder>`, else the text.
fn unwrap_reminder(t: &str) -> &str {
    let t = t.trim();
    t.strip_prefix("<system-reminder>\n").and_then(|r| r.strip_suffix("\n</system-reminder>")).unwrap_or(t)
}

/// Claude Code's ordering of one turn: the messages since the last assistant
/// message or tool result, held until the next one, so that user-role
/// attachment text can move to the turn's start as the agent moves it.
pub struct Turn {
    held: Vec<Msg>,
    /// How many user-role attachment messages lead `held`.
    lead: usize,
    /// Its `role: "system"` messages stay in `messages` (Anthropic's API only).
    inline_system: bool,
}

impl Turn {
    pub fn new(inline_system: bool) -> Turn {
        Turn { held: Vec::new(), lead: 0, inline_system }
    }

    pub fn push<W: std::io::Write>(&mut self, v: &Value, w: &mut Writer<W>) -> std::io::Result<()> {
        let from_attachment = v.get("type").and_then(Value::as_str) == Some("attachment");
        for m in record(v) {
            match (from_attachment, m.role) {
                (true, WireRole::User) => {
                    self.held.insert(self.lead, m);
                    self.lead += 1;
                }
                (true, WireRole::System) => match self.held.last_mut() {
                    Some(prev) if prev.role == WireRole::System => join_system(prev, m),
                    _ => self.held.push(m),
                },
                _ => self.push_msg(m, w)?,
            }
        }
        Ok(())
    }

    /// A message of the history itself (or one the rewrite adds).
    pub fn push_msg<W: std::io::Write>(&mut self, m: Msg, w: &mut Writer<W>) -> std::io::Result<()> {
        let starts_turn = m.role == WireRole::Assistant || m.parts.iter().any(|p| matches!(p, Part::Result { .. }));
        if starts_turn {
            self.flush(w)?;
            w.push(m)
        } else {
            self.held.push(m);
            Ok(())
        }
    }

    pub fn flush<W: std::io::Write>(&mut self, w: &mut Writer<W>) -> std::io::Result<()> {
        self.lead = 0;
        let mut out: Vec<Msg> = Vec::new();
        for m in std::mem::take(&mut self.held) {
            match out.last_mut() {
                Some(prev) if prev.role == WireRole::User && m.role == WireRole::User => {
                    if let Some(Part::Text(t)) = prev.parts.last_mut() {
                        t.push('\n');
                    }
                    prev.parts.extend(m.parts);
                }
                _ => out.push(m),
            }
        }
        out.into_iter().try_for_each(|m| w.push(m))
    }
}

fn join_system(prev: &mut Msg, m: Msg) {
    for p in m.parts {
        match (prev.parts.last_mut(), p) {
            (Some(Part::Text(a)), Part::Text(b)) => {
                a.push_str("\n\n");
                a.push_str(&b);
            }
            (_, p) => prev.parts.push(p),
        }
    }
}

/// Claude Code's models oldest first, as 2.1.332 orders them: one before
/// claude-opus-4-8 takes no `role: "system"` message inside `messages`.
const MODELS: &[&str] = &[
    "claude-opus-4-0",
    "claude-sonnet-4-0",
    "claude-opus-4-1",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
];

/// Whether Claude Code sends its system-role attachments as `role: "system"`
/// messages on `model` (its `mid_conv_system` capability): not on claude-3
/// models nor on those before claude-opus-4-8, yes on later and unknown ones
/// (the default, claude-opus-5-5, included). A session that names no model is
/// taken for the default. Provider spellings (`us.anthropic.…-v1:0`,
/// `…@20250929`, a date suffix) name the same model.
pub fn system_turns(model: Option<&str>) -> bool {
    let Some(model) = model else { return true };
    if model.contains("claude-3") {
        return false;
    }
    // `claude-opus-4-20250514` is claude-opus-4-0: a date right after the major version.
    let known = MODELS.iter().position(|m| {
        model.split_once(m).is_some_and(|(_, rest)| !rest.starts_with(|c: char| c.is_ascii_digit()))
            || m.strip_suffix("-0").is_some_and(|base| {
                model
                    .split_once(&format!("{base}-"))
                    .is_some_and(|(_, rest)| rest.len() >= 8 && rest[..8].bytes().all(|b| b.is_ascii_digit()))
            })
    });
    known.is_none_or(|i| MODELS[i] == "claude-opus-4-8")
}

/// Claude Code's request on a model without system turns ([`system_turns`]):
/// an attachment's text, `<system-reminder>` wrapper and all, is a text block
/// of the user turn it belongs to, as 2.1.332 sent it on claude-sonnet-4-5:
///
/// * in a turn of the user's text, the turn's attachments come first, in file
///   order, the last one ending with `\n` (the user's text joins it);
/// * in a turn that answers tool calls, each goes at the end of the last
///   result's content, the text block before it ending with `\n`;
/// * the user's own text joins the turn's message, a text block it follows
///   ending with `\n` (a result's content is left as it is).
#[derive(Default)]
pub struct Plain {
    msg: Option<Msg>,
    /// The attachment texts of a turn of the user's text, until it ends.
    group: Vec<String>,
}

impl Plain {
    pub fn new() -> Plain {
        Plain::default()
    }

    fn attach(&mut self, text: String) {
        let last_result =
            self.msg.as_mut().and_then(|m| m.parts.iter_mut().rev().find(|p| matches!(p, Part::Result { .. })));
        match last_result {
            Some(Part::Result { parts, .. }) => {
                if let Some(Part::Text(t)) = parts.last_mut() {
                    t.push('\n');
                }
                parts.push(Part::Text(text));
            }
            _ => self.group.push(text),
        }
    }

    fn push_msg<W: std::io::Write>(&mut self, m: Msg, w: &mut Writer<W>) -> std::io::Result<()> {
        let results = m.parts.iter().any(|p| matches!(p, Part::Result { .. }));
        match self.msg.as_mut() {
            Some(cur) if m.role == WireRole::User && !results => {
                if let Some(Part::Text(t)) = cur.parts.last_mut() {
                    t.push('\n');
                }
                cur.parts.extend(m.parts);
                Ok(())
            }
            _ if m.role == WireRole::User && (results || self.group.is_empty()) => {
                self.flush(w)?;
                self.msg = Some(m);
                Ok(())
            }
            // The user's text of a turn whose attachments came first.
            _ if m.role == WireRole::User => {
                self.msg = Some(m);
                Ok(())
            }
            _ => {
                self.flush(w)?;
                w.push(m)
            }
        }
    }

    fn flush<W: std::io::Write>(&mut self, w: &mut Writer<W>) -> std::io::Result<()> {
        let mut group: Vec<Part> = std::mem::take(&mut self.group).into_iter().map(Part::Text).collect();
        let msg = match self.msg.take() {
            Some(mut m) => {
                if let Some(Part::Text(t)) = group.last_mut() {
                    t.push('\n');
                }
                group.append(&mut m.parts);
                Msg::new(m.role, group)
            }
            None => Msg::new(WireRole::User, group),
        };
        if msg.parts.is_empty() { Ok(()) } else { w.push(msg) }
    }
}

impl Render for Plain {
    fn record(&mut self, v: &Value, _part: Option<u32>, w: &mut Out<'_>) -> std::io::Result<()> {
        if v.get("type").and_then(Value::as_str) == Some("attachment") {
            rendered(v).into_iter().flatten().for_each(|t| self.attach(t));
            return Ok(());
        }
        record(v).into_iter().try_for_each(|m| self.push_msg(m, w))
    }

    fn added(&mut self, m: Msg, w: &mut Out<'_>) -> std::io::Result<()> {
        self.push_msg(m, w)
    }

    fn finish(&mut self, w: &mut Out<'_>) -> std::io::Result<()> {
        self.flush(w)
    }
}

/// What a fork subagent sends that its file does not hold: its requests start
/// with the parent session's history up to the fork (`fork-context-ref`).
pub const FORK_ADDS: &[&str] = &[
    "system prompt",
    "tool list",
    "the parent session's history up to the fork (every request of a fork subagent starts with it)",
];

/// Whether `path` is a Claude Code fork subagent's transcript.
pub fn fork_of(path: &std::path::Path) -> bool {
    super::subagent::of(path).is_some_and(|s| s.fork.is_some())
}

impl Render for Turn {
    fn begin(&mut self, w: &mut Out<'_>) {
        if self.inline_system {
            w.inline_system();
        }
    }

    fn record(&mut self, v: &Value, _part: Option<u32>, w: &mut Out<'_>) -> std::io::Result<()> {
        self.push(v, w)
    }

    fn added(&mut self, m: Msg, w: &mut Out<'_>) -> std::io::Result<()> {
        self.push_msg(m, w)
    }

    fn finish(&mut self, w: &mut Out<'_>) -> std::io::Result<()> {
        self.flush(w)
    }
}
