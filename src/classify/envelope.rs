//! Unwrapping: from whatever an agent or gateway recorded down to the provider's own
//! error objects, collecting every status, code, type, message and request path on the way.
//!
//! Errors arrive wrapped, often several times: `API Error: 400 {json}` (Claude Code),
//! `unexpected status 400 Bad Request: {json}` (Codex), `Error code: 400 - {python repr}`
//! (Python SDKs), opencode's `{name, data:{statusCode, responseBody:"<json>"}}`, OpenRouter's
//! `metadata.raw` holding the upstream body as a string, gateways' `upstream_error`, JSON
//! inside `message`. The walk therefore alternates between *text layers* (look for a status
//! prefix and an embedded body) and *values* (collect fields, recurse), up to [`MAX_DEPTH`].
//! Every step is a single forward pass over a substring of the (capped) input, so the whole
//! walk is linear in the input times the nesting depth.

use serde_json::Value;

use super::literal;
use super::signals::{self, implied_status, is_grpc_status};

/// How many wrappers deep we follow (text → JSON → string → JSON …).
const MAX_DEPTH: usize = 16;
/// How many frames we keep; the rest of a giant array of errors adds nothing.
const MAX_FRAMES: usize = 512;
/// How many `{` positions we try per text layer before giving up on finding a body.
const MAX_BODY_ATTEMPTS: usize = 4;
/// Status prefixes (`API Error: 400`) are only looked for near the start of a layer.
const STATUS_WINDOW: usize = 512;

/// One error object or text layer, at its nesting depth (0 = the input itself).
#[derive(Clone, Debug, Default)]
pub struct Frame {
    pub depth: usize,
    /// An explicit HTTP status: `status`/`statusCode`/numeric `code`, or `API Error: 400`.
    pub status: Option<u16>,
    /// A status implied by a symbolic code: `INVALID_ARGUMENT`, `overloaded_error`, …
    pub implied: Option<u16>,
    pub code: Option<String>,
    pub kind: Option<String>,
    pub message: Option<String>,
    pub param: Option<String>,
}

/// Everything the unwrapping found.
#[derive(Debug, Default)]
pub struct Evidence {
    pub frames: Vec<Frame>,
    /// Every symbolic code, type, status name, reason or finish reason, lowercased.
    pub codes: Vec<String>,
    /// The nesting depth each of `codes` was found at (same order): a wrapper's code is
    /// shallower than the provider error it wraps.
    pub code_depths: Vec<usize>,
    /// Human text: messages, and text around embedded bodies (original case).
    pub texts: Vec<String>,
    /// `provider_name` / `provider` values seen in bodies.
    pub providers: Vec<String>,
    /// Shape hints for provider detection.
    pub shape: Shape,
}

/// Body shapes that name a provider family.
#[derive(Debug, Default, Clone, Copy)]
pub struct Shape {
    /// `{"type":"error","error":{"type":…}}`
    pub anthropic: bool,
    /// `{"error":{"code":400,"status":"INVALID_ARGUMENT"}}`
    pub gemini: bool,
    /// `{"error":{"message","type","param","code"}}`
    pub openai: bool,
    /// `{"object":"error", …}` (Mistral, vLLM)
    pub object_error: bool,
    /// `{"object":"error","type":"BadRequestError"}` (vLLM's Python exception names)
    pub vllm: bool,
    /// `{"code":500,"message":…,"type":"server_error"}` at the top, no `error` wrapper
    /// (llama.cpp's server, ggml-org/llama.cpp#13566)
    pub llamacpp: bool,
}

impl Evidence {
    fn push_code(&mut self, code: String, depth: usize) {
        self.codes.push(code);
        self.code_depths.push(depth);
    }

    /// Codes with their depth, for rules that rank a wrapper's code below the inner error.
    pub fn codes_at(&self) -> impl Iterator<Item = (&str, usize)> {
        self.codes.iter().map(String::as_str).zip(self.code_depths.iter().copied())
    }
}

/// Unwraps `text` (already capped by the caller).
pub fn unwrap(text: &str) -> Evidence {
    let mut ev = Evidence::default();
    text_layer(text, 0, &mut ev);
    ev
}

