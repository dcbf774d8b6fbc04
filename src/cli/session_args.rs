//! Arguments every session-reading command shares.

use std::path::PathBuf;

use clap::Args;

use crate::alias::Input;
use crate::media::Depth;
use crate::reader::ReadOptions;

pub use super::values::FormatChoice;

pub(super) fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1 (leave -j out for one thread per core)".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Debug, Args, Clone)]
pub struct ReadArgs {
    /// Session format: auto (detect from the content) or one format.
    #[arg(long = "format", value_name = "FORMAT", default_value = "auto", value_parser = super::values::format())]
    pub format: FormatChoice,

    /// Judge media by this provider's rules (a name below, or an alias such as
    /// claude, azure, vertex). Default: the session's own provider.
    #[arg(long = "provider", value_name = "PROVIDER", value_parser = super::values::provider())]
    pub provider: Option<String>,

    /// Decode every payload fully (PNG pixels, JPEG scans, every PDF object),
    /// not just its structure. Slower; catches corrupt compressed data.
    #[arg(long = "deep")]
    pub deep: bool,

    /// Judge media for this model: its provider's rules (claude-* → anthropic,
    /// gpt-*/o3 → openai, gemini-* → gemini, …). --provider wins over it.
    #[arg(long = "model", value_name = "MODEL")]
    pub model: Option<String>,

    /// A JSON file overriding fields of the provider's rules, e.g.
    /// {"max_image_bytes": 3932160, "max_images_per_request": 20}; null removes a limit.
    #[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Option<PathBuf>,

    /// The overlay holding the user's exclusions (default: `<FILE>.doctor`
    /// beside the session).
    #[arg(long = "overlay", value_name = "PATH")]
    pub overlay: Option<PathBuf>,

    /// The session to read from a store that holds many (opencode's `opencode.db`):
    /// its id, `ses_…`. Default: the most recently updated one (named on stderr).
    #[arg(long = "session", value_name = "ID")]
    pub session: Option<String>,

    /// Worker threads reading the file (and preparing the request `preview`
    /// writes), at least 1 (default: one per core).
    #[arg(long = "threads", short = 'j', value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,

    /// Stop with an error after this many records of a JSON Lines session
    /// (default 10000000): the history session-doctor keeps costs about 140
    /// bytes a record, so this bounds its memory.
    #[arg(long = "max-records", value_name = "N")]
    pub max_records: Option<u64>,
}

impl ReadArgs {
    /// `--fit-context` as the command asks it, else as the overlay of `session`
    /// records it (`exclude --fit-context`), else `None`.
    pub fn fit_context(
        &self,
        asked: Option<crate::rewrite::trim::ContextOptions>,
        session: &std::path::Path,
        plan: &crate::reader::Plan,
    ) -> anyhow::Result<Option<crate::rewrite::trim::ContextOptions>> {
        if asked.is_some() {
            return Ok(asked);
        }
        let overlay = crate::overlay::Overlay::load(&self.overlay_path(session, plan))?;
        Ok(overlay.fit_context().map(|tokens| crate::rewrite::trim::ContextOptions { tokens }))
    }

    /// Where the overlay of `session` is.
    pub fn overlay_path(&self, session: &std::path::Path, plan: &crate::reader::Plan) -> PathBuf {
        if let Some(o) = &self.overlay {
            return o.clone();
        }
        match &plan.session {
            // One of many sessions in a store (opencode's database): beside the
            // store, named by the session's id.
            Some(id) => {
                let dir = if session.is_dir() { session } else { session.parent().unwrap_or(session) };
                dir.join(format!("{id}.doctor"))
            }
            None => crate::overlay::default_path(session),
        }
    }

    /// The files a command reading `session` with these arguments reads: the
    /// session, its overlay (unless `overlay` is false: `exclude` writes it),
    /// `--rules` and the files beside it the format reads. No output may name one of them.
    pub fn reads(&self, session: &std::path::Path, plan: &crate::reader::Plan, overlay: bool) -> Vec<Input> {
        let mut v = vec![Input::new("the session", session)];
        if overlay {
            v.push(Input::new("its overlay", self.overlay_path(session, plan)));
        }
        if let Some(r) = &self.rules {
            v.push(Input::new("the rules file", r.as_path()));
        }
        v.extend(
            crate::reader::sidecar_files(session, plan.format)
                .into_iter()
                .map(|p| Input::new("a file beside the session", p)),
        );
        v
    }

    /// Reads a session (with a progress bar on long reads) and marks what its
    /// overlay excludes. Lines of the overlay that are not events are told on stderr.
    /// `-` is refused: a command that reads through here reads an overlay
    /// beside its file or writes beside it (`diagnose` and `scan` spool stdin first).
    pub fn read(&self, path: &std::path::Path) -> anyhow::Result<(crate::model::Session, crate::reader::Plan)> {
        anyhow::ensure!(
            path != std::path::Path::new("-"),
            "this command does not read stdin ('-'): its overlay and copies sit beside the session's file; \
             save the session to a file and name that (diagnose and scan read stdin)"
        );
        let (mut session, plan) = crate::report::progress::read(path, &self.options())?;
        self.apply_overlay(path, &mut session, &plan)?;
        Ok((session, plan))
    }

