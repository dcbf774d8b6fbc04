//! The request pi sends, built as pi builds it from the entries of its branch
//! (checked against pi 0.73.1's logged requests by the round-trip suite,
//! `tests/agents/scenarios/pi.py`), on the Anthropic Messages API and on the
//! OpenAI Responses API. On Anthropic its shape differs from the canonical
//! writer's in ways a provider sees and numbers:
//!
//! - consecutive user turns stay separate messages; only consecutive tool
//!   results share one user message;
//! - a user turn whose content is a string is sent as that string; blank text
//!   blocks are dropped, and a turn left empty is not sent;
//! - a tool result holding only text is one string, its texts joined with
//!   `\n`; one holding images but no text opens with `(see attached image)`;
//!   `is_error` is always sent;
//! - a tool call left without a result (a run killed mid-tool) is answered by
//!   pi itself with an error result `No result provided` before the next turn;
//! - failed and aborted replies are not sent, nor a reply left empty; thinking
//!   without a signature goes as text; another model's thinking goes as text,
//!   its redacted thinking not at all, and its tool call ids with characters
//!   Anthropic refuses replaced by `_`;
//! - extension messages, `!` commands and summaries go as user turns, in the
//!   words pi wraps them in; a compaction's `retainedTail` (the agent harness
//!   of pi-agent-core 0.81–0.83) follows its summary, message by message.
//!
//! On Responses: user text as `input_text` (blank kept), images with
//! `detail: "auto"`, each reply's reasoning item as serialized in its thinking
//! block, its text as a `message` item with the id of its `textSignature` (else
//! `msg_<index>`; `msg_pi_<index>` once the session holds pi 1.x's `system`
//! message), `status` and empty `annotations`, calls as `function_call` items
//! with their `fc_` id, results as `function_call_output` whose output is the
//! joined text when there is no image.
//!
//! What pi adds besides the history (system prompt, tool list, `cache_control`
//! on the last block, thinking budget) is not in the session.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::request::write::Dialect;

/// What pi answers a tool call with when its result never came.
pub const NO_RESULT: &str = "No result provided";

const COMPACTION_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUFFIX: &str = "\n</summary>";
const BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUFFIX: &str = "</summary>";

/// pi's request, one record at a time: tool results wait for the record after
/// them, since consecutive results share a message.
pub struct PiRequest {
    dialect: Dialect,
    provider: Option<String>,
    model: Option<String>,
    /// Tool results not yet sent: (call id, pi's content, `is_error`).
    results: Vec<(String, Value, bool)>,
    /// Messages pi has converted so far (it numbers replies without a text id by it).
    index: usize,
    /// The session records pi's system prompt (a `system` message, pi 0.86 on), so
    /// it is a pi whose pi-ai (0.77 on) names a text without an id `msg_pi_<index>`,
    /// and a later text of the same reply `msg_pi_<index>_<n>`. Sessions of pi
    /// 0.78–0.85 carry no such mark and are numbered as 0.73.1 does (`msg_<index>`).
    pi_text_ids: bool,
    /// The calls of the last reply that made any, and which were answered.
    open: Vec<String>,
    answered: HashSet<String>,
    /// Another model's call ids as pi rewrites them, for their results.
    renamed: HashMap<String, String>,
}

fn s<'v>(v: &'v Value, k: &str) -> Option<&'v str> {
    v.get(k).and_then(Value::as_str)
}

fn blank(t: &str) -> bool {
    t.trim().is_empty()
}

fn image(b: &Value) -> Value {
    json!({"type":"image","source":{"type":"base64","media_type":b.get("mimeType"),"data":b.get("data")}})
}

impl PiRequest {
    /// The request in `dialect` (Anthropic or OpenAI Responses) resumed with
    /// `model` of `provider` (the branch's last).
    pub fn new(dialect: Dialect, provider: Option<&str>, model: Option<&str>) -> PiRequest {
        PiRequest {
            dialect,
            index: 0,
            pi_text_ids: false,
            provider: provider.map(str::to_string),
            model: model.map(str::to_string),
            results: Vec::new(),
            open: Vec::new(),
            answered: HashSet::new(),
            renamed: HashMap::new(),
        }
    }

