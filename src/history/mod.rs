//! The structure of the provider-visible history, checked the way the provider
//! the agent talks to checks it: every tool call answered by exactly one result
//! before the next assistant turn, every result after its call, no empty
//! message, roles in the order the provider requires.
//!
//! A session that breaks these rules is stuck whatever its media: every request
//! re-sends the same history and fails the same way (Anthropic "`tool_use` ids
//! were found without `tool_result` blocks immediately after", OpenAI "No tool
//! output found for function call …"). The check works on the canonical model
//! only ([`Session::tool_calls`], [`Session::tool_results`], the entries), so it
//! judges every format alike; what differs is the dialect the agent sends.
//!
//! What is *not* broken, and must not be reported as such:
//! - a call in the session's very last entry (or in the assistant entries that
//!   close it): the agent may still be running it. It is reported, marked
//!   `pending`, because the next request would fail if the agent is gone;
//! - one response split over several entries (Claude Code writes one line per
//!   content block): consecutive assistant entries are one message;
//! - parallel calls answered in one message, or results in another order than
//!   the calls (agents re-order them on resume);
//! - calls and results the agent does not send: entries that record a failed
//!   request are skipped by the agents (pi, Claude Code, opencode), and so are
//!   the results answering calls in them;
//! - anything a later accepted request held: the agent sends it in a form the
//!   provider takes (pi and Codex pair calls themselves on every request, Cline
//!   turns its text results into `tool_result` blocks) — except a result
//!   without its call in Claude Code and Codex, which send it as recorded;
//! - a call the run left without a result, where the agent answers it itself
//!   when it next sends (Codex, Claude Code, pi, Copilot CLI): reported as `agent_pairs`, a
//!   warning;
//! - the result of a parallel call that Claude Code wrote on a side branch of
//!   the split lines of one message: the reader puts it back with its message;
//! - server-side tools (Anthropic `server_tool_use`, answered in the same
//!   assistant message), and formats where one object is the call and its
//!   result (Gemini CLI, AI SDK tool parts): a result in the call's own message counts.

use std::collections::{HashMap, HashSet};

use crate::formats::Pairing;
use crate::model::Format;
use crate::model::{Fault, FaultKind, Finding, Role, Session, Severity, Structure, ToolCall, ToolResult};

/// Consecutive sent entries of one side (assistant, or everything else):
/// one message as the provider sees it.
#[derive(Clone, Copy)]
struct Group {
    assistant: bool,
    first: usize,
}

/// The structure of `session`'s history as its provider checks it: one
/// pass, whose result the reader keeps on the session.
pub fn check(session: &Session) -> Structure {
    let mut faults = check_as(session, session.format.behaviour().pairing);
    // An agent that answers every call left without a result when it sends
    // (pi; Cline): those calls are no fault, only worth a note.
    let behaviour = session.format.behaviour();
    let answered_by_agent = match behaviour.orphaned_call_answer {
        // Calls and results the agent leaves out when it sends (Qwen Code).
        None if behaviour.drops_unpaired => {
            let unpaired = |k: FaultKind| {
                matches!(
                    k,
                    FaultKind::CallWithoutResult
                        | FaultKind::ResultWithoutCall
                        | FaultKind::DuplicateResult
                        | FaultKind::RolesOutOfOrder
                )
            };
            let (dropped, rest) = faults.into_iter().partition(|f| unpaired(f.kind));
            faults = rest;
            dropped
        }
        Some(_) => {
            let (answered, rest) = faults.into_iter().partition(|f| f.kind == FaultKind::CallWithoutResult);
            faults = rest;
            answered
        }
        None => Vec::new(),
    };
    Structure { faults, answered_by_agent }
}

/// Every fault of `session`'s history under `pairing`'s rules, a call the
/// agent answers itself included, in history order.
fn check_as(session: &Session, pairing: Pairing) -> Vec<Fault> {
    let view = View::new(session, pairing);
    let (calls, results) = view.sent_calls_and_results();
    let mut faults = Vec::new();
    let used = view.pair(&calls, &results, &mut faults);
    view.orphans(&calls, &results, &used, &mut faults);
    if pairing == Pairing::Chat {
        view.chat_order(&results, &mut faults);
    }
    view.empty_messages(&mut faults);
    view.excuse_accepted(&mut faults);
    faults.sort_by_key(|p| (p.entry, p.line));
    faults
}