/// A piece of text: maybe a status prefix, maybe an embedded JSON / Python / JS body.
/// Returns whether a body was found.
fn text_layer(s: &str, depth: usize, ev: &mut Evidence) -> bool {
    if depth > MAX_DEPTH || ev.frames.len() >= MAX_FRAMES {
        return false;
    }
    let mut frame = Frame { depth, ..Frame::default() };
    status_prefix(s, &mut frame, ev);

    let body = find_body(s);
    match &body {
        Some((start, end, _)) => {
            let around = format!("{} {}", &s[..*start], &s[*end..]);
            let around = around.trim();
            if !around.is_empty() {
                exception_names(around, depth, ev);
                ev.texts.push(around.to_string());
            }
        }
        None => {
            let t = s.trim();
            if !t.is_empty() {
                exception_names(t, depth, ev);
                ev.texts.push(t.to_string());
                frame.message = Some(t.to_string());
            }
        }
    }
    ev.frames.push(frame);
    if let Some((_, _, value)) = body {
        let before = ev.texts.len();
        walk(&value, depth + 1, ev);
        // A body with no message under any key the envelopes use: a validation error by
        // field, each field's messages in a list (`{"detail": {"stop_sequence": ["Unknown
        // field."]}}`, Django REST's shape). Its listed strings are its words.
        if ev.texts.len() == before {
            let mut listed = Vec::new();
            listed_strings(&value, false, 0, &mut listed);
            for t in listed {
                ev.texts.push(t.trim().to_string());
            }
        }
        true
    } else {
        false
    }
}

/// The strings that are items of a list, anywhere in `v` (bounded in depth and count).
fn listed_strings<'a>(v: &'a Value, in_list: bool, depth: usize, out: &mut Vec<&'a str>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FRAMES {
        return;
    }
    match v {
        Value::String(s) if in_list && !s.trim().is_empty() => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| listed_strings(i, true, depth + 1, out)),
        Value::Object(map) => map.values().for_each(|i| listed_strings(i, false, depth + 1, out)),
        _ => {}
    }
}

/// Most exception names taken from one text layer.
const MAX_NAMES: usize = 16;

/// Exception class names in wrapper text (`litellm.ContentPolicyViolationError:`,
/// `openai.APIConnectionError`, `groq.BadRequestError`, `ValueError:`, `AI_RetryError`),
/// lowercased and without their module path, added to the codes: a gateway or SDK names the
/// inner failure's class even where its status is the wrapper's generic one, and the
/// code tables rank the specific names over that status.
fn exception_names(s: &str, depth: usize, ev: &mut Evidence) {
    let mut found = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let (word, after) = rest.split_at(len);
        rest = after.get(after.chars().next().map_or(0, char::len_utf8)..).unwrap_or("");
        let lower = word.to_ascii_lowercase();
        let lower = lower.strip_prefix("ai_").unwrap_or(&lower);
        // `litellm.Timeout: …` is a class name too, though it does not end in Error.
        let timeout = lower == "timeout" && after.starts_with(':');
        let named =
            timeout || ["error", "exception"].iter().any(|sfx| lower.len() > sfx.len() + 2 && lower.ends_with(sfx));
        if named && !ev.codes.iter().any(|c| c == lower) {
            ev.push_code(lower.to_string(), depth);
            found += 1;
            if found >= MAX_NAMES {
                break;
            }
        }
        // A known class behind a library's own prefix (Vercel AI Gateway's
        // `GatewayInternalServerError`, `GatewayRateLimitError`): the known class is named too.
        if named
            && let Some(known) = known_suffix(lower)
            && !ev.codes.iter().any(|c| c == known)
        {
            ev.push_code(known.to_string(), depth);
        }
    }
}