    /// The messages complete once `record` (one line of the branch, edits applied) is in.
    pub fn record(&mut self, v: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        let text = |t: String| Value::Array(vec![json!({"type":"text","text":t})]);
        let message = match s(v, "type") {
            Some("message") => v.get("message"),
            // Entries without ids (pi's first layout) are the message themselves.
            None if v.get("role").is_some() => Some(v),
            Some("custom_message") => {
                self.turn(&mut out, v.get("content").unwrap_or(&Value::Null));
                return out;
            }
            Some("branch_summary") => {
                if let Some(sum) = s(v, "summary").filter(|t| !t.is_empty()) {
                    self.turn(&mut out, &text(format!("{BRANCH_PREFIX}{sum}{BRANCH_SUFFIX}")));
                }
                return out;
            }
            Some("compaction") => {
                let sum = s(v, "summary").unwrap_or_default();
                self.turn(&mut out, &text(format!("{COMPACTION_PREFIX}{sum}{COMPACTION_SUFFIX}")));
                // The harness's kept messages, materialized: sent right after the summary.
                for m in v.get("retainedTail").and_then(Value::as_array).into_iter().flatten() {
                    out.extend(self.record(&json!({"type":"message","message":m})));
                }
                return out;
            }
            _ => None,
        };
        let Some(m) = message else { return out };
        match s(m, "role").unwrap_or("") {
            "user" | "custom" | "hookMessage" => self.turn(&mut out, m.get("content").unwrap_or(&Value::Null)),
            "bashExecution" if m.get("excludeFromContext").and_then(Value::as_bool) != Some(true) => {
                self.turn(&mut out, &text(bash_text(m)));
            }
            "branchSummary" => {
                let sum = s(m, "summary").unwrap_or_default();
                self.turn(&mut out, &text(format!("{BRANCH_PREFIX}{sum}{BRANCH_SUFFIX}")));
            }
            "compactionSummary" => {
                let sum = s(m, "summary").unwrap_or_default();
                self.turn(&mut out, &text(format!("{COMPACTION_PREFIX}{sum}{COMPACTION_SUFFIX}")));
            }
            "assistant" => {
                self.answer_open();
                // A failed reply is not in the list pi converts: results around it run on.
                if matches!(s(m, "stopReason"), Some("error" | "aborted")) {
                    return out;
                }
                self.send_results(&mut out);
                let reply = self.reply(m);
                if !reply.is_empty() {
                    self.index += 1;
                }
                out.extend(reply);
            }
            // pi's system prompt: the leading one goes to `system`/`instructions` and is
            // not numbered; a later one (a change of prompt or tools) is. No run drives one.
            "system" => {
                if self.pi_text_ids {
                    self.index += 1;
                }
                self.pi_text_ids = true;
            }
            "toolResult" => {
                let id = s(m, "toolCallId").unwrap_or_default();
                self.answered.insert(id.to_string());
                let id = self.renamed.get(id).map_or(id, String::as_str).to_string();
                let error = m.get("isError").and_then(Value::as_bool).unwrap_or(false);
                self.results.push((id, m.get("content").cloned().unwrap_or(Value::Null), error));
            }
            _ => {}
        }
        out
    }

    /// The messages still gathered at the end of the branch.
    pub fn finish(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        self.close(&mut out);
        out
    }

    /// A user-side turn: the calls before it are closed first.
    fn turn(&mut self, out: &mut Vec<Value>, content: &Value) {
        self.close(out);
        let m = match self.dialect {
            Dialect::OpenaiResponses => responses_user(content),
            Dialect::OpenaiChat => chat_user(content),
            _ => user(content),
        };
        if m.is_some() {
            self.index += 1;
        }
        out.extend(m);
    }

    /// Answers the open calls pi would answer itself, and sends the gathered results.
    fn close(&mut self, out: &mut Vec<Value>) {
        self.answer_open();
        self.send_results(out);
    }

