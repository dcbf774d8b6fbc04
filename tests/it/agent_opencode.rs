//! opencode 1.18.33 as the real agent wrote it (tests/data/agents/opencode, see its
//! README): it left an undecodable image out of a tool result itself, so the
//! session is healthy; session-doctor must agree, keep the omission, and read its
//! database without leaving a file beside it.

use crate::common;

use std::path::{Path, PathBuf};

use common::{json_of, run, sha256_file};
use serde_json::{Value, json};

const SESSION: &str = "ses_dcf4acb6effeFDuECCUCfTrlJb";
const OMITTED: &str = "[1 image omitted: could not be resized below the image size limit.]";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/opencode").join(name)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn scan_and_diagnose_leave_no_wal_or_shm_beside_a_wal_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(fixture("opencode.db"), &db).unwrap();
    // WAL mode, as opencode leaves its database.
    assert_eq!(&std::fs::read(&db).unwrap()[18..20], &[2, 2]);
    let before = sha256_file(&db);
    let f = db.to_str().unwrap();
    for args in [vec!["scan", f], vec!["diagnose", f, "--session", SESSION], vec!["diagnose", f, "--json"]] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(names(dir.path()), vec!["opencode.db"], "{args:?} left files beside the database");
    }
    assert_eq!(sha256_file(&db), before);
}

#[test]
fn a_live_database_is_read_through_its_wal() {
    // opencode running: its connection holds the -wal and -shm, and new pages sit in the -wal.
    let dir = tempfile::tempdir().unwrap();
    let (db, live) = live_database(dir.path(), "renamed while open");
    assert!(dir.path().join("opencode.db-wal").exists());
    diagnose_reads_title(&db, "renamed while open");
    drop(live);
}

/// The fixture database in `dir`, opened as opencode holds it while it runs
/// (no checkpoint: new pages stay in the -wal), a session renamed `title`.
fn live_database(dir: &Path, title: &str) -> (PathBuf, rusqlite::Connection) {
    let db = dir.join("opencode.db");
    std::fs::copy(fixture("opencode.db"), &db).unwrap();
    let live = rusqlite::Connection::open(&db).unwrap();
    live.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    live.execute("UPDATE session SET title = ?1", [title]).unwrap();
    (db, live)
}

