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
//!   tokens allowed (1048575)"), the estimate is scaled so that the session as
//!   it is estimates at the stated count, and the stated maximum is the window.
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

/// `--fit-context` reads JSON Lines sessions: a one-document session (an
/// opencode export, a Cline task) is refused, naming what it can do instead.
pub fn refuse_document(single_document: bool) -> anyhow::Result<()> {
    if single_document {
        anyhow::bail!(
            "--fit-context trims JSON Lines sessions (Claude Code, Codex, pi, Gemini CLI, Copilot CLI); this session is one document: exclude what is bulky instead"
        );
    }
    Ok(())
}

impl Rewrite {
    /// Plans the trim of `session` (after its exclusions, caps and fits are
    /// planned): notes for the bulkiest tool outputs, then images, until the
    /// estimate fits the budget. `model` is the one the user named, if any.
    pub fn fit_context(
        &mut self,
        session: &Session,
        source: &crate::reader::Source,
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
        let budget = window.saturating_sub(reserve_of(session.format, window) + window / 10);
        let candidates = Self::candidates(session, source);
        let (texts, images) = self.raw_tokens(session, source);
        let raw = texts + images.iter().map(|(_, t)| t).sum::<u64>();
        // Scaled so the session as it is estimates at the count the provider stated.
        // Where the provider refused it for the window without a count, the
        // session as it is was over the window at least: the estimate is raised to it.
        let target = match stated {
            Some((count, _)) => Some(count),
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
            self.ops.entry(c.line).or_default().push(Op::Elide { pointer: c.pointer.clone(), text: note });
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
            self.ops.entry(a.line).or_default().push(Op::Note { pointer: a.pointer.clone(), text: note.clone() });
            self.replaced.extend(a.span.map(|s| (s.offset, s.len)));
            for m in &a.mirrors {
                self.replaced.push((m.offset, m.len));
                let line = if m.line == 0 { a.line } else { m.line };
                self.ops.entry(line).or_default().push(Op::Blank { offset: m.offset, len: m.len });
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
    fn raw_tokens(&self, session: &Session, source: &crate::reader::Source) -> (u64, Vec<(usize, u64)>) {
        let removed = |a: &Attachment| {
            !a.sent()
                || self.summary.excluded.contains(&a.reference)
                || self.summary.capped.contains(&a.reference)
                || self.summary.healed.contains(&a.reference)
        };
        let mut seen = std::collections::HashSet::new();
        let mut bytes = 0u64;
        for r in session.records.iter().filter(|r| seen.insert(r.offset)) {
            let end = r.offset + r.len;
            let inside = |o: u64| (r.offset..end).contains(&o);
            let payloads: u64 = (session.attachments.iter())
                .flat_map(|a| a.span.iter().chain(&a.mirrors))
                .filter(|s| inside(s.offset))
                .map(|s| s.len)
                .sum();
            bytes += r.len.saturating_sub(payloads + Self::unsent_in(session, source, r));
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
        (bytes.div_ceil(BYTES_PER_TOKEN), media)
    }

    /// Bytes of record `r` its agent never sends: all but its message where
    /// the record wraps one in metadata (Claude Code's and pi's `message`,
    /// Codex's `payload`; Claude Code's `toolUseResult`, the UI's copy of a
    /// tool's output, is outside it). Read one record at a time.
    fn unsent_in(session: &Session, source: &crate::reader::Source, r: &crate::model::Record) -> u64 {
        let member = match session.format {
            Format::ClaudeCode | Format::Pi => "/message",
            Format::Codex => "/payload",
            _ => return 0,
        };
        let Ok(text) = source.read_range(r.offset, r.len) else { return 0 };
        // Claude Code's `prompt_snapshot` keeps the system prompt and tools it
        // sent: counted in the margin, not as history (a session has several).
        if crate::json::splice::locate(&text, "/attachment/systemPrompt").is_some() {
            return r.len;
        }
        crate::json::splice::locate(&text, member).map_or(0, |range| r.len.saturating_sub(range.len() as u64))
    }

    /// The tool outputs of `session` the trim may elide: the text of each
    /// result's output, at least [`MIN_BYTES`] long, with its place.
    fn candidates(session: &Session, source: &crate::reader::Source) -> Vec<Candidate> {
        let results: std::collections::HashSet<u64> = session.tool_results.iter().map(|t| t.line).collect();
        // The last turn starts at the last user entry that is not a tool result.
        let last_turn = (session.entries.iter().rev())
            .find(|e| e.role == crate::model::Role::User && !results.contains(&e.line))
            .map_or(0, |e| e.line);
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for r in session.records.iter().filter(|r| results.contains(&r.line) && seen.insert(r.offset)) {
            if r.len < MIN_BYTES {
                continue;
            }
            let Ok(text) = source.read_range(r.offset, r.len) else { continue };
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text) else { continue };
            let mut found = Vec::new();
            outputs(&v, "", None, &mut found);
            for (pointer, bytes, call_id) in found.into_iter().filter(|(_, b, _)| *b >= MIN_BYTES) {
                let tool = (session.tool_calls.iter())
                    .find(|c| Some(&c.call_id) == call_id.as_ref())
                    .and_then(|c| c.name.clone());
                out.push(Candidate { line: r.line, pointer, bytes, call_id, tool, last_turn: r.line > last_turn });
            }
        }
        out
    }
}

/// The output strings of the tool results in `v` (each with its pointer, its
/// length and the call it answers), in the shapes the agents write: an
/// Anthropic `tool_result` block (Claude Code), a Responses
/// `function_call_output` (Codex), a message of role `toolResult` (pi) or
/// `tool` (Chat Completions). Claude Code's `toolUseResult` is not sent.
fn outputs(v: &serde_json::Value, at: &str, call: Option<String>, out: &mut Vec<(String, u64, Option<String>)>) {
    use serde_json::Value;
    let texts = |v: &Value, at: &str, call: &Option<String>, out: &mut Vec<(String, u64, Option<String>)>| match v {
        Value::String(s) => out.push((at.to_string(), s.len() as u64, call.clone())),
        Value::Array(items) => {
            for (j, item) in items.iter().enumerate() {
                if let Some(Value::String(s)) = item.get("text") {
                    out.push((format!("{at}/{j}/text"), s.len() as u64, call.clone()));
                }
            }
        }
        _ => {}
    };
    match v {
        Value::Object(map) => {
            let ty = map.get("type").and_then(Value::as_str);
            let role = map.get("role").and_then(Value::as_str);
            let id = ["tool_use_id", "call_id", "toolCallId", "tool_call_id"]
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
                .map(str::to_string)
                .or(call);
            match (ty, role) {
                (Some("tool_result"), _) => {
                    if let Some(c) = map.get("content") {
                        texts(c, &format!("{at}/content"), &id, out);
                    }
                }
                (Some("function_call_output" | "custom_tool_call_output"), _) => {
                    if let Some(c) = map.get("output") {
                        texts(c, &format!("{at}/output"), &id, out);
                    }
                }
                (_, Some("toolResult" | "tool")) => {
                    if let Some(c) = map.get("content") {
                        texts(c, &format!("{at}/content"), &id, out);
                    }
                }
                _ => {
                    for (k, x) in map.iter().filter(|(k, _)| k.as_str() != "toolUseResult") {
                        outputs(x, &format!("{at}/{}", escape(k)), id.clone(), out);
                    }
                }
            }
        }
        Value::Array(items) => {
            for (j, x) in items.iter().enumerate() {
                outputs(x, &format!("{at}/{j}"), call.clone(), out);
            }
        }
        _ => {}
    }
}

/// A JSON pointer token for member `k` (RFC 6901).
fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
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

    #[test]
    fn outputs_in_each_shape() {
        let big = "x".repeat(10);
        let cc = serde_json::json!({"message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":big}]},"toolUseResult":{"stdout":big}});
        let mut found = Vec::new();
        outputs(&cc, "", None, &mut found);
        assert_eq!(found, vec![("/message/content/0/content".to_string(), 10, Some("t1".to_string()))]);
        let codex = serde_json::json!({"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":big}});
        found.clear();
        outputs(&codex, "", None, &mut found);
        assert_eq!(found, vec![("/payload/output".to_string(), 10, Some("c1".to_string()))]);
        let pi = serde_json::json!({"type":"message","message":{"role":"toolResult","toolCallId":"p1","content":[{"type":"text","text":big}]}});
        found.clear();
        outputs(&pi, "", None, &mut found);
        assert_eq!(found, vec![("/message/content/0/text".to_string(), 10, Some("p1".to_string()))]);
    }
}
