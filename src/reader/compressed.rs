//! Sessions stored compressed: Codex's `rollout-….jsonl.zst`.
//!
//! Codex (behind its `local_thread_store_compression` feature) rewrites a
//! rollout idle for seven days as a zstd frame beside it and deletes the plain
//! file; it reads either form and turns the `.zst` back into `.jsonl` before it
//! appends. The reader needs a file it can seek in (it splits the text between
//! workers, reads the last lines first, and `diagnose`, `preview` and `repair`
//! go back to a record's byte range), so the frame is decompressed once,
//! streaming, into a temporary file that holds the text: memory stays at the
//! decoder's window whatever the session's size (a few MiB at Codex's level 3;
//! libzstd refuses a frame asking for more than 128 MiB), as for `scan -`
//! (stdin is spooled the same way). The original is only ever read.

use std::fs::File;
use std::io::{Read, Write as _};
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;

/// How a zstd frame starts (RFC 8878).
const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Whether the file at `path` starts with a zstd frame.
pub fn is_zstd(path: &Path) -> bool {
    let mut start = [0; 4];
    File::open(path).and_then(|mut f| f.read_exact(&mut start)).is_ok() && start == MAGIC
}

/// The decompressed text of `path` in a temporary file (removed when the last
/// holder drops it), when `path` is zstd-compressed; `None` for any other file.
pub fn spool(path: &Path) -> anyhow::Result<Option<Arc<tempfile::TempPath>>> {
    if !is_zstd(path) {
        return Ok(None);
    }
    let input = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let size = input.metadata().map_or(0, |m| m.len());
    let mut out = spool_file("zst").context("creating a temporary file for the decompressed session")?;
    // A file may hold several frames: they decode to their texts end to end (Codex writes one).
    let decoder =
        zstd::stream::read::Decoder::new(input).with_context(|| format!("decompressing {} (zstd)", path.display()))?;
    // JSON Lines compress ten to one at most, base64 hardly at all: far past
    // that, the file is a bomb, not a session, and is not spooled to the end.
    let cap = (size.saturating_mul(MAX_RATIO)).max(MIN_CAP);
    let copied = std::io::copy(&mut decoder.take(cap + 1), out.as_file_mut())
        .with_context(|| format!("decompressing {} (zstd)", path.display()))?;
    if copied > cap {
        anyhow::bail!(
            "{} decompresses to more than {} times its size (past {} MB): not read, as a decompression bomb would not be; decompress it yourself (`zstd -d`) to read it",
            path.display(),
            MAX_RATIO,
            cap >> 20
        );
    }
    out.as_file_mut().flush()?;
    Ok(Some(Arc::new(out.into_temp_path())))
}

/// How many times its size a compressed session may decompress to ([`spool`]),
/// past [`MIN_CAP`].
const MAX_RATIO: u64 = 100;
const MIN_CAP: u64 = 256 << 20;

/// Where spools live: `$TMPDIR/session-doctor-<what>-<pid>-…`.
const SPOOL_PREFIX: &str = "session-doctor-";

/// A temporary file for a spool (`what`: `zst`, `stdin`), named with this
/// process's id so that a later run removes it if this one is killed before
/// it could (`sweep_spools`); the sweep runs first.
pub fn spool_file(what: &str) -> std::io::Result<tempfile::NamedTempFile> {
    sweep_spools();
    tempfile::Builder::new()
        .prefix(&format!("{SPOOL_PREFIX}{what}-{}-", crate::atomic::run_tag()))
        .suffix(".jsonl")
        .tempfile()
}

/// Removes the spools of runs that are gone (interrupted, killed): those in
/// the temporary folder whose run is over ([`crate::atomic::run_gone`]).
fn sweep_spools() {
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(SPOOL_PREFIX)) else { continue };
        let Some((what, rest)) = rest.split_once('-') else { continue };
        let Some(run) = rest.split('-').next() else { continue };
        let ours = matches!(what, "zst" | "stdin") && entry.file_type().is_ok_and(|t| t.is_file());
        if ours && crate::atomic::run_gone(run) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
