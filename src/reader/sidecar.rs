//! Files beside a session that say what the session itself does not: Cline's
//! task folder keeps the model in `task_metadata.json` (`model_usage`, newest
//! last) and `ui_messages.json` (`modelInfo` on the messages), next to
//! `api_conversation_history.json`. `ui_messages.json` also records the
//! failure of the task's last API request, which the history does not. The
//! extension's `state/taskHistory.json`, two folders up, says which messages
//! of the history Cline no longer sends (a task's `conversationHistoryDeletedRange`).

use std::path::Path;
use std::sync::Arc;

use crate::formats::assemble::{Extra, LineRecord, Rare};
use crate::formats::{Unit, cline};
use crate::model::Format;
use crate::model::{Entry, ErrorRecord, Finding, Role, Severity};

/// The files beside a Cline task's history that it reads.
const CLINE_FILES: [&str; 2] = ["task_metadata.json", "ui_messages.json"];

/// The files beside the session at `path` that reading it as `format` reads:
/// what no command may write over.
pub fn files(path: &Path, format: Format) -> Vec<std::path::PathBuf> {
    match (format, path.parent()) {
        (Format::Cline, Some(dir)) => {
            CLINE_FILES.iter().map(|n| dir.join(n)).chain(task_history(path).map(|(f, _)| f)).collect()
        }
        // The outputs a session saved beside it (`<session>/tool-results/`, a
        // folder no output may land in), and the parent a fork subagent's
        // requests begin with.
        (Format::ClaudeCode, Some(dir)) => {
            let mut v: Vec<std::path::PathBuf> =
                path.file_stem().map(|s| dir.join(s).join("tool-results")).into_iter().collect();
            v.extend(crate::formats::claude_code::subagent::of(path).and_then(|s| s.fork).map(|f| f.parent));
            v
        }
        _ => Vec::new(),
    }
}

/// The extension's list of tasks, `<globalStorage>/state/taskHistory.json`
/// (`getTaskHistoryStateFilePath`), for the IDE task whose history is at
/// `path` (`<globalStorage>/tasks/<id>/…`), and the task's id: `None` for a
/// history that is not in a `tasks` folder (or is Cline CLI 3's).
fn task_history(path: &Path) -> Option<(std::path::PathBuf, String)> {
    if cline::request::is_task_document(&path.to_string_lossy()) {
        return None;
    }
    let dir = path.parent()?;
    let tasks = dir.parent().filter(|t| t.file_name().is_some_and(|n| n == "tasks"))?;
    let id = dir.file_name()?.to_str()?.to_string();
    Some((tasks.parent()?.join("state").join("taskHistory.json"), id))
}

/// The `conversationHistoryDeletedRange` of the IDE task at `path`, as the
/// extension keeps it on the task's `HistoryItem` (the first with its id, as
/// `getTaskWithId` finds it), and what keeps `taskHistory.json` from being
/// read, as a finding. `None` where Cline finds none: no such file (older
/// versions keep the list in VS Code's own database, which is not read), no
/// such task, no range.
pub fn deleted_range(path: &Path, format: Format) -> (Option<serde_json::Value>, Option<Finding>) {
    let Some((file, id)) = task_history(path).filter(|_| format == Format::Cline) else { return (None, None) };
    let unreadable = |why: String| {
        let message =
            format!("taskHistory.json of the task's extension {why}: which messages Cline no longer sends is not read");
        Some(Finding { line: 0, severity: Severity::Warning, message, code: Some("sidecar.unreadable") })
    };
    let text = match capped(&file) {
        None => return (None, None),
        Some(Err(why)) => return (None, unreadable(why)),
        Some(Ok(text)) => text,
    };
    let items = match serde_json::from_slice::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Array(items)) => items,
        Ok(_) => return (None, unreadable("is not a JSON array of tasks".into())),
        Err(e) => return (None, unreadable(format!("is not JSON ({e})"))),
    };
    let item = items.into_iter().find(|t| t.get("id").and_then(|i| i.as_str()) == Some(id.as_str()));
    (item.and_then(|mut t| t.get_mut("conversationHistoryDeletedRange").map(serde_json::Value::take)), None)
}

