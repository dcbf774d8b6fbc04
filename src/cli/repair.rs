//! `session-doctor repair`: a resumable copy with the exclusions and rewrites applied.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;

use crate::exit::Exit;
use crate::repair::{Job, Nothing, Outcome, Report};
use crate::text::sanitize;
use crate::text::units::{count, first_few};

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
/// replayed reasoning. Damaged lines are salvaged first: a record split over
/// lines by a raw newline inside a string is rejoined, records glued on one
/// line are split; what still does not read (cut short, not JSON) is left out.
/// Lines nothing touches are copied byte for byte. The original is never
/// written, and an existing file is never overwritten.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  session-doctor exclude session.jsonl --ref L7.2 && session-doctor repair session.jsonl
  session-doctor repair rollout-2026-11-30T10-00-00-019a….jsonl --drop-reasoning-ids
  session-doctor repair session.jsonl --max-images 20 --out /tmp/rescued

Exit status:
  0  the copy was written, and diagnose finds it not stuck; or there was nothing to repair (nothing written)
  1  still stuck: the copy was written but diagnose finds it stuck, or nothing was written because
     nothing this repair changes answers the failure (either way, what to run next is printed)
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
    /// Write the copy even when nothing in it would change (a fork of the
    /// session under a new id); without it, such a run writes nothing.
    #[arg(long = "force")]
    pub force: bool,
    /// Keep the prime suspects of a stuck session in the copy. By default the
    /// attachments `diagnose` blames (and the overlay does not exclude yet)
    /// become notes in the copy, as `exclude` would make them.
    #[arg(long = "keep-suspects")]
    pub keep_suspects: bool,
    /// Print JSON: {"file", "format", "written", "out", "id", "resume", "resume_note"?, "lines",
    /// "touched", "renamed", "inserted", "dropped", "changes", "suspects_left_out", "still_stuck"};
    /// with nothing to repair, {"file", "format", "written": false, "reason"}.
    #[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
    #[arg(long = "json")]
    pub json: bool,
}

pub fn run(args: &RepairArgs) -> anyhow::Result<Exit> {
    // Before the first read: the copy is made only from the file the plan is made from.
    let planned = crate::alias::Snapshot::of(&args.file);
    let (session, plan) = args.read.read(&args.file)?;
    let job = Job {
        path: &args.file,
        plan: &plan,
        planned: planned?,
        reads: args.read.reads(&args.file, &plan, true),
        rewrite: args.rewrite.options(),
        fit: args.rewrite.fit,
        fit_context: args.read.fit_context(args.rewrite.context(), &args.file, &plan)?,
        force: args.force,
        keep_suspects: args.keep_suspects,
        out: args.out.as_deref(),
        asked: args.read.asked(),
        model: args.read.model.clone(),
        file_arg: args.file.display().to_string(),
        read_args: args.read.repeat(&plan),
    };
    let outcome = crate::repair::repair(&job, session)?;
    let mut out = crate::report::stdout::stdout();
    match (&outcome, args.json) {
        (Outcome::Written(r), true) => {
            crate::report::printer::Printer::print(&crate::report::printer::Json, &mut out, r)?;
        }
        (Outcome::Written(r), false) => human(&mut out, r)?,
        (Outcome::Nothing(n), json) => nothing(&mut out, n, json)?,
    }
    out.flush()?;
    Ok(if outcome.stuck() { Exit::Problems } else { Exit::Healthy })
}

/// One line for each image `--fit` could not fit, with why.
fn not_fitted(out: &mut impl std::io::Write, whys: &[String]) -> std::io::Result<()> {
    for why in whys {
        writeln!(out, "not fitted: {}", sanitize(why))?;
    }
    Ok(())
}

/// Nothing was written (exit 0), or a copy would be stuck the same way (exit 1).
fn nothing(out: &mut impl std::io::Write, n: &Nothing, json: bool) -> anyhow::Result<()> {
    if json {
        let mut v = serde_json::json!({"file": n.file, "format": n.format, "written": false, "reason": n.reason});
        if !n.not_fitted.is_empty() {
            v["not_fitted"] = serde_json::json!(n.not_fitted);
        }
        if let Some(s) = &n.still_stuck {
            v["still_stuck"] = serde_json::json!(s);
            v["next"] = serde_json::json!(n.next);
        }
        crate::report::printer::json::version_value(&mut v);
        writeln!(out, "{v:#}")?;
    } else if let Some(s) = &n.still_stuck {
        not_fitted(out, &n.not_fitted)?;
        writeln!(out, "nothing was written: {}", sanitize(s))?;
        writeln!(out, "next:")?;
        for c in &n.next {
            writeln!(out, "  {}", sanitize(c))?;
        }
    } else {
        not_fitted(out, &n.not_fitted)?;
        writeln!(out, "{}", n.reason)?;
        writeln!(
            out,
            "nothing was written: `session-doctor exclude` an attachment first, or pass --force for the copy anyway"
        )?;
    }
    Ok(())
}

