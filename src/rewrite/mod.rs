//! Rewrites of a session's provider-visible history: excluded attachments and
//! images over a per-request cap become notes in place, replayed reasoning is
//! stripped or made self-contained. The same edits feed `preview` (the request
//! the agent would send) and `repair` (a resumable copy in the agent's format).
//!
//! A rewrite is a list of [`Op`]s per record, addressed by JSON pointer; each is
//! turned into byte-range [`splice::Edit`]s on that record's text alone, so a
//! line no rewrite touches is copied byte for byte.

pub mod copy;
mod fit;
pub mod identity;
pub mod mend;
pub mod sparse;
pub mod trim;

use crate::json::splice;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::formats::Pairing;
use crate::model::Format;
use crate::model::{Attachment, FaultKind, ReasoningKind, Session};

/// What the user asked to change besides the overlay's exclusions.
#[derive(Clone, Copy, Debug, Default)]
pub struct RewriteOptions {
    /// Keep only the newest N images (user messages and tool results alike).
    pub max_images: Option<usize>,
    /// Remove replayed reasoning (OpenAI reasoning items, Anthropic thinking,
    /// Gemini thought signatures).
    pub strip_reasoning: bool,
    /// With `strip_reasoning`: only this provider family's reasoning
    /// ([`ReasoningKind::family`]); the rest is what other providers verify.
    pub strip_only: Option<&'static str>,
    /// Make OpenAI reasoning self-contained: drop `rs_` ids and references,
    /// keep `encrypted_content`.
    pub drop_reasoning_ids: bool,
}

impl RewriteOptions {
    /// Whether reasoning of `kind` is stripped.
    pub fn strips(&self, kind: ReasoningKind) -> bool {
        self.strip_reasoning && self.strip_only.is_none_or(|f| kind.family() == f)
    }
}

/// One change to one record, addressed by JSON pointer inside it.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Put a text note in place of the media block at `pointer`.
    Note { pointer: String, text: String },
    /// Empty the string whose text sits at this absolute file offset (a UI
    /// copy of an attachment, which is never sent).
    Blank { offset: u64, len: u64 },
    /// Remove the member or element at `pointer`.
    Remove { pointer: String },
    /// Remove the member `inner` of the JSON document serialized in the string
    /// at `pointer` (pi keeps an OpenAI reasoning item as `thinkingSignature`).
    RemoveInString { pointer: String, inner: String },
    /// Leave the whole record out.
    Drop,
    /// Take out the media block at `pointer` as the agent's own heal does: a
    /// content array it would empty keeps one `text` block instead.
    Heal { pointer: String, text: &'static str },
    /// After this record, answer a tool call the history left without a result.
    Answer { call_id: String, tool: Option<String> },
    /// Replace the payload text at `span` (an image over the provider's
    /// limits) with `data`, its fitted copy of type `to`, and put `note` after
    /// the block at `pointer`.
    Fit { pointer: String, span: crate::model::Span, data: String, from: String, to: String, note: String },
    /// Remove the result blocks answering a call that is not in the history;
    /// `message` is the message's index within a logged request.
    RemoveResult { call_id: String, message: Option<usize> },
    /// Remove the `user` messages that repeat a response to this call (Gemini CLI).
    RemoveRepeat { call_id: String },
    /// Replace the tool output string at `pointer` with the note `text`
    /// (`--fit-context`): the result's block stays, its text is the note.
    Elide { pointer: String, text: String },
    /// Replace each lone surrogate escape of the record (`\ud83c`: half of a
    /// character cut in two) with `\ufffd`, after every other op.
    WellFormed,
}

