//! One line of a session: parse, hand to the adapter, judge its media.

use std::collections::HashSet;
use std::sync::Arc;

use crate::formats::assemble::{Extra, LineRecord, Rare};
use crate::formats::{Adapter, LineOut};
use crate::json::Value;
use crate::model::{Entry, Finding, Severity};

use super::media::Judge;
use super::skim::{self, Skim, Skimmed, Text};

/// What a worker keeps across lines: the media judge, one copy of each
/// model/provider name (a history repeats the same few names on every line)
/// and the entries of its lines, which its records index.
pub struct Worker<'r> {
    judge: Judge<'r>,
    skim: Skim,
    names: HashSet<Arc<str>>,
    pub entries: Vec<Entry>,
    /// What the adapter found about the last line recorded, for `read_line` to hand on.
    found: Vec<Finding>,
    /// The first [`crate::formats::LineOut::written_by`] of the lines read.
    pub written_by: Option<crate::model::Fork>,
}

impl<'r> Worker<'r> {
    pub fn new(judge: Judge<'r>, skim: Skim) -> Worker<'r> {
        Worker { judge, skim, names: HashSet::new(), entries: Vec::new(), found: Vec::new(), written_by: None }
    }

    /// What the adapter found about the records made with [`Worker::record`]
    /// directly (a one-document session's), which no `read_line` handed on.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.found)
    }

    fn intern(&mut self, s: Option<String>) -> Option<Arc<str>> {
        let s = s?;
        if let Some(a) = self.names.get(s.as_str()) {
            return Some(a.clone());
        }
        let a: Arc<str> = Arc::from(s);
        self.names.insert(a.clone());
        Some(a)
    }