    fn answer_open(&mut self) {
        for id in std::mem::take(&mut self.open) {
            if !self.answered.contains(&id) {
                self.results.push((id, json!([{"type":"text","text":NO_RESULT}]), true));
            }
        }
        self.answered.clear();
    }

    fn send_results(&mut self, out: &mut Vec<Value>) {
        let results = std::mem::take(&mut self.results);
        self.index += results.len();
        if self.dialect == Dialect::OpenaiResponses {
            out.extend(results.into_iter().map(|(id, content, _)| responses_result(&id, &content)));
            return;
        }
        if self.dialect == Dialect::OpenaiChat {
            chat_results(results, out);
            return;
        }
        let blocks: Vec<Value> = results
            .into_iter()
            .map(|(id, content, error)| {
                json!({"type":"tool_result","tool_use_id":id,"content":result_content(&content),"is_error":error})
            })
            .collect();
        if !blocks.is_empty() {
            out.push(json!({"role":"user","content":blocks}));
        }
    }

    /// A reply as pi sends it: one Anthropic message, or Responses items.
    fn reply(&mut self, m: &Value) -> Vec<Value> {
        let api = match self.dialect {
            Dialect::OpenaiResponses => "openai-responses",
            Dialect::OpenaiChat => "openai-completions",
            _ => "anthropic-messages",
        };
        let route = s(m, "provider") == self.provider.as_deref() && s(m, "api").is_none_or(|a| a == api);
        let same = route && s(m, "model") == self.model.as_deref();
        if self.dialect == Dialect::OpenaiResponses {
            return self.responses_reply(m, same, route && !same);
        }
        if self.dialect == Dialect::OpenaiChat {
            return self.chat_reply(m, same);
        }
        let mut blocks = Vec::new();
        let mut calls = Vec::new();
        for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            match s(b, "type").unwrap_or("") {
                "text" => {
                    let t = s(b, "text").unwrap_or_default();
                    if !blank(t) {
                        blocks.push(json!({"type":"text","text":t}));
                    }
                }
                "thinking" => {
                    let thought = s(b, "thinking").unwrap_or_default();
                    let sig = s(b, "thinkingSignature").filter(|t| !blank(t));
                    let redacted = b.get("redacted").and_then(Value::as_bool) == Some(true);
                    if redacted {
                        if same {
                            blocks.push(json!({"type":"redacted_thinking","data":b.get("thinkingSignature")}));
                        }
                    } else if blank(thought) {
                    } else if let (true, Some(sig)) = (same, sig) {
                        blocks.push(json!({"type":"thinking","thinking":thought,"signature":sig}));
                    } else {
                        blocks.push(json!({"type":"text","text":thought}));
                    }
                }
                "toolCall" => {
                    let mut id = s(b, "id").unwrap_or_default().to_string();
                    if !same {
                        let safe = safe_id(&id, 64);
                        if safe != id {
                            self.renamed.insert(id, safe.clone());
                            id = safe;
                        }
                    }
                    calls.push(id.clone());
                    let input = b.get("arguments").filter(|a| !a.is_null()).cloned().unwrap_or_else(|| json!({}));
                    blocks.push(json!({"type":"tool_use","id":id,"name":b.get("name"),"input":input}));
                }
                _ => {}
            }
        }
        self.calls(calls);
        if blocks.is_empty() { Vec::new() } else { vec![json!({"role":"assistant","content":blocks})] }
    }

    /// The calls a reply made are the open ones until the next turn.
    fn calls(&mut self, calls: Vec<String>) {
        if !calls.is_empty() {
            self.open = calls;
            self.answered.clear();
        }
    }

    /// A reply on Chat Completions: its text as one string (blank text left
    /// out), the same model's thinking in the field its signature names
    /// (`reasoning_content`), another model's as text, and its calls.
    fn chat_reply(&mut self, m: &Value, same: bool) -> Vec<Value> {
        let mut text = String::new();
        let (mut thinking, mut field) = (Vec::new(), None);
        let mut calls = Vec::new();
        let mut ids = Vec::new();
        for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            match s(b, "type").unwrap_or("") {
                "text" => text.extend(s(b, "text").filter(|t| !blank(t))),
                "thinking" if b.get("redacted").and_then(Value::as_bool) == Some(true) => {}
                "thinking" => {
                    let thought = s(b, "thinking").unwrap_or_default();
                    if blank(thought) {
                        continue;
                    }
                    if same {
                        field = field.or_else(|| s(b, "thinkingSignature").filter(|t| !t.is_empty()));
                        thinking.push(thought);
                    } else {
                        text.push_str(thought);
                    }
                }
                "toolCall" => {
                    let id = s(b, "id").unwrap_or_default();
                    ids.push(id.to_string());
                    let args = b.get("arguments").cloned().unwrap_or_else(|| json!({}));
                    calls.push(json!({"id":chat_call_id(id),"type":"function",
                        "function":{"name":b.get("name"),"arguments":args.to_string()}}));
                }
                _ => {}
            }
        }
        self.calls(ids);
        let mut msg = json!({"role":"assistant","content":if text.is_empty() { Value::Null } else { json!(text) }});
        if let Some(f) = field.filter(|_| !thinking.is_empty()) {
            msg[f] = json!(thinking.join("\n"));
        }
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        } else if text.is_empty() {
            return Vec::new();
        }
        vec![msg]
    }

    /// `other_model`: another model of the same provider and API, whose `fc_`
    /// item ids pi leaves out (OpenAI pairs them with reasoning items it no
    /// longer gets).
    fn responses_reply(&mut self, m: &Value, same: bool, other_model: bool) -> Vec<Value> {
        let mut items = Vec::new();
        let mut calls = Vec::new();
        let mut texts = 0;
        for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            let mut text = |t: &str, sig: Option<&str>, index: usize| {
                let (id, phase) = text_signature(sig);
                let nth = texts;
                texts += 1;
                // OpenAI takes ids of at most 64 characters: pi shortens a longer one.
                let id = match id {
                    Some(id) if id.encode_utf16().count() > 64 => format!("msg_{}", short_hash(&id)),
                    Some(id) => id,
                    None if !self.pi_text_ids => format!("msg_{index}"),
                    None if nth == 0 => format!("msg_pi_{index}"),
                    None => format!("msg_pi_{index}_{nth}"),
                };
                let mut item = json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":t,"annotations":[]}],"status":"completed","id":id});
                if let Some(p) = phase {
                    item["phase"] = json!(p);
                }
                item
            };
            match s(b, "type").unwrap_or("") {
                "thinking" => {
                    let sig = s(b, "thinkingSignature").filter(|t| !t.is_empty());
                    let thought = s(b, "thinking").unwrap_or_default();
                    match (same, sig) {
                        (true, Some(sig)) => items.extend(serde_json::from_str::<Value>(sig).ok()),
                        // Another model's thinking goes as text; empty thinking not at all.
                        (false, _) if !blank(thought) && b.get("redacted").and_then(Value::as_bool) != Some(true) => {
                            items.push(text(thought, None, self.index));
                        }
                        _ => {}
                    }
                }
                "text" => {
                    let sig = if same { s(b, "textSignature") } else { None };
                    items.push(text(s(b, "text").unwrap_or_default(), sig, self.index));
                }
                "toolCall" => {
                    let id = s(b, "id").unwrap_or_default();
                    calls.push(id.to_string());
                    let (call_id, item_id) = id.split_once('|').map_or((id, None), |(c, i)| (c, Some(i)));
                    let args = b.get("arguments").cloned().unwrap_or(Value::Null);
                    let mut item = json!({"type":"function_call","call_id":call_id,"name":b.get("name"),"arguments":args.to_string()});
                    if let Some(i) = item_id.filter(|i| !(other_model && i.starts_with("fc_"))) {
                        item["id"] = json!(i);
                    }
                    items.push(item);
                }
                _ => {}
            }
        }
        self.calls(calls);
        items
    }
}