/// What a rewrite changed, for the user and for `--json`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// Refs replaced by the exclusion note.
    pub excluded: Vec<String>,
    /// Refs replaced by the image-cap note.
    pub capped: Vec<String>,
    /// Refs the agent healed away itself: sent as its placeholder, as it does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub healed: Vec<String>,
    /// Reasoning items removed.
    pub reasoning_removed: usize,
    /// Reasoning items whose ids were dropped.
    pub reasoning_ids_dropped: usize,
    /// Lines of failed requests left out of a repaired copy.
    pub failures_dropped: Vec<u64>,
    /// Tool calls given a result saying they were interrupted.
    pub calls_answered: Vec<String>,
    /// Results removed because their call is not in the history.
    pub results_removed: Vec<String>,
    /// Second responses to one call removed (Gemini CLI's repeated `user` records).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repeats_removed: Vec<String>,
    /// Refs of oversized images re-encoded to fit (`--fit`).
    pub fitted: Vec<String>,
    /// Oversized images `--fit` could not fit, with the reason.
    pub not_fitted: Vec<String>,
    /// Tool outputs and images replaced by a note to fit the context window (`--fit-context`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub elided: Vec<trim::Elided>,
    /// The context estimate before and after `--fit-context`, when it was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<trim::Estimate>,
    /// Lines whose lone surrogate escapes became U+FFFD: Anthropic's parser
    /// refuses them, the agents' own sanitizer makes the same replacement.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub surrogates_replaced: Vec<u64>,
}

/// The ops of a whole session, by the line their record starts on.
#[derive(Clone, Debug, Default)]
pub struct Rewrite {
    pub ops: BTreeMap<u64, Vec<Op>>,
    pub summary: Summary,
    /// Byte ranges of the file (offset, length) that the ops replace whole:
    /// the payloads of the attachments made notes or healed away, the mirrors
    /// blanked. What reads the records again need not read them ([`sparse`]).
    pub replaced: Vec<(u64, u64)>,
    /// Every payload's byte range (each attachment's bytes and their mirrors):
    /// those no op replaces a copy writes from the file as they are ([`Rewrite::kept`]).
    pub payloads: Vec<(u64, u64)>,
}

/// DESIGN's note for an excluded attachment.
pub fn exclusion_note(a: &Attachment) -> String {
    let name = a.name.as_deref().or(a.url.as_deref()).unwrap_or(&a.reference);
    let mime = a.mime_declared.as_deref().or(a.mime_detected.as_deref()).unwrap_or("unknown type");
    omitted_note(name, mime)
}

/// [`exclusion_note`] for an attachment known by its `name` and `mime` type
/// only (the proxy's, which sees a request, not a session).
pub fn omitted_note(name: &str, mime: &str) -> String {
    format!(
        "[Attachment omitted: \"{name}\" ({mime}). The model provider rejected a request that included it, so the user chose to continue without it. Its contents are not available; tell the user if you need them.]"
    )
}

/// DESIGN's note for an image dropped by the per-request cap.
pub fn cap_note(a: &Attachment, keep: usize) -> String {
    let path = a.name.as_deref().or(a.url.as_deref()).unwrap_or("not recorded");
    cap_note_for(keep, path)
}

/// [`cap_note`] for an image known by its file `path` only ("not recorded").
pub fn cap_note_for(keep: usize, path: &str) -> String {
    format!("[Earlier image omitted: this request keeps only the {keep} most recent images. Original file: {path}]")
}

