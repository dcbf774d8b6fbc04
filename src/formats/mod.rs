//! One adapter per agent or provider format, each mapping native records into
//! the canonical model and building the request its agent sends. Reading native
//! records is this module's alone; a repaired copy's writers (`rewrite`) spell some.
//!
//! An adapter sees one parsed line at a time (workers read the file in parallel)
//! and describes it as a [`LineOut`]: its entries, media, tool calls, reasoning,
//! and how the line joins the history ([`Unit`]). The cross-line work — which
//! lines the provider still sees, which call a result answers — happens once,
//! afterwards, in [`assemble`].

mod ai_sdk;
pub mod assemble;
mod blocks;
pub mod claude_code;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod gemini_cli;
pub mod kiro;
mod mux;
pub mod opencode;
pub mod pi;
pub mod qwen_code;
mod raw;
mod sent;

use std::borrow::Cow;

use crate::json::Value;
use crate::model::{ErrorRecord, Fork, Format, MediaKind, Origin, ReasoningKind, Role, Session};
use crate::request::{Dialect, ReadRange, Render, To};

impl Format {
    /// The agent that wrote a session in this format: the fork that did, else
    /// the format's own ([`Behaviour::agent`]).
    pub fn agent(self, written_by: Option<Fork>) -> &'static str {
        written_by.map_or(self.behaviour().agent, Fork::agent)
    }

    /// The provider a format talks to when the file does not say.
    pub fn default_provider(self) -> Option<&'static str> {
        self.behaviour().default_provider
    }

    /// How this format's agent turns its records into requests: the one place
    /// every consumer asks, so that a new format is one new table, checked by
    /// the compiler, rather than a `_ =>` arm in a dozen matches.
    pub fn behaviour(self) -> &'static Behaviour {
        match self {
            Format::ClaudeCode => &claude_code::BEHAVIOUR,
            Format::Codex => &codex::BEHAVIOUR,
            Format::Pi => &pi::BEHAVIOUR,
            Format::GeminiCli => &gemini_cli::BEHAVIOUR,
            Format::Mux => &mux::BEHAVIOUR,
            Format::Opencode => &opencode::BEHAVIOUR,
            Format::OpenaiChat => &raw::OPENAI_CHAT,
            Format::OpenaiResponses => &raw::OPENAI_RESPONSES,
            Format::Anthropic => &raw::ANTHROPIC,
            Format::Gemini => &raw::GEMINI,
            Format::Cline => &cline::BEHAVIOUR,
            Format::Copilot => &copilot::BEHAVIOUR,
            Format::Kiro => &kiro::BEHAVIOUR,
            Format::QwenCode => &qwen_code::BEHAVIOUR,
        }
    }

    pub fn adapter(self) -> &'static dyn Adapter {
        match self {
            Format::ClaudeCode => &claude_code::ClaudeCode,
            Format::Codex => &codex::Codex,
            Format::Pi => &pi::Pi,
            Format::GeminiCli => &gemini_cli::GeminiCli,
            Format::Mux => &mux::Mux,
            Format::Opencode => &opencode::Opencode,
            Format::OpenaiChat => &raw::OpenaiChat,
            Format::OpenaiResponses => &raw::OpenaiResponses,
            Format::Anthropic => &raw::Anthropic,
            Format::Gemini => &raw::Gemini,
            Format::Cline => &cline::Cline,
            Format::Copilot => &copilot::Copilot,
            Format::Kiro => &kiro::Kiro,
            Format::QwenCode => &qwen_code::QwenCode,
        }
    }
}

/// The dialect the agent of `session` speaks, as its adapter knows it: to the
/// provider its session names, else (a name nobody knows: an opencode custom
/// provider) to `judged`, the provider whose rules judge it (the model's).
/// `preview` writes in it and `diagnose` reads a block path in it: one choice.
pub fn native_of(session: &Session, judged: &str) -> Dialect {
    let provider = session.provider.as_deref().and_then(crate::provider::canonical).unwrap_or(judged);
    session.format.adapter().dialect(session, provider)
}

