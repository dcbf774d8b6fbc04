//! Mending a broken history (issue 14): a tool call left without its result
//! (the run was interrupted mid-tool) gets a result saying so, right after
//! the assistant turn that made it; a result whose call is gone is removed.
//! This is what the agents' own resume fixes do, in each agent's own records.

use std::collections::HashMap;

use serde_json::json;

use crate::model::Format;
use crate::model::{Fault, FaultKind};
use crate::model::{Origin, Role, Session};

use super::{Op, Rewrite};
use crate::json::splice;

/// The synthetic result an interrupted call gets in `format`: the agent's own
/// words where it mends such a call itself (so preview and a repaired copy
/// carry what the agent would send), else [`crate::formats::INTERRUPTED`].
pub fn interrupted(format: Format) -> &'static str {
    format.behaviour().interrupted().0
}

impl Rewrite {
    /// Plans the mending of every structural problem `problems` names.
    pub fn mend(&mut self, session: &Session, problems: &[Fault]) {
        let mut removed = None;
        for p in problems {
            let Some(call_id) = p.call_id.clone() else { continue };
            match p.kind {
                FaultKind::CallWithoutResult if session.format.behaviour().holds_synthetic_results => {
                    // After the last line of the assistant turn that made the call.
                    let mut last = p.entry;
                    while session.entries.get(last + 1).is_some_and(|e| e.role == Role::Assistant && e.error.is_none())
                    {
                        last += 1;
                    }
                    let Some(e) = session.entries.get(last) else { continue };
                    self.ops.entry(e.line).or_default().push(Op::Answer { call_id, tool: p.tool.clone() });
                    self.summary.calls_answered.push(p.call_id.clone().unwrap_or_default());
                }
                FaultKind::ResultWithoutCall => {
                    // A result of its own record (Codex items, pi messages) goes with its record.
                    let op = if session.format.behaviour().results_are_records {
                        Op::Drop
                    } else {
                        // Its media go with it: what reads the record again
                        // need not read them (`sparse`).
                        let removed = removed.get_or_insert_with(|| ResultPayloads::of(session));
                        self.replaced.extend(removed.of_result(p.line, &call_id));
                        let first = session.entries.iter().position(|e| e.line == p.line).unwrap_or(p.entry);
                        Op::RemoveResult { call_id, message: p.entry.checked_sub(first) }
                    };
                    self.ops.entry(p.line).or_default().push(op);
                    self.summary.results_removed.push(p.call_id.clone().unwrap_or_default());
                }
                // Gemini CLI sends a call record's result and the `user` record that
                // repeats it: the repeat goes (its message in a checkpoint, or its record).
                FaultKind::DuplicateResult if session.format == Format::GeminiCli => {
                    self.ops.entry(p.line).or_default().push(Op::RemoveRepeat { call_id });
                    self.summary.repeats_removed.push(p.call_id.clone().unwrap_or_default());
                }
                _ => {}
            }
        }
    }
}

/// Gemini CLI: the `user` messages of a record that repeat responses to
/// `repeated` already given, or answer `orphaned` calls that are gone: `""`
/// for the record itself, else the pointer of each such message in the
/// checkpoint (`$set.messages`) or legacy document (`messages`) the line
/// holds. A message that also holds anything but such responses and their
/// media is kept.
pub fn gemini_cli_repeats(text: &[u8], repeated: &[&str], orphaned: &[&str]) -> Vec<String> {
    use serde_json::Value;
    fn response_id(p: &Value) -> Option<&str> {
        p.get("functionResponse").and_then(|r| r.get("id")).and_then(Value::as_str)
    }
    let call_ids: Vec<&str> = repeated.iter().chain(orphaned).copied().collect();
    let Ok(v) = serde_json::from_slice::<Value>(text) else { return Vec::new() };
    // The ids a `user` message answers, if it holds nothing but responses to `call_ids` and media.
    let answers = |m: &Value| -> Option<Vec<String>> {
        let parts = m.get("content").and_then(Value::as_array)?;
        let mut ids = Vec::new();
        for p in parts {
            match response_id(p) {
                Some(id) if call_ids.contains(&id) => ids.push(id.to_string()),
                Some(_) => return None,
                None if p.get("inlineData").is_some() || p.get("fileData").is_some() => {}
                None => return None,
            }
        }
        (m.get("type").and_then(Value::as_str) == Some("user") && !ids.is_empty()).then_some(ids)
    };
    if answers(&v).is_some() {
        return vec![String::new()];
    }
    let (list, at) = match v.get("$set").and_then(|s| s.get("messages")) {
        Some(list) => (list, "/$set/messages"),
        None => (v.get("messages").unwrap_or(&Value::Null), "/messages"),
    };
    // The first answer stays: a call record's result, or a message of its own
    // (a checkpoint writes the results as `<call record id>_response`).
    let mut answered: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (i, m) in list.as_array().map_or(&[][..], Vec::as_slice).iter().enumerate() {
        for c in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
            if let Some(id) =
                c.get("id").and_then(Value::as_str).filter(|_| c.get("result").is_some_and(|r| !r.is_null()))
            {
                answered.push(id.to_string());
            }
        }
        let Some(ids) = answers(m) else { continue };
        if ids.iter().all(|id| answered.contains(id) || orphaned.contains(&id.as_str())) {
            out.push(format!("{at}/{i}"));
        }
        answered.extend(ids);
    }
    out
}

