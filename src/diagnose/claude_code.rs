//! Claude Code's block paths, read against the request it builds.
//!
//! Claude Code sends more than its `user`/`assistant` lines: its attachment
//! records become `role: "system"` messages and text blocks moved to the start
//! of a turn (see `preview::claude_code`), which shifts the provider's
//! `messages.N.content.M` numbering away from the entries'. So the path is
//! followed in the request preview builds — the same code that says what the
//! agent sends — and the media found there are matched to attachments by the
//! sha256 of their bytes.

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::model::Session;
use crate::preview::{self, Dialect};
use crate::rewrite::Rewrite;

/// The attachments `list`/`idx` names in the request the session stands for;
/// `None` when that request cannot be built or the path leads nowhere.
pub fn locate(session: &Session, list: &str, idx: &[u64]) -> Option<Vec<usize>> {
    if list != "messages" {
        return None;
    }
    let mut buf = Vec::new();
    let path = std::path::Path::new(&session.file);
    preview::preview(path, session, Rewrite::default(), false, Dialect::Anthropic, &mut buf).ok()?;
    let request: Value = serde_json::from_slice(&buf).ok()?;
    let mut node = request.get("messages")?.get(usize::try_from(idx[0]).ok()?)?;
    for &i in &idx[1..] {
        node = node.get("content")?.get(usize::try_from(i).ok()?)?;
    }
    let mut hashes = Vec::new();
    media_hashes(node, &mut hashes);
    let found: Vec<usize> = (0..session.attachments.len())
        .filter(|&i| session.attachments[i].sha256.as_ref().is_some_and(|h| hashes.contains(h)))
        .collect();
    (!found.is_empty()).then_some(found)
}

/// The sha256 (hex) of every inline image or document at or under `v`.
fn media_hashes(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            let media = matches!(o.get("type").and_then(Value::as_str), Some("image" | "document"));
            if let (true, Some(data)) = (media, v.pointer("/source/data").and_then(Value::as_str))
                && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data)
            {
                out.push(format!("{:x}", Sha256::digest(&bytes)));
            }
            o.values().for_each(|x| media_hashes(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| media_hashes(x, out)),
        _ => {}
    }
}

/// A subagent's transcript: what to say instead of a resume the agent does not
/// do. Claude Code resumes no subagent file, and its parent session sends none
/// of the subagent's requests, so where there is something to do the next
/// command is the parent's diagnosis.
pub fn subagent(session: &Session, notes: &mut Vec<String>, next: Vec<String>) -> Vec<String> {
    use crate::formats::claude_code_subagent;
    if session.format != crate::formats::Format::ClaudeCode {
        return next;
    }
    let Some(sub) = claude_code_subagent::of(std::path::Path::new(&session.file)) else {
        return next;
    };
    let parent = sub.parent.display().to_string();
    notes.push(format!(
        "this is the transcript of Claude Code subagent {} of session {}: its requests are its own, which the parent session does not send (its Agent call got the subagent's answer or failure as a tool result), and Claude Code resumes no subagent file",
        sub.agent_id, sub.session_id
    ));
    // Nothing to do stays nothing to do; otherwise the parent is what the user resumes.
    if !next.is_empty() && sub.parent.is_file() {
        vec![super::next::command(&parent, "", "diagnose", "")]
    } else {
        Vec::new()
    }
}

/// A fork subagent's requests start with its parent's history, which its file
/// does not hold: "nothing the next request carries is invalid" is not true
/// of it when that history holds invalid media (the reader's findings say which).
pub fn fork_verdict(session: &Session, verdict: &mut String) {
    let carried = session.findings.iter().filter(|f| f.code == Some("subagent.fork_media")).count();
    if carried > 0 && verdict.starts_with("healthy: no failure recorded, and nothing") {
        *verdict = format!(
            "healthy: no failure recorded; but every request of this fork carries its parent's history, where {carried} attachment{} {} invalid (`session-doctor scan` of this file names {})",
            if carried == 1 { "" } else { "s" },
            if carried == 1 { "is" } else { "are" },
            if carried == 1 { "it" } else { "them" }
        );
    }
}