impl Rewrite {
    /// Plans the rewrite of `session` (its overlay already applied): ops keyed
    /// by the line their record starts on, or all on 1 for a file that is one
    /// JSON document (`single_document`), whose pointers are document-wide.
    pub fn plan(session: &Session, opts: &RewriteOptions, single_document: bool) -> Rewrite {
        let key = |line: u64| if single_document { 1 } else { line };
        let mut r = Rewrite::default();
        let spans = session.attachments.iter().flat_map(|a| a.span.iter().chain(&a.mirrors));
        r.payloads = spans.map(|s| (s.offset, s.len)).collect();
        // Every copy of the bytes goes, on whatever line it sits.
        let blank_mirrors = |r: &mut Rewrite, a: &Attachment| {
            r.replaced.extend(a.span.map(|s| (s.offset, s.len)));
            for m in &a.mirrors {
                r.replaced.push((m.offset, m.len));
                let line = if m.line == 0 { a.line } else { m.line };
                r.ops.entry(key(line)).or_default().push(Op::Blank { offset: m.offset, len: m.len });
            }
        };
        let note = |r: &mut Rewrite, a: &Attachment, text: String| {
            r.ops.entry(key(a.line)).or_default().push(Op::Note { pointer: a.pointer.clone(), text });
            blank_mirrors(r, a);
        };
        for a in session.attachments.iter().filter(|a| a.excluded) {
            note(&mut r, a, exclusion_note(a));
            r.summary.excluded.push(a.reference.clone());
        }
        // What the agent itself no longer sends stays out: the same replacement as its heal.
        if let Some(text) = session.format.behaviour().heal_placeholder {
            for a in session.attachments.iter().filter(|a| a.healed && !a.excluded) {
                r.ops.entry(key(a.line)).or_default().push(Op::Heal { pointer: a.pointer.clone(), text });
                blank_mirrors(&mut r, a);
                r.summary.healed.push(a.reference.clone());
            }
        }
        if let Some(keep) = opts.max_images {
            // What the agent sends: a healed image is its placeholder already.
            // Nor are the images of a response Gemini CLI repeats: the repeat goes (`mend`).
            // Every `user` message of the line that repeats them goes, not only the first.
            let images: Vec<&Attachment> = (session.attachments.iter())
                .filter(|a| a.sent() && a.is_image() && !gemini_cli_repeated(session, a))
                .collect();
            let over = images.len().saturating_sub(keep);
            for a in &images[..over] {
                note(&mut r, a, cap_note(a, keep));
                r.summary.capped.push(a.reference.clone());
            }
        }
        // Bytes held on a line of their own that only names them (Copilot CLI's
        // `session.binary_asset`) go too, once nothing still sent names them.
        let removed =
            |a: &Attachment| r.summary.excluded.contains(&a.reference) || r.summary.capped.contains(&a.reference);
        let held = |a: &Attachment| a.span.filter(|s| s.line != 0 && s.line != a.line);
        let mut blanks = Vec::new();
        for a in session.attachments.iter().filter(|a| removed(a)) {
            let Some(s) = held(a) else { continue };
            let still_sent =
                session.attachments.iter().any(|b| !removed(b) && held(b).is_some_and(|t| t.offset == s.offset));
            if !still_sent && !blanks.contains(&s) {
                blanks.push(s);
            }
        }
        for s in blanks {
            r.ops.entry(key(s.line)).or_default().push(Op::Blank { offset: s.offset, len: s.len });
        }
        for x in &session.reasoning {
            let openai = matches!(
                x.kind,
                ReasoningKind::OpenaiEncrypted | ReasoningKind::OpenaiId | ReasoningKind::OpenaiReference
            );
            if x.kind == ReasoningKind::OpenaiReference && (opts.strips(x.kind) || opts.drop_reasoning_ids) {
                // Only the id goes: the text or call it names is sent as itself.
                r.summary.reasoning_ids_dropped += 1;
                r.ops.entry(key(x.line)).or_default().extend(x.id_at.iter().map(|p| Op::Remove { pointer: p.clone() }));
                continue;
            }
            let op = if opts.strips(x.kind) {
                r.summary.reasoning_removed += 1;
                match x.kind {
                    // A Gemini signature is a member of the part it signs: only it goes.
                    ReasoningKind::GeminiSignature => Op::Remove { pointer: gemini_signature(&x.pointer) },
                    _ if x.pointer.is_empty() || x.pointer == "/payload" => Op::Drop,
                    _ => Op::Remove { pointer: x.pointer.clone() },
                }
            } else if opts.strip_reasoning {
                continue;
            } else if opts.drop_reasoning_ids && openai && x.id.is_some() {
                r.summary.reasoning_ids_dropped += 1;
                match x.kind {
                    // pi sends the item serialized in its thinking block's signature.
                    ReasoningKind::OpenaiEncrypted if session.format == Format::Pi => {
                        Op::RemoveInString { pointer: format!("{}/thinkingSignature", x.pointer), inner: "/id".into() }
                    }
                    // Every member that names the id goes (an AI SDK part may
                    // name it twice); the encrypted content stays beside them.
                    ReasoningKind::OpenaiEncrypted => {
                        let mut at = x.id_at.iter().map(|p| Op::Remove { pointer: p.clone() });
                        let first = at.next().unwrap_or_else(|| Op::Remove { pointer: format!("{}/id", x.pointer) });
                        r.ops.entry(key(x.line)).or_default().extend(at);
                        first
                    }
                    // No encrypted content to replay: the item cannot stand alone.
                    _ if x.pointer.is_empty() || x.pointer == "/payload" => Op::Drop,
                    _ => Op::Remove { pointer: x.pointer.clone() },
                }
            } else {
                continue;
            };
            r.ops.entry(key(x.line)).or_default().push(op);
        }
        if !single_document {
            r.mend(session, &session.structure.faults);
        }
        r.well_formed(session, single_document);
        r
    }