/// The longest class name of the code tables (`internalservererror`) that `name` ends with
/// after a prefix of its own, if any. Short names (`readerror`) are left out: `ThreadError`
/// is no read failure.
fn known_suffix(name: &str) -> Option<&'static str> {
    signals::DETERMINISTIC_CODES
        .iter()
        .chain(signals::TRANSIENT_CODES)
        .chain(signals::WEAK_CODES)
        .map(|(c, _)| *c)
        .filter(|c| c.len() >= 12 && (c.ends_with("error") || c.ends_with("exception")))
        .filter(|c| name.len() > c.len() && name.ends_with(c))
        .max_by_key(|c| c.len())
}

/// Finds the first embedded structured body: strict JSON first, then a Python/JS literal.
fn find_body(s: &str) -> Option<(usize, usize, Value)> {
    let trimmed_start = s.len() - s.trim_start().len();
    let mut starts: Vec<usize> = Vec::new();
    if s[trimmed_start..].starts_with('[') {
        starts.push(trimmed_start);
    }
    starts.extend(memchr::memchr_iter(b'{', s.as_bytes()).take(MAX_BODY_ATTEMPTS));
    for start in starts {
        let rest = &s[start..];
        let mut it = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        if let Some(Ok(v)) = it.next()
            && (v.is_object() || v.is_array())
        {
            return Some((start, start + it.byte_offset(), v));
        }
        if let Some((v, used)) = literal::parse_prefix(rest)
            && (v.is_object() || v.is_array())
        {
            return Some((start, start + used, v));
        }
    }
    None
}

/// `API Error: 400`, `unexpected status 400`, `Error code: 400 -`, a leading `404 …`,
/// `(Status: INVALID_ARGUMENT)`: the first such marker near the start of the layer wins.
fn status_prefix(s: &str, frame: &mut Frame, ev: &mut Evidence) {
    // See: Claude Code "API Error: 400 {…}"; Codex "unexpected status 400 Bad Request: {…}";
    // openai-python "Error code: 400 - {…}"; gemini-cli "[API Error: … (Status: INVALID_ARGUMENT)]".
    const MARKERS: &[&str] = &[
        "api error: ",
        "api error ",
        "unexpected status ",
        "error code: ",
        "status code: ",
        // Dart's Dio: "the response has a status code of 400" (daodao97/chatmcp#2).
        "status code of ",
        "status code ",
        "statuscode: ",
        "status: ",
        "status ",
        "http/1.1 ",
        "http/2 ",
        "http ",
        // "Request Failed: 400 {…}" (VS Code Copilot Chat), "Execution failed: 402 …"
        // (Copilot CLI), "failed with status 429" (Claude Code's debug log).
        "failed: ",
        "failed with status ",
        // "Grok Responses API returned 400: {…}"; "Failed to connect to Mistral API: 400 Bad
        // Request (…)" (zed-industries/zed#37021).
        "returned ",
        "api: ",
        // httpx: "Client error '400 Bad Request' for url …" (BerriAI/litellm#4348).
        "client error '",
        "server error '",
        // @google/generative-ai: "Error fetching from https://…: [400 Bad Request] …", "[400 ]"
        // (glowingjade/obsidian-smart-composer#455).
        ": [",
        // A gateway's route tag before the status: "[minimax/MiniMax-M3] [400]: {…}"
        // (decolua/9router#2509); DashScope's "<400> InternalError.Algo…".
        "] [",
        "<",
        "error: ",
        "error ",
        // "API error (400), retrying in 1s…", "RateLimitError: Response 402: Rate limit
        // reached". (Not a tag's "] 400": "Route: [doubao] 500: Error: 404 status code" is the
        // gateway's 500 around the upstream's 404.)
        "error (",
        "response ",
    ];
    let mut end = s.len().min(STATUS_WINDOW);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let original = s[..end].trim_start();
    let head = original.to_ascii_lowercase();
    let head = head.as_str();
    // A bare leading status: pi's `errorMessage` "404 Item with id…", "400 Bad Request".
    if let Some(n) = three_digits(head) {
        frame.status = Some(n);
        return;
    }
    // A browser console's line: "POST https://api.openai.com/v1/chat/completions 401".
    if let Some(n) = console_status(head) {
        frame.status = Some(n);
        return;
    }
    let mut best: Option<(usize, &str)> = None;
    // Every place a marker stands, not only its first: "[backend] error: Error: 500 true"
    // has its status after the second "error: ".
    for m in MARKERS {
        for (pos, _) in head.match_indices(m) {
            let after = &head[pos + m.len()..];
            let symbolic = after.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("");
            // A gRPC name is written in capitals ("Status: INVALID_ARGUMENT"): "Error:
            // Unknown agent error" is English.
            let capitals = original[pos + m.len()..][..symbolic.len()].bytes().all(|b| !b.is_ascii_lowercase());
            let useful = three_digits(after).is_some() || (is_grpc_status(symbolic) && capitals);
            if useful {
                if best.is_none_or(|(p, _)| pos < p) {
                    best = Some((pos, &head[pos + m.len()..]));
                }
                break;
            }
        }
    }
    // An error report whose status follows its colon, before the reason in words: "Error in
    // OpenRouter API call (Attempt 1/3): 400 Provider returned error" (campfirein/byterover-cli#43),
    // when no marker names one earlier.
    if best.is_none()
        && let Some(n) = status_after_colon(original, head)
    {
        frame.status = Some(n);
        return;
    }
    // openai-node's "503 status code (no body)": the number before the words
    // (Mintplex-Labs/anything-llm#4812), when no marker comes earlier.
    if let Some(pos) = head.find(" status code").filter(|&p| p >= 3 && best.is_none_or(|(b, _)| p - 3 < b)) {
        let before_digits = head[..pos - 3].chars().next_back();
        if let Some(n) = three_digits(&head[pos - 3..]).filter(|_| !before_digits.is_some_and(|c| c.is_ascii_digit())) {
            frame.status = Some(n);
            return;
        }
    }
    // "Error 400, Message: …, Status: INVALID_ARGUMENT" (a Go client of Gemini's,
    // charmbracelet/crush#995): the number decides the status, the capitals name Google.
    if let Some(pos) = head.find("status: ") {
        let name = &original[pos + "status: ".len()..];
        let word = name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("");
        if !word.is_empty()
            && !word.bytes().any(|b| b.is_ascii_lowercase())
            && is_grpc_status(&word.to_ascii_lowercase())
        {
            ev.shape.gemini = true;
        }
    }
    if let Some((_, after)) = best {
        if let Some(n) = three_digits(after) {
            frame.status = Some(n);
        } else {
            let word = after.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("");
            frame.implied = implied_status(word);
            frame.code = Some(word.to_ascii_uppercase());
            // gemini-cli "(Status: INVALID_ARGUMENT)": gRPC names in text are Google's.
            ev.shape.gemini = true;
            ev.push_code(word.to_string(), frame.depth);
        }
    }
}

