//! A diagnosis of a session as the reader read it: the judging a command
//! asks for (`--provider`, `--rules`, `--deep`) over the plan's rules and the
//! session's own bytes, full decodes shared by the diagnoses of one run.

use std::path::Path;

use crate::media::Depth;
use crate::model::{Attachment, Session};
use crate::reader::Plan;

use super::{DiagnoseOptions, Diagnosis, Judging};

/// How a command asks a diagnosis to judge.
#[derive(Clone, Copy, Debug, Default)]
pub struct Asked<'a> {
    /// The user forced the provider (`--provider`): the failure's does not win.
    pub forced: bool,
    /// The user's overrides (`--rules`).
    pub overrides: Option<&'a Path>,
    /// The session was read with `--deep`: every payload is decoded already.
    pub deep: bool,
}

/// [`super::diagnose_keeping`] of a session read from `path` by `plan`: a
/// suspect's full decode taken from `deepened` when an earlier diagnosis of
/// this run made it (and kept there for the next).
pub fn diagnose_read(
    path: &Path,
    session: Session,
    plan: &Plan,
    asked: &Asked<'_>,
    opts: &DiagnoseOptions,
    deepened: &Deepened,
) -> anyhow::Result<(Diagnosis, Session)> {
    let source = crate::reader::Source::of(plan, path);
    let deepen = |a: &Attachment| deepened.get(a, || crate::reader::reexamine(&source, a, Depth::Deep));
    let judging = Judging {
        rules: &plan.rules,
        forced: asked.forced,
        overrides: asked.overrides,
        deepen: (!asked.deep).then_some(&deepen as super::Deepen<'_>),
        source: Some(&source),
        single_document: plan.single_document,
    };
    super::diagnose_keeping(session, &judging, opts)
}

/// The full decodes of suspects made in one run, by where their payload sits
/// in the file: `repair` diagnoses the session, then its copy (in memory), and
/// the copy's suspects are mostly the original's; each is decoded once.
#[derive(Default)]
pub struct Deepened(std::sync::Mutex<std::collections::HashMap<(u64, u64), Option<crate::media::Facts>>>);

impl Deepened {
    fn get(
        &self,
        a: &crate::model::Attachment,
        decode: impl FnOnce() -> Option<crate::media::Facts>,
    ) -> Option<crate::media::Facts> {
        let Some(span) = a.span else { return decode() };
        let key = (span.offset, span.len);
        if let Some(f) = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key) {
            return f.clone();
        }
        // Decoded outside the lock: `repair` diagnoses its copy beside writing it.
        let facts = decode();
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, facts.clone());
        facts
    }
}