/// The history as the provider groups it into messages.
struct View<'s> {
    session: &'s Session,
    pairing: Pairing,
    groups: Vec<Group>,
    /// The group of each entry (`usize::MAX`: not sent).
    group_of: Vec<usize>,
    /// Codex pairs its calls itself, unless a failure recorded after one names it.
    failures: crate::formats::codex::pairs::Failures<'s>,
}

impl<'s> View<'s> {
    fn new(session: &'s Session, pairing: Pairing) -> View<'s> {
        let mut view = View {
            session,
            pairing,
            groups: Vec::new(),
            group_of: vec![usize::MAX; session.entries.len()],
            failures: crate::formats::codex::pairs::Failures::of(session),
        };
        for (i, e) in session.entries.iter().enumerate().filter(|(_, e)| e.error.is_none()) {
            let assistant = e.role == Role::Assistant;
            if view.groups.last().is_none_or(|g| g.assistant != assistant) {
                view.groups.push(Group { assistant, first: i });
            }
            view.group_of[i] = view.groups.len() - 1;
        }
        view
    }

    /// Entries recording a failed request are not sent again.
    fn sent(&self, i: usize) -> bool {
        self.session.entries.get(i).is_some_and(|e| e.error.is_none())
    }

    /// Codex answers a call left without output and drops an orphaned output itself
    /// (`formats::codex::pairs`), unless a failure recorded after it names the call
    /// (a build that did not pair sent it, and the provider said so).
    fn codex_pairs(&self, call_id: &str, from: usize) -> bool {
        self.session.format == Format::Codex && !self.failures.name_after(call_id, from)
    }

    /// The calls and results the agent sends: those of sent entries, less the
    /// results of calls in unsent entries (the agents drop them with their calls).
    fn sent_calls_and_results(&self) -> (Vec<&'s ToolCall>, Vec<&'s ToolResult>) {
        let s = self.session;
        let calls: Vec<&ToolCall> = s.tool_calls.iter().filter(|c| self.sent(c.entry)).collect();
        let call_ids: HashSet<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
        let dropped: HashSet<&str> =
            s.tool_calls.iter().filter(|c| !self.sent(c.entry)).map(|c| c.call_id.as_str()).collect();
        let results = (s.tool_results.iter())
            .filter(|r| self.sent(r.entry))
            .filter(|r| call_ids.contains(r.call_id.as_str()) || !dropped.contains(r.call_id.as_str()))
            .collect();
        (calls, results)
    }

    /// Pairs each call with a result in its place; a call without one is a
    /// fault. Returns which results were used.
    fn pair(&self, calls: &[&ToolCall], results: &[&ToolResult], faults: &mut Vec<Fault>) -> Vec<bool> {
        let by_id = by_id(results);
        let mut used = vec![false; results.len()];
        for c in calls {
            let in_place = |r: &ToolResult| match self.pairing {
                Pairing::Responses => r.entry >= c.entry,
                _ => {
                    let (gc, gr) = (self.group_of[c.entry], self.group_of[r.entry]);
                    r.entry >= c.entry && (gr == gc || gr == gc + 1)
                }
            };
            // Gemini may answer a call by its name alone.
            let mut keys = vec![c.call_id.as_str()];
            if let (Pairing::Gemini, Some(n)) = (self.pairing, c.name.as_deref()) {
                keys.push(n);
            }
            let found = (keys.iter().filter_map(|k| by_id.get(k)))
                .flat_map(|v| v.iter().copied())
                .find(|&k| !used[k] && in_place(results[k]));
            match found {
                Some(k) => used[k] = true,
                None if self.codex_pairs(&c.call_id, c.entry) => {}
                None => faults.push(self.call_without_result(c)),
            }
        }
        used
    }

    fn call_without_result(&self, c: &ToolCall) -> Fault {
        // Still running: nothing but the rest of the same response follows it.
        let pending =
            self.session.entries[c.entry + 1..].iter().all(|e| e.role == Role::Assistant && e.error.is_none());
        let agent_pairs = self.session.format.behaviour().answers_interrupted_calls;
        let tool = c.name.as_deref().unwrap_or("a tool");
        let id = &c.call_id;
        let message = match (pending, agent_pairs) {
            (true, true) => format!(
                "{tool} call {id} has no result yet: the agent may still be running it; if the run was cut off, the agent answers it itself on resume"
            ),
            (true, false) => format!(
                "{tool} call {id} has no result yet: the agent may still be running it; if it is not, the next request will fail"
            ),
            (false, true) => format!(
                "{tool} call {id} has no result (the run was cut off): the agent answers it itself as interrupted when it next sends the history"
            ),
            (false, false) => {
                let whence = match self.pairing {
                    Pairing::Responses => "anywhere after it",
                    Pairing::Anthropic => "in the message right after it",
                    _ => "before the next assistant turn",
                };
                format!(
                    "{tool} call {id} has no result {whence} (the run was interrupted?); every request will be rejected"
                )
            }
        };
        Fault {
            kind: FaultKind::CallWithoutResult,
            code: FaultKind::CallWithoutResult.code(),
            line: c.line,
            call_id: Some(c.call_id.clone()),
            tool: c.name.clone(),
            at: c.at.clone(),
            pending,
            agent_pairs,
            message,
            entry: c.entry,
        }
    }

    /// Results no call took: out of place, a second one, or no call at all.
    fn orphans(&self, calls: &[&ToolCall], results: &[&ToolResult], used: &[bool], faults: &mut Vec<Fault>) {
        let by_id = by_id(results);
        let name_of = names(calls);
        let call_of: HashMap<&str, &ToolCall> = calls.iter().map(|c| (c.call_id.as_str(), *c)).collect();
        let entries = &self.session.entries;
        for (k, r) in results.iter().enumerate().filter(|(k, _)| !used[*k]) {
            let call = call_of.get(r.call_id.as_str()).copied();
            // A server-side tool's result sits in the assistant message; its call may be a kind not counted.
            if call.is_none() && (self.codex_pairs(&r.call_id, r.entry) || entries[r.entry].role == Role::Assistant) {
                continue;
            }
            let answered_before = by_id.get(r.call_id.as_str()).is_some_and(|v| v.iter().any(|&o| o != k && used[o]));
            let id = &r.call_id;
            let (kind, message) = match call {
                Some(_) if answered_before => {
                    (FaultKind::DuplicateResult, format!("a second result for call {id}: each call takes exactly one"))
                }
                Some(c) if c.entry > r.entry => (
                    FaultKind::ResultWithoutCall,
                    format!("result for call {id} comes before its call (line {})", c.line),
                ),
                Some(c) => (
                    FaultKind::ResultWithoutCall,
                    format!(
                        "result for call {id} is not in the message right after its call (line {}): the provider finds no call for it",
                        c.line
                    ),
                ),
                None => (
                    FaultKind::ResultWithoutCall,
                    format!(
                        "result for call {id}, which is not in the history the provider sees (cut by a compaction, in a reply the agent does not send, or never recorded)"
                    ),
                ),
            };
            let tool = name_of.get(r.call_id.as_str()).map(ToString::to_string);
            faults.push(Fault { kind, code: kind.code(), tool, message, ..answer_fault(r) });
        }
    }

    /// Chat Completions: a `tool` message must follow the assistant message
    /// with its call, or other tool messages.
    fn chat_order(&self, results: &[&ToolResult], faults: &mut Vec<Fault>) {
        let entries = &self.session.entries;
        let calls: Vec<&ToolCall> = self.session.tool_calls.iter().filter(|c| self.sent(c.entry)).collect();
        let name_of = names(&calls);
        let result_at: HashMap<usize, usize> = results.iter().enumerate().map(|(k, r)| (r.entry, k)).collect();
        for (i, e) in entries.iter().enumerate().filter(|(i, e)| self.sent(*i) && e.role == Role::Tool) {
            let before = (0..i).rev().find(|&j| self.sent(j) && entries[j].role != Role::Tool);
            // Only the tool messages that do answer a call: orphans are told above.
            let Some(j) = before.filter(|&j| entries[j].role != Role::Assistant) else { continue };
            let r = result_at.get(&i).map(|&k| results[k]);
            if r.is_some_and(|r| faults.iter().any(|p| p.entry == r.entry)) {
                continue; // already told as an orphan
            }
            faults.push(Fault {
                kind: FaultKind::RolesOutOfOrder,
                code: FaultKind::RolesOutOfOrder.code(),
                line: e.line,
                call_id: r.map(|r| r.call_id.clone()),
                tool: r.and_then(|r| name_of.get(r.call_id.as_str()).map(ToString::to_string)),
                at: r.and_then(|r| r.at.clone()),
                pending: false,
                agent_pairs: false,
                message: format!(
                    "a tool message after the {} message at line {}: it must follow the assistant message that called the tool",
                    role_name(entries[j].role),
                    entries[j].line
                ),
                entry: i,
            });
        }
    }

    /// Empty messages: merged per message where the agent merges entries
    /// (Anthropic), else per entry. The final assistant message may be empty (a prefill).
    fn empty_messages(&self, faults: &mut Vec<Fault>) {
        let entries = &self.session.entries;
        let last_sent = (0..entries.len()).rev().find(|&i| self.sent(i));
        let mut empties: Vec<usize> = Vec::new();
        if self.pairing == Pairing::Anthropic {
            let mut all_empty = vec![true; self.groups.len()];
            for i in (0..entries.len()).filter(|&i| self.sent(i)) {
                all_empty[self.group_of[i]] &= entries[i].empty;
            }
            empties.extend(self.groups.iter().zip(all_empty).filter(|(_, e)| *e).map(|(g, _)| g.first));
        } else {
            empties.extend((0..entries.len()).filter(|&i| self.sent(i) && entries[i].empty));
        }
        for i in empties {
            let e = &entries[i];
            let same_message = |l: usize| self.group_of[l] == self.group_of[i] || l == i;
            if e.role == Role::Assistant && last_sent.is_some_and(same_message) {
                continue;
            }
            faults.push(Fault {
                kind: FaultKind::EmptyMessage,
                code: FaultKind::EmptyMessage.code(),
                line: e.line,
                call_id: None,
                tool: None,
                at: None,
                pending: false,
                agent_pairs: false,
                message: format!(
                    "an empty {} message: the provider requires content in every message",
                    role_name(e.role)
                ),
                entry: i,
            });
        }
    }

    /// A later request that the model accepted held this history: the agent sends it
    /// in a form the provider takes (pi and Codex pair calls themselves, Cline writes
    /// its results as text): not a fault for the next request. Claude Code and
    /// Codex send a result without its call as recorded: a later answer excuses
    /// none (the provider rejects it).
    fn excuse_accepted(&self, faults: &mut Vec<Fault>) {
        let entries = &self.session.entries;
        let behaviour = self.session.format.behaviour();
        let proof = |i: usize| self.sent(i) && entries[i].role == Role::Assistant && entries[i].accepted;
        let excusable = |p: &Fault| {
            !(behaviour.sends_results_as_recorded
                && matches!(p.kind, FaultKind::ResultWithoutCall | FaultKind::DuplicateResult))
        };
        let last_proof = (0..entries.len()).rev().find(|&i| proof(i));
        if behaviour.logged {
            // Every assistant message of a logged request counts as accepted; only a
            // response logged after the request proves the request was taken.
            if let Some(l) = last_proof.map(|i| entries[i].line) {
                faults.retain(|p| p.line >= l);
            }
        } else if let Some(g) = last_proof.map(|i| self.group_of[i]) {
            faults.retain(|p| self.group_of[p.entry] == usize::MAX || self.group_of[p.entry] >= g || !excusable(p));
        }
    }
}

/// Results by the id they answer, in history order.
fn by_id<'r>(results: &[&'r ToolResult]) -> HashMap<&'r str, Vec<usize>> {
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, r) in results.iter().enumerate() {
        by_id.entry(r.call_id.as_str()).or_default().push(k);
    }
    by_id
}

