//! Where the trim looks: the tool outputs of a record in each agent's shape,
//! the bytes of a record its agent sends (Gemini CLI keeps much it does not),
//! and the messages of a one-document session.

use std::ops::Range;

use serde_json::Value;

use crate::json::splice;

/// A tool output found: its pointer, its length in bytes, the call it answers.
pub type Found = (String, u64, Option<String>);

/// Members that hold media, references or a block's own fields, never tool text.
const NOT_TEXT: &[&str] = &[
    "data",
    "source",
    "image_url",
    "inlineData",
    "inline_data",
    "fileData",
    "file_data",
    "url",
    "toolUseResult",
    "type",
    "id",
    "tool_use_id",
    "call_id",
    "mimeType",
    "mime_type",
    "mediaType",
    "cache_control",
];

/// The output strings of the tool results in `v` (each with its pointer, its
/// length and the call it answers), in the shapes the agents write: an
/// Anthropic `tool_result` block (Claude Code, Cline), a Responses
/// `function_call_output` (Codex), a message of role `toolResult` (pi) or
/// `tool` (Chat Completions), a Gemini `functionResponse` part (Gemini CLI),
/// an opencode `tool` part's `state.output`. Claude Code's `toolUseResult` is
/// not sent.
pub fn outputs(v: &Value, at: &str, call: Option<String>, out: &mut Vec<Found>) {
    match v {
        Value::Object(map) => {
            let ty = map.get("type").and_then(Value::as_str);
            let role = map.get("role").and_then(Value::as_str);
            let id = ["tool_use_id", "call_id", "toolCallId", "tool_call_id", "callID"]
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
                .map(str::to_string)
                .or(call);
            let response = ["functionResponse", "function_response"]
                .iter()
                .find_map(|k| map.get(*k).filter(|r| r.is_object()).map(|r| (*k, r)));
            if let Some((key, r)) = response {
                // Gemini: the tool's words are the members of `response` (`output`, `error`).
                let id = r.get("id").or_else(|| r.get("name")).and_then(Value::as_str).map(str::to_string);
                if let Some(resp) = r.get("response") {
                    texts(resp, &format!("{at}/{}/response", escape(key)), id.as_ref(), out);
                }
                return;
            }
            match (ty, role) {
                (Some("tool_result"), _) | (_, Some("toolResult" | "tool")) => {
                    if let Some(c) = map.get("content") {
                        texts(c, &format!("{at}/content"), id.as_ref(), out);
                    }
                }
                (Some("function_call_output" | "custom_tool_call_output"), _) => {
                    if let Some(c) = map.get("output") {
                        texts(c, &format!("{at}/output"), id.as_ref(), out);
                    }
                }
                // opencode: a tool part keeps what it sends in `state.output`.
                (Some("tool"), _) if map.get("state").is_some_and(Value::is_object) => {
                    if let Some(Value::String(s)) = map.get("state").and_then(|s| s.get("output")) {
                        out.push((format!("{at}/state/output"), s.len() as u64, id));
                    }
                }
                _ => {
                    for (k, x) in map.iter().filter(|(k, _)| k.as_str() != "toolUseResult") {
                        outputs(x, &format!("{at}/{}", escape(k)), id.clone(), out);
                    }
                }
            }
        }
        Value::Array(items) => {
            for (j, x) in items.iter().enumerate() {
                outputs(x, &format!("{at}/{j}"), call.clone(), out);
            }
        }
        _ => {}
    }
}

/// The strings of one tool result's output, at any depth (Cline keeps a
/// tool's raw output, `[{query, result, success}]`), but for media and
/// references and `data:` URLs.
fn texts(v: &Value, at: &str, call: Option<&String>, out: &mut Vec<Found>) {
    match v {
        Value::String(s) if !s.starts_with("data:") => out.push((at.to_string(), s.len() as u64, call.cloned())),
        Value::Array(items) => {
            for (j, item) in items.iter().enumerate() {
                texts(item, &format!("{at}/{j}"), call, out);
            }
        }
        Value::Object(map) => {
            let media = map.get("type").and_then(Value::as_str).is_some_and(|t| {
                matches!(t, "image" | "document" | "file" | "image_url" | "input_image" | "input_file" | "media")
            });
            if media {
                return;
            }
            for (k, x) in map.iter().filter(|(k, _)| !NOT_TEXT.contains(&k.as_str())) {
                texts(x, &format!("{at}/{}", escape(k)), call, out);
            }
        }
        _ => {}
    }
}

