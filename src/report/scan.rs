//! Human output of `scan`: a summary line, the attachment table, then what is wrong.

use std::io::{self, Write};

use crate::media::Verdict;
use crate::model::{Attachment, Origin};

use super::{ScanReport, sanitize, table};

pub fn write(out: &mut impl Write, r: &ScanReport) -> io::Result<()> {
    let how = if r.format_detected { "detected" } else { "given" };
    writeln!(
        out,
        "{}: {} ({how}), {} lines, {} entries, {} attachments, judged by {} rules",
        sanitize(&r.file),
        r.format,
        r.lines,
        r.entries,
        r.attachments.len(),
        r.provider
    )?;
    if !r.attachments.is_empty() {
        let mut t = table::new(&["ref", "line", "origin", "name", "type", "size", "dims", "sha256", "verdict"]);
        for a in &r.attachments {
            t.add_row(vec![
                a.reference.clone(),
                a.line.to_string(),
                origin(a),
                sanitize(&shorten(a.name.as_deref().or(a.url.as_deref()).unwrap_or("-"), 40)),
                mime(a),
                a.bytes.map_or("-".into(), table::size),
                dims(a),
                a.sha256.as_deref().map_or("-".into(), |h| h[..12.min(h.len())].to_string()),
                verdict(a.verdict).into(),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    for a in &r.attachments {
        for p in &a.problems {
            writeln!(out, "  {} {}: {}", a.reference, verdict(p.severity), sanitize(&p.message))?;
        }
    }
    for p in &r.limits {
        writeln!(out, "  request {}: {}", verdict(p.severity), sanitize(&p.message))?;
    }
    for f in &r.findings {
        writeln!(out, "  {}: line {}: {}", f.severity, f.line, sanitize(&f.message))?;
    }
    writeln!(out)
}

pub(crate) fn origin(a: &Attachment) -> String {
    match a.origin {
        Origin::User => "user".into(),
        Origin::Assistant => "assistant".into(),
        Origin::ToolResult => match &a.tool {
            Some(t) => format!("tool:{}", sanitize(t)),
            None => "tool".into(),
        },
    }
}

/// Declared type, and the sniffed one when it differs.
pub(crate) fn mime(a: &Attachment) -> String {
    match (a.mime_declared.as_deref(), a.mime_detected.as_deref()) {
        (Some(d), Some(s)) if d != s => format!("{} (is {s})", sanitize(d)),
        (Some(d), _) => sanitize(d),
        (None, Some(s)) => s.to_string(),
        (None, None) => "-".into(),
    }
}

pub(crate) fn dims(a: &Attachment) -> String {
    match (a.width, a.height, a.pages) {
        (Some(w), Some(h), _) => format!("{w}×{h}"),
        (_, _, Some(p)) => format!("{p} p."),
        _ => "-".into(),
    }
}

pub fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "ok",
        Verdict::Warn => "warn",
        Verdict::Invalid => "INVALID",
    }
}

/// Keeps the end of a long path, where the file name is.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let tail: String = s.chars().skip(n - (max - 1)).collect();
    format!("…{tail}")
}
