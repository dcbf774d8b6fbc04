//! Everything that turns results into bytes for a person or a machine.

pub mod diagnose;
pub mod html;
pub mod printer;
pub mod progress;
pub mod scan;
pub mod schema;
pub mod sessions;
pub mod stdout;
pub mod table;
pub mod term;

use serde::Serialize;

use crate::media::{Defect, Verdict};
use crate::model::{Attachment, Finding, Session, Severity};
use crate::reader::Plan;

/// `scan --json`: the stable schema of DESIGN.md, plus a few added fields.
#[derive(Debug, Serialize)]
pub struct ScanReport {
    pub file: String,
    pub format: crate::model::Format,
    /// The agent that wrote it, where another than the format's own (`kilo`:
    /// Kilo Code CLI, in opencode's format); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_by: Option<crate::model::Fork>,
    /// Was the format detected (true) or given with `--format` (false)?
    pub format_detected: bool,
    /// Whose rules judged the media.
    pub provider: String,
    pub lines: u64,
    pub entries: usize,
    pub attachments: Vec<Attachment>,
    pub findings: Vec<Finding>,
    /// Problems of the history as one request (too many images, too many PDF pages…).
    pub limits: Vec<Defect>,
    /// What the next request carries, as those limits count it.
    pub request: Carried,
}

/// The header's words for a session a fork wrote in another agent's format
/// (", written by Kilo Code CLI"): the format alone would name the other agent.
fn written_by(fork: Option<crate::model::Fork>) -> String {
    fork.map_or_else(String::new, |f| format!(", written by {}", f.agent()))
}

/// The media the agent's next request carries: the refs of the attachments it
/// sends (not those excluded, healed away or in an output Codex leaves out)
/// and their sums.
#[derive(Debug, Serialize)]
pub struct Carried {
    pub refs: Vec<String>,
    #[serde(flatten)]
    pub stats: crate::media::RequestStats,
}

impl ScanReport {
    /// An invalid attachment, a provider limit the history breaks, or a line that could
    /// not be read and was skipped (a finding of severity error): what exit code 1 means.
    pub fn has_problems(&self) -> bool {
        self.attachments.iter().any(|a| a.verdict == Verdict::Invalid)
            || self.limits.iter().any(|p| p.severity == Verdict::Invalid)
            || self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    pub fn new(session: Session, plan: &Plan) -> ScanReport {
        let stats = session.request_stats();
        let limits = crate::media::request_problems(&stats, &plan.rules);
        let refs = session.sent_attachments().map(|a| a.reference.clone()).collect();
        ScanReport {
            file: session.file,
            format: session.format,
            written_by: session.written_by,
            format_detected: plan.detected,
            provider: plan.rules.provider.clone(),
            lines: session.lines,
            entries: session.entries.len(),
            attachments: session.attachments,
            findings: session.findings,
            limits,
            request: Carried { refs, stats },
        }
    }
}
