//! Files beside a session that say what the session itself does not: Cline's
//! task folder keeps the model in `task_metadata.json` (`model_usage`, newest
//! last) and `ui_messages.json` (`modelInfo` on the messages), next to
//! `api_conversation_history.json`.

use std::path::Path;
use std::sync::Arc;

use crate::formats::assemble::{Extra, LineRecord};
use crate::formats::{Format, Unit, cline};

/// The files beside a Cline task's history that it reads.
const CLINE_FILES: [&str; 2] = ["task_metadata.json", "ui_messages.json"];

/// The files beside the session at `path` that reading it as `format` reads:
/// what no command may write over.
pub fn files(path: &Path, format: Format) -> Vec<std::path::PathBuf> {
    match (format, path.parent()) {
        (Format::Cline, Some(dir)) => CLINE_FILES.iter().map(|n| dir.join(n)).collect(),
        _ => Vec::new(),
    }
}

/// The model and provider the task folder names last.
fn cline_task(path: &Path) -> Option<(Option<String>, Option<String>)> {
    let dir = path.parent()?;
    let read = |name: &str| -> Option<serde_json::Value> {
        let text = std::fs::read(dir.join(name)).ok()?;
        serde_json::from_slice(&text).ok()
    };
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
        let ui = read(CLINE_FILES[1])?;
        ui.as_array()?.iter().rev().find_map(|m| {
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
    let extra =
        Extra { context_model: model.map(Arc::from), context_provider: provider.map(Arc::from), ..Extra::default() };
    Some(LineRecord { line: 0, offset: 0, len: 0, unit: Unit::Hidden, entries: 0..0, extra: Some(Box::new(extra)) })
}
