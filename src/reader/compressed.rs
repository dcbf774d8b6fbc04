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
    let mut out = tempfile::Builder::new()
        .prefix("session-doctor-zst-")
        .suffix(".jsonl")
        .tempfile()
        .context("creating a temporary file for the decompressed session")?;
    // A file may hold several frames: they decode to their texts end to end (Codex writes one).
    let mut decoder =
        zstd::stream::read::Decoder::new(input).with_context(|| format!("decompressing {} (zstd)", path.display()))?;
    std::io::copy(&mut decoder, out.as_file_mut())
        .with_context(|| format!("decompressing {} (zstd)", path.display()))?;
    out.as_file_mut().flush()?;
    Ok(Some(Arc::new(out.into_temp_path())))
}
