//! pi's SQLite session store (`@earendil-works/pi-storage-sqlite-node`, the
//! agent harness's optional backend; tests/data/agents/pi/harness-store.sqlite,
//! built from its migrations, see the README there): read read-only, both its
//! sessions, the newest by default; never a file beside it, live or closed; the
//! compaction's `retainedTail` is what is sent; nothing claims an export pi
//! does not have.

use crate::common;

use std::path::{Path, PathBuf};

use common::{run, sha256_file};
use serde_json::Value;

const STUCK: &str = "019a3c21-2222-7000-8000-000000000002";
const TEXT_ONLY: &str = "019a3c20-1111-7000-8000-000000000001";

fn store(dir: &tempfile::TempDir) -> PathBuf {
    let db = dir.path().join("sessions.sqlite");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/pi/harness-store.sqlite"), &db)
        .expect("copy the fixture");
    db
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn json(args: &[&str]) -> (Value, i32, String) {
    let out = run(args);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_newest_session_is_read_as_pi_and_its_retained_image_is_the_suspect() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(&dir);
    let (v, code, err) = json(&["diagnose", db.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["format"], "pi");
    assert!(err.contains(STUCK), "the note names the session read: {err}");
    assert_eq!(v["suspects"][0]["name"], "shot.png", "{v:#}");
    // The compaction (line 8 of the session as read) carries the copy that is sent.
    assert_eq!(v["suspects"][0]["ref"], "L8.1", "{v:#}");
    assert!(v.to_string().contains("pi has no command that exports"), "{v:#}");
    let (s, code, _) = json(&["scan", db.to_str().unwrap(), "--session", TEXT_ONLY, "--json"]);
    assert_eq!(code, 0, "{s:#}");
    assert!(s["attachments"].as_array().unwrap().is_empty(), "{s:#}");
}

#[test]
fn no_file_appears_beside_it_closed_or_live() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(&dir);
    assert_eq!(&std::fs::read(&db).unwrap()[18..20], &[2, 2], "WAL mode, as the backend sets it");
    let before = sha256_file(&db);
    let f = db.to_str().unwrap();
    for args in [vec!["scan", f], vec!["diagnose", f, "--session", TEXT_ONLY]] {
        run(&args);
        assert_eq!(names(dir.path()), vec!["sessions.sqlite"], "{args:?} left files beside the store");
    }
    assert_eq!(sha256_file(&db), before);
    let live = rusqlite::Connection::open(&db).unwrap();
    live.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    live.execute("UPDATE sessions SET updated_at = '2027-01-01T00:00:00.000Z' WHERE id = ?1", [TEXT_ONLY]).unwrap();
    assert!(dir.path().join("sessions.sqlite-wal").exists());
    let out = run(&["scan", f]);
    assert!(String::from_utf8_lossy(&out.stderr).contains(TEXT_ONLY), "read through the WAL: the other is newest now");
    drop(live);
}

#[test]
fn exclude_records_beside_it_and_repair_and_preview_say_there_is_no_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(&dir);
    let f = db.to_str().unwrap();
    let out = run(&["exclude", f, "--session", STUCK, "--suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join(format!("{STUCK}.doctor")).exists(), "{:?}", names(dir.path()));
    // The exclusion is read back, and pi still reads the store, not the overlay.
    let (v, code, _) = json(&["diagnose", f, "--session", STUCK, "--json"]);
    assert_eq!((code, v["excluded"].as_array().map(Vec::len)), (1, Some(1)), "{v:#}");
    assert!(v["verdict"].as_str().unwrap().starts_with("stuck for the agent: the overlay leaves"), "{v:#}");
    assert!(v["notes"].to_string().contains("pi has no command that exports"), "{v:#}");
    for sub in ["repair", "preview"] {
        let out = run(&[sub, f, "--session", STUCK]);
        assert_eq!(out.status.code(), Some(2), "{sub}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("pi has no command that exports"), "{sub}: {err}");
        assert!(!err.contains("opencode"), "{sub}: {err}");
    }
}

/// The page's thumbnails are read from the text the store's session was
/// turned into, where the payload spans point, not from the SQLite file at
/// those offsets (which read "byte 0 of 80 is 0x00, not base64").
#[test]
fn the_page_shows_what_the_store_holds() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(&dir);
    let page = dir.path().join("page.html");
    let out = run(&["diagnose", db.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("not base64"), "the bytes were read from the wrong place");
    // The cut PNG is shown as far as it decodes.
    assert!(html.contains("<figure class=\"thumb broken\">"), "{html}");
}