/// A 4xx or 5xx status right after a colon in an error report (`original` and its lowercase
/// `head`, the same bytes): the text before the colon says error or failure, and the number is
/// followed by a reason starting with a capital, a body or a dash ("): 400 Provider returned
/// error", ": 502 {…}"), so a count after a colon ("Limit: 500 tokens") is not a status.
fn status_after_colon(original: &str, head: &str) -> Option<u16> {
    let mut from = 0;
    while let Some(i) = head[from..].find(": ") {
        let at = from + i;
        from = at + 2;
        let reports = ["error", "fail"].iter().any(|w| head[..at].contains(w));
        let Some(n) = three_digits(&head[from..]).filter(|n| (400..600).contains(n)) else { continue };
        let rest = &original[from + 3..];
        let reason = rest.strip_prefix(' ').and_then(|r| r.chars().next());
        if reports && reason.is_some_and(|c| c.is_ascii_uppercase() || c == '{' || c == '-') {
            return Some(n);
        }
    }
    None
}

/// The status after a method and its URL: `POST https://… 401 (Unauthorized)`.
fn console_status(head: &str) -> Option<u16> {
    let (method, rest) = head.split_once(' ')?;
    if !["get", "post", "put", "patch", "delete"].contains(&method) || !rest.starts_with("http") {
        return None;
    }
    let (_, after) = rest.split_once(' ')?;
    three_digits(after).filter(|n| (400..600).contains(n))
}