/// The tool names of calls, by call id.
fn names<'c>(calls: &[&'c ToolCall]) -> HashMap<&'c str, &'c str> {
    calls.iter().filter_map(|c| Some((c.call_id.as_str(), c.name.as_deref()?))).collect()
}

/// The fields of a fault about result `r` that do not depend on what is wrong.
fn answer_fault(r: &ToolResult) -> Fault {
    Fault {
        kind: FaultKind::ResultWithoutCall,
        code: FaultKind::ResultWithoutCall.code(),
        line: r.line,
        call_id: Some(r.call_id.clone()),
        tool: None,
        at: r.at.clone(),
        pending: false,
        agent_pairs: false,
        message: String::new(),
        entry: r.entry,
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::System => "system",
    }
}

/// The problems as findings of the file, for `scan` (a pending call is a warning:
/// the agent may still be running it; so is one the agent answers itself).
pub fn findings(problems: &[Fault]) -> Vec<Finding> {
    problems
        .iter()
        .map(|p| Finding {
            line: p.line,
            severity: if p.pending || p.agent_pairs { Severity::Warning } else { Severity::Error },
            message: p.message.clone(),
            code: Some(p.code),
        })
        .collect()
}

/// Is this finding one of the structural checks' (told in their own section by `diagnose`)?
pub fn is_structural(f: &Finding) -> bool {
    f.code.is_some_and(|c| {
        matches!(
            c,
            "history.call_without_result"
                | "history.result_without_call"
                | "history.duplicate_result"
                | "history.empty_message"
                | "history.roles_out_of_order"
        )
    })
}
