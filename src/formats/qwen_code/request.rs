//! Qwen Code's Chat Completions request, built from its session records the
//! way 0.24.4 builds it when it resumes (`SessionApiHistoryAccumulator`, then
//! the OpenAI converter, `convertLlmRequestToOpenAI`), checked against its
//! wire requests:
//!
//! - each record's `message` is one Gemini `Content`; of those the history
//!   sent is curated (`extractCuratedHistory`): consecutive user contents are
//!   one (a tool's results, a prompt after them, the new prompt), and a run of
//!   model contents one of which is not valid goes;
//! - a content becomes messages in Qwen Code's order: its `tool` messages (a
//!   `functionResponse`'s `output`, else its `error`, else the JSON of the
//!   response, then its own text and media parts, as content parts), then one
//!   user message `(attached media from previous tool call)` holding those
//!   tool messages' media (`splitToolMedia`, on by default: the tool message
//!   keeps its text, or a placeholder when it has none), then the user's own
//!   text and media, or the assistant's text (joined), calls and reasoning;
//! - media are sent by the model's modalities (`defaultModalities`): an image
//!   as an `image_url` data URL, a PDF as a `file` part, each as Qwen Code's
//!   text placeholder where the model takes no such input;
//! - consecutive assistant messages merge; a call with no tool message right
//!   after it, a tool message with no call before it and its media message are
//!   left out (`cleanOrphanedToolCalls`); past 250 images the oldest are
//!   replaced by a placeholder.

use serde_json::{Map, Value, json};

/// What every Qwen Code request holds that its session does not.
pub const NOT_IN_SESSION: &[&str] = &[
    "the system prompt (the first message, written for each run)",
    "the tool list",
    "the startup context: the `<system-reminder>` text parts Qwen Code puts before the first prompt's text (skills, environment, tools) and before each new prompt (the date), written afresh on each start",
];

/// The text before a tool's media in the user message that carries them.
pub const SPLIT_TOOL_MEDIA_TEXT: &str = "(attached media from previous tool call)";
/// A tool message's content when its media moved out and it had no text.
const MEDIA_FOLLOWS: &str = "[media attached in following user message]";
/// At most this many images in one request; the oldest go first.
const MAX_REQUEST_IMAGES: usize = 250;
const EVICTED_IMAGE: &str = "[\u{5DF2}\u{6DD8}\u{6C70}\u{8F83}\u{65E9}\u{7684}\u{5173}\u{952E}\u{5E27}\u{4EE5}\u{63A7}\u{5236}\u{5355}\u{6B21}\u{8BF7}\u{6C42}\u{7684}\u{56FE}\u{7247}\u{6570}\u{91CF}\u{FF1B}\u{5982}\u{9700}\u{91CD}\u{770B}\u{8BE5}\u{753B}\u{9762}\u{8BF7}\u{91CD}\u{65B0}\u{62BD}\u{5E27}\u{6216}\u{5207}\u{7247}]";

/// Which inputs a model takes, as Qwen Code guesses them from its name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modalities {
    pub image: bool,
    pub pdf: bool,
    pub audio: bool,
    pub video: bool,
}

const FULL: Modalities = Modalities { image: true, pdf: true, audio: true, video: true };
const IMAGE: Modalities = Modalities { image: true, pdf: false, audio: false, video: false };
const IMAGE_VIDEO: Modalities = Modalities { image: true, pdf: false, audio: false, video: true };
const IMAGE_PDF: Modalities = Modalities { image: true, pdf: true, audio: false, video: false };
const TEXT: Modalities = Modalities { image: false, pdf: false, audio: false, video: false };

