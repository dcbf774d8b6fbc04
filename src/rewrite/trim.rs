//! `--fit-context`: the bulkiest tool outputs of a session that no longer fits
//! its model's context window are each replaced in place by a note, until the
//! estimate fits.
//!
//! The estimate is made from what the reader already knows (each
//! provider-visible record's length, each attachment's payload span and size)
//! and from one read of the records that hold tool results, one at a time, to
//! find their outputs' strings: memory stays at one record.
//!
//! - Text: [`BYTES_PER_TOKEN`] bytes of a record's message are one token
//!   (its JSON framing counted; media payloads, and the metadata around the
//!   message that the agent never sends, such as Claude Code's `toolUseResult`,
//!   not). Each record is read once for it, one at a time.
//! - Images: Anthropic's rule, `width × height / 750` tokens, at most
//!   [`IMAGE_TOKENS_MAX`] (the provider scales larger images down); a
//!   document: [`PAGE_TOKENS`] a page.
//! - Calibration: where the recorded error states the count ("prompt is too
//!   long: 215632 tokens > 200000 maximum", OpenAI's "maximum context length
//!   is 128000 tokens. However, your messages resulted in 130412 tokens",
//!   Gemini's "input token count (1196265) exceeds the maximum number of
//!   tokens allowed (1048575)"), the estimate is raised so that the session as
//!   it is estimates at the stated count (never lowered: a smaller count is of
//!   a request the agent had cut), and the stated maximum is the window.
//!   Where the error states no count (the Responses API's
//!   `context_length_exceeded`) but was one of the window, the estimate is
//!   raised to just over the window: the provider refused it for that.
//! - Otherwise the window is `--context-tokens N`, else the model family's
//!   ([`window_of`]). The budget is the window less the agent's output reserve
//!   ([`reserve_of`]) and a margin of a tenth of the window (the system
//!   prompt and tool list the agent adds, which no session holds).
//!
//! What goes, in order: tool outputs of earlier turns before those of the
//! last turn; among them the bulkiest first, the oldest first at equal size;
//! then, if still over, images, oldest first. Tool calls and results stay (a
//! result keeps its block, only its text becomes the note), and so does every
//! user and assistant text.

use serde::Serialize;

pub mod places;

use super::{Op, Rewrite};
use crate::model::{Attachment, Format, Origin, Session};
use crate::text::units::size;

/// Bytes of session text per token: the common rule of thumb for English and
/// code (providers' tokenizers give 3.5–4.5); the calibration corrects it
/// where the provider stated its count.
pub const BYTES_PER_TOKEN: u64 = 4;
/// An image's tokens at most: Anthropic scales an image over ~1.15 MP down.
pub const IMAGE_TOKENS_MAX: u64 = 1_600;
/// A document page's tokens (Anthropic: 1,500–3,000 a page of text and image).
pub const PAGE_TOKENS: u64 = 1_500;
/// Outputs smaller than this are never elided: the note would save little.
const MIN_BYTES: u64 = 2_048;

/// What the user asked of the trim.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContextOptions {
    /// `--context-tokens N`: the model's window, instead of the rules'.
    pub tokens: Option<u64>,
}

/// One tool output or image the trim replaced by a note.
#[derive(Clone, Debug, Serialize)]
pub struct Elided {
    pub line: u64,
    /// `tool_output` or `image`.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Its bytes in the session (the decoded size for an image).
    pub bytes: u64,
    /// Its estimated tokens (calibrated).
    pub tokens: u64,
}

/// The context estimate before and after the trim, in tokens.
#[derive(Clone, Debug, Serialize)]
pub struct Estimate {
    pub before: u64,
    pub after: u64,
    /// What the request may hold: the window less the reserve and the margin.
    pub budget: u64,
    pub window: u64,
    /// Where the window came from: `error` (the recorded error stated it),
    /// `--context-tokens`, or `model <name>`.
    pub window_from: String,
    /// The count the provider stated for the session as it is, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stated: Option<u64>,
    /// No count was stated, but the provider refused the session for its
    /// window: the estimate was raised to just over that window.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub raised: bool,
}

impl Estimate {
    pub fn fits(&self) -> bool {
        self.after <= self.budget
    }
}

