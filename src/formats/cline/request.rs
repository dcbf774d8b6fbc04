//! The Chat Completions request Cline CLI 3 sends for a task document
//! (`<id>.messages.json`) to an OpenAI-compatible provider, built as its
//! `@cline/llms` conversion and the AI SDK's openai-compatible writer build it
//! (checked against cline 3.0.65's logged requests by the round-trip suite,
//! `tests/agents/scenarios/cline.py`):
//!
//! - display-only messages (its failure records, `error_…`) are not sent;
//! - user text is sent without the `<user_input mode="…">` wrapper Cline
//!   stores it in; a message of one text part is that string;
//! - a reply's text is `content` (`null` beside tool calls with no text), its
//!   calls `tool_calls` with the input as a JSON string;
//! - a tool result is a `tool` message whose `content` is a string: the text
//!   the tool returned, or its raw output as JSON. Every image found in the
//!   output, at any depth, is taken out of it and sent in a `user` message
//!   right after the results (`image_url` data URLs); in the output its text
//!   blocks become plain strings, and the result is sent as
//!   `[{"type":"text","text":<output>},{"type":"text","text":"(see following
//!   user message for image)"}…]`;
//! - a call a run left without a result (killed mid-tool) is answered with
//!   the error result `Tool execution was interrupted before a result was
//!   produced. Tool: <name>.` before the next message;
//! - an image Cline cannot send (not PNG/JPEG/GIF/WebP, not base64, over
//!   5 MiB of base64 or 6 MiB of bytes, or past 8 MiB of images in the
//!   request) is sent as the text `[media omitted: invalid or exceeds size
//!   limit]` instead.
//!
//! JSON inside strings keeps the key order of the file, as `JSON.stringify`
//! does, so the document is read in order here (the edited text, whole).

use serde_json::{Value as Out, json};

use crate::json::Value;

/// What Cline sends in place of an image it will not send.
pub const MEDIA_OMITTED: &str = "[media omitted: invalid or exceeds size limit]";
/// What Cline leaves in a tool result for each image it moves to the next message.
const SEE_FOLLOWING: &str = "(see following user message for image)";
/// What it leaves in an object whose own value was the image.
const IMAGE_ATTACHED: &str = "[image attached]";
const MAX_TOTAL: usize = 8_388_608;

/// What Cline answers a call its run left without a result with (an error result).
pub const INTERRUPTED: &str = "Tool execution was interrupted before a result was produced.";
/// What the IDE extension answers it with (`ensureToolResultsFollowToolUse`).
pub const IDE_INTERRUPTED: &str = "result missing";

/// The `tool` message Cline sends for a call left without a result.
fn interrupted(id: &str, name: &str) -> Out {
    let text = if name.is_empty() { INTERRUPTED.to_string() } else { format!("{INTERRUPTED} Tool: {name}.") };
    json!({"role": "tool", "tool_call_id": id, "content": format!("[{}]", text_part(&text))})
}

/// What the session holds none of, or not as Cline sends it.
pub const NOT_IN_SESSION: &[&str] = &[
    "the system prompt (Cline writes it anew for each run; the task keeps the last run's as `system_prompt`)",
    "the tool list",
    "request options (max_tokens, tool_choice, stream_options)",
];

/// Whether `file` is a Cline CLI 3 task document.
pub fn is_task_document(file: &str) -> bool {
    file.ends_with(".messages.json")
}

/// Cline's request, rendered from the whole (edited) document at once.
#[derive(Default)]
pub struct ClineRequest {
    out: Vec<Out>,
    /// Encoded image bytes accepted so far (Cline's per-request budget).
    total: usize,
}

