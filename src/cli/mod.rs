//! Command-line interface: clap definitions and the one dispatch match.

mod classify;
mod diagnose;
mod exclude;
mod scan;
mod session_args;

use clap::{Parser, Subcommand};

use crate::exit::Exit;

/// Un-stick the sessions of LLM coding agents.
///
/// session-doctor reads a session of Claude Code, Codex CLI, pi, Gemini CLI, mux,
/// opencode (its files or its database) or Cline (or logged OpenAI, Anthropic and
/// Gemini request bodies), names
/// every attachment the provider sees, validates each one byte by byte, and
/// classifies provider errors. It never writes to the session file.
///
/// Exit status: 0 healthy, 1 problems found, 2 usage error or unreadable input.
#[derive(Debug, Parser)]
#[command(name = "session-doctor", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Scan(scan::ScanArgs),
    Diagnose(diagnose::DiagnoseArgs),
    Exclude(exclude::ExcludeArgs),
    Classify(classify::ClassifyArgs),
}

/// Runs one command and says how the process should exit.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Scan(args) => scan::run(&args),
        Command::Diagnose(args) => diagnose::run(&args),
        Command::Exclude(args) => exclude::run(&args),
        Command::Classify(args) => classify::run(&args),
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
