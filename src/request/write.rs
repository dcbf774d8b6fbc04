//! Canonical messages out in one dialect, one message at a time: the request
//! is written as it is built, so its base64 never sits in memory twice.

use std::io::Write;

use serde_json::{Value, json};

use super::canon::{Msg, Part, WireRole};

/// The request dialects `preview --target` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Anthropic,
    OpenaiChat,
    OpenaiResponses,
    Gemini,
}

impl Dialect {
    pub fn from_name(s: &str) -> Option<Dialect> {
        Some(match s {
            "anthropic" => Dialect::Anthropic,
            "openai-chat" => Dialect::OpenaiChat,
            "openai-responses" => Dialect::OpenaiResponses,
            "gemini" => Dialect::Gemini,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::OpenaiChat => "openai-chat",
            Dialect::OpenaiResponses => "openai-responses",
            Dialect::Gemini => "gemini",
        }
    }

    /// The family whose replayed reasoning this dialect can carry.
    fn family(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::OpenaiChat => "none",
            Dialect::OpenaiResponses => "openai",
            Dialect::Gemini => "gemini",
        }
    }

    /// The list the history goes in.
    fn list(self) -> &'static str {
        match self {
            Dialect::Anthropic | Dialect::OpenaiChat => "messages",
            Dialect::OpenaiResponses => "input",
            Dialect::Gemini => "contents",
        }
    }
}

/// Writes a request body: `{"model": …, "system"?: …, "<list>": [ … ]}`.
pub struct Writer<W: Write> {
    out: W,
    dialect: Dialect,
    /// The message being built: consecutive messages of one side merge
    /// (Anthropic and Gemini want turns to alternate).
    pending: Option<Msg>,
    first: bool,
    system: Vec<String>,
    /// The tool each call id called: results that do not name it (Anthropic,
    /// OpenAI) get it back for dialects that want it (Gemini).
    calls: std::collections::HashMap<String, String>,
    /// Every item written, for the caller's summary.
    pub items: u64,
    /// System messages stay in the message list, where the agent sends them
    /// (Claude Code's `role: "system"` messages), instead of the top-level prompt.
    inline_system: bool,
    /// Only the item of this index is written, alone, and writing stops there
    /// (see [`Writer::item`]).
    only: Option<u64>,
    /// Pair calls and results by the target's rules ([`Writer::pair_calls`]).
    pairing: Option<OpenCalls>,
}

/// The calls of a request converted to another dialect: the agent's own
/// pairing (Codex's "aborted" output, pi's answer to an orphaned call, Gemini
/// CLI's second response) is its dialect's, and does not carry over.
#[derive(Default)]
struct OpenCalls {
    /// Calls of the last assistant message not answered yet, in order.
    open: Vec<(String, String)>,
}

/// The result a converted request gives a call its history left without one.
pub const NO_RESULT: &str = "[no result was recorded for this tool call]";

/// The error that ends a [`Writer::item`] once its item is out.
pub const ITEM_WRITTEN: &str = "the item asked for is written";

impl<W: Write> Writer<W> {
    pub fn start(mut out: W, dialect: Dialect, model: Option<&str>) -> std::io::Result<Writer<W>> {
        write!(out, "{{")?;
        if let Some(m) = model {
            write!(out, "\"model\":{},", json!(m))?;
        }
        write!(out, "\n\"{}\":[", dialect.list())?;
        Ok(Writer::new(out, dialect, None))
    }

    /// A writer that writes nothing but the item at `index` of the request,
    /// as the request would hold it, then fails with [`ITEM_WRITTEN`] so the
    /// rest of the history is not read: how a provider's block path is read
    /// against the request the agent sends (`diagnose`).
    pub fn item(out: W, dialect: Dialect, index: u64) -> Writer<W> {
        Writer::new(out, dialect, Some(index))
    }

    fn new(out: W, dialect: Dialect, only: Option<u64>) -> Writer<W> {
        Writer {
            out,
            dialect,
            pending: None,
            first: true,
            system: Vec::new(),
            calls: std::collections::HashMap::new(),
            items: 0,
            inline_system: false,
            only,
            pairing: None,
        }
    }

    /// Pairs every call with exactly one result, as the target's provider
    /// requires, for a request converted from another dialect: consecutive
    /// assistant messages are one turn, a call left open gets [`NO_RESULT`]
    /// before the next turn, and a result with no open call is left out.
    pub fn pair_calls(&mut self) {
        self.pairing = Some(OpenCalls::default());
    }