/// A model name as Qwen Code compares it (`normalize`): lower case, without a
/// `provider/` prefix, a `:tag`, `-preview`, or a date or `latest` suffix.
fn normalize(model: &str) -> String {
    let mut s = model.trim().to_lowercase();
    if let Some((_, tail)) = s.rsplit_once('/') {
        s = tail.to_string();
    }
    if let Some((_, tail)) = s.rsplit_once('|') {
        s = tail.to_string();
    }
    // A `:free`-like tag goes; otherwise what follows the last colon is the name.
    if let Some((head, tail)) = s.rsplit_once(':') {
        let tag = ["free", "beta", "extended", "thinking", "online", "nitro", "floor", "latest"].contains(&tail)
            || (tail.ends_with('b') && tail.starts_with(|c: char| c.is_ascii_digit()));
        s = if tag { head.to_string() } else { tail.to_string() };
        if let Some((_, tail)) = s.rsplit_once(':') {
            s = tail.to_string();
        }
    }
    s = s.split_whitespace().collect::<Vec<_>>().join("-").replace("-preview", "");
    for suffix in ["-latest", "-exp"] {
        if let Some(head) = s.strip_suffix(suffix) {
            s = head.to_string();
        }
    }
    s
}

/// `defaultModalities`: the first of Qwen Code's name patterns that matches.
pub fn modalities(model: Option<&str>) -> Modalities {
    let m = normalize(model.unwrap_or(""));
    let starts = |p: &str| m.starts_with(p);
    let omni = m.starts_with("qwen")
        && m.trim_start_matches("qwen")
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
            .starts_with("-omni");
    if starts("gemini-") || omni || starts("qwen-omni") {
        return FULL;
    }
    if starts("gpt-") || (m.len() > 1 && m.starts_with('o') && m.as_bytes()[1].is_ascii_digit()) {
        return IMAGE;
    }
    if starts("claude-") {
        return IMAGE_PDF;
    }
    let image_video =
        ["qwen3.5-plus", "qwen3.6-plus", "qwen3.7-plus", "qwen3.8-flash", "qwen3.8-plus", "qwen-vl-", "qwen3-vl-"];
    if image_video.iter().any(|p| starts(p)) || m == "coder-model" {
        return IMAGE_VIDEO;
    }
    if starts("qwen3.8-max") {
        return IMAGE;
    }
    if starts("qwen3-coder-") {
        return TEXT;
    }
    if starts("qwen3.6-35b") {
        return IMAGE_VIDEO;
    }
    if starts("qwen") {
        return TEXT;
    }
    if starts("deepseek-") && m.contains("vision") {
        return IMAGE;
    }
    if starts("glm-") {
        let v = m["glm-".len()..].trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        return if v.starts_with('v') || starts("glm-5.3-flash") { IMAGE } else { TEXT };
    }
    if starts("minimax-m3") || starts("kimi-k3") || starts("kimi-k2.") {
        return IMAGE_VIDEO;
    }
    if starts("doubao-seedance") || starts("doubao-seedream") {
        return TEXT;
    }
    if starts("doubao-seed") || (starts("doubao-") && (m.contains("vision") || m.contains("vl"))) {
        return IMAGE;
    }
    TEXT
}

/// The [`crate::request::Sends`] of Qwen Code: the history's contents, then
/// the converter over all of them at the end (its cleaning looks ahead).
pub struct Converter {
    modalities: Modalities,
    /// The history's Gemini contents, each with whether it answers a call.
    contents: Vec<Value>,
}

impl Converter {
    pub fn new(model: Option<&str>) -> Converter {
        Converter { modalities: modalities(model), contents: Vec::new() }
    }

    /// Converts a whole history of Gemini contents (what `finish` does).
    pub fn convert(&self, contents: &[Value]) -> Vec<Value> {
        let mut messages = Vec::new();
        for c in &curate(contents) {
            self.content(c, &mut messages);
        }
        let messages = merge_assistants(messages);
        let mut messages = merge_assistants(clean_orphans(&messages));
        evict_images(&mut messages);
        messages
    }

