//! `repair` as a library job: from a session read (its overlay applied) to a
//! resumable copy and the report of what it changed. It decides everything:
//! which suspects the copy leaves out, which failure records it drops, which
//! lines are damaged, when nothing is written, whether the copy is stuck still.
//! `cli/repair.rs` parses the flags and prints the [`Outcome`].

use std::path::Path;

use anyhow::bail;
use serde::Serialize;

use crate::alias::{Input, Snapshot};
use crate::classify::Class;
use crate::diagnose::{Asked, Deepened, Diagnosis, limits};
use crate::model::{Format, Session, Severity};
use crate::reader::Plan;
use crate::rewrite::{Rewrite, Summary, copy};

/// What `repair` is asked to do.
pub struct Job<'a> {
    /// The session file.
    pub path: &'a Path,
    pub plan: &'a Plan,
    /// The file as it was before the first read: the copy is made only from it.
    pub planned: Snapshot,
    /// Every file the command reads (the session, its overlay, `--rules`, a
    /// file beside it): the copy may name none of them.
    pub reads: Vec<Input>,
    pub rewrite: crate::rewrite::RewriteOptions,
    /// `--fit`: an image over the provider's limits is fitted, not left out.
    pub fit: bool,
    /// `--fit-context`: the bulkiest tool outputs become notes until the session fits its window.
    pub fit_context: Option<crate::rewrite::trim::ContextOptions>,
    /// Write the copy even when nothing in it would change.
    pub force: bool,
    /// Keep the prime suspects of a stuck session in the copy.
    pub keep_suspects: bool,
    /// The folder to write the copy in (default: beside the original).
    pub out: Option<&'a Path>,
    pub asked: Asked<'a>,
    /// The model the user named (`--model`).
    pub model: Option<String>,
    /// The session as the user typed it, and the flags that read it the same
    /// way, for the commands printed next.
    pub file_arg: String,
    pub read_args: String,
}

/// What a repair did.
pub enum Outcome {
    Written(Box<Report>),
    /// Nothing was written: the copy would hold the very records of the original.
    Nothing(Nothing),
}

impl Outcome {
    /// The copy (or the copy that would be) is stuck still: exit 1.
    pub fn stuck(&self) -> bool {
        match self {
            Outcome::Written(r) => r.still_stuck.is_some(),
            Outcome::Nothing(n) => n.still_stuck.is_some(),
        }
    }
}

/// A copy written.
#[derive(Serialize)]
pub struct Report {
    pub file: String,
    pub format: Format,
    pub written: bool,
    pub out: String,
    pub id: Option<String>,
    pub resume: Option<String>,
    /// What the resume command needs (Codex: a copy outside its sessions folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_note: Option<String>,
    pub lines: u64,
    pub touched: u64,
    /// Records whose only change is the new session id.
    pub renamed: u64,
    /// Records added (results of interrupted tool calls).
    pub inserted: u64,
    pub dropped: Vec<u64>,
    pub changes: Summary,
    /// Prime suspects of the original, not excluded by the overlay, that the copy leaves out.
    pub suspects_left_out: Vec<String>,
    /// `diagnose`'s verdict on the copy when it is stuck still (`null` when it is not),
    /// judged in memory as the copy reads.
    pub still_stuck: Option<String>,
    /// What to run next when it is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub next: Vec<String>,
    /// The copy is one document (an opencode export, a Cline task), not lines,
    /// and whether the session's ids in it were made the copy's own.
    #[serde(skip)]
    pub document: Option<bool>,
    /// Lines the reader had to skip (cut short, not JSON) that the copy leaves
    /// out: those no salvage made readable.
    #[serde(skip)]
    pub damaged: Vec<u64>,
    /// Damaged lines the copy salvaged: a record split over lines rejoined,
    /// records glued on one line split, each said with its lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub salvaged: Vec<String>,
}

/// Nothing written, and why.
pub struct Nothing {
    pub file: String,
    pub format: Format,
    pub reason: &'static str,
    /// The session is stuck on a failure that nothing asked for answers: a
    /// copy would be stuck the same way. What to do first is in `next`.
    pub still_stuck: Option<String>,
    pub next: Vec<String>,
    /// Images `--fit` would have fitted and could not, each with why.
    pub not_fitted: Vec<String>,
}

/// Why no copy is written when nothing would change.
pub const NOTHING_TO_REPAIR: &str = "nothing to repair: no exclusion, image cap, reasoning rewrite, unanswered tool call, failed request, lone surrogate or damaged line to change; a copy would hold the same records";

