//! From each dialect's messages to canonical messages, and the readers the
//! agents' own converters share (each agent's is in its module,
//! `formats/<agent>`).

use serde_json::Value;

use super::canon::{Msg, Part, WireRole, text_of};

pub(crate) fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

pub(crate) fn items(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Arguments may be a JSON string: parse it, else keep the string.
pub(crate) fn args(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(t)) => serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.clone())),
        Some(v) => v.clone(),
        None => Value::Object(serde_json::Map::new()),
    }
}

/// The request body of a logged record: its `request` or `body`, else the record.
pub fn logged(v: &Value) -> &Value {
    ["request", "body"].iter().find_map(|k| v.get(*k).filter(|b| b.is_object())).unwrap_or(v)
}

/// The messages of a logged Anthropic Messages request body.
pub fn anthropic_body(b: &Value) -> Vec<Msg> {
    let mut out: Vec<Msg> = Vec::new();
    if let Some(sys) = b.get("system") {
        out.push(Msg::new(WireRole::System, anthropic_parts(sys)));
    }
    out.extend(items(b.get("messages")).iter().filter_map(anthropic_msg));
    out
}

/// The messages of a logged Chat Completions request body.
pub fn chat_body(b: &Value) -> Vec<Msg> {
    items(b.get("messages")).iter().filter_map(chat_msg).collect()
}

/// The messages of a logged Responses request body.
pub fn responses_body(b: &Value) -> Vec<Msg> {
    match b.get("input") {
        Some(Value::String(t)) => vec![Msg::new(WireRole::User, vec![Part::Text(t.clone())])],
        input => items(input).iter().filter_map(responses_item).collect(),
    }
}

/// The messages of a logged Gemini generateContent request body.
pub fn gemini_body(b: &Value) -> Vec<Msg> {
    items(b.get("contents")).iter().filter_map(gemini_content).collect()
}

pub fn anthropic_msg(m: &Value) -> Option<Msg> {
    let role = match m.get("role")?.as_str()? {
        "assistant" => WireRole::Assistant,
        _ => WireRole::User,
    };
    Some(Msg::new(role, anthropic_parts(m.get("content")?)))
}

fn anthropic_parts(content: &Value) -> Vec<Part> {
    if let Some(t) = content.as_str() {
        return vec![Part::Text(t.to_string())];
    }
    items(Some(content)).iter().filter_map(anthropic_block).collect()
}

fn anthropic_block(b: &Value) -> Option<Part> {
    Some(match b.get("type")?.as_str()? {
        "text" => Part::Text(s(b, "text")?),
        "image" | "document" => {
            let src = b.get("source")?;
            let name = s(b, "title");
            match src.get("type").and_then(Value::as_str) {
                Some("url") => Part::Media { mime: s(src, "media_type"), data: None, url: s(src, "url"), name },
                Some("file") => Part::Media { mime: s(src, "media_type"), data: None, url: s(src, "file_id"), name },
                Some("text") => Part::Text(s(src, "data")?),
                _ => Part::Media { mime: s(src, "media_type"), data: s(src, "data"), url: None, name },
            }
        }
        "tool_use" | "server_tool_use" => {
            Part::Call { id: s(b, "id")?, name: s(b, "name")?, args: args(b.get("input")) }
        }
        "tool_result" => Part::Result {
            id: s(b, "tool_use_id")?,
            name: None,
            parts: anthropic_parts(b.get("content").unwrap_or(&Value::Null)),
            error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            extra: None,
        },
        "thinking" | "redacted_thinking" => Part::Reasoning { family: "anthropic", raw: b.clone() },
        _ => return None,
    })
}

