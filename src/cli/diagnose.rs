//! `session-doctor diagnose`: why a session is stuck and what to run next.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;

use crate::diagnose::DiagnoseOptions;
use crate::exit::Exit;
use crate::report;
use crate::report::printer::human::Diagnosed;
use crate::report::printer::{Human, Json, Printer};

use super::session_args::ReadArgs;

/// Find out why a session is stuck: the last failure, its class, whether a
/// retry can ever work, the attachments to blame, and the commands to run next.
///
/// The failure is the provider error the session recorded (or the one given
/// with --error). Its class decides what helps. For media failures, the
/// suspects are the attachments the failing model has not accepted yet (those
/// after its last answer); each is validated byte by byte (fully decoded), and
/// one whose bytes fail, or that the provider's error names, is the prime
/// suspect. With no error recorded, the history alone is judged: a tool call
/// left without its result or a result without its call (history_invalid: the
/// report names them, and `repair` pairs them), invalid media the model has not
/// accepted, a request over the provider's limits, replayed reasoning another
/// provider cannot verify.
#[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  session-doctor diagnose ~/.claude/projects/-home-me-app/1f0e….jsonl
  session-doctor diagnose --latest --agent codex
  session-doctor diagnose session.jsonl --error 'messages.3.content.1.image.source.base64: Could not process image'
  session-doctor diagnose rollout.jsonl --error-file last-error.json --model gpt-5
  session-doctor diagnose --json session.jsonl | jq '.next[]'
  session-doctor diagnose session.jsonl --html report.html

Exit status:
  0  not stuck
  1  stuck
  2  usage error, or the session cannot be read")]
pub struct DiagnoseArgs {
    /// The session file; `-` reads it from stdin.
    #[arg(value_name = "FILE", required_unless_present = "latest", conflicts_with = "latest")]
    pub file: Option<PathBuf>,
    /// Diagnose the most recently active session in the agents' standard
    /// locations (the newest `session-doctor sessions` lists).
    #[arg(long = "latest")]
    pub latest: bool,
    /// With --latest: only this agent's sessions.
    #[arg(long = "agent", value_name = "AGENT", value_parser = super::values::agent())]
    pub agent: Option<&'static str>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// The provider's error (a JSON body or the message the agent showed),
    /// when the session did not record it.
    #[arg(long = "error", value_name = "TEXT", conflicts_with = "error_file")]
    pub error: Option<String>,
    /// Read the provider's error from this file.
    #[arg(long = "error-file", value_name = "FILE")]
    pub error_file: Option<PathBuf>,
    /// Print JSON (the schema is in docs/diagnose.md).
    #[arg(long = "json")]
    pub json: bool,
    /// Also write a self-contained HTML page (no network, no scripts): the
    /// verdict, the history, and a card with a thumbnail for every attachment.
    #[arg(long = "html", value_name = "OUT")]
    pub html: Option<PathBuf>,
}

