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
    clap_complete::generate(args.shell, &mut cmd, BIN, &mut out);
    if args.shell == Shell::Bash {
        out = mend_bash(&out);
    }
    std::io::Write::write_all(&mut std::io::stdout().lock(), &out)?;
    Ok(Exit::Healthy)
}

const BIN: &str = "session-doctor";

/// `clap_complete` 4.6 names a subcommand's bash case arm after the binary with
/// its `-` as a subcommand separator (`session__subcmd__doctor__subcmd__check`),
/// but sets `cmd` with it as `__` (`session__doctor__subcmd__check`): no arm
/// matched, and nothing completed after a subcommand. The arms are spelled as
/// `cmd` is.
fn mend_bash(script: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(script);
    let (wrong, right) =
        (format!("{}__subcmd__", BIN.replace('-', "__subcmd__")), format!("{}__subcmd__", BIN.replace('-', "__")));
    text.replace(&wrong, &right).into_bytes()
}