/// How the agent's provider pairs calls and results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// Anthropic Messages: a `tool_use` is answered in the very next (user) message;
    /// consecutive messages of one role are merged.
    Anthropic,
    /// OpenAI Chat Completions: an assistant message's `tool_calls` are answered by the
    /// `tool` messages right after it, before any other message.
    Chat,
    /// OpenAI Responses (Codex): every `function_call` has its output later in the input.
    Responses,
    /// Gemini: a `functionCall` turn is answered by a `functionResponse` turn right after it.
    Gemini,
    /// Agents that send to any provider (pi, mux, opencode): answered before the next assistant turn.
    Turns,
}

/// What the synthetic result of an interrupted call says.
pub const INTERRUPTED: &str = "[Tool call interrupted: the run stopped before this tool returned, so its output is not available. Run it again if you need it.]";

/// How an agent sends what its records hold, as far as a verdict or a rewrite
/// depends on it. Every field is a fact about the agent read from its source
/// or shown by the round-trip suite; each format's module owns its table.
#[derive(Debug)]
pub struct Behaviour {
    /// Who writes the format, for a report's header.
    pub agent: &'static str,
    /// The file logs whole request bodies (a provider format, no agent).
    pub logged: bool,
    /// The provider the format talks to when the file does not say.
    pub default_provider: Option<&'static str>,
    /// Which pairing rules of calls and results the provider applies to what it sends.
    pub pairing: Pairing,
    /// What the agent sends for a call left without a result, on every
    /// request, so that an orphaned call never reaches the provider alone
    /// (pi's `No result provided`; Cline, which keeps its results as text).
    pub orphaned_call_answer: Option<&'static str>,
    /// The agent answers a call its run left unanswered when it resumes
    /// (Codex's aborted output, Claude Code's and Copilot CLI's interrupted result, pi's).
    pub answers_interrupted_calls: bool,
    /// A repair can answer an interrupted call with a record of the agent's own
    /// kind (not pi, which answers such a call itself on every request).
    pub holds_synthetic_results: bool,
    /// A tool result whose call is gone is not excused by a later request the
    /// model accepted: Claude Code sends it as recorded, and the provider rejects
    /// it however often a request succeeded before; Codex leaves such an output
    /// out itself ([`codex::pairs`]), but not one a failure recorded after it
    /// names, which the provider refused.
    pub sends_results_as_recorded: bool,
    /// A tool result is a record of its own (Codex items, pi messages): a result
    /// without its call goes with its record.
    pub results_are_records: bool,
    /// What the agent itself sends for an interrupted call, and whether it
    /// marks that result as an error; `None` where the agent has no words of its own.
    pub interrupted_result: Option<(&'static str, bool)>,
    /// The text the agent sends in place of media it healed away itself (Claude
    /// Code's `media_removed`); `None` where it does not heal.
    pub heal_placeholder: Option<&'static str>,
    /// The agent retries a request the provider refused for its media without
    /// them, on every request, and records that as a notice (Copilot CLI's
    /// `image_error` warning): the notice is no failed request a copy must
    /// lose, but what says the media were never accepted.
    pub retries_without_media: bool,
    /// The agent sends a request refused with a 400 once more with its media
    /// as text placeholders, and records neither the refusal nor the retry
    /// when the retry is answered (Qwen Code): an answer after invalid media
    /// may be to that retry, not to a request that carried them. What it does,
    /// in words, for a verdict.
    pub silent_media_retry: Option<&'static str>,
    /// The agent leaves out, on every request, a call no result answers right
    /// after it and a result no call right before it takes (Qwen Code's
    /// `cleanOrphanedToolCalls`): such pairs are no fault, only worth a note.
    pub drops_unpaired: bool,
    /// The agent walks its tree from the last entry back and stops at a parent
    /// that is not in the file (pi's `buildSessionContext`, which also skips a
    /// line that is not JSON): what came before such a link is not sent, so the
    /// reader stops there too, and a repair does not link over a damaged line.
    pub stops_at_missing_parent: bool,
    /// When the agent sends a request that fails without recording the failure
    /// (Gemini CLI's headless runs): a file that ends in a request with no
    /// answer cannot say whether it failed, and a verdict must not call it healthy.
    pub unrecorded_failures: Option<&'static str>,
    /// `preview` builds the request the agent sends (not Kiro CLI's, which
    /// goes to Kiro's own service in a form no public source shows), and a
    /// fit can rewrite its media in place: the next commands offer them.
    pub previews: bool,
}

impl Behaviour {
    /// A table with the defaults of an agent that talks to any provider.
    pub const fn agent(agent: &'static str) -> Behaviour {
        Behaviour {
            agent,
            logged: false,
            default_provider: None,
            pairing: Pairing::Turns,
            orphaned_call_answer: None,
            answers_interrupted_calls: false,
            holds_synthetic_results: false,
            sends_results_as_recorded: false,
            results_are_records: false,
            interrupted_result: None,
            heal_placeholder: None,
            retries_without_media: false,
            silent_media_retry: None,
            drops_unpaired: false,
            stops_at_missing_parent: false,
            unrecorded_failures: None,
            previews: true,
        }
    }