/// diagnose reads `db` as it is now: the session it picks is named `title`.
fn diagnose_reads_title(db: &Path, title: &str) {
    let out = run(&["diagnose", db.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains(title), "{said}");
}

#[test]
fn a_database_copied_with_its_wal_but_no_shm_is_read_without_a_file_beside_it() {
    // A database copied while opencode ran: pages in its -wal, no -shm. A
    // read-only connection would create the -shm beside it.
    let live_dir = tempfile::tempdir().unwrap();
    let (live_db, live) = live_database(live_dir.path(), "renamed before the copy");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(&live_db, &db).unwrap();
    std::fs::copy(live_dir.path().join("opencode.db-wal"), dir.path().join("opencode.db-wal")).unwrap();
    drop(live);
    let before = (sha256_file(&db), sha256_file(&dir.path().join("opencode.db-wal")));
    diagnose_reads_title(&db, "renamed before the copy");
    assert_eq!(names(dir.path()), vec!["opencode.db", "opencode.db-wal"], "a file was left beside the database");
    assert_eq!((sha256_file(&db), sha256_file(&dir.path().join("opencode.db-wal"))), before);
}

/// A repaired export is one document whose ids are all the copy's own (so
/// `opencode import` adds a session rather than replacing the original): the
/// summary said every other line was copied byte for byte.
#[test]
fn a_repaired_exports_summary_says_its_ids_are_new() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    std::fs::copy(fixture(&format!("{SESSION}.json")), &export).unwrap();
    let e = export.to_str().unwrap();
    let out = run(&["repair", e, "--force"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("but for its ids, made the copy's own") && !said.contains("byte for byte"), "{said}");
}

/// In an export (one document) a failure is on the line its message starts
/// on, as an attachment is on its payload's: it was reported at line 1, and a
/// GitHub annotation pointed there.
#[test]
fn an_exports_failure_is_on_the_line_of_its_message() {
    let text = std::fs::read_to_string(fixture(&format!("{STUCK}.json"))).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let said = lines.iter().rposition(|l| l.contains("The PDF specified was not valid")).unwrap();
    let want = 1 + lines[..said].iter().rposition(|l| l.trim_start().starts_with("\"info\"")).unwrap();
    let out = run(&["diagnose", fixture(&format!("{STUCK}.json")).to_str().unwrap(), "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["failure"]["line"], json!(want), "{d:#}");
}

#[test]
fn the_image_opencode_left_out_is_healthy_and_stays_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(fixture("opencode.db"), &db).unwrap();
    let out = run(&["diagnose", db.to_str().unwrap(), "--session", SESSION, "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((out.status.code(), &d["stuck"]), (Some(0), &json!(false)), "{d:#}");

    // The export (what preview and repair read) says the same, and keeps the omission.
    let export = dir.path().join("export.json");
    std::fs::copy(fixture(&format!("{SESSION}.json")), &export).unwrap();
    let e = export.to_str().unwrap();
    let out = run(&["diagnose", e, "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((out.status.code(), &d["stuck"]), (Some(0), &json!(false)), "{d:#}");
    // opencode sent Anthropic Messages (its custom provider is `@ai-sdk/anthropic`, the model a Claude).
    let out = run(&["preview", e, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    // What opencode sends beside the history is named, not silently missing.
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(summary.contains("system prompt") && summary.contains("tool definitions"), "{summary}");
    assert!(summary.contains("\"target\":\"anthropic\""), "{summary}");
    let result = &p["messages"][2]["content"][0];
    assert_eq!(result["type"], json!("tool_result"), "{p:#}");
    assert!(result.to_string().contains(&OMITTED.replace('"', "\\\"")), "{p:#}");
    let copy = dir.path().join("out");
    std::fs::create_dir(&copy).unwrap();
    // Nothing to repair (--force writes the copy anyway): it must keep opencode's omission.
    let out = run(&["repair", e, "--out", copy.to_str().unwrap(), "--json", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let written = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    assert!(written.contains(OMITTED));
    // The export as it was, but for the ids of a session of its own.
    let original = std::fs::read_to_string(fixture(&format!("{SESSION}.json"))).unwrap();
    assert_eq!(masked(&written), masked(&original));
    assert!(ids(&written).is_disjoint(&ids(&original)));
}

/// A stored session previews as its export does: the database holds the same
/// history `opencode export` writes, and preview reads it without writing a
/// `-wal`/`-shm` beside it or letting `--out` name it.
#[test]
fn the_database_previews_as_its_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(fixture("opencode.db"), &db).unwrap();
    let before = sha256_file(&db);
    let f = db.to_str().unwrap();
    let stored = run(&["preview", f, "--session", SESSION]);
    assert_eq!(stored.status.code(), Some(0), "{}", String::from_utf8_lossy(&stored.stderr));
    let export = run(&["preview", fixture(&format!("{SESSION}.json")).to_str().unwrap()]);
    assert_eq!(export.status.code(), Some(0));
    assert!(!stored.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&stored.stdout), String::from_utf8_lossy(&export.stdout));
    assert_eq!(names(dir.path()), vec!["opencode.db"], "preview left files beside the database");
    let out = run(&["preview", f, "--session", SESSION, "--out", f]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("never writes over what it reads"));
    assert_eq!(sha256_file(&db), before);
}

const STUCK: &str = "ses_dcf272eddffe2NXrNcmKeu4HO4";

/// The text with every opencode id replaced by its first 16 characters (prefix and time).
fn masked(text: &str) -> String {
    ids(text).iter().fold(text.to_string(), |t, id| t.replace(id.as_str(), &id[..16]))
}

/// Every opencode id in a text.
fn ids(text: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for prefix in ["ses_", "msg_", "prt_"] {
        for (at, _) in text.match_indices(prefix) {
            let id: String = text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if id.len() > 20 {
                out.insert(id);
            }
        }
    }
    out
}

#[test]
fn a_repaired_export_is_a_session_of_its_own_that_opencode_imports_beside_the_original() {
    // `opencode import` keeps an export's ids: a copy under the original's ids would
    // replace the original session and its messages in opencode.db.
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    std::fs::copy(fixture(&format!("{STUCK}.json")), &export).unwrap();
    let e = export.to_str().unwrap();
    assert_eq!(run(&["exclude", e, "--suspects"]).status.code(), Some(0));
    let out = run(&["repair", e, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let new = r["id"].as_str().expect("the copy has an id");
    assert!(new.starts_with("ses_") && new != STUCK, "{r:#}");
    let path = PathBuf::from(r["out"].as_str().unwrap());
    assert_eq!(path, dir.path().join(format!("{new}.json")));
    assert!(r["resume"].as_str().unwrap().starts_with("opencode import "), "{r:#}");
    assert!(r["resume"].as_str().unwrap().ends_with(&format!(" && opencode --session {new}")), "{r:#}");

    let original = std::fs::read_to_string(fixture(&format!("{STUCK}.json"))).unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(ids(&written).is_disjoint(&ids(&original)), "the copy shares ids with the original");
    // Each id is replaced the same way everywhere: the copy links up as the original does.
    let v: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(v["info"]["id"], json!(new));
    let mut messages = std::collections::HashSet::new();
    let mut previous = String::new();
    for m in v["messages"].as_array().unwrap() {
        let id = m["info"]["id"].as_str().unwrap().to_string();
        assert_eq!(m["info"]["sessionID"], json!(new));
        assert!(id > previous, "messages keep their order");
        for p in m["parts"].as_array().unwrap() {
            assert_eq!((&p["sessionID"], p["messageID"].as_str()), (&json!(new), Some(id.as_str())));
        }
        if let Some(parent) = m["info"]["parentID"].as_str() {
            assert!(messages.contains(parent), "{parent} is an earlier message of the copy");
        }
        messages.insert(id.clone());
        previous = id;
    }
    assert!(written.contains("[Attachment omitted: "));
}

/// Sets a pending `/undo` on the export `name` (its `info.revert`), written to `dir`.
fn reverted_export(dir: &Path, name: &str, revert: serde_json::Value) -> PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(&format!("{name}.json"))).unwrap()).unwrap();
    doc["info"]["revert"] = revert;
    let to = dir.join(format!("{name}.json"));
    std::fs::write(&to, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    to
}

#[test]
fn a_pending_undo_leaves_out_what_opencode_removes_before_its_next_request() {
    // `/undo` to the first prompt of the session stuck on a cut PDF: opencode's
    // next prompt first removes that message and all after it
    // (`SessionRevert.cleanup`), so nothing of the PDF is sent again.
    let dir = tempfile::tempdir().unwrap();
    let revert = json!({"messageID": "msg_230d8d2e4001fZ5VA8Lf94xR8r", "snapshot": "4b825dc6"});
    let f = reverted_export(dir.path(), STUCK, revert);
    let (d, code) = json_of(&["diagnose", f.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"], &d["suspects"]), (0, &json!(false), &json!([])), "{d:#}");
    let out = run(&["preview", f.to_str().unwrap()]);
    let sent: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sent["messages"], json!([]), "{sent:#}");

    // Undone to the second prompt, with a part named: the first turn stays,
    // the second prompt keeps its parts before that part (here: none).
    let second = "msg_230b5897b001MXWLiIjMPV8IV9";
    let revert = json!({"messageID": second, "partID": "prt_230b5897f001Dn1QkzsMgmUDi7"});
    let f = reverted_export(dir.path(), SESSION, revert.clone());
    let out = run(&["preview", f.to_str().unwrap()]);
    let export = String::from_utf8_lossy(&out.stdout).to_string();
    let full =
        String::from_utf8_lossy(&run(&["preview", fixture(&format!("{SESSION}.json")).to_str().unwrap()]).stdout)
            .to_string();
    assert!(full.contains(r#""text":"continue""#) && export.contains("READ-THE-FILE shot.png"), "{full}");
    assert!(!export.contains(r#""text":"continue""#), "{export}");
    // The database keeps the same `revert` on its session row: the same request.
    let db = dir.path().join("opencode.db");
    std::fs::copy(fixture("opencode.db"), &db).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE session SET revert = ?1 WHERE id = ?2", [revert.to_string(), SESSION.to_string()]).unwrap();
    drop(conn);
    let stored = run(&["preview", db.to_str().unwrap(), "--session", SESSION]);
    assert_eq!(String::from_utf8_lossy(&stored.stdout), export);
}

/// The PDF-stuck export the real opencode wrote (a `read` of a cut PDF, then
/// Anthropic's 400 twice), edited by `edit` into another state opencode
/// writes, in a folder of its own.
fn pdf_export(dir: &tempfile::TempDir, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let name = "ses_dcf272eddffe2NXrNcmKeu4HO4.json";
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
    edit(&mut doc);
    let file = dir.path().join(name);
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    file
}

/// The `read` tool part holding the PDF.
fn read_part(doc: &mut Value) -> &mut Value {
    let part = &mut doc["messages"][1]["parts"][1];
    assert_eq!(part["tool"], "read", "{part:#}");
    part
}

/// `@notes.txt` and `@src` mentions: opencode stores each as a `file` part
/// (`text/plain`, `application/x-directory`) beside the text it read, and
/// sends only that text (`toModelMessages`). They are no attachments, and
/// the PDF is the one suspect. Before, both were INVALID and prime suspects.
#[test]
fn mentioned_files_and_folders_are_not_attachments() {
    let dir = tempfile::tempdir().unwrap();
    let file = pdf_export(&dir, |doc| {
        let parts = doc["messages"][3]["parts"].as_array_mut().unwrap();
        let base = parts[0].clone();
        for (i, (mime, name)) in
            [("text/plain", "notes.txt"), ("application/x-directory", "src")].into_iter().enumerate()
        {
            let mut p = base.clone();
            p["id"] = format!("prt_mention{i}").into();
            p["type"] = "file".into();
            p["mime"] = mime.into();
            p["filename"] = name.into();
            p["url"] = format!("file:///tmp/work/{name}").into();
            p.as_object_mut().unwrap().remove("text");
            parts.push(p);
        }
    });
    let (scan, _) = json_of(&["scan", file.to_str().unwrap(), "--json"]);
    let names: Vec<&str> = scan["attachments"].as_array().unwrap().iter().filter_map(|a| a["name"].as_str()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let (d, code) = json_of(&["diagnose", file.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{d:#}");
    let primes = common::primes(&d);
    assert_eq!(primes.len(), 1, "{d:#}");
    assert_eq!(primes[0]["mime_declared"], "application/pdf", "{d:#}");
    let out = run(&["preview", file.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("notes.txt"), "the mention is not sent");
}

/// A tool result opencode pruned (`state.time.compacted`) is sent as "[Old
/// tool result content cleared]" without its attachments: nothing is left
/// to blame. Before: stuck on the PDF, and the preview carried it.
#[test]
fn a_pruned_tool_result_sends_no_attachment() {
    let dir = tempfile::tempdir().unwrap();
    let file = pdf_export(&dir, |doc| read_part(doc)["state"]["time"]["compacted"] = json!(1_796_112_999_000u64));
    let (d, code) = json_of(&["diagnose", file.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    let out = run(&["preview", file.to_str().unwrap()]);
    let request: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = request.to_string();
    assert!(text.contains("[Old tool result content cleared]") && !text.contains("\"document\""), "{request:#}");
}

/// A reply the user aborted after a tool completed is still sent, with the
/// tool's call and result (opencode skips a failed reply only when it holds
/// no more than a step start or reasoning): the provider's block path names
/// the PDF in it. Before, the preview left the reply out and diagnose said
/// the block held no attachment.
#[test]
fn an_aborted_reply_that_ran_a_tool_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let file = pdf_export(&dir, |doc| {
        doc["messages"][1]["info"]["error"] =
            json!({"name": "MessageAbortedError", "data": {"message": "The operation was aborted."}});
    });
    let out = run(&["preview", file.to_str().unwrap()]);
    let request: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(request.to_string().contains("\"tool_use\""), "{request:#}");
    let (d, code) = json_of(&["diagnose", file.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{d:#}");
    let primes = common::primes(&d);
    assert!(primes.len() == 1 && primes[0]["named"] == true, "{d:#}");
}

/// `/compact` on the PDF-stuck session: opencode writes a user message
/// holding a `compaction` part and a summary reply (`summary: true`,
/// finished); from then on it sends that question and the summary alone
/// (`filterCompacted`), and the PDF is gone. Before, the preview still
/// carried it and scan failed on it.
#[test]
fn a_completed_compaction_starts_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let file = pdf_export(&dir, |doc| {
        let messages = doc["messages"].as_array_mut().unwrap();
        let mut ask = messages[3].clone();
        ask["info"]["id"] = "msg_zz00compact".into();
        let mut part = ask["parts"][0].clone();
        part["type"] = "compaction".into();
        part["auto"] = false.into();
        part.as_object_mut().unwrap().remove("text");
        ask["parts"] = json!([part]);
        let mut summary = messages[1].clone();
        summary["info"]["id"] = "msg_zz01summary".into();
        summary["info"]["parentID"] = "msg_zz00compact".into();
        summary["info"]["summary"] = true.into();
        summary["info"]["finish"] = "stop".into();
        summary["info"]["mode"] = "compaction".into();
        let mut text = ask["parts"][0].clone();
        text["type"] = "text".into();
        text["text"] = "## Goal\nRead doc.pdf; it could not be read.".into();
        text.as_object_mut().unwrap().remove("auto");
        summary["parts"] = json!([text]);
        messages.push(ask);
        messages.push(summary);
    });
    let (scan, code) = json_of(&["scan", file.to_str().unwrap(), "--json"]);
    assert_eq!((code, scan["attachments"].as_array().unwrap().len()), (0, 0), "{scan:#}");
    let out = run(&["preview", file.to_str().unwrap()]);
    let request: Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages = request["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{request:#}");
    assert_eq!(messages[0]["content"][0]["text"], "What did we do so far?", "{request:#}");
}

/// The same read from opencode's database: its rows are cut where the export is.
#[test]
fn a_completed_compaction_starts_the_history_in_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(fixture("opencode.db"), &db).unwrap();
    let entries = |db: &Path| {
        let (v, _) = json_of(&["scan", db.to_str().unwrap(), "--json"]);
        v["entries"].as_u64().unwrap()
    };
    assert_eq!(entries(&db), 5);
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        let insert = |id: &str, time: i64, data: Value| {
            c.execute(
                "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)",
                rusqlite::params![id, SESSION, time, data.to_string()],
            )
            .unwrap();
        };
        insert(
            "msg_zz00compact",
            1_796_113_600_000,
            json!({"role":"user","time":{"created":1_796_113_600_000i64},"agent":"build"}),
        );
        insert(
            "msg_zz01summary",
            1_796_113_601_000,
            json!({"parentID":"msg_zz00compact","role":"assistant","mode":"compaction","summary":true,"finish":"stop",
                "time":{"created":1_796_113_601_000i64},"tokens":{"input":10,"output":10,"reasoning":0,"cache":{"read":0,"write":0}}}),
        );
        for (id, msg, data) in [
            ("prt_zz00", "msg_zz00compact", json!({"type":"compaction","auto":false})),
            ("prt_zz01", "msg_zz01summary", json!({"type":"text","text":"## Goal"})),
        ] {
            c.execute(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, 0, 0, ?4)",
                rusqlite::params![id, msg, SESSION, data.to_string()],
            )
            .unwrap();
        }
    }
    assert_eq!(entries(&db), 2);
}

/// A cut PNG pasted into a user message, excluded, and repaired: the note
/// that takes its place carries the copy's ids (a fresh part id, the copy's
/// session and message), since `opencode import` files a part under the ids
/// it holds and skips one whose id exists. Before, the note kept the
/// original's ids, and importing the copy beside the original dropped it.
#[test]
fn a_repaired_note_part_carries_the_copys_ids() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x02\0\0\0".to_vec();
    png.extend_from_slice(b"\x90\x91h6\0\0\0\x20IDATx\x9c");
    let url = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&png));
    let file = pdf_export(&dir, |doc| {
        let parts = doc["messages"][3]["parts"].as_array_mut().unwrap();
        let mut p = parts[0].clone();
        p["id"] = "prt_230d90d1d002pasted0000000".into();
        p["type"] = "file".into();
        p["mime"] = "image/png".into();
        p["filename"] = "shot.png".into();
        p["url"] = url.into();
        p.as_object_mut().unwrap().remove("text");
        parts.push(p);
    });
    let original: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let (scan, _) = json_of(&["scan", file.to_str().unwrap(), "--json"]);
    let png_ref = scan["attachments"].as_array().unwrap().iter().find(|a| a["name"] == "shot.png").unwrap()["ref"]
        .as_str()
        .unwrap()
        .to_string();
    let out = run(&["exclude", file.to_str().unwrap(), "--ref", &png_ref]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let copies = dir.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    let out = run(&["repair", file.to_str().unwrap(), "--out", copies.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let copy = std::fs::read_dir(&copies).unwrap().next().unwrap().unwrap().path();
    let copy: Value = serde_json::from_str(&std::fs::read_to_string(copy).unwrap()).unwrap();
    let old_ids = original.to_string();
    let message = &copy["messages"][3];
    let note =
        message["parts"].as_array().unwrap().iter().find(|p| p["text"].as_str().is_some_and(|t| t.contains("omitted")));
    let note = note.expect("the exclusion note");
    assert_eq!(note["sessionID"], copy["info"]["id"], "{note:#}");
    assert_eq!(note["messageID"], message["info"]["id"], "{note:#}");
    assert!(!old_ids.contains(note["id"].as_str().unwrap()), "a fresh part id: {note:#}");
}

/// The export written on one line (`jq -c`, a script's `json.dumps`) is the
/// same document: previewed with its messages and repaired to a full copy.
/// Before, it was read as one JSON Lines record: the preview held no message
/// and the repaired copy was empty, with instructions to import it.
#[test]
fn an_export_on_one_line_is_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let file = pdf_export(&dir, |_| {});
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::write(&file, format!("{doc}\n")).unwrap();
    let out = run(&["preview", file.to_str().unwrap()]);
    let request: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(request["messages"].as_array().unwrap().len(), 3, "{request:#}");
    let copies = dir.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    let out = run(&["repair", file.to_str().unwrap(), "--out", copies.to_str().unwrap(), "--force"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let copy = std::fs::read_dir(&copies).unwrap().next().unwrap().unwrap().path();
    let copy: Value = serde_json::from_str(&std::fs::read_to_string(copy).unwrap()).unwrap();
    assert_eq!(copy["messages"].as_array().unwrap().len(), doc["messages"].as_array().unwrap().len());
}

/// Damaged rows in opencode's database: a part stored as a BLOB of bytes that
/// are not UTF-8, a session whose `time_updated` is text, and a message whose
/// data is JSON but no object. Each is read as a damaged record, and the rest
/// of the session still is. Before, the first two refused the whole database
/// (exit 2, the second as "not opencode's database") and the third vanished
/// without a word.
#[test]
fn damaged_database_rows_are_findings_not_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(fixture("opencode.db"), &db).unwrap();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        let part: String = c.query_row("SELECT id FROM part LIMIT 1", [], |r| r.get(0)).unwrap();
        c.execute(
            "UPDATE part SET data = x'7b2274797065223a2274657874222c2274657874223a22ff227d' WHERE id = ?1",
            [&part],
        )
        .unwrap();
        c.execute("UPDATE session SET time_updated = 'yesterday'", []).unwrap();
        let last: String =
            c.query_row("SELECT id FROM message ORDER BY time_created DESC LIMIT 1", [], |r| r.get(0)).unwrap();
        c.execute("UPDATE message SET data = '42' WHERE id = ?1", [&last]).unwrap();
    }
    let (v, code) = json_of(&["scan", db.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["entries"], 4, "{v:#}");
    assert!(v["findings"].to_string().contains("line.not_a_record"), "{v:#}");
}

/// Seed 004 in opencode: a reasoning part keeps `metadata.openai.{itemId,
/// reasoningEncryptedContent}`. `--drop-reasoning-ids` removed the part's own
/// `id` (opencode's `prt_…`) and left the `rs_` id the AI SDK sends as an
/// `item_reference`.
#[test]
fn drop_reasoning_ids_takes_the_item_id_out_of_a_reasoning_parts_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let file = pdf_export(&dir, |doc| {
        let parts = doc["messages"][1]["parts"].as_array_mut().unwrap();
        let mut p = parts[0].clone();
        p["id"] = "prt_reasoning01".into();
        p["type"] = "reasoning".into();
        p["text"] = "weighing the pages".into();
        p["metadata"] = serde_json::json!({"openai":{"itemId":"rs_stale02","reasoningEncryptedContent":"gAAAAABopen"}});
        parts.insert(0, p);
    });
    let (r, _) = json_of(&["repair", "--json", "--force", "--drop-reasoning-ids", file.to_str().unwrap()]);
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    assert!(!copy.contains("rs_stale02"), "an rs_ id is left: {copy}");
    let doc: Value = serde_json::from_str(&copy).unwrap();
    let part = doc["messages"][1]["parts"].as_array().unwrap().iter().find(|p| p["type"] == "reasoning").unwrap();
    assert_eq!(part["metadata"]["openai"], serde_json::json!({"reasoningEncryptedContent":"gAAAAABopen"}), "{part:#}");
    assert!(part["id"].as_str().is_some_and(|id| id.starts_with("prt_")), "the part keeps an id of its own: {part:#}");
}

/// A stuck session in opencode's database (`stuck-pdf.db`: opencode 1.18.33
/// imported the PDF-stuck export into a fresh store): diagnose prints the
/// whole way out in one go — export, exclude and repair on the export — since
/// an exclusion made on the database lands beside the database, where the
/// export's repair never reads it (issue 39).
#[test]
fn a_stuck_stored_session_is_sent_through_its_export_in_one_go() {
    const STUCK: &str = "ses_dcf272eddffe2NXrNcmKeu4HO4";
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("stuck-pdf.db"), dir.path().join("opencode.db")).unwrap();
    let out = common::bin().current_dir(dir.path()).args(["diagnose", "opencode.db"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let from = text.find("note      this session lives").expect(&text);
    assert_eq!(
        &text[from..],
        format!(
            "note      this session lives in opencode's database, which `repair` does not write: the next commands export it to {STUCK}.json and exclude and repair there (an exclusion made on the database stays beside the database, where the export's repair never reads it); `repair` prints the `opencode import` that brings the copy back as a session of its own

next:
  opencode export {STUCK} > {STUCK}.json
  session-doctor exclude {STUCK}.json --suspects
  session-doctor repair {STUCK}.json
"
        )
    );
    // Excluded on the database first (the exclusion the old advice made):
    // the agent still sends the PDF, and the way out is the same.
    let x = common::bin().current_dir(dir.path()).args(["exclude", "opencode.db", "--suspects"]).output().unwrap();
    assert_eq!(x.status.code(), Some(0), "{}", String::from_utf8_lossy(&x.stderr));
    let again = common::bin().current_dir(dir.path()).args(["diagnose", "opencode.db"]).output().unwrap();
    let again = String::from_utf8(again.stdout).unwrap();
    assert!(again.ends_with(&text[text.find("\nnext:").unwrap()..]), "{again}");
    // (The database's overlay is named after the session, beside it.)
    std::fs::remove_file(dir.path().join(format!("{STUCK}.doctor"))).unwrap();
    // The path works: `opencode export` of this session is the committed export.
    std::fs::copy(fixture(&format!("{STUCK}.json")), dir.path().join(format!("{STUCK}.json"))).unwrap();
    let next: Vec<&str> = text.lines().skip_while(|l| *l != "next:").skip(2).map(str::trim).collect();
    for line in &next {
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        let out = common::bin().current_dir(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{line}: {}", String::from_utf8_lossy(&out.stderr));
        if args[0] == "repair" {
            let printed = String::from_utf8_lossy(&out.stdout);
            assert!(printed.contains("opencode import ses_"), "{printed}");
        }
    }
    // The exclusion landed beside the export, the one overlay there.
    assert_eq!(
        names(dir.path()).iter().filter(|n| n.ends_with(".doctor")).collect::<Vec<_>>(),
        [&format!("{STUCK}.json.doctor")]
    );
}
