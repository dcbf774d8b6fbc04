//! `session-doctor exclude`: record the user's decision to leave attachments out.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Args;
use serde::Serialize;

use crate::diagnose::DiagnoseOptions;
use crate::exit::Exit;
use crate::model::{Ref, Session};
use crate::overlay::{EXCLUDED, Event, INCLUDED, Named, Overlay};
use crate::text::sanitize;

use super::session_args::ReadArgs;

/// Leave attachments out of the session from now on, without touching it.
///
/// Appends an event to the overlay beside the session (`<FILE>.doctor`,
/// JSON Lines): the session file itself is never written. `preview` and
/// `repair` put a note in place of each excluded attachment; `scan` and
/// `diagnose` show them as excluded. Each attachment is recorded by its ref
/// and its sha256, so the exclusion still finds its bytes when the agent
/// re-writes records. Excluding twice changes nothing; --undo includes again.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["refs", "suspects", "fit_context"])))]
#[command(after_help = "Examples:
  session-doctor exclude session.jsonl --ref L7.2
  session-doctor exclude session.jsonl --ref sha256:88709c --reason 'half-downloaded PDF'
  session-doctor exclude session.jsonl --suspects
  session-doctor exclude session.jsonl --ref L7.2 --undo
  session-doctor exclude session.jsonl --fit-context

Exit status:
  0  done, or nothing to change (--suspects when diagnose blames nothing)
  2  usage error, a ref that names no attachment (nothing is written),
     or the session cannot be read")]