/// The estimate in one line, for `preview` and `repair`.
pub fn describe(e: &Estimate) -> String {
    let from = match (e.window_from.as_str(), e.stated) {
        ("error", Some(n)) => format!("as the provider's error states, which counted {n} tokens"),
        ("error", None) => "as the provider's error states".to_string(),
        (other, _) => format!("from {other}"),
    };
    let raised =
        if e.raised { " (raised to just over the window: the provider refused the session for it)" } else { "" };
    let verdict = if e.fits() { "fits" } else { "still over: exclude more, or lower --max-images" };
    format!(
        "context: about {} tokens before{raised}, {} after, of a budget of {} (a window of {} {from}, less the agent's output reserve and a margin): {verdict}",
        e.before, e.after, e.budget, e.window
    )
}

/// A tool output the trim may elide.
struct Candidate {
    line: u64,
    /// The line its ops are keyed by: its own, or 1 in a one-document session.
    key: u64,
    pointer: String,
    bytes: u64,
    call_id: Option<String>,
    tool: Option<String>,
    last_turn: bool,
}

/// Why no trim can be planned.
#[derive(Debug)]
pub struct NoWindow(pub String);

impl std::fmt::Display for NoWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where the trim reads a session: the file, and whether it is one JSON
/// document (an opencode export, a Cline task) whose ops are all keyed by
/// line 1 and whose pointers are document-wide.
pub struct Place<'a> {
    pub source: &'a crate::reader::Source,
    pub single_document: bool,
}

impl Rewrite {
    /// Plans the trim of `session` (after its exclusions, caps and fits are
    /// planned): notes for the bulkiest tool outputs, then images, until the
    /// estimate fits the budget. `model` is the one the user named, if any.
    pub fn fit_context(
        &mut self,
        session: &Session,
        place: &Place<'_>,
        opts: ContextOptions,
        model: Option<&str>,
    ) -> Result<(), NoWindow> {
        let stated = stated_counts(session);
        let model = model.map(str::to_string).or_else(|| latest_model(session));
        let (window, window_from) = match (opts.tokens, stated, model.as_deref().and_then(window_of)) {
            (Some(n), _, _) => (n, "--context-tokens".to_string()),
            (None, Some((_, max)), _) => (max, "error".to_string()),
            (None, None, Some(n)) => (n, format!("model {}", model.as_deref().unwrap_or_default())),
            (None, None, None) => {
                let which = model.map_or_else(|| "the session names no model".to_string(), |m| format!("model {m}"));
                return Err(NoWindow(format!(
                    "--fit-context: the context window is not known ({which}, and no recorded error states it): name it with --context-tokens N"
                )));
            }
        };
        let key = |line: u64| if place.single_document { 1 } else { line };
        let budget = window.saturating_sub(reserve_of(session.format, window) + window / 10);
        let candidates = Self::candidates(session, place);
        let (texts, images) = self.raw_tokens(session, place);
        let raw = texts + images.iter().map(|(_, t)| t).sum::<u64>();
        // Scaled so the session as it is estimates at the count the provider stated.
        // Where the provider refused it for the window without a count, the
        // session as it is was over the window at least: the estimate is raised to it.
        // A stated count below the estimate is of a request the agent had cut
        // (Cline's compaction sends a summary in place of the history it keeps
        // whole): the estimate of what the copy sends is never lowered.
        let target = match stated {
            Some((count, _)) if count >= raw => Some(count),
            Some(_) => None,
            None if refused_for_window(session) && raw <= window => Some(window + 1),
            None => None,
        };
        let raised = stated.is_none() && target.is_some();
        let scale = |t: u64| match target {
            Some(count) if raw > 0 => {
                u64::try_from(u128::from(t) * u128::from(count) / u128::from(raw)).unwrap_or(u64::MAX)
            }
            _ => t,
        };
        let before = scale(raw);
        let mut after = before;
        let mut order: Vec<&Candidate> = candidates.iter().collect();
        order.sort_by_key(|c| (c.last_turn, std::cmp::Reverse(c.bytes), c.line));
        for c in order {
            if after <= budget {
                break;
            }
            let note = output_note(c);
            let saved = scale(c.bytes.div_ceil(BYTES_PER_TOKEN)).saturating_sub(scale(note_tokens(&note)));
            self.ops.entry(c.key).or_default().push(Op::Elide { pointer: c.pointer.clone(), text: note });
            after = after.saturating_sub(saved);
            let tokens = scale(c.bytes.div_ceil(BYTES_PER_TOKEN));
            let e = Elided { line: c.line, kind: "tool_output", call_id: c.call_id.clone(), bytes: c.bytes, tokens };
            self.summary.elided.push(e);
        }
        for (i, tokens) in images {
            if after <= budget {
                break;
            }
            let a = &session.attachments[i];
            let note = image_note(a);
            self.ops.entry(key(a.line)).or_default().push(Op::Note { pointer: a.pointer.clone(), text: note.clone() });
            self.replaced.extend(a.span.map(|s| (s.offset, s.len)));
            for m in &a.mirrors {
                self.replaced.push((m.offset, m.len));
                let line = if m.line == 0 { a.line } else { m.line };
                self.ops.entry(key(line)).or_default().push(Op::Blank { offset: m.offset, len: m.len });
            }
            after = after.saturating_sub(scale(tokens).saturating_sub(scale(note_tokens(&note))));
            let e = Elided {
                line: a.line,
                kind: "image",
                call_id: a.call_id.clone(),
                bytes: a.bytes.unwrap_or(0),
                tokens: scale(tokens),
            };
            self.summary.elided.push(e);
        }
        let stated = stated.map(|s| s.0);
        self.summary.context = Some(Estimate { before, after, budget, window, window_from, stated, raised });
        Ok(())
    }

