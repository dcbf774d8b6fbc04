//! What Codex does with a rollout over its window when it resumes it.
//!
//! Codex 0.171.0 marks the window full when a request is refused for it: the
//! `token_count` event it writes after the refusal counts the whole window
//! (`total_token_usage.total_tokens` = `model_context_window`), and a resume
//! restores that count. Its next turn then compacts first, since the count is
//! past its auto-compaction limit: locally (a provider other than OpenAI's
//! own), with a summary request that carries no tools nor instructions, from
//! which it drops the oldest items while the provider refuses it for the
//! window ("Context window exceeded while compacting; removing oldest history
//! item"), and replaces the history by the user messages and the summary.
//! The round-trip suite drives it (`codex/context_overflow_trimmed`: "context
//! compacted", then a 200). OpenAI's own provider compacts remotely, which is
//! what users report failing for the window: no heal is claimed for it.

use std::io::BufRead;

use crate::json::Value;
use crate::json::splice::locate;

/// The first Codex release seen compacting an overflowed rollout on resume.
pub const COMPACTS_FROM: (u64, u64, u64) = (0, 171, 0);

/// What a rollout records that makes Codex compact it when it resumes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compaction {
    /// `session_meta.cli_version`.
    pub version: String,
    /// `session_meta.model_provider`.
    pub provider: String,
    /// The line of the last `token_count` event, which marks the window full.
    pub line: u64,
    /// The tokens it counts, and Codex's window.
    pub used: u64,
    pub window: u64,
    /// The bytes of the records the compacted history keeps (the user
    /// messages since the last compaction, and that compaction): at most what
    /// the history holds after the compaction, less the summary.
    pub kept_bytes: u64,
}

/// `Some` when the rollout read from `read` is one its Codex compacts on
/// resume: its version at or past [`COMPACTS_FROM`], a provider other than
/// OpenAI's own, and its last token count the full window.
pub fn compacts_on_resume(mut read: impl BufRead) -> Option<Compaction> {
    let mut buf = Vec::new();
    let (mut version, mut provider) = (None, None);
    let mut last: Option<(u64, u64, u64)> = None;
    let mut kept = 0u64;
    let mut n = 0u64;
    loop {
        buf.clear();
        match read.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => n += 1,
        }
        let line = buf.trim_ascii();
        let kind = |pointer: &str| locate(line, pointer).map(|r| &line[r]);
        match kind("/type") {
            Some(b"\"session_meta\"") if version.is_none() => {
                let v = Value::parse(line).ok()?;
                version = v.at(&["payload", "cli_version"]).to_text();
                provider = v.at(&["payload", "model_provider"]).to_text();
            }
            Some(b"\"compacted\"") => kept = line.len() as u64,
            Some(b"\"response_item\"") if kind("/payload/role") == Some(b"\"user\"") => kept += line.len() as u64,
            Some(b"\"event_msg\"") if kind("/payload/type") == Some(b"\"token_count\"") => {
                let Ok(v) = Value::parse(line) else { continue };
                let info = v.at(&["payload", "info"]);
                let used = info.at(&["total_token_usage", "total_tokens"]).as_f64();
                let window = info.get("model_context_window").as_f64();
                if let (Some(used), Some(window)) = (used, window) {
                    last = Some((n, whole(used), whole(window)));
                }
            }
            _ => {}
        }
    }
    let (version, provider) = (version?, provider?);
    let (line, used, window) = last?;
    let compacts = release(&version).is_some_and(|r| r >= COMPACTS_FROM) && provider != "openai";
    (compacts && window > 0 && used >= window).then_some(Compaction {
        version,
        provider,
        line,
        used,
        window,
        kept_bytes: kept,
    })
}

#[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a token count: negative or NaN is 0")]
fn whole(x: f64) -> u64 {
    x.max(0.0) as u64
}

/// `0.171.0` (or `0.171.0-alpha.2`) as numbers.
fn release(v: &str) -> Option<(u64, u64, u64)> {
    let core = v.trim().split(['-', '+']).next()?;
    let mut it = core.split('.').map(|p| p.parse::<u64>().ok());
    let r = (it.next()??, it.next()??, it.next().unwrap_or(Some(0))?);
    it.next().is_none().then_some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rollout(version: &str, provider: &str, used: u64) -> String {
        [
            format!(r#"{{"timestamp":"t","type":"session_meta","payload":{{"id":"x","cli_version":"{version}","model_provider":"{provider}"}}}}"#),
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#.into(),
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":110},"model_context_window":258400}}}"#.into(),
            format!(r#"{{"timestamp":"t","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"total_tokens":{used}}},"model_context_window":258400}}}}}}"#),
            r#"{"timestamp":"t","type":"event_msg","payload":{"type":"task_complete","error":{"message":"Codex ran out of room in the model's context window.","codex_error_info":"context_window_exceeded"}}}"#.into(),
        ]
        .join("\n")
    }

    #[test]
    fn a_full_window_on_a_release_that_compacts_locally() {
        let c = compacts_on_resume(rollout("0.171.0", "fake", 258_400).as_bytes()).expect("compacts");
        assert_eq!((c.line, c.used, c.window, c.version.as_str()), (4, 258_400, 258_400, "0.171.0"));
        assert!(c.kept_bytes > 0 && c.kept_bytes < 200, "{c:?}");
        assert!(compacts_on_resume(rollout("0.172.3-alpha.1", "ollama", 258_400).as_bytes()).is_some());
    }

    #[test]
    fn no_heal_is_claimed_where_none_was_seen() {
        // An older release, OpenAI's remote compaction, a count short of the window.
        assert_eq!(compacts_on_resume(rollout("0.170.9", "fake", 258_400).as_bytes()), None);
        assert_eq!(compacts_on_resume(rollout("0.171.0", "openai", 258_400).as_bytes()), None);
        assert_eq!(compacts_on_resume(rollout("0.171.0", "fake", 110).as_bytes()), None);
        assert_eq!(compacts_on_resume(rollout("dev", "fake", 258_400).as_bytes()), None);
    }

    #[test]
    fn releases() {
        assert_eq!(release("0.171.0"), Some((0, 171, 0)));
        assert_eq!(release("1.2"), Some((1, 2, 0)));
        assert_eq!(release("0.171.0-alpha.2"), Some((0, 171, 0)));
        assert_eq!(release("x.1.2"), None);
        assert_eq!(release("1.2.3.4"), None);
    }
}
