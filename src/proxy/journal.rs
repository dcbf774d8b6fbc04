//! The proxy's journal: one JSON line per request it changed or retried.
//!
//! A line says when, which route (the path without its query: a Gemini key
//! may ride in `?key=`), what was changed and why, and the statuses the
//! provider answered. Never a header, never a body: credentials and the
//! conversation stay out. The file is private (0600 in a 0700 folder) under
//! the user's state folder; each line is one `write` to a file opened for
//! appending, so concurrent requests never interleave within a line.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Serialize;

use super::mend::Change;

/// One journal line.
#[derive(Debug, Serialize)]
pub struct Entry<'a> {
    /// Seconds since the epoch.
    pub at: u64,
    pub method: &'a str,
    /// The request's path, without its query.
    pub path: &'a str,
    pub changes: &'a [Change],
    /// Whether the request was sent a second time, after a rejection naming a block.
    pub retried: bool,
    /// The provider's status to the first send, when it was retried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_status: Option<u16>,
    /// The status the agent got.
    pub status: u16,
}

/// `$XDG_STATE_HOME/session-doctor/proxy/journal.jsonl` (else `~/.local/state/…`).
pub fn default_path() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state")))
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("session-doctor-{}", rustix::process::geteuid().as_raw()))
        });
    base.join("session-doctor").join("proxy").join("journal.jsonl")
}

/// The open journal.
pub struct Journal {
    file: std::fs::File,
}

impl Journal {
    /// Opens (creates) the journal at `path` for appending, private to this user.
    pub fn open(path: &Path) -> anyhow::Result<Journal> {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        if let Some(dir) = path.parent() {
            crate::guard::private_dir(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("opening the journal {}", path.display()))?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("closing the journal {} to other users", path.display()))?;
        Ok(Journal { file })
    }

    /// Appends one line.
    pub fn write(&self, entry: &Entry<'_>) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        (&self.file).write_all(&line)
    }
}

/// The journal's lines at `path`, oldest first (none when there is no journal yet).
pub fn read(path: &Path) -> anyhow::Result<Vec<serde_json::Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading the journal {}", path.display())),
    };
    Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
}