/// A user turn on Chat Completions: a string as it is, else text and
/// `image_url` parts (blank text kept); a turn left empty is not sent.
fn chat_user(content: &Value) -> Option<Value> {
    if let Some(t) = content.as_str() {
        return Some(json!({"role":"user","content":t}));
    }
    user_parts(content, "text", chat_image)
}

/// A user turn's text and images as `text_type` parts and `image` ones, in
/// order (blank text kept); `None` when nothing is left to send.
fn user_parts(content: &Value, text_type: &str, image: fn(&Value) -> Value) -> Option<Value> {
    let parts: Vec<Value> = content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| match s(b, "type") {
            Some("text") => Some(json!({"type":text_type,"text":s(b, "text").unwrap_or_default()})),
            Some("image") => Some(image(b)),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| json!({"role":"user","content":parts}))
}

/// An image as a `data:` URL.
fn data_url(b: &Value) -> String {
    format!("data:{};base64,{}", s(b, "mimeType").unwrap_or_default(), s(b, "data").unwrap_or_default())
}

fn chat_image(b: &Value) -> Value {
    json!({"type":"image_url","image_url":{"url":data_url(b)}})
}

/// Consecutive tool results on Chat Completions: a `tool` message each (its
/// text joined, or a placeholder when it holds only images), then the images
/// of them all in one user message of their own.
fn chat_results(results: Vec<(String, Value, bool)>, out: &mut Vec<Value>) {
    let mut images = Vec::new();
    for (id, content, _) in results {
        let blocks = content.as_array().map_or(&[][..], Vec::as_slice);
        let texts: Vec<&str> =
            blocks.iter().filter(|b| s(b, "type") == Some("text")).map(|b| s(b, "text").unwrap_or_default()).collect();
        let text = texts.join("\n");
        let text = if text.is_empty() { "(see attached image)".to_string() } else { text };
        out.push(json!({"role":"tool","content":text,"tool_call_id":chat_call_id(&id)}));
        images.extend(blocks.iter().filter(|b| s(b, "type") == Some("image")).map(chat_image));
    }
    if !images.is_empty() {
        let mut content = vec![json!({"type":"text","text":CHAT_IMAGES})];
        content.extend(images);
        out.push(json!({"role":"user","content":content}));
    }
}