    /// Every line the reader found a lone surrogate escape on is rewritten
    /// with U+FFFD in its place, the record kept: Anthropic refuses the
    /// escape ("no low surrogate in string"), and U+FFFD is what Claude Code
    /// and `String.prototype.toWellFormed` put there. A code unit that is half
    /// of a character carries nothing of it that another choice could keep.
    fn well_formed(&mut self, session: &Session, single_document: bool) {
        let mut lines: Vec<u64> =
            (session.findings.iter()).filter(|f| f.code == Some("line.lone_surrogate")).map(|f| f.line).collect();
        lines.sort_unstable();
        lines.dedup();
        for &line in &lines {
            let ops = self.ops.entry(if single_document { 1 } else { line }).or_default();
            if !ops.contains(&Op::WellFormed) {
                ops.push(Op::WellFormed);
            }
        }
        self.summary.surrogates_replaced = lines;
    }

    /// The payloads that stay as the file holds them: those no op replaces,
    /// blanks or fits. A copy need not read them ([`sparse::Holes::passing`]).
    pub fn kept(&self) -> Vec<(u64, u64)> {
        let mut touched: Vec<(u64, u64)> = self.replaced.clone();
        for op in self.ops.values().flatten() {
            match op {
                Op::Blank { offset, len } => touched.push((*offset, *len)),
                Op::Fit { span, .. } => touched.push((span.offset, span.len)),
                _ => {}
            }
        }
        touched.sort_unstable();
        // The furthest end of the touched ranges starting up to each one.
        let reach: Vec<u64> = touched
            .iter()
            .scan(0, |end, t| {
                *end = (*end).max(t.0 + t.1);
                Some(*end)
            })
            .collect();
        let hit = |&(o, l): &(u64, u64)| {
            let before = touched.partition_point(|t| t.0 < o + l);
            before > 0 && reach[before - 1] > o
        };
        self.payloads.iter().copied().filter(|p| !hit(p)).collect()
    }

    /// Leaves the records of failed requests out of a repaired copy. Agents do
    /// not send them back, so the request is the same; the copy then reads as
    /// a session that has not failed yet (and `diagnose` says so). Of a
    /// one-document session (`single_document`: the file it is read from) only
    /// Cline's display-only failure messages go; the notices of an agent that
    /// retries without the media stay ([`crate::formats::Behaviour::retries_without_media`]).
    pub fn drop_failures(&mut self, session: &Session, single_document: Option<&crate::reader::Source>) {
        if let Some(source) = single_document {
            self.drop_document_failures(session, source);
            return;
        }
        let notice = |e: &crate::model::Entry| {
            session.format.behaviour().retries_without_media && e.role == crate::model::Role::System
        };
        let mut lines: Vec<u64> =
            session.entries.iter().filter(|e| e.error.is_some() && !notice(e)).map(|e| e.line).collect();
        lines.dedup();
        for line in lines {
            self.ops.entry(line).or_default().push(Op::Drop);
            self.summary.failures_dropped.push(line);
        }
    }
}

impl Rewrite {
    /// [`Rewrite::drop_failures`] of a one-document session: only Cline's
    /// failure records, display-only messages of its task that Cline never
    /// sends, go (each message removed from the document); others stay.
    fn drop_document_failures(&mut self, session: &Session, source: &crate::reader::Source) {
        let failed: Vec<u64> = session.entries.iter().filter(|e| e.error.is_some()).map(|e| e.line).collect();
        let Some(r) = session.records.first().filter(|_| session.format == Format::Cline && !failed.is_empty()) else {
            return;
        };
        let Ok(text) = source.read_range(r.offset, r.len) else { return };
        let Some((base, messages)) = trim::places::document_messages(&text) else { return };
        let lines = trim::places::message_lines(&text, &messages);
        for (k, (m, line)) in messages.into_iter().zip(lines).enumerate() {
            let display_only = || {
                serde_json::from_slice::<serde_json::Value>(&text[m.clone()])
                    .is_ok_and(|v| v.pointer("/metadata/displayOnly") == Some(&serde_json::Value::Bool(true)))
            };
            if failed.contains(&line) && display_only() {
                self.ops.entry(1).or_default().push(Op::Remove { pointer: format!("{base}/{k}") });
                self.summary.failures_dropped.push(line);
            }
        }
    }
}

