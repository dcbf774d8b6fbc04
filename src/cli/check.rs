//! `session-doctor check`: a CI gate over recorded sessions.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::{Args, ValueEnum};

use crate::check::walk::{self, Candidate};
use crate::check::{self, CheckReport, Checked, Skipped};
use crate::exit::Exit;
use crate::report;
use crate::report::html::{CheckSession, Diagnosed};
use crate::report::printer::{CheckPage, Github, Gitlab, Html, Human, Json, Junit, Printer, Sarif};
use crate::text::sanitize;

use super::session_args::{FormatChoice, ReadArgs, parse_threads};

/// Check recorded sessions for anything a provider would reject: a CI gate.
///
/// Walks the files and folders given (recursively; overlays, locks, hidden
/// entries and Claude Code's saved tool outputs and subagent metadata are passed
/// over, files that are not sessions are skipped with a note,
/// symbolic links are followed without looping) and judges each session as
/// `diagnose` does: invalid media the model has not accepted, a request over
/// the provider's limits, replayed reasoning another provider cannot verify, a
/// recorded failure that will come back on every retry, damaged lines. Every
/// problem carries a stable code (docs/codes.md lists them); --allow accepts a code.
/// Sessions are checked in parallel.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor check recordings/
  session-doctor check --output-format github recordings/
  session-doctor check --output-format junit recordings/ > session-check.xml
  session-doctor check --output-format sarif --out session-doctor.sarif recordings/
  session-doctor check --output-format html --out sessions.html recordings/
  session-doctor check --max-images 20 --allow base64.nonstandard fixtures/ evals/run-1.jsonl
  session-doctor check --json recordings/ | jq '.sessions[] | select(.ok | not) | .file'

Exit status:
  0  every session would be accepted
  1  a session would not be (a problem of severity error not allowed)
  2  usage error, a path that cannot be read, or no session found")]
pub struct CheckArgs {
    /// Session files and folders; folders are walked recursively.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The report's form: human, json, junit, github (workflow annotations),
    /// sarif (SARIF 2.1.0, for code scanning), gitlab (GitLab Code Quality) or
    /// html (one self-contained page: a summary table, then a section per
    /// session as `diagnose --html` shows it, with thumbnails).
    #[arg(long = "output-format", value_name = "FORM", default_value = "human")]
    pub output_format: OutputForm,
    /// The same as --output-format json, as the other commands take it.
    #[arg(long = "json", conflicts_with = "output_format")]
    pub json: bool,
    /// Write the report to FILE (replaced whole, never half-written) instead of
    /// standard output; any form, human without colour.
    #[arg(long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Session format: auto (detect each file's) or one format for every file.
    #[arg(long = "format", value_name = "FORMAT", default_value = "auto", value_parser = super::values::format())]
    pub format: FormatChoice,
    /// Judge media by this provider's rules (a name below, or an alias such as
    /// claude, azure, vertex). Default: each session's own provider.
    #[arg(long = "provider", value_name = "PROVIDER", value_parser = super::values::provider())]
    pub provider: Option<String>,
    /// Judge every session for this model (and its provider's rules).
    #[arg(long = "model", value_name = "MODEL")]
    pub model: Option<String>,
    /// A JSON file overriding fields of the provider's rules (as for scan).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Decode every payload fully, not just its structure.
    #[arg(long = "deep")]
    pub deep: bool,
    /// A problem when the next request of a session carries more than N images
    /// (0: any image), as preview and repair take it.
    #[arg(long = "max-images", value_name = "N", allow_hyphen_values = true, value_parser = super::values::image_count::<u32>)]
    pub max_images: Option<u32>,
    /// Accept problems with this code (repeatable), e.g. --allow base64.nonstandard.
    #[arg(long = "allow", value_name = "CODE", value_parser = parse_code)]
    pub allow: Vec<String>,
    /// Sessions checked at once, at least 1 (default: one per core).
    #[arg(long = "threads", short = 'j', value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Stop reading a JSON Lines session after this many records, and report
    /// it as failing (default 10000000): the history kept costs about 140
    /// bytes a record.
    #[arg(long = "max-records", value_name = "N")]
    pub max_records: Option<u64>,
}

/// `--output-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputForm {
    Human,
    Json,
    Junit,
    Github,
    Sarif,
    Gitlab,
    Html,
}

impl CheckArgs {
    /// The form asked for: `--json` is `--output-format json`.
    pub fn form(&self) -> OutputForm {
        if self.json { OutputForm::Json } else { self.output_format }
    }
}

fn parse_code(s: &str) -> Result<String, String> {
    if crate::codes::lookup(s).is_some() {
        return Ok(s.to_string());
    }
    // `session.stuck.*`: name the codes the user meant, one --allow each.
    let near = crate::codes::near(s);
    let hint = match near.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        many => format!("; one --allow each of: {}", many.join(", ")),
    };
    Err(format!("unknown problem code `{s}` (docs/codes.md lists them){hint}"))
}