impl ClineRequest {
    /// Renders the messages of the document `text`.
    pub fn document(&mut self, text: &[u8]) {
        let Ok(doc) = Value::parse(text) else { return };
        let messages: Vec<&Value<'_>> = doc
            .get("messages")
            .items()
            .iter()
            .filter(|m| m.at(&["metadata", "displayOnly"]).as_bool() != Some(true))
            .collect();
        // Calls answered anywhere in the history (Cline's own test).
        let answered: std::collections::HashSet<&str> = messages
            .iter()
            .flat_map(|m| m.get("content").items())
            .filter(|b| b.get("type").as_str() == Some("tool_result"))
            .filter_map(|b| b.get("tool_use_id").as_str())
            .collect();
        let mut open: Vec<(String, String)> = Vec::new();
        let mut tools: Vec<Out> = Vec::new();
        let mut hoisted: Vec<Out> = Vec::new();
        for m in messages {
            let role = m.get("role").as_str().unwrap_or("user");
            let blocks: Vec<&Value<'_>> = match m.get("content") {
                Value::Str(_) => vec![m.get("content")],
                c => c.items().iter().collect(),
            };
            let (results, own): (Vec<&Value<'_>>, Vec<&Value<'_>>) =
                blocks.into_iter().partition(|b| b.get("type").as_str() == Some("tool_result"));
            for b in &results {
                tools.push(self.result(b, &mut hoisted));
            }
            // Calls a run left without a result are answered before the next
            // message that is not one of results (after the results of this one).
            if !results.is_empty() || !own.is_empty() {
                tools.extend(open.drain(..).map(|(id, name)| interrupted(&id, &name)));
            }
            if !own.is_empty() {
                self.flush(&mut tools, &mut hoisted);
                self.message(role, &own);
            }
            if role == "assistant" {
                for b in own.iter().filter(|b| b.get("type").as_str() == Some("tool_use")) {
                    let id = b.get("id").as_str().unwrap_or("");
                    if !answered.contains(id) {
                        open.push((id.to_string(), b.get("name").as_str().unwrap_or("").to_string()));
                    }
                }
            }
        }
        tools.extend(open.drain(..).map(|(id, name)| interrupted(&id, &name)));
        self.flush(&mut tools, &mut hoisted);
    }

    /// The messages rendered.
    pub fn take(&mut self) -> Vec<Out> {
        std::mem::take(&mut self.out)
    }

    /// Tool messages waiting, then the images taken out of them.
    fn flush(&mut self, tools: &mut Vec<Out>, hoisted: &mut Vec<Out>) {
        self.out.append(tools);
        if !hoisted.is_empty() {
            self.out.push(json!({"role": "user", "content": std::mem::take(hoisted)}));
        }
    }

    /// A user or assistant message of non-result blocks.
    fn message(&mut self, role: &str, blocks: &[&Value<'_>]) {
        if role == "assistant" {
            let mut text = String::new();
            let mut calls = Vec::new();
            for b in blocks {
                match b {
                    Value::Str(s) => text.push_str(s),
                    _ => match b.get("type").as_str() {
                        Some("text") => text.push_str(b.get("text").as_str().unwrap_or("")),
                        Some("tool_use") => calls.push(json!({
                            "id": b.get("id").as_str().unwrap_or(""),
                            "type": "function",
                            "function": {"name": b.get("name").as_str().unwrap_or(""), "arguments": stringify(b.get("input"))},
                        })),
                        _ => {}
                    },
                }
            }
            let mut msg = json!({"role": "assistant"});
            msg["content"] = if text.is_empty() && !calls.is_empty() { Out::Null } else { Out::String(text) };
            if !calls.is_empty() {
                msg["tool_calls"] = Out::Array(calls);
            }
            self.out.push(msg);
            return;
        }
        let mut parts = Vec::new();
        for b in blocks {
            match b {
                Value::Str(s) => parts.push(json!({"type": "text", "text": unwrap_input(s)})),
                _ => match b.get("type").as_str() {
                    Some("text") => {
                        parts.push(json!({"type": "text", "text": unwrap_input(b.get("text").as_str().unwrap_or(""))}));
                    }
                    Some("image") => parts.push(match self.image(b) {
                        Some(url) => json!({"type": "image_url", "image_url": {"url": url}}),
                        None => json!({"type": "text", "text": MEDIA_OMITTED}),
                    }),
                    _ => {}
                },
            }
        }
        if parts.is_empty() {
            return;
        }
        let content = match parts.as_slice() {
            [one] if one["type"] == "text" => one["text"].clone(),
            _ => Out::Array(parts),
        };
        self.out.push(json!({"role": role, "content": content}));
    }

    /// A `tool` message for one result; images go to `hoisted`.
    fn result(&mut self, b: &Value<'_>, hoisted: &mut Vec<Out>) -> Out {
        let error = b.get("is_error").as_bool() == Some(true);
        let output = b.get("content");
        // Cline first puts its placeholder in place of every image it will not
        // send (a string where the block was); what follows sees the rest.
        let mut verdicts = Vec::new();
        self.judge(output, &mut verdicts);
        let content = match output {
            Value::Str(s) => s.to_string(),
            v if !error && only_blocks(v) && verdicts.iter().all(Option::is_some) => {
                let mut verdicts = verdicts.into_iter();
                let mut parts = Vec::new();
                for p in v.items() {
                    if p.get("type").as_str() == Some("image") {
                        let url = verdicts.next().flatten().unwrap_or_default();
                        hoisted.push(json!({"type": "image_url", "image_url": {"url": url}}));
                        parts.push(text_part(SEE_FOLLOWING));
                    } else {
                        parts.push(text_part(p.get("text").as_str().unwrap_or("")));
                    }
                }
                format!("[{}]", parts.join(","))
            }
            v => {
                let mut found = Vec::new();
                let walked = walk(v, !error, &mut verdicts.clone().into_iter(), &mut found);
                if !error && !found.is_empty() {
                    let mut parts = vec![text_part(&walked.text)];
                    for url in found {
                        hoisted.push(json!({"type": "image_url", "image_url": {"url": url}}));
                        parts.push(text_part(SEE_FOLLOWING));
                    }
                    format!("[{}]", parts.join(","))
                } else if error && walked.media {
                    walked.json
                } else {
                    placeheld(v, &mut verdicts.into_iter())
                }
            }
        };
        json!({"role": "tool", "tool_call_id": b.get("tool_use_id").as_str().unwrap_or(""), "content": content})
    }

    /// Whether Cline sends each image of a tool's output (its data URL) or
    /// its placeholder (`None`), in the order [`walk`] meets them.
    fn judge(&mut self, v: &Value<'_>, out: &mut Vec<Option<String>>) {
        match v {
            Value::Array(items) => items.iter().for_each(|x| self.judge(x, out)),
            Value::Object(_) if is_image(v) => out.push(self.image(v)),
            Value::Object(members) => members.iter().for_each(|(_, x)| self.judge(x, out)),
            _ => {}
        }
    }

    /// The data URL Cline sends for an image block, or `None` where it sends
    /// [`MEDIA_OMITTED`] instead (its per-image limits, then its budget for
    /// the request).
    fn image(&mut self, b: &Value<'_>) -> Option<String> {
        let (mime, data) = crate::formats::cline::sendable(b.get("mediaType").as_str()?, b.get("data").as_str()?)?;
        if self.total + data.len() > MAX_TOTAL {
            return None;
        }
        self.total += data.len();
        Some(format!("data:{mime};base64,{data}"))
    }
}