/// The signature member of a Gemini part (either spelling; the splice finds the one present).
fn gemini_signature(part: &str) -> String {
    format!("{part}/thoughtSignature")
}

/// The text block that stands for a note in `format`'s dialect, at the place of `block`.
pub fn note_block(format: Format, block: &[u8], text: &str) -> String {
    let t = serde_json::to_string(text).unwrap_or_default();
    match format {
        Format::Gemini | Format::GeminiCli | Format::QwenCode => format!("{{\"text\":{t}}}"),
        Format::Kiro => format!("{{\"kind\":\"text\",\"data\":{t}}}"),
        Format::Codex | Format::OpenaiResponses => format!("{{\"type\":\"input_text\",\"text\":{t}}}"),
        Format::Opencode => {
            // opencode parts carry their ids; a text part keeps them.
            let v: serde_json::Value = serde_json::from_slice(block).unwrap_or_default();
            let mut out = serde_json::Map::new();
            for k in ["id", "sessionID", "messageID"] {
                if let Some(x) = v.get(k) {
                    out.insert(k.into(), x.clone());
                }
            }
            out.insert("type".into(), "text".into());
            out.insert("text".into(), text.into());
            serde_json::Value::Object(out).to_string()
        }
        Format::ClaudeCode
        | Format::Anthropic
        | Format::Cline
        | Format::OpenaiChat
        | Format::Pi
        | Format::Mux
        | Format::Copilot => format!("{{\"type\":\"text\",\"text\":{t}}}"),
    }
}

/// Turns one record's ops into edits on its text. `base` is the file offset
/// of the text (for [`Op::Blank`]). `None` when the record is dropped.
pub fn edits(format: Format, text: &[u8], base: u64, ops: &[Op]) -> Option<Vec<splice::Edit>> {
    let mut out = Vec::new();
    let mut removals: Vec<&str> = Vec::new();
    let mut snake_removals: Vec<String> = Vec::new();
    let mut result_removals: Vec<String> = Vec::new();
    let mut repeated: Vec<&str> = Vec::new();
    let mut orphaned: Vec<&str> = Vec::new();
    let mut heals: Vec<&str> = Vec::new();
    let mut heal_text = "";
    for op in ops {
        match op {
            Op::Drop => return None,
            Op::WellFormed => {}
            Op::Heal { pointer, text } => {
                heals.push(pointer);
                heal_text = text;
            }
            Op::Note { pointer, text: note } => {
                if let Some(range) = splice::locate(text, pointer) {
                    if let Some(e) = opencode_tool_attachment(format, text, pointer, note) {
                        out.extend(e);
                        continue;
                    }
                    let with = note_block(format, &text[range.clone()], note);
                    out.push(splice::Edit { range, with });
                    // Kiro CLI's record of the tool's run repeats the image.
                    if format == Format::Kiro
                        && let Some(range) = crate::formats::kiro::results_copy(text, pointer)
                    {
                        let with = format!("{{\"Text\":{}}}", serde_json::to_string(note).unwrap_or_default());
                        out.push(splice::Edit { range, with });
                    }
                }
            }
            Op::Blank { offset, len } => {
                let start = offset.checked_sub(base).and_then(|s| usize::try_from(s).ok());
                let len = usize::try_from(*len).unwrap_or(usize::MAX);
                if let Some(s) = start.filter(|s| s.saturating_add(len) <= text.len()) {
                    out.push(splice::Edit { range: s..s + len, with: String::new() });
                }
            }
            Op::Answer { .. } => {}
            Op::Elide { pointer, text: note } => {
                if let Some(range) = splice::locate(text, pointer) {
                    out.push(splice::Edit { range, with: serde_json::to_string(note).unwrap_or_default() });
                }
            }
            Op::Fit { .. } => out.extend(fit::edits(format, text, base, op)),
            Op::RemoveInString { pointer, inner } => out.extend(remove_in_string(format, text, pointer, inner)),
            Op::RemoveRepeat { call_id } => repeated.push(call_id),
            // Gemini CLI's results are parts of `user` messages: the message goes.
            Op::RemoveResult { call_id, .. } if format == Format::GeminiCli => orphaned.push(call_id),
            Op::RemoveResult { call_id, message } => {
                result_removals.extend(mend::result_pointers(format, text, call_id, *message));
            }
            Op::Remove { pointer } => {
                // Gemini accepts both spellings of the signature member.
                let snake = pointer.strip_suffix("/thoughtSignature").map(|p| format!("{p}/thought_signature"));
                match snake {
                    Some(s) if splice::locate(text, pointer).is_none() => snake_removals.push(s),
                    _ => removals.push(pointer),
                }
            }
        }
    }
    let mut repeats = if repeated.is_empty() && orphaned.is_empty() {
        Vec::new()
    } else {
        mend::gemini_cli_repeats(text, &repeated, &orphaned)
    };
    if repeats.iter().any(String::is_empty) {
        return None;
    }
    removals.extend(snake_removals.iter().map(String::as_str));
    let mut removed = removal_edits(format, text, &removals, "[reasoning omitted]", &mut out);
    removed.extend(removal_edits(format, text, &heals, heal_text, &mut out));
    let results: Vec<&str> = result_removals.iter().map(String::as_str).collect();
    let note = "[a tool result was removed here: the call it answered is no longer in the history]";
    removed.extend(removal_edits(format, text, &results, note, &mut out));
    out.extend(removed);
    let foreign = format == Format::GeminiCli && !repeated.is_empty();
    let out = without_repeats(text, out, &mut repeats, foreign);
    Some(if ops.contains(&Op::WellFormed) { well_formed(text, out) } else { out })
}

