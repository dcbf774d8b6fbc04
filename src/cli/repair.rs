//! `session-doctor repair`: a resumable copy with the exclusions and rewrites applied.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use serde::Serialize;

use crate::exit::Exit;
use crate::model::Severity;
use crate::rewrite::{Rewrite, Summary, copy};
use crate::text::sanitize;
use crate::text::units::{count, first_few};

use super::rewrite_args::RewriteArgs;
use super::session_args::{Deepened, ReadArgs};

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
  0  the copy was written, and diagnose finds it not stuck; or there was nothing to repair (nothing written)
  1  the copy was written, but diagnose still finds it stuck (what to run next is printed)
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
    #[arg(long = "json")]
    pub json: bool,
}

#[derive(Serialize)]
struct Report {
    file: String,
    format: crate::model::Format,
    written: bool,
    out: String,
    id: Option<String>,
    resume: Option<String>,
    /// What the resume command needs (Codex: a copy outside its sessions folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    resume_note: Option<String>,
    lines: u64,
    touched: u64,
    /// Records whose only change is the new session id.
    renamed: u64,
    /// Records added (results of interrupted tool calls).
    inserted: u64,
    dropped: Vec<u64>,
    changes: Summary,
    /// Prime suspects of the original, not excluded by the overlay, that the copy leaves out.
    suspects_left_out: Vec<String>,
    /// `diagnose`'s verdict on the copy when it is stuck still (`null` when it is not),
    /// judged in memory as the copy reads.
    still_stuck: Option<String>,
    /// What to run next when it is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    next: Vec<String>,
    /// The copy is one document (an opencode export, a Cline task), not lines,
    /// and whether the session's ids in it were made the copy's own.
    #[serde(skip)]
    document: Option<bool>,
    /// Lines the reader had to skip (cut short, not JSON), which the copy leaves out.
    #[serde(skip)]
    damaged: Vec<u64>,
}

pub fn run(args: &RepairArgs) -> anyhow::Result<Exit> {
    // Before the first read: the copy is made only from the file the plan is made from.
    let planned = crate::alias::Snapshot::of(&args.file);
    let (mut session, plan) = args.read.read(&args.file)?;
    let planned = planned?;
    if let Some(why) = crate::reader::no_export(&args.file, &plan) {
        bail!(
            "{}: repair writes files, and this session lives in a store, which is never written; {why}, so there is no file to repair either: `scan` and `diagnose` read it, and nothing session-doctor writes reaches the agent",
            args.file.display()
        );
    }
    if plan.memory.is_some() {
        bail!(
            "{}: repair writes files, and this session lives in a store; export it first (`opencode export <id> > session.json`) and repair that",
            args.file.display()
        );
    }
    if plan.format == crate::model::Format::ClaudeCode
        && let Some(sub) = crate::formats::claude_code::subagent::of(&args.file)
    {
        bail!(
            "{}: the transcript of Claude Code subagent {} of session {}: Claude Code resumes no subagent file, so a repaired copy could not be resumed; the parent session ({}) sends none of its requests",
            args.file.display(),
            sub.agent_id,
            sub.session_id,
            sub.parent.display()
        );
    }
    // The full decodes of suspects, made once for both diagnoses (the session's and its copy's).
    let deepened = Deepened::default();
    let (suspects_left_out, judged, original) = leave_out_suspects(args, session, &plan, &deepened)?;
    session = judged;
    let mut rewrite = Rewrite::plan(&session, &args.rewrite.options(), plan.single_document);
    if args.rewrite.fit {
        rewrite.fit(&session, &crate::reader::Source::of(&plan, &args.file), &plan.rules, plan.single_document);
    }
    // pi's first layout counts entries by position (`firstKeptEntryIndex`):
    // leaving a line out there would move its compactions. A copy that changes
    // nothing the failure blames keeps its record of it: without it, the copy
    // would be called healthy while it sends the request the provider refused.
    let answered =
        original.as_ref().is_none_or(|o| !o.recorded || addresses(o.class, &rewrite.summary, &suspects_left_out));
    if answered && !(plan.format == crate::model::Format::Pi && positional(&args.file)) {
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
    // Nothing excluded, capped, rewritten, mended or left out: the copy would
    // hold the very records of the original, so none is written unless asked.
    if rewrite.ops.is_empty() && damaged.is_empty() && !args.force {
        let unanswered = original.as_ref().filter(|_| !answered).map(|o| (o.class, o.next.as_slice()));
        return nothing_to_repair(args, &session, unanswered);
    }
    let mut reads = args.read.reads(&args.file, &plan, true);
    reads.extend(crate::alias::named_by(&session.attachments));
    let source = copy::Source { path: &args.file, planned, reads: &reads };
    let (text, dir) = (plan.text(&args.file), args.out.as_deref());
    // The copy is judged in memory (see `still_stuck`) while it is written;
    // the session goes to that judgement (not a copy of it: a session of a
    // million lines is 130 MB).
    let (file, format) = (session.file.clone(), session.format);
    let (plan_ref, summary, deepened_ref) = (&plan, &rewrite.summary, &deepened);
    let (written, still) = std::thread::scope(|s| {
        let (original, left_out) = (original.as_ref(), suspects_left_out.as_slice());
        let still = s.spawn(move || -> anyhow::Result<Option<(String, Vec<String>)>> {
            let still = still_stuck(args, session, plan_ref, summary, deepened_ref)?;
            Ok(match (still, original) {
                (None, Some(o)) if !addresses(o.class, summary, left_out) => {
                    Some((answers_nothing(o.class), o.next.clone()))
                }
                (still, _) => still.map(|d| (d.verdict, d.next)),
            })
        });
        let written = copy::repair_text(&source, text, plan.format, plan.single_document, &rewrite, &damaged, dir);
        (written, still.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    let written = written.map_err(|e| {
        let exists = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists)
        });
        // The copy's name is fixed for these formats: an earlier repair's copy is in the way.
        if exists {
            anyhow::anyhow!("{e} (an earlier repair's copy?): remove it, or write the copy elsewhere with --out DIR")
        } else {
            e
        }
    })?;
    let still = still?;
    let r = Report {
        file,
        format,
        written: true,
        out: written.identity.path.display().to_string(),
        id: written.identity.id.clone(),
        resume: written.identity.resume.clone(),
        resume_note: written.identity.resume_note.clone(),
        lines: written.lines,
        touched: written.touched,
        renamed: written.renamed,
        inserted: written.inserted,
        dropped: written.dropped.clone(),
        changes: rewrite.summary,
        suspects_left_out,
        still_stuck: still.as_ref().map(|(verdict, _)| verdict.clone()),
        next: still.map(|(_, next)| next).unwrap_or_default(),
        document: plan.single_document.then_some(written.identity.old_id.is_some()),
        damaged,
    };
    let mut out = crate::report::stdout::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &r)?;
        writeln!(out)?;
    } else {
        human(&mut out, &r)?;
    }
    out.flush()?;
    Ok(if r.still_stuck.is_some() { Exit::Problems } else { Exit::Healthy })
}

