//! Why a session is stuck: the last failure, its class, whether a retry can
//! ever work, which attachments are to blame, and the exact next commands.
//!
//! Facts before policy: the reader judged every payload once; here the
//! attachments are judged again under the provider that actually failed
//! ([`crate::model::Attachment::judge`]), without decoding anything again.
//! Suspects come from the acceptance boundary (DESIGN "Vocabulary"): a model
//! that answered a request accepted every attachment in it, so only what came
//! after its latest answer can be to blame.

mod block_path;
mod claude_code;
mod faults;
pub mod limits;
pub mod next;
mod no_images;
mod read;
mod run;
mod signature;
mod suspects;
pub mod unicode;

use serde::Serialize;

use crate::classify::{self, Class, Classification, Hint};
use crate::media::rules::Rules;
use crate::media::{Defect, Verdict};
use crate::model::Format;
use crate::model::{Attachment, Finding, Role, Session};

pub use faults::HistoryItem;
pub use next::command as next_command;
pub use read::{Asked, Deepened, diagnose_read};

/// How many suspects `diagnose` decodes fully after a structural read.
const DEEP_SUSPECTS: usize = 32;

/// What the user told `diagnose` beyond the session itself.
#[derive(Clone, Debug, Default)]
pub struct DiagnoseOptions {
    /// The provider's error, when the session did not record it (or to override it).
    pub error: Option<String>,
    /// The model that failed, when the session does not say.
    pub model: Option<String>,
    /// The session file as the user typed it, for the commands in `next`.
    pub file_arg: String,
    /// Extra arguments the next commands need to read the session the same way
    /// (`ReadArgs::repeat`: the settings actually used), already quoted.
    pub read_args: String,
    /// The session was read from a store of many (opencode's database), which
    /// `repair` refuses: no next command sends it there.
    pub store: bool,
    /// ... and why it has no export to repair either, when it has none
    /// ([`crate::reader::no_export`]).
    pub no_export: Option<String>,
    /// ... or the export its next commands go through, when it has one
    /// (opencode's database): an exclusion made on the store stays in the
    /// store's overlay, which the export's repair never reads.
    pub export: Option<Export>,
    /// Judge the session as a repaired copy of it reads: its recorded failures
    /// left out (the copy drops them) and the tool calls it mends (answered, or
    /// their orphan results removed) paired.
    pub as_repaired: Option<Vec<String>>,
}

/// A store's session taken out to a file the next commands read.
#[derive(Clone, Debug, Default)]
pub struct Export {
    /// The session to export.
    pub session: String,
    /// The command that exports it (`opencode`, or `kilo` for Kilo Code CLI's store).
    pub cli: &'static str,
    /// The read arguments for the export (the store's, without `--session`,
    /// `--format` and `--overlay`), already quoted.
    pub read_args: String,
}

/// Where the failure came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureSource {
    /// The session recorded the provider's error.
    Recorded,
    /// The user passed it (`--error`, `--error-file`).
    Given,
    /// None was recorded; the history alone shows the next request will fail.
    Predicted,
}

/// The failure `diagnose` explains: the classifier's fields, plus where it is.
#[derive(Clone, Debug, Serialize)]
pub struct Failure {
    #[serde(flatten)]
    pub classification: Classification,
    /// The line that recorded it (`null` when given or predicted, or recorded
    /// beside the history: Cline's `ui_messages.json`).
    pub line: Option<u64>,
    pub source: FailureSource,
    /// A later request was accepted: the session got past this failure.
    pub recovered: bool,
    /// The model the session moved to after this failure (pi's `/model`): the
    /// next request goes there, and this failure says nothing of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
}

impl Failure {
    /// The history has moved past it: answered since, or sent elsewhere now.
    pub fn passed(&self) -> bool {
        self.recovered || self.moved_to.is_some()
    }
}

/// One attachment that may be to blame.
#[derive(Clone, Debug, Serialize)]
pub struct Suspect {
    #[serde(flatten)]
    pub attachment: Attachment,
    /// The most likely culprit: the block the provider named, or bytes that fail validation.
    pub prime: bool,
    /// The provider's error names this block.
    pub named: bool,
    /// Why it is a suspect, in words.
    pub why: String,
}