/// `edits` and then every lone surrogate escape of `text` replaced by
/// `\ufffd`: in the text each edit writes, and in the text no edit touches.
fn well_formed(text: &[u8], mut edits: Vec<splice::Edit>) -> Vec<splice::Edit> {
    for e in &mut edits {
        if let Some(tamed) = splice::tame_surrogates(e.with.as_bytes()) {
            e.with = String::from_utf8_lossy(&tamed).into_owned();
        }
    }
    let untouched = |at: usize| !edits.iter().any(|e| e.range.start < at + 6 && at < e.range.end);
    let escapes: Vec<usize> = splice::lone_surrogates(text).into_iter().filter(|&at| untouched(at)).collect();
    let replacement = String::from_utf8_lossy(splice::REPLACEMENT).into_owned();
    edits.extend(escapes.into_iter().map(|at| splice::Edit { range: at..at + 6, with: replacement.clone() }));
    edits
}

/// Whether `a` goes with a response Gemini CLI sends again, which the copy
/// leaves out (`mend`): in a `user` message that repeats it, or copied into
/// another call's result in a record that repeats responses.
pub(crate) fn gemini_cli_repeated(session: &Session, a: &Attachment) -> bool {
    if session.format != Format::GeminiCli {
        return false;
    }
    let mut repeats = session.structure.faults.iter().filter(|p| p.kind == FaultKind::DuplicateResult).peekable();
    if repeats.peek().is_none() {
        return false;
    }
    let user = session.entries.get(a.entry).is_some_and(|e| e.role == crate::model::Role::User);
    // (A response copied into another call's result repeats in the call's
    // own entry: only its copy's media go, `gemini_cli_foreign`.)
    repeats.any(|p| user && (p.entry == a.entry || (p.line == a.line && a.call_id.is_some() && p.call_id == a.call_id)))
        || gemini_cli_foreign(session, a)
}

/// Whether `a` sits in the result of a Gemini CLI call that is not its own
/// (`toolCalls[i].result`, which a late resume's checkpoint fills with every
/// call's parts): the copy leaves it out (`mend::gemini_cli_foreign_parts`).
fn gemini_cli_foreign(session: &Session, a: &Attachment) -> bool {
    let Some((_, rest)) = a.pointer.rsplit_once("/toolCalls/") else { return false };
    let Some(i) = rest.split('/').next().and_then(|i| i.parse::<usize>().ok()) else { return false };
    let holder = (session.tool_calls.iter()).filter(|c| c.entry == a.entry && c.line == a.line).nth(i);
    holder.is_some_and(|c| a.call_id.as_deref() != Some(c.call_id.as_str()))
}