    /// The raw estimate: the text tokens of every provider-visible record
    /// (payloads and what the rewrite already replaced aside), and each image
    /// or document still sent with its tokens, in history order.
    fn raw_tokens(&self, session: &Session, place: &Place<'_>) -> (u64, Vec<(usize, u64)>) {
        let removed = |a: &Attachment| {
            !a.sent()
                || super::gemini_cli_repeated(session, a)
                || self.summary.excluded.contains(&a.reference)
                || self.summary.capped.contains(&a.reference)
                || self.summary.healed.contains(&a.reference)
        };
        let spans: Vec<(u64, u64)> = {
            let mut all: Vec<(u64, u64)> = (session.attachments.iter())
                .flat_map(|a| a.span.iter().chain(&a.mirrors))
                .map(|s| (s.offset, s.len))
                .collect();
            all.sort_unstable();
            all
        };
        // The payload bytes that start inside [start, end) of the file.
        let payloads = |start: u64, end: u64| -> u64 {
            let from = spans.partition_point(|s| s.0 < start);
            spans[from..].iter().take_while(|s| s.0 < end).map(|s| s.1).sum()
        };
        let repeats = Repeats::of(session);
        let mut seen = std::collections::HashSet::new();
        let mut bytes = 0u64;
        for r in session.records.iter().filter(|r| seen.insert((r.offset, r.part))) {
            bytes += match Self::sent_ranges(session, place, r, &repeats) {
                Some(ranges) => ranges
                    .iter()
                    .map(|x| (x.end - x.start) as u64 - payloads(r.offset + x.start as u64, r.offset + x.end as u64))
                    .sum(),
                None => r.len.saturating_sub(payloads(r.offset, r.offset + r.len) + Self::unsent_in(session, place, r)),
            };
        }
        let mut media = Vec::new();
        for (i, a) in session.attachments.iter().enumerate().filter(|(_, a)| !removed(a)) {
            let tokens = if a.is_image() {
                match (a.width, a.height) {
                    (Some(w), Some(h)) => (u64::from(w) * u64::from(h) / 750).clamp(1, IMAGE_TOKENS_MAX),
                    _ => IMAGE_TOKENS_MAX,
                }
            } else {
                u64::from(a.pages.unwrap_or(1)) * PAGE_TOKENS
            };
            if a.is_image() && a.origin != Origin::Assistant {
                media.push((i, tokens));
            } else {
                bytes += tokens * BYTES_PER_TOKEN;
            }
        }
        bytes += self.planned_notes(session, place);
        (bytes.div_ceil(BYTES_PER_TOKEN), media)
    }

    /// The bytes of the notes already planned in place of excluded and capped
    /// attachments that the copy still sends (the trim's own come later): they
    /// are text the provider counts.
    fn planned_notes(&self, session: &Session, place: &Place<'_>) -> u64 {
        let key = |line: u64| if place.single_document { 1 } else { line };
        let note = |a: &Attachment| {
            self.ops.get(&key(a.line))?.iter().find_map(|op| match op {
                Op::Note { pointer, text } if *pointer == a.pointer => Some(text.len() as u64),
                _ => None,
            })
        };
        (session.attachments.iter())
            .filter(|a| a.sent() && !super::gemini_cli_repeated(session, a))
            .filter(|a| self.summary.excluded.contains(&a.reference) || self.summary.capped.contains(&a.reference))
            .filter_map(note)
            .sum()
    }

