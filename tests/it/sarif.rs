//! `check --output-format sarif` against the published SARIF 2.1.0 schema
//! (`tests/data/sarif-schema-2.1.0.json`, OASIS), and what its results say;
//! `--output-format gitlab` (GitLab Code Quality) and `check --json`.

use crate::common::{bin, sample};

use std::path::Path;

use serde_json::Value;

fn schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(&path).expect("the vendored SARIF schema");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::options().should_validate_formats(true).build(&schema).expect("the SARIF schema compiles")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

/// `check` with `args`: its stdout as JSON, and the exit code.
fn check(args: &[&str]) -> (Value, i32) {
    let out = bin().arg("check").args(args).output().expect("the binary runs");
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().expect("exited"))
}

fn samples() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").display().to_string()
}

#[test]
fn every_sample_gives_a_valid_sarif_log() {
    let (log, code) = check(&["--output-format", "sarif", &samples()]);
    assert_eq!(code, 1, "the samples hold invalid media");
    let found = errors(&schema(), &log);
    assert!(found.is_empty(), "not valid SARIF 2.1.0:\n{}", found.join("\n"));
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "session-doctor");
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let results = run["results"].as_array().expect("results");
    // Each result's rule is the one its index names, and each rule is a registered code with its meaning.
    for r in results {
        let i = usize::try_from(r["ruleIndex"].as_u64().expect("ruleIndex")).expect("small");
        assert_eq!(rules[i]["id"], r["ruleId"]);
    }
    let png = rules.iter().find(|r| r["id"] == "png.truncated").expect("a rule for png.truncated");
    assert_eq!(png["shortDescription"]["text"], "the PNG was cut short (no IEND chunk)");
    assert_eq!(png["defaultConfiguration"]["level"], "error");
    // The cut PNG of the Claude Code sample: file, line and ref (scan names it L7.1).
    let cut = results
        .iter()
        .find(|r| {
            r["ruleId"] == "png.truncated"
                && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .is_some_and(|u| u.ends_with("samples/claude-code.jsonl"))
        })
        .expect("the Claude Code sample's cut PNG");
    assert_eq!(cut["level"], "error");
    assert_eq!(cut["locations"][0]["physicalLocation"]["region"]["startLine"], 7);
    assert_eq!(cut["properties"]["ref"], "L7.1");
    assert_eq!(cut["locations"][0]["logicalLocations"][0]["name"], "L7.1");
    assert!(cut["message"]["text"].as_str().unwrap().starts_with("L7.1: "), "{cut}");
    // What the walk passed over is a notification, not a result.
    let notes = run["invocations"][0]["toolExecutionNotifications"].as_array().expect("notifications");
    assert!(notes.iter().any(|n| n["message"]["text"].as_str().unwrap().contains("expected.json")), "{notes:?}");
}

#[test]
fn allowed_problems_are_suppressed_results_and_warnings_are_warnings() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(sample("claude-code.jsonl"), dir.path().join("s.jsonl")).expect("copy");
    std::fs::write(dir.path().join("notes.txt"), "not a session\n").expect("write");
    let (log, _) = check(&["--output-format", "sarif", "--allow", "png.truncated", dir.path().to_str().unwrap()]);
    let found = errors(&schema(), &log);
    assert!(found.is_empty(), "not valid SARIF 2.1.0:\n{}", found.join("\n"));
    let results = log["runs"][0]["results"].as_array().expect("results");
    let png: Vec<&Value> = results.iter().filter(|r| r["ruleId"] == "png.truncated").collect();
    assert!(!png.is_empty());
    for r in png {
        assert_eq!(r["suppressions"][0]["kind"], "external", "{r}");
        // An absolute path is a file: URI.
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
        assert!(uri.starts_with("file:///") && uri.ends_with("/s.jsonl"), "{uri}");
    }
    assert!(results.iter().filter(|r| r["ruleId"] != "png.truncated").all(|r| r.get("suppressions").is_none()));
}

#[test]
fn a_damaged_line_and_an_unreadable_path_are_valid_sarif() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = std::fs::read_to_string(sample("claude-code.jsonl")).expect("sample");
    text.push_str("{\"type\": \"user\", \"cut\n");
    std::fs::write(dir.path().join("a b#1.jsonl"), text).expect("write");
    let missing = dir.path().join("gone.jsonl");
    let (log, code) = check(&["--output-format", "sarif", dir.path().to_str().unwrap(), missing.to_str().unwrap()]);
    assert_eq!(code, 2, "an unreadable path");
    let found = errors(&schema(), &log);
    assert!(found.is_empty(), "not valid SARIF 2.1.0:\n{}", found.join("\n"));
    let run = &log["runs"][0];
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
    let results = run["results"].as_array().expect("results");
    let line = results.iter().find(|r| r["ruleId"].as_str().unwrap().starts_with("line.")).expect("the cut line");
    let uri = line["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
    assert!(uri.ends_with("/a%20b%231.jsonl"), "{uri}");
    assert!(results.iter().any(|r| r["ruleId"] == "session.unreadable" && r["level"] == "error"));
}

#[test]
fn the_schema_check_fails_on_a_log_that_breaks_it() {
    // The validator is no rubber stamp: a level SARIF does not have, and a line 0, are refused.
    let (mut log, _) = check(&["--output-format", "sarif", &sample("claude-code.jsonl").display().to_string()]);
    let v = schema();
    assert!(errors(&v, &log).is_empty());
    log["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!errors(&v, &log).is_empty());
    log["runs"][0]["results"][0]["level"] = "error".into();
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0.into();
    assert!(!errors(&v, &log).is_empty());
}

#[test]
fn gitlab_code_quality_names_each_problem_once() {
    let (report, code) = check(&["--output-format", "gitlab", &samples()]);
    assert_eq!(code, 1);
    let issues = report.as_array().expect("an array of issues");
    assert!(!issues.is_empty());
    let mut prints = std::collections::HashSet::new();
    for i in issues {
        for key in ["description", "check_name", "fingerprint", "severity"] {
            assert!(i[key].is_string(), "{key} in {i}");
        }
        assert!(["info", "minor", "major", "critical", "blocker"].contains(&i["severity"].as_str().unwrap()));
        assert!(i["location"]["path"].is_string() && i["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        assert!(prints.insert(i["fingerprint"].as_str().unwrap().to_string()), "a fingerprint twice: {i}");
    }
    let cut = issues
        .iter()
        .find(|i| {
            i["check_name"] == "png.truncated" && i["location"]["path"].as_str().unwrap().ends_with("claude-code.jsonl")
        })
        .expect("the cut PNG");
    assert_eq!(cut["location"]["lines"]["begin"], 7);
    assert_eq!(cut["severity"], "major");
}

#[test]
fn check_json_is_output_format_json() {
    let file = sample("pi.jsonl").display().to_string();
    let (a, ca) = check(&["--json", &file]);
    let (b, cb) = check(&["--output-format", "json", &file]);
    assert_eq!((a, ca), (b, cb));
    let out = bin().args(["check", "--json", "--output-format", "sarif", &file]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "--json and another form conflict");
}