/// Exactly three ASCII digits at the start, not followed by another digit, in 100..=599.
fn three_digits(s: &str) -> Option<u16> {
    let b = s.as_bytes();
    if b.len() < 3 || !b[..3].iter().all(u8::is_ascii_digit) || b.get(3).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let n = u16::from(b[0] - b'0') * 100 + u16::from(b[1] - b'0') * 10 + u16::from(b[2] - b'0');
    (100..=599).contains(&n).then_some(n)
}

fn as_status(v: &Value) -> Option<u16> {
    match v {
        Value::Number(n) => n.as_u64().filter(|n| (100..=599).contains(n)).and_then(|n| u16::try_from(n).ok()),
        Value::String(s) => three_digits(s.trim()).filter(|_| s.trim().len() == 3),
        _ => None,
    }
}

/// Keys whose string value is human text that may itself wrap another error.
const MESSAGE_KEYS: &[&str] = &[
    "message",
    "msg",
    "detail",
    "details",
    "error",
    "error_message",
    "errorMessage",
    "error_description",
    "raw",
    "responseBody",
    "body",
    "text",
    "upstream_error",
    // MiniMax's `{"base_resp":{"status_code":2049,"status_msg":"invalid api key"}}`, and
    // Baidu's `error_msg`.
    "status_msg",
    "error_msg",
];
/// Keys that carry an explicit HTTP status.
/// MiniMax writes it as a string in `http_code` (`"http_code":"400"`).
const STATUS_KEYS: &[&str] = &[
    "status",
    "statusCode",
    "status_code",
    "httpStatus",
    "http_status",
    "apiErrorStatus",
    "http_code",
    "httpCode",
    "httpcode",
    "code",
];
/// Keys whose string value is a symbolic code worth matching.
const CODE_KEYS: &[&str] = &[
    "code",
    "type",
    "status",
    "name",
    "errorType",
    "error_type",
    "errorCode",
    "error_code",
    "reason",
    "finishReason",
    "finish_reason",
    "blockReason",
    "block_reason",
    "__type",
    // Bedrock's event-stream exception header, as litellm prints it
    // (aws-samples/foundation-model-benchmarking-tool#247), and its HTTP header.
    ":exception-type",
    "x-amzn-errortype",
    "stop_reason",
    "stopReason",
    // Gemini `QuotaFailure` / `RetryInfo` details: the quota's period ("…PerDay…",
    // "…PerMinute…") is structure, not wording. See: google-gemini/gemini-cli-action#36.
    "quotaId",
    "quota_id",
    "quotaMetric",
    "retryDelay",
];

