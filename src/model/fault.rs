//! What breaks the structure of a history (a call without its result, a
//! result without its call, …), as the history check finds it once for the
//! whole run: the reader keeps it on the session, and `diagnose`, `repair` and
//! `scan` read it there.

use serde::Serialize;

/// What is wrong with the structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    CallWithoutResult,
    ResultWithoutCall,
    DuplicateResult,
    EmptyMessage,
    RolesOutOfOrder,
}

impl FaultKind {
    /// The stable problem code (`history.call_without_result`, …).
    pub fn code(self) -> &'static str {
        match self {
            FaultKind::CallWithoutResult => "history.call_without_result",
            FaultKind::ResultWithoutCall => "history.result_without_call",
            FaultKind::DuplicateResult => "history.duplicate_result",
            FaultKind::EmptyMessage => "history.empty_message",
            FaultKind::RolesOutOfOrder => "history.roles_out_of_order",
        }
    }
}

/// One fault in the history's structure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fault {
    pub kind: FaultKind,
    pub code: &'static str,
    pub line: u64,
    pub call_id: Option<String>,
    pub tool: Option<String>,
    /// When its line was written, as the format spells it.
    pub at: Option<String>,
    /// A call in the session's last entry: the agent may still be running it.
    pub pending: bool,
    /// A call the agent answers itself when it next sends the history (Codex
    /// inserts "aborted", Claude Code an interrupted result, pi "No result
    /// provided"): the provider never sees it unpaired.
    pub agent_pairs: bool,
    /// What is wrong, in words.
    pub message: String,
    /// Index into [`super::Session::entries`] of the entry it is in.
    #[serde(skip)]
    pub entry: usize,
}

/// The history's structure as its provider checks it.
#[derive(Clone, Debug, Default)]
pub struct Structure {
    /// What breaks the provider's rules, in history order.
    pub faults: Vec<Fault>,
    /// Calls left without a result that the agent answers itself when it
    /// sends (pi; Cline, `Tool execution was interrupted…`), or calls and
    /// results left unpaired that it leaves out (Qwen Code): not faults, but
    /// worth a note.
    pub answered_by_agent: Vec<Fault>,
}
