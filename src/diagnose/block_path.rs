//! From the request path a provider blames (`messages.3.content.1`,
//! `input[6].output[0]`, `contents[0].parts[1]`) to the attachment it means.
//!
//! Logged requests are the request: the path is read against each
//! attachment's JSON pointer. An agent's session is read against the request
//! `preview` builds for it ([`locate`]).

use serde_json::Value;

use crate::model::Session;
use crate::preview;
use crate::reader::Source;
use crate::request::Dialect;

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

/// The request an agent session stands for, as `preview` builds it: the one
/// model of what the agent sends, read here instead of numbered again.
pub struct SentRequest<'a> {
    pub source: &'a Source,
    pub single_document: bool,
    pub dialect: Dialect,
}

/// The attachments `block` names. A logged request is the request: the path
/// is read against each attachment's JSON pointer. An agent's session is
/// read in the request its agent sends, built by `preview` with every payload
/// standing for its place in the file (Claude Code's attachment records,
/// pi's separate user turns and Codex's leading developer message shift the
/// numbering away from the records'). Empty when the path names no
/// attachment we can see; the whole message's attachments when the path stops
/// at a message or its block holds none of ours.
pub fn locate(block: &str, session: &Session, request: Option<&SentRequest<'_>>) -> Vec<usize> {
    let Some((list, idx)) = parse(block) else { return Vec::new() };
    let atts = &session.attachments;
    if session.format.behaviour().logged {
        return (0..atts.len())
            .filter(|&i| pointer_indices(&atts[i].pointer, Some(&list)).is_some_and(|p| p.starts_with(&idx)))
            .collect();
    }
    let Some(r) = request else { return Vec::new() };
    // Codex rebuilt what comes before its summary from no record: the items
    // after it are numbered from a start no file tells.
    if crate::formats::codex::rebuilt(session) {
        return Vec::new();
    }
    // Items the agent sends before the session's own hold no attachment of ours.
    let leading = session.format.adapter().leading_items(session, r.dialect);
    let Some(index) = idx[0].checked_sub(leading) else { return Vec::new() };
    let Some(item) = preview::item(r.source, session, r.single_document, r.dialect, index) else {
        return Vec::new();
    };
    let ours = |node: &Value| -> Vec<usize> {
        let (mut offsets, mut inline) = (Vec::new(), Vec::new());
        item.payloads(node, &mut offsets, &mut inline);
        let hashes: Vec<String> = inline.iter().filter_map(|s| sha256_of_base64(s)).collect();
        (0..atts.len())
            .filter(|&i| {
                atts[i].span.is_some_and(|s| offsets.contains(&s.offset))
                    || atts[i].sha256.as_ref().is_some_and(|h| hashes.contains(h))
            })
            .collect()
    };
    let whole = ours(&item.value);
    let mut node = &item.value;
    for &i in &idx[1..] {
        match child(node, i) {
            Some(n) => node = n,
            None => return whole,
        }
    }
    let exact = ours(node);
    if exact.is_empty() { whole } else { exact }
}

/// Block `i` of a message, item or part: the `i`th of its content list, in
/// whichever dialect's name (`content`, a Responses output's `output`, Gemini's `parts`).
fn child(node: &Value, i: u64) -> Option<&Value> {
    let list = ["content", "output", "parts"].iter().find_map(|k| node.get(*k)?.as_array())?;
    list.get(usize::try_from(i).ok()?)
}

/// The sha256 (hex) of a string's bytes when it is base64 or a base64 `data:` URL.
fn sha256_of_base64(s: &str) -> Option<String> {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    let data = match s.strip_prefix("data:") {
        Some(url) => url.split_once(";base64,")?.1,
        None => s,
    };
    if data.len() < 8 || !data.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')) {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).ok()?;
    Some(format!("{:x}", Sha256::digest(&bytes)))
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