/// What `--fit` knows of an attachment before reading its bytes (its size and
/// type, as they were judged).
pub fn fit_shape(a: &Attachment) -> crate::fit::Shape<'_> {
    crate::fit::Shape { size: (a.width, a.height), mime: a.mime_detected.as_deref() }
}

/// The last request the failing model accepted.
#[derive(Clone, Debug, Serialize)]
pub struct Boundary {
    pub line: u64,
    pub model: Option<String>,
}

/// `diagnose --json`: DESIGN's schema (`file`, `format`, `stuck`, `failure`,
/// `suspects`, `excluded`, `next`) plus the judgement's context.
#[derive(Clone, Debug, Serialize)]
pub struct Diagnosis {
    pub file: String,
    pub format: Format,
    /// The agent that wrote it, where another than the format's own (`kilo`:
    /// Kilo Code CLI, in opencode's format); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_by: Option<crate::model::Fork>,
    pub stuck: bool,
    /// One sentence: the verdict a person reads first.
    pub verdict: String,
    pub failure: Option<Failure>,
    pub suspects: Vec<Suspect>,
    /// Refs the overlay excludes.
    pub excluded: Vec<String>,
    /// What breaks the history's structure (tool calls without results, results
    /// without calls, …): the culprits of a `history_invalid` failure, those the
    /// provider's error names first.
    pub history: Vec<HistoryItem>,
    /// The exact commands to run next, in order.
    pub next: Vec<String>,
    /// The file cannot tell whether its last request failed: the agent fails
    /// requests without recording it (Gemini CLI headless) and the history ends
    /// in one with no answer. Not stuck as far as the file says, never healthy.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub undetermined: bool,
    /// Whose rules judged the media.
    pub provider: String,
    /// The model whose acceptance bounds the suspects.
    pub model: Option<String>,
    pub boundary: Option<Boundary>,
    /// Per-request limits the history (less the exclusions) breaks.
    pub limits: Vec<Defect>,
    /// Invalid attachments the model accepted: no suspects, but not healthy media.
    pub accepted_invalid: Vec<AcceptedInvalid>,
    /// How the suspects were chosen, and anything else worth saying.
    pub notes: Vec<String>,
    /// What the reader found wrong with the file itself.
    pub findings: Vec<Finding>,
    pub lines: u64,
    pub entries: usize,
    pub attachments: usize,
    /// The provider-visible history the judgement was made on, for printers
    /// that show it (`--html`); not part of the JSON.
    #[serde(skip)]
    pub timeline: Timeline,
}

/// The history a diagnosis looked at: its entries in order, and every
/// attachment as judged under the provider that failed (`entry` indexes `entries`).
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub entries: Vec<crate::model::Entry>,
    pub attachments: Vec<Attachment>,
}

/// The rules to judge by: `rules` as the reader chose them unless the failure
/// names another provider, whose built-in rules are then used.
pub struct Judging<'r> {
    pub rules: &'r Rules,
    /// The user forced the provider (`--provider`): the failure's does not win.
    pub forced: bool,
    /// The user's overrides (`--rules`), re-applied to another provider's rules.
    pub overrides: Option<&'r std::path::Path>,
    /// Examines a suspect's bytes fully (a `--deep` check), when the session
    /// was read structurally: suspects are few, so each gets the full decode.
    pub deepen: Option<Deepen<'r>>,
    /// The bytes the session was read from: a provider's block path is read
    /// in the request built from them. `None`: no block path names an attachment.
    pub source: Option<&'r crate::reader::Source>,
    /// The session is one JSON document.
    pub single_document: bool,
}

/// Examines an attachment's bytes again, fully.
pub type Deepen<'r> = &'r (dyn Fn(&Attachment) -> Option<crate::media::Facts> + Sync);

/// A suspect's payload up to this size is decoded beside others; a larger one
/// alone, so that memory stays at one long payload (its text and its bytes)
/// plus a few small ones.
const SIDE_BY_SIDE_MAX: u64 = 4 << 20;
/// Suspects decoded at once, at most (and at most one per core).
const SIDE_BY_SIDE: usize = 4;