    /// The byte ranges of record `r` (relative to it) that its agent sends,
    /// where the trim knows them apart from the rest: a one-document session's
    /// messages (not its metadata, nor Cline's system prompt, which the margin
    /// counts), and Gemini CLI's messages less the metadata it keeps beside
    /// them and the repeated responses the repair leaves out. `None`: the
    /// whole record less [`Self::unsent_in`].
    fn sent_ranges(
        session: &Session,
        place: &Place<'_>,
        r: &crate::model::Record,
        repeats: &Repeats,
    ) -> Option<Vec<std::ops::Range<usize>>> {
        if !place.single_document && session.format != Format::GeminiCli {
            return None;
        }
        let text = place.source.read_range(r.offset, r.len).ok()?;
        if place.single_document {
            return places::document_messages(&text).map(|(_, ms)| ms);
        }
        let Some(gone) = repeats.gone(r.line, &text) else { return Some(Vec::new()) };
        Some(less(places::gemini_cli_sent(&text, r.part, &gone), &repeats.copied(r.line, &text)))
    }

    /// Bytes of record `r` its agent never sends: all but its message where
    /// the record wraps one in metadata (Claude Code's and pi's `message`,
    /// Codex's `payload`; Claude Code's `toolUseResult`, the UI's copy of a
    /// tool's output, is outside it). Read one record at a time.
    fn unsent_in(session: &Session, place: &Place<'_>, r: &crate::model::Record) -> u64 {
        let member = match session.format {
            Format::ClaudeCode | Format::Pi => "/message",
            Format::Codex => "/payload",
            _ => return 0,
        };
        let Ok(text) = place.source.read_range(r.offset, r.len) else { return 0 };
        // Claude Code's `prompt_snapshot` keeps the system prompt and tools it
        // sent: counted in the margin, not as history (a session has several).
        if crate::json::splice::locate(&text, "/attachment/systemPrompt").is_some() {
            return r.len;
        }
        crate::json::splice::locate(&text, member).map_or(0, |range| r.len.saturating_sub(range.len() as u64))
    }

    /// The tool outputs of `session` the trim may elide: the text of each
    /// result's output, at least [`MIN_BYTES`] long, with its place.
    fn candidates(session: &Session, place: &Place<'_>) -> Vec<Candidate> {
        let results: std::collections::HashSet<u64> = session.tool_results.iter().map(|t| t.line).collect();
        // The last turn starts at the last user entry that is not a tool result.
        let last_turn = (session.entries.iter().rev())
            .find(|e| e.role == crate::model::Role::User && !results.contains(&e.line))
            .map_or(0, |e| e.line);
        let found = if place.single_document {
            Self::document_outputs(session, place)
        } else {
            Self::line_outputs(session, place, &results)
        };
        let mut out = Vec::new();
        for (line, key, (pointer, bytes, call_id)) in found.into_iter().filter(|(_, _, f)| f.1 >= MIN_BYTES) {
            let tool =
                (session.tool_calls.iter()).find(|c| Some(&c.call_id) == call_id.as_ref()).and_then(|c| c.name.clone());
            out.push(Candidate { line, key, pointer, bytes, call_id, tool, last_turn: line > last_turn });
        }
        out
    }

