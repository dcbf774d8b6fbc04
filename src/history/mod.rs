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
//! - a second response to an answered call under Gemini: Gemini CLI sends each
//!   tool response twice once it resumes, and Gemini takes it.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::formats::Pairing;
use crate::model::Format;
use crate::model::{Finding, Role, Session, Severity};

/// What is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    CallWithoutResult,
    ResultWithoutCall,
    DuplicateResult,
    EmptyMessage,
    RolesOutOfOrder,
}

impl Kind {
    /// The stable problem code (`history.call_without_result`, …).
    pub fn code(self) -> &'static str {
        match self {
            Kind::CallWithoutResult => "history.call_without_result",
            Kind::ResultWithoutCall => "history.result_without_call",
            Kind::DuplicateResult => "history.duplicate_result",
            Kind::EmptyMessage => "history.empty_message",
            Kind::RolesOutOfOrder => "history.roles_out_of_order",
        }
    }
}

/// One structural problem of the history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    pub kind: Kind,
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
    /// Index into [`Session::entries`] of the entry it is in.
    #[serde(skip)]
    pub entry: usize,
}

/// Consecutive sent entries of one side (assistant, or everything else):
/// one message as the provider sees it.
#[derive(Clone, Copy)]
struct Group {
    assistant: bool,
    first: usize,
}

/// The structural problems of `session`'s history, in history order.
pub fn check(session: &Session) -> Vec<Problem> {
    check_as(session, session.format.behaviour().pairing)
}

/// [`check`] under a given dialect.
pub fn check_as(session: &Session, dialect: Pairing) -> Vec<Problem> {
    check_with(session, dialect, session.format.behaviour().orphaned_call_answer.is_some())
}

/// The calls left without a result that the agent answers itself when it
/// sends (pi; Cline, `Tool execution was interrupted…`), for a note: they are not a problem.
pub fn answered_by_agent(session: &Session) -> Vec<Problem> {
    let agent = session.format.behaviour();
    if agent.orphaned_call_answer.is_none() {
        return Vec::new();
    }
    let mut calls = check_with(session, agent.pairing, false);
    calls.retain(|p| p.kind == Kind::CallWithoutResult);
    calls
}

