//! `session-doctor exclude`: record the user's decision to leave attachments out.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Args;
use serde::Serialize;

use crate::diagnose::Options;
use crate::exit::Exit;
use crate::model::{Ref, Session};
use crate::overlay::{EXCLUDED, Event, INCLUDED, Named, Overlay};
use crate::report::sanitize;

use super::session_args::ReadArgs;

/// Leave attachments out of the session from now on, without touching it.
///
/// Appends an event to the overlay beside the session (`<FILE>.doctor`,
/// JSON Lines): the session file itself is never written. `preview` and
/// `repair` put a note in place of each excluded attachment; `scan` and
/// `diagnose` show them as excluded. Each attachment is recorded by its ref
/// and its sha256, so the exclusion still finds its bytes when the agent
/// re-writes records. Excluding twice changes nothing; --undo includes again.
///
/// Exit status: 0 done (or nothing to change), 2 a ref that names no
/// attachment (nothing is written), or an unreadable file.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  session-doctor exclude session.jsonl --ref L7.2
  session-doctor exclude session.jsonl --ref sha256:88709c --reason 'half-downloaded PDF'
  session-doctor exclude session.jsonl --suspects
  session-doctor exclude session.jsonl --ref L7.2 --undo")]
pub struct ExcludeArgs {
    /// The session file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    /// An attachment to exclude: L<line>.<n> as `scan`/`diagnose` print it,
    /// or sha256:<hex prefix> for every attachment with those bytes. Repeatable.
    #[arg(long = "ref", value_name = "REF", value_parser = parse_ref, required_unless_present = "suspects")]
    pub refs: Vec<Ref>,
    /// Exclude the prime suspects `diagnose` names (every suspect when none is prime).
    #[arg(long = "suspects", conflicts_with = "refs")]
    pub suspects: bool,
    /// Include the attachments again.
    #[arg(long = "undo")]
    pub undo: bool,
    /// Why, kept in the overlay.
    #[arg(long = "reason", value_name = "TEXT")]
    pub reason: Option<String>,
    /// Print JSON: {"overlay", "event", "changed", "attachments": [refs], "next"}.
    #[arg(long = "json")]
    pub json: bool,
}

fn parse_ref(s: &str) -> Result<Ref, String> {
    Ref::parse(s).map_err(|e| e.to_string())
}

#[derive(Serialize)]
struct Outcome {
    overlay: String,
    event: &'static str,
    /// Whether the overlay was written (false: nothing to change).
    changed: bool,
    attachments: Vec<String>,
    next: Vec<String>,
}

pub fn run(args: &ExcludeArgs) -> anyhow::Result<Exit> {
    let (session, plan) = args.read.read(&args.file)?;
    warn_if_live(&args.file);
    let chosen: Vec<usize> = if args.suspects {
        suspects(&session, &plan, args)?
    } else {
        let mut chosen = Vec::new();
        for q in &args.refs {
            let hits: Vec<usize> =
                (0..session.attachments.len()).filter(|&i| q.matches(&session.attachments[i])).collect();
            if hits.is_empty() {
                eprintln!(
                    "session-doctor: {}: {q} names no attachment{}",
                    sanitize(&session.file),
                    nearby(&session, q)
                );
                eprintln!("nothing was written");
                return Ok(Exit::Failed);
            }
            for i in hits {
                if !chosen.contains(&i) {
                    chosen.push(i);
                }
            }
        }
        chosen
    };
    let named: Vec<Named> = chosen.iter().map(|&i| Named::of(&session.attachments[i])).collect();
    let overlay_path = args.read.overlay_path(&args.file, &plan);
    let event_name = if args.undo { INCLUDED } else { EXCLUDED };
    let written = Overlay::update(&overlay_path, |current| {
        let excluded = current.excluded();
        let is_excluded = |n: &Named| excluded.iter().any(|x| x.reference == n.reference && x.sha256 == n.sha256);
        let todo: Vec<Named> = named.iter().filter(|n| is_excluded(n) == args.undo).cloned().collect();
        (!todo.is_empty()).then(|| Event::new(event_name, todo, args.reason.clone()))
    })?;
    let refs: Vec<String> =
        written.as_ref().map_or_else(Vec::new, |e| e.attachments.iter().map(|n| n.reference.clone()).collect());
    let (file, extra) = (args.file.display().to_string(), args.read.repeat(&plan));
    let with = |sub: &str| crate::diagnose::next_command(&file, &extra, sub, "");
    // `repair` refuses a store: only `preview` reads it.
    let next = if plan.memory.is_some() { vec![with("preview")] } else { vec![with("preview"), with("repair")] };
    let outcome = Outcome {
        overlay: overlay_path.display().to_string(),
        event: event_name,
        changed: written.is_some(),
        attachments: refs,
        next,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &outcome)?;
        writeln!(out)?;
    } else {
        human(&mut out, &outcome, &session, &chosen, args.undo)?;
    }
    out.flush()?;
    Ok(Exit::Healthy)
}