/// An image block that carries its bytes.
fn is_image(v: &Value<'_>) -> bool {
    v.get("type").as_str() == Some("image") && v.get("data").as_str().is_some() && v.get("mediaType").as_str().is_some()
}

/// A tool's output as Cline sends it when it takes no image out: as in the
/// file, each image it will not send replaced by its placeholder string.
fn placeheld(v: &Value<'_>, verdicts: &mut impl Iterator<Item = Option<String>>) -> String {
    match v {
        Value::Array(items) => {
            format!("[{}]", items.iter().map(|x| placeheld(x, verdicts)).collect::<Vec<_>>().join(","))
        }
        Value::Object(_) if is_image(v) => match verdicts.next().flatten() {
            Some(_) => stringify(v),
            None => quote(MEDIA_OMITTED),
        },
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter().map(|(k, x)| format!("{}:{}", quote(k), placeheld(x, verdicts))).collect::<Vec<_>>().join(",")
        ),
        _ => stringify(v),
    }
}

/// Cline's walk of a tool's raw output (after its placeholders): the images
/// it sends taken out (their data URLs into `found`), text blocks of arrays
/// made strings. `text` is the output as sent beside taken-out images, `json`
/// as sent when only placeholders changed it.
fn walk(
    v: &Value<'_>,
    hoist: bool,
    verdicts: &mut impl Iterator<Item = Option<String>>,
    found: &mut Vec<String>,
) -> Walked {
    match v {
        Value::Array(items) => {
            let (mut parts, mut changed, mut media) = (Vec::new(), false, false);
            for p in items {
                if is_image(p) {
                    match (verdicts.next().flatten(), hoist) {
                        (Some(url), true) => {
                            found.push(url);
                            changed = true;
                            media = true;
                        }
                        (Some(_), false) => {
                            parts.push(quote(MEDIA_OMITTED));
                            changed = true;
                            media = true;
                        }
                        // Already Cline's placeholder string: nothing changes here.
                        (None, _) => parts.push(quote(MEDIA_OMITTED)),
                    }
                    continue;
                }
                if p.is_object() && p.get("type").as_str() == Some("text") && p.get("text").as_str().is_some() {
                    changed = true;
                    parts.push(quote(p.get("text").as_str().unwrap_or("")));
                    continue;
                }
                let w = walk(p, hoist, verdicts, found);
                changed |= w.changed;
                media |= w.media;
                parts.push(w.json);
            }
            let json = format!("[{}]", parts.join(","));
            Walked { text: json.clone(), json, changed, media }
        }
        Value::Object(_) if is_image(v) => {
            let sent = match (verdicts.next().flatten(), hoist) {
                (Some(url), true) => {
                    found.push(url);
                    IMAGE_ATTACHED
                }
                _ => MEDIA_OMITTED,
            };
            Walked { text: sent.to_string(), json: quote(sent), changed: true, media: true }
        }
        Value::Object(members) => {
            let (mut parts, mut changed, mut media) = (Vec::new(), false, false);
            for (k, x) in members {
                let w = walk(x, hoist, verdicts, found);
                changed |= w.changed;
                media |= w.media;
                parts.push(format!("{}:{}", quote(k), w.json));
            }
            let json = format!("{{{}}}", parts.join(","));
            Walked { text: json.clone(), json, changed, media }
        }
        _ => Walked { text: stringify(v), json: stringify(v), changed: false, media: false },
    }
}

