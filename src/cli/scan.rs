//! `session-doctor scan`: every attachment of the provider-visible history.

use std::io::Write as _;
use std::path::Path;

use clap::Args;
use serde::Serialize;

use crate::exit::Exit;
use crate::model::Ref;
use crate::report::printer::{Human, Json, Printer};
use crate::report::{self, ScanReport};

use super::input::{Inputs, STDIN_NAME};
use super::session_args::{Files, ReadArgs};

/// List every attachment of a session's provider-visible history, and judge it.
///
/// For each attachment: its ref (`L<line>.<n>`, accepted by later commands), line,
/// origin (user or a tool result, with the tool's path argument), declared and
/// sniffed type, size, dimensions or pages, sha256 of the decoded bytes, and a
/// verdict (ok, warn, invalid) with reasons. Damaged lines (invalid JSON, a last
/// line cut short, bad UTF-8) are reported as findings and the rest is still read.
///
/// On a terminal the table is fitted to its width (long names keep their end);
/// piped, every value is printed in full. `-` reads the session from stdin.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor scan ~/.claude/projects/-home-me-app/1f0e….jsonl
  session-doctor scan --provider openai --json session.jsonl
  session-doctor scan --deep samples/*.jsonl
  session-doctor scan --ref L7.1 --ref sha256:88709c samples/claude-code.jsonl
  curl -s https://example.com/session.jsonl | session-doctor scan -

Exit status:
  0  every attachment is fine
  1  an attachment is invalid, the history breaks a provider limit,
     or a line could not be read and was skipped
  2  usage error, or a file cannot be read")]
pub struct ScanArgs {
    #[command(flatten)]
    pub files: Files,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Show only these attachments: L<line>.<n> as printed, or sha256:<hex prefix>
    /// for every attachment with those bytes. A ref that names none is an error.
    #[arg(long = "ref", value_name = "REF", value_parser = super::refs::parse_ref)]
    pub refs: Vec<Ref>,
    /// Print JSON: one document per file, an array for several files.
    #[arg(long = "json")]
    pub json: bool,
}

/// One element of `scan --json` over several files: a report, or why there is none.
#[derive(Serialize)]
#[serde(untagged)]
enum Doc {
    Report(Box<ScanReport>),
    Error { file: String, error: String },
}

pub fn run(args: &ScanArgs) -> anyhow::Result<Exit> {
    // Human output goes out file by file; JSON once, at the end.
    let human = Human { term: report::term::current() };
    let mut out = crate::report::stdout::stdout();
    let mut inputs = Inputs::default();
    let mut docs = Vec::new();
    let (mut failed, mut problems) = (false, false);
    let mut fail = |docs: &mut Vec<Doc>, file: String, error: String| {
        eprintln!("session-doctor: {}", crate::text::sanitize(&error));
        failed = true;
        docs.push(Doc::Error { file, error });
    };
    for arg in &args.files.files {
        let shown = if arg == Path::new("-") { STDIN_NAME.to_string() } else { arg.display().to_string() };
        let read = inputs.path(arg).and_then(|path| args.read.read(&path));
        match read {
            Ok((session, plan)) => {
                let mut r = ScanReport::new(session, &plan);
                r.file.clone_from(&shown);
                if !args.refs.is_empty() {
                    if let Some(missing) = args.refs.iter().find(|q| !r.attachments.iter().any(|a| q.matches(a))) {
                        // As `exclude` says it: the refs the user probably meant.
                        let near = super::refs::nearby(&r.attachments, missing);
                        fail(&mut docs, shown, format!("{}: {missing} names no attachment{near}", r.file));
                        continue;
                    }
                    r.attachments.retain(|a| args.refs.iter().any(|q| q.matches(a)));
                }
                problems |= r.has_problems();
                if args.json {
                    docs.push(Doc::Report(Box::new(r)));
                } else {
                    // Human output goes out file by file, as each is read.
                    human.print(&mut out, &r)?;
                    out.flush()?;
                }
            }
            Err(e) => fail(&mut docs, shown, inputs.name(&format!("{e:#}"))),
        }
    }
    if args.json {
        if args.files.files.len() > 1 {
            // Every file has its place in the array, an unreadable one as {"file", "error"}.
            Json.print_each(&mut out, &docs)?;
        } else if let Some(doc) = docs.first() {
            // One file: its report, or {"file", "error"} when it could not be read.
            Json.print(&mut out, doc)?;
        }
    }
    out.flush()?;
    Ok(if failed {
        Exit::Failed
    } else if problems {
        Exit::Problems
    } else {
        Exit::Healthy
    })
}