/// What the html page needs of a session beyond its problems: its diagnosis,
/// and where to read its attachments' bytes back. Kept only for that form.
struct Kept {
    source: crate::reader::Source,
    diagnosis: crate::diagnose::Diagnosis,
    detected: bool,
}

/// What became of one file.
enum Outcome {
    Checked(Checked, Option<Box<Kept>>),
    /// Not a session (found by the walk): a note.
    Skipped(Skipped),
    /// Cannot be read: reported as a failing session, and the exit is 2.
    Failed(Checked),
}

pub fn run(args: &CheckArgs) -> anyhow::Result<Exit> {
    let mut found = walk::walk(&args.paths);
    // A store of many sessions (opencode's database, pi's store) is every one of them.
    found.files = found
        .files
        .into_iter()
        .flat_map(|c| match crate::reader::store_sessions(&c.path).filter(|ids| ids.len() > 1) {
            Some(ids) => ids.into_iter().map(|id| walk::Candidate { session: Some(id), ..c.clone() }).collect(),
            None => vec![c],
        })
        .collect();
    let many = found.files.len() > 1;
    let read = ReadArgs {
        format: args.format,
        provider: args.provider.clone(),
        deep: args.deep,
        model: args.model.clone(),
        rules: args.rules.clone(),
        overlay: None,
        session: None,
        // Parallel over files: each file is read by one thread, unless it is the only one.
        threads: if many { Some(1) } else { args.threads },
        max_records: args.max_records,
    };
    let opts = check::CheckOptions { max_images: args.max_images, allow: args.allow.clone() };
    // Only the page shows more than the problems: the other forms keep no diagnosis.
    let keep = args.output_format == OutputForm::Html;

    let mut failed = !found.errors.is_empty();
    let mut sessions = Vec::new();
    // In step with `sessions`: what the page shows of each.
    let mut kept: Vec<Option<Box<Kept>>> = Vec::new();
    let mut skipped = Vec::new();
    for (path, why) in &found.errors {
        let message = format!("{}: {why}", path.display());
        eprintln!("session-doctor: {}", sanitize(&message));
        sessions.push(Checked::unreadable(path.display().to_string(), message, &opts.allow));
        kept.push(None);
    }
    for outcome in in_parallel(&found.files, args.threads, |c| check_one(c, &read, &opts, keep)) {
        match outcome {
            Outcome::Checked(c, k) => {
                sessions.push(c);
                kept.push(k);
            }
            Outcome::Skipped(s) => {
                eprintln!("session-doctor: note: skipped {}: {}", sanitize(&s.file), sanitize(&s.reason));
                skipped.push(s);
            }
            Outcome::Failed(c) => {
                if let Some(p) = c.problems.first() {
                    eprintln!("session-doctor: {}", sanitize(&p.message));
                }
                failed = true;
                sessions.push(c);
                kept.push(None);
            }
        }
    }
    if sessions.is_empty() {
        let shown: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
        anyhow::bail!("no session found in {}", sanitize(&shown.join(", ")));
    }
    // What the walk read as sessions: the report may replace none of it (a file
    // it skipped as no session, such as an earlier report, it may).
    let not_read: std::collections::HashSet<String> = skipped.iter().map(|s| s.file.clone()).collect();
    let report = CheckReport::new(sessions, skipped);
    let mut reads: Vec<crate::alias::Input> = Vec::new();
    for c in found.files.iter().filter(|c| !not_read.contains(&c.path.display().to_string())) {
        reads.push(crate::alias::Input::new("a session", c.path.as_path()));
        reads.push(crate::alias::Input::new("the overlay", crate::overlay::default_path(&c.path)));
        // What any format reads beside it (the walk keeps no session's format).
        let beside = [crate::model::Format::ClaudeCode, crate::model::Format::Cline]
            .into_iter()
            .flat_map(|f| crate::reader::sidecar_files(&c.path, f));
        reads.extend(beside.map(|p| crate::alias::Input::new("a file beside a session", p)));
    }
    reads.extend(args.rules.iter().map(|r| crate::alias::Input::new("the rules file", r.as_path())));
    // The command chooses the printer; the printer only prints.
    let term = if args.out.is_some() { report::term::Term::PLAIN } else { report::term::current() };
    let printer: Box<dyn Printer<CheckReport>> = match args.form() {
        OutputForm::Human => Box::new(Human { term }),
        OutputForm::Json => Box::new(Json),
        OutputForm::Junit => Box::new(Junit),
        OutputForm::Github => Box::new(Github),
        OutputForm::Sarif => Box::new(Sarif),
        OutputForm::Gitlab => Box::new(Gitlab),
        OutputForm::Html => {
            // Each session's attachments are read back from its own file.
            let readers: Vec<_> = kept
                .iter()
                .map(|k| {
                    k.as_ref().map(|k| move |a: &crate::model::Attachment| crate::reader::read_payload(&k.source, a))
                })
                .collect();
            let shown: Vec<CheckSession<'_>> = report
                .sessions
                .iter()
                .zip(kept.iter().zip(&readers))
                .map(|(checked, (k, r))| CheckSession {
                    checked,
                    diagnosed: k.as_ref().zip(r.as_ref()).map(|(k, r)| Diagnosed {
                        diagnosis: &k.diagnosis,
                        detected: k.detected,
                        payloads: r,
                    }),
                })
                .collect();
            let page = CheckPage { report: &report, sessions: shown };
            emit(args.out.as_deref(), &reads, |w| Html.print(w, &page))?;
            return Ok(exit(failed, &report));
        }
    };
    emit(args.out.as_deref(), &reads, |w| printer.print(w, &report))?;
    Ok(exit(failed, &report))
}

