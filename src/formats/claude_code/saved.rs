//! Claude Code's persisted tool results: a text result over the tool's limit
//! is written to `<project>/<session>/tool-results/<name>.txt` (`.json` for a
//! list of text blocks), and the transcript keeps, as the result's content,
//!
//! ```text
//! <persisted-output>
//! Output too large (101.6KB). Full output saved to: /…/<session>/tool-results/bkq34oktu.txt
//!
//! Preview (first 2KB):
//! …
//! </persisted-output>
//! ```
//!
//! (`toolUseResult.persistedOutputPath` and `persistedOutputSize` repeat the
//! file and its size). That text is what every request carries — 2.1.332 never
//! sends the file — so the history needs nothing from the file to be sent; but
//! the model was told the file holds the rest, and a Read of a file that is gone
//! or cut short fails or misleads. The agent persists only text results (a
//! result with an image or document is kept inline), so a saved file that is
//! media is not the agent's own: its bytes are judged like an attachment's.

use std::path::Path;

use crate::json::Value;
use crate::media::{Depth, Facts};
use crate::model::Severity;

use crate::formats::LineOut;

/// Where the transcript's reference names the saved file.
const SAVED_TO: &str = "saved to: ";

/// Checks the files this line's tool results were saved to (the reference the
/// line holds, and `toolUseResult`'s copy of it), and reports each one that is
/// gone, differs from the size the agent recorded, or is broken media.
pub(super) fn check<'a>(v: &'a Value<'a>, out: &mut LineOut<'a>) {
    let r = v.get("toolUseResult");
    let recorded = r.get("persistedOutputPath").as_str();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a whole number ≥ 0; `as` saturates")]
    let size = r.get("persistedOutputSize").as_f64().filter(|n| n.fract() == 0.0 && *n >= 0.0).map(|n| n as u64);
    let mut paths: Vec<&str> = Vec::new();
    for block in v.at(&["message", "content"]).items() {
        if block.get("type").as_str() != Some("tool_result") {
            continue;
        }
        if let Some(p) = reference(block.get("content")) {
            paths.push(p);
        }
    }
    if let Some(p) = recorded {
        paths.push(p);
    }
    paths.sort_unstable();
    paths.dedup();
    for p in paths {
        let expected = size.filter(|_| recorded == Some(p));
        if let Some((code, message)) = judge(Path::new(p), expected) {
            out.findings.push((Severity::Warning, code, message));
        }
    }
}

/// The file a `<persisted-output>` result names.
fn reference<'a>(content: &'a Value<'a>) -> Option<&'a str> {
    let text = match content.as_str() {
        Some(s) => s,
        None => content.items().first()?.get("text").as_str()?,
    };
    let body = text.trim_start().strip_prefix("<persisted-output>")?;
    let at = body.find(SAVED_TO)? + SAVED_TO.len();
    let path = body[at..].lines().next()?.trim();
    (!path.is_empty()).then_some(path)
}

/// Larger saved files are told by their size alone (the agent caps what it saves at 64 MB).
const READ_CAP: u64 = 64 << 20;

/// What is wrong with the saved file at `path`, if anything. Only a path where
/// the agent saves (`…/tool-results/<name>`) is looked at, and only a regular
/// file is read: the session's text is not trusted to name a device or a FIFO.
fn judge(path: &Path, expected: Option<u64>) -> Option<(&'static str, String)> {
    if !path.is_absolute() || path.parent().and_then(Path::file_name).is_none_or(|d| d != "tool-results") {
        return None;
    }
    let shown = path.display();
    let gone = |why: String| {
        let message = format!(
            "the tool result's full output was saved to {shown}, which {why}: the agent sends only the preview kept in the session, and a Read of that file fails"
        );
        Some(("saved_output.missing", message))
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => m,
        Ok(_) => return gone("is not a file".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return gone("does not exist".into()),
        Err(e) => return gone(format!("cannot be read ({e})")),
    };
    let bytes = if meta.len() <= READ_CAP {
        match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => return gone(format!("cannot be read ({e})")),
        }
    } else {
        Vec::new()
    };
    let facts = Facts::examine(&bytes, None, Depth::Structural);
    if let (Some(mime), Some(p)) = (facts.mime_detected(), facts.damage.first()) {
        return Some((
            "saved_output.media",
            format!("the tool result's saved output {shown} is {mime} that does not validate: {}", p.message),
        ));
    }
    match expected {
        Some(n) if n != meta.len() => Some((
            "saved_output.size",
            format!(
                "the tool result's saved output {shown} holds {} bytes where the agent saved {n}: it was cut or changed since",
                meta.len()
            ),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_read_from_the_text_the_agent_keeps() {
        let text = "<persisted-output>\nOutput too large (101.6KB). Full output saved to: /p/s/tool-results/b.txt\n\nPreview (first 2KB):\nx\n</persisted-output>";
        let json = serde_json::to_string(text).unwrap();
        let v = Value::parse(json.as_bytes()).unwrap();
        assert_eq!(reference(&v), Some("/p/s/tool-results/b.txt"));
        let cap = "<persisted-output>\nOutput exceeded the 64KB persist limit; only the first 64KB were saved to: /p/b.json\n";
        let json = serde_json::to_string(&[serde_json::json!({"type": "text", "text": cap})]).unwrap();
        let v = Value::parse(json.as_bytes()).unwrap();
        assert_eq!(reference(&v), Some("/p/b.json"));
        let plain = Value::parse(br#""Output too large. Full output saved to: /p/b.txt""#).unwrap();
        assert_eq!(reference(&plain), None, "only the agent's own <persisted-output> wrapper is a reference");
    }

    #[test]
    fn only_files_where_the_agent_saves_are_read() {
        // A session is untrusted: it may name a device; nothing outside a tool-results folder is opened.
        assert_eq!(judge(Path::new("/dev/zero"), None), None);
        assert_eq!(judge(Path::new("tool-results/x.txt"), None), None, "a relative path is not the agent's");
        let dir = tempfile::tempdir().unwrap();
        let saved = dir.path().join("tool-results");
        std::fs::create_dir(&saved).unwrap();
        assert_eq!(judge(&saved, None), None, "the folder itself is not a saved file's path");
        let not_a_file = saved.join("sub");
        std::fs::create_dir(&not_a_file).unwrap();
        assert_eq!(judge(&not_a_file, None).map(|(c, _)| c), Some("saved_output.missing"), "not a file: not read");
        assert_eq!(judge(&saved.join("gone"), None).map(|(c, _)| c), Some("saved_output.missing"));
    }
}
