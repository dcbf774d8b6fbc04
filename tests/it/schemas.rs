//! Versioned JSON: every command's `--json` output, on every sample (and on the
//! copies, overlays and errors the commands make of them), validates against
//! the schema `session-doctor schema <command>` prints, and carries
//! `schema_version`.

use crate::common::{bin, sample};

use std::path::{Path, PathBuf};

use serde_json::Value;

const COMMANDS: &[&str] =
    &["scan", "diagnose", "exclude", "preview", "repair", "check", "classify", "sessions", "guard"];

fn validator(command: &str) -> jsonschema::Validator {
    let out = bin().args(["schema", command]).output().expect("runs");
    assert!(out.status.success(), "schema {command}: {}", String::from_utf8_lossy(&out.stderr));
    let schema: Value = serde_json::from_slice(&out.stdout).expect("the schema is JSON");
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    jsonschema::options().should_validate_formats(true).build(&schema).unwrap_or_else(|e| panic!("{command}: {e}"))
}

/// Asserts `doc` (printed by `what`) is valid and versioned.
fn valid(v: &jsonschema::Validator, what: &str, doc: &Value) {
    let errors: Vec<String> = v.iter_errors(doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{what}: not valid against its schema:\n{}\n{doc:#}", errors.join("\n"));
    let versioned = |o: &Value| o["schema_version"] == 1;
    match doc {
        Value::Array(items) => assert!(items.iter().all(versioned), "{what}: an element without schema_version"),
        o => assert!(versioned(o), "{what}: no schema_version"),
    }
}

fn parse(what: &str, bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{what} printed no JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

/// Runs the binary in `dir`: stdout as JSON.
fn json(dir: &Path, args: &[&str]) -> Value {
    let out = bin().current_dir(dir).args(args).output().expect("runs");
    parse(&format!("{args:?}"), &out.stdout)
}

fn samples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("samples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl" || (x == "json" && !p.ends_with("expected.json"))))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "{files:?}");
    files
}

#[test]
fn every_output_on_every_sample_validates_against_its_schema() {
    let v: std::collections::HashMap<&str, jsonschema::Validator> =
        COMMANDS.iter().map(|c| (*c, validator(c))).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let mut written = 0;
    for file in samples() {
        let name = file.file_name().unwrap().to_str().unwrap().to_string();
        std::fs::copy(&file, d.join(&name)).expect("copy");
        let s = file.display().to_string();
        valid(&v["scan"], &format!("scan {name}"), &json(d, &["scan", "--json", &s]));
        valid(&v["diagnose"], &format!("diagnose {name}"), &json(d, &["diagnose", "--json", &s]));
        valid(&v["check"], &format!("check {name}"), &json(d, &["check", "--json", &s]));
        // On the copy: an overlay, then what preview, repair and diagnose make of it.
        valid(&v["exclude"], &format!("exclude {name}"), &json(d, &["exclude", "--json", "--suspects", &name]));
        valid(&v["diagnose"], &format!("diagnose {name} (excluded)"), &json(d, &["diagnose", "--json", &name]));
        let out = bin().current_dir(d).args(["preview", "--json", &name]).output().expect("runs");
        if name == "kiro.jsonl" {
            // Kiro CLI's request is not modelled: preview says so, and prints no summary.
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && err.contains("does not model"), "preview {name}: {err}");
        } else {
            assert!(out.status.success(), "preview {name}");
            valid(&v["preview"], &format!("preview {name}"), &parse("preview", &out.stderr));
        }
        let copies = d.join(format!("{name}.out"));
        std::fs::create_dir(&copies).expect("mkdir");
        let repaired = json(d, &["repair", "--json", "--out", copies.to_str().unwrap(), &name]);
        valid(&v["repair"], &format!("repair {name}"), &repaired);
        // Copilot CLI leaves its cut PNG out itself: nothing to repair there.
        if let Some(copy) = repaired["out"].as_str() {
            written += 1;
            // The copy needs no repair: the answer that writes nothing.
            let again = json(d, &["repair", "--json", "--out", copies.to_str().unwrap(), copy]);
            valid(&v["repair"], &format!("repair of {name}'s copy"), &again);
            assert_eq!(again["written"], false, "{again}");
        }
        valid(
            &v["exclude"],
            &format!("exclude --undo {name}"),
            &json(d, &["exclude", "--json", "--undo", "--suspects", &name]),
        );
    }
    assert!(written >= 10, "repair wrote {written} copies");
    let all = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    valid(&v["check"], "check samples/", &json(d, &["check", "--json", all.to_str().unwrap()]));
    let several = ["scan", "--json", "pi.jsonl", "codex.jsonl", "gone.jsonl"];
    let docs = json(d, &several);
    assert_eq!(docs.as_array().map(Vec::len), Some(3));
    valid(&v["scan"], "scan over three files", &docs);
}

