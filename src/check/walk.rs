//! The files `check` looks at: every file under the paths given, recursively.
//!
//! Overlays (`*.doctor`) and their locks (`*.lock`) belong to a session and are
//! passed over silently, as are hidden files and folders below a given path
//! (`.git`, editors' state), like fd and ripgrep do. Symbolic links are
//! followed, but a folder already visited (by its canonical path) is not
//! entered again, so a link loop ends; a file reached twice is checked once.
//! opencode's `storage/` folder is one store, not a tree of sessions.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One file to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub path: PathBuf,
    /// Named on the command line (not found by the walk): one that is not a
    /// session is an error rather than a note.
    pub explicit: bool,
}

/// What the walk found.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<Candidate>,
    /// Paths that cannot be walked (missing, unreadable folders), with the reason.
    pub errors: Vec<(PathBuf, String)>,
}

/// Is `name` an overlay or a lock beside a session?
pub fn is_overlay(name: &str) -> bool {
    name.ends_with(".doctor") || name.ends_with(".lock")
}

/// opencode's `storage/` folder: read as one store, not walked.
fn is_opencode_storage(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == "storage") && dir.join("message").is_dir() && dir.join("part").is_dir()
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
                    w.files.push(Candidate { path: root.clone(), explicit: true });
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
            Ok(m) if m.is_dir() && !is_opencode_storage(&path) => descend(&path, dirs, files, w),
            Ok(m) if m.is_dir() || m.is_file() => {
                if files.insert(canonical(&path)) {
                    w.files.push(Candidate { path, explicit: false });
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
}