    /// What a repair sends for an interrupted call, and whether as an error:
    /// the agent's own words where it has them.
    pub fn interrupted(&self) -> (&'static str, bool) {
        self.interrupted_result.unwrap_or((INTERRUPTED, true))
    }

    /// The table of a logged request body of one provider.
    pub const fn logged(provider: &'static str, pairing: Pairing) -> Behaviour {
        Behaviour {
            logged: true,
            default_provider: Some(provider),
            pairing,
            ..Behaviour::agent("none (a provider request body)")
        }
    }
}

/// One format: how its lines read, and the request its agent builds from them.
///
/// Reading is one line at a time, on every core, into the canonical model;
/// the request is built again from the records the model says the provider
/// sees, in history order, as the agent builds it (its merging, joining,
/// heals and ids). `preview` writes that request, and `diagnose` indexes a
/// provider's block path by it, so the two cannot disagree.
pub trait Adapter: Sync {
    /// How strongly one parsed line looks like this format: 0 not at all.
    /// Detection sums this over the first lines of a file.
    fn sniff(&self, line: &Value<'_>) -> u32;

    /// Describes one parsed line.
    fn read<'a>(&self, line: &'a Value<'a>, out: &mut LineOut<'a>);

    /// The dialect the agent of `session` speaks to `provider` (a logged
    /// request: the one it was logged in).
    fn dialect(&self, session: &Session, provider: &str) -> Dialect;

    /// What the agent sends in `dialect` that its session cannot hold (its
    /// system prompt, tool list): named in the preview, never silently missing.
    /// Every agent sends a system prompt and its tools with the history.
    fn not_in_session(&self, _session: &Session, _dialect: Dialect) -> &'static [&'static str] {
        crate::request::AGENT_ADDS
    }

    /// How the agent turns the session's records into the request it sends
    /// `to`; `read` reads a byte range of the session, for what a record
    /// points to elsewhere in the file.
    fn request<'a>(&self, to: &To<'a>, read: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>>;

    /// How many items the agent sends in `dialect` ahead of the session's own,
    /// which a provider's block path counts and the preview does not hold: on
    /// Chat Completions and Responses an agent's system prompt is the first
    /// message (Codex's developer message, pi's, Copilot CLI's, Cline CLI 3's
    /// and opencode's system message, each seen on the wire); Anthropic and
    /// Gemini take it beside the messages.
    fn leading_items(&self, _session: &Session, dialect: Dialect) -> u64 {
        match dialect {
            Dialect::OpenaiChat | Dialect::OpenaiResponses => 1,
            Dialect::Anthropic | Dialect::Gemini => 0,
        }
    }

    /// In a one-document session that is not a list (a Cline CLI 3 task, an
    /// opencode export), the message each of its entries stands for, in entry
    /// order: an entry is reported on the line its message starts on. Empty
    /// where the document's entries are not its messages, one each.
    fn entry_messages<'v, 'a>(&self, _doc: &'v Value<'a>) -> Vec<&'v Value<'a>> {
        Vec::new()
    }
}