#[test]
fn classify_sessions_and_guard_validate_against_their_schemas() {
    let classify = validator("classify");
    let texts = [
        "Could not process image",
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.2.content.0.image.source.base64: Could not process image"}}"#,
        "429 Too Many Requests: rate limit reached, try again in 20s",
        "Item with id 'rs_1' not found.",
    ];
    for t in texts {
        valid(&classify, t, &json(Path::new("."), &["classify", "--json", t]));
        valid(&classify, t, &json(Path::new("."), &["classify", "--json", "--explain", t]));
    }
    // sessions under a home with one Claude Code session.
    let home = tempfile::tempdir().expect("tempdir");
    let project = home.path().join(".claude/projects/-home-dev-shop");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::copy(sample("claude-code.jsonl"), project.join("0a0e0000-0000-4000-8000-000000000001.jsonl"))
        .expect("copy");
    let out = bin().env("HOME", home.path()).args(["sessions", "--json"]).output().expect("runs");
    let listed = parse("sessions", &out.stdout);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    valid(&validator("sessions"), "sessions", &listed);
    // guard over a text file, a PNG and a cut one.
    let dir = tempfile::tempdir().expect("tempdir");
    let png = crate::common::media_corpus::png(8, 8);
    std::fs::write(dir.path().join("ok.png"), &png).expect("write");
    std::fs::write(dir.path().join("cut.png"), &png[..png.len() / 2]).expect("write");
    std::fs::write(dir.path().join("notes.txt"), "text").expect("write");
    let rows = json(dir.path(), &["guard", "--json", "notes.txt", "ok.png", "cut.png"]);
    assert_eq!(rows.as_array().map(Vec::len), Some(3), "{rows}");
    valid(&validator("guard"), "guard", &rows);
}

#[test]
fn errors_under_json_validate_and_the_schemas_are_no_rubber_stamps() {
    for c in ["scan", "diagnose", "exclude", "preview", "repair"] {
        let mut args = vec![c, "--json", "/nonexistent/x.jsonl"];
        if c == "exclude" {
            args.push("--suspects");
        }
        let out = bin().args(&args).output().expect("runs");
        // preview's summary goes to standard error; an error is answered on standard output.
        let doc = parse(c, &out.stdout);
        assert!(doc["error"].is_string(), "{c}: {doc}");
        valid(&validator(c), &format!("{c} on a missing file"), &doc);
    }
    // A usage error under --json answers JSON too.
    let doc = json(Path::new("."), &["classify", "--json", "--status", "x", "text"]);
    valid(&validator("classify"), "classify with a bad --status", &doc);
    // check reports a missing path as a failing session.
    let doc = json(Path::new("."), &["check", "--json", "/nonexistent/x.jsonl"]);
    assert_eq!(doc["sessions"][0]["problems"][0]["code"], "session.unreadable");
    valid(&validator("check"), "check on a missing file", &doc);
    let v = validator("check");
    let mut doc = json(Path::new("."), &["check", "--json", sample("pi.jsonl").to_str().unwrap()]);
    valid(&v, "check", &doc);
    doc["schema_version"] = 2.into();
    assert!(!v.is_valid(&doc), "another schema_version");
    doc["schema_version"] = 1.into();
    doc["sessions"][0]["problems"][0]["severity"] = "fatal".into();
    assert!(!v.is_valid(&doc), "an unknown severity");
    let v = validator("scan");
    let mut doc = json(Path::new("."), &["scan", "--json", sample("pi.jsonl").to_str().unwrap()]);
    doc["attachments"][0].as_object_mut().unwrap().remove("sha256");
    assert!(!v.is_valid(&doc), "an attachment without its sha256 field");
    let out = bin().args(["schema", "completions"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "completions has no --json");
}
