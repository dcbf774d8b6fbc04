//! Provider-error classifier: one class, one remedy, retryable or not.
//!
//! CONTRACT used by `diagnose` — keep these signatures:
//! - [`classify`]`(text, hint) -> Classification`
//!
//! The input is untrusted and may be megabytes: it is capped (`text::cap`), unwrapped
//! into frames (`envelope`), lowercased once, and matched against data tables
//! (`signals`) with plain `contains`. No regex, no backtracking, bounded nesting.
//!
//! ## Rule order
//! Structure first, then vocabulary: the innermost error's codes, exact phrases, term
//! families, media, transient codes, status, transient wording — documented in `decide.rs`.
//! Every signal the evidence offers is listed in priority order; the first wins and the
//! others are what it beat (`classify --explain`).
//!
//! The status used is the innermost one: a gateway's 400 wrapping an upstream 503 is a 503,
//! a 200/502 wrapper around an upstream 400 is a 400. A deeper symbolic code
//! (`invalid_request_error`, `INVALID_ARGUMENT`, `overloaded_error`) overrides a wrapper's
//! status of the other kind (client vs transient) but never replaces one of the same kind.

mod agents;
mod class;
mod decide;
mod envelope;
mod extract;
mod families;
mod literal;
mod provider;
mod resets;
mod signals;
pub mod text;
mod text_only;

use serde::Serialize;

pub use class::Class;
pub use resets::Resets;

/// What the caller already knows about the failure.
#[derive(Clone, Debug, Default)]
pub struct Hint {
    /// HTTP status, when the text does not carry it (e.g. Claude Code's `apiErrorStatus`).
    pub status: Option<u16>,
    /// Provider that returned the error; wins over detection.
    pub provider: Option<String>,
}

/// The classifier's answer; field names follow DESIGN.md `classify --json`.
#[derive(Clone, Debug, Serialize)]
pub struct Classification {
    /// The one failure class.
    pub class: Class,
    /// `true` only for `rate_limit`, overloaded, `server_error`, timeout, network; `null` for unknown.
    pub retryable: Option<bool>,
    /// The provider or gateway (hinted or detected from the body shape / text).
    pub provider: Option<String>,
    /// The innermost HTTP status (explicit, or implied by a gRPC/Anthropic/AWS code).
    pub status: Option<u16>,
    /// The innermost `code` (OpenAI `code`, Gemini `status`, …).
    pub code: Option<String>,
    /// The innermost `type` (Anthropic/OpenAI `error.type`).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The provider's own message (innermost), clipped to a few KB.
    pub message: Option<String>,
    /// A limit the message names ("31 > 30" → 30), for media/size/overflow classes.
    pub limit: Option<u64>,
    /// The request block the provider blames, trimmed after its innermost index
    /// (`messages.3.content.1`, `input[6].output[0]`, `contents[0].parts[1]`).
    pub block: Option<String>,
    /// One line of advice for this class.
    pub remedy: &'static str,
    /// The tool call ids the provider names (`toolu_…`, `call_…`, `fc_…`), in order, each
    /// once; empty when it names none. Always serialized (an empty array, never null).
    pub call_ids: Vec<String>,
    /// The decision trail: the status judged by and the rule table, phrase or code that
    /// decided. Not part of the JSON contract: `classify --explain` prints it.
    #[serde(skip)]
    pub why: Vec<String>,
}

/// Longest message kept in a [`Classification`].
const MAX_MESSAGE: usize = 4096;

/// Classifies one provider error: a JSON body, an agent's recorded text, or a stream event.
pub fn classify(text: &str, hint: &Hint) -> Classification {
    judge(text, hint, &|_| false).classification
}

/// A classification with what decided it: the winning signal's id and when the limit lifts.
#[derive(Clone, Debug)]
pub struct Judgement {
    pub classification: Classification,
    /// The id of the signal that decided (`family:…`, `phrase:…`, `code:…`, `status:…`).
    pub signal: Option<String>,
    /// For quota and rate limits: the reset time or wait the text names.
    pub resets: Option<Resets>,
    /// Every signal the evidence offered (disabled ones included), in priority order, with
    /// the class it names: what leave-one-source-out counts as a rule's support.
    pub candidates: Vec<(String, Class)>,
}