/// Gemini CLI: the edits that leave each `toolCalls[i].result` of record
/// `text` with its own call's parts only ([`crate::formats::gemini_cli::own_parts`]),
/// in the record and in each message of a checkpoint or legacy document.
pub fn gemini_cli_foreign_parts(text: &[u8]) -> Vec<splice::Edit> {
    use serde_json::Value;
    let Ok(v) = serde_json::from_slice::<Value>(text) else { return Vec::new() };
    let mut messages: Vec<(String, &Value)> = vec![(String::new(), &v)];
    for (list, at) in
        [(v.get("$set").and_then(|s| s.get("messages")), "/$set/messages"), (v.get("messages"), "/messages")]
    {
        for (i, m) in list.and_then(Value::as_array).into_iter().flatten().enumerate() {
            messages.push((format!("{at}/{i}"), m));
        }
    }
    let mut out = Vec::new();
    for (at, m) in messages {
        for (i, c) in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let (Some(id), Some(parts)) =
                (c.get("id").and_then(Value::as_str), c.get("result").and_then(Value::as_array))
            else {
                continue;
            };
            let responses: Vec<Option<Option<&str>>> = (parts.iter())
                .map(|p| p.get("functionResponse").map(|r| r.get("id").and_then(Value::as_str)))
                .collect();
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            let Some(own) = crate::formats::gemini_cli::own_parts(id, name, &responses) else { continue };
            let keep = |j: usize| own.contains(&j);
            out.extend(list_removals(text, &format!("{at}/toolCalls/{i}/result"), keep));
        }
    }
    out
}

/// The edits that remove every member of the list at `pointer` that `keep`
/// refuses: one edit per run of neighbours, so no two edits share a comma.
pub fn list_removals(text: &[u8], pointer: &str, keep: impl Fn(usize) -> bool) -> Vec<splice::Edit> {
    let Some(range) = splice::locate(text, pointer) else { return Vec::new() };
    let Some(kids) = splice::children(text, range.start) else { return Vec::new() };
    let mut out = Vec::new();
    let mut j = 0;
    while j < kids.len() {
        if keep(j) {
            j += 1;
            continue;
        }
        let first = j;
        while j < kids.len() && !keep(j) {
            j += 1;
        }
        let cut = if j < kids.len() {
            kids[first].member.start..kids[j].member.start
        } else if first > 0 {
            kids[first - 1].member.end..kids[j - 1].member.end
        } else {
            kids[first].member.start..kids[j - 1].member.end
        };
        out.push(splice::Edit { range: cut, with: String::new() });
    }
    out
}

/// The payloads of the media in tool results, by the line and the call id of
/// their result: those of a result [`Op::RemoveResult`] removes are never
/// written. A payload held on another line (a copy the UI keeps) stays.
struct ResultPayloads<'s>(HashMap<(u64, &'s str), Vec<(u64, u64)>>);