    fn content(&self, c: &Value, out: &mut Vec<Value>) {
        let Some(parts) = c.get("parts").and_then(Value::as_array) else { return };
        let assistant = c.get("role").and_then(Value::as_str) == Some("model");
        let mut content = Vec::new();
        let mut reasoning = String::new();
        let mut calls = Vec::new();
        let mut call_ids = std::collections::HashSet::new();
        let mut response_ids = std::collections::HashSet::new();
        let mut split_media = Vec::new();
        for p in parts {
            if let Some(t) = p.as_str() {
                content.push(json!({"type":"text","text":t}));
                continue;
            }
            let thought = p.get("thought").and_then(Value::as_bool) == Some(true);
            if let Some(t) = p.get("text").and_then(Value::as_str) {
                if thought && assistant {
                    reasoning.push_str(t);
                }
                if !t.is_empty() && !thought {
                    content.push(json!({"type":"text","text":t}));
                }
            }
            if let Some(m) = self.media(p)
                && !assistant
            {
                content.push(m);
            }
            if let Some(call) = p.get("functionCall").filter(|f| f.is_object())
                && assistant
            {
                let id = call.get("id").and_then(Value::as_str).filter(|i| !i.is_empty());
                if id.is_some_and(|id| !call_ids.insert(id.to_string())) {
                    continue;
                }
                let id = id.map_or_else(|| format!("call_{}", calls.len()), str::to_string);
                let args = call.get("args").filter(|a| !a.is_null()).cloned().unwrap_or_else(|| json!({}));
                let name = call.get("name").and_then(Value::as_str).unwrap_or("");
                calls.push(json!({"id":id,"type":"function","function":{"name":name,"arguments":args.to_string()}}));
            }
            if let Some(r) = p.get("functionResponse").filter(|f| f.is_object())
                && !assistant
            {
                let id = r.get("id").and_then(Value::as_str).filter(|i| !i.is_empty());
                if id.is_some_and(|id| !response_ids.insert(id.to_string())) {
                    continue;
                }
                let mut msg = self.tool_message(r);
                split(&mut msg, &mut split_media);
                out.push(msg);
            }
        }
        if !split_media.is_empty() {
            let mut parts = vec![json!({"type":"text","text":SPLIT_TOOL_MEDIA_TEXT})];
            parts.append(&mut split_media);
            out.push(json!({"role":"user","content":parts}));
        }
        if assistant {
            if content.is_empty() && calls.is_empty() && reasoning.is_empty() {
                return;
            }
            let text: String = content.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            let body = if !text.is_empty() {
                json!(text)
            } else if !reasoning.is_empty() {
                json!("")
            } else {
                Value::Null
            };
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            m.insert("content".into(), body);
            if !calls.is_empty() {
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            if !reasoning.is_empty() {
                m.insert("reasoning_content".into(), json!(reasoning));
            }
            out.push(Value::Object(m));
        } else if !content.is_empty() {
            out.push(json!({"role":"user","content":content}));
        }
    }

    /// `createToolMessage`: the response's text, then its own parts.
    fn tool_message(&self, r: &Value) -> Value {
        let text = response_text(r.get("response").unwrap_or(&Value::Null));
        let mut content = Vec::new();
        if !text.is_empty() {
            content.push(json!({"type":"text","text":text}));
        }
        for p in r.get("parts").and_then(Value::as_array).into_iter().flatten() {
            if let Some(t) = p.get("text").and_then(Value::as_str) {
                if !t.is_empty() {
                    content.push(json!({"type":"text","text":t}));
                }
                continue;
            }
            content.extend(self.media(p));
        }
        let id = r.get("id").and_then(Value::as_str).unwrap_or("");
        let body = if content.is_empty() { json!("") } else { Value::Array(content) };
        json!({"role":"tool","tool_call_id":id,"content":body})
    }

    /// `createMediaContentPart`: an `inlineData` or `fileData` part as the
    /// model's modalities let it go.
    fn media(&self, p: &Value) -> Option<Value> {
        let m = &self.modalities;
        if let Some(d) = p.get("inlineData")
            && let (Some(mime), Some(data)) = (str_of(d, "mimeType"), str_of(d, "data"))
        {
            let shown = str_of(d, "displayName").unwrap_or(mime);
            let url = format!("data:{mime};base64,{data}");
            return Some(match kind(mime) {
                "image" if m.image => json!({"type":"image_url","image_url":{"url":url}}),
                "image" => unsupported("image", shown),
                _ if mime == "application/pdf" && m.pdf => {
                    let filename = str_of(d, "displayName").unwrap_or("document.pdf");
                    json!({"type":"file","file":{"filename":filename,"file_data":url}})
                }
                _ if mime == "application/pdf" => unsupported("pdf", shown),
                "audio" if !m.audio => unsupported("audio", shown),
                "audio" if audio_format(mime).is_some() => {
                    json!({"type":"input_audio","input_audio":{"data":url,"format":audio_format(mime)}})
                }
                "video" if m.video => json!({"type":"video_url","video_url":{"url":url}}),
                "video" => unsupported("video", shown),
                _ => json!({"type":"text","text":format!("Unsupported inline media type: {mime} ({shown}).")}),
            });
        }
        if let Some(f) = p.get("fileData")
            && let (Some(mime), Some(uri)) = (str_of(f, "mimeType"), str_of(f, "fileUri"))
        {
            let filename = str_of(f, "displayName").unwrap_or("file");
            return Some(match kind(mime) {
                "image" if m.image => json!({"type":"image_url","image_url":{"url":uri}}),
                "image" => unsupported("image", filename),
                _ if mime == "application/pdf" && m.pdf => {
                    json!({"type":"file","file":{"filename":filename,"file_data":uri}})
                }
                _ if mime == "application/pdf" => unsupported("pdf", filename),
                "video" if m.video => json!({"type":"video_url","video_url":{"url":uri}}),
                "video" => unsupported("video", filename),
                "audio" if !m.audio => unsupported("audio", filename),
                "audio" if audio_format(mime).is_some() => {
                    json!({"type":"input_audio","input_audio":{"data":uri,"format":audio_format(mime)}})
                }
                _ => {
                    let named = str_of(f, "displayName").map(|n| format!(" ({n})")).unwrap_or_default();
                    json!({"type":"text","text":format!("Unsupported file media type: {mime}{named}.")})
                }
            });
        }
        None
    }
}

impl crate::request::Sends for Converter {
    fn record(&mut self, r: &Value) -> Vec<Value> {
        let t = r.get("type").and_then(Value::as_str);
        let subtype = r.get("subtype").and_then(Value::as_str);
        if t == Some("system") {
            if subtype == Some("chat_compression")
                && let Some(h) =
                    r.get("systemPayload").and_then(|p| p.get("compressedHistory")).and_then(Value::as_array)
            {
                self.contents.clone_from(h);
            }
            return Vec::new();
        }
        if subtype == Some("realtime_message") {
            return Vec::new();
        }
        let Some(message) = r.get("message").filter(|m| m.is_object()) else { return Vec::new() };
        self.contents.push(message.clone());
        Vec::new()
    }

