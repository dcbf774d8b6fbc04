//! pi's SQLite session store (`@earendil-works/pi-storage-sqlite-node`, the
//! optional backend of pi-agent-core's v4 agent harness, 0.84.0 on), read as
//! the v3 JSON Lines pi's own files hold, so the pi adapter reads both.
//!
//! No published pi writes it: the `pi` CLI (through 1.6.0) keeps JSONL files
//! only, and the backend package is private in pi's repository (not on npm);
//! an SDK user opens it at a path of their choosing. Its schema (migrations
//! `001_initial.sql`, `002_session_discovery.sql`): `sessions(id, created_at,
//! cwd, parent_session_id, metadata, updated_at, …)`; `entries(session_id,
//! seq, id, parent_id, type, timestamp, payload)`, the payload being the entry
//! without `type`, `id`, `seq`, `parentId` and `timestamp` (later revisions
//! name the table `session_entries`); `lanes(session_id, lane, leaf_id)`, the
//! `main` lane's leaf being the conversation's head. Operation records, facts
//! and caches hold nothing the provider is sent.
//!
//! Opened read-only as opencode's database is (no `-wal`/`-shm` left beside a
//! closed database, a live one read through its WAL); `--session` picks one of
//! many, else the most recently updated.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value};

use super::sqlite::{Store, choose};

/// The table of a pi store's entries; `None` for a database that is not pi's
/// (`sessions`, `lanes` and an entries table).
fn entries_table(db: &Connection) -> rusqlite::Result<Option<&'static str>> {
    let table = |name: &str| -> rusqlite::Result<bool> {
        db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?.exists([name])
    };
    if !(table("sessions")? && table("lanes")?) {
        return Ok(None);
    }
    Ok(match (table("entries")?, table("session_entries")?) {
        (true, _) => Some("entries"),
        (_, true) => Some("session_entries"),
        _ => None,
    })
}

/// A pi store's sessions, the most recently updated first: (id, title, 0).
fn sessions(db: &Connection) -> rusqlite::Result<Vec<(String, String, i64)>> {
    let updated = if column(db, "sessions", "updated_at")? { "COALESCE(updated_at, created_at)" } else { "created_at" };
    // Named by its first message when the store keeps it (migration 002).
    let title = if column(db, "sessions", "first_message")? { "COALESCE(first_message, '')" } else { "''" };
    db.prepare(&format!("SELECT id, {title} FROM sessions ORDER BY {updated} DESC, id DESC"))
        .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, 0))).and_then(|rows| rows.collect()))
}

/// The sessions of `db` if it is a pi store, the most recently updated first.
pub(super) fn session_ids(db: &Connection) -> rusqlite::Result<Option<Vec<String>>> {
    if entries_table(db)?.is_none() {
        return Ok(None);
    }
    Ok(Some(sessions(db)?.into_iter().map(|s| s.0).collect()))
}

/// The store at `path` if it is pi's (a SQLite file with `sessions`, `lanes`
/// and an entries table), else `None`.
pub fn open(path: &Path, asked: Option<&str>) -> anyhow::Result<Option<Store>> {
    super::sqlite::read(path, |db| read(db, path, asked))
}

fn read(db: &Connection, path: &Path, asked: Option<&str>) -> anyhow::Result<Option<Store>> {
    // Whose database it is, pi's or opencode's, is not known until its tables are read.
    let probing = || format!("reading the SQLite database {}", path.display());
    let what = || format!("reading pi's session store {}", path.display());
    let Some(entries) = entries_table(db).with_context(probing)? else { return Ok(None) };
    let (session, note) = choose(path, asked, sessions(db).with_context(what)?)?;
    let (created, cwd): (String, String) = db
        .query_row("SELECT created_at, cwd FROM sessions WHERE id = ?1", [&session], |r| Ok((r.get(0)?, r.get(1)?)))
        .with_context(what)?;
    let leaf: Option<String> = db
        .query_row("SELECT leaf_id FROM lanes WHERE session_id = ?1 AND lane = 'main'", [&session], |r| r.get(0))
        .optional()
        .with_context(what)?
        .flatten();
    let mut lines = Vec::new();
    let mut header = Map::new();
    for (k, v) in [("type", "session".into()), ("version", 3.into()), ("id", session.clone().into())] {
        header.insert(k.into(), v);
    }
    header.insert("timestamp".into(), created.into());
    header.insert("cwd".into(), cwd.into());
    push(&mut lines, header);
    let mut stmt = db
        .prepare(&format!(
            "SELECT id, parent_id, type, timestamp, payload FROM {entries} WHERE session_id = ?1 ORDER BY seq"
        ))
        .with_context(what)?;
    let rows = stmt.query_map([&session], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
        ))
    });
    // The main lane's head goes last: the history is the path from the last entry.
    let mut head = None;
    for row in rows.with_context(what)? {
        let (id, parent, ty, at, payload) = row.with_context(what)?;
        let mut e = Map::new();
        e.insert("type".into(), ty.into());
        e.insert("id".into(), id.clone().into());
        e.insert("parentId".into(), parent.map_or(Value::Null, Value::String));
        e.insert("timestamp".into(), at.into());
        if let Ok(Value::Object(p)) = serde_json::from_str::<Value>(&payload) {
            e.extend(p);
        }
        if leaf.as_deref() == Some(id.as_str()) {
            head = Some(e);
        } else {
            push(&mut lines, e);
        }
    }
    if let Some(e) = head {
        push(&mut lines, e);
    }
    Ok(Some(Store { format: crate::model::Format::Pi, lines: Arc::new(lines), note, session, info: None }))
}

fn column(db: &Connection, table: &str, name: &str) -> rusqlite::Result<bool> {
    db.prepare(&format!("SELECT 1 FROM pragma_table_info('{table}') WHERE name = ?1"))?.exists([name])
}

fn push(out: &mut Vec<u8>, m: Map<String, Value>) {
    // Serializing a serde_json value cannot fail.
    out.extend_from_slice(Value::Object(m).to_string().as_bytes());
    out.push(b'\n');
}
