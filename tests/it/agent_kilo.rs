//! Kilo Code CLI 7.7.7 (`@kilocode/cli`) as the real agent wrote it
//! (tests/data/agents/kilo, see its README): opencode's format in a store of
//! its own, `$XDG_DATA_HOME/kilo/kilo.db`. `sessions` finds it as Kilo's, and
//! every command printed for one of its sessions is `kilo`'s, not `opencode`'s.

use crate::common;

use std::path::{Path, PathBuf};

use common::run;
use serde_json::{Value, json};

/// The session stuck on a cut PNG attached with `kilo run -f`.
const STUCK: &str = "ses_db264c3abffe7pJEdRdPXcpUBG";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/kilo").join(name)
}

#[test]
fn sessions_finds_kilos_store_as_kilos() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join(".local/share/kilo");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(fixture("kilo.db"), data.join("kilo.db")).unwrap();
    let list = |agent: &str| {
        let mut cmd = common::bin();
        cmd.env("HOME", home.path());
        for var in session_doctor::discover::VARS {
            cmd.env_remove(var);
        }
        let out = cmd.args(["sessions", "--agent", agent, "--json"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let rows = list("kilo");
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!((&rows[0]["agent"], &rows[0]["health"]), (&json!("kilo"), &json!("not_read")), "{rows:#?}");
    assert_eq!(rows[0]["path"], json!(data.join("kilo.db").display().to_string()));
    assert_eq!(list("opencode"), json!([]), "Kilo's store is not opencode's");
}

#[test]
fn diagnose_on_kilos_store_prints_kilos_commands() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("kilo");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(fixture("kilo.db"), data.join("kilo.db")).unwrap();
    let (out, code) = common::run_in(dir.path(), &["diagnose", "kilo/kilo.db", "--json"]);
    assert_eq!(code, Some(1), "stuck: {out}");
    let d: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["failure"]["class"], json!("media_rejected"), "{d:#}");
    let f = format!("{STUCK}.json");
    assert_eq!(
        d["next"],
        json!([
            format!("kilo export {STUCK} > {f}"),
            format!("session-doctor exclude {f} --suspects"),
            format!("session-doctor repair {f}")
        ]),
        "{d:#}"
    );
    let notes = d["notes"].to_string();
    assert!(notes.contains("Kilo Code CLI's database") && notes.contains("`kilo import`"), "{notes}");
    assert!(!notes.contains("opencode"), "{notes}");
    // The same store renamed by its channel (`kilo-<channel>.db`) is Kilo's too.
    std::fs::rename(data.join("kilo.db"), dir.path().join("kilo-beta.db")).unwrap();
    let (out, _) = common::run_in(dir.path(), &["diagnose", "kilo-beta.db", "--json"]);
    let d: Value = serde_json::from_str(&out).unwrap();
    assert!(d["next"][0].as_str().unwrap().starts_with("kilo export "), "{d:#}");

    let refused = run(&["repair", dir.path().join("kilo-beta.db").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && err.contains("(`kilo export <id> > session.json`)"), "{err}");
}

#[test]
fn a_repaired_kilo_export_is_imported_and_resumed_with_kilo() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join(format!("{STUCK}.json"));
    std::fs::copy(fixture(&format!("{STUCK}.json")), &export).unwrap();
    let e = export.to_str().unwrap();
    assert_eq!(run(&["exclude", e, "--suspects"]).status.code(), Some(0));
    let out = run(&["repair", e, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let new = r["id"].as_str().expect("the copy has an id");
    let copy = dir.path().join(format!("{new}.json"));
    assert_eq!(r["resume"], json!(format!("kilo import {} && kilo --session {new}", copy.display())), "{r:#}");
    // Kilo's import gives the session the folder it runs in (the fixture kilo.db, imported
    // in /tmp/kfix, holds that folder, not its export's): the note names the export's.
    assert_eq!(
        r["resume_note"],
        json!(
            "kilo import gives the session the folder it runs in: run it from /tmp/sd-kilo-1__eqdvw/work so the copy sends the directory its preview shows"
        ),
        "{r:#}"
    );
}

/// Whose a session is, as each report names it: Kilo Code CLI for its export
/// (by `info.version`) and its store (by its folder), opencode for the same
/// export stamped with opencode's version. The format is `opencode` in all.
#[test]
fn kilos_sessions_are_named_kilos_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let kilo = dir.path().join(format!("{STUCK}.json"));
    let text = std::fs::read_to_string(fixture(&format!("{STUCK}.json"))).unwrap();
    std::fs::write(&kilo, &text).unwrap();
    let opencode = dir.path().join("opencode.json");
    assert_eq!(text.matches("\"version\": \"7.7.7\"").count(), 1);
    std::fs::write(&opencode, text.replace("\"version\": \"7.7.7\"", "\"version\": \"1.18.33\"")).unwrap();
    std::fs::create_dir_all(dir.path().join("kilo")).unwrap();
    let store = dir.path().join("kilo/kilo.db");
    std::fs::copy(fixture("kilo.db"), &store).unwrap();

    for (file, agent) in [(&kilo, Some("kilo")), (&store, Some("kilo")), (&opencode, None)] {
        let f = file.to_str().unwrap();
        let json = |cmd: &str| -> Value { serde_json::from_slice(&run(&[cmd, f, "--json"]).stdout).unwrap() };
        for (cmd, v) in [("diagnose", json("diagnose")), ("scan", json("scan"))] {
            assert_eq!(v["format"], json!("opencode"), "{cmd} {f}");
            assert_eq!(v.get("written_by").and_then(Value::as_str), agent, "{cmd} {f}: {v:#}");
        }
        let written = ", written by Kilo Code CLI,";
        for cmd in ["diagnose", "scan"] {
            let header = String::from_utf8(run(&[cmd, f]).stdout).unwrap();
            let header = header.lines().next().unwrap().to_string();
            assert_eq!(header.contains(written), agent.is_some(), "{cmd}: {header}");
        }
        let page = dir.path().join("page.html");
        run(&["diagnose", f, "--html", page.to_str().unwrap()]);
        let page = std::fs::read_to_string(&page).unwrap();
        let named = if agent.is_some() { "Kilo Code CLI" } else { "opencode" };
        assert!(page.contains(&format!("<dt>agent</dt><dd>{named}</dd>")), "{f}");
    }
}

/// Kilo Code CLI sends each user message of an export with an
/// `<environment_details>` block built from the session (the message's time,
/// the session's directory and its workspace root): preview writes it, as
/// the round-trip suite saw Kilo send it; opencode adds none.
#[test]
fn preview_of_a_kilo_export_holds_kilos_environment_details() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture(&format!("{STUCK}.json"))).unwrap();
    let kilo = dir.path().join("kilo.json");
    std::fs::write(&kilo, &text).unwrap();
    let opencode = dir.path().join("opencode.json");
    std::fs::write(&opencode, text.replace("\"version\": \"7.7.7\"", "\"version\": \"1.18.33\"")).unwrap();
    let env = |at: &str| {
        format!(
            "\n\n<environment_details>\nMessage time: {at}\nWorking directory: /tmp/sd-kilo-1__eqdvw/work\nWorkspace root folder: /\n</environment_details>"
        )
    };
    let blocks = |file: &Path| -> (Vec<String>, Value) {
        let out = run(&["preview", file.to_str().unwrap(), "--json"]);
        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        let summary: Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
        let texts = body["messages"].as_array().unwrap().iter().flat_map(|m| m["content"].as_array().unwrap().clone());
        let texts = texts.filter_map(|b| b["text"].as_str().map(str::to_string)).collect();
        (texts, summary["not_in_session"].clone())
    };
    let (texts, missing) = blocks(&kilo);
    let at = |t: &str| texts.iter().position(|x| x == t).unwrap_or_else(|| panic!("{t:?} in {texts:#?}"));
    // After each message's own parts: "Look at this." then "continue".
    assert_eq!(at(&env("2026-12-06T23:06:00Z")), at("Look at this.") + 1);
    assert_eq!(at(&env("2026-12-06T23:06:31Z")), at("continue") + 1);
    assert!(missing.to_string().contains("Kilo Code CLI writes it"), "{missing}");
    let (texts, missing) = blocks(&opencode);
    assert!(!texts.iter().any(|t| t.contains("<environment_details>")), "{texts:#?}");
    assert!(missing.to_string().contains("opencode writes it"), "{missing}");
}

