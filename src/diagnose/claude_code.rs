//! Claude Code's own turns in a diagnosis: its subagent transcripts and forks.

use crate::model::Session;

/// A subagent's transcript: what to say instead of a resume the agent does not
/// do. Claude Code resumes no subagent file, and its parent session sends none
/// of the subagent's requests, so where there is something to do the next
/// command is the parent's diagnosis.
pub fn subagent(session: &Session, notes: &mut Vec<String>, next: Vec<String>) -> Vec<String> {
    use crate::formats::claude_code::subagent;
    if session.format != crate::model::Format::ClaudeCode {
        return next;
    }
    let Some(sub) = subagent::of(std::path::Path::new(&session.file)) else {
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
