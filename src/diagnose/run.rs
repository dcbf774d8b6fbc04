//! The diagnosis as named stages over one [`Work`]: find the failure, judge
//! the media by the provider that failed, pick the suspects (and decode them
//! fully), settle which failure the session is stuck on, explain the history,
//! then the verdict and the next commands. Each stage reads what the ones
//! before it left in [`Work`], so their order is the pipeline's.

use std::collections::HashMap;

use crate::classify::Class;
use crate::media::rules::{RequestStats, Rules};
use crate::media::{Defect, Verdict, request_problems};
use crate::model::{Format, Session};

use super::limits::{self, Remedy};
use super::suspects::{self, Picked};
use super::{
    AcceptedInvalid, DEEP_SUSPECTS, DiagnoseOptions, Diagnosis, Failure, FailureSource, HistoryItem, Judging, Timeline,
    block_path, claude_code, deepen_all, faults, next,
};

/// Everything a diagnosis has learned so far.
pub(super) struct Work<'j> {
    session: Session,
    judging: &'j Judging<'j>,
    opts: &'j DiagnoseOptions,
    failure: Option<Failure>,
    /// The entry that recorded the failure, while the failure is live.
    failing_entry: Option<usize>,
    /// A transient failure or a cancel recorded after the refusal chosen (its line).
    passed_over: Option<u64>,
    model: Option<String>,
    rules: Rules,
    /// The request the agent sends, where a provider's block path is read.
    request: Option<block_path::SentRequest<'j>>,
    picked: Picked,
    structure: Vec<crate::model::Fault>,
    /// The failure the history's structure alone predicts.
    structural: Option<Failure>,
    /// The verdict is Gemini CLI's repeated responses, nothing else being wrong.
    repeats_verdict: bool,
    /// What the next request carries, and the per-request limits it breaks.
    stats: RequestStats,
    limits: Vec<Defect>,
    notes: Vec<String>,
}