    fn finish(&mut self) -> Vec<Value> {
        let contents = std::mem::take(&mut self.contents);
        self.convert(&contents)
    }
}

/// `extractCuratedHistory`, the history Qwen Code sends: consecutive user
/// contents are one; a run of model contents goes whole when one of them is
/// not valid (no parts, an empty part, an empty text that is no thought and no
/// call), and a model turn that is only the upstream placeholder
/// `(request timeout)` goes.
fn curate(contents: &[Value]) -> Vec<Value> {
    let user = |c: &Value| c.get("role").and_then(Value::as_str) == Some("user");
    let parts = |c: &Value| c.get("parts").and_then(Value::as_array).cloned().unwrap_or_default();
    let valid = |c: &Value| {
        let ps = parts(c);
        !ps.is_empty()
            && ps.iter().all(|p| {
                let empty_text = p.get("text").and_then(Value::as_str) == Some("")
                    && p.get("thought").and_then(Value::as_bool) != Some(true)
                    && p.get("thoughtSignature").is_none()
                    && p.get("functionCall").is_none();
                p.as_object().is_some_and(|o| !o.is_empty()) && !empty_text
            })
    };
    let placeholder = |c: &Value| {
        let ps = parts(c);
        let thought = |p: &Value| p.get("thought").and_then(Value::as_bool) == Some(true);
        !ps.is_empty()
            && ps.iter().all(|p| p.get("functionCall").is_none() && (thought(p) || p.get("text").is_some()))
            && ps
                .iter()
                .filter(|p| !thought(p))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<String>()
                .trim()
                == "(request timeout)"
    };
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < contents.len() {
        if user(&contents[i]) {
            match out.last_mut().filter(|l| user(l)) {
                Some(last) => {
                    let mut joined = parts(last);
                    joined.extend(parts(&contents[i]));
                    last["parts"] = Value::Array(joined);
                }
                None => out.push(contents[i].clone()),
            }
            i += 1;
            continue;
        }
        let run_start = i;
        while i < contents.len() && !user(&contents[i]) {
            i += 1;
        }
        let run = &contents[run_start..i];
        if run.iter().all(valid) {
            out.extend(run.iter().filter(|c| !placeholder(c)).cloned());
        }
    }
    out
}

fn str_of<'v>(v: &'v Value, k: &str) -> Option<&'v str> {
    v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn kind(mime: &str) -> &'static str {
    ["image", "audio", "video"].into_iter().find(|k| mime.starts_with(&format!("{k}/"))).unwrap_or("file")
}

