//! A Claude Code fork subagent's requests begin with its parent session's
//! history (see `formats::claude_code::subagent`): what is wrong there is wrong
//! in every request of the fork, though the fork's file does not hold it.
//! Reading the fork reads that part of the parent too, and reports its invalid
//! media as findings of the fork's `fork-context-ref` line (the parent is
//! where `exclude` and `repair` act on them).

use std::path::Path;

use crate::formats::claude_code::subagent;
use crate::media::Verdict;
use crate::model::Format;
use crate::model::{Finding, Severity};

use super::{ReadOptions, line};

/// Findings on the fork's first line about the parent history it carries;
/// nothing for a file that is not a fork subagent's transcript.
pub fn findings(path: &Path, opts: &ReadOptions) -> Vec<Finding> {
    let Some(fork) = subagent::of(path).and_then(|s| s.fork) else {
        return Vec::new();
    };
    let parent = fork.parent.display().to_string();
    // The parent is a top-level session, never a subagent: this reads no further.
    let read = (fork.parent != path)
        .then(|| {
            let opts = ReadOptions { format: Some(Format::ClaudeCode), session: None, ..opts.clone() };
            super::read_session(&fork.parent, &opts).ok()
        })
        .flatten();
    let upto = read.as_ref().and_then(|_| line_of(&fork.parent, &fork.parent_last_uuid));
    let (Some(session), Some(upto)) = (read, upto) else {
        let message = format!(
            "a fork of session {}: its requests begin with that session's history up to {}, but {parent} does not hold it; Claude Code then sends the fork's own messages alone",
            fork.parent_session_id, fork.parent_last_uuid
        );
        return vec![line::finding(1, Severity::Warning, "subagent.fork_parent_missing", message)];
    };
    session
        .attachments
        .iter()
        .filter(|a| a.line <= upto && a.verdict == Verdict::Invalid && a.sent())
        .map(|a| {
            let why = a.problems.first().map_or("invalid", |p| p.message.as_str());
            let name = a.name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
            let message = format!(
                "a fork of session {}: every request of it carries that session's history up to line {upto} of {parent}, where {}{name} at line {} is invalid: {why}",
                fork.parent_session_id, a.reference, a.line
            );
            line::finding(1, Severity::Error, "subagent.fork_media", message)
        })
        .collect()
}

/// The line of `path` whose record has this `uuid`.
fn line_of(path: &Path, uuid: &str) -> Option<u64> {
    use std::io::BufRead as _;
    let needle = format!("\"uuid\":\"{uuid}\"");
    let file = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    let mut r = std::io::BufReader::new(file);
    let mut n = 0;
    loop {
        buf.clear();
        if r.read_until(b'\n', &mut buf).ok()? == 0 {
            return None;
        }
        n += 1;
        if memchr::memmem::find(&buf, needle.as_bytes()).is_some() {
            return Some(n);
        }
    }
}
