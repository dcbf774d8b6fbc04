//! Human output of `diagnose`: the verdict, the failure, the suspects, what to run.

use std::io::{self, Write};

use crate::diagnose::{Diagnosis, FailureSource};
use crate::model::FaultKind;
use crate::model::Severity;

use super::scan::{attachment_row, attachment_table, verdict};
use super::table::{Cell, Keep, Table, wrap};
use super::term::{Term, styles};
use crate::text::sanitize;
use crate::text::units::count;

/// Writes the report for `term`: fitted to its width, coloured when it takes colour.
pub fn write(out: &mut impl Write, d: &Diagnosis, detected: bool, term: &Term) -> io::Result<()> {
    let how = if detected { "detected" } else { "given" };
    let file = format!("{}: ", term.paint(styles::HEADER, &sanitize(&d.file)));
    let summary = format!("{} ({how}){}, judged by {} rules", d.format, super::written_by(d.written_by), d.provider);
    writeln!(out, "{}", wrap(&file, &summary, term.width, 2))?;
    let style = if d.stuck { styles::INVALID } else { styles::OK };
    // Painted word by word, so a wrapped verdict keeps its colour on every line.
    let said = wrap("", &sanitize(&d.verdict), term.width, 2);
    let said: Vec<String> = said.split('\n').map(|l| term.paint(style, l)).collect();
    writeln!(out, "{}", said.join("\n"))?;
    writeln!(out)?;
    if d.failure.is_some() {
        failure(out, d, term)?;
    }
    if !d.suspects.is_empty() {
        suspects(out, d, term)?;
    }
    if !d.history.is_empty() {
        history(out, d, term)?;
    }
    // Every section above ends in a blank line; the notes do only when there are some.
    let mut said = Vec::new();
    notes(&mut said, d, term)?;
    out.write_all(&said)?;
    if !d.next.is_empty() {
        if !said.is_empty() {
            writeln!(out)?;
        }
        writeln!(out, "next:")?;
        for c in &d.next {
            writeln!(out, "  {}", sanitize(c))?;
        }
    }
    Ok(())
}

/// A label and its text, wrapped at spaces to the terminal as the tables are
/// fitted to it: the continuation lines start under the value.
fn say(out: &mut dyn Write, term: &Term, label: &str, text: &str) -> io::Result<()> {
    writeln!(out, "{}", wrap(&format!("{label:<10}"), text, term.width, 10))
}

/// The failure: its class, where it came from, who said it, in their words.
fn failure(out: &mut impl Write, d: &Diagnosis, term: &Term) -> io::Result<()> {
    let Some(f) = &d.failure else { return Ok(()) };
    let c = &f.classification;
    let retry = match c.retryable {
        Some(true) => "retryable",
        Some(false) => "not retryable",
        None => "retry unknown",
    };
    let whence = match (f.source, f.line) {
        (FailureSource::Recorded, Some(l)) => format!("recorded at line {l}"),
        (FailureSource::Recorded, None) => "recorded beside the history".into(),
        (FailureSource::Given, _) => "given".into(),
        (FailureSource::Predicted, _) => "predicted: no blocking error recorded".into(),
    };
    say(out, term, "failure", &format!("{} ({retry}; {whence})", c.class))?;
    // Under the provider's label only when the provider is known; else the
    // status and the model stand under their own.
    match &c.provider {
        Some(p) => {
            let mut who = vec![sanitize(p)];
            who.extend(c.status.map(|s| format!("status {s}")));
            who.extend(d.model.as_deref().map(|m| format!("model {}", sanitize(m))));
            say(out, term, "provider", &who.join(", "))?;
        }
        None => {
            if let Some(s) = c.status {
                say(out, term, "status", &s.to_string())?;
            }
            if let Some(m) = &d.model {
                say(out, term, "model", &sanitize(m))?;
            }
        }
    }
    if let Some(m) = &c.message {
        // A pipe gets the message's own lines, each under the value column.
        let m = sanitize(m);
        let m = if term.width.is_some() { m } else { m.replace('\n', "\n          ") };
        say(out, term, "message", &m)?;
    }
    if let Some(b) = &c.block {
        say(out, term, "block", &sanitize(b))?;
    }
    writeln!(out)
}