fn human(out: &mut impl std::io::Write, r: &Report) -> std::io::Result<()> {
    writeln!(out, "wrote {} ({}, {})", sanitize(&r.out), r.format, count(r.lines, "line", "lines"))?;
    let c = &r.changes;
    let by_overlay: Vec<String> = c.excluded.iter().filter(|x| !r.suspects_left_out.contains(x)).cloned().collect();
    if !by_overlay.is_empty() {
        writeln!(out, "  excluded     {}", first_few(&by_overlay))?;
    }
    if !r.suspects_left_out.is_empty() {
        writeln!(
            out,
            "  left out     {}: the prime suspects diagnose names, as notes in place (--keep-suspects keeps them)",
            first_few(&r.suspects_left_out)
        )?;
    }
    if !c.fitted.is_empty() {
        writeln!(out, "  fitted       {}", first_few(&c.fitted))?;
    }
    for why in &c.not_fitted {
        writeln!(out, "  not fitted   {}", sanitize(why))?;
    }
    if !c.capped.is_empty() {
        writeln!(out, "  over the cap {} ({})", count(c.capped.len() as u64, "image", "images"), first_few(&c.capped))?;
    }
    elided(out, &c.elided)?;
    if let Some(e) = &c.context {
        writeln!(out, "  {}", crate::rewrite::trim::describe(e))?;
    }
    if c.reasoning_removed > 0 {
        writeln!(out, "  reasoning    {} removed", count(c.reasoning_removed as u64, "item", "items"))?;
    }
    if c.reasoning_ids_dropped > 0 {
        writeln!(out, "  reasoning    {} made self-contained", count(c.reasoning_ids_dropped as u64, "item", "items"))?;
    }
    let calls = [
        (
            "answered",
            &c.calls_answered,
            "interrupted tool call",
            "the run stopped before it returned; each gets a result saying so",
        ),
        ("removed", &c.results_removed, "orphan tool result", "their calls are gone"),
        ("removed", &c.repeats_removed, "repeated tool response", "each call takes one response"),
    ];
    for (label, ids, what, why) in calls.into_iter().filter(|(_, ids, ..)| !ids.is_empty()) {
        let n = count(ids.len() as u64, what, &format!("{what}s"));
        writeln!(out, "  {label:<12} {n} ({}): {why}", calls_named(ids))?;
    }
    if !c.failures_dropped.is_empty() {
        let n = c.failures_dropped.len();
        writeln!(
            out,
            "  failures     {} left out (line{} {}): agents do not send them",
            count(n as u64, "error record", "error records"),
            if n == 1 { "" } else { "s" },
            first_few(&c.failures_dropped)
        )?;
    }
    if !c.surrogates_replaced.is_empty() {
        let lines = &c.surrogates_replaced;
        writeln!(
            out,
            "  unicode      lone surrogates replaced by U+FFFD (line{} {}): half characters Anthropic refuses; the records are kept",
            if lines.len() == 1 { "" } else { "s" },
            first_few(lines)
        )?;
    }
    for s in &r.salvaged {
        writeln!(out, "  salvaged     {s}")?;
    }
    // What the rewrite left out on purpose is said above (failures, reasoning, orphaned results).
    match r.damaged.as_slice() {
        [] => {}
        [line] => writeln!(out, "  left out     line {line}: damaged, the reader could not read it")?,
        many => writeln!(
            out,
            "  left out     {} lines ({}): damaged, the reader could not read them",
            many.len(),
            first_few(many)
        )?,
    }
    let added =
        if r.inserted > 0 { format!(", {} added", count(r.inserted, "record", "records")) } else { String::new() };
    let renamed = match r.renamed {
        0 => String::new(),
        n => format!(", {} only given the new session id", count(n, "record", "records")),
    };
    let rest = match r.document {
        None => "every other line is copied byte for byte",
        Some(false) => "the rest of the document is copied as it was",
        Some(true) => "the rest of the document is copied as it was, but for its ids, made the copy's own",
    };
    writeln!(out, "  {} rewritten{renamed}{added}; {rest}", count(r.touched, "record", "records"))?;
    writeln!(out, "the original is unchanged: {}", sanitize(&r.file))?;
    if let Some(verdict) = &r.still_stuck {
        // Never "resume it" for a copy that fails the same way.
        writeln!(out)?;
        writeln!(out, "the copy is not resumable yet: {}", sanitize(verdict))?;
        if !r.next.is_empty() {
            writeln!(out, "next:")?;
            for c in &r.next {
                writeln!(out, "  {}", sanitize(c))?;
            }
        }
    } else if let Some(cmd) = &r.resume {
        writeln!(out)?;
        writeln!(out, "resume it:")?;
        if let Some(note) = &r.resume_note {
            writeln!(out, "  ({})", sanitize(note))?;
        }
        writeln!(out, "  {}", sanitize(cmd))?;
    } else if let Some(note) = &r.resume_note {
        // No command resumes it (Cline's IDE task): what to do instead.
        writeln!(out)?;
        writeln!(out, "to resume it: {}", sanitize(note))?;
    }
    Ok(())
}

/// The calls `ids` name, each once, sanitized: several repeats of one call's
/// response name the call once, after how many calls they answer.
fn calls_named(ids: &[String]) -> String {
    let mut calls: Vec<&String> = Vec::new();
    for id in ids {
        if !calls.contains(&id) {
            calls.push(id);
        }
    }
    let of = if calls.len() < ids.len() {
        format!("of {}: ", count(calls.len() as u64, "call", "calls"))
    } else {
        String::new()
    };
    format!("{of}{}", sanitize(&first_few(&calls)))
}

/// The tool outputs and images `--fit-context` put notes in place of.
fn elided(out: &mut impl std::io::Write, elided: &[crate::rewrite::trim::Elided]) -> std::io::Result<()> {
    if elided.is_empty() {
        return Ok(());
    }
    let outputs = elided.iter().filter(|e| e.kind == "tool_output").count() as u64;
    let images = elided.len() as u64 - outputs;
    let mut what = Vec::new();
    if outputs > 0 {
        what.push(count(outputs, "tool output", "tool outputs"));
    }
    if images > 0 {
        what.push(count(images, "image", "images"));
    }
    let lines: Vec<u64> = elided.iter().map(|e| e.line).collect();
    writeln!(
        out,
        "  elided       {} (line{} {}): each a note in place, to fit the context window",
        what.join(" and "),
        if lines.len() == 1 { "" } else { "s" },
        first_few(&lines)
    )?;

    Ok(())
}