fn human(
    out: &mut impl std::io::Write,
    o: &Outcome,
    session: &Session,
    chosen: &[usize],
    undo: bool,
) -> std::io::Result<()> {
    let verb = if undo { "included again" } else { "excluded" };
    if !o.changed {
        let all: Vec<&str> = chosen.iter().map(|&i| session.attachments[i].reference.as_str()).collect();
        writeln!(out, "nothing to change: {} already {verb}", all.join(", "))?;
        return Ok(());
    }
    for r in &o.attachments {
        let Some(a) = session.attachments.iter().find(|a| &a.reference == r) else { continue };
        let name = a.name.as_deref().or(a.url.as_deref()).unwrap_or("-");
        let mime = a.mime_detected.as_deref().or(a.mime_declared.as_deref()).unwrap_or("-");
        writeln!(out, "{verb} {r} ({}, {})", sanitize(name), sanitize(mime))?;
    }
    writeln!(out, "recorded in {} (the session file is unchanged)", sanitize(&o.overlay))?;
    writeln!(out)?;
    writeln!(out, "next:")?;
    for c in &o.next {
        writeln!(out, "  {}", sanitize(c))?;
    }
    Ok(())
}

/// `--suspects`: what `diagnose` would blame.
fn suspects(session: &Session, plan: &crate::reader::Plan, args: &ExcludeArgs) -> anyhow::Result<Vec<usize>> {
    let opts = Options { model: args.read.model.clone(), ..Options::default() };
    let d = args.read.diagnose(&args.file, session.clone(), plan, &opts)?;
    let prime: Vec<&str> = d.suspects.iter().filter(|s| s.prime).map(|s| s.attachment.reference.as_str()).collect();
    let refs: Vec<&str> =
        if prime.is_empty() { d.suspects.iter().map(|s| s.attachment.reference.as_str()).collect() } else { prime };
    if refs.is_empty() {
        anyhow::bail!("{}: diagnose names no suspect to exclude ({})", session.file, d.verdict);
    }
    Ok(refs.iter().filter_map(|r| session.attachments.iter().position(|a| a.reference == *r)).collect())
}

/// The refs a user probably meant: those on the nearest lines.
fn nearby(session: &Session, q: &Ref) -> String {
    let line = match q {
        Ref::At { line, .. } => *line,
        Ref::Sha256(_) => 0,
    };
    let mut refs: Vec<(u64, &str)> =
        session.attachments.iter().map(|a| (a.line.abs_diff(line), a.reference.as_str())).collect();
    refs.sort();
    let shown: Vec<&str> = refs.iter().take(6).map(|(_, r)| *r).collect();
    if shown.is_empty() {
        "; the session holds no attachment".into()
    } else {
        format!("; nearby: {}", shown.join(", "))
    }
}

/// An agent may still be writing the session: an exclusion made now may race it.
fn warn_if_live(path: &std::path::Path) {
    let recent = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < Duration::from_secs(10));
    if recent {
        eprintln!(
            "session-doctor: warning: {} changed in the last few seconds: if the agent is still running, stop it first, then resume from the repaired copy",
            sanitize(&path.display().to_string())
        );
    }
}
