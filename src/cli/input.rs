//! Session paths as the user typed them, with `-` for stdin.
//!
//! The reader needs a file it can seek in (it splits a file between workers and
//! reads the last line first), so stdin is spooled once to a temporary file in the
//! system temp dir, removed when the command ends. Reports name it `<stdin>`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// What reports call the session read from stdin.
pub const STDIN_NAME: &str = "<stdin>";

/// The files of one command, stdin spooled at most once.
#[derive(Default)]
pub struct Inputs {
    stdin: Option<tempfile::NamedTempFile>,
}

impl Inputs {
    /// The path to read for `arg`: itself, or the spooled copy of stdin for `-`.
    pub fn path(&mut self, arg: &Path) -> anyhow::Result<PathBuf> {
        if arg != Path::new("-") {
            return Ok(arg.to_path_buf());
        }
        if self.stdin.is_none() {
            crate::alias::note_stdin();
            let mut spool =
                crate::reader::compressed::spool_file("stdin").context("creating a temporary file for stdin")?;
            std::io::copy(&mut std::io::stdin().lock(), spool.as_file_mut()).context("reading stdin")?;
            spool.as_file_mut().flush()?;
            self.stdin = Some(spool);
        }
        Ok(self.stdin.as_ref().map(|t| t.path().to_path_buf()).unwrap_or_default())
    }

    /// `text` with the spool's path replaced by [`STDIN_NAME`].
    pub fn name(&self, text: &str) -> String {
        match &self.stdin {
            Some(t) => text.replace(&t.path().display().to_string(), STDIN_NAME),
            None => text.to_string(),
        }
    }
}
