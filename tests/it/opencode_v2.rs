//! opencode's event-sourced (v2) sessions beside its v1 ones in one database
//! (tests/data/agents/opencode/v1-and-v2.db, written by opencode 1.18.33: see its
//! README). A v2 session's messages are `session_message` rows, not `message`
//! and `part` rows: its attachments must be counted and judged, the v1 session
//! in the same database still read, and the live database never written.

use crate::common;

use std::path::{Path, PathBuf};

use common::{json_of, run, sha256_file};

/// Sent as `opencode serve`'s `POST /api/session/:id/prompt` with a cut PNG.
const V2: &str = "ses_dced059e6ffeCrRUbVHgxPpitm";

fn database(dir: &tempfile::TempDir) -> PathBuf {
    let db = dir.path().join("opencode.db");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/opencode/v1-and-v2.db"), &db)
        .expect("copy the fixture");
    db
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// The v1 session of the same database: the other one.
fn v1_session(db: &Path) -> String {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    c.query_row("SELECT session_id FROM message LIMIT 1", [], |r| r.get(0)).unwrap()
}

#[test]
fn the_image_of_a_v2_session_is_counted_and_judged() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir);
    let f = db.to_str().unwrap();
    let (v, code) = json_of(&["diagnose", f, "--session", V2, "--json"]);
    assert_eq!(code, 1, "a cut PNG the user attached: stuck: {v:#}");
    let text = v.to_string();
    assert_eq!(v["suspects"][0]["name"], "shot.png", "{v:#}");
    assert_eq!(v["suspects"][0]["verdict"], "invalid", "{v:#}");
    // Its database is never written, and `opencode export` carries no v2 message.
    assert!(text.contains("event-sourced (v2)") && text.contains("writes none of its messages"), "{v:#}");
}

#[test]
fn both_kinds_are_read_from_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir);
    let f = db.to_str().unwrap();
    let v1 = v1_session(&db);
    let (s, code) = json_of(&["scan", f, "--session", &v1, "--json"]);
    assert_eq!(code, 0, "{s:#}");
    assert_eq!(s["attachments"].as_array().unwrap().len(), 0, "the v1 session holds text only: {s:#}");
    assert_eq!(s["entries"], 2, "its prompt and reply: {s:#}");
    let (s, _) = json_of(&["scan", f, "--session", V2, "--json"]);
    assert_eq!(s["attachments"].as_array().unwrap().len(), 1, "{s:#}");
    // Without --session the newest of the two is read: the v2 one.
    let out = run(&["scan", f]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(V2), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn repair_of_a_v2_session_says_there_is_nothing_to_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir);
    let out = run(&["repair", db.to_str().unwrap(), "--session", V2]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`opencode export` writes none of its messages"), "{err}");
    assert!(!err.contains("export it first"), "an export would be empty: {err}");
}

#[test]
fn reading_v2_rows_leaves_no_file_beside_the_database_live_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir);
    assert_eq!(&std::fs::read(&db).unwrap()[18..20], &[2, 2], "WAL mode, as opencode leaves it");
    let before = sha256_file(&db);
    let f = db.to_str().unwrap();
    for args in [vec!["scan", f, "--session", V2], vec!["diagnose", f, "--session", V2]] {
        run(&args);
        assert_eq!(names(dir.path()), vec!["opencode.db"], "{args:?} left files beside the database");
    }
    assert_eq!(sha256_file(&db), before);
    // opencode running: a new v2 row sits in its -wal; it is read through it.
    let live = rusqlite::Connection::open(&db).unwrap();
    live.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    live.execute(
        "UPDATE session_message SET data = json_set(data, '$.files[0].name', 'renamed.png') WHERE session_id = ?1 AND type = 'user'",
        [V2],
    )
    .unwrap();
    assert!(dir.path().join("opencode.db-wal").exists());
    let (s, _) = json_of(&["scan", f, "--session", V2, "--json"]);
    assert!(s.to_string().contains("renamed.png"), "{s:#}");
    drop(live);
}

/// `preview` and `repair` refuse a store (they read and copy files): the next
/// commands of a stuck stored session never name them, and `exclude` sends the
/// user back to `diagnose`, which reads the store with the overlay.
#[test]
fn next_commands_of_a_stored_session_are_ones_that_run_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(&dir);
    let f = db.to_str().unwrap();
    let (v, _) = json_of(&["diagnose", f, "--session", V2, "--json"]);
    let next: Vec<&str> = v["next"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(next.iter().any(|c| c.contains(" exclude ")), "{next:?}");
    assert!(!next.iter().any(|c| c.contains(" preview ") || c.contains(" repair ")), "{next:?}");
    let (v, code) = json_of(&["exclude", f, "--session", V2, "--suspects", "--json"]);
    assert_eq!(code, 0, "{v:#}");
    let next: Vec<&str> = v["next"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(next.len(), 1, "{next:?}");
    assert!(next[0].starts_with("session-doctor diagnose ") && next[0].contains(V2), "{next:?}");
    // And what they say holds: the commands run on the store.
    for cmd in next {
        let args: Vec<&str> = cmd.split(' ').skip(1).collect();
        assert!(run(&args).status.code().unwrap() < 2, "{cmd}");
    }
}
