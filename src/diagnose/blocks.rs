//! From the request path a provider blames (`messages.3.content.1`,
//! `input[6].output[0]`, `contents[0].parts[1]`) to the attachment it means.
//!
//! Logged requests are the request: the path is read against each
//! attachment's JSON pointer. Agent sessions are numbered the way the agent
//! builds its request: one message per sent entry, except that Anthropic-style
//! agents merge consecutive user-side entries (and the split lines of one
//! assistant reply) into one message, whose content blocks run on across them.

use crate::model::{Attachment, Origin, Role, Session};

/// The list a path starts in and the indices along it: `messages.3.content.1`
/// → (`messages`, [3, 1]).
pub fn parse(block: &str) -> Option<(String, Vec<u64>)> {
    let mut tokens = block.split(['.', '[', ']']).filter(|t| !t.is_empty());
    let list = tokens.next()?.to_string();
    let indices: Vec<u64> = tokens.filter_map(|t| t.parse().ok()).collect();
    (!indices.is_empty()).then_some((list, indices))
}

/// The numbers of a JSON pointer after its segment `from`, and after the first
/// `content`/`output`/`parts` segment when `from` is `None`.
fn pointer_indices(pointer: &str, from: Option<&str>) -> Option<Vec<u64>> {
    let segs: Vec<&str> = pointer.split('/').collect();
    let start = match from {
        Some(f) => segs.iter().position(|s| *s == f)?,
        None => segs.iter().position(|s| matches!(*s, "content" | "output" | "parts"))?,
    };
    Some(segs[start + 1..].iter().filter_map(|s| s.parse().ok()).collect())
}

/// How an agent numbers the messages of its request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// The file is the logged request: read the path against the pointers.
    Logged,
    /// One message per sent entry (OpenAI, Gemini and Responses agents).
    PerEntry,
    /// Consecutive entries of one side merged into one message (Anthropic).
    Merged,
    /// One message per sent entry, except that consecutive tool results share
    /// one user message, a `tool_result` block each (pi on Anthropic).
    ResultsMerged,
}

impl Numbering {
    /// Whether a tool-result entry is one `tool_result` block of its message.
    fn results_are_blocks(self) -> bool {
        matches!(self, Numbering::Merged | Numbering::ResultsMerged)
    }
}

/// The attachments `block` names, in `session`'s own numbering. Empty when the
/// path names no attachment we can see; the whole message's attachments when
/// the path stops at a message or its block holds none of ours.
pub fn locate(block: &str, session: &Session, numbering: Numbering) -> Vec<usize> {
    let Some((list, idx)) = parse(block) else { return Vec::new() };
    let atts = &session.attachments;
    // Claude Code's request holds more messages than its entries: read the path against it.
    if numbering == Numbering::Merged
        && session.format == crate::formats::Format::ClaudeCode
        && let Some(found) = super::claude_code::locate(session, &list, &idx)
    {
        return found;
    }
    if numbering == Numbering::Logged {
        return (0..atts.len())
            .filter(|&i| pointer_indices(&atts[i].pointer, Some(&list)).is_some_and(|p| p.starts_with(&idx)))
            .collect();
    }
    let messages = request_messages(session, numbering);
    // Items the agent sends before the session's own hold no attachment of ours.
    let Some(first) = idx[0].checked_sub(session.format.behaviour().leading_items) else {
        return Vec::new();
    };
    let Some(slots) = messages.get(first as usize) else { return Vec::new() };
    let slot_of = |a: &Attachment| slots.iter().find(|s| s.entry == a.entry && s.tool_part == tool_part(session, a));
    let in_message: Vec<usize> = (0..atts.len()).filter(|&i| slot_of(&atts[i]).is_some()).collect();
    if idx.len() == 1 {
        return in_message;
    }
    let within = |a: &Attachment| -> bool {
        let Some(slot) = slot_of(a) else { return false };
        // A tool part split out of an assistant entry: its numbering is the
        // SDK's, not the entry's; the message is as close as we can name.
        if slot.tool_part {
            return false;
        }
        let Some(mut p) = pointer_indices(&a.pointer, None) else { return false };
        if numbering.results_are_blocks() && session.entries[a.entry].role == Role::Tool {
            // A tool-result entry sends one `tool_result` block holding its content.
            p.insert(0, slot.offset);
        } else if let Some(first) = p.first_mut() {
            *first += slot.offset;
        }
        p.starts_with(&idx[1..]) || idx[1..].starts_with(&p)
    };
    let exact: Vec<usize> = in_message.iter().copied().filter(|&i| within(&atts[i])).collect();
    if exact.is_empty() { in_message } else { exact }
}