/// What pi puts ahead of the images of tool results on Chat Completions.
const CHAT_IMAGES: &str = "Attached image(s) from tool result:";

/// A call id on Chat Completions: a Responses pair `call|item` as its call id,
/// made safe and cut to 40 characters.
fn chat_call_id(id: &str) -> String {
    match id.split_once('|') {
        Some((call, _)) => safe_id(call, 40),
        None => id.to_string(),
    }
}

/// An id as pi makes it safe for a provider that takes only `[A-Za-z0-9_-]`:
/// every other character `_`, cut to `max` characters.
fn safe_id(id: &str, max: usize) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).take(max).collect()
}

/// pi-ai's `shortHash` (`utils/hash.ts`): two 32-bit multiplicative hashes
/// over the UTF-16 code units, each written in base 36.
fn short_hash(text: &str) -> String {
    let (mut h1, mut h2) = (0xdead_beef_u32, 0x41c6_ce57_u32);
    for ch in text.encode_utf16() {
        h1 = (h1 ^ u32::from(ch)).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ u32::from(ch)).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit(n % 36, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

/// pi's `textSignature`: `{v:1, id, phase?}`, or the id itself.
fn text_signature(sig: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(sig) = sig.filter(|t| !t.is_empty()) else { return (None, None) };
    if let Ok(v) = serde_json::from_str::<Value>(sig)
        && v.get("v").and_then(Value::as_u64) == Some(1)
        && let Some(id) = s(&v, "id")
    {
        let phase = s(&v, "phase").filter(|p| matches!(*p, "commentary" | "final_answer")).map(str::to_string);
        return (Some(id.to_string()), phase);
    }
    (Some(sig.to_string()), None)
}

/// A user turn on Responses: every text as `input_text`, images inline.
fn responses_user(content: &Value) -> Option<Value> {
    if let Some(t) = content.as_str() {
        return Some(json!({"role":"user","content":[{"type":"input_text","text":t}]}));
    }
    user_parts(content, "input_text", responses_image)
}

fn responses_image(b: &Value) -> Value {
    json!({"type":"input_image","detail":"auto","image_url":data_url(b)})
}

/// A tool result on Responses: its joined text, or text and images as parts.
fn responses_result(id: &str, content: &Value) -> Value {
    let blocks = content.as_array().map_or(&[][..], Vec::as_slice);
    let text: Vec<&str> = blocks.iter().filter(|b| s(b, "type") == Some("text")).filter_map(|b| s(b, "text")).collect();
    let text = text.join("\n");
    let images: Vec<Value> = blocks.iter().filter(|b| s(b, "type") == Some("image")).map(responses_image).collect();
    let output = if images.is_empty() {
        Value::String(if text.is_empty() { "(see attached image)".into() } else { text })
    } else {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(json!({"type":"input_text","text":text}));
        }
        parts.extend(images);
        Value::Array(parts)
    };
    let call_id = id.split('|').next().unwrap_or(id);
    json!({"type":"function_call_output","call_id":call_id,"output":output})
}

/// A user turn as pi sends it: a string as a string, blank text left out.
fn user(content: &Value) -> Option<Value> {
    if let Some(t) = content.as_str() {
        return (!blank(t)).then(|| json!({"role":"user","content":t}));
    }
    let blocks: Vec<Value> = content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| match s(b, "type") {
            Some("text") => s(b, "text").filter(|t| !blank(t)).map(|t| json!({"type":"text","text":t})),
            Some("image") => Some(image(b)),
            _ => None,
        })
        .collect();
    (!blocks.is_empty()).then(|| json!({"role":"user","content":blocks}))
}

