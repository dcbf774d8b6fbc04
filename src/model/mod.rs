//! The canonical session model that every adapter maps into.
//!
//! Nothing outside `formats/` knows a native field name: `diagnose`, `exclude`,
//! `preview` and `check` work on these types only.

mod fault;
mod format;
mod next;
mod reference;

use std::sync::Arc;

use serde::Serialize;

pub use fault::{Fault, FaultKind, Structure};
pub use format::{Fork, Format};
pub use reference::{Ref, RefError};

use crate::media::{Defect, Facts, Verdict, rules::Rules};

/// Who put an attachment into the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    User,
    ToolResult,
    Assistant,
}

/// The speaker of an entry, as the provider sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    Tool,
    System,
}

/// A failed request as the agent recorded it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorRecord {
    /// The provider's error as recorded (a body, or the agent's wrapper text).
    pub text: String,
    /// HTTP status when the record carries it outside the text.
    pub status: Option<u16>,
}

/// One message-like record of the provider-visible history. Kept small: a
/// history has one per line, and lines can number millions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    pub line: u64,
    pub role: Role,
    /// An assistant entry with output or usage: the model accepted the request before it.
    pub accepted: bool,
    /// The model that produced an assistant entry (shared: one allocation per distinct name).
    pub model: Option<Arc<str>>,
    pub provider: Option<Arc<str>>,
    pub error: Option<Box<ErrorRecord>>,
    /// Content blocks it adds to its request message, where the agent merges
    /// entries into one message (Claude Code); 0 when not counted.
    pub blocks: u32,
    /// The message has no content the provider accepts (only where the format tells for sure).
    #[serde(skip)]
    pub empty: bool,
    /// A failure the agent healed itself by no longer sending media of this kind.
    #[serde(skip)]
    pub heals: Option<MediaKind>,
}

/// The kinds of media an agent's heal can take out of its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    Image,
    Document,
}

/// A tool invocation in the provider-visible history, linked to its result by `call_id`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCall {
    pub line: u64,
    pub call_id: String,
    pub name: Option<String>,
    /// The call's `path` / `file_path` argument, when it had one.
    pub path: Option<String>,
    /// Index into [`Session::entries`] of the entry that holds it.
    #[serde(skip)]
    pub entry: usize,
    /// When its line was written, as the format spells it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// A tool result in the provider-visible history: the call it answers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResult {
    pub line: u64,
    pub call_id: String,
    /// Index into [`Session::entries`] of the entry that holds it (the call's own
    /// entry where one object holds both: Gemini CLI, AI SDK tool parts).
    #[serde(skip)]
    pub entry: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// How the attachment's bytes are spelled in the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// Raw base64 next to a mime field.
    Base64,
    /// `data:<mime>;base64,<payload>`.
    DataUrl,
    /// A URL, file URI or provider file id: the bytes are not in the session.
    Reference,
    /// A JSON array of numbers, one per byte (Kiro CLI).
    Bytes,
}

/// Where an attachment's encoded text sits in the file, so a rewrite can find it again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    /// Byte offset of the first payload character in the file.
    pub offset: u64,
    /// Length of the encoded payload text in bytes.
    pub len: u64,
    /// The line it sits on when that is not its attachment's own line (a copy
    /// on another line: Codex's `event_msg`, Claude Code's `api-request-blob`); 0 otherwise.
    #[serde(skip_serializing_if = "is_zero")]
    pub line: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde's `skip_serializing_if` passes a reference")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One media payload in the provider-visible history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Attachment {
    #[serde(rename = "ref")]
    pub reference: String,
    pub line: u64,
    pub origin: Origin,
    pub call_id: Option<String>,
    /// The tool that produced it, for tool results.
    pub tool: Option<String>,
    /// File name or the tool's path argument.
    pub name: Option<String>,
    pub mime_declared: Option<String>,
    pub mime_detected: Option<String>,
    /// Decoded size in bytes.
    pub bytes: Option<u64>,
    /// sha256 of the decoded bytes, hex.
    pub sha256: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub pages: Option<u32>,
    pub verdict: Verdict,
    pub problems: Vec<crate::media::Defect>,
    pub encoding: Encoding,
    /// For references: the URL, file URI or file id.
    pub url: Option<String>,
    /// JSON pointer of the media block inside its line.
    pub pointer: String,
    pub span: Option<Span>,
    /// Other places holding a copy of this attachment for the agent's UI (Claude Code's
    /// `toolUseResult`), possibly re-encoded: a rewrite must change them too.
    pub mirrors: Vec<Span>,
    /// The user excluded it (the overlay beside the session): previews and
    /// repaired copies carry a note in its place.
    pub excluded: bool,
    /// The agent itself no longer sends it (a heal recorded later in the
    /// history): previews and repaired copies carry the agent's placeholder.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub healed: bool,
    /// Index into [`Session::entries`] of the entry that holds it.
    #[serde(skip)]
    pub entry: usize,
    /// What the bytes are, provider aside: kept so the attachment can be judged
    /// again under another provider's rules without decoding it again.
    #[serde(skip)]
    pub facts: Option<Box<Facts>>,
    /// Problems getting the bytes at all (bad base64, a broken data URL, a
    /// reference that cannot be fetched): the same under every provider.
    #[serde(skip)]
    pub source_problems: Vec<Defect>,
}

impl Attachment {
    /// In the next request the agent sends: not excluded by the user, and not
    /// healed away by the agent itself (both are a note or a placeholder there,
    /// as `preview` writes them).
    pub fn sent(&self) -> bool {
        !self.excluded && !self.healed
    }