    /// Reads one raw line (without its newline) into a record, or a finding.
    /// `terminated` is false for a last line with no newline: if it does not
    /// parse, the agent was cut off mid-write.
    pub fn read_line(
        &mut self,
        adapter: &dyn Adapter,
        raw: &[u8],
        lineno: u64,
        offset: u64,
        terminated: bool,
        findings: &mut Vec<Finding>,
    ) -> Option<LineRecord> {
        if raw.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if let Some(rec) = self.read_skimmed(adapter, raw, lineno, offset) {
            findings.append(&mut self.found);
            return Some(rec);
        }
        let mut spare = None;
        match Value::parse_tolerant(raw, &mut spare) {
            // A line of JSON that is no record (`42`, `[1]`, `"x"`): nothing of a
            // history, said rather than skipped without a word.
            Ok((v, ..)) if !v.is_object() => {
                let what = "is JSON but no record (not an object); the line is skipped".to_string();
                findings.push(finding(lineno, Severity::Error, "line.not_a_record", what));
                None
            }
            Ok((v, text, cut)) => {
                let rec = self.record(adapter, &v, text, lineno, offset, false);
                findings.append(&mut self.found);
                findings.extend(too_deep(lineno, &cut));
                // Read from a tamed copy: say what it tamed that a provider refuses.
                if !std::ptr::eq(text, raw) {
                    findings.extend(lone_surrogates(lineno, raw, &crate::json::splice::lone_surrogates(raw)));
                }
                Some(rec)
            }
            Err(e) => {
                let utf8 = std::str::from_utf8(raw).is_ok();
                if !utf8 {
                    // Read what we can: invalid bytes become U+FFFD, payload offsets are lost.
                    let lossy = String::from_utf8_lossy(raw).into_owned();
                    if let Ok(v) = Value::parse(lossy.as_bytes()) {
                        let what = "holds bytes that are not valid UTF-8; read with them replaced by U+FFFD".into();
                        findings.push(finding(lineno, Severity::Warning, "line.invalid_utf8", what));
                        let mut r = self.record(adapter, &v, lossy.as_bytes(), lineno, offset, false);
                        findings.append(&mut self.found);
                        for a in r.attachments_mut() {
                            a.span = None;
                        }
                        return Some(r);
                    }
                }
                let (code, message) = if !terminated && e.is_eof() {
                    let what = format!(
                        "cut short after {} bytes (the agent stopped mid-write); the record is skipped",
                        raw.len()
                    );
                    ("line.truncated", what)
                } else if !utf8 {
                    ("line.not_utf8", "not valid JSON, and not valid UTF-8; the record is skipped".to_string())
                } else {
                    // serde counts lines within the line; only the column means anything here.
                    let what = e.to_string();
                    let what =
                        what.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&what);
                    (
                        "line.invalid_json",
                        format!("not valid JSON ({what} at byte {}); the record is skipped", e.column()),
                    )
                };
                findings.push(finding(lineno, Severity::Error, code, message));
                None
            }
        }
    }

    /// Reads a long line without parsing its payloads ([`skim`]): `None` when
    /// it has none, or is to be read whole after all.
    fn read_skimmed(&mut self, adapter: &dyn Adapter, raw: &[u8], lineno: u64, offset: u64) -> Option<LineRecord> {
        let mut strings = skim::long_strings(raw, &self.skim);
        // Twice at most: once more with the strings no medium claimed given back.
        for _ in 0..2 {
            if strings.is_empty() {
                return None;
            }
            let skimmed = Skimmed::new(raw, &strings, self.skim.keep);
            // An invalid line (or one with numbers to tame) is read whole, to say why.
            let v = Value::parse(&skimmed.text).ok()?;
            let mut out = LineOut::default();
            adapter.read(&v, &mut out);
            let claimed = skimmed.claimed(&out.media);
            if claimed.len() == strings.len() {
                let text = skimmed.text(raw, offset);
                let found = self.found.len();
                let rec = self.build(out, &text, lineno, offset, false);
                if text.refused() {
                    self.entries.truncate(rec.entries.start);
                    self.found.truncate(found);
                    return None;
                }
                return Some(rec);
            }
            strings = claimed;
        }
        None
    }

    /// Builds a record from a parsed value. `multiline` is true when one
    /// document spans many lines: each payload then gets the line it starts on.
    pub fn record(
        &mut self,
        adapter: &dyn Adapter,
        v: &Value<'_>,
        raw: &[u8],
        lineno: u64,
        offset: u64,
        multiline: bool,
    ) -> LineRecord {
        let mut out = LineOut::default();
        adapter.read(v, &mut out);
        self.build(out, &Text::whole_line(raw, offset), lineno, offset, multiline)
    }

    /// Builds a record from what the adapter found in `text`.
    fn build(
        &mut self,
        mut out: LineOut<'_>,
        text: &Text<'_>,
        lineno: u64,
        offset: u64,
        multiline: bool,
    ) -> LineRecord {
        let raw = text.raw();
        self.written_by = self.written_by.or(out.written_by);
        let mut attachments = self.judge.attachments(&out.media, text);
        for (severity, code, message) in out.findings.drain(..) {
            self.found.push(finding(lineno, severity, code, message));
        }
        for a in &mut attachments {
            a.line = lineno;
            if let (true, Some(span)) = (multiline, a.span) {
                let upto = usize::try_from(span.offset - offset).unwrap_or(raw.len());
                a.line += memchr::memchr_iter(b'\n', &raw[..upto]).count() as u64;
            }
        }
        let first = self.entries.len();
        for e in out.entries.drain(..) {
            let (model, provider) = (self.intern(e.model), self.intern(e.provider));
            self.entries.push(Entry {
                line: lineno,
                role: e.role,
                accepted: e.accepted,
                model,
                provider,
                error: e.error.map(Box::new),
                blocks: e.blocks,
                empty: e.empty,
                heals: e.heals,
            });
        }
        let rare = !attachments.is_empty()
            || !out.calls.is_empty()
            || !out.results.is_empty()
            || !out.reasoning.is_empty()
            || out.context_model.is_some()
            || out.context_provider.is_some()
            || !out.keys.is_empty()
            || out.turn;
        let extra = rare.then(|| {
            // The time only matters for the tool calls and results it dates.
            let tools = !out.calls.is_empty() || !out.results.is_empty();
            let context = out.context_model.is_some() || out.context_provider.is_some();
            let rare = (context || !out.keys.is_empty() || out.turn).then(|| {
                let (context_model, context_provider) =
                    (self.intern(out.context_model), self.intern(out.context_provider));
                let keys = out.keys.into_iter().map(|(id, e)| (id, u32::try_from(e).unwrap_or(u32::MAX))).collect();
                Box::new(Rare { context_model, context_provider, keys, turn: out.turn, ..Rare::default() })
            });
            Box::new(Extra {
                attachments: attachments.into_boxed_slice(),
                at: out.at.filter(|_| tools).map(String::into_boxed_str),
                calls: out.calls.into_boxed_slice(),
                results: out.results.into_boxed_slice(),
                reasoning: out.reasoning.into_boxed_slice(),
                rare,
            })
        });
        let entries = first..self.entries.len();
        LineRecord { line: lineno, offset, len: raw.len() as u64, unit: out.unit, entries, extra }
    }
}

