//! The two promises every writing command keeps about the files it reads.
//!
//! **What a command writes is never what it reads.** Before any output is
//! written, [`refuse_aliases`] compares it with the session, its overlay and
//! every other file the command reads: by path after resolving symbolic links,
//! and by device and inode where the file exists (a hard link or a symlink to
//! the session is the session). `preview s.jsonl --out s.jsonl` would otherwise
//! replace the very history session-doctor promises never to write.
//!
//! **What a command read is still what it writes from.** A command reads the
//! session more than once (the plan, the workers, the copy), so a session
//! replaced between two of those reads (an agent's rename, a sync tool) would
//! apply one file's plan to another file's bytes. [`Snapshot`] records the
//! session's device, inode, size and modification time before the first read;
//! [`Snapshot::unchanged`] refuses to write when any of them differ.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A file a command reads, and what it is to the user (`the session`, `its overlay`).
#[derive(Clone, Debug)]
pub struct Input {
    pub what: &'static str,
    pub path: PathBuf,
}

impl Input {
    pub fn new(what: &'static str, path: impl Into<PathBuf>) -> Input {
        Input { what, path: path.into() }
    }
}

/// The local files a session names as attachments (a `file://` URI, an
/// absolute path): they are read too, so no output may name one.
pub fn named_by(attachments: &[crate::model::Attachment]) -> Vec<Input> {
    attachments
        .iter()
        .filter(|a| a.encoding == crate::model::Encoding::Reference)
        .filter_map(|a| match crate::media::refs::classify(a.url.as_deref()?, "") {
            crate::media::refs::Reference::Local(p) => Some(Input::new("a file the session names", p)),
            _ => None,
        })
        .collect()
}

/// The file behind stdin when a session was read from it (`-`) and stdin is a
/// regular file (`< session.jsonl`): the session is then that file, though
/// the command reads the spooled copy, so no output may name it either.
static STDIN_FILE: std::sync::OnceLock<Option<(u64, u64)>> = std::sync::OnceLock::new();

/// Records the file behind stdin (`STDIN_FILE`), before stdin is read.
pub fn note_stdin() {
    STDIN_FILE.get_or_init(|| {
        #[cfg(unix)]
        {
            let m = rustix::fs::fstat(rustix::stdio::stdin()).ok()?;
            let regular = rustix::fs::FileType::from_raw_mode(m.st_mode) == rustix::fs::FileType::RegularFile;
            regular.then_some((m.st_dev as u64, m.st_ino as u64))
        }
        #[cfg(not(unix))]
        None
    });
}

/// Whether a file with this device and inode is one a command reads: an input,
/// or the file behind stdin.
fn is_read(id: (u64, u64), inputs: &[Input]) -> bool {
    STDIN_FILE.get().copied().flatten() == Some(id) || inputs.iter().any(|i| Resolved::of(&i.path).id == Some(id))
}

/// Whether `path` names a file the command reads (by device and inode): what
/// a sweep of leftover temporary files must never remove.
pub fn reads_file(path: &Path, inputs: &[Input]) -> bool {
    std::fs::symlink_metadata(path).ok().as_ref().and_then(device_inode).is_some_and(|id| is_read(id, inputs))
}

/// Refuses (an error naming both files) when `output` is one of `inputs`, or
/// lies inside an input that is a folder (a store read file by file), or is
/// the file behind stdin that the session was read from.
pub fn refuse_aliases(output: &Path, inputs: &[Input]) -> anyhow::Result<()> {
    refuse_aliases_shown(output, output, inputs)
}

/// [`refuse_aliases`] of `output`, named `shown` in what it says (the path
/// the user gave for a pinned one, [`crate::atomic`]).
pub fn refuse_aliases_shown(output: &Path, shown: &Path, inputs: &[Input]) -> anyhow::Result<()> {
    let out = Resolved::of(output);
    if out.id.is_some() && out.id == STDIN_FILE.get().copied().flatten() {
        anyhow::bail!(
            "{} is the file the session was read from on stdin; session-doctor never writes over what it reads: choose another path (nothing was written)",
            crate::text::sanitize_path(shown),
        );
    }
    for input in inputs {
        let inp = Resolved::of(&input.path);
        let same = match (&out.id, &inp.id) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        } || out.path == inp.path;
        let inside = inp.is_dir && out.path.starts_with(&inp.path);
        if same || inside {
            let how = if inside { "inside" } else { "the same file as" };
            anyhow::bail!(
                "{} is {how} {} {}, which this command reads; session-doctor never writes over what it reads: choose another path (nothing was written)",
                crate::text::sanitize_path(shown),
                input.what,
                crate::text::sanitize_path(&input.path),
            );
        }
    }
    Ok(())
}

/// A path as the file system resolves it.
struct Resolved {
    /// Symlinks resolved; for a file that does not exist yet, its folder resolved.
    path: PathBuf,
    /// Device and inode, when the file exists.
    id: Option<(u64, u64)>,
    is_dir: bool,
}