    /// Keeps system messages in the message list, in place.
    pub fn inline_system(&mut self) {
        self.inline_system = self.dialect == Dialect::Anthropic;
    }

    pub fn push(&mut self, mut m: Msg) -> std::io::Result<()> {
        // Reasoning only its own family can verify; other dialects cannot carry it.
        m.parts.retain(|p| !matches!(p, Part::Reasoning { family, .. } if *family != self.dialect.family()));
        for p in &mut m.parts {
            match p {
                Part::Call { id, name, .. } => {
                    self.calls.insert(id.clone(), name.clone());
                }
                Part::Result { id, name: name @ None, .. } => name.clone_from(&self.calls.get(id.as_str()).cloned()),
                _ => {}
            }
        }
        if m.role == WireRole::System && !self.inline_system {
            self.system
                .extend(m.parts.iter().filter_map(|p| if let Part::Text(t) = p { Some(t.clone()) } else { None }));
            if self.dialect != Dialect::OpenaiChat && self.dialect != Dialect::OpenaiResponses {
                return Ok(());
            }
        }
        if m.parts.is_empty() {
            return Ok(());
        }
        // Converted, a turn is every message of one side: the calls of one
        // turn answered by the tool messages right after it (Chat Completions).
        let merge = matches!(self.dialect, Dialect::Anthropic | Dialect::Gemini) || self.pairing.is_some();
        match self.pending.take() {
            Some(mut p) if merge && p.role == m.role => {
                p.parts.append(&mut m.parts);
                self.pending = Some(p);
            }
            Some(p) => {
                self.emit(p)?;
                self.pending = Some(m);
            }
            None => self.pending = Some(m),
        }
        Ok(())
    }

    /// An item already in the dialect, as the agent itself renders it (its
    /// adapter knows the agent's merging, joining and ids): written as is,
    /// after the message being built.
    pub fn push_sent(&mut self, item: &Value) -> std::io::Result<()> {
        if let Some(p) = self.pending.take() {
            self.emit(p)?;
        }
        self.write_item(item)
    }

    /// Writes the last message and closes the request; returns the writer and
    /// how many items were written (the last one counts only once it is out).
    pub fn finish(mut self) -> std::io::Result<(W, u64)> {
        if let Some(p) = self.pending.take() {
            self.emit(p)?;
        }
        self.answer_open()?;
        if self.only.is_some() {
            return Ok((self.out, self.items));
        }
        write!(self.out, "\n]")?;
        if !self.system.is_empty() {
            let text = self.system.join("\n\n");
            match self.dialect {
                Dialect::Anthropic => write!(self.out, ",\n\"system\":{}", json!(text))?,
                Dialect::Gemini => write!(self.out, ",\n\"systemInstruction\":{}", json!({"parts":[{"text": text}]}))?,
                _ => {}
            }
        }
        writeln!(self.out, "}}")?;
        Ok((self.out, self.items))
    }

    fn emit(&mut self, mut m: Msg) -> std::io::Result<()> {
        if let Some(pairing) = self.pairing.as_mut() {
            if m.role == WireRole::Assistant {
                self.answer_open()?;
                let pairing = self.pairing.as_mut().expect("pairing");
                for p in &m.parts {
                    if let Part::Call { id, name, .. } = p {
                        pairing.open.push((id.clone(), name.clone()));
                    }
                }
            } else {
                m.parts.retain(|p| match p {
                    Part::Result { id, .. } => match pairing.open.iter().position(|(o, _)| o == id) {
                        Some(i) => {
                            pairing.open.remove(i);
                            true
                        }
                        None => false,
                    },
                    _ => true,
                });
                if m.parts.is_empty() {
                    return Ok(());
                }
            }
        }
        self.render_out(m)
    }

    fn render_out(&mut self, m: Msg) -> std::io::Result<()> {
        for v in self.render(m) {
            self.write_item(&v)?;
        }
        Ok(())
    }

