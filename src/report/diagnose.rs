//! Human output of `diagnose`: the verdict, the failure, the suspects, what to run.

use std::io::{self, Write};

use crate::diagnose::{Diagnosis, Source};
use crate::model::Severity;

use super::sanitize;
use super::scan::{dims, mime, origin, verdict, verdict_style};
use super::table::{Cell, Keep, Table, wrap};
use super::term::{Term, styles};
use super::units::{count, size};

/// Writes the report for `term`: fitted to its width, coloured when it takes colour.
pub fn write(out: &mut impl Write, d: &Diagnosis, detected: bool, term: &Term) -> io::Result<()> {
    let how = if detected { "detected" } else { "given" };
    let file = term.paint(styles::HEADER, &sanitize(&d.file));
    writeln!(out, "{file}: {} ({how}), judged by {} rules", d.format, d.provider)?;
    let style = if d.stuck { styles::INVALID } else { styles::OK };
    writeln!(out, "{}", term.paint(style, &d.verdict))?;
    writeln!(out)?;
    if let Some(f) = &d.failure {
        let c = &f.classification;
        let retry = match c.retryable {
            Some(true) => "retryable",
            Some(false) => "not retryable",
            None => "retry unknown",
        };
        let whence = match (f.source, f.line) {
            (Source::Recorded, Some(l)) => format!("recorded at line {l}"),
            (Source::Recorded, None) => "recorded".into(),
            (Source::Given, _) => "given".into(),
            (Source::Predicted, _) => "predicted: no error recorded".into(),
        };
        writeln!(out, "failure   {} ({retry}; {whence})", c.class)?;
        let mut who = Vec::new();
        if let Some(p) = &c.provider {
            who.push(sanitize(p));
        }
        if let Some(s) = c.status {
            who.push(format!("status {s}"));
        }
        if let Some(m) = &d.model {
            who.push(format!("model {}", sanitize(m)));
        }
        if !who.is_empty() {
            writeln!(out, "provider  {}", who.join(", "))?;
        }
        if let Some(m) = &c.message {
            let m = sanitize(m).replace('\n', "\n          ");
            writeln!(out, "message   {m}")?;
        }
        if let Some(b) = &c.block {
            writeln!(out, "block     {}", sanitize(b))?;
        }
        writeln!(out)?;
    }
    if !d.suspects.is_empty() {
        writeln!(out, "{}:", count(d.suspects.len() as u64, "suspect", "suspects"))?;
        let mut t = Table::new(&["", "ref", "line", "origin", "name", "type", "size", "dims", "verdict"])
            .right("line")
            .right("size")
            .shrink("origin", Keep::Start, 6)
            .shrink("name", Keep::End, 10)
            .shrink("type", Keep::Start, 9)
            .optional("line");
        for s in &d.suspects {
            let a = &s.attachment;
            t.row([
                Cell::from(if s.prime { "*" } else { "" }),
                a.reference.clone().into(),
                a.line.to_string().into(),
                origin(a).into(),
                sanitize(a.name.as_deref().or(a.url.as_deref()).unwrap_or("-")).into(),
                mime(a).into(),
                a.bytes.map_or("-".into(), size).into(),
                dims(a).into(),
                Cell::styled(verdict(a.verdict), verdict_style(a.verdict)),
            ]);
        }
        out.write_all(t.render(term).as_bytes())?;
        for s in &d.suspects {
            let mark = if s.prime { term.paint(styles::INVALID, "prime") } else { "suspect".into() };
            writeln!(
                out,
                "{}",
                wrap(&format!("  {} {mark}: ", s.attachment.reference), &sanitize(&s.why), term.width, 4)
            )?;
        }
        writeln!(out)?;
    }
    if !d.excluded.is_empty() {
        writeln!(out, "excluded  {}", d.excluded.join(", "))?;
    }
    for p in &d.limits {
        writeln!(out, "request   {}: {}", verdict(p.severity), sanitize(&p.message))?;
    }
    for n in &d.notes {
        writeln!(out, "note      {}", sanitize(n))?;
    }
    let damaged = d.findings.iter().filter(|f| f.severity >= Severity::Warning).count();
    if damaged > 0 {
        let first = &d.findings.iter().find(|f| f.severity >= Severity::Warning).map(|f| f.line).unwrap_or(0);
        writeln!(
            out,
            "note      {} (first: line {first}); `session-doctor scan` lists them",
            count(damaged as u64, "damaged line", "damaged lines")
        )?;
    }
    if !d.next.is_empty() {
        writeln!(out)?;
        writeln!(out, "next:")?;
        for c in &d.next {
            writeln!(out, "  {}", sanitize(c))?;
        }
    }
    Ok(())
}