/// The suspects, as a table and why each is one.
fn suspects(out: &mut impl Write, d: &Diagnosis, term: &Term) -> io::Result<()> {
    // With no failure they are no suspects yet: what the model has not accepted.
    let n = d.suspects.len() as u64;
    let (heading, label) = match d.failure {
        Some(_) => (count(n, "suspect", "suspects"), "suspect"),
        None => (
            format!(
                "{} the model has not accepted yet (the suspects, should it fail)",
                count(n, "attachment", "attachments")
            ),
            "pending",
        ),
    };
    writeln!(out, "{heading}:")?;
    let mut t = attachment_table(Some(""), false);
    for s in &d.suspects {
        t.row(attachment_row(&s.attachment, Some(if s.prime { "*" } else { "" }), false));
    }
    out.write_all(t.render(term).as_bytes())?;
    for s in &d.suspects {
        let mark = if s.prime { term.paint(styles::INVALID, "prime") } else { label.into() };
        writeln!(out, "{}", wrap(&format!("  {} {mark}: ", s.attachment.reference), &sanitize(&s.why), term.width, 4))?;
    }
    writeln!(out)
}

/// The exclusions, the request's limits, the diagnosis's notes and the
/// reader's findings, one note per kind: damaged lines are called so, other
/// warnings (a parent cycle, a missing parent) by what they are. The
/// history's structural problems have their own section.
fn notes(out: &mut impl Write, d: &Diagnosis, term: &Term) -> io::Result<()> {
    if !d.excluded.is_empty() {
        let n = d.excluded.len();
        let refs = crate::text::units::first_few(&d.excluded);
        say(
            out,
            term,
            "excluded",
            &if n > crate::text::units::FEW { format!("{n} attachments: {refs}") } else { refs },
        )?;
    }
    for p in &d.limits {
        say(out, term, "request", &format!("{}: {}", verdict(p.severity), sanitize(&p.message)))?;
    }
    for n in &d.notes {
        say(out, term, "note", &sanitize(n))?;
    }
    let mut kinds: Vec<(Option<&str>, Vec<u64>)> = Vec::new();
    for f in d.findings.iter().filter(|f| f.severity >= Severity::Warning && !crate::history::is_structural(f)) {
        if f.line == 0 {
            // About a file beside the session, on none of its lines.
            say(out, term, "note", &sanitize(&f.message))?;
            continue;
        }
        // A lone surrogate is read, not damage; a refusal for it names its lines already.
        if f.code == Some("line.lone_surrogate") && d.failure.as_ref().is_some_and(crate::diagnose::unicode::refused) {
            continue;
        }
        let kind = f.code.filter(|c| !c.starts_with("line.") || *c == "line.lone_surrogate");
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, lines)) => lines.push(f.line),
            None => kinds.push((kind, vec![f.line])),
        }
    }
    for (kind, lines) in kinds {
        let what = match kind.and_then(crate::codes::lookup) {
            Some(code) => format!("{}: {}", count(lines.len() as u64, "line", "lines"), code.description),
            None => count(lines.len() as u64, "damaged line", "damaged lines"),
        };
        say(out, term, "note", &format!("{what} (first: line {}); `session-doctor scan` lists them", lines[0]))?;
    }
    Ok(())
}

/// The orphaned calls and results: what breaks the history's structure.
fn history(out: &mut impl Write, d: &Diagnosis, term: &Term) -> io::Result<()> {
    let n = d.history.len() as u64;
    writeln!(out, "{}:", count(n, "structural problem", "structural problems"))?;
    let mut t = Table::new(&["", "problem", "line", "tool", "call id", "at"])
        .right("line")
        .shrink("tool", Keep::Start, 6)
        .shrink("call id", Keep::End, 12)
        .optional("at");
    for i in &d.history {
        let p = &i.problem;
        let kind = match p.kind {
            FaultKind::CallWithoutResult if p.pending => "call pending",
            FaultKind::CallWithoutResult => "call without result",
            FaultKind::ResultWithoutCall => "result without call",
            FaultKind::DuplicateResult => "duplicate result",
            FaultKind::EmptyMessage => "empty message",
            FaultKind::RolesOutOfOrder => "out of order",
        };
        t.row([
            Cell::from(if i.named { "*" } else { "" }),
            Cell::styled(kind, if p.pending { styles::WARN } else { styles::INVALID }),
            p.line.to_string().into(),
            sanitize(p.tool.as_deref().unwrap_or("-")).into(),
            sanitize(p.call_id.as_deref().unwrap_or("-")).into(),
            sanitize(p.at.as_deref().unwrap_or("-")).into(),
        ]);
    }
    out.write_all(t.render(term).as_bytes())?;
    for i in &d.history {
        let first = format!("  line {}: ", i.problem.line);
        writeln!(out, "{}", wrap(&first, &sanitize(&i.problem.message), term.width, 4))?;
    }
    if d.history.iter().any(|i| i.named) {
        writeln!(out, "  * named in the provider's error")?;
    }
    writeln!(out)
}
