//! Claude Code's `PreToolUse` hook protocol.
//!
//! Claude Code runs the hook with one JSON object on stdin
//! (`{session_id, transcript_path, cwd, hook_event_name, tool_name,
//! tool_input, tool_use_id}`) and reads one JSON object from stdout:
//! `hookSpecificOutput.permissionDecision` (`allow`/`deny`/`ask`), a
//! `permissionDecisionReason` (shown to the model on `deny`) and, with
//! `allow`, an `updatedInput` that replaces the tool's arguments. Printing
//! nothing lets the call go on as if no hook ran. The guard answers only for
//! `Read` (the tool that attaches images and PDFs) and fails open: a hook
//! input it cannot understand is never a reason to stop the agent.

use std::path::Path;

use serde_json::{Value, json};

use super::Decision;
use crate::media::rules::Rules;

/// The tools whose `file_path` the guard judges.
const GUARDED_TOOLS: [&str; 1] = ["Read"];

/// The hook's answer to one `PreToolUse` event, or `None` to stay silent.
pub fn answer(event: &Value, rules: &Rules, cache: &Path) -> Option<Value> {
    let tool = event.get("tool_name")?.as_str()?;
    if !GUARDED_TOOLS.contains(&tool) {
        return None;
    }
    let input = event.get("tool_input")?;
    let file = input.get("file_path")?.as_str()?;
    let path = resolve(file, event.get("cwd").and_then(Value::as_str));
    match super::judge_file(&path, rules, cache).ok()? {
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
            Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "permissionDecisionReason": note,
                    "updatedInput": updated,
                }
            }))
        }
    }
}

/// Claude Code passes absolute paths; a relative one is taken from the event's `cwd`.
fn resolve(file: &str, cwd: Option<&str>) -> std::path::PathBuf {
    let p = Path::new(file);
    match cwd {
        Some(dir) if p.is_relative() => Path::new(dir).join(p),
        _ => p.to_path_buf(),
    }
}