/// Writes the report to `out` (atomically) or to stdout.
fn emit(
    out: Option<&Path>,
    reads: &[crate::alias::Input],
    print: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    match out {
        Some(path) => {
            crate::atomic::write(path, crate::atomic::Existing::Replace, reads, |w| Ok(print(w)?))?;
            eprintln!("session-doctor: wrote {}", crate::text::sanitize_path(path));
        }
        None => {
            let mut out = crate::report::stdout::stdout();
            print(&mut out)?;
            std::io::Write::flush(&mut out)?;
        }
    }
    Ok(())
}

fn exit(failed: bool, report: &CheckReport) -> Exit {
    if failed {
        Exit::Failed
    } else if report.ok {
        Exit::Healthy
    } else {
        Exit::Problems
    }
}

/// Runs `f` over `items` on up to `threads` (default: one per core) scoped
/// threads, each taking the next item; the results keep the items' order.
fn in_parallel<T: Sync, R: Send>(items: &[T], threads: Option<usize>, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    let workers = workers.clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    *results[i].lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(r);
                }
            });
        }
    });
    results.into_iter().filter_map(|m| m.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)).collect()
}

/// `error` without the path it starts with (the report names the file already).
fn without_path(error: &str, path: &Path) -> String {
    let shown = path.display().to_string();
    let rest = error.strip_prefix(&shown).map_or(error, |rest| rest.trim_start_matches([':', ' ']));
    // The way out of a failed detection (`--format`) is not what a walk needs told.
    let why = rest.split_once("; pass --format").map_or(rest, |(why, _)| why);
    // "skipped X: is compressed (gzip)" has lost its subject.
    if why.starts_with("is ") { format!("it {why}") } else { why.to_string() }
}

/// Checks one file; `keep`: keep its diagnosis for the page.
fn check_one(c: &Candidate, read: &ReadArgs, opts: &check::CheckOptions, keep: bool) -> Outcome {
    let path = &c.path;
    let file = path.display().to_string();
    let mut options = read.options();
    options.session.clone_from(&c.session);
    let plan = match crate::reader::plan(path, &options) {
        Ok(p) => p,
        // Told apart by type: a walk passes over what is not a session, never over
        // a file it cannot open or a setting that cannot work.
        Err(e) if !c.explicit && e.downcast_ref::<crate::reader::NotASession>().is_some() => {
            return Outcome::Skipped(Skipped { reason: without_path(&format!("{e:#}"), path), file });
        }
        Err(e) => return Outcome::Failed(Checked::unreadable(file, format!("{e:#}"), &opts.allow)),
    };
    let judged = crate::reader::read_with_plan(path, &options, &plan, None).and_then(|mut session| {
        read.apply_overlay(path, &mut session, &plan)?;
        let images = u64::from(session.request_stats().images);
        let d_opts = crate::diagnose::DiagnoseOptions {
            error: None,
            model: read.model.clone(),
            file_arg: file.clone(),
            read_args: read.repeat(&plan),
            store: plan.memory.is_some(),
            no_export: crate::reader::no_export(path, &plan),
            export: super::diagnose::export(path, &plan, read, &session),
            as_repaired: None,
        };
        let d = read.diagnose(path, session, &plan, &d_opts)?;
        let problems = check::judge(&d, images, opts);
        let format = d.format;
        let kept = keep.then(|| {
            Box::new(Kept { source: crate::reader::Source::named(&plan, path), diagnosis: d, detected: plan.detected })
        });
        Ok((format, problems, kept))
    });
    match judged {
        Ok((format, problems, kept)) => Outcome::Checked(
            Checked::new(file, Some(format.name()), problems, &opts.allow).of_session(c.session.clone()),
            kept,
        ),
        Err(e) => {
            Outcome::Failed(Checked::unreadable(file, format!("{e:#}"), &opts.allow).of_session(c.session.clone()))
        }
    }
}
