//! Opening an agent's SQLite store (opencode's database, pi's store) to read
//! it, beside a running agent, without ever writing a byte or leaving a file
//! beside it.

use std::path::{Path, PathBuf};

use anyhow::bail;
use rusqlite::{Connection, OpenFlags};
use std::sync::Arc;

/// One session taken out of a store.
pub struct Store {
    /// The agent whose store it is (opencode's, or pi's SQLite store).
    pub format: crate::model::Format,
    /// `{info, parts}` per line, in opencode's order (time created, then id).
    pub lines: Arc<Vec<u8>>,
    /// Which session was read, when the user did not say.
    pub note: Option<String>,
    pub session: String,
}

/// The most recent session unless one is asked for; the note says which.
pub(super) fn choose(
    store: &Path,
    asked: Option<&str>,
    sessions: Vec<(String, String, i64)>,
) -> anyhow::Result<(String, Option<String>)> {
    if let Some(id) = asked {
        if sessions.iter().any(|s| s.0 == id) {
            return Ok((id.to_string(), None));
        }
        let known: Vec<&str> = sessions.iter().take(5).map(|s| s.0.as_str()).collect();
        bail!("{} holds no session {id}; the most recent are: {}", store.display(), known.join(", "));
    }
    let n = sessions.len();
    let Some((id, title, _)) = sessions.into_iter().next() else {
        bail!("{} holds no session", store.display());
    };
    let title = if title.is_empty() { String::new() } else { format!(" \"{title}\"") };
    let note = format!(
        "{}: reading session {id}{title}, the most recently updated of {n}; pass --session ID for another",
        store.display()
    );
    Ok((id, Some(note)))
}

/// A read-only connection to the database at `path`: no write, no checkpoint,
/// no journal.
///
/// Even a read-only connection creates `-wal` and `-shm` beside a WAL database
/// that has none (opencode removes them when it closes):
/// - with no `-wal`, every page is in the file itself, so it is opened
///   `immutable` (no lock, no shared memory);
/// - with a `-wal` and its `-shm`, the agent is running (or did not close) and
///   pages may sit in the `-wal`: it is read through the agent's own `-shm`, as
///   SQLite does;
/// - with a `-wal` and no `-shm` (a database copied while the agent ran), the
///   connection takes the exclusive locking mode before its first read, so
///   SQLite keeps the `-wal`'s index in memory instead of creating a `-shm`;
///   a read-only file cannot take the write lock that mode asks for, so it
///   goes through the VFS without locks (no agent is running: one would have
///   its `-shm`).
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    let beside = |suffix: &str| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        PathBuf::from(p).exists()
    };
    let (wal, shm) = (beside("-wal"), beside("-shm"));
    let query = match (wal, shm) {
        (false, _) => "immutable=1",
        (true, false) => "vfs=unix-none",
        (true, true) => "",
    };
    let db = Connection::open_with_flags(
        uri(path, query),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
    )?;
    if wal && !shm {
        db.pragma_update(None, "locking_mode", "EXCLUSIVE")?;
    }
    db.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(db)
}

/// `path` as a `file:` URI with `query`: `%`, `?` and `#` are escaped,
/// everything else stays as it is.
fn uri(path: &Path, query: &str) -> String {
    let mut text = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => text.push_str(&format!("%{:02X}", c as u32)),
            c => text.push(c),
        }
    }
    if !query.is_empty() {
        text.push('?');
        text.push_str(query);
    }
    text
}
