//! Claude Code 2.1.332's newer layouts, as the real agent wrote them
//! (tests/data/agents/claude-code/layouts/, captured by
//! `SD_CAPTURE=layouts python3 tests/agents/capture_claude_code.py`): persisted
//! tool results, subagent transcripts, fork subagents and `--fork-session` forks.
//! Each layout is a folder laid out as the agent's project folder is, since
//! where a file sits is what tells these layouts apart.

use crate::common;
use crate::common::media_corpus;

use std::path::{Path, PathBuf};

use common::{diagnose, run, scan_json};
use serde_json::Value;

fn layout(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/claude-code/layouts").join(name)
}

/// A copy of a layout's folder under `dir`, every file as it is.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The one top-level session file of a layout folder with this text in it.
fn session_with(dir: &Path, text: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| std::fs::read_to_string(p).unwrap().contains(text))
        .collect();
    assert_eq!(found.len(), 1, "one session in {} holds {text:?}: {found:?}", dir.display());
    found[0].clone()
}

fn subagent_file(session: &Path) -> PathBuf {
    let dir = session.with_extension("").join("subagents");
    let found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

fn findings_with(scan: &Value, code: &str) -> Vec<Value> {
    scan["findings"].as_array().unwrap().iter().filter(|f| f["code"] == code).cloned().collect()
}

// ------------------------------------------------------- persisted tool results

/// The persisted-output layout moved under `dir`, its references (absolute
/// paths, as the agent writes them) pointing at the moved saved file.
fn persisted(dir: &Path) -> (PathBuf, PathBuf) {
    let project = dir.join("project");
    copy_tree(&layout("persisted-output"), &project);
    let session = session_with(&project, "persisted-output");
    let text = std::fs::read_to_string(&session).unwrap();
    let recorded = text
        .lines()
        .find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            v.pointer("/toolUseResult/persistedOutputPath")?.as_str().map(str::to_string)
        })
        .expect("the agent recorded persistedOutputPath");
    let stem = session.file_stem().unwrap().to_str().unwrap();
    let at = recorded.find(&format!("/{stem}/tool-results/")).expect("saved under <session>/tool-results/");
    let old_project = &recorded[..at];
    std::fs::write(&session, text.replace(old_project, project.to_str().unwrap())).unwrap();
    let saved = project.join(&recorded[at + 1..]);
    assert!(saved.is_file(), "{}", saved.display());
    (session, saved)
}

#[test]
fn a_saved_output_that_is_there_is_no_finding_and_the_preview_sends_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let (session, _) = persisted(dir.path());
    let (scan, code) = scan_json(&session, &[]);
    assert!(
        scan["findings"].as_array().unwrap().iter().all(|f| !f["code"].as_str().unwrap().starts_with("saved_output"))
    );
    assert_eq!(code, 0, "{scan}");
    // What 2.1.332 sends is the reference and its 2 KB preview (the suite checks it
    // against the logged request), never the saved file.
    let out = run(&["preview", session.to_str().unwrap()]);
    let body = String::from_utf8_lossy(&out.stdout);
    assert!(body.contains("<persisted-output>") && body.contains("Full output saved to: "), "{body}");
    assert!(!body.contains("line 001249 of a big file"), "the saved file's end is not sent");
}

#[test]
fn a_saved_output_that_is_gone_is_a_finding_on_the_result_line() {
    let dir = tempfile::tempdir().unwrap();
    let (session, saved) = persisted(dir.path());
    std::fs::remove_file(&saved).unwrap();
    let (scan, _) = scan_json(&session, &[]);
    let found = findings_with(&scan, "saved_output.missing");
    assert_eq!(found.len(), 1, "{scan}");
    assert_eq!(found[0]["severity"], "warning");
    let line = found[0]["line"].as_u64().unwrap();
    let text = std::fs::read_to_string(&session).unwrap();
    let held = text.lines().nth(usize::try_from(line).unwrap() - 1).unwrap();
    assert!(held.contains("<persisted-output>"), "the finding is on the line holding the reference");
    assert!(found[0]["message"].as_str().unwrap().contains(saved.to_str().unwrap()), "{}", found[0]);
}

#[test]
fn a_saved_output_cut_short_or_swapped_for_broken_media_is_a_finding() {
    let dir = tempfile::tempdir().unwrap();
    let (session, saved) = persisted(dir.path());
    let bytes = std::fs::read(&saved).unwrap();
    std::fs::write(&saved, &bytes[..1000]).unwrap();
    let (scan, _) = scan_json(&session, &[]);
    let found = findings_with(&scan, "saved_output.size");
    assert_eq!(found.len(), 1, "{scan}");
    assert!(
        found[0]["message"].as_str().unwrap().contains("holds 1000 bytes where the agent saved 32500"),
        "{}",
        found[0]
    );
    let png = media_corpus::png(8, 8);
    std::fs::write(&saved, &png[..png.len() - 20]).unwrap();
    let (scan, _) = scan_json(&session, &[]);
    let found = findings_with(&scan, "saved_output.media");
    assert_eq!(found.len(), 1, "{scan}");
    assert!(found[0]["message"].as_str().unwrap().contains("image/png that does not validate"), "{}", found[0]);
}

// ---------------------------------------------------------- subagent transcripts

