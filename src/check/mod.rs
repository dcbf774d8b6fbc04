//! `check`: the judgement of `diagnose`, turned into a list of coded problems
//! per session, for a CI gate over many recorded sessions.
//!
//! A session passes when no problem of severity `error` is left once the
//! user's `--allow` codes are taken out. The problems are the concrete causes
//! `diagnose` sees: invalid media the model has not accepted (the suspects),
//! per-request limits the history breaks, damaged lines, and the failure
//! itself (a recorded one that will come back on every retry, or one the
//! history predicts). Printers (`report::printer`) turn a [`CheckReport`] into
//! text; nothing here prints.

pub mod walk;

use serde::Serialize;

use crate::diagnose::{Diagnosis, FailureSource};
use crate::media::Verdict;
use crate::model::Severity;

/// What the user asked of `check` beyond reading the sessions.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// `--max-images N`: more images than this in one request is a problem.
    pub max_images: Option<u32>,
    /// `--allow CODE`: problems with these codes are accepted.
    pub allow: Vec<String>,
}

/// One problem of one session. `code` is registered in [`crate::codes`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    /// The line of the session it is about, when it is about one.
    pub line: Option<u64>,
    /// The attachment it is about, when it is about one.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
}

impl Problem {
    fn new(code: impl Into<String>, severity: Severity, message: impl Into<String>) -> Problem {
        Problem { code: code.into(), severity, message: message.into(), line: None, reference: None }
    }

    fn at(mut self, line: Option<u64>) -> Problem {
        self.line = line;
        self
    }
}

/// One session's result (`check --output-format json`'s `sessions[]`).
#[derive(Clone, Debug, Serialize)]
pub struct Checked {
    pub file: String,
    /// Which session of a store of many (opencode's database, pi's store).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The session format; `null` when the session could not be read.
    pub format: Option<&'static str>,
    /// Would every request of this session be accepted?
    pub ok: bool,
    pub problems: Vec<Problem>,
    /// Problems whose code `--allow` accepts: reported, never failing.
    pub allowed: Vec<Problem>,
}

impl Checked {
    /// Splits `problems` by `allow` and decides `ok`.
    pub fn new(file: String, format: Option<&'static str>, problems: Vec<Problem>, allow: &[String]) -> Checked {
        let (allowed, problems): (Vec<Problem>, Vec<Problem>) =
            problems.into_iter().partition(|p| allow.contains(&p.code));
        let ok = !problems.iter().any(|p| p.severity == Severity::Error);
        Checked { file, session: None, format, ok, problems, allowed }
    }

    /// The result as one session of a store of many.
    pub fn of_session(self, session: Option<String>) -> Checked {
        Checked { session, ..self }
    }

    /// The file, and the session of a store it is.
    pub fn name(&self) -> String {
        match &self.session {
            Some(id) => format!("{} (session {id})", self.file),
            None => self.file.clone(),
        }
    }

    /// A session that could not be read: one `session.unreadable` problem.
    pub fn unreadable(file: String, error: String, allow: &[String]) -> Checked {
        Checked::new(file, None, vec![Problem::new("session.unreadable", Severity::Error, error)], allow)
    }
}

/// A file the walk passed over, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

/// `check --output-format json`: DESIGN's schema, plus the skipped files.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    pub sessions: Vec<Checked>,
    /// Every session passes.
    pub ok: bool,
    pub skipped: Vec<Skipped>,
}

impl CheckReport {
    pub fn new(sessions: Vec<Checked>, skipped: Vec<Skipped>) -> CheckReport {
        let ok = sessions.iter().all(|s| s.ok);
        CheckReport { sessions, ok, skipped }
    }
}

fn severity(v: Verdict) -> Option<Severity> {
    match v {
        Verdict::Ok => None,
        Verdict::Warn => Some(Severity::Warning),
        Verdict::Invalid => Some(Severity::Error),
    }
}

