//! Gemini CLI deletes a session it can still resume (0.61.0; seen in the
//! round-trip suite, reproduced by hand: `tests/agents/NOTES-gemini-cli.md`).
//!
//! Its session cleanup, on by default (`general.sessionRetention`), runs at
//! every start: a file in the chats folder it cannot read as a session (no
//! message it could resume) is deleted, and with it every file of the same
//! short id (`session-<minute>-<id8>.jsonl`) but the current session's.
//! `gemini --resume` in a later minute than the session's first line starts
//! just such a file beside the session. From then on, the next start of
//! Gemini CLI on any other session (a new one, a repaired copy's resume)
//! deletes the session itself: a stuck session a user meant to rescue is gone.

use std::path::Path;

use crate::formats::LineOut;
use crate::json::Value;
use crate::model::Format;
use crate::model::{Finding, Severity};

use super::line;

/// A file beside the session larger than this is not read: the files the
/// cleanup deletes for want of a message are a line or two.
const LARGEST_READ: u64 = 1 << 20;

/// A warning on line 1 when a file beside the session shares its short id and
/// holds no message; nothing otherwise.
pub fn findings(path: &Path) -> Vec<Finding> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return Vec::new() };
    let (Some(short), Some(dir)) = (short_id(name), path.parent()) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut empty: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|other| other != name && short_id(other) == Some(short))
        .filter(|other| holds_no_message(&dir.join(other)))
        .collect();
    if empty.is_empty() {
        return Vec::new();
    }
    empty.sort();
    let message = format!(
        "Gemini CLI deletes this session the next time it starts on any other session (a new one, a repaired copy's resume): {} beside it shares its short id {short} and holds no message, and Gemini CLI's session cleanup deletes such a file with every file of its id; keep a copy of this file elsewhere, or set general.sessionRetention.enabled to false in ~/.gemini/settings.json",
        empty.join(", ")
    );
    vec![line::finding(1, Severity::Warning, "gemini.cleanup_deletes", message)]
}

/// The short id in a session file's name, `session-<minute>-<id8>.jsonl`.
fn short_id(name: &str) -> Option<&str> {
    let stem = name.strip_prefix("session-")?;
    let stem = stem.strip_suffix(".jsonl").or_else(|| stem.strip_suffix(".json"))?;
    let id = stem.rsplit('-').next()?;
    (id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()) && id.len() < stem.len()).then_some(id)
}

/// Whether the file holds no message Gemini CLI could resume (none at all:
/// a header, metadata). A file not read (too large, unreadable) holds some.
fn holds_no_message(path: &Path) -> bool {
    let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= LARGEST_READ);
    let Some(text) = small.then(|| std::fs::read(path).ok()).flatten() else { return false };
    let adapter = Format::GeminiCli.adapter();
    let none = |v: &Value<'_>| {
        let mut out = LineOut::default();
        adapter.read(v, &mut out);
        // The legacy form is one document with its `messages`.
        out.entries.is_empty() && v.get("messages").items().is_empty()
    };
    if let Ok(doc) = Value::parse(&text) {
        return none(&doc);
    }
    text.split(|b| *b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .all(|l| Value::parse(l).map_or(true, |v| none(&v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_short_id_is_the_last_eight_hex_digits_of_a_session_name() {
        assert_eq!(short_id("session-2026-12-01T08-00-c5d9e38f.jsonl"), Some("c5d9e38f"));
        assert_eq!(short_id("session-2026-12-01T08-00-c5d9e38f.json"), Some("c5d9e38f"));
        assert_eq!(short_id("session-c5d9e38f.jsonl"), None);
        assert_eq!(short_id("session-2026-12-01T08-00-c5d9e38f.jsonl.doctor"), None);
        assert_eq!(short_id("other-2026-12-01T08-00-c5d9e38f.jsonl"), None);
        assert_eq!(short_id("session-2026-12-01T08-00-nothex00.jsonl"), None);
    }
}