/// `deepen` of the attachments at `todo`, in that order: the small ones side
/// by side, one per core (a full decode is the slow part of a diagnosis, and
/// suspects are independent of each other), the large ones one at a time.
fn deepen_all(attachments: &[Attachment], todo: &[usize], deepen: Deepen<'_>) -> Vec<Option<crate::media::Facts>> {
    let small = |i: usize| attachments[i].span.is_some_and(|s| s.len <= SIDE_BY_SIDE_MAX);
    let mut out: Vec<Option<crate::media::Facts>> =
        todo.iter().map(|&i| if small(i) { None } else { deepen(&attachments[i]) }).collect();
    let side: Vec<usize> = (0..todo.len()).filter(|&k| small(todo[k])).collect();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let workers = cores.min(SIDE_BY_SIDE).min(side.len());
    if workers <= 1 {
        for k in side {
            out[k] = deepen(&attachments[todo[k]]);
        }
        return out;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let work = || {
            let mut mine = Vec::new();
            while let Some(&k) = side.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                mine.push((k, deepen(&attachments[todo[k]])));
            }
            mine
        };
        let handles: Vec<_> = (0..workers).map(|_| s.spawn(work)).collect();
        for h in handles {
            for (k, facts) in h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)) {
                out[k] = facts;
            }
        }
    });
    out
}

/// Diagnoses a session read by the reader, with the overlay already applied.
pub fn diagnose(session: Session, judging: &Judging<'_>, opts: &DiagnoseOptions) -> anyhow::Result<Diagnosis> {
    diagnose_keeping(session, judging, opts).map(|(d, session)| d.with(session))
}

impl Diagnosis {
    /// The diagnosis with the session [`diagnose_keeping`] gave back moved in:
    /// its findings, entries and attachments.
    pub fn with(mut self, session: Session) -> Diagnosis {
        self.findings = session.findings;
        self.timeline = Timeline { entries: session.entries, attachments: session.attachments };
        self
    }
}

/// As [`diagnose`], but the session comes back instead of going into the
/// diagnosis (whose `findings` and `timeline` are then empty), its attachments
/// judged as the diagnosis judged them and its suspects decoded in full:
/// `repair` goes on from it rather than from a copy made beforehand (about 80
/// bytes a line of a long session). The stages are `run::Work`'s.
pub fn diagnose_keeping(
    session: Session,
    judging: &Judging<'_>,
    opts: &DiagnoseOptions,
) -> anyhow::Result<(Diagnosis, Session)> {
    let mut work = run::Work::start(session, judging, opts)?;
    work.pick_suspects();
    work.deepen_suspects();
    work.settle_failure();
    work.explain_history();
    Ok(work.finish())
}

/// An invalid attachment the model answered after: where it answered.
#[derive(Clone, Debug, Serialize)]
pub struct AcceptedInvalid {
    #[serde(rename = "ref")]
    pub reference: String,
    /// The line of the first answer after it.
    pub line: u64,
    /// Its worst problem, in words.
    pub why: String,
    /// A failure between it and that answer: the answer is to a retry, which
    /// the agent may have sent without it (Copilot CLI drops refused images
    /// from the retry, and sends them again with the next request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_at: Option<u64>,
    /// The agent recorded that it no longer sends it (Claude Code's
    /// `media_removed`): the retry went without it, for certain.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub healed: bool,
    /// The agent retries a refused request without its media and records
    /// neither ([`crate::formats::Behaviour::silent_media_retry`]): the answer
    /// may be to that retry. What the agent does, in words.
    #[serde(skip)]
    pub silent_retry: Option<&'static str>,
}

impl AcceptedInvalid {
    /// Which request the model answered, in words that are true of the file.
    pub fn answered(&self) -> String {
        match (self.failed_at, self.healed) {
            (None, _) if let Some(how) = self.silent_retry => {
                format!("the model answered at line {}, but {how}: that answer may be to a retry without it", self.line)
            }
            (None, _) => format!("the model accepted it at line {}", self.line),
            (Some(f), true) => format!(
                "a request carrying it failed at line {f}; the agent put its placeholder in its place, and the model answered the retry at line {}",
                self.line
            ),
            (Some(f), false) => format!(
                "a request carrying it failed at line {f}; the model answered a retry at line {}, which the agent may have sent without it",
                self.line
            ),
        }
    }
}

