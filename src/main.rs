//! The `session-doctor` binary: parse arguments, run, turn the outcome into an exit code.

use std::process::ExitCode;

use session_doctor::cli;

fn main() -> ExitCode {
    let cli = cli::parse();
    match cli::run(cli) {
        Ok(code) => code.into(),
        Err(err) => {
            if cli::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("session-doctor: {}", session_doctor::text::sanitize(&format!("{err:#}")));
            ExitCode::from(session_doctor::exit::Exit::Failed as u8)
        }
    }
}