/// `edits` less those inside a repeated message, plus that message's removal;
/// in a record that repeats responses, Gemini CLI's results copied into
/// another call's result go the same way (`mend::gemini_cli_foreign_parts`).
/// A repeat an edit of its whole list overlaps stays (the copy's own check
/// then tells it again) rather than clash with that edit.
fn without_repeats(
    text: &[u8],
    mut edits: Vec<splice::Edit>,
    repeats: &mut Vec<String>,
    foreign: bool,
) -> Vec<splice::Edit> {
    repeats.sort();
    repeats.dedup();
    let inside = |e: &splice::Edit, g: &splice::Edit| g.range.start <= e.range.start && e.range.end <= g.range.end;
    let overlaps = |e: &splice::Edit, g: &splice::Edit| e.range.start < g.range.end && g.range.start < e.range.end;
    // Neighbours of one list go as one edit: two removals would share a comma.
    let mut by_list: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (list, i) in repeats.iter().filter_map(|p| p.rsplit_once('/')) {
        by_list.entry(list).or_default().extend(i.parse::<usize>().ok());
    }
    let mut gone: Vec<splice::Edit> =
        by_list.iter().flat_map(|(list, idx)| mend::list_removals(text, list, |j| !idx.contains(&j))).collect();
    if foreign {
        gone.extend(mend::gemini_cli_foreign_parts(text));
    }
    for g in gone {
        if edits.iter().any(|e| overlaps(e, &g) && !inside(e, &g)) {
            continue;
        }
        edits.retain(|e| !inside(e, &g));
        edits.push(g);
    }
    edits
}

/// Removals, grouped by container and done inside it, one after another from
/// the last: each sees the container as the previous one left it. A content
/// array they would empty keeps one text note instead (Anthropic rejects an
/// empty content array). A container inside another's (a member of one part
/// beside the removal of another part) is done first, inside the outer one,
/// and so are the edits of `inner` that fall inside a container (an elided
/// output in a message beside one removed), which leave `inner`: two edits of
/// overlapping ranges would not both apply.
fn removal_edits(
    format: Format,
    text: &[u8],
    pointers: &[&str],
    note: &str,
    inner: &mut Vec<splice::Edit>,
) -> Vec<splice::Edit> {
    let mut by_parent: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for p in pointers {
        if let Some((parent, last)) = p.rsplit_once('/') {
            by_parent.entry(parent).or_default().push(last.to_string());
        }
    }
    let mut groups: Vec<(std::ops::Range<usize>, Vec<String>)> =
        by_parent.into_iter().filter_map(|(parent, kids)| Some((splice::locate(text, parent)?, kids))).collect();
    groups.sort_by_key(|(r, _)| r.len());
    let mut out: Vec<splice::Edit> = Vec::new();
    for (range, kids) in groups {
        let inside = |e: &splice::Edit| range.start <= e.range.start && e.range.end <= range.end;
        let (mut within, kept): (Vec<splice::Edit>, Vec<splice::Edit>) =
            std::mem::take(inner).into_iter().partition(inside);
        *inner = kept;
        let (nested, outside): (Vec<splice::Edit>, Vec<splice::Edit>) =
            std::mem::take(&mut out).into_iter().partition(inside);
        out = outside;
        within.extend(nested);
        let within: Vec<splice::Edit> = (within.into_iter())
            .map(|e| splice::Edit { range: e.range.start - range.start..e.range.end - range.start, with: e.with })
            .collect();
        let container = splice::apply(&text[range.clone()], &within);
        if let Some(with) = removed_in(format, container.clone(), kids, note) {
            out.push(splice::Edit { range, with });
        } else if !within.is_empty() {
            out.push(splice::Edit { range, with: String::from_utf8_lossy(&container).into_owned() });
        }
    }
    out
}