/// The active invalid attachments that are not suspects because a later answer
/// accepted them, each with the line of that answer.
fn accepted_invalid(session: &Session, suspects: &[Suspect]) -> Vec<AcceptedInvalid> {
    let suspected: std::collections::HashSet<&str> = suspects.iter().map(|s| s.attachment.reference.as_str()).collect();
    // For each entry, the first accepted answer and the first failure at or
    // after it: one pass back, so many invalid attachments cost no more than one.
    let n = session.entries.len();
    let (mut answer, mut failure) = (vec![None; n + 1], vec![None; n + 1]);
    for (i, e) in session.entries.iter().enumerate().rev() {
        answer[i] = if e.role == Role::Assistant && e.accepted && e.error.is_none() { Some(i) } else { answer[i + 1] };
        failure[i] = if e.error.is_some() { Some(i) } else { failure[i + 1] };
    }
    session
        .attachments
        .iter()
        .filter(|a| !a.excluded && a.verdict == Verdict::Invalid)
        .filter(|a| !suspected.contains(a.reference.as_str()))
        .filter_map(|a| {
            let from = (a.entry + 1).min(n);
            let at = answer[from]?;
            let failed_at = failure[from].filter(|&f| f < at).map(|f| session.entries[f].line);
            let why = a.problems.iter().find(|p| p.severity == Verdict::Invalid).map(|p| p.message.clone());
            let (reference, line, why) = (a.reference.clone(), session.entries[at].line, why.unwrap_or_default());
            let silent_retry = session.format.behaviour().silent_media_retry.filter(|_| failed_at.is_none());
            Some(AcceptedInvalid { reference, line, why, failed_at, healed: a.healed, silent_retry })
        })
        .collect()
}

/// The failure to explain: the one given, else the last one recorded in the
/// history (a user's cancel only when nothing else failed after the last answer).
fn find_failure(session: &Session, opts: &DiagnoseOptions) -> (Option<Failure>, Option<usize>) {
    let provider = session.provider.clone();
    if let Some(text) = &opts.error {
        let c = classify::classify(text, &Hint { status: None, provider: None });
        let f =
            Failure { classification: c, line: None, source: FailureSource::Given, recovered: false, moved_to: None };
        let last = session.entries.iter().rposition(|e| e.error.is_some());
        return (Some(f), last);
    }
    let last_accepted = session.entries.iter().rposition(|e| e.accepted);
    let failed: Vec<usize> = (0..session.entries.len()).filter(|&i| session.entries[i].error.is_some()).collect();
    let classify_at = |i: usize| {
        let e = &session.entries[i];
        let rec = e.error.as_deref().expect("an entry with an error");
        let hint =
            Hint { status: rec.status, provider: e.provider.as_deref().or(provider.as_deref()).map(str::to_string) };
        classify::classify(&rec.text, &hint)
    };
    // After the last accepted answer, prefer the last real failure over a cancel,
    // and a refusal of the history over a transient failure after it: a 429 or a
    // 529 says nothing of whether the provider takes the history it refused, and
    // once it passes, the same history fails the same way.
    let unanswered: Vec<usize> = failed.iter().copied().filter(|&i| last_accepted.is_none_or(|a| i > a)).collect();
    let judged: Vec<(usize, Classification)> = unanswered.iter().rev().map(|&i| (i, classify_at(i))).collect();
    let refusal = |c: &Classification| c.retryable == Some(false) && c.class != Class::Unknown;
    let chosen = judged
        .iter()
        .find(|(_, c)| c.class != Class::Aborted)
        .map(|(i, c)| match judged.iter().find(|(_, c)| refusal(c)) {
            Some(r) if c.retryable == Some(true) => r.clone(),
            _ => (*i, c.clone()),
        })
        .or_else(|| failed.last().map(|&i| (i, classify_at(i))));
    let Some((i, c)) = chosen else { return (None, None) };
    let recovered = last_accepted.is_some_and(|a| a > i);
    // A model chosen after the failure (no entry went to it yet) takes the next request.
    let moved_to = session
        .model
        .clone()
        .filter(|m| session.entries[i].model.as_deref().or(latest_model(session, Some(i)).as_deref()) != Some(m));
    // Line 0: recorded beside the history, not on a line of it (Cline's ui_messages.json).
    let line = Some(session.entries[i].line).filter(|&l| l > 0);
    let f = Failure { classification: c, line, source: FailureSource::Recorded, recovered, moved_to };
    (Some(f), Some(i))
}