impl Resolved {
    fn of(path: &Path) -> Resolved {
        let meta = std::fs::metadata(path).ok();
        let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| {
            let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            match (absolute.parent(), absolute.file_name()) {
                (Some(dir), Some(name)) => std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()).join(name),
                _ => absolute,
            }
        });
        Resolved {
            path: resolved,
            id: meta.as_ref().and_then(device_inode),
            is_dir: meta.as_ref().is_some_and(Metadata::is_dir),
        }
    }
}

#[cfg(unix)]
#[allow(clippy::unnecessary_wraps, reason = "as its twin off unix, which has no inode to give")]
fn device_inode(m: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn device_inode(_: &Metadata) -> Option<(u64, u64)> {
    None
}

/// Which file a path named, and how it was, when a command started reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    id: Option<(u64, u64)>,
    /// The size read: what a copy is bounded by.
    pub len: u64,
    modified: Option<SystemTime>,
}

impl Snapshot {
    /// The session at `path` now.
    pub fn of(path: &Path) -> anyhow::Result<Snapshot> {
        let m = std::fs::metadata(path).map_err(|e| io_error(e, "cannot read", path))?;
        Ok(Snapshot::from_metadata(&m))
    }

    /// The file an open handle reads.
    pub fn of_file(file: &File, path: &Path) -> anyhow::Result<Snapshot> {
        let m = file.metadata().map_err(|e| io_error(e, "cannot read", path))?;
        Ok(Snapshot::from_metadata(&m))
    }

    fn from_metadata(m: &Metadata) -> Snapshot {
        Snapshot { id: device_inode(m), len: m.len(), modified: m.modified().ok() }
    }

    /// `Ok` when `path` is still the file this snapshot saw, unchanged; else
    /// the error every writer gives before it writes nothing.
    pub fn unchanged(&self, path: &Path) -> anyhow::Result<()> {
        let now = Snapshot::of(path).ok();
        self.same_as(now.as_ref(), path)
    }

    /// `Ok` when `now` is this snapshot.
    pub fn same_as(&self, now: Option<&Snapshot>, path: &Path) -> anyhow::Result<()> {
        if now == Some(self) {
            return Ok(());
        }
        let how = match now {
            None => "is gone",
            Some(n) if n.id != self.id => "was replaced by another file",
            Some(n) if n.len > self.len => "grew",
            Some(n) if n.len < self.len => "shrank",
            Some(_) => "was rewritten",
        };
        anyhow::bail!(
            "the session changed while it was read ({} {how}); nothing was written: run the command again once the agent has stopped writing it",
            crate::text::sanitize_path(path)
        )
    }
}

/// An I/O error naming the file it concerns, with the plain words for a full disk.
pub fn io_error(e: io::Error, doing: &str, path: &Path) -> anyhow::Error {
    let full = e.kind() == io::ErrorKind::StorageFull || e.raw_os_error() == Some(28);
    let e = anyhow::Error::new(e);
    let e = if full { e.context("the disk is full") } else { e };
    e.context(format!("{doing} {}", crate::text::sanitize_path(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_that_names_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("s.jsonl");
        std::fs::write(&s, "{}\n").unwrap();
        let inputs = [Input::new("the session", s.clone())];
        assert!(refuse_aliases(&s, &inputs).is_err());
        // Spelled another way, through a symlink, through a hard link.
        let dotted = dir.path().join(".").join("s.jsonl");
        assert!(refuse_aliases(&dotted, &inputs).is_err());
        #[cfg(unix)]
        {
            let link = dir.path().join("link.jsonl");
            std::os::unix::fs::symlink(&s, &link).unwrap();
            assert!(refuse_aliases(&link, &inputs).is_err());
            let hard = dir.path().join("hard.jsonl");
            std::fs::hard_link(&s, &hard).unwrap();
            assert!(refuse_aliases(&hard, &inputs).is_err());
        }
        // An input that does not exist yet (the overlay) is matched by path.
        let ov = dir.path().join("s.jsonl.doctor");
        assert!(refuse_aliases(&ov, &[Input::new("its overlay", &ov)]).is_err());
        assert!(refuse_aliases(&dir.path().join("other.json"), &inputs).is_ok());
        // Inside a folder that is read file by file.
        let store = [Input::new("the store", dir.path())];
        assert!(refuse_aliases(&dir.path().join("new.json"), &store).is_err());
    }

    #[test]
    fn a_snapshot_sees_a_swap_an_append_and_a_removal() {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("s.jsonl");
        std::fs::write(&s, "{}\n").unwrap();
        let before = Snapshot::of(&s).unwrap();
        assert!(before.unchanged(&s).is_ok());
        let other = dir.path().join("other");
        std::fs::write(&other, "[]\n").unwrap();
        std::fs::rename(&other, &s).unwrap();
        let e = before.unchanged(&s).unwrap_err().to_string();
        assert!(e.contains("replaced by another file") && e.contains("nothing was written"), "{e}");
        let before = Snapshot::of(&s).unwrap();
        std::io::Write::write_all(&mut std::fs::OpenOptions::new().append(true).open(&s).unwrap(), b"{}\n").unwrap();
        assert!(before.unchanged(&s).unwrap_err().to_string().contains("grew"));
        std::fs::remove_file(&s).unwrap();
        assert!(before.unchanged(&s).unwrap_err().to_string().contains("is gone"));
    }
}