/// A tool result kept inside the assistant entry that called it (mux,
/// opencode, Gemini CLI): the request sends it as a message of its own.
fn tool_part(session: &Session, a: &Attachment) -> bool {
    a.origin == Origin::ToolResult && session.entries.get(a.entry).is_some_and(|e| e.role == Role::Assistant)
}

/// One entry's share of a request message.
#[derive(Clone, Copy, Debug)]
struct Slot {
    entry: usize,
    /// The content block this entry's blocks start at within the message.
    offset: u64,
    /// The tool results split out of an assistant entry.
    tool_part: bool,
}

/// The request's messages, each as the entry slots it is built from.
fn request_messages(session: &Session, numbering: Numbering) -> Vec<Vec<Slot>> {
    let holds_results: Vec<bool> = {
        let mut v = vec![false; session.entries.len()];
        for a in &session.attachments {
            if tool_part(session, a) {
                v[a.entry] = true;
            }
        }
        v
    };
    let mut out: Vec<Vec<Slot>> = Vec::new();
    // The side and whether it was a tool result, of the last message's last entry.
    let mut last: Option<(bool, bool)> = None;
    let mut offset = 0u64;
    let mut push = |slot: Slot, user_side: bool, result: bool, blocks: u64, out: &mut Vec<Vec<Slot>>| {
        let joins = match numbering {
            Numbering::Merged => last.map(|l| l.0) == Some(user_side),
            Numbering::ResultsMerged => result && last.map(|l| l.1) == Some(true),
            Numbering::Logged | Numbering::PerEntry => false,
        };
        if joins && let Some(m) = out.last_mut() {
            m.push(Slot { offset, ..slot });
            offset += blocks;
            last = Some((user_side, result));
            return;
        }
        out.push(vec![slot]);
        offset = blocks;
        last = Some((user_side, result));
    };
    for (i, e) in session.entries.iter().enumerate() {
        // Failed requests and agent notices are not sent back.
        if e.error.is_some() || (numbering == Numbering::Merged && e.role == Role::System) {
            continue;
        }
        let result = e.role == Role::Tool;
        let blocks = if result && numbering.results_are_blocks() { 1 } else { u64::from(e.blocks.max(1)) };
        let user_side = e.role != Role::Assistant;
        push(Slot { entry: i, offset: 0, tool_part: false }, user_side, result, blocks, &mut out);
        if holds_results[i] {
            push(Slot { entry: i, offset: 0, tool_part: true }, true, true, 1, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_in_every_dialect() {
        assert_eq!(parse("messages.3.content.1"), Some(("messages".into(), vec![3, 1])));
        assert_eq!(parse("input[6].output[0]"), Some(("input".into(), vec![6, 0])));
        assert_eq!(parse("contents[0].parts[1]"), Some(("contents".into(), vec![0, 1])));
        assert_eq!(parse("messages"), None);
    }

    #[test]
    fn pointers_number_from_their_content() {
        assert_eq!(pointer_indices("/message/content/2/content/0", None), Some(vec![2, 0]));
        assert_eq!(pointer_indices("/payload/output/0", None), Some(vec![0]));
        assert_eq!(pointer_indices("/request/messages/3/content/1", Some("messages")), Some(vec![3, 1]));
    }
}
