//! opencode's own stores, read as the JSON Lines of its `{info, parts}` messages
//! (one message per line, so refs name a message and survive appends):
//! - the SQLite database `opencode.db` (tables `session`, `message`, `part`,
//!   whose `data` column is the object without its ids), opened read-only so it
//!   can be read while opencode runs (WAL), never written;
//!   An event-sourced ("v2") session, which opencode 1.18.33 writes when driven
//!   through its `/api/session` HTTP API (`opencode serve`), has no `message`
//!   rows: its messages are the rows of `session_message` (`id`, `session_id`,
//!   `type`, `seq`, `time_created`, `time_updated`, `data`: the message without
//!   its `id` and `type`; migrations `20260427172553_slow_nightmare` and
//!   `20260603040000_session_message_projection_order`), in `seq` order, and the
//!   `session` table is shared: one database holds v1 sessions, v2 ones, or both.
//!   They are read as the same `{info, parts}` lines (see [`v2`]);
//! - the legacy `storage/` tree: `session/<project>/<ses>.json`,
//!   `message/<ses>/<msg>.json`, `part/<msg>/<prt>.json`.
//!
//! A store holds many sessions: `--session ses_…` picks one, else the most
//! recently updated is read and the plan says which.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use serde_json::{Map, Value};

use super::ReadOptions;
use super::sqlite::{Store, choose};

mod v2;

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// The store at `path`, if it is one of opencode's; a single storage record is
/// an error naming the folder to point at instead.
pub fn open(path: &Path, opts: &ReadOptions) -> anyhow::Result<Option<Store>> {
    if path.is_dir() {
        let Some(root) = storage_root(path) else {
            bail!(
                "{} is a folder, not a session file (nor opencode's storage/ folder with message/ and part/ in it)",
                path.display()
            );
        };
        return storage(&root, opts.session.as_deref()).map(Some);
    }
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .with_context(|| format!("opening {}", path.display()))?;
    if head[..n] == *SQLITE_MAGIC {
        if let Some(store) = super::pi_store::open(path, opts.session.as_deref())? {
            return Ok(Some(store));
        }
        return database(path, opts.session.as_deref()).map(Some);
    }
    // `storage/<kind>/<dir>/<id>.json`: one record of the legacy tree.
    let parent = |p: &Path, n: usize| p.ancestors().nth(n).map(Path::to_path_buf);
    let kind = parent(path, 2).and_then(|k| k.file_name().map(|n| n.to_string_lossy().into_owned()));
    let root = parent(path, 3).filter(|r| storage_root(r).is_some());
    if let (Some(kind), Some(root), true) = (kind, root, path.extension().is_some_and(|e| e == "json")) {
        match kind.as_str() {
            // A session's own record names the session to read from its tree.
            "session" => {
                let id = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                return storage(&root, opts.session.as_deref().or(id.as_deref())).map(Some);
            }
            "message" | "part" => bail!(
                "{} is one {kind} record of opencode's storage, not a session; point at the folder instead: session-doctor scan {} --session {}",
                path.display(),
                root.display(),
                session_of_record(path, &kind).unwrap_or_else(|| "ses_…".into())
            ),
            _ => {}
        }
    }
    Ok(None)
}

/// The session a message or part record belongs to, from its own `sessionID`.
fn session_of_record(path: &Path, kind: &str) -> Option<String> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let id = v.get("sessionID").and_then(Value::as_str).map(str::to_string);
    id.or_else(|| (kind == "message").then(|| path.parent()?.file_name()?.to_str().map(str::to_string)).flatten())
}

/// The `storage/` folder at or under `dir`.
fn storage_root(dir: &Path) -> Option<PathBuf> {
    [dir.to_path_buf(), dir.join("storage")].into_iter().find(|d| d.join("message").is_dir() && d.join("part").is_dir())
}

/// One `{info, parts}` line; ids go back into the objects, as opencode's API has them.
fn line(out: &mut Vec<u8>, session: &str, id: &str, mut info: Map<String, Value>, parts: Vec<Row>) {
    info.insert("id".into(), Value::String(id.into()));
    info.insert("sessionID".into(), Value::String(session.into()));
    let mut m = Map::new();
    m.insert("info".into(), Value::Object(info));
    let mut verbatim = Vec::new();
    let mark = |k: usize| Value::String(format!("{VERBATIM}{k}"));
    let parts = parts.into_iter().map(|p| match p {
        Row::Parsed(v) => v,
        Row::Verbatim(text) => {
            verbatim.push(text);
            mark(verbatim.len() - 1)
        }
    });
    m.insert("parts".into(), Value::Array(parts.collect()));
    // Serializing a serde_json value cannot fail.
    let mut text = Value::Object(m).to_string();
    for (k, raw) in verbatim.iter().enumerate() {
        text = text.replacen(&mark(k).to_string(), raw, 1);
    }
    out.extend_from_slice(text.as_bytes());
    out.push(b'\n');
}

