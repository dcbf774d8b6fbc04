//! Gemini CLI's `BeforeTool` hook protocol (checked against Gemini CLI 0.61.0's
//! bundle: `evaluateBeforeToolHook` and `_processToolCall` in
//! `packages/core/src/scheduler`, `BeforeToolHookOutput` in `hooks/types`).
//!
//! Gemini CLI runs the hook with one JSON object on stdin (`{session_id,
//! transcript_path, cwd, hook_event_name: "BeforeTool", timestamp, tool_name,
//! tool_input}`) and reads one JSON object from stdout. `decision: "deny"`
//! (or `"block"`) stops the call, and the model reads `Tool execution blocked:
//! <reason>` as the tool's result; `hookSpecificOutput.tool_input` replaces the
//! tool's arguments, which Gemini CLI validates again (`tool.build`) and only
//! then checks against its policy: the hook runs *before* the policy, so a
//! changed input is decided as the user's rules decide that input, and the
//! guard grants nothing (it never answers `allow` or `ask`). Printing nothing
//! lets the call go on.
//!
//! `read_file` (its `file_path`) is the tool that attaches images and PDFs as
//! `inlineData`. Gemini CLI reads only files in the workspace or its project
//! temporary folder (`~/.gemini/tmp/<project>`, the folder of the event's
//! `transcript_path`), so a fitted copy is kept there, in a folder of its own
//! (`session-doctor/fitted`, 0700): a copy in session-doctor's own cache would
//! fail Gemini CLI's path check. With no transcript to place it by, the Read
//! is denied and the reason names the fitted copy.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Decision;
use crate::media::rules::Rules;
use crate::model::Format;

/// The tools whose `file_path` the guard judges.
const GUARDED_TOOLS: [&str; 1] = ["read_file"];

/// The hook's answer to one `BeforeTool` event, or `None` to stay silent.
/// `cache` is where a fitted copy goes when the event names no project folder.
pub fn answer(event: &Value, rules: &Rules, cache: &Path) -> Option<Value> {
    let (input, path) = super::hooked_file(event, &GUARDED_TOOLS)?;
    // What the agent reads as text is none of the guard's business.
    if !super::reader::Reader::GeminiCli.sends_as_media(&path) {
        return None;
    }
    let readable = project_cache(event);
    // The image joins those the session holds (its chat file, the event's
    // `transcript_path`): past a provider's many-image threshold its stricter
    // side limit is what the request must meet.
    let held = super::transcript::named(event).map_or(0, |t| super::transcript::images_sent(&t, Format::GeminiCli));
    let decision = super::judge_file_among(&path, rules, readable.as_deref().unwrap_or(cache), &[], held + 1).ok()?;
    match decision {
        Decision::NotMedia | Decision::Pass => None,
        Decision::Deny { reason } => Some(json!({"decision": "deny", "reason": reason})),
        Decision::Fitted { path: copy, note } if readable.is_some() => {
            let mut updated = input.clone();
            updated["file_path"] = Value::String(copy.display().to_string());
            // No decision: the input changes, and Gemini CLI's policy decides the changed call.
            Some(json!({
                "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": updated},
                "systemMessage": note,
            }))
        }
        Decision::Fitted { path: copy, note } => Some(json!({
            "decision": "deny",
            "reason": format!(
                "session-doctor guard: {} was not read whole: {note} A copy that fits is {}; read that \
                 file instead (or ask the user to put it in the workspace).",
                path.display(),
                copy.display()
            ),
        })),
    }
}

/// Where a fitted copy is readable by Gemini CLI: `session-doctor/fitted` in
/// the project's temporary folder, the folder above the `chats/` folder that
/// holds the event's transcript.
fn project_cache(event: &Value) -> Option<PathBuf> {
    let transcript = Path::new(event.get("transcript_path")?.as_str()?);
    let chats = transcript.parent()?;
    if transcript.is_relative() || chats.file_name()? != "chats" {
        return None;
    }
    Some(chats.parent()?.join("session-doctor").join("fitted"))
}