/// A database in Kilo's folder that holds no sessions is refused as not
/// Kilo Code CLI's database (it said opencode's).
#[test]
fn a_database_in_kilos_folder_is_refused_as_kilos() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("kilo")).unwrap();
    let db = dir.path().join("kilo/kilo.db");
    rusqlite::Connection::open(&db).unwrap().execute_batch("CREATE TABLE x(a);").unwrap();
    let out = run(&["scan", db.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not Kilo Code CLI's database (no session table)") && !err.contains("opencode"), "{err}");
}

/// The same session read from Kilo's store (kilo.db, the import of the
/// export) is previewed with the same `<environment_details>` blocks as its
/// export: the store's messages carry no directory, its session row does.
/// `kilo import` gave the session the folder it ran in (`/tmp/kfix`, the
/// row's `directory`) in place of the export's: past that, the two requests
/// are the same, block by block.
#[test]
fn preview_of_a_kilo_store_holds_the_environment_details_of_its_export() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("kilo")).unwrap();
    let store = dir.path().join("kilo/kilo.db");
    std::fs::copy(fixture("kilo.db"), &store).unwrap();
    let export = dir.path().join(format!("{STUCK}.json"));
    std::fs::copy(fixture(&format!("{STUCK}.json")), &export).unwrap();
    let preview = |file: &Path| -> (String, Value) {
        let out = run(&["preview", file.to_str().unwrap(), "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stderr = String::from_utf8(out.stderr).unwrap();
        let summary: Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
        (String::from_utf8(out.stdout).unwrap(), summary["not_in_session"].clone())
    };
    let (from_export, missing) = preview(&export);
    let (from_store, missing_too) = preview(&store);
    assert_eq!(missing, missing_too);
    let blocks = |body: &str| -> Vec<String> {
        let v: Value = serde_json::from_str(body).unwrap();
        let texts = v["messages"].as_array().unwrap().iter().flat_map(|m| m["content"].as_array().unwrap().clone());
        texts
            .filter_map(|b| b["text"].as_str().map(str::to_string))
            .filter(|t| t.contains("<environment_details>"))
            .collect()
    };
    let env = |at: &str, directory: &str| {
        format!(
            "\n\n<environment_details>\nMessage time: {at}\nWorking directory: {directory}\nWorkspace root folder: /\n</environment_details>"
        )
    };
    let kfix = ["2026-12-06T23:06:00Z", "2026-12-06T23:06:31Z"].map(|at| env(at, "/tmp/kfix"));
    assert_eq!(blocks(&from_store), kfix);
    let moved = from_store.replace("Working directory: /tmp/kfix", "Working directory: /tmp/sd-kilo-1__eqdvw/work");
    let (a, b): (Value, Value) = (serde_json::from_str(&moved).unwrap(), serde_json::from_str(&from_export).unwrap());
    assert_eq!(a, b);
    // Read, never written: nothing beside the database.
    let beside: Vec<_> = std::fs::read_dir(dir.path().join("kilo")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, ["kilo.db"]);
}

/// An event-sourced (v2) session in Kilo's store: `kilo export` writes none
/// of its messages either (7.7.7 reads its export's messages from the
/// `message` table alone, as opencode does), and the refusal names `kilo
/// export`, not opencode's. The database is opencode's v1-and-v2.db in
/// Kilo's folder: its place says whose it is.
#[test]
fn a_v2_session_in_kilos_store_names_kilo_export() {
    const V2: &str = "ses_dced059e6ffeCrRUbVHgxPpitm";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("kilo")).unwrap();
    let store = dir.path().join("kilo/kilo.db");
    let v1_and_v2 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/opencode/v1-and-v2.db");
    std::fs::copy(v1_and_v2, &store).unwrap();
    let f = store.to_str().unwrap();
    let out = run(&["repair", f, "--session", V2]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`kilo export` writes none of its messages (Kilo Code CLI 7.7.7"), "{err}");
    assert!(!err.contains("opencode"), "{err}");
    let (d, _) = common::json_of(&["diagnose", f, "--session", V2, "--json"]);
    let notes = d["notes"].to_string();
    assert!(notes.contains("`kilo export` writes none") && !notes.contains("opencode"), "{notes}");
}