/// A finding about one line; the message reads after "line N: ".
/// `code` is registered in [`crate::codes`].
pub fn finding(line: u64, severity: Severity, code: &'static str, message: String) -> Finding {
    Finding { line, severity, message, code: Some(code) }
}

/// The finding for values nested past [`crate::json::splice::DEPTH`] levels
/// that a line's parse read as `null` (at these byte offsets in it), if any.
pub fn too_deep(line: u64, cut: &[usize]) -> Option<Finding> {
    let (first, more) = cut.split_first()?;
    let others = match more.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let what = format!(
        "nests JSON more than {} levels deep at byte {}{others}; each such value is read (and previewed) as null, the rest of the record is read",
        crate::json::splice::DEPTH,
        first + 1
    );
    Some(finding(line, Severity::Warning, "line.too_deep", what))
}

/// The finding for the lone surrogate escapes of a line (`at`: where each
/// starts in `raw`, the line's text), if any: read as U+FFFD, as the agents'
/// `JSON.parse` reads them, but refused by Anthropic's parser.
pub fn lone_surrogates(line: u64, raw: &[u8], at: &[usize]) -> Option<Finding> {
    let (&first, more) = at.split_first()?;
    // Six ASCII bytes: `\u` and four hex digits (checked by the scan).
    let escape = String::from_utf8_lossy(&raw[first..first + 6]);
    let others = match more.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let what = format!(
        "holds a lone surrogate escape (`{escape}` at byte {}{others}: half of a character cut in two); read as U+FFFD, as the agent reads it, but Anthropic refuses a request carrying it (\"no low surrogate in string\"); repair replaces each with U+FFFD and keeps the record",
        first + 1
    );
    Some(finding(line, Severity::Warning, "line.lone_surrogate", what))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::media::{Depth, rules::Rules};
    use crate::model::Format;

    /// A Claude Code line whose image is `data`.
    fn line(data: &str) -> String {
        format!(
            r#"{{"type":"user","uuid":"u1","parentUuid":null,"message":{{"role":"user","content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}]}}}}"#
        )
    }

    #[test]
    fn a_long_payload_is_read_skimmed_unless_it_is_not_json_text() {
        let rules = Rules::builtin("anthropic").unwrap();
        let skim = Skim { line: 64, string: 32, keep: 4 };
        let mut w = Worker::new(Judge::new(Depth::Structural, &rules), skim);
        let adapter = Format::ClaudeCode.adapter();
        let data = "A".repeat(400);
        let raw = line(&data);
        let rec = w.read_skimmed(adapter, raw.as_bytes(), 1, 10).expect("skimmed");
        let span = rec.extra.unwrap().attachments[0].span.unwrap();
        let at = raw.find(&data).unwrap() as u64;
        assert_eq!((span.offset, span.len), (10 + at, 400));
        // A raw tab in it: nothing kept, the line is for a whole parse to refuse.
        let entries = w.entries.len();
        let tabbed = line(&format!("{}\t{}", &data[..200], &data[200..]));
        assert!(w.read_skimmed(adapter, tabbed.as_bytes(), 2, 0).is_none());
        assert_eq!((w.entries.len(), w.found.len()), (entries, 0));
        // A short line is not skimmed.
        assert!(w.read_skimmed(adapter, line("AAAA").as_bytes(), 3, 0).is_none());
    }
}
