//! Command-line interface: clap definitions and the one dispatch match.

mod classify;
mod scan;
mod session_args;

use clap::{Parser, Subcommand};

use crate::exit::Exit;

/// Un-stick the sessions of LLM coding agents.
#[derive(Debug, Parser)]
#[command(name = "session-doctor", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every attachment in a session's provider-visible history.
    Scan(scan::ScanArgs),
    /// Classify one provider error: class, remedy, retryable or not.
    Classify(classify::ClassifyArgs),
}

/// Runs one command and says how the process should exit.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Scan(args) => scan::run(&args),
        Command::Classify(args) => classify::run(&args),
    }
}

/// A closed stdout (`session-doctor scan … | head`) is not an error.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
