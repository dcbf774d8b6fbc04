//! Claude Code's subagent transcripts: `<project>/<session>/subagents/agent-<id>.jsonl`
//! (with `agent-<id>.meta.json` beside it), every record `isSidechain: true`
//! with its `agentId`. A subagent's requests are its own: the parent session
//! sends none of them (its Agent call gets the subagent's answer, or "Agent
//! terminated early due to an API error: …", as a tool result), and Claude Code
//! resumes no subagent file with `claude --resume` ("No conversation found").
//!
//! A *fork* subagent (`subagent_type: "fork"`) starts with a `fork-context-ref`
//! record instead of a copy of the conversation: its requests begin with the
//! parent session's history up to `parentLastUuid` (its main thread, without
//! side chains), read from `<project>/<parentSessionId>.jsonl`.

use std::io::{BufRead as _, Read as _};
use std::path::{Path, PathBuf};

/// What a subagent's transcript belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subagent {
    pub agent_id: String,
    /// The session that ran it.
    pub session_id: String,
    /// That session's own file (it may be gone).
    pub parent: PathBuf,
    /// For a fork: where in which session its requests begin.
    pub fork: Option<ForkRef>,
}

/// A `fork-context-ref` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForkRef {
    pub parent_session_id: String,
    pub parent_last_uuid: String,
    /// The session file that holds that history.
    pub parent: PathBuf,
}

/// The subagent `path` is the transcript of, when it sits where Claude Code
/// writes one: `<session>/subagents/agent-<id>.jsonl`, or (older builds)
/// `agent-<id>.jsonl` beside the session, its records on a side chain naming
/// the session that ran it.
pub fn of(path: &Path) -> Option<Subagent> {
    let name = path.file_name()?.to_str()?;
    let agent_id = name.strip_prefix("agent-")?.strip_suffix(".jsonl")?.to_string();
    let subagents = path.parent()?;
    if subagents.file_name()? != "subagents" {
        let first = first_record(path)?;
        let session_id = first.get("sessionId")?.as_str().filter(|id| is_file_id(id))?.to_string();
        if first.get("isSidechain")?.as_bool() != Some(true) {
            return None;
        }
        let parent = subagents.join(format!("{session_id}.jsonl"));
        return Some(Subagent { agent_id, session_id, parent, fork: None });
    }
    let session_dir = subagents.parent()?;
    let session_id = session_dir.file_name()?.to_str()?.to_string();
    let project = session_dir.parent()?;
    let parent = project.join(format!("{session_id}.jsonl"));
    let fork = fork_ref(path).map(|(parent_session_id, parent_last_uuid)| ForkRef {
        parent: project.join(format!("{parent_session_id}.jsonl")),
        parent_session_id,
        parent_last_uuid,
    });
    Some(Subagent { agent_id, session_id, parent, fork })
}

/// The `fork-context-ref` a fork's transcript starts with (its first line).
fn fork_ref(path: &Path) -> Option<(String, String)> {
    let v = first_record(path)?;
    if v.get("type")?.as_str()? != "fork-context-ref" {
        return None;
    }
    let id = v.get("parentSessionId")?.as_str().filter(|id| is_file_id(id))?;
    Some((id.to_string(), v.get("parentLastUuid")?.as_str()?.to_string()))
}

/// A transcript's first record. The records looked for are small; a first
/// line that is not (a whole history line) is none of them.
fn first_record(path: &Path) -> Option<serde_json::Value> {
    let file = std::fs::File::open(path).ok()?;
    let mut first = Vec::new();
    std::io::BufReader::new(file).take(64 << 10).read_until(b'\n', &mut first).ok()?;
    serde_json::from_slice(first.trim_ascii_end()).ok()
}

/// An id that names a file beside this session's: never a path.
fn is_file_id(id: &str) -> bool {
    !id.is_empty() && !id.contains(['/', '\\']) && !id.starts_with('.')
}