/// A column as text, whatever a damaged row holds there: bytes that are not
/// UTF-8 (or a BLOB) with U+FFFD in their place, a number as written, NULL as
/// nothing. One bad row then reads as a damaged record, not a refusal of the
/// whole session.
fn text(r: &rusqlite::Row<'_>, i: usize) -> String {
    use rusqlite::types::ValueRef;
    match r.get_ref(i) {
        Ok(ValueRef::Text(b) | ValueRef::Blob(b)) => String::from_utf8_lossy(b).into_owned(),
        Ok(ValueRef::Integer(n)) => n.to_string(),
        Ok(ValueRef::Real(x)) => x.to_string(),
        Ok(ValueRef::Null) | Err(_) => String::new(),
    }
}

/// A part row: parsed, or its own text ([`verbatim`]).
enum Row {
    Parsed(Value),
    Verbatim(String),
}

/// Marks a part whose row text is written as it is ([`verbatim`]).
const VERBATIM: &str = "\u{0}session-doctor verbatim part\u{0}";

/// A part row that is a JSON object `serde_json` cannot build (nested past its
/// depth: opencode's `JSON.parse` reads it), as its own text on one line with
/// the part's ids first, for the reader to read and tell; `None` for any other row.
fn verbatim(data: &str, id: &str, msg: &str, session: &str) -> Option<String> {
    let crate::json::Value::Object(_) = crate::json::Value::parse_tolerant(data.as_bytes(), &mut None).ok()?.0 else {
        return None;
    };
    let body = data.trim().strip_prefix('{')?.trim_start();
    let ids = serde_json::json!({"id": id, "messageID": msg, "sessionID": session}).to_string();
    let sep = if body.starts_with('}') { "" } else { "," };
    Some(one_line(&format!("{}{sep}{body}", &ids[..ids.len() - 1])))
}

fn object(text: &str) -> Map<String, Value> {
    parsed(text).unwrap_or_default()
}

/// A row's JSON object; `None` when the text is not one (cut short, not JSON,
/// nested past the parser's depth).
fn parsed(text: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// A row that is no JSON object, as a line of its own, just as the row holds
/// it (on one line): the reader tells it as a damaged line, with its number,
/// and reads on, instead of the row passing unseen.
fn raw_line(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(one_line(text).as_bytes());
    out.push(b'\n');
}

/// JSON text on one line: its line breaks (whitespace outside its strings,
/// which cannot hold one unescaped) become spaces.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// opencode's sessions in `db`, the most recently updated first: (id, title, updated).
fn sessions(db: &rusqlite::Connection) -> rusqlite::Result<Vec<(String, String, i64)>> {
    db.prepare("SELECT id, COALESCE(title, ''), time_updated FROM session ORDER BY time_updated DESC, id DESC")
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, text(r, 1), r.get_ref(2)?.as_i64().unwrap_or(0))))?
                .collect::<Result<Vec<_>, _>>()
        })
}

/// Every session of the SQLite store at `path` (opencode's database, pi's
/// store), the most recently updated first: what a walk checks one by one.
/// `None` for a file that is no such store.
pub fn session_ids(path: &Path) -> Option<Vec<String>> {
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).ok()?;
    if head[..n] != *SQLITE_MAGIC {
        return None;
    }
    super::sqlite::read(path, |db| {
        Ok(match super::pi_store::session_ids(db)? {
            Some(ids) => ids,
            None => sessions(db)?.into_iter().map(|s| s.0).collect(),
        })
    })
    .ok()
}

/// Whose database errors name: Kilo Code CLI's in Kilo's folder, else opencode's.
fn whose(path: &Path) -> &'static str {
    crate::model::Format::Opencode.agent(crate::formats::opencode::fork_of_store(path))
}

fn database(path: &Path, asked: Option<&str>) -> anyhow::Result<Store> {
    let what = || format!("reading {}'s database {}", whose(path), path.display());
    super::sqlite::read(path, |db| database_in(db, path, asked)).with_context(what)
}

