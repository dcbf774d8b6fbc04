//! Crash-safe writes: every file session-doctor writes appears whole or not at all.
//!
//! The bytes go to a temporary file in the target's own folder (so the rename
//! never crosses file systems), are flushed to disk, and the temporary file is
//! renamed over the target; then the folder itself is synced so the rename
//! survives a power cut. A symlink at the target is replaced, never followed:
//! a session folder's link cannot redirect a write elsewhere.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::Context as _;

/// What to do when the target exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Replace it (the overlay, `preview --out`).
    Replace,
    /// Refuse: an existing file is never overwritten (`repair`).
    Keep,
}

/// Writes `path` atomically with what `fill` writes.
pub fn write(
    path: &Path,
    existing: Existing,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".session-doctor-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    {
        let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
        fill(&mut w)?;
        w.flush().with_context(|| format!("writing {}", path.display()))?;
    }
    tmp.as_file().sync_all().with_context(|| format!("syncing {}", path.display()))?;
    match existing {
        Existing::Replace => {
            tmp.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
        }
        Existing::Keep => {
            tmp.persist_noclobber(path)
                .map_err(|e| e.error)
                .with_context(|| format!("{} already exists; session-doctor never overwrites it", path.display()))?;
        }
    }
    sync_dir(dir);
    Ok(())
}

/// Makes a rename in `dir` durable. Best effort: some file systems refuse it.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