    /// The tool outputs of a JSON Lines session, read one record at a time:
    /// of a checkpoint only its seen message (Gemini CLI), and none of a
    /// response the repair leaves out as a repeat.
    fn line_outputs(
        session: &Session,
        place: &Place<'_>,
        results: &std::collections::HashSet<u64>,
    ) -> Vec<(u64, u64, places::Found)> {
        let repeats = Repeats::of(session);
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for r in session.records.iter().filter(|r| results.contains(&r.line) && seen.insert((r.offset, r.part))) {
            if r.len < MIN_BYTES {
                continue;
            }
            let Ok(text) = place.source.read_range(r.offset, r.len) else { continue };
            let Some(gone) = repeats.gone(r.line, &text) else { continue };
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text) else { continue };
            let mut found = Vec::new();
            places::outputs(&v, "", None, &mut found);
            let part = r.part.map(|p| {
                let base = if v.get("$set").is_some() { "/$set/messages" } else { "/messages" };
                format!("{base}/{p}/")
            });
            let within = |p: &str, base: &str| p.starts_with(base) && p.as_bytes().get(base.len()) == Some(&b'/');
            let copied = repeats.copied(r.line, &text);
            let is_copy = |p: &str| {
                crate::json::splice::locate(&text, p)
                    .is_some_and(|at| copied.iter().any(|c| c.start <= at.start && at.end <= c.end))
            };
            found.retain(|(p, _, _)| {
                part.as_deref().is_none_or(|b| p.starts_with(b)) && !gone.iter().any(|g| within(p, g)) && !is_copy(p)
            });
            out.extend(found.into_iter().map(|f| (r.line, r.line, f)));
        }
        out
    }

    /// The tool outputs of a one-document session: its messages read one at a
    /// time from the document, each on the line it starts on, its pointers
    /// document-wide. Messages Cline no longer sends (its deleted range, and
    /// the results of the first message after it) are not looked at.
    fn document_outputs(session: &Session, place: &Place<'_>) -> Vec<(u64, u64, places::Found)> {
        let Some(r) = session.records.first() else { return Vec::new() };
        let Ok(text) = place.source.read_range(r.offset, r.len) else { return Vec::new() };
        let Some((base, messages)) = places::document_messages(&text) else { return Vec::new() };
        let lines = places::message_lines(&text, &messages);
        let mut out = Vec::new();
        for (k, (m, line)) in messages.into_iter().zip(lines).enumerate() {
            if session.cut.is_some_and(|c| c.drops(k) || c.orphans(k)) {
                continue;
            }
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text[m]) else { continue };
            let mut found = Vec::new();
            places::outputs(&v, &format!("{base}/{k}"), None, &mut found);
            out.extend(found.into_iter().map(|f| (line, 1, f)));
        }
        out
    }
}

/// Gemini CLI's repeated responses, which `repair` and `preview` leave out
/// (`mend`): the call ids repeated, by the line that repeats them.
struct Repeats(std::collections::HashMap<u64, Vec<String>>);

impl Repeats {
    fn of(session: &Session) -> Repeats {
        let mut by_line: std::collections::HashMap<u64, Vec<String>> = std::collections::HashMap::new();
        if session.format == Format::GeminiCli {
            for f in session.structure.faults.iter().filter(|f| f.kind == crate::model::FaultKind::DuplicateResult) {
                by_line.entry(f.line).or_default().extend(f.call_id.clone());
            }
        }
        Repeats(by_line)
    }

    /// The pointers of the messages of record `text` (on `line`) that go as
    /// repeats; `None` when the whole record goes.
    fn gone(&self, line: u64, text: &[u8]) -> Option<Vec<String>> {
        let Some(ids) = self.0.get(&line) else { return Some(Vec::new()) };
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let gone = super::mend::gemini_cli_repeats(text, &ids, &[]);
        (!gone.iter().any(String::is_empty)).then_some(gone)
    }

    /// The byte ranges of record `text` (on `line`) that hold responses a late
    /// resume's checkpoint copied into another call's result: in a record that
    /// repeats responses, the copy leaves them out as it does the repeats.
    fn copied(&self, line: u64, text: &[u8]) -> Vec<std::ops::Range<usize>> {
        if !self.0.contains_key(&line) {
            return Vec::new();
        }
        super::mend::gemini_cli_foreign_parts(text).into_iter().map(|e| e.range).collect()
    }
}

/// `ranges` less every byte of `cut`.
fn less(ranges: Vec<std::ops::Range<usize>>, cut: &[std::ops::Range<usize>]) -> Vec<std::ops::Range<usize>> {
    let mut out = ranges;
    for c in cut {
        out = (out.into_iter())
            .flat_map(|r| {
                if c.end <= r.start || r.end <= c.start {
                    return vec![r];
                }
                [(r.start..c.start), (c.end..r.end)].into_iter().filter(|x| x.start < x.end).collect()
            })
            .collect();
    }
    out
}

fn note_tokens(note: &str) -> u64 {
    (note.len() as u64).div_ceil(BYTES_PER_TOKEN)
}

/// DESIGN's note for a tool output elided to fit the context window.
fn output_note(c: &Candidate) -> String {
    let tool = c.tool.as_deref().map_or_else(String::new, |t| format!(" of {t}"));
    format!(
        "[Tool output omitted to fit the context window: the output{tool} was {} (about {} tokens). The original session keeps it in full (line {}); run the tool again, or ask the user, if you need it.]",
        size(c.bytes),
        c.bytes.div_ceil(BYTES_PER_TOKEN),
        c.line
    )
}