/// A JSON pointer token for member `k` (RFC 6901).
pub fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

/// The members (or elements) of the container that starts `range` of `t`.
fn children(t: &[u8], range: &Range<usize>) -> Vec<splice::Child> {
    splice::children(t, range.start).unwrap_or_default()
}

/// The value of member `key` of the object at `range`.
fn member(t: &[u8], range: &Range<usize>, key: &str) -> Option<Range<usize>> {
    children(t, range).into_iter().find(|c| c.key.as_deref() == Some(key)).map(|c| c.value)
}

/// The message list of a record that holds one (a Gemini CLI checkpoint's
/// `$set.messages`, a metadata line's or legacy file's `messages`) and its pointer.
fn message_list(t: &[u8], root: &Range<usize>) -> Option<(&'static str, Range<usize>)> {
    if let Some(set) = member(t, root, "$set") {
        return member(t, &set, "messages").map(|m| ("/$set/messages", m));
    }
    member(t, root, "messages").map(|m| ("/messages", m))
}

/// The byte ranges of a Gemini CLI record that the CLI sends: of each `user`
/// and `gemini` message, its `content` and its calls' `id`, `name`, `args`
/// and `result` (`convertSessionToClientHistory`), not the metadata it keeps
/// beside them (timestamps, token counts, `resultDisplay`, descriptions).
/// `part`: the one message of a checkpoint that is seen; `gone`: the pointers
/// of messages the repair leaves out (repeated responses).
pub fn gemini_cli_sent(t: &[u8], part: Option<u32>, gone: &[String]) -> Vec<Range<usize>> {
    let Some(root) = splice::locate(t, "") else { return Vec::new() };
    let mut out = Vec::new();
    match message_list(t, &root) {
        Some((base, list)) => {
            for (k, m) in children(t, &list).into_iter().enumerate() {
                let seen = part.is_none_or(|p| p as usize == k);
                if seen && !gone.contains(&format!("{base}/{k}")) {
                    out.extend(gemini_cli_message(t, &m.value));
                }
            }
        }
        None => out.extend(gemini_cli_message(t, &root)),
    }
    out
}

fn gemini_cli_message(t: &[u8], m: &Range<usize>) -> Vec<Range<usize>> {
    let members = children(t, m);
    let ty = members.iter().find(|c| c.key.as_deref() == Some("type")).map(|c| &t[c.value.clone()]);
    if !matches!(ty, Some(b"\"user\"" | b"\"gemini\"")) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in members {
        match c.key.as_deref() {
            Some("content") => out.push(c.value),
            Some("toolCalls") => {
                for call in children(t, &c.value) {
                    let sent = children(t, &call.value).into_iter();
                    let sent = sent.filter(|x| matches!(x.key.as_deref(), Some("id" | "name" | "args" | "result")));
                    out.extend(sent.map(|x| x.value));
                }
            }
            _ => {}
        }
    }
    out
}

/// The messages of a one-document session, each with its pointer: the
/// elements of a top-level array (a logged body, Cline's IDE history), or of
/// its `messages` (Cline CLI's task, an opencode export).
pub fn document_messages(t: &[u8]) -> Option<(&'static str, Vec<Range<usize>>)> {
    let root = splice::locate(t, "")?;
    if t.get(root.start) == Some(&b'[') {
        return Some(("", children(t, &root).into_iter().map(|c| c.value).collect()));
    }
    let list = member(t, &root, "messages")?;
    (t.get(list.start) == Some(&b'[')).then(|| ("/messages", children(t, &list).into_iter().map(|c| c.value).collect()))
}

