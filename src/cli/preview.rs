//! `session-doctor preview`: the request the agent would send after the overlay and rewrites.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use crate::atomic::{self, Existing};
use crate::exit::Exit;
use crate::preview;
use crate::rewrite::Rewrite;
use crate::text::{sanitize, units::count};

use super::rewrite_args::RewriteArgs;
use super::session_args::ReadArgs;

/// Show the request the agent would send, once the overlay and the rewrites apply.
///
/// Prints the history part of the request body (`messages`, `input` or
/// `contents`, with the model), built from the records the provider sees, in
/// the order the agent sends them: excluded attachments carry their note in
/// place, images over --max-images carry the cap note, reasoning is stripped
/// or made self-contained as asked, and a broken history is mended as `repair`
/// mends it (a tool call the run left unanswered gets the agent's own
/// interrupted result, or a note where the agent has none; a result whose call
/// is gone is left out): the preview is what the repaired copy sends, which
/// for such a history is not what the session sends now. --target converts it to another
/// provider's dialect (tool calls and results paired, media as that dialect
/// spells it). Nothing is sent anywhere, and the session is not written.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  session-doctor preview session.jsonl | jq '.messages | length'
  session-doctor preview session.jsonl --max-images 20 --out request.json
  session-doctor preview session.jsonl --target openai-responses

Exit status:
  0  the request was written
  2  usage error or unreadable session")]
pub struct PreviewArgs {
    /// The session file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub rewrite: RewriteArgs,
    /// The dialect to write: native (what the agent sends its provider) or
    /// another provider's.
    #[arg(long = "target", value_name = "TARGET", default_value = "native", value_parser = super::values::target())]
    pub target: super::values::Target,
    /// Write the request to this file (atomically) instead of stdout.
    #[arg(long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print {"file", "format", "target", "items", "changes", "not_in_session"}
    /// to stderr as JSON instead of the summary line; "not_in_session" names
    /// what the agent sends besides the history (its system prompt, tool list).
    #[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
    #[arg(long = "json")]
    pub json: bool,
}

pub fn run(args: &PreviewArgs) -> anyhow::Result<Exit> {
    let planned = crate::alias::Snapshot::of(&args.file);
    let (session, plan) = args.read.read(&args.file)?;
    let planned = planned?;
    if let Some(why) = crate::reader::no_export(&args.file, &plan) {
        // A store's session is previewed where the agent's export of it is the same
        // history (opencode's database and storage tree; checked against opencode).
        bail!(
            "{}: preview is checked against what the agent sends only for a stored session its export writes, and {why}",
            args.file.display()
        );
    }
    let native = crate::formats::native_of(&session, &plan.rules.provider);
    let dialect = args.target.0.unwrap_or(native);
    let converted = dialect != native;
    let source = crate::reader::Source::of(&plan, &args.file);
    let threads = args.read.threads.unwrap_or(0);
    let mut rewrite = Rewrite::plan(&session, &args.rewrite.options(), plan.single_document);
    if args.rewrite.fit {
        rewrite.fit(&session, &source, &plan.rules, plan.single_document);
    }
    if let Some(opts) = args.read.fit_context(args.rewrite.context(), &args.file, &plan)? {
        let place = crate::rewrite::trim::Place { source: &source, single_document: plan.single_document };
        rewrite.fit_context(&session, &place, opts, args.read.model.as_deref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    // One build of the request, written to the file or to stdout.
    let build = |w: &mut dyn std::io::Write| {
        preview::preview(&source, &session, rewrite, plan.single_document, dialect, converted, threads, w)
    };
    let done = match &args.out {
        Some(path) => {
            let mut result = None;
            let mut reads = args.read.reads(&args.file, &plan, true);
            reads.extend(crate::alias::named_by(&session.attachments));
            atomic::write(path, Existing::Replace, &reads, |w| {
                result = Some(build(w)?);
                // The request is of the file that was planned, or it is not written.
                planned.unchanged(&args.file)
            })?;
            result.ok_or_else(|| anyhow::anyhow!("nothing was written"))?
        }
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, crate::report::stdout::stdout());
            let done = build(&mut out)?;
            out.flush()?;
            done
        }
    };
    let mut err = std::io::stderr().lock();
    if let (Some(path), false) = (&args.out, args.json) {
        writeln!(err, "session-doctor: wrote {}", crate::text::sanitize_path(path))?;
    }
    if args.json {
        let mut v = serde_json::json!({"file": session.file, "format": session.format, "target": done.target, "items": done.items, "changes": done.changes, "not_in_session": done.not_in_session});
        crate::report::printer::json::version_value(&mut v);
        writeln!(err, "{v}")?;
    } else {
        let c = &done.changes;
        let mut what = vec![count(done.items, "item", "items")];
        if !c.excluded.is_empty() {
            what.push(format!("{} excluded", c.excluded.len()));
        }
        if !c.capped.is_empty() {
            what.push(format!("{} over the image cap", c.capped.len()));
        }
        if !c.fitted.is_empty() {
            what.push(format!("{} fitted", c.fitted.len()));
        }
        if c.reasoning_removed + c.reasoning_ids_dropped > 0 {
            what.push(format!("{} reasoning rewritten", c.reasoning_removed + c.reasoning_ids_dropped));
        }
        if !c.healed.is_empty() {
            what.push(format!("{} healed away by the agent", c.healed.len()));
        }
        if !c.elided.is_empty() {
            what.push(format!("{} elided to fit the context window", c.elided.len()));
        }
        if !c.surrogates_replaced.is_empty() {
            let lines = count(c.surrogates_replaced.len() as u64, "line", "lines");
            what.push(format!("lone surrogates on {lines} replaced by U+FFFD"));
        }
        writeln!(err, "session-doctor: {} request for {}: {}", done.target, sanitize(&session.file), what.join(", "))?;
        if let Some(e) = &c.context {
            writeln!(err, "  {}", crate::rewrite::trim::describe(e))?;
        }
        // An image --fit could not fit is sent as it is: said, with why.
        for why in &c.not_fitted {
            writeln!(err, "  not fitted: {}", sanitize(why))?;
        }
        if !done.not_in_session.is_empty() {
            writeln!(err, "  not in the session (the agent adds them): {}", done.not_in_session.join(", "))?;
        }
    }
    Ok(Exit::Healthy)
}
