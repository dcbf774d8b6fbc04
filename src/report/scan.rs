//! Human output of `scan`: a summary line, the attachment table, then what is wrong.
//! The table is [`super::table::Table`], fitted to the terminal; `--json` has the full values.

use std::io::{self, Write};

use anstyle::Style;

use crate::media::Verdict;
use crate::model::{Attachment, Origin, Severity};

use super::ScanReport;
use super::table::{Cell, Keep, Table, wrap};
use super::term::{Term, styles};
use crate::text::sanitize;
use crate::text::units::{count, size};

/// Writes one file's report as plain text (for a pipe or a file).
pub fn write(out: &mut impl Write, r: &ScanReport) -> io::Result<()> {
    write_for(out, r, &Term::PLAIN)
}

/// Writes one file's report for `term`: fitted to its width, verdicts coloured when it takes colour.
pub fn write_for(out: &mut impl Write, r: &ScanReport, term: &Term) -> io::Result<()> {
    let how = if r.format_detected { "detected" } else { "given" };
    let summary = format!(
        "{} ({how}){}, {}, {}, {}, judged by {} rules",
        r.format,
        super::written_by(r.written_by),
        count(r.lines, "line", "lines"),
        count(r.entries as u64, "entry", "entries"),
        count(r.attachments.len() as u64, "attachment", "attachments"),
        r.provider
    );
    let file = format!("{}: ", term.paint(styles::HEADER, &sanitize(&r.file)));
    writeln!(out, "{}", wrap(&file, &summary, term.width, 2))?;
    if !r.attachments.is_empty() {
        let mut t = attachment_table(None, true);
        for a in &r.attachments {
            t.row(attachment_row(a, None, true));
        }
        out.write_all(t.render(term).as_bytes())?;
    }
    // Problems and findings are prose: wrapped at spaces on a terminal, one line each into a pipe.
    let v = |s: Verdict| term.paint(verdict_style(s), verdict(s));
    let mut say = |first: String, message: &str| writeln!(out, "{}", wrap(&first, &sanitize(message), term.width, 4));
    for a in &r.attachments {
        for p in &a.problems {
            say(format!("  {} {}: ", a.reference, v(p.severity)), &p.message)?;
        }
        if a.healed {
            say(
                format!("  {} healed: ", a.reference),
                "the agent replaced it with its own placeholder after the provider rejected it, and does not send it again",
            )?;
        }
        let mut copies: Vec<String> = a.mirrors.iter().filter(|m| m.line != 0).map(|m| m.line.to_string()).collect();
        copies.dedup();
        if !copies.is_empty() {
            let (lines, hold) = if copies.len() == 1 { ("line", "holds") } else { ("lines", "hold") };
            say(
                format!("  {} copies: ", a.reference),
                &format!(
                    "{lines} {} {hold} its bytes again where the agent does not send them (its own record of a request or of its UI, or a copy a later record superseded); exclude and repair leave no copy of an excluded attachment",
                    copies.join(", ")
                ),
            )?;
        }
    }
    for p in &r.limits {
        say(format!("  request {}: ", v(p.severity)), &p.message)?;
    }
    for f in &r.findings {
        let severity = match f.severity {
            Severity::Error => term.paint(styles::INVALID, "error"),
            Severity::Warning => term.paint(styles::WARN, "warning"),
            Severity::Info => f.severity.to_string(),
        };
        // Line 0: a file beside the session (Cline's ui_messages.json), none of its lines.
        let line = if f.line == 0 { String::new() } else { format!("line {}: ", f.line) };
        say(format!("  {severity}: {line}"), &f.message)?;
    }
    writeln!(out)
}

/// The attachment table `scan` and `diagnose` print: a `lead` column first
/// (diagnose's prime mark), the sha256 prefix where it helps (`--ref sha256:`).
pub(crate) fn attachment_table(lead: Option<&str>, sha256: bool) -> Table {
    let mut header: Vec<&str> = lead.into_iter().collect();
    header.extend(["ref", "line", "origin", "name", "type", "size", "dims"]);
    if sha256 {
        header.push("sha256");
    }
    header.push("verdict");
    let t = Table::new(&header)
        .right("line")
        .right("size")
        .shrink("origin", Keep::Start, 6)
        .shrink("name", Keep::End, 10)
        .shrink("type", Keep::Start, 9)
        // The ref already names the line; the sha256 prefix is in --json too.
        .optional("line");
    if sha256 { t.shrink("sha256", Keep::Start, 6).optional("sha256") } else { t }
}

/// One attachment's row of [`attachment_table`].
pub(crate) fn attachment_row(a: &Attachment, lead: Option<&str>, sha256: bool) -> Vec<Cell> {
    let mut row: Vec<Cell> = lead.map(Cell::from).into_iter().collect();
    row.extend([
        Cell::from(a.reference.clone()),
        a.line.to_string().into(),
        origin(a).into(),
        sanitize(a.name.as_deref().or(a.url.as_deref()).unwrap_or("-")).into(),
        mime(a).into(),
        a.bytes.map_or("-".into(), size).into(),
        dims(a).into(),
    ]);
    if sha256 {
        row.push(a.sha256.as_deref().map_or("-".into(), |h| h[..12.min(h.len())].to_string()).into());
    }
    row.push(if a.excluded {
        // The user left it out: the next request carries a note instead.
        Cell::styled("excluded", styles::DIM)
    } else {
        Cell::styled(verdict(a.verdict), verdict_style(a.verdict))
    });
    row
}

/// The colour of a verdict: INVALID red bold, warn yellow, ok green.
pub fn verdict_style(v: Verdict) -> Style {
    match v {
        Verdict::Ok => styles::OK,
        Verdict::Warn => styles::WARN,
        Verdict::Invalid => styles::INVALID,
    }
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