/// The model of the latest assistant entry before `upto` that names one.
fn latest_model(session: &Session, upto: Option<usize>) -> Option<String> {
    let end = upto.unwrap_or(session.entries.len());
    session.entries[..end]
        .iter()
        .rev()
        .filter(|e| e.role == Role::Assistant || e.error.is_some())
        .find_map(|e| e.model.as_deref().map(str::to_string))
}

/// The history ends without an answer: the last request is still to be accepted.
fn unanswered(session: &Session) -> bool {
    session.entries.iter().rev().find(|e| e.error.is_none() && e.role != Role::System).is_some_and(|e| !e.accepted)
}

/// With no failure recorded: will the next request fail, and how?
fn predict(
    session: &Session,
    suspects: &[Suspect],
    limits: &[Defect],
    rules: &Rules,
    unanswered: bool,
    notes: &mut Vec<String>,
) -> Option<Failure> {
    let predicted = |class: Class, message: String, limit: Option<u64>| {
        let c = Classification {
            class,
            retryable: class.retryable(),
            provider: Some(rules.provider.clone()),
            status: None,
            code: None,
            kind: None,
            message: Some(message),
            limit,
            block: None,
            remedy: class.remedy(),
            call_ids: Vec::new(),
            why: vec!["no blocking provider error is recorded; predicted from the history".into()],
        };
        Some(Failure {
            classification: c,
            line: None,
            source: FailureSource::Predicted,
            recovered: false,
            moved_to: None,
        })
    };
    if let Some(s) = suspects.iter().find(|s| s.attachment.verdict == Verdict::Invalid) {
        let why = s.attachment.problems.iter().find(|p| p.severity == Verdict::Invalid).map(|p| p.message.clone());
        notes.push("no blocking provider error is recorded: the verdict comes from validating the attachments".into());
        let msg = format!("{} will be rejected: {}", s.attachment.reference, why.unwrap_or_default());
        return predicted(Class::MediaRejected, msg, None);
    }
    if !unanswered {
        return None;
    }
    if let Some((p, limit)) = limits::first(limits) {
        notes.push("no blocking provider error is recorded: the history breaks a per-request limit".into());
        return predicted(limit.class, p.message.clone(), (limit.maximum)(rules));
    }
    let family = provider_family(&rules.provider)?;
    // An item reference is no reasoning: the AI SDK sends it to OpenAI alone.
    let foreign = session
        .reasoning
        .iter()
        .find(|r| r.kind.family() != family && r.kind != crate::model::ReasoningKind::OpenaiReference)?;
    notes.push("no blocking provider error is recorded: the history replays another provider's reasoning".into());
    let msg = format!(
        "line {} holds {} reasoning, which {} cannot verify",
        foreign.line,
        foreign.kind.family(),
        rules.provider
    );
    predicted(Class::ReasoningRejected, msg, None)
}

pub fn provider_family(p: &str) -> Option<&'static str> {
    match p {
        "anthropic" | "bedrock" | "vertex-anthropic" => Some("anthropic"),
        "openai" | "azure-openai" => Some("openai"),
        "gemini" | "vertex-gemini" => Some("gemini"),
        _ => None,
    }
}

/// Stuck: the failure will come back on every retry.
/// `invalid_excluded`: an attachment whose bytes fail validation is excluded.
fn is_stuck(f: &Failure, suspects: &[Suspect], invalid_excluded: bool) -> bool {
    if f.passed() {
        return false;
    }
    let c = f.classification.class;
    match c.retryable() {
        Some(true) => false,
        Some(false) if c == Class::Aborted => false,
        // A media failure with nothing left to blame: every suspect is excluded
        // (the block the provider named among them), or what validation blames
        // is, and no prime suspect is left. The next request differs.
        Some(false) => {
            let addressed = suspects.is_empty() || (invalid_excluded && !suspects.iter().any(|s| s.prime));
            !(matches!(c, Class::MediaRejected) && addressed)
        }
        None => suspects.iter().any(|s| s.prime),
    }
}