pub(crate) fn responses_item(item: &Value) -> Option<Msg> {
    let ty = item.get("type").and_then(Value::as_str).unwrap_or("message");
    Some(match ty {
        "message" => {
            let role = match item.get("role")?.as_str()? {
                "assistant" => WireRole::Assistant,
                "system" | "developer" => WireRole::System,
                _ => WireRole::User,
            };
            let content = item.get("content")?;
            let parts = match content.as_str() {
                Some(t) => vec![Part::Text(t.to_string())],
                None => items(Some(content)).iter().filter_map(openai_part).collect(),
            };
            Msg::new(role, parts)
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => {
            // A local shell call holds its command in `action` (`{"type":"exec","command":[…]}`).
            let a = ["arguments", "input", "action"].iter().find_map(|k| item.get(*k));
            let name = s(item, "name").unwrap_or_else(|| ty.to_string());
            let id = s(item, "call_id")?;
            Msg::new(WireRole::Assistant, vec![Part::Call { id, name, args: args(a) }])
        }
        "function_call_output" | "custom_tool_call_output" => {
            let o = item.get("output").unwrap_or(&Value::Null);
            let parts = match o {
                Value::Array(a) => a.iter().filter_map(openai_part).collect(),
                other => vec![Part::Text(text_of(other))],
            };
            Msg::new(
                WireRole::User,
                vec![Part::Result { id: s(item, "call_id")?, name: None, parts, error: false, extra: None }],
            )
        }
        "reasoning" => Msg::new(WireRole::Assistant, vec![Part::Reasoning { family: "openai", raw: item.clone() }]),
        _ => return None,
    })
}

/// A part of OpenAI content (Chat and Responses spellings).
fn openai_part(p: &Value) -> Option<Part> {
    let url = |v: Option<&Value>| -> Option<String> {
        match v? {
            Value::String(u) => Some(u.clone()),
            o => s(o, "url"),
        }
    };
    Some(match p.get("type")?.as_str()? {
        "text" | "input_text" | "output_text" => Part::Text(s(p, "text")?),
        "image_url" | "input_image" => match url(p.get("image_url")) {
            Some(u) => Part::from_url(&u, None, None),
            None => Part::Media { mime: None, data: None, url: s(p, "file_id"), name: None },
        },
        "file" | "input_file" => {
            let f = p.get("file").filter(|f| f.is_object()).unwrap_or(p);
            let name = s(f, "filename");
            match s(f, "file_data").or_else(|| s(f, "file_url")) {
                Some(u) if u.starts_with("data:") => Part::from_url(&u, None, name),
                Some(raw) => Part::Media { mime: Some("application/pdf".into()), data: Some(raw), url: None, name },
                None => Part::Media { mime: None, data: None, url: s(f, "file_id"), name },
            }
        }
        _ => return None,
    })
}

fn chat_msg(m: &Value) -> Option<Msg> {
    let role = m.get("role")?.as_str()?;
    let content = m.get("content").unwrap_or(&Value::Null);
    let mut parts: Vec<Part> = match content {
        Value::String(t) => vec![Part::Text(t.clone())],
        Value::Array(a) => a.iter().filter_map(openai_part).collect(),
        _ => Vec::new(),
    };
    Some(match role {
        "tool" | "function" => {
            let id = s(m, "tool_call_id").or_else(|| s(m, "name"))?;
            Msg::new(WireRole::User, vec![Part::Result { id, name: s(m, "name"), parts, error: false, extra: None }])
        }
        "assistant" => {
            for c in items(m.get("tool_calls")) {
                let f = c.get("function").unwrap_or(&Value::Null);
                parts.push(Part::Call { id: s(c, "id")?, name: s(f, "name")?, args: args(f.get("arguments")) });
            }
            Msg::new(WireRole::Assistant, parts)
        }
        "system" | "developer" => Msg::new(WireRole::System, parts),
        _ => Msg::new(WireRole::User, parts),
    })
}

fn gemini_parts(parts: &Value) -> Vec<Part> {
    if let Some(t) = parts.as_str() {
        return if t.is_empty() { Vec::new() } else { vec![Part::Text(t.to_string())] };
    }
    items(Some(parts)).iter().filter_map(gemini_part).collect()
}

fn either<'v>(v: &'v Value, camel: &str, snake: &str) -> Option<&'v Value> {
    v.get(camel).or_else(|| v.get(snake))
}

pub fn gemini_part(p: &Value) -> Option<Part> {
    if p.get("thought").and_then(Value::as_bool) == Some(true) {
        return Some(Part::Reasoning { family: "gemini", raw: p.clone() });
    }
    if let Some(t) = s(p, "text") {
        return Some(Part::Text(t));
    }
    if let Some(d) = either(p, "inlineData", "inline_data") {
        let mime = either(d, "mimeType", "mime_type").and_then(Value::as_str).map(str::to_string);
        return Some(Part::Media { mime, data: s(d, "data"), url: None, name: s(d, "displayName") });
    }
    if let Some(f) = either(p, "fileData", "file_data") {
        let mime = either(f, "mimeType", "mime_type").and_then(Value::as_str).map(str::to_string);
        let uri = either(f, "fileUri", "file_uri").and_then(Value::as_str).map(str::to_string);
        return Some(Part::Media { mime, data: None, url: uri, name: None });
    }
    if let Some(c) = either(p, "functionCall", "function_call") {
        let name = s(c, "name")?;
        return Some(Part::Call { id: s(c, "id").unwrap_or_else(|| name.clone()), name, args: args(c.get("args")) });
    }
    if let Some(r) = either(p, "functionResponse", "function_response") {
        let name = s(r, "name")?;
        let mut parts = vec![Part::Text(text_of(r.get("response").unwrap_or(&Value::Null)))];
        parts.extend(gemini_parts(r.get("parts").unwrap_or(&Value::Null)));
        return Some(Part::Result {
            id: s(r, "id").unwrap_or_else(|| name.clone()),
            name: Some(name),
            parts,
            error: false,
            extra: None,
        });
    }
    None
}

fn gemini_content(c: &Value) -> Option<Msg> {
    let role =
        if c.get("role").and_then(Value::as_str) == Some("model") { WireRole::Assistant } else { WireRole::User };
    Some(Msg::new(role, gemini_parts(c.get("parts")?)))
}

/// An AI SDK tool part: the call, and its result when it has one.
pub(crate) fn sdk_tool(
    p: &Value,
    input: Option<&Value>,
    output: Option<&Value>,
    name: String,
) -> (Option<Part>, Option<Part>) {
    let Some(id) = s(p, "toolCallId").or_else(|| s(p, "callID")) else { return (None, None) };
    let call = Part::Call { id: id.clone(), name: name.clone(), args: input.cloned().unwrap_or_default() };
    let result = output.map(|o| {
        let parts = match (o.get("type").and_then(Value::as_str), o.get("value")) {
            (Some("content"), Some(Value::Array(vals))) => vals
                .iter()
                .filter_map(|x| match x.get("type")?.as_str()? {
                    "text" => Some(Part::Text(s(x, "text")?)),
                    "media" => Some(Part::Media {
                        mime: s(x, "mediaType"),
                        data: s(x, "data"),
                        url: None,
                        name: s(x, "filename"),
                    }),
                    _ => None,
                })
                .collect(),
            (Some(_), Some(val)) => vec![Part::Text(text_of(val))],
            _ => vec![Part::Text(text_of(o))],
        };
        Part::Result { id, name: Some(name), parts, error: false, extra: None }
    });
    (Some(call), result)
}

/// An assistant message that holds its tools' results: the request sends them
/// as the next message.
pub(crate) fn split(role: WireRole, said: Vec<Part>, results: Vec<Part>) -> Vec<Msg> {
    let mut out = vec![Msg::new(role, said)];
    if !results.is_empty() {
        out.push(Msg::new(WireRole::User, results));
    }
    out
}