    /// Tells the plan's note on stderr and marks what the overlay of `path` excludes.
    /// Lines of the overlay that are not events are told on stderr.
    pub fn apply_overlay(
        &self,
        path: &std::path::Path,
        session: &mut crate::model::Session,
        plan: &crate::reader::Plan,
    ) -> anyhow::Result<()> {
        if let Some(note) = &plan.note {
            eprintln!("session-doctor: {}", crate::text::sanitize(note));
        }
        let overlay = crate::overlay::Overlay::load(&self.overlay_path(path, plan))?;
        for (line, why) in &overlay.skipped {
            eprintln!(
                "session-doctor: warning: {}: line {line} is not an overlay event ({}); it is ignored",
                crate::text::sanitize_path(&overlay.path),
                crate::text::sanitize(why)
            );
        }
        overlay.apply(session);
        Ok(())
    }

    /// Diagnoses a session read with these arguments: the media judged again
    /// under the provider that failed (unless `--provider` forces one, with
    /// `--rules` re-applied), the suspects deep-checked from the file.
    pub fn diagnose(
        &self,
        path: &std::path::Path,
        session: crate::model::Session,
        plan: &crate::reader::Plan,
        opts: &crate::diagnose::DiagnoseOptions,
    ) -> anyhow::Result<crate::diagnose::Diagnosis> {
        self.diagnose_keeping(path, session, plan, opts, &crate::diagnose::Deepened::default())
            .map(|(d, session)| d.with(session))
    }

    /// [`ReadArgs::diagnose`], a suspect's full decode taken from `deepened`
    /// when an earlier diagnosis of this run made it (and kept there for the
    /// next), and the session given back ([`crate::diagnose::diagnose_keeping`]).
    pub fn diagnose_keeping(
        &self,
        path: &std::path::Path,
        session: crate::model::Session,
        plan: &crate::reader::Plan,
        opts: &crate::diagnose::DiagnoseOptions,
        deepened: &crate::diagnose::Deepened,
    ) -> anyhow::Result<(crate::diagnose::Diagnosis, crate::model::Session)> {
        crate::diagnose::diagnose_read(path, session, plan, &self.asked(), opts, deepened)
    }

    /// How these arguments ask a diagnosis to judge.
    pub fn asked(&self) -> crate::diagnose::Asked<'_> {
        crate::diagnose::Asked { forced: self.provider.is_some(), overrides: self.rules.as_deref(), deep: self.deep }
    }

    /// The arguments a later command needs to read the session the same way,
    /// shell-quoted, from the settings actually used: an explicit `--format`,
    /// `--provider`, `--model`, `--rules` and `--overlay`, and the session of a
    /// store that was read (`plan.session`, chosen or the newest at the time:
    /// a later command must not read a newer one).
    pub fn repeat(&self, plan: &crate::reader::Plan) -> String {
        let q = |s: &str| crate::text::shell_quote(s);
        let mut out = Vec::new();
        if let Some(f) = self.format.0 {
            out.push(format!("--format {}", f.name()));
        }
        if let Some(id) = plan.session.as_ref().or(self.session.as_ref()) {
            out.push(format!("--session {}", q(id)));
        }
        out.extend(self.judging_args());
        if let Some(o) = &self.overlay {
            out.push(format!("--overlay {}", q(&o.display().to_string())));
        }
        if let Some(n) = self.max_records {
            out.push(format!("--max-records {n}"));
        }
        out.join(" ")
    }

    /// The arguments that read a store's export the way the store was read:
    /// [`Self::repeat`] without what names the store's session or its
    /// overlay (the export is a file of its own, its format detected).
    pub fn repeat_for_export(&self) -> String {
        self.judging_args().join(" ")
    }

    /// `--provider`, `--model` and `--rules` as given, shell-quoted: what
    /// judges a session, whichever file holds it.
    fn judging_args(&self) -> Vec<String> {
        let q = |s: &str| crate::text::shell_quote(s);
        let mut out = Vec::new();
        if let Some(p) = &self.provider {
            out.push(format!("--provider {}", q(p)));
        }
        if let Some(m) = &self.model {
            out.push(format!("--model {}", q(m)));
        }
        if let Some(r) = &self.rules {
            out.push(format!("--rules {}", q(&r.display().to_string())));
        }
        out
    }

    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            format: self.format.0,
            depth: if self.deep { Depth::Deep } else { Depth::Structural },
            provider: self.provider.clone(),
            model: self.model.clone(),
            rules_file: self.rules.clone(),
            threads: self.threads.unwrap_or(0),
            session: self.session.clone(),
            max_records: self.max_records,
            skim: crate::reader::Skim::default(),
        }
    }
}

/// One or more session files.
#[derive(Debug, Args, Clone)]
pub struct Files {
    /// Session files (JSON Lines, or one JSON document), opencode's `opencode.db`
    /// or its `storage/` folder; `-` reads one from stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}