#[test]
fn a_subagents_broken_image_is_its_own_the_parent_is_not_stuck_and_nothing_offers_to_resume_it() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    copy_tree(&layout("subagent"), &project);
    let parent = session_with(&project, "READ-THE-FILE spawn an agent");
    let sub = subagent_file(&parent);

    let (d, code) = diagnose(&parent, &[]);
    assert_eq!((d["stuck"].as_bool(), code), (Some(false), 0), "the parent got the failure as the Agent result: {d}");

    let (d, code) = diagnose(&sub, &[]);
    assert_eq!(d["format"], "claude-code", "a subagent's file is read as Claude Code");
    assert_eq!(d["failure"]["class"], "media_rejected", "{d}");
    assert_eq!(code, 1);
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(next.len(), 1, "{next:?}");
    assert!(next[0].starts_with("session-doctor diagnose ") && next[0].ends_with(parent.to_str().unwrap()), "{next:?}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("subagent") && notes.contains("resumes no subagent file"), "{notes}");

    // Claude Code answers `claude --resume <copy>` of a subagent's file with
    // "No conversation found": repair must not print that command.
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = run(&["repair", sub.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resumes no subagent file") && !String::from_utf8_lossy(&out.stdout).contains("claude --resume"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 0, "nothing written");
}

/// What `sessions --agent claude-code --json` lists under `home`.
fn sessions_under(home: &Path) -> String {
    let out = common::bin()
        .args(["sessions", "--agent", "claude-code", "--json"])
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn sessions_lists_the_parent_and_never_a_subagents_file() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-tmp-work");
    copy_tree(&layout("subagent"), &project);
    let parent = session_with(&project, "READ-THE-FILE spawn an agent");
    let listed = sessions_under(home.path());
    assert!(listed.contains(parent.file_name().unwrap().to_str().unwrap()), "{listed}");
    assert!(!listed.contains("subagents"), "{listed}");
}

/// Older builds wrote a subagent's transcript beside the session, as
/// `agent-<id>.jsonl` (its records on a side chain naming the session): it is
/// no session either. `sessions` listed it, `--latest` picked it and `repair`
/// offered `claude --resume` for a copy of it.
#[test]
fn an_older_builds_subagent_file_beside_the_session_is_no_session() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-tmp-work");
    copy_tree(&layout("subagent"), &project);
    let parent = session_with(&project, "READ-THE-FILE spawn an agent");
    let sub = subagent_file(&parent);
    let old = project.join(sub.file_name().unwrap());
    std::fs::rename(&sub, &old).unwrap();
    std::fs::remove_dir_all(parent.with_extension("")).unwrap();
    let listed = sessions_under(home.path());
    assert!(listed.contains(parent.file_name().unwrap().to_str().unwrap()), "{listed}");
    assert!(!listed.contains("agent-"), "{listed}");
    let (d, _) = diagnose(&old, &[]);
    let next = d["next"].to_string();
    assert!(next.contains(parent.to_str().unwrap()) && !next.contains("repair"), "{d:#}");
    let out = run(&["repair", old.to_str().unwrap(), "--out", home.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stderr).contains("resumes no subagent file"));
}

// ------------------------------------------------------------------------ forks

#[test]
fn a_fork_subagent_carries_its_parents_broken_image() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    copy_tree(&layout("fork-subagent"), &project);
    let parent = session_with(&project, "READ-THE-FILE cut.png please");
    let fork = subagent_file(&parent);
    let first = std::fs::read_to_string(&fork).unwrap();
    assert!(first.starts_with(r#"{"type":"fork-context-ref""#), "the fork points at its parent's history");

    // The parent's own scan finds the image; the fork's requests carry it too.
    let (parent_scan, _) = scan_json(&parent, &[]);
    let image = parent_scan["attachments"].as_array().unwrap().iter().find(|a| a["verdict"] == "invalid").cloned();
    let image = image.expect("the parent holds the cut PNG");
    let (scan, code) = scan_json(&fork, &[]);
    let found = findings_with(&scan, "subagent.fork_media");
    assert_eq!(found.len(), 1, "{scan}");
    assert_eq!((found[0]["line"].as_u64(), found[0]["severity"].as_str()), (Some(1), Some("error")));
    let message = found[0]["message"].as_str().unwrap();
    assert!(message.contains(image["ref"].as_str().unwrap()) && message.contains("PNG ends after"), "{message}");
    assert_eq!(code, 1, "invalid media in what the fork sends fails the scan");
    let (d, _) = diagnose(&fork, &[]);
    let verdict = d["verdict"].as_str().unwrap();
    assert!(verdict.contains("carries its parent's history, where 1 attachment is invalid"), "{verdict}");
    // preview shows the fork's own records, and names the part the agent adds from the parent.
    let out = run(&["preview", "--json", fork.to_str().unwrap()]);
    let said: Value =
        serde_json::from_slice(String::from_utf8_lossy(&out.stderr).lines().last().unwrap().as_bytes()).unwrap();
    assert!(said["not_in_session"].to_string().contains("the parent session's history up to the fork"), "{said}");

    // Without its parent the agent sends the fork's own messages alone: said, not an error.
    std::fs::remove_file(&parent).unwrap();
    let (scan, _) = scan_json(&fork, &[]);
    assert_eq!(findings_with(&scan, "subagent.fork_media").len(), 0);
    assert_eq!(findings_with(&scan, "subagent.fork_parent_missing").len(), 1, "{scan}");
}

#[test]
fn a_fork_session_is_a_full_copy_so_its_own_diagnosis_finds_the_broken_image() {
    let dir = layout("fork-session");
    let fork = session_with(&dir, "requestSessionId");
    let (d, code) = diagnose(&fork, &[]);
    assert_eq!((d["stuck"].as_bool(), code), (Some(true), 1), "{d}");
    let prime = common::primes(&d);
    assert_eq!(prime.len(), 1, "{d}");
    assert!(prime[0]["name"].as_str().unwrap().ends_with("cut.png"));
    assert!(
        d["next"][1].as_str().unwrap().starts_with("session-doctor repair "),
        "a fork is resumed like any session: {d}"
    );
}
