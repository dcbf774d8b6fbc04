//! Claude Code's `PreToolUse` hook protocol.
//!
//! Claude Code runs the hook with one JSON object on stdin
//! (`{session_id, transcript_path, cwd, hook_event_name, tool_name,
//! tool_input, tool_use_id}`) and reads one JSON object from stdout:
//! `hookSpecificOutput.permissionDecision` (`allow`/`deny`/`ask`), a
//! `permissionDecisionReason` (shown to the model on `deny`) and an
//! `updatedInput` that replaces the tool's arguments. Printing nothing lets
//! the call go on as if no hook ran. The guard never answers `allow`: that
//! skips the permission prompt, and a Read the user would be asked for (a
//! file outside the project) would go through unasked. A fitted image's
//! answer only changes the input; Claude Code then decides the permission as
//! it would have (the round-trip suite drives it: in a run that allows no
//! tool, such a Read stays refused). The guard answers only for
//! `Read` (the tool that attaches images and PDFs) and fails open: a hook
//! input it cannot understand is never a reason to stop the agent.

use std::path::Path;

use serde_json::{Value, json};

use super::Decision;
use crate::media::rules::Rules;

/// What a Read of some pages of a PDF does not send.
const PAGED: &[&str] = &["pdf.too_many_pages", "pdf.too_large"];

/// The tools whose `file_path` the guard judges.
const GUARDED_TOOLS: [&str; 1] = ["Read"];

/// The hook's answer to one `PreToolUse` event, or `None` to stay silent.
pub fn answer(event: &Value, rules: &Rules, cache: &Path) -> Option<Value> {
    let (input, path) = super::hooked_file(event, &GUARDED_TOOLS)?;
    // What the agent reads as text is none of the guard's business.
    if !super::reader::Reader::ClaudeCode.sends_as_media(&path) {
        return None;
    }
    // A PDF read by `pages` ("1-5", how Claude Code reads a large one) sends
    // those pages only: the whole file's page count and size are not what goes.
    let excused: &[&str] = if input.get("pages").is_some_and(|p| !p.is_null()) { PAGED } else { &[] };
    // The image joins those the session holds: past the provider's many-image
    // threshold, its stricter side limit is what the request must meet.
    let held = super::transcript::named(event).map_or(0, |t| super::transcript::images_held(&t));
    match super::judge_file_among(&path, rules, cache, excused, held + 1).ok()? {
        Decision::NotMedia | Decision::Pass => None,
        Decision::Deny { reason } => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        })),
        Decision::Fitted { path, note } => {
            let mut updated = input.clone();
            updated["file_path"] = Value::String(path.display().to_string());
            // No `permissionDecision`: the input changes, the permission is Claude Code's.
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecisionReason": note,
                    "updatedInput": updated,
                }
            }))
        }
    }
}
