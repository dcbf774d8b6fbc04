//! How Codex pairs tool calls and outputs itself before every request.
//!
//! Codex normalises the history it sends (its context manager's
//! `ensure_call_outputs_present` and `remove_orphan_outputs`): a call with no
//! output anywhere gets an output `"aborted"` right after it, and an output
//! whose call is gone is left out. A rollout cut mid-tool (the run killed while
//! a shell call ran) is therefore not stuck: Codex mends it on resume, and so
//! must preview show it, and diagnose say so rather than call it broken.

use std::collections::HashSet;

use crate::model::Session;

/// The output Codex sends for a call it finds without one.
pub const ABORTED: &str = "aborted";

/// The calls and outputs of one Codex session, by call id.
pub struct Pairs {
    calls: HashSet<String>,
    outputs: HashSet<String>,
    /// Calls a recorded failure names: the history check reports them and
    /// `repair` answers them, so Codex finds them answered.
    named: HashSet<String>,
}

impl Pairs {
    pub fn of(session: &Session) -> Pairs {
        let failures = Failures::of(session);
        Pairs {
            calls: session.tool_calls.iter().map(|c| c.call_id.clone()).collect(),
            outputs: session.tool_results.iter().map(|r| r.call_id.clone()).collect(),
            named: session
                .tool_calls
                .iter()
                .filter(|c| failures.name_after(&c.call_id, c.entry))
                .map(|c| c.call_id.clone())
                .collect(),
        }
    }

    /// Codex answers this call with [`ABORTED`] when it sends the history.
    pub fn unanswered(&self, call_id: &str) -> bool {
        !self.outputs.contains(call_id) && !self.named.contains(call_id)
    }

    /// Codex leaves this output out: its call is gone.
    pub fn orphan(&self, call_id: &str) -> bool {
        !self.calls.contains(call_id)
    }
}

/// The failures a session records, by entry: few, so looked through per call.
pub struct Failures<'a>(Vec<(usize, &'a str)>);

impl<'a> Failures<'a> {
    pub fn of(session: &'a Session) -> Failures<'a> {
        Failures(
            session
                .entries
                .iter()
                .enumerate()
                .filter_map(|(i, e)| Some((i, e.error.as_ref()?.text.as_str())))
                .collect(),
        )
    }

    /// Whether a failure recorded after entry `from` names `call_id`: the provider
    /// refused that very call or output, so it is reported, not assumed mended.
    pub fn name_after(&self, call_id: &str, from: usize) -> bool {
        self.0.iter().any(|(i, text)| *i > from && text.contains(call_id))
    }
}

/// What diagnose says about the calls and outputs Codex will pair itself.
pub fn notes(session: &Session) -> Vec<String> {
    if session.format != crate::model::Format::Codex {
        return Vec::new();
    }
    let pairs = Pairs::of(session);
    let failures = Failures::of(session);
    let mut notes = Vec::new();
    let calls = session.tool_calls.iter().filter(|c| !failures.name_after(&c.call_id, c.entry));
    for c in calls.filter(|c| pairs.unanswered(&c.call_id)) {
        notes.push(format!(
            "the {} call {} (line {}) has no output: Codex sends \"{ABORTED}\" as its output with the next request (unless it is still running it), so this does not block the session",
            c.name.as_deref().unwrap_or("tool"),
            c.call_id,
            c.line
        ));
    }
    let results = session.tool_results.iter().filter(|r| !failures.name_after(&r.call_id, r.entry));
    for r in results.filter(|r| pairs.orphan(&r.call_id)) {
        notes.push(format!(
            "the output for call {} (line {}) has no call: Codex leaves it out of its requests, so this does not block the session",
            r.call_id, r.line
        ));
    }
    notes
}
