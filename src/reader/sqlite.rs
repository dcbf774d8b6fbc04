//! Opening an agent's SQLite store (opencode's database, pi's store) to read
//! it, beside a running agent, without ever writing a byte or leaving a file
//! beside it.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

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