/// How the original was stuck: its failure's class and the commands to run on it.
struct Stuck {
    class: crate::classify::Class,
    next: Vec<String>,
    /// The failure is on record in the session (not predicted): a record a copy could drop.
    recorded: bool,
}

/// Marks the prime suspects of a stuck session excluded, as `diagnose` names
/// them (and the overlay does not exclude yet), so the copy carries notes in
/// their place: a copy that keeps them fails the same way (not with
/// --keep-suspects). Returns their refs, the session, which the diagnosis takes
/// and gives back (no copy of it is made), judged again by the reader's rules,
/// and how the original is stuck.
fn leave_out_suspects(
    args: &RepairArgs,
    session: crate::model::Session,
    plan: &crate::reader::Plan,
    deepened: &Deepened,
) -> anyhow::Result<(Vec<String>, crate::model::Session, Option<Stuck>)> {
    let opts = crate::diagnose::Options {
        model: args.read.model.clone(),
        file_arg: args.file.display().to_string(),
        read_args: args.read.repeat(plan),
        ..Default::default()
    };
    let (d, mut session) = args.read.diagnose_keeping(&args.file, session, plan, &opts, deepened)?;
    // The diagnosis judged by the rules of the provider that failed; the plan
    // and a fit go by the reader's, as before (what it decoded in full stays).
    for a in &mut session.attachments {
        a.judge(&plan.rules);
    }
    let class = d.failure.as_ref().map(|f| f.classification.class);
    let recorded = d.failure.as_ref().is_some_and(|f| f.source == crate::diagnose::Source::Recorded);
    let stuck = class.filter(|_| d.stuck).map(|class| Stuck { class, next: d.next.clone(), recorded });
    if args.keep_suspects || !d.stuck || !class.is_some_and(crate::diagnose::next::excludes_suspects) {
        return Ok((Vec::new(), session, stuck));
    }
    let primes: Vec<String> = d
        .suspects
        .iter()
        .filter(|s| s.prime && !s.attachment.excluded)
        // With --fit, an image that is only too large is fitted, not left out.
        .filter(|s| !(args.rewrite.fit && crate::fit::only_fittable(&s.attachment.problems, (s.attachment.width, s.attachment.height))))
        .map(|s| s.attachment.reference.clone())
        .collect();
    for a in session.attachments.iter_mut().filter(|a| primes.contains(&a.reference)) {
        a.excluded = true;
    }
    Ok((primes, session, stuck))
}

/// The verdict on a copy whose changes answer nothing of a `class` failure.
fn answers_nothing(class: crate::classify::Class) -> String {
    format!(
        "still stuck: nothing this repair changes answers the {class} failure, so a copy sends the request the provider refused"
    )
}