/// A tool result's content: text alone joined into one string, else blocks.
fn result_content(content: &Value) -> Value {
    let blocks = content.as_array().map_or(&[][..], Vec::as_slice);
    let has_image = blocks.iter().any(|b| s(b, "type") == Some("image"));
    if !has_image {
        let texts: Vec<&str> = blocks.iter().map(|b| s(b, "text").unwrap_or_default()).collect();
        return Value::String(texts.join("\n"));
    }
    let mut out: Vec<Value> = blocks
        .iter()
        .map(|b| match s(b, "type") {
            Some("image") => image(b),
            _ => json!({"type":"text","text":s(b, "text").unwrap_or_default()}),
        })
        .collect();
    if !blocks.iter().any(|b| s(b, "type") != Some("image")) {
        out.insert(0, json!({"type":"text","text":"(see attached image)"}));
    }
    Value::Array(out)
}

/// A `!` command's record as the text pi sends for it.
fn bash_text(m: &Value) -> String {
    let mut t = format!("Ran `{}`\n", s(m, "command").unwrap_or_default());
    match s(m, "output").filter(|o| !o.is_empty()) {
        Some(o) => t.push_str(&format!("```\n{o}\n```")),
        None => t.push_str("(no output)"),
    }
    let code = m.get("exitCode").and_then(Value::as_i64);
    if m.get("cancelled").and_then(Value::as_bool) == Some(true) {
        t.push_str("\n\n(command cancelled)");
    } else if let Some(c) = code.filter(|c| *c != 0) {
        t.push_str(&format!("\n\nCommand exited with code {c}"));
    }
    if m.get("truncated").and_then(Value::as_bool) == Some(true)
        && let Some(p) = s(m, "fullOutputPath")
    {
        t.push_str(&format!("\n\n[Output truncated. Full output: {p}]"));
    }
    t
}

impl crate::request::Sends for PiRequest {
    fn record(&mut self, record: &Value) -> Vec<Value> {
        PiRequest::record(self, record)
    }