/// The model and provider the task folder names last.
fn cline_task(path: &Path) -> Option<(Option<String>, Option<String>)> {
    let dir = path.parent()?;
    // A metadata file past the cap names no model (a hostile one is not read whole).
    let read =
        |name: &str| -> Option<serde_json::Value> { serde_json::from_slice(&capped(&dir.join(name))?.ok()?).ok() };
    let ui = || ui_messages(dir)?.ok();
    let named = |model: Option<&str>, provider: Option<&str>| {
        let model = model.filter(|m| !m.is_empty()).map(str::to_string);
        let provider = provider.and_then(|p| cline::provider(p, model.as_deref()));
        (model.is_some() || provider.is_some()).then_some((model, provider))
    };
    let from_metadata = read(CLINE_FILES[0]).and_then(|m| {
        let last = m.get("model_usage")?.as_array()?.last()?.clone();
        named(last.get("model_id")?.as_str(), last.get("model_provider_id").and_then(|p| p.as_str()))
    });
    from_metadata.or_else(|| {
        ui()?.iter().rev().find_map(|m| {
            let info = m.get("modelInfo")?;
            named(info.get("modelId").and_then(|v| v.as_str()), info.get("providerId").and_then(|v| v.as_str()))
        })
    })
}

/// The provider the sidecar files name, as one of the built-in names.
pub fn provider(path: &Path, format: Format) -> Option<&'static str> {
    if format != Format::Cline {
        return None;
    }
    let (model, provider) = cline_task(path)?;
    let by_name = provider.as_deref().and_then(crate::provider::canonical);
    by_name.or_else(|| model.as_deref().and_then(crate::provider::for_model))
}

/// A record putting the sidecar's model and provider in force from the start,
/// for entries that do not name their own.
pub fn context(path: &Path, format: Format) -> Option<LineRecord> {
    if format != Format::Cline {
        return None;
    }
    let (model, provider) = cline_task(path)?;
    let rare =
        Rare { context_model: model.map(Arc::from), context_provider: provider.map(Arc::from), ..Rare::default() };
    let extra = Extra { rare: Some(Box::new(rare)), ..Extra::default() };
    Some(LineRecord { line: 0, offset: 0, len: 0, unit: Unit::Hidden, entries: 0..0, extra: Some(Box::new(extra)) })
}

/// The most of a task's `ui_messages.json` read: Cline appends every message
/// it shows there, images included; past this the file is a finding, not read.
pub const MAX_UI: u64 = 64 << 20;

/// A task's `ui_messages.json` (Cline's `ClineMessage[]`): `None` when the
/// folder has none, else its messages or, in words, why they cannot be read.
fn ui_messages(dir: &Path) -> Option<Result<Vec<serde_json::Value>, String>> {
    let name = CLINE_FILES[1];
    let text = match capped(&dir.join(name))? {
        Ok(text) => text,
        Err(why) => return Some(Err(format!("{name} beside the history {why}"))),
    };
    // serde_json refuses nesting deeper than 128: a hostile file is an error, not a stack overflow.
    Some(match serde_json::from_slice::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Array(items)) => Ok(items),
        Ok(_) => Err(format!("{name} beside the history is not a JSON array of messages")),
        Err(e) => Err(format!("{name} beside the history is not JSON ({e})")),
    })
}

/// A file beside the history, read whole up to [`MAX_UI`]: `None` when there
/// is none, else its bytes or why they are not read.
fn capped(path: &Path) -> Option<Result<Vec<u8>, String>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    let mut text = Vec::new();
    if let Err(e) = file.take(MAX_UI + 1).read_to_end(&mut text) {
        return Some(Err(format!("cannot be read ({e})")));
    }
    if text.len() as u64 > MAX_UI {
        return Some(Err(format!("is over {} MiB, more than is read", MAX_UI >> 20)));
    }
    Some(Ok(text))
}

/// What a message is: its `ask` or `say`.
fn kind(m: &serde_json::Value) -> (Option<&str>, Option<&str>) {
    let s = |k: &str| m.get(k).and_then(|v| v.as_str());
    (s("ask"), s("say"))
}