/// Repairs `session` (read by `job.plan`, its overlay applied).
pub fn repair(job: &Job<'_>, session: Session) -> anyhow::Result<Outcome> {
    refuse_unwritable(job)?;
    // The full decodes of suspects, made once for both diagnoses (the session's and its copy's).
    let deepened = Deepened::default();
    let (suspects_left_out, session, original) = leave_out_suspects(job, session, &deepened)?;
    let mut rewrite = Rewrite::plan(&session, &job.rewrite, job.plan.single_document);
    if job.fit {
        let source = crate::reader::Source::of(job.plan, job.path);
        rewrite.fit(&session, &source, &job.plan.rules, job.plan.single_document);
        rewrite.summary.not_fitted.splice(0..0, unfitted_suspects(job, &session, &suspects_left_out));
    }
    if let Some(opts) = job.fit_context {
        let source = crate::reader::Source::of(job.plan, job.path);
        let place = crate::rewrite::trim::Place { source: &source, single_document: job.plan.single_document };
        rewrite.fit_context(&session, &place, opts, job.model.as_deref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    // pi's first layout counts entries by position (`firstKeptEntryIndex`):
    // leaving a line out there would move its compactions. A copy that changes
    // nothing the failure blames keeps its record of it: without it, the copy
    // would be called healthy while it sends the request the provider refused.
    let answered =
        original.as_ref().is_none_or(|o| !o.recorded || addresses(o.class, &rewrite.summary, &suspects_left_out));
    if answered && !(job.plan.format == Format::Pi && positional(job.path)) {
        let source = crate::reader::Source::of(job.plan, job.path);
        rewrite.drop_failures(&session, job.plan.single_document.then_some(&source));
    }
    let damaged = damaged_lines(&session);
    // Nothing excluded, capped, rewritten, mended or left out: the copy would
    // hold the very records of the original, so none is written unless asked.
    if rewrite.ops.is_empty() && damaged.is_empty() && !job.force {
        let unanswered = original.filter(|_| !answered);
        return Ok(Outcome::Nothing(Nothing {
            file: session.file,
            format: session.format,
            not_fitted: rewrite.summary.not_fitted,
            reason: NOTHING_TO_REPAIR,
            still_stuck: unanswered.as_ref().map(|o| answers_nothing(o.class)),
            next: unanswered.map(|o| o.next).unwrap_or_default(),
        }));
    }
    write(job, session, &rewrite, Judged { suspects_left_out, original, damaged, deepened: &deepened })
        .map(|r| Outcome::Written(Box::new(r)))
}

/// What the repair learned before it writes.
struct Judged<'d> {
    suspects_left_out: Vec<String>,
    original: Option<Stuck>,
    damaged: Vec<u64>,
    deepened: &'d Deepened,
}

/// Writes the copy while the copy is judged in memory (see [`still_stuck`]):
/// the session goes to that judgement (not a copy of it: a session of a
/// million lines is 130 MB).
fn write(job: &Job<'_>, session: Session, rewrite: &Rewrite, judged: Judged<'_>) -> anyhow::Result<Report> {
    let mut reads = job.reads.clone();
    reads.extend(crate::alias::named_by(&session.attachments));
    let source =
        copy::CopySource { path: job.path, planned: job.planned, reads: &reads, written_by: session.written_by };
    let (file, format) = (session.file.clone(), session.format);
    let Judged { suspects_left_out, original, damaged, deepened } = judged;
    let summary = &rewrite.summary;
    let (written, still) = std::thread::scope(|s| {
        let (original, left_out) = (original.as_ref(), suspects_left_out.as_slice());
        let still = s.spawn(move || -> anyhow::Result<Option<(String, Vec<String>)>> {
            let still = still_stuck(job, session, summary, deepened)?;
            Ok(match (still, original) {
                (None, Some(o)) if !addresses(o.class, summary, left_out) => {
                    Some((answers_nothing(o.class), o.next.clone()))
                }
                (still, _) => still.map(|d| (d.verdict, d.next)),
            })
        });
        let (plan, text) = (job.plan, job.plan.text(job.path));
        let written = copy::repair_text(&source, text, plan.format, plan.single_document, rewrite, &damaged, job.out);
        (written, still.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    let written = written.map_err(name_the_earlier_copy)?;
    let (still_stuck, next) = still?.map_or((None, Vec::new()), |(verdict, next)| (Some(verdict), next));
    Ok(Report {
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
        changes: rewrite.summary.clone(),
        suspects_left_out,
        still_stuck,
        next,
        document: job.plan.single_document.then_some(written.identity.old_id.is_some()),
        damaged: damaged.into_iter().filter(|l| written.dropped.contains(l)).collect(),
        salvaged: written.salvaged.clone(),
    })
}

/// The copy's name is fixed for some formats: an earlier repair's copy is in the way.
fn name_the_earlier_copy(e: anyhow::Error) -> anyhow::Error {
    let exists = e
        .chain()
        .any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists));
    if exists {
        anyhow::anyhow!("{e} (an earlier repair's copy?): remove it, or write the copy elsewhere with --out DIR")
    } else {
        e
    }
}

/// A session that no copy can rescue: one in a store (never written), or a
/// Claude Code subagent's transcript (never resumed).
fn refuse_unwritable(job: &Job<'_>) -> anyhow::Result<()> {
    let (path, plan) = (job.path, job.plan);
    if let Some(why) = crate::reader::no_export(path, plan) {
        bail!(
            "{}: repair writes files, and this session lives in a store, which is never written; {why}, so there is no file to repair either: `scan` and `diagnose` read it, and nothing session-doctor writes reaches the agent",
            path.display()
        );
    }
    if plan.memory.is_some() {
        bail!(
            "{}: repair writes files, and this session lives in a store; export it first (`{} export <id> > session.json`) and repair that",
            path.display(),
            crate::formats::opencode::command(crate::formats::opencode::fork_of_store(path))
        );
    }
    if plan.format == Format::ClaudeCode
        && let Some(sub) = crate::formats::claude_code::subagent::of(path)
    {
        bail!(
            "{}: the transcript of Claude Code subagent {} of session {}: Claude Code resumes no subagent file, so a repaired copy could not be resumed; the parent session ({}) sends none of its requests",
            path.display(),
            sub.agent_id,
            sub.session_id,
            sub.parent.display()
        );
    }
    Ok(())
}

/// Lines the reader had to skip (cut short, not JSON): not the history's
/// structural findings, which the rewrite mends.
fn damaged_lines(session: &Session) -> Vec<u64> {
    let mut damaged: Vec<u64> = (session.findings.iter())
        .filter(|f| f.severity == Severity::Error && f.code.is_some_and(|c| c.starts_with("line.")))
        .map(|f| f.line)
        .collect();
    damaged.sort_unstable();
    damaged.dedup();
    damaged
}

/// How the original was stuck: its failure's class and the commands to run on it.
struct Stuck {
    class: Class,
    next: Vec<String>,
    /// The failure is on record in the session (not predicted): a record a copy could drop.
    recorded: bool,
}

/// The options the repair's diagnoses run with.
fn diagnose_options(job: &Job<'_>, as_repaired: Option<Vec<String>>) -> crate::diagnose::DiagnoseOptions {
    crate::diagnose::DiagnoseOptions {
        model: job.model.clone(),
        file_arg: job.file_arg.clone(),
        read_args: job.read_args.clone(),
        as_repaired,
        ..Default::default()
    }
}

/// Marks the prime suspects of a stuck session excluded, as `diagnose` names
/// them (and the overlay does not exclude yet), so the copy carries notes in
/// their place: a copy that keeps them fails the same way (not with
/// `keep_suspects`). Returns their refs, the session, which the diagnosis takes
/// and gives back (no copy of it is made), judged again by the reader's rules,
/// and how the original is stuck.
fn leave_out_suspects(
    job: &Job<'_>,
    session: Session,
    deepened: &Deepened,
) -> anyhow::Result<(Vec<String>, Session, Option<Stuck>)> {
    let opts = diagnose_options(job, None);
    let (d, mut session) = crate::diagnose::diagnose_read(job.path, session, job.plan, &job.asked, &opts, deepened)?;
    // The diagnosis judged by the rules of the provider that failed; the plan
    // and a fit go by the reader's, as before (what it decoded in full stays).
    for a in &mut session.attachments {
        a.judge(&job.plan.rules);
    }
    let class = d.failure.as_ref().map(|f| f.classification.class);
    let recorded = d.failure.as_ref().is_some_and(|f| f.source == crate::diagnose::FailureSource::Recorded);
    let stuck = class.filter(|_| d.stuck).map(|class| Stuck { class, next: d.next.clone(), recorded });
    if job.keep_suspects || !d.stuck || !class.is_some_and(crate::diagnose::next::excludes_suspects) {
        return Ok((Vec::new(), session, stuck));
    }
    // The images the copy sends (at most --max-images): past the many-image
    // threshold a fit keeps every image to the stricter side.
    let images = session.attachments.iter().filter(|a| a.sent() && a.is_image()).count();
    let images = job.rewrite.max_images.map_or(images, |cap| images.min(cap));
    let side = crate::fit::Limits::of(&job.plan.rules, images).max_side;
    let fittable = |s: &crate::diagnose::Suspect| {
        job.fit && crate::fit::fits_to(&s.attachment.problems, crate::diagnose::fit_shape(&s.attachment), side)
    };
    // A limit on every side of the request (Anthropic's past 20 images): a
    // valid image is no cause, and leaving it out answers nothing.
    let stats = session.request_stats();
    let sent: Vec<&crate::model::Attachment> = session.attachments.iter().filter(|a| a.sent()).collect();
    let judged = limits::Judged { stats: &stats, rules: &job.plan.rules, stated: None, sent: &sent };
    let every_side =
        limits::broken(&d.limits).any(|(p, _)| matches!(limits::remedy(p, &judged), Some(limits::Remedy::Fit(_))));
    let primes: Vec<String> = (d.suspects.iter())
        .filter(|s| s.prime && !s.attachment.excluded)
        .filter(|s| !every_side || s.attachment.verdict == crate::media::Verdict::Invalid)
        // With --fit, an image that is only too large is fitted, not left out.
        .filter(|s| !fittable(s))
        .map(|s| s.attachment.reference.clone())
        .collect();
    for a in session.attachments.iter_mut().filter(|a| primes.contains(&a.reference)) {
        a.excluded = true;
    }
    Ok((primes, session, stuck))
}

/// The suspects left out that `--fit` would have fitted had they decoded,
/// each with why it could not: a suspect left out under `--fit` says so.
fn unfitted_suspects(job: &Job<'_>, session: &Session, left_out: &[String]) -> Vec<String> {
    let images = session.attachments.iter().filter(|a| a.sent() && a.is_image()).count();
    let side = crate::fit::Limits::of(&job.plan.rules, images).max_side;
    (session.attachments.iter())
        .filter(|a| left_out.contains(&a.reference))
        .filter_map(|a| {
            let why = crate::fit::unfittable(&a.problems, crate::diagnose::fit_shape(a), side)?;
            Some(format!("{}: {why}, so it was left out instead", a.reference))
        })
        .collect()
}

/// The verdict on a copy whose changes answer nothing of a `class` failure.
fn answers_nothing(class: Class) -> String {
    format!(
        "still stuck: nothing this repair changes answers the {class} failure, so a copy sends the request the provider refused"
    )
}

/// Whether what a repair changed can answer a failure of `class`: a copy that
/// changes nothing the failure is about sends the request the provider
/// refused; it keeps its record of the refusal (without it, judged as it
/// reads, it would look healthy where the cause is not in its bytes: valid
/// media a provider refuses, a gateway's image count).
fn addresses(class: Class, changes: &Summary, left_out: &[String]) -> bool {
    let removed = !changes.excluded.is_empty()
        || !changes.capped.is_empty()
        || !changes.fitted.is_empty()
        || !changes.healed.is_empty()
        || !left_out.is_empty();
    match class {
        Class::ImageLimit => !changes.capped.is_empty() || !changes.excluded.is_empty() || !left_out.is_empty(),
        Class::ReasoningRejected => changes.reasoning_removed > 0 || changes.reasoning_ids_dropped > 0,
        // A trimmed copy answers it when its estimate fits the window.
        Class::ContextOverflow if changes.context.is_some() => {
            changes.context.as_ref().is_some_and(crate::rewrite::trim::Estimate::fits)
                && (removed || !changes.elided.is_empty())
        }
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
    job: &Job<'_>,
    mut copy: Session,
    changes: &Summary,
    deepened: &Deepened,
) -> anyhow::Result<Option<Diagnosis>> {
    // A capped image is a note in the copy; a fitted one meets the limits it broke.
    for a in (copy.attachments.iter_mut())
        .filter(|a| changes.capped.contains(&a.reference) || changes.fitted.contains(&a.reference))
    {
        a.excluded = true;
    }
    copy.reasoning.retain(|r| !job.rewrite.strips(r.kind));
    let mended = changes
        .calls_answered
        .iter()
        .chain(&changes.results_removed)
        .chain(&changes.repeats_removed)
        .cloned()
        .collect();
    let opts = diagnose_options(job, Some(mended));
    let (d, _) = crate::diagnose::diagnose_read(job.path, copy, job.plan, &job.asked, &opts, deepened)?;
    Ok(d.stuck.then_some(d))
}

/// Whether a pi session is of the first layout (no entry ids): its header has
/// no `version`, or version 1.
fn positional(path: &Path) -> bool {
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