fn database_in(db: &rusqlite::Connection, path: &Path, asked: Option<&str>) -> anyhow::Result<Store> {
    let what = || format!("reading {}'s database {}", whose(path), path.display());
    let sessions = sessions(db).with_context(|| {
        format!("{} is SQLite but not {}'s database (no session table)", path.display(), whose(path))
    })?;
    let (session, note) = choose(path, asked, sessions)?;
    let pending = pending_revert(db, &session);
    let revert = pending.as_ref().and_then(|(m, p)| crate::formats::opencode::Revert::of(Some(m), p.as_deref()));
    let kept_message = |id: &str| revert.is_none_or(|r| r.keeps_message(id));
    let kept_part = |msg: &str, id: &str| revert.is_none_or(|r| r.keeps_part(msg, id));
    let mut parts: std::collections::HashMap<String, Vec<Row>> = std::collections::HashMap::new();
    let mut unreadable: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    let mut stmt = db
        .prepare(
            "SELECT p.message_id, p.id, p.data FROM part p JOIN message m ON m.id = p.message_id \
             WHERE m.session_id = ?1 ORDER BY p.message_id, p.id",
        )
        .with_context(what)?;
    let rows = stmt.query_map([&session], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, text(r, 2))));
    for row in rows.with_context(what)? {
        let (msg, id, data) = row.with_context(what)?;
        if !kept_part(&msg, &id) {
            continue;
        }
        let Some(mut p) = parsed(&data) else {
            match verbatim(&data, &id, &msg, &session) {
                // Valid JSON serde_json refuses (nested too deep): its own text
                // joins the message, for the reader to read and tell.
                Some(text) => parts.entry(msg).or_default().push(Row::Verbatim(text)),
                None => unreadable.entry(msg).or_default().push(data),
            }
            continue;
        };
        p.insert("id".into(), Value::String(id));
        p.insert("messageID".into(), Value::String(msg.clone()));
        p.insert("sessionID".into(), Value::String(session.clone()));
        parts.entry(msg).or_default().push(Row::Parsed(Value::Object(p)));
    }
    let mut out = Vec::new();
    let mut stmt = db
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
        .with_context(what)?;
    let rows = stmt.query_map([&session], |r| Ok((r.get::<_, String>(0)?, text(r, 1))));
    let mut messages = Vec::new();
    for row in rows.with_context(what)? {
        let (id, data) = row.with_context(what)?;
        if kept_message(&id) {
            messages.push((id, data));
        }
    }
    // From the latest completed compaction on, as opencode sends it.
    let infos: Vec<(&str, Option<Map<String, Value>>)> =
        messages.iter().map(|(id, data)| (id.as_str(), parsed(data))).collect();
    let from = crate::formats::opencode::compacted_from(&infos, |(id, info)| {
        let compacts = parts.get(*id).is_some_and(|ps| {
            ps.iter()
                .any(|p| matches!(p, Row::Parsed(v) if v.get("type").and_then(Value::as_str) == Some("compaction")))
        });
        Some(crate::formats::opencode::Compaction::of_info(id, info.as_ref()?, compacts))
    });
    let infos: Vec<Option<Map<String, Value>>> = infos.into_iter().map(|(_, i)| i).collect();
    for ((id, data), info) in messages.iter().zip(infos).skip(from) {
        for raw in unreadable.remove(id).unwrap_or_default() {
            raw_line(&mut out, &raw);
        }
        let p = parts.remove(id).unwrap_or_default();
        match info {
            Some(info) => line(&mut out, &session, id, info, p),
            None => raw_line(&mut out, data),
        }
    }
    if out.is_empty() {
        for (id, ty, data) in v2_rows(db, &session).with_context(what)? {
            if !kept_message(&id) {
                continue;
            }
            if let Some((info, parts)) = v2::message(&ty, object(&data)) {
                line(&mut out, &session, &id, info, parts.into_iter().map(Row::Parsed).collect());
            }
        }
    }
    let info = session_info(db, &session);
    Ok(Store { format: crate::model::Format::Opencode, lines: Arc::new(out), note, session, info })
}

/// The columns of a `session` row an export's `info` names alike.
const SESSION_FIELDS: &[&str] = &["id", "slug", "directory", "path", "title", "version"];

/// A session's row as an export's `info` holds it ([`SESSION_FIELDS`]): the
/// store's messages name no directory, their session does. A column a build
/// lacks (`path`, added by `20260428004200_add_session_path`) is left out.
fn session_info(db: &rusqlite::Connection, session: &str) -> Option<Value> {
    let mut stmt = db.prepare("SELECT * FROM session WHERE id = ?1").ok()?;
    let names: Vec<String> = stmt.column_names().into_iter().map(str::to_string).collect();
    stmt.query_row([session], |r| {
        let mut info = Map::new();
        for (i, name) in names.iter().enumerate() {
            let held = matches!(r.get_ref(i), Ok(rusqlite::types::ValueRef::Text(_)));
            if held && SESSION_FIELDS.contains(&name.as_str()) {
                info.insert(name.clone(), Value::String(text(r, i)));
            }
        }
        Ok(Value::Object(info))
    })
    .ok()
}