/// DESIGN's note for an image elided to fit the context window.
fn image_note(a: &Attachment) -> String {
    let path = a.name.as_deref().or(a.url.as_deref()).unwrap_or("not recorded");
    format!(
        "[Image omitted to fit the context window. The original session keeps it (line {}). Original file: {path}]",
        a.line
    )
}

/// The model of the session's latest entry that names one (or the model a
/// change after it names).
fn latest_model(session: &Session) -> Option<String> {
    session.model.clone().or_else(|| {
        (session.entries.iter().rev())
            .filter_map(|e| e.model.as_deref())
            .find(|m| !m.starts_with('<'))
            .map(str::to_string)
    })
}

/// The context window of a model, by family, in tokens: what the providers
/// document for their current models (Anthropic's Claude: 200,000; OpenAI's
/// GPT-5 family, Codex's default: 272,000 of input; GPT-4.1: 1,047,576;
/// GPT-4o: 128,000; o3/o4: 200,000; Gemini: 1,048,576).
pub fn window_of(model: &str) -> Option<u64> {
    let m = model.to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    let table: &[(&str, u64)] = &[
        ("claude", 200_000),
        ("gpt-5", 272_000),
        ("codex", 272_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4o", 128_000),
        ("o3", 200_000),
        ("o4", 200_000),
        ("gemini", 1_048_576),
    ];
    table.iter().find(|(p, _)| m.starts_with(p) || m.contains(&format!("-{p}"))).map(|(_, n)| *n)
}

/// The output an agent keeps room for, in tokens: Claude Code's default
/// maximum output (32,000); Codex compacts at 90 % of the window; pi's
/// `reserveTokens` (16,384) and the same for the others.
pub fn reserve_of(format: Format, window: u64) -> u64 {
    match format {
        Format::ClaudeCode | Format::Anthropic => 32_000.min(window / 4),
        Format::Codex | Format::OpenaiResponses => window / 10,
        _ => 16_384.min(window / 4),
    }
}

/// The latest recorded error says the request was over the model's window.
fn refused_for_window(session: &Session) -> bool {
    let Some(e) = session.entries.iter().rev().find_map(|e| e.error.as_ref()) else { return false };
    let hint = crate::classify::Hint { status: e.status, provider: None };
    crate::classify::classify(&e.text, &hint).class == crate::classify::Class::ContextOverflow
}

/// The token count and the maximum the latest recorded error states.
fn stated_counts(session: &Session) -> Option<(u64, u64)> {
    let text = session.entries.iter().rev().find_map(|e| e.error.as_ref())?.text.to_ascii_lowercase();
    stated(&text)
}

/// "prompt is too long: 215632 tokens > 200000 maximum" (Anthropic), "maximum
/// context length is 128000 tokens. However, your messages resulted in 130412
/// tokens" (OpenAI), "The input token count (1196265) exceeds the maximum
/// number of tokens allowed (1048575)" (Gemini): (count, maximum).
pub fn stated(text: &str) -> Option<(u64, u64)> {
    let text = text.to_ascii_lowercase();
    let numbers = |s: &str| -> Vec<u64> {
        s.split(|c: char| !c.is_ascii_digit()).filter(|t| !t.is_empty()).filter_map(|t| t.parse().ok()).collect()
    };
    let after = |phrase: &str| text.find(phrase).map(|i| numbers(&text[i + phrase.len()..]));
    if let Some(n) = after("prompt is too long:") {
        return (n.len() >= 2).then(|| (n[0], n[1]));
    }
    if let Some(n) = after("maximum context length is") {
        return (n.len() >= 2).then(|| (n[1], n[0]));
    }
    if let Some(n) = after("input token count") {
        return (n.len() >= 2).then(|| (n[0], n[1]));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stated_counts_of_each_providers_wording() {
        let anthropic = r#"API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215632 tokens > 200000 maximum"}}"#;
        assert_eq!(stated(anthropic), Some((215_632, 200_000)));
        let openai = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.";
        assert_eq!(stated(openai), Some((130_412, 128_000)));
        let gemini = "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).";
        assert_eq!(stated(gemini), Some((1_196_265, 1_048_575)));
        assert_eq!(stated("Your input exceeds the context window of this model."), None);
    }

    #[test]
    fn windows_by_family() {
        assert_eq!(window_of("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(window_of("anthropic/claude-opus-4"), Some(200_000));
        assert_eq!(window_of("gpt-5.1-codex"), Some(272_000));
        assert_eq!(window_of("gemini-2.5-pro"), Some(1_048_576));
        assert_eq!(window_of("llama3"), None);
    }
}
