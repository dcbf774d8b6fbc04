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

/// Writes `path` atomically with what `fill` writes, with the mode a new file
/// gets from the umask (0644 under the usual 022), not a temporary file's 0600.
pub fn write(
    path: &Path,
    existing: Existing,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    write_with_mode(path, existing, None, fill)
}

/// As [`write`], the file taking `mode` when given (a repaired copy takes its
/// original's: a private session stays private), set before it appears.
pub fn write_with_mode(
    path: &Path,
    existing: Existing,
    mode: Option<u32>,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".session-doctor-").suffix(".tmp");
    // Created as any new file is (0666 less the umask), then given `mode`.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    if !dir.is_dir() {
        // Said of the file asked for, not of the hidden temporary one.
        anyhow::bail!("cannot write {}: there is no folder {}", path.display(), dir.display());
    }
    let tmp = builder
        .tempfile_in(dir)
        .map_err(|e| std::io::Error::from(e.kind()))
        .with_context(|| format!("cannot write {}: no file can be created in {}", path.display(), dir.display()))?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        tmp.as_file()
            .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
            .with_context(|| format!("setting the mode of {}", path.display()))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
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

/// The permission bits of `path` (for a file written to take them), where the
/// platform has them.
pub fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Makes a rename in `dir` durable. Best effort: some file systems refuse it.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
