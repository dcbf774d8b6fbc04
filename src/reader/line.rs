//! One line of a session: parse, hand to the adapter, judge its media.

use crate::formats::assemble::LineRecord;
use crate::formats::{Adapter, LineOut};
use crate::json::Value;
use crate::model::{Finding, Severity};

use super::media::Judge;

/// Reads one raw line (without its newline) into a record, or a finding.
/// `terminated` is false for a last line with no newline: if it does not parse,
/// the agent was cut off mid-write.
pub fn read_line(
    adapter: &dyn Adapter,
    judge: &mut Judge<'_>,
    raw: &[u8],
    lineno: u64,
    offset: u64,
    terminated: bool,
    findings: &mut Vec<Finding>,
) -> Option<LineRecord> {
    if raw.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match Value::parse(raw) {
        Ok(v) => Some(record(adapter, judge, &v, raw, lineno, offset, false)),
        Err(e) => {
            let utf8 = std::str::from_utf8(raw).is_ok();
            if !utf8 {
                // Read what we can: invalid bytes become U+FFFD, payload offsets are lost.
                let lossy = String::from_utf8_lossy(raw).into_owned();
                if let Ok(v) = Value::parse(lossy.as_bytes()) {
                    findings.push(finding(
                        lineno,
                        Severity::Warning,
                        "holds bytes that are not valid UTF-8; read with them replaced".into(),
                    ));
                    let mut r = record(adapter, judge, &v, lossy.as_bytes(), lineno, offset, false);
                    for a in &mut r.attachments {
                        a.span = None;
                    }
                    return Some(r);
                }
            }
            let message = if !terminated && e.is_eof() {
                format!("is cut short after {} bytes (the agent stopped mid-write); the record is skipped", raw.len())
            } else if !utf8 {
                "is not valid UTF-8 JSON; the record is skipped".to_string()
            } else {
                format!("is not valid JSON ({e}); the record is skipped")
            };
            findings.push(finding(lineno, Severity::Error, message));
            None
        }
    }
}

/// Builds a record from a parsed value. `multiline` is true when one document
/// spans many lines: each payload then gets the line it starts on.
pub fn record(
    adapter: &dyn Adapter,
    judge: &mut Judge<'_>,
    v: &Value<'_>,
    raw: &[u8],
    lineno: u64,
    offset: u64,
    multiline: bool,
) -> LineRecord {
    let mut out = LineOut::default();
    adapter.read(v, &mut out);
    let mut attachments = judge.attachments(&out.media, raw, offset);
    for a in &mut attachments {
        a.line = lineno;
        if let (true, Some(span)) = (multiline, a.span) {
            let upto = (span.offset - offset) as usize;
            a.line += memchr::memchr_iter(b'\n', &raw[..upto]).count() as u64;
        }
    }
    LineRecord {
        line: lineno,
        unit: out.unit,
        entries: out.entries,
        attachments,
        calls: out.calls,
        reasoning: out.reasoning,
        context_model: out.context_model,
        context_provider: out.context_provider,
    }
}

pub fn finding(line: u64, severity: Severity, what: String) -> Finding {
    Finding { line, severity, message: format!("line {line} {what}") }
}