fn audio_format(mime: &str) -> Option<&'static str> {
    if mime.contains("wav") {
        Some("wav")
    } else if mime.contains("mp3") || mime.contains("mpeg") {
        Some("mp3")
    } else if mime.contains("flac") {
        Some("flac")
    } else if mime.contains("ogg") {
        Some("ogg")
    } else if mime == "audio/mp4" || mime.contains("m4a") {
        Some("m4a")
    } else {
        None
    }
}

/// `unsupportedModalityPlaceholder`: what goes instead of media the model takes no such input of.
fn unsupported(modality: &str, shown: &str) -> Value {
    let hint = if modality == "pdf" {
        "This model does not support PDF input directly. The read_file tool cannot extract PDF content either. To extract text from the PDF file, try using skills if applicable, or guide user to install pdf skill by running this slash command:\n/extensions install https://github.com/anthropics/skills:document-skills".to_string()
    } else {
        format!(
            "This model does not support {modality} input. The read_file tool cannot process this type of file either. To handle this file, try using skills if applicable, or any tools installed at system wide, or let the user know you cannot process this type of file."
        )
    };
    json!({"type":"text","text":format!("[Unsupported {modality} file: \"{shown}\". {hint}]")})
}

/// `extractFunctionResponseContent`: its `output`, else its `error`, else its JSON.
fn response_text(r: &Value) -> String {
    match r {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Object(o) => match (o.get("output"), o.get("error")) {
            (Some(Value::String(s)), _) | (_, Some(Value::String(s))) => s.clone(),
            _ => r.to_string(),
        },
        other => other.to_string(),
    }
}

fn is_media(p: &Value) -> bool {
    matches!(p.get("type").and_then(Value::as_str), Some("image_url" | "input_audio" | "video_url" | "file"))
}

/// Text Qwen Code's omni delivery puts before media it degraded, which moves with them.
fn is_disclosure(t: &str) -> bool {
    if t.starts_with("\u{3010}\u{5A92}\u{4F53}\u{964D}\u{8D28}\u{3011}") {
        return true;
    }
    // `<m:ss>` or `<h:mm:ss>`: a keyframe's time label.
    let Some(inner) = t.strip_prefix('<').and_then(|r| r.strip_suffix('>')) else { return false };
    let fields: Vec<&str> = inner.split(':').collect();
    let digits = |f: &str, lo: usize, hi: usize| (lo..=hi).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_digit());
    (2..=3).contains(&fields.len()) && digits(fields[0], 1, 2) && fields[1..].iter().all(|f| digits(f, 2, 2))
}