fn check_with(session: &Session, dialect: Pairing, paired_by_agent: bool) -> Vec<Problem> {
    let entries = &session.entries;
    // Entries recording a failed request are not sent again.
    let sent = |i: usize| entries.get(i).is_some_and(|e| e.error.is_none());
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: Vec<usize> = vec![usize::MAX; entries.len()];
    for (i, e) in entries.iter().enumerate().filter(|(i, _)| sent(*i)) {
        let assistant = e.role == Role::Assistant;
        if groups.last().is_none_or(|g| g.assistant != assistant) {
            groups.push(Group { assistant, first: i });
        }
        group_of[i] = groups.len() - 1;
    }

    // Codex answers a call left without output and drops an orphaned output itself
    // (`formats::codex::pairs`), unless a failure recorded after it names the call
    // (a build that did not pair sent it, and the provider said so).
    let failures = crate::formats::codex::pairs::Failures::of(session);
    let codex_pairs =
        |call_id: &str, from: usize| session.format == Format::Codex && !failures.name_after(call_id, from);
    let calls: Vec<&crate::model::ToolCall> = session.tool_calls.iter().filter(|c| sent(c.entry)).collect();
    let call_ids: HashSet<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
    // Calls of unsent entries: the agents drop their results with them.
    let dropped: HashSet<&str> =
        session.tool_calls.iter().filter(|c| !sent(c.entry)).map(|c| c.call_id.as_str()).collect();
    let results: Vec<&crate::model::ToolResult> = session
        .tool_results
        .iter()
        .filter(|r| sent(r.entry))
        .filter(|r| call_ids.contains(r.call_id.as_str()) || !dropped.contains(r.call_id.as_str()))
        .collect();
    let name_of: HashMap<&str, &str> =
        calls.iter().filter_map(|c| Some((c.call_id.as_str(), c.name.as_deref()?))).collect();

    // Results by the id they answer, in history order.
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, r) in results.iter().enumerate() {
        by_id.entry(r.call_id.as_str()).or_default().push(k);
    }
    let mut problems = Vec::new();
    let mut used = vec![false; results.len()];
    for c in &calls {
        let in_place = |r: &crate::model::ToolResult| match dialect {
            Pairing::Responses => r.entry >= c.entry,
            _ => {
                let (gc, gr) = (group_of[c.entry], group_of[r.entry]);
                r.entry >= c.entry && (gr == gc || gr == gc + 1)
            }
        };
        // Gemini may answer a call by its name alone.
        let mut keys = vec![c.call_id.as_str()];
        if let (Pairing::Gemini, Some(n)) = (dialect, c.name.as_deref()) {
            keys.push(n);
        }
        let found = keys
            .iter()
            .filter_map(|k| by_id.get(k))
            .flat_map(|v| v.iter().copied())
            .find(|&k| !used[k] && in_place(results[k]));
        if let Some(k) = found {
            used[k] = true;
            continue;
        }
        if paired_by_agent || codex_pairs(&c.call_id, c.entry) {
            continue;
        }
        // Still running: nothing but the rest of the same response follows it.
        let pending = entries[c.entry + 1..].iter().all(|e| e.role == Role::Assistant && e.error.is_none());
        let agent_pairs = session.format.behaviour().answers_interrupted_calls;
        let tool = c.name.as_deref().unwrap_or("a tool");
        let message = if pending && agent_pairs {
            format!(
                "{tool} call {} has no result yet: the agent may still be running it; if the run was cut off, the agent answers it itself on resume",
                c.call_id
            )
        } else if pending {
            format!(
                "{tool} call {} has no result yet: the agent may still be running it; if it is not, the next request will fail",
                c.call_id
            )
        } else if agent_pairs {
            format!(
                "{tool} call {} has no result (the run was cut off): the agent answers it itself as interrupted when it next sends the history",
                c.call_id
            )
        } else {
            let whence = match dialect {
                Pairing::Responses => "anywhere after it",
                Pairing::Anthropic => "in the message right after it",
                _ => "before the next assistant turn",
            };
            format!(
                "{tool} call {} has no result {whence} (the run was interrupted?); every request will be rejected",
                c.call_id
            )
        };
        problems.push(Problem {
            kind: Kind::CallWithoutResult,
            code: Kind::CallWithoutResult.code(),
            line: c.line,
            call_id: Some(c.call_id.clone()),
            tool: c.name.clone(),
            at: c.at.clone(),
            pending,
            agent_pairs,
            message,
            entry: c.entry,
        });
    }

    let call_of: HashMap<&str, &crate::model::ToolCall> = calls.iter().map(|c| (c.call_id.as_str(), *c)).collect();
    for (k, r) in results.iter().enumerate().filter(|(k, _)| !used[*k]) {
        let call = call_of.get(r.call_id.as_str()).copied();
        // A server-side tool's result sits in the assistant message; its call may be a kind not counted.
        if call.is_none() && (codex_pairs(&r.call_id, r.entry) || entries[r.entry].role == Role::Assistant) {
            continue;
        }
        let answered_before = by_id.get(r.call_id.as_str()).is_some_and(|v| v.iter().any(|&o| o != k && used[o]));
        let tool = name_of.get(r.call_id.as_str()).map(|s| s.to_string());
        let (kind, message) = match call {
            // Gemini does not pair results with calls one to one: Gemini CLI sends a
            // tool's response twice on every resume (its call record and its user
            // record) and the API takes it.
            Some(_) if answered_before && dialect == Pairing::Gemini => continue,
            Some(_) if answered_before => {
                (Kind::DuplicateResult, format!("a second result for call {}: each call takes exactly one", r.call_id))
            }
            Some(c) if c.entry > r.entry => (
                Kind::ResultWithoutCall,
                format!("result for call {} comes before its call (line {})", r.call_id, c.line),
            ),
            Some(c) => (
                Kind::ResultWithoutCall,
                format!(
                    "result for call {} is not in the message right after its call (line {}): the provider finds no call for it",
                    r.call_id, c.line
                ),
            ),
            None => (
                Kind::ResultWithoutCall,
                format!(
                    "result for call {}, which is not in the history the provider sees (cut by a compaction, in a reply the agent does not send, or never recorded)",
                    r.call_id
                ),
            ),
        };
        problems.push(Problem {
            kind,
            code: kind.code(),
            line: r.line,
            call_id: Some(r.call_id.clone()),
            tool,
            at: r.at.clone(),
            pending: false,
            agent_pairs: false,
            message,
            entry: r.entry,
        });
    }

    if dialect == Pairing::Chat {
        let result_at: HashMap<usize, usize> = results.iter().enumerate().map(|(k, r)| (r.entry, k)).collect();
        // A `tool` message must follow the assistant message with its call, or other tool messages.
        for (i, e) in entries.iter().enumerate().filter(|(i, e)| sent(*i) && e.role == Role::Tool) {
            let before = (0..i).rev().find(|&j| sent(j) && entries[j].role != Role::Tool);
            // Only the tool messages that do answer a call: orphans are told above.
            if let Some(j) = before.filter(|&j| entries[j].role != Role::Assistant) {
                let r = result_at.get(&i).map(|&k| results[k]);
                if r.is_some_and(|r| problems.iter().any(|p| p.entry == r.entry)) {
                    continue; // already told as an orphan
                }
                problems.push(Problem {
                    kind: Kind::RolesOutOfOrder,
                    code: Kind::RolesOutOfOrder.code(),
                    line: e.line,
                    call_id: r.map(|r| r.call_id.clone()),
                    tool: r.and_then(|r| name_of.get(r.call_id.as_str()).map(|s| s.to_string())),
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
    }

    // Empty messages: merged per message where the agent merges entries (Anthropic), else per entry.
    let last_sent = (0..entries.len()).rev().find(|&i| sent(i));
    let mut empties: Vec<usize> = Vec::new();
    if dialect == Pairing::Anthropic {
        let mut all_empty = vec![true; groups.len()];
        for i in (0..entries.len()).filter(|&i| sent(i)) {
            all_empty[group_of[i]] &= entries[i].empty;
        }
        empties.extend(groups.iter().zip(all_empty).filter(|(_, e)| *e).map(|(g, _)| g.first));
    } else {
        empties.extend((0..entries.len()).filter(|&i| sent(i) && entries[i].empty));
    }
    for i in empties {
        let e = &entries[i];
        // The final assistant message may be empty (a prefill).
        let final_assistant =
            e.role == Role::Assistant && last_sent.is_some_and(|l| group_of[l] == group_of[i] || l == i);
        if final_assistant {
            continue;
        }
        problems.push(Problem {
            kind: Kind::EmptyMessage,
            code: Kind::EmptyMessage.code(),
            line: e.line,
            call_id: None,
            tool: None,
            at: None,
            pending: false,
            agent_pairs: false,
            message: format!("an empty {} message: the provider requires content in every message", role_name(e.role)),
            entry: i,
        });
    }
    // A later request that the model accepted held this history: the agent sends it
    // in a form the provider takes (pi and Codex pair calls themselves, Cline writes
    // its results as text): not a problem for the next request. Claude Code and
    // Codex send a result without its call as recorded: a later answer excuses
    // none (the provider rejects it).
    let logged = session.format.behaviour().logged;
    let proof = |i: usize| sent(i) && entries[i].role == Role::Assistant && entries[i].accepted;
    let excusable = |p: &Problem| {
        !(session.format.behaviour().sends_results_as_recorded
            && matches!(p.kind, Kind::ResultWithoutCall | Kind::DuplicateResult))
    };
    if logged {
        // Every assistant message of a logged request counts as accepted; only a
        // response logged after the request proves the request was taken.
        if let Some(l) = (0..entries.len()).rev().find(|&i| proof(i)).map(|i| entries[i].line) {
            problems.retain(|p| p.line >= l);
        }
    } else if let Some(g) = (0..entries.len()).rev().find(|&i| proof(i)).map(|i| group_of[i]) {
        problems.retain(|p| group_of[p.entry] == usize::MAX || group_of[p.entry] >= g || !excusable(p));
    }
    problems.sort_by_key(|p| (p.entry, p.line));
    problems
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
pub fn findings(problems: &[Problem]) -> Vec<Finding> {
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
