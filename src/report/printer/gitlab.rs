//! `check --output-format gitlab`: a GitLab Code Quality report (the JSON array
//! `artifacts:reports:codequality` takes): one issue per problem that counts,
//! with its code as `check_name`, its message, a severity (error: major,
//! warning: minor, info: info), the session file and line, and a fingerprint
//! that names the problem (file, session, code, ref, line, message) so GitLab
//! tells new problems from old across pipelines. GitLab needs a line: a problem
//! about the whole session is put at line 1. Problems `--allow` accepts are
//! left out (Code Quality has no dismissed state).

use std::io::{self, Write};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::check::{CheckReport, Checked, Problem};
use crate::model::Severity;
use crate::text::sanitize;

use super::Printer;

/// Prints a GitLab Code Quality report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gitlab;

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "major",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}

fn fingerprint(s: &Checked, p: &Problem) -> String {
    let mut h = Sha256::new();
    let line = p.line.map(|l| l.to_string());
    let parts = [Some(s.file.as_str()), s.session.as_deref(), Some(&p.code), p.reference.as_deref(), line.as_deref()];
    for part in parts {
        h.update(part.unwrap_or("").as_bytes());
        h.update([0]);
    }
    h.update(p.message.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The report as a JSON value (what [`Gitlab`] prints).
pub fn report(r: &CheckReport) -> Value {
    let mut issues = Vec::new();
    for s in &r.sessions {
        for p in &s.problems {
            let text = match &p.reference {
                Some(r) => format!("{r}: {}", p.message),
                None => p.message.clone(),
            };
            issues.push(json!({
                "description": sanitize(&text),
                "check_name": p.code,
                "fingerprint": fingerprint(s, p),
                "severity": severity(p.severity),
                "location": { "path": s.file.trim_start_matches("./"), "lines": { "begin": p.line.filter(|&l| l >= 1).unwrap_or(1) } },
            }));
        }
    }
    Value::Array(issues)
}

impl Printer<CheckReport> for Gitlab {
    fn print(&self, out: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &report(r))?;
        writeln!(out)
    }
}
