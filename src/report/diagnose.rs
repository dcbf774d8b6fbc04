//! Human output of `diagnose`: the verdict, the failure, the suspects, what to run.

use std::io::{self, Write};

use crate::diagnose::{Diagnosis, Source};
use crate::model::Severity;

use super::scan::{dims, mime, origin, verdict};
use super::{sanitize, table};

pub fn write(out: &mut impl Write, d: &Diagnosis, detected: bool) -> io::Result<()> {
    let how = if detected { "detected" } else { "given" };
    writeln!(out, "{}: {} ({how}), judged by {} rules", sanitize(&d.file), d.format, d.provider)?;
    writeln!(out, "{}", d.verdict)?;
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
        let n = d.suspects.len();
        writeln!(out, "{n} suspect{}:", if n == 1 { "" } else { "s" })?;
        let mut t = table::new(&["", "ref", "line", "origin", "name", "type", "size", "dims", "verdict"]);
        for s in &d.suspects {
            let a = &s.attachment;
            t.add_row(vec![
                if s.prime { "*".into() } else { String::new() },
                a.reference.clone(),
                a.line.to_string(),
                origin(a),
                sanitize(&super::scan::shorten(a.name.as_deref().or(a.url.as_deref()).unwrap_or("-"), 40)),
                mime(a),
                a.bytes.map_or("-".into(), table::size),
                dims(a),
                verdict(a.verdict).into(),
            ]);
        }
        writeln!(out, "{t}")?;
        for s in &d.suspects {
            let mark = if s.prime { "prime" } else { "suspect" };
            writeln!(out, "  {} {mark}: {}", s.attachment.reference, sanitize(&s.why))?;
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
            "note      {damaged} damaged line{} (first: line {first}); `session-doctor scan` lists them",
            if damaged == 1 { "" } else { "s" }
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