/// The `/undo` a session has pending: its `revert` (`{messageID, partID?}`), or
/// the `revert_messageID`/`revert_partID` columns of builds that split it.
fn pending_revert(db: &rusqlite::Connection, session: &str) -> Option<(String, Option<String>)> {
    let one = |sql: &str| -> Option<(Option<String>, Option<String>)> {
        db.query_row(sql, [session], |r| Ok((r.get(0)?, r.get(1)?))).ok()
    };
    if let Some((Some(json), _)) = one("SELECT revert, NULL FROM session WHERE id = ?1") {
        let v: Value = serde_json::from_str(&json).ok()?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        return Some((text("messageID")?, text("partID")));
    }
    match one("SELECT revert_messageID, revert_partID FROM session WHERE id = ?1")? {
        (Some(m), p) => Some((m, p)),
        _ => None,
    }
}

/// The `session_message` rows of an event-sourced session, in `seq` order
/// (none in a database from before that table).
fn v2_rows(db: &rusqlite::Connection, session: &str) -> rusqlite::Result<Vec<(String, String, String)>> {
    let has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_message'")?.exists([])?;
    if !has {
        return Ok(Vec::new());
    }
    let mut stmt = db.prepare("SELECT id, type, data FROM session_message WHERE session_id = ?1 ORDER BY seq, id")?;
    let rows = stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    rows.collect()
}

/// Whether `session` in the database at `path` is an event-sourced (v2) one: it
/// has `session_message` rows and no `message` rows.
pub fn is_v2_session(path: &Path, session: &str) -> bool {
    let Ok(db) = super::sqlite::open(path) else {
        return false;
    };
    let v1 = db
        .prepare("SELECT 1 FROM message WHERE session_id = ?1 LIMIT 1")
        .and_then(|mut s| s.exists([session]))
        .unwrap_or(false);
    !v1 && v2_rows(&db, session).is_ok_and(|r| !r.is_empty())
}

/// The JSON files of one folder, sorted by name (ids are time-ordered).
fn records(dir: &Path) -> Vec<(String, Map<String, Value>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<(String, Map<String, Value>)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| {
            let id = p.file_stem()?.to_string_lossy().into_owned();
            Some((id, object(&std::fs::read_to_string(&p).ok()?)))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn storage(root: &Path, asked: Option<&str>) -> anyhow::Result<Store> {
    // Sessions: `session/<project>/<ses>.json`, newest update first; else the message folders.
    let mut sessions: Vec<(String, String, i64)> = Vec::new();
    // Each session's own record: an export's `info`, as it is.
    let mut infos = std::collections::HashMap::new();
    for project in std::fs::read_dir(root.join("session")).into_iter().flatten().filter_map(Result::ok) {
        for (id, s) in records(&project.path()) {
            let title = s.get("title").and_then(Value::as_str).unwrap_or("").to_string();
            let updated = s.get("time").and_then(|t| t.get("updated")).and_then(Value::as_i64).unwrap_or(0);
            sessions.push((id.clone(), title, updated));
            infos.insert(id, s);
        }
    }
    if sessions.is_empty() {
        for dir in std::fs::read_dir(root.join("message")).into_iter().flatten().filter_map(Result::ok) {
            let modified = dir.metadata().and_then(|m| m.modified()).ok();
            let at = modified.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_millis());
            sessions.push((
                dir.file_name().to_string_lossy().into_owned(),
                String::new(),
                i64::try_from(at).unwrap_or(i64::MAX),
            ));
        }
    }
    sessions.sort_by(|a, b| b.2.cmp(&a.2).then(b.0.cmp(&a.0)));
    let (session, note) = choose(root, asked, sessions)?;
    let mut messages = records(&root.join("message").join(&session));
    messages.sort_by(|a, b| {
        let t = |m: &Map<String, Value>| m.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64);
        t(&a.1).cmp(&t(&b.1)).then(a.0.cmp(&b.0))
    });
    let mut out = Vec::new();
    for (id, info) in messages {
        let parts =
            records(&root.join("part").join(&id)).into_iter().map(|(_, p)| Row::Parsed(Value::Object(p))).collect();
        line(&mut out, &session, &id, info, parts);
    }
    let info = infos.remove(&session).map(Value::Object);
    Ok(Store { format: crate::model::Format::Opencode, lines: Arc::new(out), note, session, info })
}