    /// Judges (or judges again) the attachment under `rules`: its verdict and
    /// problems, from the facts the streaming pass recorded.
    pub fn judge(&mut self, rules: &Rules) {
        let mut problems = self.source_problems.clone();
        if let Some(facts) = &self.facts {
            let ins = facts.judge(self.mime_declared.as_deref(), self.name.as_deref(), rules);
            self.mime_detected = ins.mime_detected;
            self.width = ins.width;
            self.height = ins.height;
            self.pages = ins.pages;
            problems.extend(ins.problems);
        }
        self.verdict = problems.iter().map(|p| p.severity).max().unwrap_or(Verdict::Ok);
        self.problems = problems;
    }

    /// Is this an image (by sniffed type, else declared type)?
    pub fn is_image(&self) -> bool {
        self.mime_detected.as_deref().or(self.mime_declared.as_deref()).is_some_and(|m| m.starts_with("image/"))
    }
}

/// A replayed reasoning item, which a provider may refuse later.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reasoning {
    pub line: u64,
    pub kind: ReasoningKind,
    /// The OpenAI `rs_…` id when the format keeps it (an item reference's `msg_…`, `fc_…`).
    pub id: Option<String>,
    /// JSON pointer of the block, item or part that carries it, inside its line.
    pub pointer: String,
    /// Where the `rs_` id sits as a member of its own (what
    /// `--drop-reasoning-ids` removes); empty where it is inside a string.
    #[serde(skip)]
    pub id_at: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningKind {
    /// OpenAI Responses reasoning with `encrypted_content`.
    OpenaiEncrypted,
    /// OpenAI reasoning referenced by id only.
    OpenaiId,
    /// Anthropic `thinking.signature`.
    AnthropicSignature,
    /// Anthropic `redacted_thinking.data`.
    AnthropicRedacted,
    /// Gemini `thoughtSignature`.
    GeminiSignature,
    /// The OpenAI item id (`msg_…`, `fc_…`) of a reply's text or tool call,
    /// which the AI SDK sends as an `item_reference` under `store: true` (opencode
    /// keeps it in a part's `metadata.openai.itemId`): no reasoning, but a
    /// reference a provider's store must hold, as an `rs_` one.
    OpenaiReference,
}

impl ReasoningKind {
    /// The provider family that wrote it and alone can verify it:
    /// `openai`, `anthropic` or `gemini`.
    pub fn family(self) -> &'static str {
        match self {
            ReasoningKind::OpenaiEncrypted | ReasoningKind::OpenaiId | ReasoningKind::OpenaiReference => "openai",
            ReasoningKind::AnthropicSignature | ReasoningKind::AnthropicRedacted => "anthropic",
            ReasoningKind::GeminiSignature => "gemini",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// Something about the file itself (not one attachment) worth telling.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub line: u64,
    pub severity: Severity,
    /// What is wrong with that line, e.g. "cut short after 450 bytes …".
    pub message: String,
    /// Stable machine code where one is assigned, e.g. `history.parent_cycle`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
}

/// One record of the provider-visible history and where its text sits in the
/// file: a rewrite finds it again without reading the file in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Record {
    pub line: u64,
    pub offset: u64,
    pub len: u64,
    /// Only this message of the line is seen: the line holds a whole history
    /// (Gemini CLI's checkpoint) that later lines took apart, by rewriting a
    /// message of it or rewinding into it.
    pub part: Option<u32>,
}

/// A range of a one-document history that its agent leaves out of every
/// request while the file keeps it (Cline's `conversationHistoryDeletedRange`):
/// messages 2 to `end`. The agent's adapter finds it and applies it to the
/// request; the model only needs to know which messages it drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// The last message left out (the range's end, inclusive).
    pub end: usize,
}

impl Cut {
    /// Message `i` is left out of every request.
    pub fn drops(self, i: usize) -> bool {
        (2..=self.end).contains(&i)
    }

    /// Message `i` is the first sent after the cut: its agent sends it without
    /// its tool results (their calls are gone), images in them included.
    pub fn orphans(self, i: usize) -> bool {
        i == self.end + 1
    }
}

/// A session read into the canonical model: only what the provider sees.
#[derive(Clone, Debug, Serialize)]
pub struct Session {
    pub file: String,
    pub format: Format,
    /// The agent that wrote it, where another than the format's own ([`Fork`]).
    #[serde(skip)]
    pub written_by: Option<Fork>,
    pub lines: u64,
    pub entries: Vec<Entry>,
    pub attachments: Vec<Attachment>,
    /// Tool calls of the provider-visible history, in history order.
    pub tool_calls: Vec<ToolCall>,
    /// Tool results of the provider-visible history, in history order.
    pub tool_results: Vec<ToolResult>,
    pub reasoning: Vec<Reasoning>,
    pub findings: Vec<Finding>,
    /// The provider the latest entry naming one went to, where the format records it
    /// (not the rules a scan used: those are in the scan report), or the one a
    /// model change after it names.
    pub provider: Option<String>,
    /// The model a change after the latest entries names (pi's `/model`): the
    /// next request goes to it, not to the model the entries name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider-visible records in history order (not serialized: `--json`
    /// reports describe attachments, not the file's layout).
    #[serde(skip)]
    pub records: Vec<Record>,
    /// The messages of a Cline IDE history that Cline no longer sends (its
    /// `conversationHistoryDeletedRange`): not in `records`, and left out of
    /// the request `preview` builds from the whole document.
    #[serde(skip)]
    pub cut: Option<Cut>,
    /// For a session taken out of a store, its own record there (opencode's
    /// `session` row, as an export's `info` holds it): its messages name no
    /// working directory, and Kilo Code CLI sends theirs with it. `None` for a file.
    #[serde(skip)]
    pub store_info: Option<serde_json::Value>,
    /// The history's structure, checked once by the reader.
    #[serde(skip)]
    pub structure: Structure,
}