fn walk(v: &Value, depth: usize, ev: &mut Evidence) {
    if depth > MAX_DEPTH || ev.frames.len() >= MAX_FRAMES {
        return;
    }
    match v {
        Value::Array(items) => {
            for item in items {
                walk(item, depth + 1, ev);
                if ev.frames.len() >= MAX_FRAMES {
                    break;
                }
            }
        }
        Value::Object(map) => {
            let mut frame = Frame { depth, ..Frame::default() };
            note_shape(map, ev);
            for key in STATUS_KEYS {
                if frame.status.is_none() {
                    frame.status = map.get(*key).and_then(as_status);
                }
            }
            for key in CODE_KEYS {
                let Some(Value::String(s)) = map.get(*key) else {
                    continue;
                };
                let s = s.trim();
                if s.is_empty() || s.len() > 200 || as_status(&Value::String(s.to_string())).is_some() {
                    continue;
                }
                // AWS JSON protocol: "com.amazon.coral.validate#ValidationException".
                let s = s.rsplit('#').next().unwrap_or(s);
                let lower = s.to_ascii_lowercase();
                match *key {
                    "code" | ":exception-type" | "x-amzn-errortype" if frame.code.is_none() => {
                        frame.code = Some(s.to_string());
                    }
                    "status" if frame.code.is_none() && is_grpc_status(&lower) => frame.code = Some(s.to_string()),
                    "type" if lower != "error" && frame.kind.is_none() => frame.kind = Some(s.to_string()),
                    _ => {}
                }
                if frame.implied.is_none() {
                    frame.implied = implied_status(&lower);
                }
                ev.push_code(lower, depth);
            }
            if let Some(Value::String(p)) = map.get("param") {
                // A sentence where a parameter's name goes (Xiaomi's `"message":"Param
                // Incorrect","param":"messages[2] assistant content must contain at least one
                // part"`) is the reason in words.
                if p.split_whitespace().count() > 3 {
                    ev.texts.push(p.trim().to_string());
                }
                frame.param = Some(p.clone());
                // one-api / new-api gateways put the upstream's status in `param` when the
                // code is `bad_response_status_code` (songquanpeng/one-api#1290).
                if frame.status.is_none() && frame.code.as_deref() == Some("bad_response_status_code") {
                    frame.status = as_status(&Value::String(p.clone()));
                }
            }
            for key in ["provider_name", "provider"] {
                if let Some(Value::String(p)) = map.get(key) {
                    ev.providers.push(p.clone());
                }
            }
            let mut nested = Vec::new();
            for (key, value) in map {
                match value {
                    Value::String(s) if MESSAGE_KEYS.contains(&key.as_str()) => nested.push(s.as_str()),
                    Value::Object(_) | Value::Array(_) => {}
                    _ => {}
                }
            }
            // Messages that are plain text belong to this frame; wrapped ones get their own.
            for s in nested {
                let before = ev.texts.len();
                let had_body = text_layer(s, depth + 1, ev);
                if !had_body && frame.message.is_none() && ev.texts.len() > before {
                    frame.message = Some(s.trim().to_string());
                }
            }
            ev.frames.push(frame);
            for value in map.values() {
                if value.is_object() || value.is_array() {
                    walk(value, depth + 1, ev);
                }
            }
        }
        _ => {}
    }
}