    /// [`NO_RESULT`] for every call still open, in one user message.
    fn answer_open(&mut self) -> std::io::Result<()> {
        let Some(pairing) = self.pairing.as_mut() else { return Ok(()) };
        let open = std::mem::take(&mut pairing.open);
        if open.is_empty() {
            return Ok(());
        }
        let parts = open
            .into_iter()
            .map(|(id, name)| Part::Result {
                id,
                name: Some(name),
                parts: vec![Part::Text(NO_RESULT.into())],
                error: true,
                extra: None,
            })
            .collect();
        self.render_out(Msg::new(WireRole::User, parts))
    }

    fn write_item(&mut self, v: &Value) -> std::io::Result<()> {
        if let Some(index) = self.only {
            self.items += 1;
            if self.items - 1 < index {
                return Ok(());
            }
            serde_json::to_writer(&mut self.out, v)?;
            return Err(std::io::Error::other(ITEM_WRITTEN));
        }
        if !self.first {
            write!(self.out, ",")?;
        }
        self.first = false;
        writeln!(self.out)?;
        serde_json::to_writer(&mut self.out, v)?;
        self.items += 1;
        Ok(())
    }

    fn render(&self, m: Msg) -> Vec<Value> {
        match self.dialect {
            Dialect::Anthropic => anthropic(m),
            Dialect::OpenaiChat => chat(m),
            Dialect::OpenaiResponses => responses(&m),
            Dialect::Gemini => gemini(m),
        }
    }
}

/// A call's arguments as an object, which Anthropic's `input` and Gemini's
/// `args` must be: a string, an array or a number (a Codex custom tool's raw
/// input) goes under `input`.
fn object_args(args: Value) -> Value {
    if args.is_object() { args } else { json!({ "input": args }) }
}

fn role_name(r: WireRole, assistant: &str) -> &str {
    match r {
        WireRole::Assistant => assistant,
        WireRole::User => "user",
        WireRole::System => "system",
    }
}

fn anthropic_media(p: &Part) -> Value {
    let Part::Media { mime, data, url, name } = p else { return Value::Null };
    let kind = if p.is_pdf() { "document" } else { "image" };
    let source = match (data, url) {
        (Some(d), _) => json!({"type":"base64","media_type":mime,"data":d}),
        (None, Some(u)) if u.starts_with("file") => json!({"type":"file","file_id":u}),
        (None, u) => json!({"type":"url","url":u}),
    };
    let mut b = json!({"type": kind, "source": source});
    if let (Some(n), "document") = (name, kind) {
        b["title"] = json!(n);
    }
    b
}

fn anthropic_block(p: Part) -> Value {
    match p {
        Part::Text(t) => json!({"type":"text","text":t}),
        Part::Media { .. } => anthropic_media(&p),
        Part::Call { id, name, args } => json!({"type":"tool_use","id":id,"name":name,"input":object_args(args)}),
        Part::Result { id, parts, error, .. } => {
            let content: Vec<Value> = parts.into_iter().map(anthropic_block).collect();
            let mut b = json!({"type":"tool_result","tool_use_id":id,"content":content});
            if error {
                b["is_error"] = json!(true);
            }
            b
        }
        Part::Reasoning { raw, .. } => raw,
    }
}

fn anthropic(m: Msg) -> Vec<Value> {
    // Tool results open a user message: Anthropic wants them first.
    let mut parts = m.parts;
    parts.sort_by_key(|p| !matches!(p, Part::Result { .. }));
    let content: Vec<Value> = parts.into_iter().map(anthropic_block).collect();
    vec![json!({"role": role_name(m.role, "assistant"), "content": content})]
}

fn chat_part(p: &Part) -> Option<Value> {
    match p {
        Part::Text(t) => Some(json!({"type":"text","text":t})),
        Part::Media { name, .. } if p.is_pdf() => Some(
            json!({"type":"file","file":{"filename": name.clone().unwrap_or_else(|| "document.pdf".into()),"file_data": p.data_url()}}),
        ),
        Part::Media { .. } => Some(json!({"type":"image_url","image_url":{"url": p.data_url()}})),
        _ => None,
    }
}

