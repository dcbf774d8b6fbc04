//! `session-doctor completions <SHELL>`: a completion script, generated from the
//! clap definitions, on stdout.

use clap::{Args, CommandFactory as _};
use clap_complete::Shell;

use crate::exit::Exit;

/// Print a shell completion script for session-doctor to stdout.
///
/// Load it from the shell's start-up file, or save it where the shell looks for
/// completions.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor completions bash > ~/.local/share/bash-completion/completions/session-doctor
  session-doctor completions zsh > ~/.zfunc/_session-doctor
  session-doctor completions fish > ~/.config/fish/completions/session-doctor.fish
  session-doctor completions powershell >> $PROFILE

Exit status:
  0  the script was printed
  2  usage error (an unknown shell)")]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

pub fn run(args: &CompletionsArgs) -> anyhow::Result<Exit> {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "session-doctor", &mut out);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &out)?;
    Ok(Exit::Healthy)
}