impl<'s> ResultPayloads<'s> {
    fn of(session: &'s Session) -> ResultPayloads<'s> {
        let mut by_result: HashMap<(u64, &str), Vec<(u64, u64)>> = HashMap::new();
        for a in session.attachments.iter().filter(|a| a.origin == Origin::ToolResult) {
            let (Some(call_id), Some(s)) = (a.call_id.as_deref(), a.span) else { continue };
            if s.line == 0 || s.line == a.line {
                by_result.entry((a.line, call_id)).or_default().push((s.offset, s.len));
            }
        }
        ResultPayloads(by_result)
    }

    fn of_result(&self, line: u64, call_id: &str) -> Vec<(u64, u64)> {
        self.0.get(&(line, call_id)).cloned().unwrap_or_default()
    }
}

/// The pointers of the result blocks answering `call_id` in a record of `format`:
/// `message` is the message's index in a logged request.
pub fn result_pointers(format: Format, text: &[u8], call_id: &str, message: Option<usize>) -> Vec<String> {
    let lists: Vec<String> = match format {
        Format::ClaudeCode => vec!["/message/content".into()],
        Format::Cline | Format::Anthropic => {
            let m = message.unwrap_or(0);
            ["", "/request", "/body"].iter().map(|w| format!("{w}/messages/{m}/content")).collect()
        }
        // A whole message or item is the result: remove it from its list.
        Format::OpenaiChat => ["", "/request", "/body"].iter().map(|w| format!("{w}/messages")).collect(),
        Format::OpenaiResponses => ["", "/request", "/body"].iter().map(|w| format!("{w}/input")).collect(),
        // Results of their own records go with their record (`Op::Drop`); the
        // others keep no result without its call that a request would send.
        Format::Codex
        | Format::Pi
        | Format::GeminiCli
        | Format::Gemini
        | Format::Mux
        | Format::Opencode
        | Format::Copilot
        | Format::Kiro
        | Format::QwenCode => Vec::new(),
    };
    let key = match format {
        Format::OpenaiChat => "/tool_call_id",
        Format::OpenaiResponses => "/call_id",
        _ => "/tool_use_id",
    };
    let mut out = Vec::new();
    for list in lists {
        let Some(range) = splice::locate(text, &list) else { continue };
        let Some(kids) = splice::children(text, range.start) else { continue };
        for (i, k) in kids.iter().enumerate() {
            let block = &text[k.value.clone()];
            let id = splice::locate(block, key).and_then(|r| serde_json::from_slice::<String>(&block[r]).ok());
            let is_result = match format {
                Format::OpenaiResponses => {
                    splice::locate(block, "/type").is_some_and(|r| block[r].ends_with(b"_output\""))
                }
                Format::OpenaiChat => true,
                _ => splice::locate(block, "/type").is_some_and(|r| &block[r] == b"\"tool_result\""),
            };
            if is_result && id.as_deref() == Some(call_id) {
                out.push(format!("{list}/{i}"));
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    out
}

/// The record that answers interrupted calls, written after `after` (the
/// record of the turn that made them), in `format`. `id` is the new record's
/// own id where the format chains records; `session_id` the copy's.
pub fn answer_record(
    format: Format,
    after: &[u8],
    calls: &[(String, Option<String>)],
    id: &str,
    session_id: Option<&str>,
) -> Option<String> {
    let field = |ptr: &str| -> serde_json::Value {
        splice::locate(after, ptr)
            .and_then(|r| serde_json::from_slice(&after[r]).ok())
            .unwrap_or(serde_json::Value::Null)
    };
    let now = crate::clock::now_rfc3339();
    let v = match format {
        Format::ClaudeCode => {
            let blocks: Vec<serde_json::Value> = calls
                .iter()
                .map(|(c, _)| json!({"type":"tool_result","tool_use_id":c,"content":interrupted(format),"is_error":true}))
                .collect();
            let mut line = serde_json::Map::new();
            line.insert("parentUuid".into(), field("/uuid"));
            line.insert("isSidechain".into(), field("/isSidechain"));
            line.insert("userType".into(), json!("external"));
            for k in ["cwd", "version", "gitBranch"] {
                let v = field(&format!("/{k}"));
                if !v.is_null() {
                    line.insert(k.into(), v);
                }
            }
            line.insert("sessionId".into(), session_id.map_or_else(|| field("/sessionId"), |s| json!(s)));
            line.insert("type".into(), json!("user"));
            line.insert("message".into(), json!({"role":"user","content":blocks}));
            line.insert("uuid".into(), json!(id));
            line.insert("timestamp".into(), json!(now));
            line.insert("toolUseResult".into(), json!(format!("Error: {}", interrupted(format))));
            serde_json::Value::Object(line)
        }
        Format::Codex => {
            // One item per call, as Codex writes them; the caller writes each line.
            let (c, _) = calls.first()?;
            json!({"timestamp": now, "type":"response_item","payload":{"type":"function_call_output","call_id":c,"output":crate::formats::INTERRUPTED}})
        }
        Format::Pi => {
            let (c, tool) = calls.first()?;
            let ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
            json!({"type":"message","id":id,"parentId":field("/id"),"timestamp":now,"message":{"role":"toolResult","toolCallId":c,
                "toolName":tool.clone().unwrap_or_default(),"content":[{"type":"text","text":crate::formats::INTERRUPTED}],"isError":true,"timestamp":ms}})
        }
        Format::Copilot => {
            // The event the CLI itself appends on resume, chained after `after`.
            let (c, _) = calls.first()?;
            json!({"type":"tool.execution_complete","data":{"toolCallId":c,"model":"resumed","interactionId":"resume",
                "success":false,"error":{"message":interrupted(format)}},"id":id,"timestamp":now,"parentId":field("/id")})
        }
        _ => return None,
    };
    Some(v.to_string())
}
