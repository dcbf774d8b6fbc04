//! Human output: `scan`'s and `diagnose`'s reports (their layouts live in
//! `report::scan` and `report::diagnose`), and `check`'s: a line per session,
//! its problems beneath, and a summary line.

use std::io::{self, Write};

use crate::check::{CheckReport, Checked, Problem};
use crate::model::Severity;
use crate::report::ScanReport;
use crate::report::table::wrap;
use crate::report::term::{Term, styles};
use crate::text::sanitize;
use crate::text::units::count;

use super::Printer;

/// Prints for a person, fitted to `term`.
#[derive(Clone, Copy, Debug)]
pub struct Human {
    pub term: Term,
}

impl Printer<ScanReport> for Human {
    fn print(&self, out: &mut dyn Write, r: &ScanReport) -> io::Result<()> {
        crate::report::scan::write_for(&mut &mut *out, r, &self.term)
    }
}

/// A diagnosis and whether its format was detected (the human report says so).
pub struct Diagnosed<'a> {
    pub diagnosis: &'a crate::diagnose::Diagnosis,
    pub detected: bool,
}

impl Printer<Diagnosed<'_>> for Human {
    fn print(&self, out: &mut dyn Write, d: &Diagnosed<'_>) -> io::Result<()> {
        crate::report::diagnose::write(&mut &mut *out, d.diagnosis, d.detected, &self.term)
    }
}

impl Printer<CheckReport> for Human {
    fn print(&self, out: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
        let term = &self.term;
        for s in &r.sessions {
            session(out, s, term)?;
        }
        let failing = r.sessions.iter().filter(|s| !s.ok).count() as u64;
        let problems: usize = r.sessions.iter().map(|s| s.problems.len()).sum();
        let allowed: usize = r.sessions.iter().map(|s| s.allowed.len()).sum();
        let mut summary = format!(
            "{} checked: {} ok, {} failing; {}",
            count(r.sessions.len() as u64, "session", "sessions"),
            r.sessions.len() as u64 - failing,
            failing,
            count(problems as u64, "problem", "problems"),
        );
        if allowed > 0 {
            summary.push_str(&format!(" ({allowed} more allowed)"));
        }
        if !r.skipped.is_empty() {
            summary.push_str(&format!(", {} skipped", count(r.skipped.len() as u64, "file", "files")));
        }
        if !r.sessions.is_empty() {
            writeln!(out)?;
        }
        let style = if r.ok { styles::OK } else { styles::INVALID };
        writeln!(out, "{}", term.paint(style, &summary))
    }
}

fn session(out: &mut dyn Write, s: &Checked, term: &Term) -> io::Result<()> {
    let mark = if s.ok { term.paint(styles::OK, "ok  ") } else { term.paint(styles::INVALID, "FAIL") };
    let format = s.format.unwrap_or("unreadable");
    let session = s.session.as_deref().map(|id| format!(", session {}", sanitize(id))).unwrap_or_default();
    writeln!(out, "{mark}  {} ({format}{session})", term.paint(styles::HEADER, &sanitize(&s.file)))?;
    for p in &s.problems {
        let label = match p.severity {
            Severity::Error => term.paint(styles::INVALID, "error"),
            Severity::Warning => term.paint(styles::WARN, "warning"),
            Severity::Info => "info".into(),
        };
        problem(out, &label, p, term)?;
    }
    for p in &s.allowed {
        problem(out, &term.paint(styles::DIM, "allowed"), p, term)?;
    }
    Ok(())
}

/// `  error[png.truncated] line 3, L3.1: PNG ends after …`, wrapped under the message.
fn problem(out: &mut dyn Write, label: &str, p: &Problem, term: &Term) -> io::Result<()> {
    let mut at = Vec::new();
    if let Some(l) = p.line {
        at.push(format!("line {l}"));
    }
    if let Some(r) = &p.reference {
        at.push(sanitize(r));
    }
    let at = if at.is_empty() { String::new() } else { format!(" {}", at.join(", ")) };
    let first = format!("      {label}[{}]{at}: ", p.code);
    writeln!(out, "{}", wrap(&first, &sanitize(&p.message), term.width, 8))
}
