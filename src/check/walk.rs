//! The files `check` looks at: every file under the paths given, recursively.
//!
//! Overlays (`*.doctor`) and their locks (`*.lock`) belong to a session and are
//! passed over silently, as are hidden files and folders below a given path
//! (`.git`, editors' state), like fd and ripgrep do. Symbolic links are
//! followed, but a folder already visited (by its canonical path) is not
//! entered again, so a link loop ends; a file reached twice is checked once.
//! opencode's `storage/` folder is one store, not a tree of sessions. Claude
//! Code's own files beside a session — `<session>/tool-results/` (tool outputs
//! it saved) and `subagents/agent-<id>.meta.json` — are passed over too; its
//! subagents' transcripts are sessions of their own and are checked.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One file to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub path: PathBuf,
    /// Named on the command line (not found by the walk): one that is not a
    /// session is an error rather than a note.
    pub explicit: bool,
    /// One session of a store of many ([`crate::reader::store_sessions`]).
    pub session: Option<String>,
}

/// What the walk found.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<Candidate>,
    /// Paths that cannot be walked (missing, unreadable folders), with the reason.
    pub errors: Vec<(PathBuf, String)>,
}

/// Is `name` an overlay or a lock beside a session?
#[allow(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "session-doctor names its overlays and their locks itself, in lower case: a `.DOCTOR` is not one"
)]
pub fn is_overlay(name: &str) -> bool {
    name.ends_with(".doctor") || name.ends_with(".lock")
}

/// opencode's `storage/` folder: read as one store, not walked.
fn is_opencode_storage(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == "storage") && dir.join("message").is_dir() && dir.join("part").is_dir()
}

/// Claude Code's files beside a session that are not sessions: the
/// `tool-results/` folder of `<project>/<session>/` (beside `<session>.jsonl`),
/// and a subagent's `.meta.json`.
fn is_claude_code_aside(path: &Path, name: &str, is_dir: bool) -> bool {
    let Some(parent) = path.parent() else { return false };
    if is_dir {
        let beside = parent.file_name().map(|s| parent.with_file_name(format!("{}.jsonl", s.to_string_lossy())));
        return name == "tool-results" && beside.is_some_and(|f| f.is_file());
    }
    parent.file_name().is_some_and(|d| d == "subagents") && name.starts_with("agent-") && name.ends_with(".meta.json")
}

/// Walks `roots` in order; each folder's entries in name order.
pub fn walk(roots: &[PathBuf]) -> Walk {
    let mut w = Walk::default();
    let mut dirs = HashSet::new();
    let mut files = HashSet::new();
    for root in roots {
        match std::fs::metadata(root) {
            Err(e) => w.errors.push((root.clone(), e.to_string())),
            Ok(m) if m.is_dir() && !is_opencode_storage(root) => descend(root, &mut dirs, &mut files, &mut w),
            Ok(_) => {
                if files.insert(canonical(root)) {
                    w.files.push(Candidate { path: root.clone(), explicit: true, session: None });
                }
            }
        }
    }
    w
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn descend(dir: &Path, dirs: &mut HashSet<PathBuf>, files: &mut HashSet<PathBuf>, w: &mut Walk) {
    if !dirs.insert(canonical(dir)) {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            w.errors.push((dir.to_path_buf(), e.to_string()));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || is_overlay(&name) {
            continue;
        }
        // Follows links; a dangling link is an error of the walk.
        match std::fs::metadata(&path) {
            Err(e) => w.errors.push((path.clone(), e.to_string())),
            Ok(m) if is_claude_code_aside(&path, &name, m.is_dir()) => {}
            Ok(m) if m.is_dir() && !is_opencode_storage(&path) => descend(&path, dirs, files, w),
            Ok(m) if m.is_dir() || m.is_file() => {
                if files.insert(canonical(&path)) {
                    w.files.push(Candidate { path, explicit: false, session: None });
                }
            }
            // Sockets, fifos, devices: never sessions, and reading a fifo would block.
            Ok(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlays_and_locks_are_not_sessions() {
        assert!(is_overlay("s.jsonl.doctor"));
        assert!(is_overlay("s.jsonl.doctor.lock"));
        assert!(!is_overlay("s.jsonl"));
    }

    #[test]
    fn claude_codes_saved_outputs_and_subagent_metadata_are_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        let sub = project.join("s1/subagents");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(project.join("s1/tool-results")).unwrap();
        std::fs::write(project.join("s1.jsonl"), "{}\n").unwrap();
        std::fs::write(project.join("s1/tool-results/b1.txt"), "output").unwrap();
        std::fs::write(sub.join("agent-a1.jsonl"), "{}\n").unwrap();
        std::fs::write(sub.join("agent-a1.meta.json"), "{}").unwrap();
        // A folder of that name with no session beside it is walked as any other.
        std::fs::create_dir_all(project.join("other/tool-results")).unwrap();
        std::fs::write(project.join("other/tool-results/x.jsonl"), "{}\n").unwrap();
        let found: Vec<PathBuf> = walk(&[project.to_path_buf()])
            .files
            .into_iter()
            .map(|c| c.path.strip_prefix(project).unwrap().into())
            .collect();
        let want: Vec<PathBuf> = ["other/tool-results/x.jsonl", "s1/subagents/agent-a1.jsonl", "s1.jsonl"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(found, want);
    }
}