/// A record id, hashed. Ids are only compared, never printed, and a history of
/// millions of lines must not keep millions of uuid strings alive. Never
/// zero, so an `Option<Id>` is as small as an `Id` (a line's [`Unit`] holds three).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Id(std::num::NonZeroU64);

impl Id {
    pub fn of(s: &str) -> Id {
        use std::hash::{DefaultHasher, Hash as _, Hasher as _};
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        Id(std::num::NonZeroU64::new(h.finish()).unwrap_or(std::num::NonZeroU64::MIN))
    }

    /// The id of a JSON string or number, if the value is one.
    pub fn of_value(v: &Value<'_>) -> Option<Id> {
        match v {
            Value::Str(s) => Some(Id::of(s)),
            Value::Number(_) => v.to_text().map(|t| Id::of(&t)),
            _ => None,
        }
    }
}

/// How a line joins the provider-visible history.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Unit {
    /// Appended in file order.
    #[default]
    Plain,
    /// Not part of what the provider sees (metadata, UI mirrors).
    Hidden,
    /// A node of a tree: the history is the path from the last node to its root.
    Node {
        id: Id,
        parent: Option<Id>,
        /// On a side branch (a subagent): never the leaf.
        sidechain: bool,
        /// The lines of one reply split over several nodes share this (Claude
        /// Code's `message.id`): a side node of the path's reply is history too.
        group: Option<Id>,
        /// A compaction: the path before this id is replaced by this line.
        keep_from: Option<Id>,
    },
    /// A record re-written in full each time it changes: the last copy wins,
    /// at the place of the first.
    Keyed(Id),
    /// Drops the keyed record with this id and everything after it; an id the
    /// history does not hold drops it all (Gemini CLI's loader clears its map).
    RewindTo(Id),
    /// A compaction or checkpoint: everything before is replaced by this line
    /// (by its messages, each keyed, when [`LineOut::keys`] lists them).
    Reset,
    /// A compaction whose replacement history stands for everything before
    /// it until a rollback reaches past it (Codex's `compacted` with
    /// `replacement_history`): Codex rolls back turn segments newest first,
    /// and one holding the compaction takes it along, so the history before
    /// it comes back, followed by what came after ([`Unit::DropTurns`]).
    Replace,
    /// A compaction that keeps the entries from this 0-based index of the file's
    /// entries (pi v1's `firstKeptEntryIndex`, the header being entry 0): the line
    /// comes first, then those kept entries before it, then what follows.
    ResetKeeping(u64),
    /// Drops the last this many user turns and what follows them (Codex's
    /// `thread_rolled_back`): the history is cut at the first line of the
    /// turns it drops, those [`LineOut::turn`] marks; with fewer turns, at
    /// the first.
    DropTurns(u64),
    /// A whole logged request: it replaces everything before it.
    Request,
}

/// The bytes of a media payload as they are spelled in the line.
#[derive(Clone, Debug, PartialEq)]
pub enum RawPayload<'a> {
    Base64(&'a Cow<'a, str>),
    /// A whole `data:` URL.
    DataUrl(&'a Cow<'a, str>),
    /// A URL, file URI or provider file id.
    Reference(String),
    /// Bytes the line spells as a JSON array of numbers, one per byte (Kiro
    /// CLI's `source: {kind: "bytes", data: [137, 80, …]}`), decoded.
    Bytes(Vec<u8>),
}

impl RawPayload<'_> {
    /// The payload's text in the line, for inline bytes.
    pub fn text(&self) -> Option<&str> {
        match self {
            RawPayload::Base64(t) | RawPayload::DataUrl(t) => Some(t),
            RawPayload::Reference(_) | RawPayload::Bytes(_) => None,
        }
    }
}

