//! Cline's `PreToolUse` hook protocol (checked against Cline 3.0.65's bundle:
//! the hook file discovery `LW`, the answer parsing `lE` and `Up0`, and driven
//! in the round-trip suite).
//!
//! Cline runs every executable named `PreToolUse` in its hooks folders
//! (`~/.cline/hooks`, `~/Documents/Cline/Hooks`, a workspace's
//! `.clinerules/hooks`) with one JSON object on stdin (`{…, hookName:
//! "tool_call", tool_call: {id, name, input}, preToolUse: {toolName,
//! parameters}}`) and reads one JSON object from stdout (the last line
//! starting `HOOK_CONTROL\t`, else the whole output). Its answer cannot refuse
//! one call: `cancel` ends the whole run (it becomes `stop`, and the agent
//! throws). What it can do is `overrideInput`, which replaces the tool's
//! input. So for `read_files` (`files: [{path, …}]`, the tool that attaches
//! images) the guard swaps each path it must keep out: an oversized image for
//! its fitted copy, a broken file for a note (a text file holding the reason),
//! which Cline reads in its place, so the model reads why. The input changes
//! only; Cline's own approval of the call stands as it was.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Decision;
use crate::media::rules::Rules;

/// The tool whose files the guard judges.
const GUARDED_TOOL: &str = "read_files";

/// The hook's answer to one `tool_call` event, or `None` to stay silent.
pub fn answer(event: &Value, rules: &Rules, cache: &Path) -> Option<Value> {
    let call = event.get("tool_call")?;
    if call.get("name")?.as_str()? != GUARDED_TOOL {
        return None;
    }
    let input = call.get("input")?;
    let files = input.get("files")?.as_array()?;
    let cwd = event.get("workspaceRoots").and_then(|r| r.get(0)).and_then(Value::as_str);
    let mut updated = input.clone();
    let mut changed = false;
    for (i, f) in files.iter().enumerate() {
        let Some(file) = f.get("path").and_then(Value::as_str) else { continue };
        let path = super::resolve(file, cwd);
        // What Cline reads as text is none of the guard's business.
        if !super::reader::Reader::Cline.sends_as_media(&path) {
            continue;
        }
        let swap = match super::judge_file(&path, rules, cache) {
            Ok(Decision::Fitted { path: copy, .. }) => copy,
            Ok(Decision::Deny { reason }) => match note(&reason, cache) {
                Ok(n) => n,
                Err(_) => continue,
            },
            _ => continue,
        };
        updated["files"][i]["path"] = Value::String(swap.display().to_string());
        changed = true;
    }
    changed.then(|| json!({"overrideInput": updated}))
}

/// A private text file holding `reason`, for Cline to read in a broken file's
/// place: `<cache>/notes/<sha256 of the reason>.txt`.
fn note(reason: &str, cache: &Path) -> anyhow::Result<PathBuf> {
    use sha2::Digest as _;
    let dir = cache.join("notes");
    super::private_dir(&dir)?;
    let digest = sha2::Sha256::digest(reason.as_bytes());
    let stem: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let out = dir.join(format!("{stem}-not-read.txt"));
    let (replace, mode) = (crate::atomic::Existing::Replace, Some(0o600));
    crate::atomic::write_with_mode(&out, replace, mode, &[], |w| Ok(w.write_all(reason.as_bytes())?))?;
    Ok(out)
}
