//! Opening an agent's SQLite store (opencode's database, pi's store) to read
//! it, beside a running agent, without ever writing a byte or leaving a file
//! beside it.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
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
    /// The session's own record (opencode's `session` row), as an export's
    /// `info` holds it: what its agent sends beside the messages (Kilo Code
    /// CLI's working directory). `None` for a store that keeps none (pi's).
    pub info: Option<serde_json::Value>,
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
/// - a rollback-journal database (its header says so) is opened read-only
///   with SQLite's locks, which create nothing beside it: a writer's commit
///   waits for the read, and the read for the commit, so nothing is read torn
///   (it was opened `immutable`, without locks, before: issue 37, item 15);
/// - a WAL database with no `-wal` has every page in the file itself, so it
///   is opened `immutable` (no lock, no shared memory); a writer that starts
///   meanwhile could checkpoint into the file under the read, so [`read`]
///   reads it again if the file or its `-wal` changed while it read;
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
    let (wal, shm) = (beside(path, "-wal").exists(), beside(path, "-shm").exists());
    let query = match (wal, shm) {
        (false, _) if rollback_journal(path) => "",
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

/// How many times [`read`] reads a database that changed while it read.
const READS: usize = 5;

/// `f` on a connection to the database at `path` ([`open`]), read again when
/// it was read without locks (`immutable`) and the file or its `-wal` changed
/// meanwhile: what it read may be torn.
pub fn read<T>(path: &Path, mut f: impl FnMut(&Connection) -> anyhow::Result<T>) -> anyhow::Result<T> {
    for _ in 0..READS {
        let before = Stamp::of(path);
        let db = open(path).with_context(|| format!("reading the SQLite database {}", path.display()))?;
        let out = f(&db);
        drop(db);
        if !before.unlocked || Stamp::of(path) == before {
            return out;
        }
    }
    bail!("{} kept changing while it was read ({READS} times); read it again when the agent is idle", path.display())
}

/// What tells a database file changed: its size, times and inode, and whether a `-wal` is beside it.
#[derive(PartialEq)]
struct Stamp {
    file: Option<(u64, i64, i64, i64, i64, u64)>,
    wal: bool,
    /// Whether [`open`] reads it without locks.
    unlocked: bool,
}

impl Stamp {
    fn of(path: &Path) -> Stamp {
        use std::os::unix::fs::MetadataExt as _;
        let file = std::fs::metadata(path)
            .ok()
            .map(|m| (m.len(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino()));
        let wal = beside(path, "-wal").exists();
        Stamp { file, wal, unlocked: !wal && !rollback_journal(path) }
    }
}

fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Whether the database header says rollback journal (file format versions
/// 1, legacy), not WAL (2): bytes 18 and 19 of the header.
fn rollback_journal(path: &Path) -> bool {
    let mut head = [0u8; 20];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)).is_ok()
        && head[18] == 1
        && head[19] == 1
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

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(path: &Path, mode: &str) -> Connection {
        let db = Connection::open(path).unwrap();
        db.busy_timeout(std::time::Duration::from_secs(60)).unwrap();
        db.pragma_update(None, "journal_mode", mode).unwrap();
        db.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, pad BLOB)").unwrap();
        db
    }

    /// Rows are rewritten in one transaction each, with sizes that move them
    /// between pages: a read that sees part of a commit sees a malformed tree
    /// or rows of two versions.
    fn rewrite(db: &mut Connection, round: i64) {
        let tx = db.transaction().unwrap();
        tx.execute("DELETE FROM t", []).unwrap();
        let size = 200 + (round * 397) % 1800;
        for id in 0..300 {
            tx.execute("INSERT INTO t VALUES (?1, ?2, zeroblob(?3))", [id, round, size + id % 7]).unwrap();
        }
        tx.commit().unwrap();
    }

    #[test]
    fn a_rollback_journal_database_being_written_is_never_read_torn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let mut db = writer(&path, "DELETE");
        rewrite(&mut db, 0);
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for round in 1..=150 {
                    rewrite(&mut db, round);
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) && reads < 20_000 {
                let got = open(&path).and_then(|r| {
                    r.query_row("SELECT count(*), min(v), max(v) FROM t", [], |row| {
                        Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
                    })
                });
                let (n, lo, hi) = got.unwrap_or_else(|e| panic!("read {reads}: {e}"));
                assert_eq!((n, lo), (300, hi), "read {reads} saw two versions");
                reads += 1;
            }
        });
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, [std::ffi::OsString::from("store.db")], "nothing left beside it");
    }

    #[test]
    fn a_wal_database_that_changes_under_an_unlocked_read_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let mut db = writer(&path, "WAL");
        rewrite(&mut db, 1);
        drop(db);
        assert!(!beside(&path, "-wal").exists(), "closed: every page is in the file");
        let mut calls = 0;
        let n: i64 = read(&path, |r| {
            calls += 1;
            let n = r.query_row("SELECT count(*) FROM t", [], |row| row.get(0))?;
            if calls == 1 {
                // A writer comes and goes under the read, checkpointing into the file.
                let mut w = Connection::open(&path).unwrap();
                rewrite(&mut w, 2);
            }
            Ok(n)
        })
        .unwrap();
        assert_eq!((n, calls), (300, 2), "read again after the file changed");
    }
}