impl<'j> Work<'j> {
    /// Finds the failure to explain and the model it concerns, and judges the
    /// attachments under the rules of the provider that failed.
    pub(super) fn start(
        mut session: Session,
        judging: &'j Judging<'j>,
        opts: &'j DiagnoseOptions,
    ) -> anyhow::Result<Work<'j>> {
        let (failure, failing_entry) =
            if opts.as_repaired.is_some() { (None, None) } else { super::find_failure(&session, opts) };
        let passed_over = match (&failure, failing_entry) {
            (Some(f), Some(i)) if f.source == FailureSource::Recorded && !f.passed() => {
                session.entries[i + 1..].iter().rev().find(|e| e.error.is_some()).map(|e| e.line)
            }
            _ => None,
        };
        let model = opts
            .model
            .clone()
            .or_else(|| failing_entry.and_then(|i| session.entries[i].model.as_deref().map(str::to_string)))
            .or_else(|| match failing_entry {
                Some(_) => super::latest_model(&session, failing_entry),
                None => session.next_model().map(str::to_string),
            });
        let rules = rules_for(&session, failure.as_ref(), model.as_deref(), judging)?;
        for a in &mut session.attachments {
            a.judge(&rules);
        }
        let request = judging.source.map(|source| block_path::SentRequest {
            source,
            single_document: judging.single_document,
            dialect: crate::formats::native_of(&session, &rules.provider),
        });
        // Past a failure the session recovered from, the boundary is the latest
        // answer and the old failure blames nothing.
        let failing_entry = failing_entry.filter(|_| failure.as_ref().is_some_and(|f| !f.passed()));
        let picked = Picked { suspects: Vec::new(), boundary: None, notes: Vec::new() };
        Ok(Work {
            session,
            judging,
            opts,
            failure,
            failing_entry,
            passed_over,
            model,
            rules,
            request,
            picked,
            structure: Vec::new(),
            structural: None,
            repeats_verdict: false,
            stats: RequestStats::default(),
            limits: Vec::new(),
            notes: Vec::new(),
        })
    }

    fn live(&self) -> Option<&Failure> {
        self.failure.as_ref().filter(|f| !f.passed())
    }

    /// The suspects by the acceptance boundary, and the history's structure.
    pub(super) fn pick_suspects(&mut self) {
        self.picked = self.pick();
        let mut structure = self.session.structure.faults.clone();
        if let Some(mended) = &self.opts.as_repaired {
            structure.retain(|p| p.call_id.as_ref().is_none_or(|id| !mended.contains(id)));
        }
        self.structural = faults::predict(&structure, &self.rules.provider);
        self.structure = structure;
    }

    fn pick(&self) -> Picked {
        let (live, model) = (self.live(), self.model.as_deref());
        suspects::pick(&self.session, live, self.failing_entry, model, self.request.as_ref())
    }

    /// Decodes the suspects in full (a structural read judged them), unless the
    /// culprits are calls and results, when a full decode would be thrown away.
    pub(super) fn deepen_suspects(&mut self) {
        let history_fails = match &self.failure {
            Some(f) if blocking(f) => f.classification.class == Class::HistoryInvalid,
            _ => self.structural.is_some(),
        };
        let Some(deepen) = self.judging.deepen.filter(|_| !history_fails) else { return };
        // Suspects are usually few; when they are many (no request ever
        // accepted), the newest are the likeliest and a full decode of all
        // would cost more than the scan: the rest keep their structural verdict.
        let mut todo: Vec<&str> = (self.picked.suspects.iter())
            .filter(|s| s.attachment.verdict != Verdict::Invalid)
            .map(|s| s.attachment.reference.as_str())
            .collect();
        let index: HashMap<&str, usize> =
            self.session.attachments.iter().enumerate().map(|(i, a)| (a.reference.as_str(), i)).collect();
        todo.sort_by_key(|r| std::cmp::Reverse(index.get(r).copied()));
        let deep_note = (todo.len() > DEEP_SUSPECTS).then(|| {
            format!(
                "the {DEEP_SUSPECTS} newest of {} suspects were fully decoded; `--deep` decodes every one",
                todo.len()
            )
        });
        let todo: Vec<usize> = todo.iter().take(DEEP_SUSPECTS).filter_map(|r| index.get(r).copied()).collect();
        let decoded = deepen_all(&self.session.attachments, &todo, deepen);
        let mut changed = false;
        for (i, facts) in todo.into_iter().zip(decoded) {
            let a = &mut self.session.attachments[i];
            if let Some(facts) = facts {
                a.facts = Some(Box::new(facts));
                a.judge(&self.rules);
                changed |= a.verdict == Verdict::Invalid;
            }
        }
        if changed {
            self.picked = self.pick();
        }
        self.picked.notes.extend(deep_note);
    }

    /// Which failure the session is stuck on: a blocking one recorded or
    /// given, else the history's structure, else what the history predicts.
    pub(super) fn settle_failure(&mut self) {
        self.stats = self.session.request_stats();
        self.limits = request_problems(&self.stats, &self.rules);
        self.notes = std::mem::take(&mut self.picked.notes);
        // Gemini CLI's repeated responses (every resumed session with a tool call
        // holds them) go with any repair: what else is wrong comes first, so that
        // its suspects are named; the repeats are the verdict only when nothing is.
        let mut repeats = None;
        if self.repeats_only() && self.failure.as_ref().is_none_or(|f| !blocking(f)) {
            repeats = self.structural.take();
        }
        let failure = match self.failure.take() {
            Some(f) if blocking(&f) => Some(f),
            earlier => match self.structural.take() {
                Some(p) => {
                    self.notes.clear();
                    self.notes.push(structure_blocks(earlier.as_ref()));
                    Some(p)
                }
                None => earlier,
            },
        };
        self.failure = self.past_transient(failure);
        if let Some(p) = repeats.filter(|_| self.failure.as_ref().is_none_or(Failure::passed)) {
            self.notes.retain(|n| !is_suspects_note(n));
            self.notes.push(structure_blocks(self.failure.as_ref()));
            self.failure = Some(p);
            self.repeats_verdict = true;
        }
    }

    /// The history's only faults are Gemini CLI's repeats of a response.
    fn repeats_only(&self) -> bool {
        self.session.format == Format::GeminiCli
            && !self.structure.is_empty()
            && self.structure.iter().all(|p| p.kind == crate::model::FaultKind::DuplicateResult)
    }

    /// A failure answered since says nothing about what came after it: the
    /// history is judged as if none were recorded, and the old one is kept if
    /// nothing newer is wrong. Nor does a transient failure or a cancel: the
    /// retry it invites sends the same history, so what the history alone
    /// predicts comes first.
    fn past_transient(&mut self, failure: Option<Failure>) -> Option<Failure> {
        let unanswered = super::unanswered(&self.session);
        let (session, suspects, limits, rules) = (&self.session, &self.picked.suspects, &self.limits, &self.rules);
        let notes = &mut self.notes;
        match failure {
            Some(f) if f.passed() => super::predict(session, suspects, limits, rules, unanswered, notes).or(Some(f)),
            Some(f) if f.classification.retryable == Some(true) || f.classification.class == Class::Aborted => {
                match super::predict(session, suspects, limits, rules, unanswered, notes) {
                    Some(p) => {
                        let how = if f.source == FailureSource::Given { "given" } else { "recorded" };
                        notes.push(format!(
                            "the {} failure {how}{} would pass on a retry, but the retry sends the same history, which fails on its own: the verdict is predicted from it",
                            f.classification.class,
                            at_line(f.line)
                        ));
                        Some(p)
                    }
                    None => Some(f),
                }
            }
            other => other.or_else(|| super::predict(session, suspects, limits, rules, unanswered, notes)),
        }
    }

    fn class_is(&self, class: Class) -> bool {
        self.failure.as_ref().is_some_and(|f| f.classification.class == class)
    }

    /// Notes on the history's structure: where a failure of it blames no
    /// attachment, the calls the agent answers itself, a call still running.
    pub(super) fn explain_history(&mut self) {
        if self.class_is(Class::ImageLimit) {
            // The count is the cause, not any one attachment: the cure is a cap.
            self.picked.suspects.clear();
            self.notes.retain(|n| !is_suspects_note(n));
        }
        if self.class_is(Class::HistoryInvalid) {
            // The culprits are the orphaned calls and results, not attachments.
            self.picked.suspects.clear();
            self.picked.boundary = None;
            self.notes.retain(|n| !is_suspects_note(n));
            if self.failure.as_ref().is_some_and(super::unicode::refused) {
                self.notes.push(super::unicode::note(&super::unicode::lines(&self.session)));
            } else if self.structure.iter().all(|p| p.pending) {
                self.notes.push(
                    "the history as recorded pairs every call with its result: the agent may build its requests differently from what it records; `repair` writes a copy the agent re-reads"
                        .into(),
                );
            }
        }
        if self.failure.as_ref().is_some_and(|f| f.source == FailureSource::Recorded && f.line.is_none()) {
            self.notes.push(crate::reader::RECORDED_BESIDE.into());
        }
        let session = &self.session;
        self.notes.extend(crate::formats::codex::pairs::notes(session));
        // Cline's IDE extension answers in words of its own, its CLI 3 in others.
        let answer = match session.format {
            Format::Cline if !crate::formats::cline::request::is_task_document(&session.file) => {
                Some(crate::formats::cline::request::IDE_INTERRUPTED)
            }
            _ => session.format.behaviour().orphaned_call_answer,
        };
        // What the agent does with a call the provider would find unpaired.
        let agent = session.format;
        let heal = if agent.behaviour().drops_unpaired {
            format!(
                "is not paired as the provider requires: {agent} leaves the unpaired call or result out when it sends"
            )
        } else {
            format!("has no result: {agent} answers it itself when it sends (\"{}\")", answer.unwrap_or_default())
        };
        for p in &session.structure.answered_by_agent {
            self.notes.push(format!(
                "{} call {} (line {}) {heal}, so nothing needs repairing",
                p.tool.as_deref().unwrap_or("a tool"),
                p.call_id.as_deref().unwrap_or("-"),
                p.line,
            ));
        }
        if let Some(p) = self.structure.iter().find(|p| p.pending) {
            self.notes.push(format!(
                "the last tool call ({}, line {}) has no result yet: the agent may still be running it; if it is not, `session-doctor repair` pairs it",
                p.call_id.as_deref().unwrap_or("-"),
                p.line
            ));
        }
    }

    /// The verdict, the next commands and the diagnosis, with the session back.
    pub(super) fn finish(mut self) -> (Diagnosis, Session) {
        let session = &self.session;
        let invalid_excluded = session.attachments.iter().any(|a| a.excluded && a.verdict == Verdict::Invalid);
        // A request-level limit the failure's class is of: the request as a
        // whole is the cause, whatever the suspects.
        let whole = |f: &Failure| limits::explaining(&self.limits, f.classification.class).is_some();
        let stuck = self.failure.as_ref().is_some_and(|f| {
            ((super::is_stuck(f, &self.picked.suspects, invalid_excluded)
                && !super::reasoning_gone(f, session, &self.rules.provider))
                || (whole(f) && !f.passed()))
                && !super::no_images::none_sent(f, session)
        });
        // An overflow the agent's own resume compacts away is no dead end.
        let heal = if stuck { self.codex_compacts() } else { None };
        let stuck = stuck && heal.is_none();
        let recorded = self.failure.as_ref().filter(|f| f.source == FailureSource::Recorded);
        if let (Some(l), Some(f), true) = (self.passed_over, recorded, stuck) {
            self.notes.push(format!(
                "the failure recorded at line {l} is transient or a cancel: it says nothing of the history, which the provider refused{} and refuses again once it passes",
                at_line(f.line)
            ));
        }
        // The ids the provider's error names (a predicted failure lists the ones found).
        let named_ids = (self.failure.as_ref())
            .filter(|f| f.source != FailureSource::Predicted)
            .map(|f| f.classification.call_ids.clone())
            .unwrap_or_default();
        let history = faults::items(std::mem::take(&mut self.structure), &named_ids);
        let excluded: Vec<String> =
            session.attachments.iter().filter(|a| a.excluded).map(|a| a.reference.clone()).collect();
        // The overlay answers the failure only for what session-doctor writes:
        // the agent reads the session itself, and resumes it unchanged.
        let for_agent = self.failure.as_ref().is_some_and(|f| held_by_overlay_only(f, stuck, &excluded));
        let next = self.next_commands(stuck, for_agent, &excluded);
        if let Some(f) = self.failure.as_ref().filter(|_| stuck) {
            let (model, provider) = (self.model.as_deref(), Some(self.rules.provider.as_str()));
            self.notes.extend(super::no_images::note(f, &self.session, model, provider));
            self.notes.extend(super::signature::note(f));
        }
        let accepted = super::accepted_invalid(&self.session, &self.picked.suspects);
        let (mut verdict, next, undetermined) = self.verdict(stuck, &history, &accepted, next);
        if let Some((c, kept, budget)) = heal {
            verdict = format!(
                "not stuck: Codex compacts it on resume: the rollout's last token count (line {}) fills Codex's window ({} of {} tokens), and Codex {} compacts such a history before it sends again",
                c.line,
                c.used,
                c.window,
                crate::text::sanitize(&c.version)
            );
            self.notes.push(format!(
                "Codex {} compacts locally (provider {}): its summary request carries no tools nor instructions, and it drops the oldest items while the provider refuses it for the window; the history it resumes with keeps the user messages (about {kept} tokens, of a budget of {budget}) and the summary; `codex resume` continues it, and `repair --fit-context` writes a copy that keeps the history, its bulkiest tool outputs as notes, instead of a summary",
                crate::text::sanitize(&c.version),
                crate::text::sanitize(&c.provider)
            ));
        }
        if for_agent {
            verdict = overlay_only_verdict(&excluded, self.opts.store);
        }
        let stuck = stuck || for_agent;
        if self.picked.suspects.is_empty() {
            // Where suspects would be says nothing when there are none.
            self.notes.retain(|n| !is_suspects_note(n));
        }
        let session = self.session;
        let d = Diagnosis {
            file: session.file.clone(),
            format: session.format,
            written_by: session.written_by,
            stuck,
            verdict,
            failure: self.failure,
            suspects: self.picked.suspects,
            excluded,
            history,
            next,
            undetermined,
            provider: self.rules.provider.clone(),
            model: self.model,
            boundary: self.picked.boundary,
            limits: self.limits,
            accepted_invalid: accepted,
            notes: self.notes,
            lines: session.lines,
            entries: session.entries.len(),
            attachments: session.attachments.len(),
            findings: Vec::new(),
            timeline: Timeline::default(),
        };
        (d, session)
    }

    /// Codex compacts this rollout when it resumes it, and what the compaction
    /// keeps fits the window: the failure recorded is one its own resume heals.
    /// With the estimate of what it keeps and the budget it fits.
    fn codex_compacts(&self) -> Option<(crate::formats::codex::resume::Compaction, u64, u64)> {
        use crate::rewrite::trim;
        let f = self.failure.as_ref().filter(|f| !f.passed() && f.source != FailureSource::Predicted)?;
        if self.session.format != Format::Codex || f.classification.class != Class::ContextOverflow {
            return None;
        }
        let read = std::io::BufReader::new(self.judging.source?.open().ok()?);
        let c = crate::formats::codex::resume::compacts_on_resume(read)?;
        // The window the provider stated, else the model's, else the one Codex counts.
        let window = (f.classification.message.as_deref().and_then(trim::stated).map(|(_, max)| max))
            .or_else(|| self.model.as_deref().and_then(trim::window_of))
            .unwrap_or(c.window);
        let budget = window.saturating_sub(trim::reserve_of(Format::Codex, window) + window / 10);
        let kept = c.kept_bytes.div_ceil(trim::BYTES_PER_TOKEN);
        (kept <= budget).then_some((c, kept, budget))
    }

    /// The remedy of the request-level limit that explains the failure; for
    /// an `image_limit` no rule explains (a gateway's count), the cap it states.
    fn remedy(&self) -> Option<Remedy> {
        let c = &self.failure.as_ref()?.classification;
        let sent: Vec<&crate::model::Attachment> = self.session.attachments.iter().filter(|a| a.sent()).collect();
        let judged = limits::Judged { stats: &self.stats, rules: &self.rules, stated: c.limit, sent: &sent };
        match limits::explaining(&self.limits, c.class) {
            Some((p, _)) => limits::remedy(p, &judged),
            None if c.class == Class::ImageLimit => Some(Remedy::Cap(limits::images_to_keep(&judged))),
            None => None,
        }
    }

    /// The commands to run next, and what a store's session cannot be given.
    /// `for_agent`: only the overlay answers the failure, so the agent is
    /// stuck though the next request session-doctor builds is not.
    fn next_commands(&mut self, stuck: bool, for_agent: bool, excluded: &[String]) -> Vec<String> {
        let (failure, suspects) = (self.failure.as_ref(), &self.picked.suspects);
        let images = self.session.attachments.iter().any(|a| a.sent() && a.is_image());
        let lone_surrogates = !super::unicode::lines(&self.session).is_empty();
        let previews = self.session.format.behaviour().previews;
        let request = next::NextRequest { remedy: self.remedy(), images, lone_surrogates, previews };
        // Excluded on the store alone: the agent still sends it, and the way
        // out is the export's, which holds no exclusion yet.
        let through_export = stuck || (for_agent && self.opts.export.is_some());
        let next = next::commands(failure, through_export, suspects, excluded, &self.rules, &request, self.opts);
        let next = claude_code::subagent(&self.session, &mut self.notes, next);
        // A prime suspect only over the limits that --fit cannot decode: why the offer is not --fit.
        for s in suspects.iter().filter(|s| s.prime && stuck) {
            if let Some(why) =
                crate::fit::unfittable(&s.attachment.problems, crate::diagnose::fit_shape(&s.attachment), None)
            {
                self.notes.push(format!("{} is not offered --fit: {why}", s.attachment.reference));
            }
        }
        let stuck = stuck || for_agent;
        if let (Some(why), true) = (&self.opts.no_export, stuck) {
            self.notes.push(format!(
                "this session lives in a store, which is never written, and {why}: no copy can be repaired, and nothing session-doctor writes reaches the agent"
            ));
        } else if let (Some(e), true, false) = (&self.opts.export, stuck, next.is_empty()) {
            let (cli, agent) = (e.cli, self.session.format.agent(self.session.written_by));
            self.notes.push(format!(
                "this session lives in {agent}'s database, which `repair` does not write: the next commands export it to {} and exclude and repair there (an exclusion made on the database stays beside the database, where the export's repair never reads it); `repair` prints the `{cli} import` that brings the copy back as a session of its own",
                next::export_file(&e.session)
            ));
        } else if self.opts.store && stuck {
            let cli = crate::formats::opencode::command(self.session.written_by);
            self.notes.push(format!(
                "this session lives in a store, which `repair` does not write: export it (`{cli} export <session id> > session.json`) and repair the export"
            ));
        }
        next
    }

    /// The one sentence a person reads first, the next commands it adds, and
    /// whether the file cannot tell at all.
    fn verdict(
        &mut self,
        stuck: bool,
        history: &[HistoryItem],
        accepted: &[AcceptedInvalid],
        mut next: Vec<String>,
    ) -> (String, Vec<String>, bool) {
        let failure = self.failure.as_ref();
        let mut verdict = super::verdict(failure, stuck, &self.picked.suspects);
        if verdict == super::HEALTHY && self.judging.deepen.is_some() {
            // Read structurally: a corrupt deflate stream passes until --deep decodes it.
            verdict = super::HEALTHY_STRUCTURE.into();
        }
        // Invalid media the model took anyway: true of the file, and no reason to
        // call the session stuck; a healthy verdict must not hide them.
        if !stuck && !accepted.is_empty() {
            if let (None, Some(first)) = (failure, accepted.first()) {
                let more = match accepted.len() {
                    1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                };
                verdict = if first.silent_retry.is_some() {
                    format!(
                        "healthy: no failure recorded; {}{more} is invalid, and {}",
                        first.reference,
                        first.answered()
                    )
                } else {
                    format!(
                        "healthy: no failure recorded; {}{more} is invalid, but the model accepted it at line {}: it does not stop this model, though a stricter provider, model or route may reject it",
                        first.reference, first.line
                    )
                };
            }
            self.notes.extend(accepted.iter().map(|a| match a.failed_at {
                None if a.silent_retry.is_some() => format!("{} is invalid ({}); {}", a.reference, a.why, a.answered()),
                None => format!(
                    "{} is invalid ({}), yet the model answered the request that carried it at line {}",
                    a.reference, a.why, a.line
                ),
                Some(_) => format!("{} is invalid ({}); {}", a.reference, a.why, a.answered()),
            }));
        }
        // An agent that may fail a request without recording it: an unanswered
        // last request is no proof of health, and the error the agent printed can say more.
        let session = &self.session;
        // A copy repair wrote, nothing sent from it since: its last request never went.
        let fresh = session.format == crate::model::Format::GeminiCli
            && crate::formats::gemini_cli::fresh_copy(std::path::Path::new(&session.file));
        let unrecorded =
            // The repeats are no proof the last request failed for them alone.
            (session.format.behaviour().unrecorded_failures)
                .filter(|_| (failure.is_none() || self.repeats_verdict) && super::unanswered(session) && !fresh);
        if fresh && super::unanswered(session) {
            self.notes.push(
                "repair wrote this copy and nothing was added to it since: its last request has not been sent yet"
                    .into(),
            );
        }
        if let Some(why) = unrecorded {
            verdict = format!(
                "not known to be stuck: no failure recorded, but the history ends in a request with no answer, and {why}: if the agent printed an error, give it with --error to judge it"
            );
            let (file, args) = (&self.opts.file_arg, &self.opts.read_args);
            next.push(next::command(file, args, "diagnose", "--error '<the error the agent printed>'"));
        }
        claude_code::fork_verdict(session, &mut verdict);
        // A request-level limit explains it: that limit is the verdict, unless
        // the provider stated another maximum than the rules' (a gateway's own).
        let explained = failure.and_then(|f| {
            let (p, limit) = limits::explaining(&self.limits, f.classification.class)?;
            f.classification.limit.is_none_or(|n| Some(n) == (limit.maximum)(&self.rules)).then_some(p)
        });
        if let (true, Some(p)) = (stuck, explained) {
            verdict = format!("stuck: {}", p.message);
        }
        if stuck && self.class_is(Class::HistoryInvalid) {
            let broken: Vec<&crate::model::Fault> = history.iter().map(|i| &i.problem).collect();
            verdict = if self.failure.as_ref().is_some_and(super::unicode::refused) {
                "stuck: the provider's JSON parser refuses a lone surrogate (half of a character) on every request"
                    .into()
            } else if broken.is_empty() {
                "stuck: the provider rejects the history's structure on every request".into()
            } else {
                format!("stuck: {}; every retry sends it again", faults::summary(&broken))
            };
        }
        (verdict, next, unrecorded.is_some())
    }
}