/// One media payload found in a line.
#[derive(Clone, Debug, PartialEq)]
pub struct RawMedia<'a> {
    /// Index into [`LineOut::entries`].
    pub entry: usize,
    pub origin: Origin,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    pub name: Option<String>,
    pub mime: Option<String>,
    pub payload: RawPayload<'a>,
    /// JSON pointer of the block inside the line.
    pub pointer: String,
    /// A second copy of bytes the line holds elsewhere (Claude Code's `toolUseResult`):
    /// counted once, its place kept for rewrites.
    pub mirror: bool,
}

/// One entry as an adapter sees it, before it has a place in the history.
#[derive(Clone, Debug, PartialEq)]
pub struct RawEntry {
    pub role: Role,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub accepted: bool,
    pub error: Option<ErrorRecord>,
    /// Content blocks the entry adds to its request message, where the agent
    /// merges several entries into one message (0: not counted).
    pub blocks: u32,
    /// The message has no content the provider accepts (set only where the
    /// adapter can tell for sure; `false` means "not empty, or not known").
    pub empty: bool,
    /// The agent healed this failure itself: on every later request it sends
    /// the media of this kind in the nearest earlier message carrying one as
    /// a placeholder (Claude Code's `media_removed`).
    pub heals: Option<MediaKind>,
}

impl RawEntry {
    pub fn new(role: Role) -> RawEntry {
        RawEntry {
            role,
            model: None,
            provider: None,
            accepted: false,
            error: None,
            blocks: 0,
            empty: false,
            heals: None,
        }
    }
}

/// A tool call as an adapter sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct RawCall {
    /// Index into [`LineOut::entries`] of the entry holding the call.
    pub entry: usize,
    pub call_id: String,
    pub name: Option<String>,
    pub path: Option<String>,
}

/// A tool result as an adapter sees it: the call it answers.
#[derive(Clone, Debug, PartialEq)]
pub struct RawResult {
    /// Index into [`LineOut::entries`] of the entry holding the result.
    pub entry: usize,
    pub call_id: String,
}

/// Everything an adapter says about one line.
#[derive(Debug, Default)]
pub struct LineOut<'a> {
    pub unit: Unit,
    pub entries: Vec<RawEntry>,
    pub media: Vec<RawMedia<'a>>,
    pub calls: Vec<RawCall>,
    /// Tool results; where one object holds a call and its result (Gemini CLI,
    /// AI SDK tool parts), the result is in the same entry as the call.
    pub results: Vec<RawResult>,
    pub reasoning: Vec<RawReasoning>,
    /// Model in force for later entries that do not name one (Codex `turn_context`, pi `model_change`).
    pub context_model: Option<String>,
    /// Provider in force for later entries (session metadata).
    pub context_provider: Option<String>,
    /// When the line was written, as the format spells it (kept only for lines
    /// with tool calls or results).
    pub at: Option<String>,
    /// What the adapter found wrong with what the line points to (a file it
    /// names): findings on this line, with a code registered in [`crate::codes`].
    pub findings: Vec<(crate::model::Severity, &'static str, String)>,
    /// The messages of a line that holds a whole history (Gemini CLI's
    /// `$set.messages` checkpoint), each keyed by its id as a [`Unit::Keyed`]
    /// record is: its id and the index of its first entry. A later copy of one
    /// replaces it in place; a rewind to one drops it and what follows.
    pub keys: Vec<(Id, usize)>,
    /// The line starts a turn of the user's ([`Unit::DropTurns`] counts them).
    pub turn: bool,
    /// The agent that wrote the session, where the line says it is another
    /// than the format's own (a Kilo Code CLI export's `info.version`).
    pub written_by: Option<Fork>,
}

/// A replayed reasoning item found in a line, with where it sits.
#[derive(Clone, Debug, PartialEq)]
pub struct RawReasoning {
    pub kind: ReasoningKind,
    /// The OpenAI `rs_…` id when the format keeps it.
    pub id: Option<String>,
    /// JSON pointer of the block, item or part that carries it.
    pub pointer: String,
    /// Where the `rs_` id sits, member by member, when it is a member of its
    /// own: a Responses item's `id`, an AI SDK part's `…/openai/itemId`.
    /// Empty where the id is inside a string (pi) or there is none.
    pub id_at: Vec<String>,
    /// The entry being read when it was found (the line's last so far).
    pub entry: usize,
}