/// [`classify`], with signals whose id `disabled` accepts left out (the
/// leave-one-source-out measure in `tests/it/classify.rs` disables a source's own literals).
pub fn judge(text: &str, hint: &Hint, disabled: &dyn Fn(&str) -> bool) -> Judgement {
    let capped = text::cap(text);
    let ev = envelope::unwrap(&capped);

    let mut hay = String::new();
    for t in &ev.texts {
        text::normalize(t, &mut hay);
        hay.push_str(" | ");
    }
    let mut all = hay.clone();
    for c in &ev.codes {
        all.push_str(c);
        all.push_str(" | ");
    }
    let (status, status_depth) = effective_status(&ev.frames, hint.status);
    let path = block_path(&ev);

    let mut lower = String::new();
    text::normalize(&capped, &mut lower);
    let provider = provider::detect(hint.provider.as_deref(), &ev, &lower);
    let local = provider::is_local(provider.as_deref(), &lower) || ev.shape.llamacpp;

    let hosted = provider.is_some() && !local;
    let seen = decide::Seen { ev: &ev, hay: &hay, all: &all, status, status_depth, path, local, hosted };
    let candidates = decide::signals(&seen);
    let mut live = candidates.iter().filter(|s| !disabled(&s.id));
    let winner = live.next();
    let mut class = winner.map_or(Class::Unknown, |w| w.class);

    let mut why = vec![match status {
        Some(s) => format!("status {s} ({})", status_origin(&ev, s)),
        None => "no status: judged by codes and wording alone (a stream or transport error)".into(),
    }];
    match winner {
        Some(w) => why.push(format!("decided by the {} → {}", w.what, w.class)),
        None => why.push("nothing matched".into()),
    }
    let beaten: Vec<&decide::Signal> = live.filter(|s| s.class != class).collect();
    for b in beaten.iter().take(MAX_BEATEN) {
        why.push(format!("over the {} → {}", b.what, b.class));
    }
    if beaten.len() > MAX_BEATEN {
        why.push(format!("over {} more signals", beaten.len() - MAX_BEATEN));
    }
    if !media_allowed(status, local) && class != Class::ImageLimit {
        why.push("media signals not counted: a 429, or a hosted provider's 5xx, is never a media failure".into());
    }

    let deepest = |get: fn(&envelope::Frame) -> Option<&String>| {
        ev.frames.iter().filter(|f| get(f).is_some()).max_by_key(|f| f.depth).and_then(get).cloned()
    };
    let message = deepest(|f| f.message.as_ref())
        .or_else(|| Some(capped.trim().to_string()).filter(|s| !s.is_empty()))
        .map(|m| text::clip(&m, MAX_MESSAGE));
    // A model or route that takes no images refuses every one: a limit of zero.
    let no_images = (media_allowed(status, local)
        && matches!(
            class,
            Class::MediaRejected | Class::ImageLimit | Class::InvalidRequest | Class::HistoryInvalid | Class::Unknown
        ))
    .then(|| text_only::refuses_every_image(&hay))
    .flatten();
    if let Some(p) = no_images {
        why.push(format!("the model or route takes no images (\"{p}\") → image_limit, limit 0"));
        class = Class::ImageLimit;
    }
    let limit =
        matches!(class, Class::ImageLimit | Class::MediaRejected | Class::ContextOverflow | Class::PayloadTooLarge)
            .then(|| if no_images.is_some() { Some(0) } else { extract::limit(&hay) })
            .flatten();
    let resets = matches!(class, Class::Quota | Class::RateLimit)
        .then(|| resets::find(&ev.texts.iter().map(String::as_str).collect::<Vec<_>>()))
        .flatten();
    if let Some(r) = &resets {
        let at = r.at.as_deref().map(|a| format!("resets at {a}"));
        let within = r.within.as_deref().map(|w| format!("retry in {w}"));
        why.push(format!("the text says when: {}", [at, within].into_iter().flatten().collect::<Vec<_>>().join(", ")));
        // A rate limit that lifts only after hours is a plan's limit: waiting minutes
        // does not lift it (Azure's "retry after 86400 seconds" on an S0 tier,
        // alex-wolf-ps/dbchatprov2#2).
        if class == Class::RateLimit && r.wait_secs().is_some_and(|s| s > LONG_WAIT_SECS) {
            class = Class::Quota;
            why.push("a wait of more than an hour is a plan's limit, not a rate limit → quota".into());
        }
    }

    Judgement {
        signal: winner.map(|w| w.id.clone()),
        candidates: candidates.iter().map(|c| (c.id.clone(), c.class)).collect(),
        resets,
        classification: Classification {
            class,
            retryable: class.retryable(),
            provider,
            status,
            code: deepest(|f| f.code.as_ref()),
            kind: deepest(|f| f.kind.as_ref()),
            message,
            limit,
            block: path.and_then(extract::block),
            remedy: class.remedy(),
            call_ids: extract::call_ids(&ev.texts),
            why,
        },
    }
}