    fn finish(&mut self) -> Vec<Value> {
        PiRequest::finish(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[Value]) -> Vec<Value> {
        let mut r = PiRequest::new(Dialect::Anthropic, Some("anthropic"), Some("m"));
        let mut out: Vec<Value> = lines.iter().flat_map(|l| r.record(l)).collect();
        out.extend(r.finish());
        out
    }

    #[allow(clippy::needless_pass_by_value, reason = "called on the `json!` it wraps, built in the call")]
    fn msg(m: Value) -> Value {
        json!({"type":"message","message":m})
    }

    #[test]
    fn consecutive_results_share_a_message_and_users_stay_apart() {
        let call = |id: &str| json!({"type":"toolCall","id":id,"name":"read","arguments":{}});
        let result = |id: &str| {
            msg(
                json!({"role":"toolResult","toolCallId":id,"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"isError":false}),
            )
        };
        let out = run(&[
            msg(json!({"role":"user","content":"hi"})),
            msg(json!({"role":"assistant","provider":"anthropic","model":"m","content":[call("1"),call("2")]})),
            result("1"),
            result("2"),
            msg(json!({"role":"user","content":[{"type":"text","text":"more"},{"type":"text","text":"  "}]})),
            msg(json!({"role":"user","content":"   "})),
        ]);
        assert_eq!(out.len(), 4, "{out:#?}");
        assert_eq!(out[0], json!({"role":"user","content":"hi"}));
        assert_eq!(out[2]["content"].as_array().unwrap().len(), 2);
        assert_eq!(
            out[2]["content"][1],
            json!({"type":"tool_result","tool_use_id":"2","content":"a\nb","is_error":false})
        );
        assert_eq!(out[3], json!({"role":"user","content":[{"type":"text","text":"more"}]}));
    }

    #[test]
    fn an_orphaned_call_gets_pis_own_result_and_failures_are_skipped() {
        let out = run(&[
            msg(json!({"role":"user","content":"go"})),
            msg(
                json!({"role":"assistant","provider":"anthropic","model":"m","content":[{"type":"toolCall","id":"x","name":"bash","arguments":{}}]}),
            ),
            msg(json!({"role":"assistant","provider":"anthropic","model":"m","content":[],"stopReason":"error"})),
        ]);
        assert_eq!(out.len(), 3, "{out:#?}");
        assert_eq!(
            out[2]["content"][0],
            json!({"type":"tool_result","tool_use_id":"x","content":NO_RESULT,"is_error":true})
        );
    }

    #[test]
    fn on_chat_completions_the_images_of_consecutive_results_follow_them_in_one_user_message() {
        let mut r = PiRequest::new(Dialect::OpenaiChat, Some("openrouter"), Some("m"));
        let result = |id: &str, data: &str| {
            msg(json!({"role":"toolResult","toolCallId":id,"isError":false,"content":[
                {"type":"text","text":"Read image file [image/png]"},{"type":"image","data":data,"mimeType":"image/png"}]}))
        };
        let call = |id: &str| json!({"type":"toolCall","id":id,"name":"read","arguments":{"path":"a"}});
        let mut out: Vec<Value> = [
            msg(json!({"role":"user","content":[{"type":"text","text":"look at both"}]})),
            msg(json!({"role":"assistant","provider":"openrouter","model":"m","api":"openai-completions",
                "content":[{"type":"thinking","thinking":"two","thinkingSignature":"reasoning_content"},call("c1"),call("c2|fc_9")]})),
            result("c1", "QQ=="),
            result("c2|fc_9", "Qg=="),
            msg(json!({"role":"user","content":"next"})),
        ]
        .iter()
        .flat_map(|l| r.record(l))
        .collect();
        out.extend(r.finish());
        let roles: Vec<&str> = out.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "user"], "{out:#?}");
        assert_eq!(out[1]["content"], Value::Null);
        assert_eq!(out[1]["reasoning_content"], json!("two"));
        assert_eq!(out[1]["tool_calls"][1]["id"], json!("c2"));
        assert_eq!(out[3], json!({"role":"tool","content":"Read image file [image/png]","tool_call_id":"c2"}));
        assert_eq!(out[4]["content"][0], json!({"type":"text","text":CHAT_IMAGES}));
        assert_eq!(out[4]["content"][2]["image_url"]["url"], json!("data:image/png;base64,Qg=="));
    }

    #[test]
    fn short_hash_is_pis() {
        // Values from pi-ai 0.73.1's shortHash, run under node.
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("msg_abc"), "6piae0s8vela");
        assert_eq!(short_hash("é😀"), "102l7zrk951la");
    }