fn note_shape(map: &serde_json::Map<String, Value>, ev: &mut Evidence) {
    let s = &mut ev.shape;
    let str_of = |k: &str| map.get(k).and_then(Value::as_str);
    // Anthropic's envelope, but for the members its errors never hold: OpenAI's `param`
    // in a gateway's copy of that envelope (router-for-me/CLIProxyAPI#2368), MiniMax's
    // `http_code` and `bad_request_error` (MiniMax-AI/MiniMax-M2#76).
    let foreign = |e: &Value| {
        ["param", "http_code", "httpcode", "httpCode"].iter().any(|k| e.get(*k).is_some())
            || e.get("type").and_then(Value::as_str).is_some_and(|t| t.eq_ignore_ascii_case("bad_request_error"))
    };
    if str_of("type") == Some("error") && map.get("error").is_some_and(|e| e.get("type").is_some() && !foreign(e)) {
        s.anthropic = true;
    }
    if let Some(Value::Object(e)) = map.get("error") {
        if e.get("code").is_some_and(Value::is_number)
            && e.get("status").and_then(Value::as_str).is_some_and(|st| is_grpc_status(&st.to_ascii_lowercase()))
        {
            s.gemini = true;
        }
        if e.contains_key("param") && e.contains_key("type") {
            s.openai = true;
        }
    }
    if map.get("code").is_some_and(Value::is_number)
        && str_of("message").is_some()
        && str_of("type").is_some_and(|t| t.ends_with("_error"))
        && !map.contains_key("error")
        && !map.contains_key("object")
    {
        s.llamacpp = true;
    }
    if str_of("object") == Some("error") {
        s.object_error = true;
        if str_of("type").is_some_and(|t| t.ends_with("Error")) {
            s.vllm = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deepest_status(ev: &Evidence) -> Option<u16> {
        ev.frames.iter().filter(|f| f.status.is_some()).max_by_key(|f| f.depth).and_then(|f| f.status)
    }

    #[test]
    fn a_known_class_behind_a_prefix_is_named_too() {
        let ev = unwrap("Error [GatewayInternalServerError]: Failed to initialize model database");
        assert!(ev.codes.iter().any(|c| c == "internalservererror"));
        assert_eq!(known_suffix("threaderror"), None);
        assert_eq!(known_suffix("internalservererror"), None);
    }

    #[test]
    fn claude_code_prefix_and_body() {
        let ev = unwrap(
            r#"API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Could not process image"},"request_id":"req_1"}"#,
        );
        assert_eq!(ev.frames[0].status, Some(400));
        assert!(ev.shape.anthropic);
        assert!(ev.codes.iter().any(|c| c == "invalid_request_error"));
        assert!(ev.frames.iter().any(|f| f.message.as_deref() == Some("Could not process image")));
    }

    #[test]
    fn openrouter_metadata_raw_is_unwrapped() {
        let ev = unwrap(
            r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"code\":503,\"message\":\"The model is overloaded.\",\"status\":\"UNAVAILABLE\"}}","provider_name":"Google AI Studio"}}}"#,
        );
        assert_eq!(deepest_status(&ev), Some(503));
        assert_eq!(ev.providers, ["Google AI Studio"]);
        assert!(ev.codes.iter().any(|c| c == "unavailable"));
    }

    #[test]
    fn python_repr_with_prefix() {
        let ev = unwrap(
            r#"Error code: 400 - {'error': {'message': "This model's maximum context length is 128000 tokens.", 'type': 'invalid_request_error', 'param': 'messages', 'code': 'context_length_exceeded'}}"#,
        );
        assert_eq!(ev.frames[0].status, Some(400));
        assert!(ev.codes.iter().any(|c| c == "context_length_exceeded"));
        assert!(ev.frames.iter().any(|f| f.param.as_deref() == Some("messages")));
    }

    #[test]
    fn opencode_response_body_string() {
        let ev = unwrap(
            r#"{"name":"APIError","data":{"message":"Bad Request","statusCode":400,"isRetryable":false,"responseBody":"{\"error\":{\"message\":\"Item with id 'rs_1' not found.\",\"type\":\"invalid_request_error\",\"param\":\"input\",\"code\":null}}"}}"#,
        );
        assert_eq!(deepest_status(&ev), Some(400));
        assert!(ev.texts.iter().any(|t| t.contains("rs_1")));
        assert!(ev.shape.openai);
    }

    #[test]
    fn gemini_cli_status_name_and_array_body() {
        let ev = unwrap("[API Error: Request contains an invalid argument. (Status: INVALID_ARGUMENT)]");
        assert!(ev.frames.iter().any(|f| f.implied == Some(400)));
        let ev = unwrap(r#"[{"error":{"code":429,"message":"Resource exhausted.","status":"RESOURCE_EXHAUSTED"}}]"#);
        assert_eq!(deepest_status(&ev), Some(429));
        assert!(ev.shape.gemini);
    }

    #[test]
    fn leading_status_and_no_false_numbers() {
        let ev = unwrap("404 Item with id 'rs_abc' not found.");
        assert_eq!(ev.frames[0].status, Some(404));
        let ev = unwrap("prompt is too long: 215000 tokens > 200000 maximum");
        assert_eq!(deepest_status(&ev), None);
    }

    #[test]
    fn a_status_after_an_error_reports_colon() {
        let ev = unwrap("ERROR: Error in OpenRouter API call (Attempt 1/3): 400 Provider returned error");
        assert_eq!(deepest_status(&ev), Some(400));
        let ev = unwrap(
            "Stream completion failed: DioException [bad response]: the response has a status code of 400 and …",
        );
        assert_eq!(deepest_status(&ev), Some(400));
        // A count after a colon is no status, nor is a number in a sentence that reports nothing.
        assert_eq!(deepest_status(&unwrap("Request failed. Limit: 500 tokens per minute")), None);
        assert_eq!(deepest_status(&unwrap("Notice: 500 Requests were served")), None);
    }

    #[test]
    fn depth_and_garbage_are_bounded() {
        let deep = format!("{}{}", "{\"error\":".repeat(200), "1");
        let ev = unwrap(&deep);
        assert!(ev.frames.len() <= MAX_FRAMES);
        let ev = unwrap("{ not json at all { nor this");
        assert_eq!(ev.frames.len(), 1);
    }
}