/// A refused replay of reasoning the history no longer holds: the item id
/// (`rs_`, `msg_`, `fc_`) an "Item with id '…' not found" names is gone (a copy `--drop-reasoning-ids`
/// wrote), or none of the refusing provider's reasoning for another refusal
/// (`--strip-reasoning=<family>`; every family's when the provider is none of
/// them). A predicted failure, or a signature to add, is not cured so.
fn reasoning_gone(f: &Failure, session: &Session, provider: &str) -> bool {
    let text = f.classification.message.as_deref().unwrap_or("").to_ascii_lowercase();
    if f.classification.class != Class::ReasoningRejected
        || f.source == FailureSource::Predicted
        || signature::missing(&text)
    {
        return false;
    }
    if text.contains("not found") {
        // The reasoning id the provider could not find, as it names it.
        let message = f.classification.message.as_deref().unwrap_or("");
        let named = message.split('\'').nth(1).filter(|id| ["rs_", "msg_", "fc_"].iter().any(|p| id.starts_with(p)));
        return named.is_some_and(|id| session.reasoning.iter().all(|r| r.id.as_deref() != Some(id)));
    }
    match provider_family(provider) {
        Some(family) => session.reasoning.iter().all(|r| r.kind.family() != family),
        None => session.reasoning.is_empty(),
    }
}

/// No failure, and every attachment passed a full decode.
const HEALTHY: &str = "healthy: no failure recorded, and nothing the next request carries is invalid";
/// [`HEALTHY`] as a structural read can claim it: the pixels were not decoded.
const HEALTHY_STRUCTURE: &str = "healthy: no failure recorded, and nothing the next request carries fails the structural check (--deep decodes every image in full)";

fn verdict(f: Option<&Failure>, stuck: bool, suspects: &[Suspect]) -> String {
    let Some(f) = f else {
        return HEALTHY.into();
    };
    let class = f.classification.class;
    if f.recovered {
        return format!("healthy: the {class} failure was followed by an accepted request");
    }
    if let Some(m) = &f.moved_to {
        return format!(
            "healthy: the {class} failure was another model's; the next request goes to {m}, which takes what it carries"
        );
    }
    if !stuck {
        return match class.retryable() {
            Some(true) => format!("not stuck: {class} is transient, a retry can work"),
            _ if class == Class::Aborted => "not stuck: the last request was cancelled".into(),
            _ if class == Class::MediaRejected && !suspects.is_empty() => format!(
                "not stuck: the attachments whose bytes fail validation are excluded, so the next request differs; if the provider rejects it too, {} valid suspect{} it has not accepted yet remain{}",
                suspects.len(),
                if suspects.len() == 1 { "" } else { "s" },
                if suspects.len() == 1 { "s" } else { "" }
            ),
            _ if class == Class::ImageLimit && f.classification.limit == Some(0) => {
                "not stuck: the model or route takes no images, and the next request carries none".into()
            }
            _ if class == Class::ReasoningRejected => {
                "not stuck: the history no longer holds the reasoning the provider refused, so the next request differs"
                    .into()
            }
            _ => format!("not stuck: nothing the {class} failure could blame is left in the next request"),
        };
    }
    let primes = suspects.iter().filter(|s| s.prime).count();
    match (class, primes) {
        (Class::MediaRejected, n) if n > 0 => format!(
            "stuck: the provider rejects an attachment on every request ({n} prime suspect{})",
            if n == 1 { "" } else { "s" }
        ),
        // No known class: a retry may work, but not while it carries what fails validation.
        (Class::Unknown, n) => format!(
            "stuck: the failure is of no known class, but every retry sends the {n} prime suspect{} again",
            if n == 1 { "" } else { "s" }
        ),
        _ => format!("stuck: {class} — every retry sends the same request and fails the same way"),
    }
}