/// A deterministic failure that only the overlay's exclusions answer: the
/// agent never reads the overlay, so it fails the same way until it is given
/// the repaired copy.
fn held_by_overlay_only(f: &Failure, stuck: bool, excluded: &[String]) -> bool {
    let class = f.classification.class;
    !stuck
        && !excluded.is_empty()
        && !f.passed()
        && f.source != FailureSource::Predicted
        && class.retryable() == Some(false)
        && class != Class::Aborted
}

/// A store (`store`) is never repaired in place: its note says what can be done.
fn overlay_only_verdict(excluded: &[String], store: bool) -> String {
    let (them, it) = if excluded.len() == 1 { (excluded[0].clone(), "it") } else { (excluded.join(", "), "them") };
    if store {
        return format!(
            "stuck for the agent: the overlay leaves {them} out of what session-doctor writes, but the agent reads its store, not the overlay, and sends {it} again"
        );
    }
    format!(
        "stuck for the agent until it resumes the repaired copy: the overlay leaves {them} out of preview and repair, but the agent reads the session, not the overlay, and sends {it} again"
    )
}

/// The rules to judge by: the provider that failed, unless the user said
/// otherwise; once the session moved to another model, that model's provider.
fn rules_for(
    session: &Session,
    failure: Option<&Failure>,
    model: Option<&str>,
    judging: &Judging<'_>,
) -> anyhow::Result<Rules> {
    let failed_provider = match failure.and_then(|f| f.moved_to.as_deref()) {
        Some(m) => {
            session.provider.as_deref().and_then(crate::provider::canonical).or_else(|| crate::provider::for_model(m))
        }
        None => (failure.and_then(|f| f.classification.provider.as_deref()))
            .and_then(crate::provider::canonical)
            .or_else(|| model.and_then(crate::provider::for_model)),
    };
    Ok(match failed_provider {
        Some(p) if !judging.forced && p != judging.rules.provider => {
            let mut r = Rules::builtin(p).unwrap_or_else(|| judging.rules.clone());
            if let Some(file) = judging.overrides {
                r = r.with_overrides_from(file)?;
            }
            r
        }
        _ => judging.rules.clone(),
    })
}

/// A broken structure fails every request before its media are looked at; a
/// recorded failure that does not block or says nothing (a cancel, a transient
/// error, one answered since, an unknown one) does not hide it.
fn blocking(f: &Failure) -> bool {
    let c = &f.classification;
    !f.passed() && !matches!(c.class, Class::Aborted | Class::Unknown) && c.retryable != Some(true)
}

/// Why the structure, not the failure `earlier` (if any), is the verdict.
fn structure_blocks(earlier: Option<&Failure>) -> String {
    match earlier {
        None => "no blocking provider error is recorded: the history breaks the provider's structural rules".into(),
        Some(e) => format!(
            "the {} failure recorded{} does not block the session; the history's structure does",
            e.classification.class,
            at_line(e.line)
        ),
    }
}

/// ` at line N`, or nothing.
fn at_line(line: Option<u64>) -> String {
    line.map(|l| format!(" at line {l}")).unwrap_or_default()
}

/// A note that says where the suspects are: nothing to say when there are none.
fn is_suspects_note(n: &str) -> bool {
    n.starts_with("suspects are")
        || n.contains("every attachment is a suspect")
        || n.contains("the suspects are chosen as if it named none")
        || n.starts_with("the boundary leaves no suspect")
}