/// `splitToolMedia`: a tool message's media move to `media`; it keeps its text.
fn split(msg: &mut Value, media: &mut Vec<Value>) {
    let Some(parts) = msg.get("content").and_then(Value::as_array) else { return };
    let (mut found, mut texts) = (Vec::new(), Vec::new());
    let mut prev: Option<&Value> = None;
    for p in parts {
        if is_media(p) {
            if let Some(t) = prev.and_then(|q| q.get("text")).and_then(Value::as_str)
                && prev.and_then(|q| q.get("type")).and_then(Value::as_str) == Some("text")
                && is_disclosure(t)
                && let Some(moved) = texts.pop()
            {
                found.push(moved);
            }
            found.push(p.clone());
        } else if p.get("type").and_then(Value::as_str) == Some("text") {
            texts.push(p.clone());
        }
        prev = Some(p);
    }
    if found.is_empty() {
        return;
    }
    let text: Vec<&str> = texts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
    let text = text.join("\n");
    msg["content"] = json!(if text.is_empty() { MEDIA_FOLLOWS.to_string() } else { text });
    media.append(&mut found);
}

fn role(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

fn calls_of(m: &Value) -> Option<&Vec<Value>> {
    (role(m) == Some("assistant"))
        .then(|| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .filter(|c| !c.is_empty())
}

fn is_split_media(m: &Value) -> bool {
    role(m) == Some("user")
        && m.get("content").and_then(Value::as_array).and_then(|c| c.first()).is_some_and(|p| {
            p.get("type").and_then(Value::as_str) == Some("text")
                && p.get("text").and_then(Value::as_str) == Some(SPLIT_TOOL_MEDIA_TEXT)
        })
}

/// `mergeConsecutiveAssistantMessages`.
fn merge_assistants(messages: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        if role(&m) == Some("assistant")
            && let Some(last) = out.last_mut().filter(|l| role(l) == Some("assistant"))
        {
            let (a, b) =
                (last.get("content").cloned().unwrap_or(Value::Null), m.get("content").cloned().unwrap_or(Value::Null));
            let parts = |c: &Value| -> Vec<Value> {
                match c {
                    Value::Array(p) => p.clone(),
                    Value::String(s) if !s.is_empty() => vec![json!({"type":"text","text":s})],
                    _ => Vec::new(),
                }
            };
            let combined = if a.is_array() || b.is_array() {
                let mut all = parts(&a);
                all.extend(parts(&b));
                if all.is_empty() { Value::Null } else { Value::Array(all) }
            } else {
                let text = format!("{}{}", a.as_str().unwrap_or(""), b.as_str().unwrap_or(""));
                if text.is_empty() { Value::Null } else { json!(text) }
            };
            let mut calls: Vec<Value> = last.get("tool_calls").and_then(Value::as_array).cloned().unwrap_or_default();
            calls.extend(m.get("tool_calls").and_then(Value::as_array).cloned().unwrap_or_default());
            last["content"] = combined;
            if !calls.is_empty() {
                last["tool_calls"] = Value::Array(calls);
            }
            let reasoning: String = [last.get("reasoning_content"), m.get("reasoning_content")]
                .into_iter()
                .filter_map(|r| r.and_then(Value::as_str))
                .collect();
            if !reasoning.is_empty() {
                last["reasoning_content"] = json!(reasoning);
            }
            continue;
        }
        out.push(m);
    }
    out
}

/// `cleanOrphanedToolCalls`: each assistant message keeps the calls answered by
/// the tool messages right after it, which follow it with their media
/// messages; an assistant left with no call and no text goes, and so does a
/// tool or media message no call took.
/// An assistant message's calls that stand, the tool messages that answer
/// them and the media messages that follow those (indexes).
type Kept = (Vec<Value>, Vec<usize>, Vec<usize>);

fn clean_orphans(messages: &[Value]) -> Vec<Value> {
    let n = messages.len();
    let mut valid: Vec<Option<Kept>> = vec![None; n];
    let mut surviving = std::collections::HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(calls) = calls_of(m) else { continue };
        let mut candidates = Vec::new();
        let mut ids = std::collections::HashSet::new();
        for c in calls {
            let Some(id) = c.get("id").and_then(Value::as_str).filter(|i| !i.is_empty()) else { continue };
            if surviving.contains(id) || !ids.insert(id.to_string()) {
                continue;
            }
            candidates.push(c.clone());
        }
        let (mut answered, mut responses, mut media) = (std::collections::HashSet::new(), Vec::new(), Vec::new());
        let mut last_matches = false;
        for (j, next) in messages.iter().enumerate().skip(i + 1) {
            if role(next) == Some("tool") && next.get("tool_call_id").is_some() {
                let id = next.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                if !id.is_empty() && ids.contains(id) && answered.insert(id.to_string()) {
                    responses.push(j);
                    last_matches = true;
                } else {
                    last_matches = false;
                }
                continue;
            }
            if is_split_media(next) {
                if last_matches {
                    media.push(j);
                }
                continue;
            }
            if role(next) == Some("assistant") && calls_of(next).is_none() {
                continue;
            }
            break;
        }
        let kept: Vec<Value> = candidates
            .into_iter()
            .filter(|c| c.get("id").and_then(Value::as_str).is_some_and(|id| answered.contains(id)))
            .collect();
        for c in &kept {
            if let Some(id) = c.get("id").and_then(Value::as_str) {
                surviving.insert(id.to_string());
            }
        }
        valid[i] = Some((kept, responses, media));
    }
    let mut emitted = vec![false; n];
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if emitted[i] {
            continue;
        }
        if calls_of(m).is_some() {
            let (kept, responses, media) = valid[i].clone().unwrap_or_default();
            if !kept.is_empty() {
                let mut c = m.clone();
                c["tool_calls"] = Value::Array(kept);
                out.push(c);
                for j in responses.into_iter().chain(media) {
                    out.push(messages[j].clone());
                    emitted[j] = true;
                }
            } else if m.get("content").and_then(Value::as_str).is_some_and(|t| !t.trim().is_empty())
                || m.get("reasoning_content").and_then(Value::as_str).is_some_and(|r| !r.is_empty())
            {
                let mut c = m.clone();
                if let Some(o) = c.as_object_mut() {
                    o.remove("tool_calls");
                }
                out.push(c);
            }
        } else if (role(m) == Some("tool") && m.get("tool_call_id").is_some()) || is_split_media(m) {
            // An orphan: no call took it.
        } else {
            out.push(m.clone());
        }
    }
    out
}

