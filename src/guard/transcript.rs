//! How many images a session already holds, read from the agent's transcript
//! (Claude Code's and Gemini CLI's hook events name it: `transcript_path`), so the guard can
//! judge an image as one of the request's many (issue 37, item 13): above 20
//! images Anthropic refuses any side over 2000 px, and a phone screenshot
//! read into a session holding 22 images sticks it.
//!
//! The count is a scan for image blocks as Claude Code writes them
//! (`"type":"image"`, compact JSON; inside a string the quotes are escaped,
//! so quoted text never counts), in 64 KiB pieces over the transcript's last
//! [`MAX_READ`] bytes: memory stays at one piece whatever the transcript's
//! size. A compaction (`"subtype":"compact_boundary"`) starts the request
//! afresh, so the count restarts there. Counting too many only fits an image
//! that did not need it; a transcript that cannot be read counts none.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use crate::model::Format;
use crate::reader::ReadOptions;

/// The most of a transcript read (its end): the images a request carries are
/// its latest ones.
pub const MAX_READ: u64 = 256 << 20;

const PIECE: usize = 64 << 10;
const IMAGE: &[&[u8]] = &[b"\"type\":\"image\"", b"\"type\": \"image\""];
const COMPACTED: &[u8] = b"\"subtype\":\"compact_boundary\"";

/// The transcript a hook event names (`transcript_path`: Claude Code's and
/// Gemini CLI's events), when it is an absolute path. Cline's event names none
/// (3.0.65: `taskId`, `workspaceRoots`, `sessionContext`): its guard counts nothing.
pub fn named(event: &serde_json::Value) -> Option<PathBuf> {
    let path = Path::new(event.get("transcript_path")?.as_str()?);
    path.is_absolute().then(|| path.to_path_buf())
}

/// The images the transcript at `path` holds since its last compaction.
pub fn images_held(path: &Path) -> usize {
    count(path).unwrap_or(0)
}

/// The images the next request from the session at `path` (of `format`)
/// carries, as the reader reads it: for a format a byte scan cannot count
/// (Gemini CLI writes a message again each time it changes, and checkpoints
/// the whole list in `$set` lines). A session over [`MAX_READ`] bytes, or one
/// that cannot be read, counts none: the guard fails open.
pub fn images_sent(path: &Path, format: Format) -> usize {
    let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_READ);
    let opts = ReadOptions { format: Some(format), ..ReadOptions::default() };
    let read = small.then(|| crate::reader::read_session(path, &opts).ok()).flatten();
    read.map_or(0, |s| s.attachments.iter().filter(|a| a.sent() && a.is_image()).count())
}

fn count(path: &Path) -> std::io::Result<usize> {
    let mut f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Ok(0);
    }
    f.seek(SeekFrom::Start(meta.len().saturating_sub(MAX_READ)))?;
    let mut f = f.take(MAX_READ);
    let keep = IMAGE.iter().chain([&COMPACTED]).map(|p| p.len()).max().unwrap_or(0) - 1;
    let mut buf = vec![0u8; PIECE + keep];
    let (mut carried, mut images) = (0usize, 0usize);
    loop {
        let n = f.read(&mut buf[carried..])?;
        if n == 0 {
            return Ok(images);
        }
        let window = &buf[..carried + n];
        // A match wholly inside the carried bytes was counted last time.
        let fresh = |at: usize, len: usize| at + len > carried;
        let mut last_compaction = None;
        for at in memchr::memmem::find_iter(window, COMPACTED) {
            if fresh(at, COMPACTED.len()) {
                last_compaction = Some(at);
            }
        }
        if let Some(c) = last_compaction {
            images = 0;
            images += IMAGE.iter().map(|p| memchr::memmem::find_iter(&window[c..], p).count()).sum::<usize>();
        } else {
            for p in IMAGE {
                images += memchr::memmem::find_iter(window, p).filter(|&at| fresh(at, p.len())).count();
            }
        }
        let tail = window.len().min(keep);
        let from = window.len() - tail;
        buf.copy_within(from..from + tail, 0);
        carried = tail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(text: &str) -> usize {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, text).unwrap();
        images_held(&p)
    }

    #[test]
    fn image_blocks_are_counted_and_quoted_text_is_not() {
        let img = r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}"#;
        let line =
            format!(r#"{{"message":{{"content":[{img},{img},{{"type":"text","text":"\"type\":\"image\""}}]}}}}"#);
        assert_eq!(held(&format!("{line}\n{line}\n")), 4);
        assert_eq!(held("{}\n"), 0);
        assert_eq!(images_held(Path::new("/nonexistent/t.jsonl")), 0);
    }

    #[test]
    fn a_compaction_starts_the_count_again() {
        let img = r#"{"content":[{"type":"image"}]}"#;
        let text = format!("{img}\n{img}\n{{\"type\":\"system\",\"subtype\":\"compact_boundary\"}}\n{img}\n");
        assert_eq!(held(&text), 1);
    }

    #[test]
    fn a_block_split_across_pieces_is_counted_once() {
        for pad in [PIECE - 20, PIECE - 7, PIECE - 1, PIECE, PIECE + 3] {
            let text = format!("{}{}\n", " ".repeat(pad), r#"{"type":"image"}"#);
            assert_eq!(held(&text), 1, "pad {pad}");
        }
    }
}
