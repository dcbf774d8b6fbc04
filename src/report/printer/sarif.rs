//! `check --output-format sarif`: a SARIF 2.1.0 log, what GitHub code scanning
//! (`github/codeql-action/upload-sarif`) and most CI dashboards take.
//!
//! One run of one tool. Its rules are the problem codes the results carry, each
//! with its meaning from [`crate::codes`] (docs/codes.md) and its usual
//! severity; each result is one problem: its code, its level (error, warning,
//! note), its message, the session file and line, and the attachment's ref (as
//! a logical location and in `properties.ref`). Problems `--allow` accepts are
//! results with an external suppression, so a viewer shows them as dismissed.
//! Files the walk passed over are notifications of the invocation.
//! `tests/it/sarif.rs` validates the log against the published schema.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::{Value, json};

use crate::check::{CheckReport, Checked, Problem};
use crate::model::Severity;
use crate::text::sanitize;

use super::Printer;

/// Prints a SARIF 2.1.0 log.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sarif;

/// The schema the log names (the OASIS errata 01 schema, as published).
pub const SCHEMA: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// SARIF's level of a severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A path as a SARIF `artifactLocation`: a relative path is a URI reference
/// against `%SRCROOT%` (the checkout, for code scanning), an absolute one a
/// `file:` URI; every byte outside RFC 3986's unreserved set and `/` is
/// percent-encoded, and Windows' `\` is `/`.
pub fn artifact_location(path: &str) -> Value {
    let slashed = path.replace('\\', "/");
    let trimmed = slashed.trim_start_matches("./");
    let drive = trimmed.len() >= 2 && trimmed.as_bytes()[1] == b':' && trimmed.as_bytes()[0].is_ascii_alphabetic();
    if trimmed.starts_with('/') {
        json!({ "uri": format!("file://{}", encode(trimmed)) })
    } else if drive {
        json!({ "uri": format!("file:///{}", encode(trimmed).replacen("%3A", ":", 1)) })
    } else {
        json!({ "uri": encode(trimmed), "uriBaseId": "%SRCROOT%" })
    }
}

fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The rule of `code`: its meaning and usual severity from the registry.
fn rule(code: &str) -> Value {
    let registered = crate::codes::lookup(code);
    let meaning = registered.map_or("a problem session-doctor reports", |c| c.description);
    let severity = registered.map_or(Severity::Error, |c| c.severity);
    json!({
        "id": code,
        "shortDescription": { "text": meaning },
        "fullDescription": { "text": format!("{code}: {meaning}") },
        "help": { "text": format!("{meaning}. Run `session-doctor diagnose FILE` for the session's next steps; docs/codes.md lists every code.") },
        "defaultConfiguration": { "level": level(severity) },
    })
}

fn result(s: &Checked, p: &Problem, rule_index: usize, allowed: bool) -> Value {
    let text = match &p.reference {
        Some(r) => format!("{r}: {}", p.message),
        None => p.message.clone(),
    };
    let mut physical = json!({ "artifactLocation": artifact_location(&s.file) });
    if let Some(line) = p.line.filter(|&l| l >= 1) {
        physical["region"] = json!({ "startLine": line });
    }
    let mut location = json!({ "physicalLocation": physical });
    let mut properties = serde_json::Map::new();
    if let Some(r) = &p.reference {
        location["logicalLocations"] = json!([{ "name": sanitize(r), "kind": "element" }]);
        properties.insert("ref".into(), json!(r));
    }
    if let Some(id) = &s.session {
        properties.insert("session".into(), json!(id));
    }
    if let Some(f) = s.format {
        properties.insert("format".into(), json!(f));
    }
    let mut r = json!({
        "ruleId": p.code,
        "ruleIndex": rule_index,
        "level": level(p.severity),
        "message": { "text": sanitize(&text) },
        "locations": [location],
    });
    if !properties.is_empty() {
        r["properties"] = Value::Object(properties);
    }
    if allowed {
        r["suppressions"] = json!([{ "kind": "external", "justification": format!("accepted by --allow {}", p.code) }]);
    }
    r
}

/// The log as a JSON value (what [`Sarif`] prints).
pub fn log(r: &CheckReport) -> Value {
    // Rules in the order their codes first appear; results point at them by index.
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rules = Vec::new();
    let mut results = Vec::new();
    for s in &r.sessions {
        let all = s.problems.iter().map(|p| (p, false)).chain(s.allowed.iter().map(|p| (p, true)));
        for (p, allowed) in all {
            let i = *index.entry(p.code.as_str()).or_insert_with(|| {
                rules.push(rule(&p.code));
                rules.len() - 1
            });
            results.push(result(s, p, i, allowed));
        }
    }
    let notes: Vec<Value> = r
        .skipped
        .iter()
        .map(|k| {
            json!({
                "level": "note",
                "message": { "text": sanitize(&format!("skipped {}: {}", k.file, k.reason)) },
                "locations": [{ "physicalLocation": { "artifactLocation": artifact_location(&k.file) } }],
            })
        })
        .collect();
    let unreadable = r.sessions.iter().any(|s| s.problems.iter().any(|p| p.code == "session.unreadable"));
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "session-doctor",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            } },
            "invocations": [{ "executionSuccessful": !unreadable, "toolExecutionNotifications": notes }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

impl Printer<CheckReport> for Sarif {
    fn print(&self, out: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &log(r))?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_uri_references() {
        assert_eq!(artifact_location("./rec/a b.jsonl"), json!({"uri": "rec/a%20b.jsonl", "uriBaseId": "%SRCROOT%"}));
        assert_eq!(artifact_location("/tmp/x#1.jsonl"), json!({"uri": "file:///tmp/x%231.jsonl"}));
        assert_eq!(artifact_location("C:\\s\\é.jsonl"), json!({"uri": "file:///C:/s/%C3%A9.jsonl"}));
    }
}