/// Most beaten signals `--explain` lists.
const MAX_BEATEN: usize = 4;
/// A rate limit's named wait past which it is a plan's limit (DESIGN: what waiting
/// minutes does not lift is `quota`).
const LONG_WAIT_SECS: f64 = 3600.0;

/// Whether media signals count (mirrors `decide::signals`): a 429 never, a 5xx only when it
/// is not a hosted provider's.
fn media_allowed(status: Option<u16>, local: bool) -> bool {
    match status {
        None => true,
        Some(429) => false,
        Some(s) => s < 500 || local,
    }
}

/// The innermost explicit status, corrected by a deeper symbolic code of the other kind,
/// and the depth of the frame it came from (`None` when it is the caller's hint).
fn effective_status(frames: &[envelope::Frame], hint: Option<u16>) -> (Option<u16>, Option<usize>) {
    let explicit = frames.iter().filter(|f| f.status.is_some()).max_by_key(|f| f.depth);
    let (mut depth, mut status) = match explicit {
        Some(f) => (Some(f.depth), f.status),
        None => (None, hint),
    };
    let implied =
        frames.iter().filter(|f| f.implied.is_some() && depth.is_none_or(|d| f.depth > d)).max_by_key(|f| f.depth);
    if let Some(f) = implied {
        let imp = f.implied.unwrap_or_default();
        let transient = |s: u16| s == 429 || s >= 500;
        // A deeper client code corrects a wrapper's transient status (a 502 around an
        // upstream `invalid_request_error` is a 400); a type word never makes an explicit
        // client error transient (Ollama types its 400 "does not support tools" as
        // `api_error`, ollama/ollama#6027): a 400 is never retried because of a type.
        // The caller's hint is as explicit as a status in the text.
        let explicit_client = status.is_some_and(|s| (400..500).contains(&s) && !transient(s));
        let replace = match status {
            None => true,
            Some(s) if s < 400 => true,
            Some(_) if explicit_client && transient(imp) => false,
            Some(s) => transient(s) != transient(imp),
        };
        if replace {
            status = Some(imp);
            depth = Some(f.depth);
        }
    }
    (status, depth)
}

/// The request path the provider blames: an OpenAI `param`, else a path in a message;
/// innermost first.
fn block_path(ev: &envelope::Evidence) -> Option<&str> {
    let mut frames: Vec<&envelope::Frame> = ev.frames.iter().collect();
    frames.sort_by_key(|f| std::cmp::Reverse(f.depth));
    frames
        .iter()
        .filter_map(|f| f.param.as_deref())
        .find_map(extract::path)
        .or_else(|| ev.texts.iter().rev().find_map(|t| extract::path(t)))
}