impl LineOut<'_> {
    /// Records a reasoning item at `pointer`, in the entry being read.
    pub fn reasoning(&mut self, kind: ReasoningKind, id: Option<String>, pointer: &str) {
        self.reasoning_at(kind, id, pointer, Vec::new());
    }

    /// [`LineOut::reasoning`] whose `rs_` id is a member of its own, at `id_at`.
    pub fn reasoning_at(&mut self, kind: ReasoningKind, id: Option<String>, pointer: &str, id_at: Vec<String>) {
        let entry = self.entries.len().saturating_sub(1);
        self.reasoning.push(RawReasoning { kind, id, pointer: pointer.to_string(), id_at, entry });
    }

    /// Keys the message whose entries start now ([`LineOut::keys`]).
    pub fn key(&mut self, id: Id) {
        self.keys.push((id, self.entries.len()));
    }

    /// Starts an entry and returns its index.
    pub fn entry(&mut self, e: RawEntry) -> usize {
        self.entries.push(e);
        self.entries.len() - 1
    }

    /// Records a tool result answering `call_id` in entry `entry`.
    pub fn result(&mut self, entry: usize, call_id: Option<String>) {
        if let Some(call_id) = call_id {
            self.results.push(RawResult { entry, call_id });
        }
    }
}

/// Where a media block sits and what it belongs to, passed down a walk.
#[derive(Clone, Debug)]
pub struct Site {
    pub entry: usize,
    pub origin: Origin,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    pub name: Option<String>,
}

impl Site {
    pub fn new(entry: usize, origin: Origin) -> Site {
        Site { entry, origin, call_id: None, tool: None, name: None }
    }

    pub fn tool_result(entry: usize, call_id: Option<String>) -> Site {
        Site { call_id, ..Site::new(entry, Origin::ToolResult) }
    }

    pub fn media<'a>(&self, payload: RawPayload<'a>, mime: Option<&str>, pointer: String) -> RawMedia<'a> {
        RawMedia {
            entry: self.entry,
            origin: self.origin,
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            name: self.name.clone(),
            mime: mime.map(str::to_string),
            payload,
            pointer,
            mirror: false,
        }
    }
}

/// Picks the `path`/`file_path`-like argument of a tool call's input.
pub fn path_argument(input: &Value<'_>) -> Option<String> {
    ["file_path", "path", "filePath", "absolute_path", "filename", "file", "image_path", "pdf_path", "url"]
        .iter()
        .find_map(|k| input.get(k).as_str().map(str::to_string))
}

/// Tool call arguments are often a JSON string: parse it (owned) and look for a path.
pub fn path_in_arguments(args: &Value<'_>) -> Option<String> {
    match args {
        Value::Str(s) => Value::parse(s.as_bytes()).ok().and_then(|v| path_argument(&v)),
        v => path_argument(v),
    }
}

/// A JSON pointer segment appended to a path.
pub fn ptr(base: &str, seg: impl std::fmt::Display) -> String {
    format!("{base}/{seg}")
}

/// An HTTP status as an agent records it (a JSON number): only a whole number
/// from 100 to 599 is one; `1e400`, `-1` or `400.5` name no status (a plain
/// `as u16` would turn them into 65535, 0 or 400).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a whole number in 100..=599")]
pub fn http_status(n: f64) -> Option<u16> {
    (n.fract() == 0.0 && (100.0..=599.0).contains(&n)).then_some(n as u16)
}

#[cfg(test)]
mod status_tests {
    use super::http_status;

    #[test]
    fn only_whole_statuses_in_range_are_statuses() {
        assert_eq!(http_status(400.0), Some(400));
        assert_eq!(http_status(599.0), Some(599));
        for bad in [f64::INFINITY, -1.0, 70_000.0, 400.5, 99.0, f64::NAN] {
            assert_eq!(http_status(bad), None, "{bad}");
        }
    }
}