/// `container` with its members `kids` removed (see [`removal_edits`]), or
/// `None` when it holds none of them.
fn removed_in(format: Format, mut container: Vec<u8>, mut kids: Vec<String>, note: &str) -> Option<String> {
    let array = container.first() == Some(&b'[');
    kids.sort_by_key(|k| std::cmp::Reverse(k.parse::<usize>().unwrap_or(0)));
    kids.dedup();
    kids.retain(|k| splice::locate(&container, &format!("/{k}")).is_some());
    if kids.is_empty() {
        return None;
    }
    let emptied = array && splice::count(&container, "") == Some(kids.len());
    // A list of messages or items may shrink; a content array must keep a block.
    let lists = matches!(format.behaviour().pairing, Pairing::Responses | Pairing::Chat);
    let keep_note = emptied && !lists;
    for (n, k) in kids.iter().enumerate() {
        let at = format!("/{k}");
        let edit = if keep_note && n + 1 == kids.len() {
            splice::locate(&container, &at).map(|r| splice::Edit { range: r, with: note_block(format, b"", note) })
        } else {
            splice::remove(&container, &at)
        };
        if let Some(e) = edit {
            container = splice::apply(&container, &[e]);
        }
    }
    Some(String::from_utf8_lossy(&container).into_owned())
}

/// The string at `pointer` rewritten without the member `inner` of the JSON it
/// serializes; the rest of that JSON keeps its bytes.
fn remove_in_string(format: Format, text: &[u8], pointer: &str, inner: &str) -> Option<splice::Edit> {
    let range = splice::locate(text, pointer)?;
    let doc: String = serde_json::from_slice(&text[range.clone()]).ok()?;
    let edits = removal_edits(format, doc.as_bytes(), &[inner], "", &mut Vec::new());
    if edits.is_empty() {
        return None;
    }
    let doc = splice::apply(doc.as_bytes(), &edits);
    Some(splice::Edit { range, with: serde_json::to_string(&String::from_utf8_lossy(&doc)).ok()? })
}

/// opencode keeps a tool's media in `state.attachments`, which must hold file
/// parts, and Copilot CLI a user's files in `data.attachments`, which must hold
/// attachments: the attachment is removed and the note joins the text sent beside it.
fn opencode_tool_attachment(format: Format, text: &[u8], pointer: &str, note: &str) -> Option<Vec<splice::Edit>> {
    // Where the attachment list sits, and the texts the note joins instead.
    let (marker, texts): (&str, &[&str]) = match format {
        Format::Opencode => ("/state/attachments/", &["/state/output"]),
        // Copilot CLI drops a whole user message whose attachment it cannot
        // parse, and sends `transformedContent` (`content` is what it shows).
        Format::Copilot => ("/attachments/", &["/transformedContent", "/content"]),
        _ => return None,
    };
    let (base, _) = pointer.split_once(marker)?;
    let remove = splice::remove(text, pointer)?;
    let mut edits = vec![remove];
    for t in texts {
        if let Some(range) = splice::locate(text, &format!("{base}{t}")) {
            let old: String = serde_json::from_slice(&text[range.clone()]).unwrap_or_default();
            let with = serde_json::to_string(&format!("{old}\n{note}")).unwrap_or_default();
            edits.push(splice::Edit { range, with });
            break;
        }
    }
    Some(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escapes go wherever they are: in the text no edit touches, and in
    /// what an edit writes (a container rewritten without a member keeps the
    /// others as they read).
    #[test]
    fn well_formed_reaches_into_what_other_edits_write() {
        let text = br#"{"a":[{"type":"text","text":"x \ud83c"},{"type":"thinking","thinking":"t"}],"b":"\udc00 y \ud83c\udf89"}"#;
        let ops = [Op::Remove { pointer: "/a/1".into() }, Op::WellFormed];
        let out = splice::apply(text, &edits(Format::ClaudeCode, text, 0, &ops).expect("kept"));
        assert_eq!(
            String::from_utf8_lossy(&out),
            r#"{"a":[{"type":"text","text":"x \ufffd"}],"b":"\ufffd y \ud83c\udf89"}"#,
            "a pair is a character, and stays"
        );
        let alone = splice::apply(text, &edits(Format::ClaudeCode, text, 0, &[Op::WellFormed]).expect("kept"));
        assert_eq!(alone.len(), text.len(), "each escape is replaced in place, at its length");
    }
}