    #[test]
    fn another_model_of_the_same_provider_loses_its_fc_ids_and_long_text_ids_are_shortened() {
        let long = "x".repeat(80);
        let mut r = PiRequest::new(Dialect::OpenaiResponses, Some("openai"), Some("gpt-5-mini"));
        let reply = |model: &str| {
            msg(json!({"role":"assistant","provider":"openai","model":model,"api":"openai-responses","content":[
                {"type":"text","text":"hi","textSignature":long},
                {"type":"toolCall","id":"call_1|fc_1","name":"read","arguments":{}}]}))
        };
        let out = r.record(&reply("gpt-5"));
        assert_eq!(out[0]["id"], json!("msg_0"), "another model's text keeps no signature: {out:#?}");
        assert_eq!(out[1].get("id"), None, "{out:#?}");
        let mut r = PiRequest::new(Dialect::OpenaiResponses, Some("openai"), Some("gpt-5-mini"));
        let out = r.record(&reply("gpt-5-mini"));
        assert_eq!(out[0]["id"], json!(format!("msg_{}", short_hash(&long))));
        assert_eq!(out[1]["id"], json!("fc_1"), "{out:#?}");
    }

    /// pi 1.6.0 (a session holding its `system` message) names a text without an
    /// id `msg_pi_<index>`, a second text of one reply `msg_pi_<index>_1`; its
    /// leading system message is not counted (logged from pi 1.6.0: `msg_pi_1`
    /// for the Anthropic reply after the first user turn).
    #[test]
    fn pi_1_6_names_a_text_without_an_id_msg_pi() {
        let mut r = PiRequest::new(Dialect::OpenaiResponses, Some("openai"), Some("gpt-5-mini"));
        let system = msg(json!({"role":"system","content":"","sections":{"preamble":"p"}}));
        let user = msg(json!({"role":"user","content":[{"type":"text","text":"hello"}]}));
        let reply = msg(
            json!({"role":"assistant","provider":"anthropic","model":"claude-sonnet-4-5","api":"anthropic-messages",
            "content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"stopReason":"stop"}),
        );
        let out: Vec<Value> = [system, user, reply.clone()].iter().flat_map(|l| r.record(l)).collect();
        let ids: Vec<&Value> = out.iter().filter_map(|i| i.get("id")).collect();
        assert_eq!(ids, [&json!("msg_pi_1"), &json!("msg_pi_1_1")], "{out:#?}");
        // Without the system message: pi 0.73.1's numbering.
        let mut r = PiRequest::new(Dialect::OpenaiResponses, Some("openai"), Some("gpt-5-mini"));
        let out = r.record(&reply);
        let ids: Vec<&Value> = out.iter().filter_map(|i| i.get("id")).collect();
        assert_eq!(ids, [&json!("msg_0"), &json!("msg_0")], "{out:#?}");
    }

    #[test]
    fn another_models_thinking_goes_as_text_and_its_ids_are_made_safe() {
        let out = run(&[
            msg(json!({"role":"user","content":"go"})),
            msg(json!({"role":"assistant","provider":"openai","model":"g","api":"openai-responses","content":[
                {"type":"thinking","thinking":"hmm","thinkingSignature":"{\"type\":\"reasoning\"}"},
                {"type":"toolCall","id":"call_1|fc_2","name":"read","arguments":{}}]})),
            msg(
                json!({"role":"toolResult","toolCallId":"call_1|fc_2","content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":false}),
            ),
        ]);
        assert_eq!(out[1]["content"][0], json!({"type":"text","text":"hmm"}));
        assert_eq!(out[1]["content"][1]["id"], "call_1_fc_2");
        assert_eq!(out[2]["content"][0]["tool_use_id"], "call_1_fc_2");
        assert_eq!(out[2]["content"][0]["content"][0], json!({"type":"text","text":"(see attached image)"}));
    }
}
