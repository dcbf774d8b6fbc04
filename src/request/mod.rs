//! What a provider receives: the vocabulary every agent's adapter builds its
//! request in. An adapter turns its records into a request through a
//! [`Render`] (most through canonical messages, [`canon`], that the
//! [`write::Writer`] merges, pairs and writes in a [`Dialect`]); `preview`
//! writes that request and `diagnose` reads a provider's block path in it.
//! [`read`] turns a dialect's messages into canonical ones.

pub mod canon;
pub mod read;
pub mod write;

use std::io::Write;

use crate::model::Session;

pub use write::Dialect;

/// The API of a provider (any spelling of the vocabulary: pi's `google`,
/// `openai-codex`), for an agent that talks to any: OpenAI's own is Responses,
/// an unknown one is taken for OpenAI-compatible Chat Completions.
pub fn of_provider(provider: &str) -> Dialect {
    match crate::provider::canonical(provider).unwrap_or(provider) {
        "anthropic" | "bedrock" | "vertex-anthropic" => Dialect::Anthropic,
        "gemini" | "vertex-gemini" => Dialect::Gemini,
        "openai" | "azure-openai" => Dialect::OpenaiResponses,
        _ => Dialect::OpenaiChat,
    }
}

/// The writer a [`Render`] writes the request with.
pub type Out<'a> = write::Writer<&'a mut dyn Write>;

/// How an agent turns its records, in history order, into the request it
/// sends: each adapter gives one ([`crate::formats::Adapter::request`]), and
/// `preview` is one loop over it. The same request, its payloads standing
/// for their byte ranges, is what `diagnose` indexes a provider's block path by.
pub trait Render {
    /// Before the first record: the writer's options the agent's request needs.
    fn begin(&mut self, _w: &mut Out<'_>) {}
    /// A one-document session's whole (edited) text and its parsed form,
    /// before its elements come as records.
    fn document(&mut self, _text: &[u8], _doc: &mut serde_json::Value) {}
    /// One record, the rewrite's edits applied; `part`: which message of a
    /// record seen in parts ([`crate::model::Record::part`]).
    fn record(&mut self, v: &serde_json::Value, part: Option<u32>, w: &mut Out<'_>) -> std::io::Result<()>;
    /// A message the rewrite adds right after a record (an interrupted call's answer).
    fn added(&mut self, m: canon::Msg, w: &mut Out<'_>) -> std::io::Result<()> {
        w.push(m)
    }
    /// The end of the history: what the agent still holds.
    fn finish(&mut self, _w: &mut Out<'_>) -> std::io::Result<()> {
        Ok(())
    }
}

/// An agent whose request the canonical writer shapes: each record is its
/// canonical messages ([`canon`]), and the writer merges, pairs and writes them.
pub struct Canon<F> {
    messages: F,
    document: Option<Prepare>,
}

/// What an agent does to its one-document history before it sends its
/// messages (opencode's revert, Cline's cut): it may capture what the
/// session's reading found.
pub type Prepare = Box<dyn FnMut(&mut serde_json::Value)>;

impl<F: FnMut(&serde_json::Value, Option<u32>) -> Vec<canon::Msg>> Canon<F> {
    pub fn new(messages: F) -> Canon<F> {
        Canon { messages, document: None }
    }

    /// Prepares a one-document session before its elements are read.
    pub fn on_document(self, document: Prepare) -> Canon<F> {
        Canon { document: Some(document), ..self }
    }
}

impl<F: FnMut(&serde_json::Value, Option<u32>) -> Vec<canon::Msg>> Render for Canon<F> {
    fn document(&mut self, _text: &[u8], doc: &mut serde_json::Value) {
        if let Some(prepare) = self.document.as_mut() {
            prepare(doc);
        }
    }

    fn record(&mut self, v: &serde_json::Value, part: Option<u32>, w: &mut Out<'_>) -> std::io::Result<()> {
        (self.messages)(v, part).into_iter().try_for_each(|m| w.push(m))
    }
}

/// An agent whose request the canonical writer does not shape as the agent
/// does (its merging, joining, own answers): it renders each record in the
/// dialect itself, as [`Sent`] writes.
pub trait Sends {
    /// The messages complete once `record` (edits applied) is in.
    fn record(&mut self, record: &serde_json::Value) -> Vec<serde_json::Value>;
    /// The messages still held at the end of the history.
    fn finish(&mut self) -> Vec<serde_json::Value>;
    /// The whole (edited) text of a one-document session, before its records,
    /// for an agent that renders from the file's own key order.
    fn document(&mut self, _text: &[u8]) {}
}

/// The [`Render`] of an agent that [`Sends`] its messages as they are written.
pub struct Sent<S>(pub S);

impl<S: Sends> Render for Sent<S> {
    fn document(&mut self, text: &[u8], _doc: &mut serde_json::Value) {
        self.0.document(text);
    }

    fn record(&mut self, v: &serde_json::Value, _part: Option<u32>, w: &mut Out<'_>) -> std::io::Result<()> {
        self.0.record(v).iter().try_for_each(|m| w.push_sent(m))
    }

    fn finish(&mut self, w: &mut Out<'_>) -> std::io::Result<()> {
        self.0.finish().iter().try_for_each(|m| w.push_sent(m))
    }
}

/// Whom a request goes to, as [`crate::formats::Adapter::request`] builds it.
pub struct To<'a> {
    pub session: &'a Session,
    pub dialect: Dialect,
    /// The provider and model of the latest reply (or of a later change).
    pub provider: Option<&'a str>,
    pub model: Option<&'a str>,
}

/// Reads a byte range of the session file, as a renderer that needs more than
/// its record does (Copilot CLI's assets).
pub type ReadRange<'r> = dyn FnMut(u64, u64) -> anyhow::Result<Vec<u8>> + 'r;

/// What an agent adds to every request from outside its history.
pub const AGENT_ADDS: &[&str] = &["system prompt", "tool list"];
