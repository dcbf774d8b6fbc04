//! Command-line interface: clap definitions and the one dispatch match.

mod check;
mod classify;
mod completions;
mod diagnose;
mod exclude;
mod guard;
pub mod input;
mod preview;
mod proxy;
mod refs;
mod repair;
mod rewrite_args;
mod scan;
mod schema;
mod session_args;
mod sessions;
mod values;

use clap::{Parser, Subcommand};

use crate::exit::Exit;

/// Un-stick the sessions of LLM coding agents.
///
/// session-doctor reads a session of Claude Code, Codex CLI, pi, Gemini CLI, mux,
/// opencode (its files or its database), Copilot CLI, Cline or Qwen Code (or logged OpenAI,
/// Anthropic and Gemini request bodies), names
/// every attachment the provider sees, validates each one byte by byte, and
/// classifies provider errors. It never writes to the session file.
#[derive(Debug, Parser)]
#[command(
    name = "session-doctor",
    version,
    after_help = "\
Examples:
  session-doctor scan samples/claude-code.jsonl
  session-doctor classify 'Could not process image'

Exit status:
  0  healthy / done
  1  problems found (an invalid attachment, a provider limit broken)
  2  usage error or unreadable input"
)]
pub struct Cli {
    /// When to colour the output: auto (on a terminal, unless NO_COLOR is set;
    /// CLICOLOR_FORCE forces it), always, never.
    #[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
    #[arg(long = "color", value_name = "WHEN", global = true, default_value = "auto")]
    pub color: crate::report::term::ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Scan(scan::ScanArgs),
    Diagnose(diagnose::DiagnoseArgs),
    Exclude(exclude::ExcludeArgs),
    Preview(preview::PreviewArgs),
    Repair(repair::RepairArgs),
    Check(check::CheckArgs),
    Classify(classify::ClassifyArgs),
    Sessions(sessions::SessionsArgs),
    Guard(guard::GuardArgs),
    Proxy(proxy::ProxyArgs),
    Schema(schema::SchemaArgs),
    Completions(completions::CompletionsArgs),
}

/// clap's help without its `{after-help}`: [`parse`] prints that part itself.
const HELP_TEMPLATE: &str = "{before-help}{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}";

/// Parses the process's arguments, as `Cli::parse` does, except for `--help`:
/// clap wraps the `after_help` text (the examples and exit statuses) at the
/// terminal's width like prose, which breaks an example mid-command so that it
/// cannot be copied. Here the options are wrapped by clap and the examples
/// follow as written, one per line. The man pages keep `after_help` as it is.
pub fn parse() -> Cli {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let full = Cli::command();
    let bare = without_after_help(full.clone());
    let matches = bare.try_get_matches().unwrap_or_else(|e| {
        use clap::error::ErrorKind::{DisplayHelp, DisplayHelpOnMissingArgumentOrSubcommand};
        if matches!(e.kind(), DisplayHelp | DisplayHelpOnMissingArgumentOrSubcommand) {
            // `--help` on stdout (exit 0); bare `session-doctor` on stderr (exit 2), as clap does.
            let _ = e.print();
            if let Some(after) = after_help(&full, std::env::args().skip(1)) {
                use std::io::Write as _;
                // `--help | head` closes the pipe early: that is no error (`println!` would panic).
                let _ = if e.use_stderr() {
                    writeln!(std::io::stderr(), "\n{after}")
                } else {
                    writeln!(std::io::stdout(), "\n{after}")
                };
            }
            std::process::exit(e.exit_code());
        }
        usage_error(&e)
    });
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| usage_error(&e))
}

/// `cmd` and every subcommand under it, nested ones too (`guard install`),
/// with a help template that leaves `after_help` for [`parse`] to print.
fn without_after_help(cmd: clap::Command) -> clap::Command {
    cmd.help_template(HELP_TEMPLATE).mut_subcommands(without_after_help)
}

/// A usage error, as clap prints it, and with `--json` also as `{"error": …}`
/// on stdout (exit 2): what every other error under `--json` answers.
fn usage_error(e: &clap::Error) -> ! {
    use std::io::Write as _;
    if std::env::args().skip(1).take_while(|a| a != "--").any(|a| a == "--json") {
        let said = e.render().to_string();
        let first = said.lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
        let v = serde_json::json!({ "schema_version": crate::report::printer::json::SCHEMA_VERSION, "error": crate::text::sanitize(&first) });
        let _ = writeln!(std::io::stdout(), "{v}");
    }
    e.exit()
}

/// The `after_help` of the command `args` ask help for (`scan --help`, `help scan`, `--help`).
fn after_help(top: &clap::Command, args: impl Iterator<Item = String>) -> Option<String> {
    let mut cmd = top;
    let mut value_next = false;
    for arg in args {
        // The one global option that takes a value: `--color WHEN`.
        if std::mem::take(&mut value_next) {
            continue;
        }
        if arg == "--color" {
            value_next = true;
            continue;
        }
        if arg.starts_with('-') || arg == "help" {
            continue;
        }
        match cmd.find_subcommand(&arg) {
            Some(sub) => cmd = sub,
            None => break,
        }
    }
    cmd.get_after_help().map(ToString::to_string)
}

/// Runs one command and says how the process should exit.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    // Decided once; printers read it with `report::term::current()`.
    crate::report::term::init(cli.color);
    let json = cli.command.json();
    let ran = dispatch(cli.command);
    // `--json` answers JSON even on an error: {"error": "…"} on stdout, exit 2
    // (the message goes to stderr too, as for every error).
    if let Err(e) = &ran
        && json
        && !is_broken_pipe(e)
    {
        use std::io::Write as _;
        let v = serde_json::json!({ "schema_version": crate::report::printer::json::SCHEMA_VERSION, "error": crate::text::sanitize(&format!("{e:#}")) });
        let mut out = crate::report::stdout::stdout();
        let _ = writeln!(out, "{v:#}").and_then(|()| out.flush());
    }
    ran
}

impl Command {
    /// Whether the command was asked for JSON (its errors then answer JSON too).
    fn json(&self) -> bool {
        match self {
            Command::Scan(a) => a.json,
            Command::Diagnose(a) => a.json,
            Command::Exclude(a) => a.json,
            Command::Preview(a) => a.json,
            Command::Repair(a) => a.json,
            Command::Check(a) => a.form() == check::OutputForm::Json,
            Command::Classify(a) => a.json,
            Command::Sessions(a) => a.json,
            Command::Completions(_) | Command::Schema(_) => false,
            // A hook's stdout belongs to the agent's protocol: never an error object there.
            Command::Guard(a) => a.json && a.hook.is_none(),
            Command::Proxy(a) => a.json,
        }
    }
}

fn dispatch(command: Command) -> anyhow::Result<Exit> {
    match command {
        Command::Scan(args) => scan::run(&args),
        Command::Diagnose(args) => diagnose::run(&args),
        Command::Exclude(args) => exclude::run(&args),
        Command::Preview(args) => preview::run(&args),
        Command::Repair(args) => repair::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Classify(args) => classify::run(&args),
        Command::Completions(args) => completions::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::Sessions(args) => sessions::run(&args),
        Command::Guard(args) => guard::run(&args),
        Command::Proxy(args) => proxy::run(&args),
    }
}

/// A closed stdout (`session-doctor scan … | head`) is not an error.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == BrokenPipe)
            || e.downcast_ref::<serde_json::Error>().and_then(serde_json::Error::io_error_kind) == Some(BrokenPipe)
    })
}