/// A walked output: as text beside images, as JSON, and what changed.
struct Walked {
    text: String,
    json: String,
    changed: bool,
    media: bool,
}

/// Every element a text or an image block (Cline's own content shape).
fn only_blocks(v: &Value<'_>) -> bool {
    let items = v.items();
    v.is_array()
        && !items.is_empty()
        && items.iter().all(|b| match b.get("type").as_str() {
            Some("text") => b.get("text").as_str().is_some(),
            Some("image") => b.get("data").as_str().is_some() && b.get("mediaType").as_str().is_some(),
            _ => false,
        })
}

fn text_part(text: &str) -> String {
    format!("{{\"type\":\"text\",\"text\":{}}}", quote(text))
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// `JSON.stringify` of a value, keys in the file's order.
pub fn stringify(v: &Value<'_>) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        // As JavaScript: `-0` is `0`, and a whole number below 1e21 is all its digits,
        // which is how Rust shows an f64 too (`n as i64` saturated past 2^63).
        Value::Number(n) if *n == 0.0 => "0".into(),
        Value::Number(n) if n.is_finite() => format!("{n}"),
        Value::Number(_) => "null".into(),
        Value::Str(s) => quote(s),
        Value::Array(items) => format!("[{}]", items.iter().map(stringify).collect::<Vec<_>>().join(",")),
        Value::Object(m) => {
            format!(
                "{{{}}}",
                m.iter().map(|(k, x)| format!("{}:{}", quote(k), stringify(x))).collect::<Vec<_>>().join(",")
            )
        }
    }
}

/// The user's text without the `<user_input mode="…">` wrapper Cline stores it in.
fn unwrap_input(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("<user_input mode=\"") else { return text };
    let Some((_, inner)) = rest.split_once("\">") else { return text };
    inner.strip_suffix("</user_input>").unwrap_or(text)
}

impl crate::request::Sends for ClineRequest {
    fn record(&mut self, _record: &serde_json::Value) -> Vec<serde_json::Value> {
        Vec::new()
    }

    fn finish(&mut self) -> Vec<serde_json::Value> {
        self.take()
    }

    fn document(&mut self, text: &[u8]) {
        ClineRequest::document(self, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_loses_the_wrapper_cline_stores_it_in() {
        assert_eq!(unwrap_input("<user_input mode=\"act\">hi</user_input>"), "hi");
        assert_eq!(unwrap_input("plain"), "plain");
    }

    #[test]
    fn stringify_keeps_the_key_order_of_the_file() {
        let v = Value::parse(br#"{"type":"text","text":"a","n":2,"f":1.5}"#).unwrap();
        assert_eq!(stringify(&v), r#"{"type":"text","text":"a","n":2,"f":1.5}"#);
    }

    #[test]
    fn stringify_writes_whole_numbers_as_javascript_does() {
        let v = Value::parse(b"[-0, 7, -12, 9007199254740993, 1e20, 12345678901234567890]").unwrap();
        assert_eq!(stringify(&v), "[0,7,-12,9007199254740992,100000000000000000000,12345678901234567000]");
    }
}
