//! Conformance against real session files that other projects keep as fixtures
//! (`../shared/real-sessions`, or `REAL_SESSIONS=DIR`): every file is detected as
//! its real format with the attachments it really holds, or refused with exit 2
//! and a sentence when it is not a session. Ignored by default: the files are
//! not part of this repository. Run: `cargo test --test it real_sessions:: -- --ignored`.
//!
//! Expectations are `tests/data/real_sessions.tsv`; a file it does not list is
//! checked against the folder's own `expected.tsv` (`a|b` = either, `?` = any
//! count), and failing both it must at least be read or cleanly refused.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::run;

/// (format alternatives, attachment count if pinned) per relative path.
type Expectations = BTreeMap<String, (Vec<String>, Option<usize>)>;

fn parse(text: &str) -> Expectations {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut f = l.split('\t');
            let (file, format, count) = (f.next()?, f.next()?, f.next()?);
            let formats = format.split('|').map(str::to_string).collect();
            Some((file.to_string(), (formats, count.trim().parse().ok())))
        })
        .collect()
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if !matches!(p.file_name().and_then(|n| n.to_str()), Some("README.md" | "expected.tsv")) {
            out.push(p);
        }
    }
}

#[test]
#[ignore = "needs ../shared/real-sessions (or REAL_SESSIONS=DIR)"]
fn every_real_session_is_read_as_what_it_is() {
    let root = std::env::var_os("REAL_SESSIONS")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-sessions"), PathBuf::from);
    if !root.is_dir() {
        eprintln!("no real sessions at {}: nothing to check", root.display());
        return;
    }
    let ours = parse(include_str!("../data/real_sessions.tsv"));
    let theirs = parse(&std::fs::read_to_string(root.join("expected.tsv")).unwrap_or_default());
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    assert!(!all.is_empty(), "{} holds no files", root.display());
    let mut failures = Vec::new();
    for path in &all {
        let rel = path.strip_prefix(&root).expect("under root").to_string_lossy().replace('\\', "/");
        let out = run(&["scan", "--json", path.to_str().expect("utf-8 path")]);
        let code = out.status.code();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let doc: Option<serde_json::Value> = serde_json::from_slice(&out.stdout).ok();
        let format = doc.as_ref().and_then(|d| d["format"].as_str()).unwrap_or("-").to_string();
        let count = doc.as_ref().and_then(|d| d["attachments"].as_array()).map_or(0, Vec::len);
        let got = format!("{format}, {count} attachments, exit {code:?}");
        eprintln!("{rel}: {got}");
        if format == "-"
            && !(code == Some(2) && stderr.contains(&rel.rsplit('/').next().unwrap_or_default().to_string()))
        {
            failures.push(format!("{rel}: not read, and not refused with exit 2 and a sentence naming it: {stderr}"));
            continue;
        }
        let Some((formats, pinned)) = ours.get(&rel).or_else(|| theirs.get(&rel)) else {
            continue; // unlisted: read or cleanly refused is all that is asked
        };
        if !formats.contains(&format) {
            failures.push(format!("{rel}: {got}; expected format {}: {stderr}", formats.join("|")));
        } else if format != "-" && pinned.is_some_and(|n| n != count) {
            failures.push(format!("{rel}: {got}; expected {} attachments", pinned.unwrap_or_default()));
        }
    }
    assert!(failures.is_empty(), "{} of {} files:\n{}", failures.len(), all.len(), failures.join("\n"));
}
