//! `session-doctor repair`: a resumable copy with the exclusions and rewrites applied.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use serde::Serialize;

use crate::exit::Exit;
use crate::model::Severity;
use crate::report::{sanitize, units::count};
use crate::rewrite::{Rewrite, Summary, copy};

use super::rewrite_args::RewriteArgs;
use super::session_args::ReadArgs;

/// Write a repaired copy of a session that the agent can resume.
///
/// The copy is a new session in the agent's own format and naming, with a
/// fresh id (Claude Code: `<uuid>.jsonl` with `sessionId` on every line;
/// Codex: `rollout-<time>-<uuid>.jsonl` with `session_meta.id`; pi and Gemini
/// CLI: a new header id), written beside the original unless --out says
/// otherwise. Excluded attachments (see `exclude`) and images over --max-images
/// become notes in place; --strip-reasoning / --drop-reasoning-ids rewrite
/// replayed reasoning; damaged lines (cut short, not JSON) are left out.
/// Lines nothing touches are copied byte for byte. The original is never
/// written, and an existing file is never overwritten.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  session-doctor exclude session.jsonl --ref L7.2 && session-doctor repair session.jsonl
  session-doctor repair rollout-2026-11-30T10-00-00-019a….jsonl --drop-reasoning-ids
  session-doctor repair session.jsonl --max-images 20 --out /tmp/rescued

Exit status:
  0  the copy was written
  2  usage error, unreadable session, or the target exists")]
pub struct RepairArgs {
    /// The session file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub rewrite: RewriteArgs,
    /// The folder to write the copy in (default: beside the original, where the agent finds it).
    #[arg(long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print JSON: {"file", "format", "out", "id", "resume", "resume_note"?, "lines", "touched", "inserted", "dropped", "changes"}.
    #[arg(long = "json")]
    pub json: bool,
}

#[derive(Serialize)]
struct Report {
    file: String,
    format: &'static str,
    out: String,
    id: Option<String>,
    resume: Option<String>,
    /// What the resume command needs (Codex: a copy outside its sessions folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    resume_note: Option<String>,
    lines: u64,
    touched: u64,
    /// Records added (results of interrupted tool calls).
    inserted: u64,
    dropped: Vec<u64>,
    changes: Summary,
}

pub fn run(args: &RepairArgs) -> anyhow::Result<Exit> {
    let (session, plan) = args.read.read(&args.file)?;
    if plan.memory.is_some() {
        bail!(
            "{}: repair writes files, and this session lives in a store; export it first (`opencode export <id> > session.json`) and repair that",
            args.file.display()
        );
    }
    let mut rewrite = Rewrite::plan(&session, &args.rewrite.options(), plan.single_document);
    // pi's first layout counts entries by position (`firstKeptEntryIndex`):
    // leaving a line out there would move its compactions.
    if !(plan.format == crate::formats::Format::Pi && positional(&args.file)) {
        rewrite.drop_failures(&session, plan.single_document);
    }
    // Lines the reader had to skip (cut short, not JSON): not the history's
    // structural findings, which the rewrite mends.
    let mut damaged: Vec<u64> = session
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error && f.code.is_some_and(|c| c.starts_with("line.")))
        .map(|f| f.line)
        .collect();
    damaged.sort_unstable();
    damaged.dedup();
    let written = copy::repair(&args.file, plan.format, plan.single_document, &rewrite, &damaged, args.out.as_deref())?;
    let r = Report {
        file: session.file.clone(),
        format: session.format,
        out: written.identity.path.display().to_string(),
        id: written.identity.id.clone(),
        resume: written.identity.resume.clone(),
        resume_note: written.identity.resume_note.clone(),
        lines: written.lines,
        touched: written.touched,
        inserted: written.inserted,
        dropped: written.dropped.clone(),
        changes: rewrite.summary,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &r)?;
        writeln!(out)?;
    } else {
        human(&mut out, &r)?;
    }
    out.flush()?;
    Ok(Exit::Healthy)
}

/// Whether a pi session is of the first layout (no entry ids): its header has
/// no `version`, or version 1.
fn positional(path: &std::path::Path) -> bool {
    use std::io::BufRead as _;
    let mut first = Vec::new();
    let read = std::fs::File::open(path).map(std::io::BufReader::new).and_then(|mut r| r.read_until(b'\n', &mut first));
    if read.is_err() {
        return false;
    }
    let version = crate::rewrite::splice::locate(&first, "/version")
        .and_then(|r| std::str::from_utf8(&first[r]).ok()?.parse::<u32>().ok());
    version.is_none_or(|v| v < 2)
}

fn human(out: &mut impl std::io::Write, r: &Report) -> std::io::Result<()> {
    writeln!(out, "wrote {} ({}, {})", sanitize(&r.out), r.format, count(r.lines, "line", "lines"))?;
    let c = &r.changes;
    if !c.excluded.is_empty() {
        writeln!(out, "  excluded     {}", c.excluded.join(", "))?;
    }
    if !c.capped.is_empty() {
        writeln!(out, "  over the cap {} ({})", count(c.capped.len() as u64, "image", "images"), c.capped.join(", "))?;
    }
    if c.reasoning_removed > 0 {
        writeln!(out, "  reasoning    {} removed", count(c.reasoning_removed as u64, "item", "items"))?;
    }
    if c.reasoning_ids_dropped > 0 {
        writeln!(out, "  reasoning    {} made self-contained", count(c.reasoning_ids_dropped as u64, "item", "items"))?;
    }
    if !c.calls_answered.is_empty() {
        writeln!(
            out,
            "  answered     {} ({}): the run stopped before it returned; each gets a result saying so",
            count(c.calls_answered.len() as u64, "interrupted tool call", "interrupted tool calls"),
            c.calls_answered.join(", ")
        )?;
    }
    if !c.results_removed.is_empty() {
        writeln!(
            out,
            "  removed      {} ({}): their calls are gone",
            count(c.results_removed.len() as u64, "orphan tool result", "orphan tool results"),
            c.results_removed.join(", ")
        )?;
    }
    if !c.failures_dropped.is_empty() {
        let lines: Vec<String> = c.failures_dropped.iter().map(u64::to_string).collect();
        writeln!(
            out,
            "  failures     {} left out (line {}): agents do not send them",
            count(lines.len() as u64, "error record", "error records"),
            lines.join(", ")
        )?;
    }
    let damaged: Vec<u64> = r.dropped.iter().copied().filter(|l| !c.failures_dropped.contains(l)).collect();
    if !damaged.is_empty() {
        let lines: Vec<String> = r.dropped.iter().map(u64::to_string).collect();
        writeln!(
            out,
            "  left out     line{} {} (damaged or dropped)",
            if lines.len() == 1 { "" } else { "s" },
            lines.join(", ")
        )?;
    }
    let added =
        if r.inserted > 0 { format!(", {} added", count(r.inserted, "record", "records")) } else { String::new() };
    writeln!(
        out,
        "  {} rewritten{added}; every other line is copied byte for byte",
        count(r.touched, "record", "records")
    )?;
    writeln!(out, "the original is unchanged: {}", sanitize(&r.file))?;
    if let Some(cmd) = &r.resume {
        writeln!(out)?;
        writeln!(out, "resume it:")?;
        if let Some(note) = &r.resume_note {
            writeln!(out, "  ({})", sanitize(note))?;
        }
        writeln!(out, "  {}", sanitize(cmd))?;
    }
    Ok(())
}