/// The provider's error of the task's last API request, when it failed, as
/// Cline records it (`src/core/task/index.ts`, `attemptApiRequest`): the
/// request's `say: "api_req_started"` gets `streamingFailedMessage` (its
/// `ClineError` serialized), and, once the automatic retries are spent, an
/// `ask: "api_req_failed"` with the same text ends the messages. A manual
/// retry deletes `streamingFailedMessage` again; reopening the task appends a
/// `resume_task` ask, which is skipped here as resume does.
fn last_failure(messages: &[serde_json::Value]) -> Option<String> {
    let resume = |m: &&serde_json::Value| matches!(kind(m).0, Some("resume_task" | "resume_completed_task"));
    let last = messages.iter().rev().find(|m| !resume(m))?;
    if kind(last).0 == Some("api_req_failed") {
        return Some(last.get("text").and_then(|t| t.as_str()).unwrap_or_default().to_string());
    }
    let at = messages.iter().rposition(|m| kind(m).1 == Some("api_req_started"))?;
    let info: serde_json::Value = serde_json::from_str(messages[at].get("text")?.as_str()?).ok()?;
    if let Some(t) = info.get("streamingFailedMessage").and_then(|t| t.as_str()).filter(|t| !t.is_empty()) {
        return Some(t.to_string());
    }
    // During its automatic retries Cline moves the failure into an `error_retry`
    // message and clears `streamingFailedMessage` (`attemptApiRequest`): a task
    // left there (killed, reloaded) failed, unless something answered since or
    // the user retried by hand (`api_req_retried`, whose outcome is not recorded).
    let after = &messages[at + 1..];
    let k = after.iter().rposition(|m| kind(m).1 == Some("error_retry"))?;
    let moved_on = |m: &serde_json::Value| {
        matches!(kind(m).1, Some("text" | "tool" | "completion_result" | "reasoning" | "api_req_retried"))
    };
    let retry = Some(&after[k]).filter(|_| !after[k..].iter().any(moved_on))?;
    let info: serde_json::Value = serde_json::from_str(retry.get("text")?.as_str()?).ok()?;
    info.get("errorMessage")?.as_str().filter(|t| !t.is_empty()).map(str::to_string)
}

/// Where a failure read from `ui_messages.json` is: beside the history, on
/// none of its lines (its entry's line is 0).
pub const RECORDED_BESIDE: &str = "the failure is recorded in ui_messages.json beside the history (the task's last API request failed), on none of the history's lines";

/// The failure of a Cline task's last API request (`last_failure`) as an
/// entry after the history's last, and what keeps `ui_messages.json` from
/// being read, as a finding.
pub fn failure(path: &Path, format: Format) -> (Option<Entry>, Option<Finding>) {
    let Some(dir) = path.parent().filter(|_| format == Format::Cline) else { return (None, None) };
    let messages = match ui_messages(dir) {
        None => return (None, None),
        Some(Err(why)) => {
            let message = format!("{why}: a failure it records is not read");
            let f = Finding { line: 0, severity: Severity::Warning, message, code: Some("sidecar.unreadable") };
            return (None, Some(f));
        }
        Some(Ok(m)) => m,
    };
    let Some(text) = last_failure(&messages) else { return (None, None) };
    // `ClineError.serialize()`: {message, status, request_id, code, modelId, providerId, details}.
    let error: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let field = |k: &str| error.as_ref().and_then(|e| e.get(k)).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
    let model = field("modelId").map(str::to_string);
    let provider = field("providerId").and_then(|p| cline::provider(p, model.as_deref()));
    let status = error.as_ref().and_then(|e| e.get("status")?.as_u64()).and_then(|s| u16::try_from(s).ok());
    let record = ErrorRecord { text: field("message").map_or(text.clone(), str::to_string), status };
    let entry = Entry {
        line: 0,
        role: Role::System,
        accepted: false,
        model: model.map(Arc::from),
        provider: provider.map(Arc::from),
        error: Some(Box::new(record)),
        blocks: 0,
        empty: false,
        heals: None,
    };
    (Some(entry), None)
}

/// The messages a repaired copy's `ui_messages.json` leaves out: every
/// `ask: "api_req_failed"` and `say: "error"`. Cline CLI 2 (`cline -T <id>`,
/// `cli/src/utils/plain-text-task.ts`) fails the resumed task on the first such
/// message it finds among the task's messages, old ones included (Cline issue
/// 9948); they are only shown, never sent to the model.
fn stops_resume(m: &serde_json::Value) -> bool {
    matches!(kind(m), (Some("api_req_failed"), _) | (_, Some("error")))
}

/// The task's `ui_messages.json` without the messages that stop its resume
/// (`stops_resume`) and how many it leaves out; `None` when it holds none
/// (or cannot be read).
pub fn mended_ui(src: &Path) -> Option<(Vec<u8>, usize)> {
    let mut messages = ui_messages(src.parent()?)?.ok()?;
    let before = messages.len();
    messages.retain(|m| !stops_resume(m));
    let dropped = before - messages.len();
    (dropped > 0).then(|| (serde_json::to_vec(&messages).unwrap_or_default(), dropped))
}
