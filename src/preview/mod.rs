//! `preview`: the request body the agent would send once the overlay and the
//! rewrites apply, in the agent's own dialect or converted to another.
//!
//! The records the provider sees are read again from their byte ranges, in
//! history order, one at a time: each gets the rewrite's edits, becomes
//! canonical messages ([`canon`]) and is written out at once ([`mod@write`]).
//! A logged request in its own dialect is printed as logged, edits applied.

pub mod canon;
mod gemini_cli;
pub mod read;
pub mod write;

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom, Write};
use std::path::Path;

use anyhow::Context as _;

use crate::model::{Role as EntryRole, Session};
use crate::rewrite::{self, Rewrite, splice};

pub use write::Dialect;

/// The dialect an agent speaks to the session's provider.
pub fn native(format: &str, provider: &str) -> Dialect {
    let family = match provider {
        "anthropic" | "bedrock" | "vertex-anthropic" => "anthropic",
        "gemini" | "vertex-gemini" => "gemini",
        "openai" | "azure-openai" => "openai",
        _ => "other",
    };
    match format {
        "claude-code" | "anthropic" | "cline" => Dialect::Anthropic,
        "codex" | "openai-responses" => Dialect::OpenaiResponses,
        "openai-chat" => Dialect::OpenaiChat,
        "gemini" | "gemini-cli" => Dialect::Gemini,
        _ => match family {
            "anthropic" => Dialect::Anthropic,
            "gemini" => Dialect::Gemini,
            "openai" => Dialect::OpenaiResponses,
            _ => Dialect::OpenaiChat,
        },
    }
}

/// Whether the file logs request bodies in `dialect` itself.
fn logged(format: &str) -> bool {
    matches!(format, "anthropic" | "openai-chat" | "openai-responses" | "gemini")
}

/// What a preview wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Previewed {
    pub target: &'static str,
    /// Messages or items in the request.
    pub items: u64,
    pub changes: rewrite::Summary,
    /// What the agent sends with every request that the session does not hold.
    pub not_in_session: &'static [&'static str],
}

/// What `format`'s agent adds to every request from outside the session.
pub fn not_in_session(format: &str) -> &'static [&'static str] {
    match format {
        "gemini-cli" => gemini_cli::NOT_IN_SESSION,
        "opencode" => &["the system prompt (opencode writes it for each request)", "the tool definitions"],
        _ => &[],
    }
}

/// Writes the request `session` would produce to `out`.
pub fn preview(
    path: &Path,
    session: &Session,
    rewrite: Rewrite,
    single_document: bool,
    dialect: Dialect,
    out: &mut dyn Write,
) -> anyhow::Result<Previewed> {
    let format = session.format;
    let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let model = session
        .entries
        .iter()
        .rev()
        .filter(|e| e.role == EntryRole::Assistant)
        .find_map(|e| e.model.as_deref().map(str::to_string));
    let mut read_record = |offset: u64, len: u64| -> anyhow::Result<Vec<u8>> {
        let mut buf = vec![0; usize::try_from(len)?];
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(&mut buf).with_context(|| format!("reading {}", path.display()))?;
        Ok(buf)
    };
    let edited = |text: &[u8], offset: u64, line: u64| -> Option<Vec<u8>> {
        let key = if single_document { 1 } else { line };
        match rewrite.ops.get(&key) {
            Some(ops) => rewrite::edits(format, text, offset, ops).map(|e| splice::apply(text, e)),
            None => Some(text.to_vec()),
        }
    };
    let summary = rewrite.summary.clone();

    // A logged request previewed in its own dialect: the body as logged.
    if logged(format) && native(format, "") == dialect {
        let Some(r) =
            session.records.iter().rev().find(|r| is_request(&read_record(r.offset, r.len).unwrap_or_default()))
        else {
            anyhow::bail!("{}: no logged request to preview", path.display());
        };
        let text = read_record(r.offset, r.len)?;
        let text = edited(&text, r.offset, r.line).unwrap_or_default();
        let body = ["/request", "/body", ""].iter().find_map(|p| {
            let range = splice::locate(&text, p)?;
            (text[range.start] == b'{' && (p.is_empty() || is_request(&text[range.clone()]))).then_some(range)
        });
        let body = body.map_or(&text[..], |r| &text[r]);
        out.write_all(body)?;
        out.write_all(b"\n")?;
        let items = serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| ["messages", "input", "contents"].iter().find_map(|k| v.get(k)?.as_array().map(Vec::len)))
            .unwrap_or(0) as u64;
        return Ok(Previewed {
            target: dialect.name(),
            items,
            changes: summary,
            not_in_session: not_in_session(format),
        });
    }

    let mut w = write::Writer::start(out, dialect, model.as_deref())?;
    let push = |w: &mut write::Writer<&mut dyn Write>, v: &serde_json::Value| -> std::io::Result<()> {
        let msgs = if logged(format) {
            let b = ["request", "body"].iter().find_map(|k| v.get(*k).filter(|b| b.is_object())).unwrap_or(v);
            read::body(format, b)
        } else {
            read::record(format, v)
        };
        msgs.into_iter().try_for_each(|m| w.push(m))
    };
    if single_document {
        // One JSON document: its elements (an array, or a `messages` list) are the records.
        if let Some(r) = session.records.first().copied() {
            let text = read_record(r.offset, r.len)?;
            if let Some(text) = edited(&text, r.offset, 1) {
                let doc: serde_json::Value =
                    serde_json::from_slice(&text).context("the edited document is not JSON")?;
                let list = doc
                    .as_array()
                    .or_else(|| doc.get("messages").and_then(|m| m.as_array()).filter(|_| !logged(format)));
                match list {
                    Some(items) => items.iter().try_for_each(|v| push(&mut w, v))?,
                    None => push(&mut w, &doc)?,
                }
            }
        }
    } else {
        for r in &session.records {
            let text = read_record(r.offset, r.len)?;
            let Some(text) = edited(&text, r.offset, r.line) else { continue };
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text) else { continue };
            push(&mut w, &v)?;
            // Interrupted calls of this turn get their result right after it.
            for op in rewrite.ops.get(&r.line).into_iter().flatten() {
                if let rewrite::Op::Answer { call_id, tool } = op {
                    let text = canon::Part::Text(rewrite::mend::INTERRUPTED.into());
                    let result =
                        canon::Part::Result { id: call_id.clone(), name: tool.clone(), parts: vec![text], error: true };
                    w.push(canon::Msg::new(canon::Role::User, vec![result]))?;
                }
            }
        }
    }
    let items = w.items;
    w.finish()?;
    Ok(Previewed { target: dialect.name(), items, changes: summary, not_in_session: not_in_session(format) })
}

fn is_request(text: &[u8]) -> bool {
    ["/messages", "/input", "/contents", "/request", "/body"].iter().any(|p| splice::locate(text, p).is_some())
}