/// Where the status came from, for `--explain`.
fn status_origin(ev: &envelope::Evidence, status: u16) -> String {
    let explicit = ev.frames.iter().filter(|f| f.status.is_some()).max_by_key(|f| f.depth);
    match explicit {
        Some(f) if f.status == Some(status) => format!("explicit, in the frame at depth {}", f.depth),
        _ => match ev.frames.iter().filter(|f| f.implied == Some(status)).max_by_key(|f| f.depth) {
            Some(f) => format!(
                "implied by the code `{}` at depth {}",
                f.code.as_deref().or(f.kind.as_deref()).unwrap_or("?"),
                f.depth
            ),
            None => "from the caller's hint".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str) -> Classification {
        classify(text, &Hint::default())
    }

    #[test]
    fn status_is_innermost() {
        let r = c(
            r#"{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}","provider_name":"Google"}}}"#,
        );
        assert_eq!(r.status, Some(503));
        assert_eq!(r.class, Class::Overloaded);
        assert_eq!(r.provider.as_deref(), Some("openrouter"));
    }

    #[test]
    fn wrapper_5xx_around_client_error() {
        let r = c(
            r#"502 {"error":{"message":"upstream error","upstream_error":{"type":"error","error":{"type":"invalid_request_error","message":"messages.2.content.0.image.source.base64: Could not process image"}}}}"#,
        );
        assert_eq!(r.status, Some(400));
        assert_eq!(r.class, Class::MediaRejected);
        assert_eq!(r.block.as_deref(), Some("messages.2.content.0"));
    }

    #[test]
    fn hint_status_is_outermost() {
        let r = classify("Could not process image", &Hint { status: Some(400), provider: Some("Anthropic".into()) });
        assert_eq!((r.class, r.status, r.provider.as_deref()), (Class::MediaRejected, Some(400), Some("anthropic")));
        let r = classify("Could not process image", &Hint { status: Some(503), provider: None });
        assert_eq!(r.class, Class::ServerError);
    }

    #[test]
    fn provider_hints_use_the_vocabulary() {
        let hint = |p: &str, text: &str| classify(text, &Hint { status: None, provider: Some(p.into()) }).provider;
        assert_eq!(hint("claude", "x").as_deref(), Some("anthropic"));
        assert_eq!(hint("Google", "x").as_deref(), Some("gemini"));
        assert_eq!(hint("azure", "x").as_deref(), Some("azure-openai"));
        assert_eq!(hint("aws", "x").as_deref(), Some("bedrock"));
        assert_eq!(hint("amazon-bedrock", "x").as_deref(), Some("bedrock"));
        assert_eq!(hint("vertex_ai", "gemini-2.5-pro failed").as_deref(), Some("vertex-gemini"));
        assert_eq!(hint("vertex_ai", "claude-opus-4 failed").as_deref(), Some("vertex-anthropic"));
        assert_eq!(hint("my-gateway", "x").as_deref(), Some("my-gateway"));
    }

    #[test]
    fn retryable_follows_the_class_alone() {
        // A 429 that no wait can fix, and a 500 that is a daily budget.
        let r = c(
            r#"Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Extra usage is required for long context requests."}}"#,
        );
        assert_eq!((r.class, r.retryable), (Class::Quota, Some(false)));
        let r = c("500 - Token limit (500,000 per day) exceeded.");
        assert_eq!((r.class, r.retryable), (Class::Quota, Some(false)));
    }

    #[test]
    fn why_names_the_status_and_the_rule() {
        let r = c(
            r#"{"error":{"message":"No tool call found for function call output with call_id call_abc123.","type":"invalid_request_error","param":"input","code":null}}"#,
        );
        assert_eq!(r.class, Class::HistoryInvalid);
        assert_eq!(r.call_ids, ["call_abc123"]);
        assert!(r.why[0].starts_with("status 400 (implied by"), "{:?}", r.why);
        assert!(r.why[1].contains("no tool call found for function call output"), "{:?}", r.why);
        assert!(r.why[1].starts_with("decided by the deterministic phrase"), "{:?}", r.why);
    }

    #[test]
    fn the_adapters_cancel_records_are_aborted() {
        for t in ["turn aborted: interrupted", "request aborted"] {
            assert_eq!(c(t).class, Class::Aborted, "{t}");
        }
    }

    /// The plain words apps and agents print for each class, with no status and no body:
    /// written from the classes' definitions while batch 48 was measured (each was
    /// `unknown` before).
    #[test]
    fn plain_app_wordings_name_their_class() {
        for (t, want) in [
            ("No API key provided", Class::Auth),
            ("Groq API key is missing. Pass it using the GROQ_API_KEY environment variable.", Class::Auth),
            ("Your session has expired. Please log in again.", Class::Auth),
            ("Token expired", Class::Auth),
            ("Access denied", Class::Auth),
            ("LobeHub API Key 不正确或为空，请检查 LobeHub API Key 后重试。", Class::Auth),
            ("Upgrade to Pro to continue", Class::Quota),
            ("request reached organization TPD rate limit, current: 1526210, limit: 1500000", Class::Quota),
            ("request reached organization max RPM: 3, please try again after 1 seconds", Class::RateLimit),
            ("The server is busy. Please try again later.", Class::Overloaded),
            ("Selected model is at capacity. Please try a different model.", Class::Overloaded),
            ("Could not connect to server", Class::Network),
            ("Request error: net::ERR_CONNECTION_TIMED_OUT", Class::Timeout),
            ("Internal error occurred at transport layer.", Class::Network),
            ("Stream error", Class::Network),
            ("Invalid response from server", Class::ServerError),
            ("Error: model requires more system memory (164.8 GiB) than is available (13.4 GiB)", Class::ServerError),
            ("Interrupted by user", Class::Aborted),
            ("task 2c076f0b aborted", Class::Aborted),
            ("Sorry, this message is too long. Please try a shorter question.", Class::ContextOverflow),
            ("Image too big", Class::MediaRejected),
            ("currently we don't support image url: files/1.png", Class::MediaRejected),
            ("Too many files attached", Class::ImageLimit),
            ("Candidate was blocked due to RECITATION", Class::ContentPolicy),
            ("sensitive words detected", Class::ContentPolicy),
            ("messages: text content blocks must contain non-whitespace text", Class::HistoryInvalid),
            ("messages: at least one message is required", Class::HistoryInvalid),
            ("Unsupported model", Class::InvalidRequest),
            ("The max_tokens parameter is invalid: must be less than 4096", Class::InvalidRequest),
            // LobeChat's error types, the whole of what its panel keeps of many failures.
            (r#"{"errorType":"ExceededContextWindow"}"#, Class::ContextOverflow),
            (r#"{"errorType":"LocationNotSupportError"}"#, Class::Auth),
            (r#"{"errorType":"InsufficientQuota"}"#, Class::Quota),
            (r#"{"errorType":"ModelNotFound"}"#, Class::InvalidRequest),
            (r#"{"errorType":"OllamaServiceUnavailable"}"#, Class::Network),
            (r#"{"error":true,"message":"empty access code"}"#, Class::Auth),
            ("Uh-oh! There was an issue connecting to Ollama.", Class::Network),
            ("Sorry, no response was returned.", Class::ServerError),
            ("Sorry, the response matched public code so it was blocked.", Class::ContentPolicy),
            ("You've reached your free trial limit", Class::Quota),
            ("Model failed to load", Class::ServerError),
            ("Your input image may contain content that is not allowed by our safety system.", Class::ContentPolicy),
            ("Context window full", Class::ContextOverflow),
            // Claude Code's own sentences (2.1.332's error formatter).
            (
                "API Error: Claude's safeguards flagged this message (https://www.anthropic.com/legal/aup). This sometimes happens with safe, normal conversations.",
                Class::ContentPolicy,
            ),
            ("The model claude-opus-4-8 is not available on your Bedrock deployment.", Class::InvalidRequest),
            // Providers' documented wordings, probed before the session's last commit.
            ("You must provide a model parameter", Class::InvalidRequest),
            ("This organization has been disabled.", Class::Auth),
            (
                "max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for claude-opus-4",
                Class::InvalidRequest,
            ),
            ("Our systems are a bit busy at the moment", Class::Overloaded),
            ("An error occurred while processing the image", Class::MediaRejected),
            ("The image you provided is too small", Class::MediaRejected),
        ] {
            assert_eq!(c(t).class, want, "{t}");
        }
        // What the new words must not reach: a case-sensitive name, open files, a tool name.
        assert_eq!(c("the model name is case-sensitive: detected gpt-4O").class, Class::Unknown);
        assert_eq!(c("Too many open files").class, Class::Unknown);
    }

    /// What batch 49 taught about structure: words in a validation body's lists and in a
    /// `param`, a status after "error (" or "Response", a link to documentation that is no
    /// document, an upstream error that is no stream error, a client giving up that is no
    /// cancel, a rate-limit class around a server's load.
    #[test]
    fn structure_read_from_batch_49() {
        assert_eq!(c("{ detail: { stop_sequence: [ 'Unknown field.' ] } }").class, Class::InvalidRequest);
        let r = c(
            r#"{"error":{"message":"Param Incorrect","param":"messages[2] assistant content must contain at least one part"}}"#,
        );
        assert_eq!(r.class, Class::HistoryInvalid);
        assert_eq!(c("API error (400), retrying in 1s... (attempt 1/10)").status, Some(400));
        assert_eq!(c("Liaobots: RateLimitError: Response 402: Rate limit reached").class, Class::Quota);
        // The gateway's 500 around the upstream's 404: the inner one is judged.
        assert_eq!(c("Route: [doubao] 500: Error: 404 status code (no body)").class, Class::InvalidRequest);
        let docs = "Invalid model 'pplx-7b-chat'. Permitted models can be found in the documentation at https://docs.perplexity.ai/";
        assert_eq!(c(docs).class, Class::InvalidRequest);
        assert_eq!(c("Account 18 received upstream error 500").class, Class::ServerError);
        assert_eq!(c("do request failed: upstream error: do request failed").class, Class::Network);
        let gave_up = "error: [handleAbortError] AI response error; aborting request: 400 json: cannot unmarshal array into Go struct field Message.messages.content of type string";
        assert_eq!(c(gave_up).class, Class::ImageLimit);
        let load = r#"Error: 429 {"error":{"type":"rate_limit_error","message":"The engine is currently overloaded, please try again later"},"type":"error"}"#;
        assert_eq!(c(load).class, Class::Overloaded);
        assert_eq!(c(r#"{"base_resp":{"status_code":2049,"status_msg":"invalid api key"}}"#).class, Class::Auth);
        assert_eq!(c("当前分组 default 下对于模型 gpt-5 无可用渠道").class, Class::InvalidRequest);
        assert_eq!(c("Error: 400 total message size 2100954 exceeds limit 2097152").class, Class::PayloadTooLarge);
    }

    /// What batch 50 (a fair sample) taught: a router's "Provider returned error" yields to
    /// the status it states; a status after a marker's second occurrence; a billing code over
    /// load words; a plan's credits "required"; 451; a pasted key the browser cannot send.
    #[test]
    fn structure_read_from_batch_50() {
        assert_eq!(c("429 Provider returned error").class, Class::RateLimit);
        assert_eq!(c("Error: Provider returned error").class, Class::ServerError);
        assert_eq!(c("[backend] error: Error: 500 true").status, Some(500));
        let billing = r#"{"error":{"message":"当前分组负载已饱和，请稍后再试","type":"billing_not_active","code":"billing_not_active"}}"#;
        assert_eq!(c(billing).class, Class::Quota);
        let credits = r#"Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Usage credits are required for long context requests."}}"#;
        assert_eq!(c(credits).class, Class::Quota);
        assert_eq!(c("JetBrains AI: URL resolution failure Error: 451 Exception during request").class, Class::Auth);
        let key = "Connection error. Cause: TypeError: Failed to execute 'fetch' on 'Window': Failed to read the 'headers' property from 'RequestInit': String contains non ISO-8859-1 code point.";
        assert_eq!(c(key).class, Class::Auth);
        assert_eq!(c("tools[0].type:type cannot be empty.").class, Class::Unknown);
    }

    /// What batch 51 (a second fair sample) taught: a link's folders are no vocabulary, a
    /// browser console line carries its status, Gemini CLI's brackets go round a whole
    /// message, an exception class decides before an app's "error processing your request".
    #[test]
    fn structure_read_from_batch_51() {
        let link = r#"Bad Request: [{"error":{"code":400,"message":"Unable to submit request because `edit` functionDeclaration `parameters.edits` schema specified other fields alongside any_of. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling"}}]"#;
        assert_eq!(c(link).class, Class::InvalidRequest);
        assert_eq!(c(link).provider.as_deref(), Some("vertex-gemini"));
        assert_eq!(c("POST https://api.openai.com/v1/chat/completions 401").class, Class::Auth);
        assert_eq!(c("[API Error: terminated]").class, Class::Network);
        let app = "The app encountered an error processing your request. Error type: <class 'openai.error.InvalidRequestError'>";
        assert_eq!(c(app).class, Class::InvalidRequest);
        assert_eq!(c("There was an error processing your request. (Request ID: 1)").class, Class::ServerError);
        let payload = r#"{"error":{"code":400,"message":"Invalid JSON payload received. Expected , or } after key:value pair. "thoughtSignatur"}}"#;
        assert_eq!(c(payload).class, Class::InvalidRequest);
        assert_eq!(c("Error: net::ERR_NETWORK_CHANGED").class, Class::Network);
    }

    /// A bare `{"error": "…"}` body names no provider: Ollama answers in it, and so do LM
    /// Studio, Chatbox's and Continue's proxies and Go gateways (13 table rows, none of
    /// them Ollama's, were called Ollama's by the shape alone).
    #[test]
    fn a_bare_error_body_names_no_provider() {
        assert_eq!(c(r#"API Error: Status Code 500, {"error":"Internal Server Error"}"#).provider, None);
        assert_eq!(c(r#"{"error":"model 'llama3' not found, try pulling it first"}"#).provider, None);
        assert_eq!(c("ollama._types.ResponseError: model 'llama2' not found").provider.as_deref(), Some("ollama"));
    }

    #[test]
    fn a_wrappers_transient_type_yields_to_the_inner_client_error() {
        // heyhuynhgiabuu/proxypal#67: a router's api_error / provider_response_error
        // around an inner 400 "Field required".
        let r = c(
            r#"API Error: 400 {"error":{"message":"Error from provider(x: 400): {\n \"error\": {\n \"code\": 400,\n \"message\": \"messages.7.content.0.text.text: Field required\",\n \"status\": \"INVALID_ARGUMENT\"\n }\n}","type":"api_error","code":"provider_response_error"}}"#,
        );
        assert_eq!((r.class, r.retryable), (Class::InvalidRequest, Some(false)), "{:?}", r.why);
        // The same wrapper with nothing inside is a server error.
        let r = c(r#"HTTP 503 {"error":{"message":"Service temporarily unavailable","type":"api_error"}}"#);
        assert_eq!(r.class, Class::ServerError);
    }

    #[test]
    fn an_explicit_client_status_beats_a_transient_type_word() {
        // ollama/ollama#6027, louisho5/picobot#6: Ollama's OpenAI-compatible 400 typed `api_error`.
        let body = r#"{"error":{"message":"stablelm2:latest does not support tools","type":"api_error","param":null,"code":null}}"#;
        let r = classify(body, &Hint { status: Some(400), provider: None });
        assert_eq!((r.status, r.retryable), (Some(400), Some(false)), "{:?}", r.why);
        let r = c(&format!("Ollama API error: 400 Bad Request - {body}"));
        assert_eq!((r.status, r.class), (Some(400), Class::InvalidRequest), "{:?}", r.why);
        // A type word with no status of the other kind around it still implies its status.
        let r = c(r#"{"error":{"message":"something broke","type":"api_error"}}"#);
        assert_eq!((r.status, r.class), (Some(500), Class::ServerError));
        // And a deeper client code still corrects a wrapper's transient status.
        let r = c(r#"HTTP 502 {"error":{"type":"invalid_request_error","message":"nope"}}"#);
        assert_eq!(r.status, Some(400));
    }

    #[test]
    fn an_agents_own_sentence_names_the_class_of_the_error_it_stands_for() {
        // anthropics/claude-code#21088: all Claude Code prints for Anthropic's tool pairing 400.
        let j = judge("API Error: 400 due to tool use concurrency issues.", &Hint::default(), &|_| false);
        let r = &j.classification;
        assert_eq!((r.class, r.retryable), (Class::HistoryInvalid, Some(false)), "{:?}", r.why);
        assert!(j.signal.as_deref().is_some_and(|s| s.starts_with("agent:claude-code:")), "{:?}", j.signal);
        assert!(r.why[1].contains("claude-code's own wording"), "{:?}", r.why);
        // The provider's own words, when the text carries them, decide first.
        let r = c(
            r#"API Error: 400 due to tool use concurrency issues. {"type":"error","error":{"type":"invalid_request_error","message":"messages.2.content.0.image.source.base64: Could not process image"}}"#,
        );
        assert_eq!(r.class, Class::MediaRejected, "{:?}", r.why);
    }

    #[test]
    fn a_local_servers_500_keeps_its_media_class_a_hosted_one_does_not() {
        let r = c(
            r#"got exception: {"code":500,"message":"image input is not supported by this server","type":"server_error"}"#,
        );
        assert_eq!((r.class, r.retryable), (Class::MediaRejected, Some(false)), "{:?}", r.why);
        let r =
            classify("image input is not supported", &Hint { status: Some(500), provider: Some("anthropic".into()) });
        assert_eq!(r.class, Class::ServerError);
    }

    #[test]
    fn a_grpc_name_in_text_counts_only_in_capitals() {
        let english = c("Error: Unknown agent error: APITimeoutError: Request timed out.");
        assert_eq!((english.status, english.provider.as_deref(), english.class), (None, None, Class::Timeout));
        let grpc = c("[API Error: Request contains an invalid argument. (Status: INVALID_ARGUMENT)]");
        assert_eq!(grpc.status, Some(400));
    }

    #[test]
    fn a_route_that_takes_no_images_is_a_limit_of_zero() {
        let r = c(
            r#"Request Failed: 400 {"error":{"message":"image media type not supported","code":"invalid_request_body"}}"#,
        );
        assert_eq!((r.class, r.limit, r.retryable), (Class::ImageLimit, Some(0), Some(false)), "{:?}", r.why);
        let r = c("HTTP 404: No endpoints found that support image input");
        assert_eq!((r.class, r.limit), (Class::ImageLimit, Some(0)), "{:?}", r.why);
        // One refused type is that image's fault; a 429 is never about media.
        assert_eq!(c("400 image media type not supported: image/heic").class, Class::MediaRejected);
        assert_eq!(c("429 No endpoints found that support image input").class, Class::RateLimit);
    }

    #[test]
    fn a_rate_limit_lifted_only_after_hours_is_a_plans_limit() {
        let day = c(
            "HTTP 429 (429) Requests have exceeded token rate limit of your current S0 pricing tier. Please retry after 86400 seconds.",
        );
        assert_eq!((day.class, day.retryable), (Class::Quota, Some(false)));
        let minute = c(
            "HTTP 429 (429) Requests have exceeded token rate limit of your current S0 pricing tier. Please retry after 60 seconds.",
        );
        assert_eq!(minute.class, Class::RateLimit);
    }

    #[test]
    fn quota_or_rate_limit_by_period_with_the_reset() {
        let j =
            judge("You've hit your session limit · resets 12:50am (America/Los_Angeles)", &Hint::default(), &|_| {
                false
            });
        assert_eq!(j.classification.class, Class::Quota);
        assert_eq!(j.resets.and_then(|r| r.at).as_deref(), Some("12:50am (America/Los_Angeles)"));
        let j = judge(
            "Error code: 429 - {'error': {'message': 'Rate limit reached on tokens per minute (TPM): Limit 6000. Please try again in 7.5s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing', 'code': 'rate_limit_exceeded'}}",
            &Hint::default(),
            &|_| false,
        );
        assert_eq!(j.classification.class, Class::RateLimit);
        assert_eq!(j.resets.and_then(|r| r.within).as_deref(), Some("7.5s"));
    }

    #[test]
    fn a_disabled_signal_falls_through_to_the_next() {
        let text = "Corrupted thought signature.";
        let j = judge(text, &Hint::default(), &|_| false);
        assert_eq!(j.signal.as_deref(), Some("family:replayed reasoning rejected"));
        let j = judge(text, &Hint::default(), &|id| id.starts_with("family:replayed"));
        assert_eq!(j.classification.class, Class::Unknown);
        assert!(j.classification.why.iter().any(|w| w == "nothing matched"), "{:?}", j.classification.why);
    }

    #[test]
    fn empty_input_is_unknown() {
        let r = c("");
        assert_eq!((r.class, r.retryable, r.message), (Class::Unknown, None, None));
    }
}