/// The line each of `messages` (ranges of `t`, in order) is on, as the reader
/// numbers an entry of a one-document session: the line of its first member.
pub fn message_lines(t: &[u8], messages: &[Range<usize>]) -> Vec<u64> {
    let (mut line, mut counted) = (1u64, 0usize);
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let first =
            t[m.start + 1..m.end].iter().position(|b| !b.is_ascii_whitespace()).map_or(m.start, |i| m.start + 1 + i);
        let at = first.max(counted);
        line += memchr::memchr_iter(b'\n', &t[counted..at]).count() as u64;
        counted = at;
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_in_each_shape() {
        let big = "x".repeat(10);
        let find = |v: Value| {
            let mut found = Vec::new();
            outputs(&v, "", None, &mut found);
            found
        };
        let cc = serde_json::json!({"message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":big}]},"toolUseResult":{"stdout":big}});
        assert_eq!(find(cc), vec![("/message/content/0/content".to_string(), 10, Some("t1".to_string()))]);
        let codex = serde_json::json!({"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":big}});
        assert_eq!(find(codex), vec![("/payload/output".to_string(), 10, Some("c1".to_string()))]);
        let pi = serde_json::json!({"type":"message","message":{"role":"toolResult","toolCallId":"p1","content":[{"type":"text","text":big},{"type":"image","data":big,"mimeType":"image/png"}]}});
        assert_eq!(find(pi), vec![("/message/content/0/text".to_string(), 10, Some("p1".to_string()))]);
        let gemini = serde_json::json!({"type":"gemini","toolCalls":[{"id":"g1","result":[{"functionResponse":{"id":"g1","name":"read_file","response":{"output":big}}},{"inlineData":{"data":big}}]}]});
        assert_eq!(
            find(gemini),
            vec![("/toolCalls/0/result/0/functionResponse/response/output".to_string(), 10, Some("g1".to_string()))]
        );
        let cline = serde_json::json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"k1","content":[{"query":"notes","result":big,"success":true},{"query":"shots","result":[{"type":"image","data":big}]}]}]});
        assert_eq!(
            find(cline),
            vec![
                ("/content/0/content/0/query".to_string(), 5, Some("k1".to_string())),
                ("/content/0/content/0/result".to_string(), 10, Some("k1".to_string())),
                ("/content/0/content/1/query".to_string(), 5, Some("k1".to_string())),
            ]
        );
        let opencode = serde_json::json!({"parts":[{"type":"tool","callID":"o1","tool":"read","state":{"status":"completed","output":big,"metadata":{"preview":big}}}]});
        assert_eq!(find(opencode), vec![("/parts/0/state/output".to_string(), 10, Some("o1".to_string()))]);
    }

    #[test]
    fn what_gemini_cli_sends_of_a_record() {
        let rec = br#"{"id":"a","type":"gemini","content":"","tokens":{"input":1},"toolCalls":[{"id":"c","name":"r","args":{},"result":[1],"status":"success","resultDisplay":"long display"}]}"#;
        let sent: Vec<&[u8]> = gemini_cli_sent(rec, None, &[]).into_iter().map(|r| &rec[r]).collect();
        assert_eq!(sent, [&b"\"\""[..], b"\"c\"", b"\"r\"", b"{}", b"[1]"]);
        let set = br#"{"$set":{"messages":[{"id":"u","type":"user","content":"hi"},{"id":"i","type":"info","content":"no"},{"id":"v","type":"user","content":"again"}]}}"#;
        let sent: Vec<&[u8]> = gemini_cli_sent(set, None, &[]).into_iter().map(|r| &set[r]).collect();
        assert_eq!(sent, [&b"\"hi\""[..], b"\"again\""]);
        let sent: Vec<&[u8]> =
            gemini_cli_sent(set, None, &["/$set/messages/2".into()]).into_iter().map(|r| &set[r]).collect();
        assert_eq!(sent, [&b"\"hi\""[..]]);
        let sent: Vec<&[u8]> = gemini_cli_sent(set, Some(2), &[]).into_iter().map(|r| &set[r]).collect();
        assert_eq!(sent, [&b"\"again\""[..]]);
    }

    #[test]
    fn the_messages_of_a_document() {
        let cline = br#"{"version":1,"messages":[{"a":1}, {"b":2}],"system_prompt":"long"}"#;
        let (base, ms) = document_messages(cline).unwrap();
        assert_eq!(
            (base, ms.iter().map(|r| &cline[r.clone()]).collect::<Vec<_>>()),
            ("/messages", vec![&br#"{"a":1}"#[..], br#"{"b":2}"#])
        );
        let pretty = b"[\n  {\n    \"a\": 1\n  },\n  {}\n]";
        let (_, ms) = document_messages(pretty).unwrap();
        assert_eq!(message_lines(pretty, &ms), [3, 5]);
        let array = b"[{\"a\":1}]";
        assert_eq!(document_messages(array).map(|(b, m)| (b, m.len())), Some(("", 1)));
    }
}
