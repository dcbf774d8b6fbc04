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
    let (mut d, session) = super::diagnose_keeping(session, &judging, opts)?;
    if !plan.single_document {
        d.notes.extend(salvage_notes(plan.text(path), &session)?);
    }
    Ok((d, session))
}

/// What `repair` does with the lines the reader could not read: a record split
/// over lines rejoined, records glued on one line split, the rest left out,
/// each said with its lines. Only those lines are kept while the file is read.
fn salvage_notes(text: &Path, session: &Session) -> anyhow::Result<Vec<String>> {
    let mut damaged: Vec<u64> = (session.findings.iter())
        .filter(|f| f.severity == crate::model::Severity::Error && f.code.is_some_and(|c| c.starts_with("line.")))
        .map(|f| f.line)
        .collect();
    damaged.sort_unstable();
    damaged.dedup();
    if damaged.is_empty() {
        return Ok(Vec::new());
    }
    let file = std::fs::File::open(text)?;
    let mut lines = crate::reader::Lines::new(file);
    let (mut n, mut held) = (0u64, Vec::new());
    while let Some(buf) = lines.next_line()? {
        n += 1;
        if damaged.binary_search(&n).is_ok() {
            held.push((n, buf.strip_suffix(b"\n").unwrap_or(buf).to_vec()));
        }
        if n >= *damaged.last().unwrap_or(&0) {
            break;
        }
    }
    let mut notes = Vec::new();
    for run in crate::json::salvage::runs(&damaged) {
        let run: Vec<(u64, &[u8])> =
            held.iter().filter(|(l, _)| damaged[run.clone()].contains(l)).map(|(l, t)| (*l, t.as_slice())).collect();
        notes.extend(crate::json::salvage::salvage(&run).iter().map(|s| s.describe(false)));
    }
    Ok(notes)
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
