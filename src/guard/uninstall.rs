//! `guard uninstall`: take the guard's own hook entries out of an agent's JSON
//! settings, by byte range (see [`crate::json::splice`]), so everything else
//! stays as the user wrote it. What it writes goes through
//! [`super::install::apply`]: the old file is kept as
//! `<file>.session-doctor-backup`, the mode and owner are kept, and the write
//! is atomic. A list or `hooks` object left empty goes too, so uninstalling
//! what install added gives back the file as it was. Nothing of the guard's
//! there: nothing changes.

use std::path::Path;

use anyhow::{Context as _, bail};
use serde_json::Value;

use super::install::{Plan, backup_path, has_mark, read_existing};
use crate::json::splice;

/// Plans removing every entry of `hooks.<event>` in `file` whose command
/// holds `mark` (the guard's own: `guard --hook <agent>`).
pub fn plan_unhook(file: &Path, event: &str, mark: &str) -> anyhow::Result<Plan> {
    let old = match read_existing(file)? {
        Some(b) => String::from_utf8(b).with_context(|| format!("{} is not UTF-8 text", file.display()))?,
        None => String::new(),
    };
    let nothing =
        |summary: String| Plan { file: file.to_path_buf(), already: true, summary, text: old.clone(), backup: None };
    if old.trim().is_empty() {
        return Ok(nothing(format!("no hooks.{event} entry of the guard")));
    }
    let parsed: Value = serde_json::from_str(&old)
        .with_context(|| format!("{} is not valid JSON; fix it first, nothing was changed", file.display()))?;
    let list = match parsed.pointer(&format!("/hooks/{event}")) {
        None => return Ok(nothing(format!("no hooks.{event} entry of the guard"))),
        Some(Value::Array(list)) => list,
        Some(_) => bail!("{}: hooks.{event} is not a list; nothing was changed", file.display()),
    };
    let ours: Vec<usize> = (0..list.len()).filter(|&i| has_mark(&list[i], mark)).collect();
    if ours.is_empty() {
        return Ok(nothing(format!("no hooks.{event} entry of the guard")));
    }
    let removed: Vec<String> = ours.iter().map(|&i| serde_json::to_string(&list[i])).collect::<Result<_, _>>()?;
    let mut text = old.clone().into_bytes();
    // From the last to the first, so the indexes before each one stay right.
    for &i in ours.iter().rev() {
        let pointer = format!("/hooks/{event}/{i}");
        let edit =
            splice::remove(&text, &pointer).with_context(|| format!("{}: cannot find {pointer}", file.display()))?;
        text = splice::apply(&text, &[edit]);
    }
    // A list (and a `hooks` object) left empty goes too: what install added
    // around the entry is taken out with it, and an empty list means no hooks.
    for pointer in [format!("/hooks/{event}"), "/hooks".to_string()] {
        if splice::count(&text, &pointer) == Some(0)
            && let Some(edit) = splice::remove(&text, &pointer)
        {
            text = splice::apply(&text, &[edit]);
        }
    }
    let text = String::from_utf8(text)?;
    serde_json::from_str::<Value>(&text).context("the settings would not be valid JSON; nothing was changed")?;
    Ok(Plan {
        file: file.to_path_buf(),
        already: false,
        summary: format!("removes from hooks.{event}: {}", removed.join(", ")),
        text,
        backup: Some(backup_path(file)),
    })
}