/// The problems of one diagnosed session. `images` is how many images the
/// next request carries (the history less the exclusions).
pub fn judge(d: &Diagnosis, images: u64, opts: &CheckOptions) -> Vec<Problem> {
    let mut out = Vec::new();
    // Media the failing (or next) model has not accepted yet.
    for s in &d.suspects {
        let a = &s.attachment;
        for p in &a.problems {
            if let Some(sev) = severity(p.severity) {
                let mut p = Problem::new(p.code, sev, p.message.clone()).at(Some(a.line));
                p.reference = Some(a.reference.clone());
                out.push(p);
            }
        }
    }
    // Invalid media a lenient model accepted: check gates content, and another
    // provider, a model switch or a stricter route rejects it. `--allow` its code.
    for acc in &d.accepted_invalid {
        let Some(a) = d.timeline.attachments.iter().find(|a| a.reference == acc.reference) else { continue };
        for p in a.problems.iter().filter(|p| p.severity == Verdict::Invalid) {
            let message = format!("{} ({})", p.message, acc.answered());
            let mut p = Problem::new(p.code, Severity::Error, message).at(Some(a.line));
            p.reference = Some(a.reference.clone());
            out.push(p);
        }
    }
    // The history as one request, under the provider's limits.
    for p in &d.limits {
        if let Some(sev) = severity(p.severity) {
            out.push(Problem::new(p.code, sev, p.message.clone()));
        }
    }
    if let Some(max) = opts.max_images.filter(|&m| images > u64::from(m)) {
        let carried = crate::text::units::count(images, "image", "images");
        let message = format!("the next request carries {carried}; --max-images allows {max}");
        out.push(Problem::new("request.over_max_images", Severity::Error, message));
    }
    // What the reader found: one problem per code and severity, at its first
    // line, with the first line's message (24 lines in parent cycles are one
    // problem, not 24).
    let mut found: Vec<(&str, Severity, &str, Vec<u64>)> = Vec::new();
    for f in d.findings.iter().filter(|f| f.severity >= Severity::Warning) {
        let code =
            f.code.unwrap_or(if f.severity == Severity::Error { "line.invalid_json" } else { "line.invalid_utf8" });
        match found.iter_mut().find(|(c, s, _, _)| *c == code && *s == f.severity) {
            Some((_, _, _, lines)) => lines.push(f.line),
            None => found.push((code, f.severity, &f.message, vec![f.line])),
        }
    }
    for (code, severity, message, lines) in found {
        let message = if lines.len() > 1 {
            format!("{message}; {} lines like it: {}", lines.len(), crate::text::units::first_few(&lines))
        } else {
            message.to_string()
        };
        out.push(Problem::new(code, severity, message).at(lines.first().copied()));
    }
    // A file that cannot say whether its last request failed.
    if d.undetermined {
        out.push(Problem::new("session.undetermined", Severity::Warning, d.verdict.clone()));
    }
    // The failure itself.
    if let Some(f) = d.failure.as_ref().filter(|f| !f.passed()) {
        let c = &f.classification;
        let said = c.message.as_deref().map(|m| format!("; the provider said: {m}")).unwrap_or_default();
        match f.source {
            FailureSource::Recorded | FailureSource::Given if d.stuck => {
                let code = crate::codes::with_class("session.stuck", c.class);
                out.push(Problem::new(code, Severity::Error, format!("{}{said}", d.verdict)).at(f.line));
            }
            FailureSource::Recorded | FailureSource::Given => {
                let code = "session.failure_unrecovered";
                out.push(Problem::new(code, Severity::Warning, format!("{}{said}", d.verdict)).at(f.line));
            }
            // A predicted failure is named by its causes above when they are there.
            FailureSource::Predicted if d.stuck && !out.iter().any(|p| p.severity == Severity::Error) => {
                let code = crate::codes::with_class("session.predicted", c.class);
                let message = c.message.clone().unwrap_or_else(|| d.verdict.clone());
                out.push(Problem::new(code, Severity::Error, message));
            }
            FailureSource::Predicted => {}
        }
    }
    out
}