fn chat(m: Msg) -> Vec<Value> {
    let mut out = Vec::new();
    let mut content = Vec::new();
    let mut calls = Vec::new();
    let mut media_after = Vec::new();
    for p in m.parts {
        match p {
            Part::Call { id, name, args } => {
                calls.push(json!({"id":id,"type":"function","function":{"name":name,"arguments":args.to_string()}}));
            }
            Part::Result { id, parts, extra, .. } => {
                // A tool message holds text; its media follow in a user message.
                let text: Vec<String> =
                    parts.iter().filter_map(|x| if let Part::Text(t) = x { Some(t.clone()) } else { None }).collect();
                media_after.extend(parts.iter().filter(|x| matches!(x, Part::Media { .. })).filter_map(chat_part));
                let mut tool = json!({"role":"tool","tool_call_id":id,"content":text.join("\n")});
                if let (Some(Value::Object(members)), Value::Object(msg)) = (extra, &mut tool) {
                    msg.extend(members);
                }
                out.push(tool);
            }
            other => content.extend(chat_part(&other)),
        }
    }
    if !content.is_empty() || !calls.is_empty() {
        let mut msg = json!({"role": role_name(m.role, "assistant"), "content": if content.is_empty() { Value::Null } else { Value::Array(content) }});
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        }
        // An assistant message opens its calls; a user message's own text and
        // media follow the tool messages, which must come right after the calls.
        if m.role == WireRole::Assistant { out.insert(0, msg) } else { out.push(msg) }
    }
    if !media_after.is_empty() {
        out.push(json!({"role":"user","content":media_after}));
    }
    out
}

fn responses_part(p: &Part, assistant: bool) -> Option<Value> {
    match p {
        Part::Text(t) if assistant => Some(json!({"type":"output_text","text":t})),
        Part::Text(t) => Some(json!({"type":"input_text","text":t})),
        Part::Media { name, .. } if p.is_pdf() => Some(
            json!({"type":"input_file","filename": name.clone().unwrap_or_else(|| "document.pdf".into()),"file_data": p.data_url()}),
        ),
        Part::Media { .. } => Some(json!({"type":"input_image","image_url": p.data_url()})),
        _ => None,
    }
}

fn responses(m: &Msg) -> Vec<Value> {
    let assistant = m.role == WireRole::Assistant;
    let mut out = Vec::new();
    let mut content = Vec::new();
    let flush = |content: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !content.is_empty() {
            let role = match m.role {
                WireRole::Assistant => "assistant",
                WireRole::System => "developer",
                WireRole::User => "user",
            };
            out.push(json!({"type":"message","role":role,"content":std::mem::take(content)}));
        }
    };
    for p in &m.parts {
        match p {
            Part::Call { id, name, args } => {
                flush(&mut content, &mut out);
                out.push(json!({"type":"function_call","call_id":id,"name":name,"arguments":args.to_string()}));
            }
            Part::Result { id, parts, .. } => {
                flush(&mut content, &mut out);
                let output: Vec<Value> = parts.iter().filter_map(|x| responses_part(x, false)).collect();
                out.push(json!({"type":"function_call_output","call_id":id,"output":output}));
            }
            Part::Reasoning { raw, .. } => {
                flush(&mut content, &mut out);
                out.push(raw.clone());
            }
            other => content.extend(responses_part(other, assistant)),
        }
    }
    flush(&mut content, &mut out);
    out
}

fn gemini_part(p: Part) -> Value {
    match p {
        Part::Text(t) => json!({"text": t}),
        Part::Media { mime, data: Some(d), .. } => json!({"inlineData":{"mimeType":mime,"data":d}}),
        Part::Media { mime, url, .. } => json!({"fileData":{"mimeType":mime,"fileUri":url}}),
        Part::Call { id, name, args } => json!({"functionCall":{"id":id,"name":name,"args":object_args(args)}}),
        Part::Result { id, name, parts, .. } => {
            let (texts, media): (Vec<Part>, Vec<Part>) = parts.into_iter().partition(|x| matches!(x, Part::Text(_)));
            let output: Vec<String> =
                texts.into_iter().filter_map(|x| if let Part::Text(t) = x { Some(t) } else { None }).collect();
            let mut r = json!({"id":id,"name":name.unwrap_or_default(),"response":{"output":output.join("\n")}});
            if !media.is_empty() {
                r["parts"] = Value::Array(media.into_iter().map(gemini_part).collect());
            }
            json!({"functionResponse": r})
        }
        Part::Reasoning { raw, .. } => raw,
    }
}

fn gemini(m: Msg) -> Vec<Value> {
    let parts: Vec<Value> = m.parts.into_iter().map(gemini_part).collect();
    vec![json!({"role": role_name(m.role, "model"), "parts": parts})]
}