pub struct ExcludeArgs {
    /// The session file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    /// An attachment to exclude: L<line>.<n> as `scan`/`diagnose` print it,
    /// or sha256:<hex prefix> for every attachment with those bytes. Repeatable.
    #[arg(long = "ref", value_name = "REF", value_parser = super::refs::parse_ref)]
    pub refs: Vec<Ref>,
    /// Exclude the prime suspects `diagnose` names (every suspect when none is prime).
    #[arg(long = "suspects", conflicts_with = "refs")]
    pub suspects: bool,
    /// Record that `preview` and `repair` fit the context window from now on,
    /// as their --fit-context does (with --undo: that they no longer do).
    #[arg(long = "fit-context", conflicts_with_all = ["refs", "suspects"])]
    pub fit_context: bool,
    /// With --fit-context: the model's window in tokens, recorded with it.
    #[arg(long = "context-tokens", value_name = "N", requires = "fit_context", value_parser = clap::value_parser!(u64).range(1..))]
    pub context_tokens: Option<u64>,
    /// Include the attachments again (with --fit-context: stop fitting).
    #[arg(long = "undo")]
    pub undo: bool,
    /// Why, kept in the overlay.
    #[arg(long = "reason", value_name = "TEXT")]
    pub reason: Option<String>,
    /// Print JSON: {"overlay", "event", "changed", "attachments": [refs], "next"}.
    #[arg(long = "json")]
    pub json: bool,
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
    if args.fit_context {
        return fit_context(args, &plan);
    }
    let chosen: Vec<usize> = if args.suspects {
        match suspects(&session, &plan, args)? {
            Suspects::Some(chosen) => chosen,
            Suspects::None(verdict) => return nothing_to_exclude(args, &session, &plan, &verdict),
        }
    } else {
        let mut chosen = Vec::new();
        for q in &args.refs {
            let hits: Vec<usize> =
                (0..session.attachments.len()).filter(|&i| q.matches(&session.attachments[i])).collect();
            if hits.is_empty() {
                anyhow::bail!(
                    "{}: {q} names no attachment{}; nothing was written",
                    session.file,
                    super::refs::nearby(&session.attachments, q)
                );
            }
            // A short hash that two different files share names neither for sure.
            let mut hashes: Vec<&str> = hits.iter().filter_map(|&i| session.attachments[i].sha256.as_deref()).collect();
            hashes.sort_unstable();
            hashes.dedup();
            if hashes.len() > 1 {
                let which: Vec<String> = hits
                    .iter()
                    .map(|&i| &session.attachments[i])
                    .map(|a| {
                        format!(
                            "{} (sha256:{})",
                            a.reference,
                            a.sha256.as_deref().and_then(|h| h.get(..16)).unwrap_or("-")
                        )
                    })
                    .collect();
                anyhow::bail!(
                    "{}: {q} is the start of {} different files' hashes: {}; give more of the hash, or the ref; nothing was written",
                    session.file,
                    hashes.len(),
                    which.join(", ")
                );
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
    let written = Overlay::update(&overlay_path, &args.read.reads(&args.file, &plan, false), |current| {
        let excluded = current.excluded();
        let is_excluded = |n: &Named| excluded.iter().any(|x| x.reference == n.reference && x.sha256 == n.sha256);
        let todo: Vec<Named> = named.iter().filter(|n| is_excluded(n) == args.undo).cloned().collect();
        (!todo.is_empty()).then(|| Event::new(event_name, todo, args.reason.clone()))
    })?;
    let refs: Vec<String> =
        written.as_ref().map_or_else(Vec::new, |e| e.attachments.iter().map(|n| n.reference.clone()).collect());
    let (file, extra) = (args.file.display().to_string(), args.read.repeat(&plan));
    let with = |sub: &str| crate::diagnose::next_command(&file, &extra, sub, "");
    // `preview` and `repair` read and copy files and refuse a store: `diagnose`
    // reads it with the overlay and tells whether the exclusion is enough.
    let next = if plan.memory.is_some() {
        vec![with("diagnose")]
    } else if plan.format.behaviour().previews {
        vec![with("preview"), with("repair")]
    } else {
        vec![with("repair")]
    };
    let outcome = Outcome {
        overlay: overlay_path.display().to_string(),
        event: event_name,
        changed: written.is_some(),
        attachments: refs,
        next,
    };
    let mut out = crate::report::stdout::stdout();
    if args.json {
        crate::report::printer::Printer::print(&crate::report::printer::Json, &mut out, &outcome)?;
    } else {
        human(&mut out, &outcome, &session, &chosen, args.undo)?;
    }
    out.flush()?;
    Ok(Exit::Healthy)
}

/// `--suspects` when diagnose blames nothing: nothing is written, exit 0.
fn nothing_to_exclude(
    args: &ExcludeArgs,
    session: &Session,
    plan: &crate::reader::Plan,
    verdict: &str,
) -> anyhow::Result<Exit> {
    let mut out = crate::report::stdout::stdout();
    if args.json {
        let outcome = Outcome {
            overlay: args.read.overlay_path(&args.file, plan).display().to_string(),
            event: if args.undo { INCLUDED } else { EXCLUDED },
            changed: false,
            attachments: Vec::new(),
            next: Vec::new(),
        };
        crate::report::printer::Printer::print(&crate::report::printer::Json, &mut out, &outcome)?;
    } else {
        writeln!(
            out,
            "nothing to change: diagnose blames nothing in {} ({})",
            sanitize(&session.file),
            sanitize(verdict)
        )?;
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
        let all = all.join(", ");
        // --undo of what was never excluded: it was never left out, not "included again".
        let state = if undo { format!("{all} not excluded") } else { format!("{all} already excluded") };
        writeln!(out, "nothing to change: {state}")?;
        return Ok(());
    }
    for r in &o.attachments {
        let Some(a) = session.attachments.iter().find(|a| &a.reference == r) else { continue };
        // Prose names what is known; an attachment without a name or type just goes without.
        let known: Vec<String> =
            [a.name.as_deref().or(a.url.as_deref()), a.mime_detected.as_deref().or(a.mime_declared.as_deref())]
                .into_iter()
                .flatten()
                .map(sanitize)
                .collect();
        if known.is_empty() {
            writeln!(out, "{verb} {r}")?;
        } else {
            writeln!(out, "{verb} {r} ({})", known.join(", "))?;
        }
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
fn suspects(session: &Session, plan: &crate::reader::Plan, args: &ExcludeArgs) -> anyhow::Result<Suspects> {
    let opts = DiagnoseOptions { model: args.read.model.clone(), ..DiagnoseOptions::default() };
    let d = args.read.diagnose(&args.file, session.clone(), plan, &opts)?;
    let prime: Vec<&str> = d.suspects.iter().filter(|s| s.prime).map(|s| s.attachment.reference.as_str()).collect();
    let refs: Vec<&str> =
        if prime.is_empty() { d.suspects.iter().map(|s| s.attachment.reference.as_str()).collect() } else { prime };
    // A session that is not stuck has nothing to blame, whatever its last
    // request has not had accepted yet. Nothing to change is a success (exit 0).
    if refs.is_empty() || !d.stuck {
        return Ok(Suspects::None(d.verdict));
    }
    Ok(Suspects::Some(refs.iter().filter_map(|r| session.attachments.iter().position(|a| a.reference == *r)).collect()))
}

/// What `--suspects` found: the attachments to exclude, or diagnose's verdict naming none.
enum Suspects {
    Some(Vec<usize>),
    None(String),
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
            crate::text::sanitize_path(path)
        );
    }
}

/// `exclude --fit-context [--undo]`: the decision to fit the context window,
/// recorded in the overlay for `preview` and `repair`.
fn fit_context(args: &ExcludeArgs, plan: &crate::reader::Plan) -> anyhow::Result<Exit> {
    use crate::overlay::{CONTEXT_FITTED, CONTEXT_UNFITTED};
    let overlay_path = args.read.overlay_path(&args.file, plan);
    let event_name = if args.undo { CONTEXT_UNFITTED } else { CONTEXT_FITTED };
    let want = (!args.undo).then_some(args.context_tokens);
    let written = Overlay::update(&overlay_path, &args.read.reads(&args.file, plan, false), |current| {
        (current.fit_context() != want).then(|| {
            let mut e = Event::new(event_name, Vec::new(), args.reason.clone());
            e.context_tokens = args.context_tokens.filter(|_| !args.undo);
            e
        })
    })?;
    let (file, extra) = (args.file.display().to_string(), args.read.repeat(plan));
    let mut next = vec![crate::diagnose::next_command(&file, &extra, "repair", "")];
    if plan.format.behaviour().previews {
        next.insert(0, crate::diagnose::next_command(&file, &extra, "preview", ""));
    }
    let out = Outcome {
        overlay: overlay_path.display().to_string(),
        event: event_name,
        changed: written.is_some(),
        attachments: Vec::new(),
        next,
    };
    let mut w = crate::report::stdout::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut w, &out)?;
        writeln!(w)?;
    } else {
        let what = match (args.undo, written.is_some()) {
            (false, true) => {
                "recorded: preview and repair fit the context window from now on (--fit-context --undo stops it)"
            }
            (true, true) => "recorded: preview and repair no longer fit the context window",
            (false, false) => "nothing to change: the overlay already fits the context window so",
            (true, false) => "nothing to change: the overlay does not fit the context window",
        };
        writeln!(w, "{what}")?;
        writeln!(w, "overlay: {}", crate::text::sanitize_path(&overlay_path))?;
        if written.is_some() {
            writeln!(w, "next:")?;
            for c in &out.next {
                writeln!(w, "  {}", sanitize(c))?;
            }
        }
    }
    w.flush()?;
    Ok(Exit::Healthy)
}