pub fn run(args: &DiagnoseArgs) -> anyhow::Result<Exit> {
    let error = match (&args.error, &args.error_file) {
        (Some(t), _) => Some(t.clone()),
        // Bounded: a huge file is judged by its head and tail; a device or a FIFO is refused.
        (None, Some(f)) => Some(
            crate::file::open_regular(f)
                .map_err(anyhow::Error::new)
                .and_then(|file| Ok(crate::classify::text::read_capped(file)?))
                .with_context(|| format!("cannot read {}", f.display()))?,
        ),
        _ => None,
    };
    // Not clap's `requires`: its usage line names --latest and not why.
    if let (Some(agent), Some(_)) = (args.agent, &args.file) {
        anyhow::bail!(
            "--agent {agent} chooses whose newest session --latest reads; FILE is read in the format it is detected \
             as (--format reads it as another)"
        );
    }
    let file = match (&args.file, args.latest) {
        (Some(f), _) => f.clone(),
        (None, _) => {
            let f = crate::discover::latest_session(args.agent).with_context(|| {
                // Where it looked, as `sessions` says it.
                let env = crate::discover::Env::from_process();
                let agents: Vec<&str> = args.agent.map_or(crate::discover::AGENTS.to_vec(), |a| vec![a]);
                let looked: Vec<String> = env
                    .iter()
                    .flat_map(|env| agents.iter().flat_map(|a| crate::discover::roots(env, a)))
                    .map(|r| r.display().to_string())
                    .collect();
                let whose = args.agent.map_or("no session".to_string(), |a| format!("no {a} session"));
                format!("{whose} found; looked in {}", crate::text::sanitize(&looked.join(", ")))
            })?;
            eprintln!("session-doctor: diagnosing {}", crate::text::sanitize_path(&f));
            f
        }
    };
    let mut inputs = super::input::Inputs::default();
    let path = inputs.path(&file)?;
    let (mut session, plan) = match args.read.read(&path) {
        Ok(read) => read,
        // `--json` always answers with JSON, even when the session cannot be read
        // at all (a one-document session cut short is not JSON): the fields of
        // the schema, `stuck` unknown (null), and the reason in `error`. Exit 2.
        Err(e) if args.json => {
            let message = crate::text::sanitize(&format!("{e:#}"));
            eprintln!("session-doctor: {message}");
            let mut v = serde_json::json!({"file": file.display().to_string(), "format": null, "stuck": null,
                "failure": null, "suspects": [], "excluded": [], "next": [], "error": message});
            crate::report::printer::json::version_value(&mut v);
            writeln!(crate::report::stdout::stdout(), "{v:#}")?;
            return Ok(Exit::Failed);
        }
        Err(e) => return Err(e),
    };
    if file == std::path::Path::new("-") {
        session.file = super::input::STDIN_NAME.to_string();
    }
    // A command cannot read stdin again: the next commands name a file the
    // session is first saved to, and a note says how.
    let from_stdin = file == std::path::Path::new("-");
    let saved = if plan.single_document { "session.json" } else { "session.jsonl" };
    let opts = DiagnoseOptions {
        error,
        model: args.read.model.clone(),
        file_arg: if from_stdin { saved.to_string() } else { file.display().to_string() },
        read_args: args.read.repeat(&plan),
        store: plan.memory.is_some(),
        no_export: crate::reader::no_export(&path, &plan),
        export: export(&path, &plan, &args.read, &session),
        as_repaired: None,
    };
    let mut d = args.read.diagnose(&path, session, &plan, &opts)?;
    if from_stdin && !d.next.is_empty() {
        d.notes.push(format!(
            "the session came from stdin, which a later command cannot read again: save the same bytes to {saved} first (the command you piped in, ending `> {saved}` instead of `| session-doctor diagnose -`), then run the next commands there"
        ));
    }
    if let Some(page) = &args.html {
        // The bytes are read back from where the session was read (stdin is spooled there).
        let source = crate::reader::Source::of(&plan, &path);
        let payloads = |a: &crate::model::Attachment| crate::reader::read_payload(&source, a);
        let mut reads = args.read.reads(&path, &plan, true);
        reads.extend(args.error_file.iter().map(|f| crate::alias::Input::new("the error file", f.as_path())));
        reads.extend(crate::alias::named_by(&d.timeline.attachments));
        crate::atomic::write(page, crate::atomic::Existing::Replace, &reads, |w| {
            report::html::write(w, &d, plan.detected, &payloads)?;
            Ok(())
        })?;
        eprintln!("session-doctor: wrote {}", crate::text::sanitize_path(page));
    }
    let mut out = crate::report::stdout::stdout();
    if args.json {
        Json.print(&mut out, &d)?;
    } else {
        let human = Human { term: report::term::current() };
        human.print(&mut out, &Diagnosed { diagnosis: &d, detected: plan.detected })?;
    }
    out.flush()?;
    Ok(if d.stuck { Exit::Problems } else { Exit::Healthy })
}

/// The export a stored opencode session's next commands go through: opencode
/// has `opencode export` (Kilo Code CLI `kilo export`), pi's store and an event-sourced session have none
/// ([`crate::reader::no_export`]).
pub(crate) fn export(
    path: &std::path::Path,
    plan: &crate::reader::Plan,
    read: &ReadArgs,
    written: &crate::model::Session,
) -> Option<crate::diagnose::Export> {
    let session = plan.session.as_ref().filter(|_| plan.memory.is_some())?;
    let opencode = plan.format == crate::model::Format::Opencode && crate::reader::no_export(path, plan).is_none();
    let cli = crate::formats::opencode::command(written.written_by);
    opencode.then(|| crate::diagnose::Export { session: session.clone(), cli, read_args: read.repeat_for_export() })
}