/// `evictOldestImagesBeyondCap`: past the cap, the oldest images become a placeholder.
fn evict_images(messages: &mut [Value]) {
    let is_image = |p: &Value| p.get("type").and_then(Value::as_str) == Some("image_url");
    let total: usize = messages
        .iter()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .map(|c| c.iter().filter(|p| is_image(p)).count())
        .sum();
    let mut evict = total.saturating_sub(MAX_REQUEST_IMAGES);
    for m in messages.iter_mut() {
        let Some(content) = m.get_mut("content").and_then(Value::as_array_mut) else { continue };
        for p in content.iter_mut() {
            if evict > 0 && is_image(p) {
                *p = json!({"type":"text","text":EVICTED_IMAGE});
                evict -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(model: &str, contents: &Value) -> Vec<Value> {
        Converter::new(Some(model)).convert(contents.as_array().unwrap())
    }

    #[test]
    fn a_tools_image_follows_its_tool_message_in_a_user_message() {
        let contents = json!([
            {"role":"user","parts":[{"text":"look"}]},
            {"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{"file_path":"/a.png"}}}]},
            {"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"Image overview: 4x4."},
                "parts":[{"inlineData":{"data":"AAAA","mimeType":"image/jpeg","displayName":"a.png"}}]}}]}
        ]);
        let out = convert("qwen3-vl-plus", &contents);
        assert_eq!(out.len(), 4, "{out:#?}");
        assert_eq!(out[2], json!({"role":"tool","tool_call_id":"c1","content":"Image overview: 4x4."}));
        assert_eq!(
            out[3],
            json!({"role":"user","content":[{"type":"text","text":SPLIT_TOOL_MEDIA_TEXT},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AAAA"}}]})
        );
        // A text-only model gets Qwen Code's placeholder, in the tool message.
        let out = convert("qwen3-coder-plus", &contents);
        assert_eq!(out.len(), 3, "{out:#?}");
        assert!(out[2]["content"][1]["text"].as_str().unwrap().starts_with("[Unsupported image file: \"a.png\""));
    }

    #[test]
    fn a_pdf_is_a_file_part_for_a_model_that_reads_them() {
        let contents = json!([
            {"role":"user","parts":[{"text":"x"}]},
            {"role":"model","parts":[{"functionCall":{"id":"c1","name":"read_file","args":{}}}]},
            {"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":""},
                "parts":[{"inlineData":{"data":"JVBE","mimeType":"application/pdf","displayName":"d.pdf"}}]}}]}
        ]);
        let out = convert("claude-sonnet-4-5", &contents);
        assert_eq!(out[2]["content"], json!(MEDIA_FOLLOWS));
        assert_eq!(
            out[3]["content"][1],
            json!({"type":"file","file":{"filename":"d.pdf","file_data":"data:application/pdf;base64,JVBE"}})
        );
    }

    #[test]
    fn an_unanswered_call_is_left_out_and_assistants_merge() {
        let contents = json!([
            {"role":"user","parts":[{"text":"x"}]},
            {"role":"model","parts":[{"text":"a"}]},
            {"role":"model","parts":[{"functionCall":{"id":"c1","name":"t","args":{}}}]},
            {"role":"user","parts":[{"text":"next"}]}
        ]);
        let out = convert("gpt-4o", &contents);
        assert_eq!(
            out,
            vec![
                json!({"role":"user","content":[{"type":"text","text":"x"}]}),
                json!({"role":"assistant","content":"a"}),
                json!({"role":"user","content":[{"type":"text","text":"next"}]})
            ]
        );
    }

    #[test]
    fn consecutive_user_contents_are_one_and_an_invalid_model_run_goes() {
        let contents = json!([
            {"role":"user","parts":[{"text":"a"}]},
            {"role":"user","parts":[{"text":"b"}]},
            {"role":"model","parts":[{"text":""}]},
            {"role":"model","parts":[{"text":"kept only with its run"}]},
            {"role":"user","parts":[{"text":"c"}]},
            {"role":"model","parts":[{"text":"(request timeout)"}]},
            {"role":"model","parts":[{"text":"ok"}]}
        ]);
        let out = convert("gpt-4o", &contents);
        assert_eq!(
            out,
            vec![
                json!({"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]}),
                json!({"role":"assistant","content":"ok"})
            ]
        );
    }

    #[test]
    fn modalities_follow_the_model_name() {
        assert_eq!(modalities(Some("qwen3-vl-plus")), IMAGE_VIDEO);
        assert_eq!(modalities(Some("qwen3-coder-plus")), TEXT);
        assert_eq!(modalities(Some("anthropic/claude-sonnet-4-5")), IMAGE_PDF);
        assert_eq!(modalities(Some("gpt-4o")), IMAGE);
        assert_eq!(modalities(Some("o3")), IMAGE);
        assert_eq!(modalities(Some("qwen3.5-omni-plus")), FULL);
        assert_eq!(modalities(Some("glm-4.5v")), IMAGE);
        assert_eq!(modalities(Some("glm-4.5")), TEXT);
        assert_eq!(modalities(None), TEXT);
    }
}