/// Whether what a repair changed can answer a failure of `class`: a copy that
/// changes nothing the failure is about sends the request the provider
/// refused; it keeps its record of the refusal (without it, judged as it
/// reads, it would look healthy where the cause is not in its bytes: valid
/// media a provider refuses, a gateway's image count).
fn addresses(class: crate::classify::Class, changes: &Summary, left_out: &[String]) -> bool {
    use crate::classify::Class;
    let removed = !changes.excluded.is_empty()
        || !changes.capped.is_empty()
        || !changes.fitted.is_empty()
        || !changes.healed.is_empty()
        || !left_out.is_empty();
    match class {
        Class::ImageLimit => !changes.capped.is_empty() || !changes.excluded.is_empty() || !left_out.is_empty(),
        Class::ReasoningRejected => changes.reasoning_removed > 0 || changes.reasoning_ids_dropped > 0,
        // The structure is all in the file: the copy's own check is the judge
        // (an agent that pairs calls itself needs no mend).
        Class::HistoryInvalid => true,
        _ => removed,
    }
}

/// Diagnoses the session as its copy reads (without reading the copy again:
/// the rewrite's exclusions, caps, reasoning edits, dropped failures and mended
/// calls applied in memory): `Some` when the copy is stuck still. Its refs and
/// next commands are the original's, which is what to fix and repair again.
fn still_stuck(
    args: &RepairArgs,
    mut copy: crate::model::Session,
    plan: &crate::reader::Plan,
    changes: &Summary,
    deepened: &Deepened,
) -> anyhow::Result<Option<crate::diagnose::Diagnosis>> {
    // A capped image is a note in the copy; a fitted one meets the limits it broke.
    for a in copy
        .attachments
        .iter_mut()
        .filter(|a| changes.capped.contains(&a.reference) || changes.fitted.contains(&a.reference))
    {
        a.excluded = true;
    }
    if args.rewrite.strip_reasoning {
        copy.reasoning.clear();
    }
    let mended = changes.calls_answered.iter().chain(&changes.results_removed).cloned().collect();
    let opts = crate::diagnose::Options {
        model: args.read.model.clone(),
        file_arg: args.file.display().to_string(),
        read_args: args.read.repeat(plan),
        as_repaired: Some(mended),
        ..Default::default()
    };
    let (d, _) = args.read.diagnose_keeping(&args.file, copy, plan, &opts, deepened)?;
    Ok(d.stuck.then_some(d))
}

/// Nothing to change, so nothing is written (exit 0). `unanswered`: the session is
/// stuck on a failure of this class that nothing asked for answers, and what
/// to do first; a copy would be stuck the same way (exit 1).
fn nothing_to_repair(
    args: &RepairArgs,
    session: &crate::model::Session,
    unanswered: Option<(crate::classify::Class, &[String])>,
) -> anyhow::Result<Exit> {
    let reason = "nothing to repair: no exclusion, image cap, reasoning rewrite, unanswered tool call, failed request or damaged line to change; a copy would hold the same records";
    let still = unanswered.map(|(class, _)| answers_nothing(class));
    let next = unanswered.map_or(&[][..], |(_, next)| next);
    let mut out = crate::report::stdout::stdout();
    if args.json {
        let mut v =
            serde_json::json!({"file": session.file, "format": session.format, "written": false, "reason": reason});
        if let Some(s) = &still {
            v["still_stuck"] = serde_json::json!(s);
            v["next"] = serde_json::json!(next);
        }
        writeln!(out, "{v:#}")?;
    } else if let Some(s) = &still {
        writeln!(out, "nothing was written: {}", sanitize(s))?;
        writeln!(out, "next:")?;
        for n in next {
            writeln!(out, "  {}", sanitize(n))?;
        }
    } else {
        writeln!(out, "{reason}")?;
        writeln!(
            out,
            "nothing was written: `session-doctor exclude` an attachment first, or pass --force for the copy anyway"
        )?;
    }
    out.flush()?;
    Ok(if still.is_some() { Exit::Problems } else { Exit::Healthy })
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
    let version = crate::json::splice::locate(&first, "/version")
        .and_then(|r| std::str::from_utf8(&first[r]).ok()?.parse::<u32>().ok());
    version.is_none_or(|v| v < 2)
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
            sanitize(&first_few(&c.calls_answered))
        )?;
    }
    if !c.results_removed.is_empty() {
        writeln!(
            out,
            "  removed      {} ({}): their calls are gone",
            count(c.results_removed.len() as u64, "orphan tool result", "orphan tool results"),
            sanitize(&first_few(&c.results_removed))
        )?;
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
    // What the rewrite left out on purpose is said above (failures, reasoning, orphaned results).
    if !r.damaged.is_empty() {
        writeln!(
            out,
            "  left out     {} ({}): damaged, the reader could not read them",
            count(r.damaged.len() as u64, "line", "lines"),
            first_few(&r.damaged)
        )?;
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
