//! Provider-error classifier: one class, one remedy, retryable or not.
//!
//! CONTRACT used by `diagnose` — keep these signatures:
//! - [`classify`]`(text, hint) -> Classification`
//!
//! The input is untrusted and may be megabytes: it is capped (`text::cap`), unwrapped
//! into frames (`envelope`), lowercased once, and matched against data tables
//! (`signals`) with plain `contains`. No regex, no backtracking, bounded nesting.
//!
//! ## Rule order (first hit wins)
//! 1. **Deterministic structured codes** (`context_length_exceeded`, `invalid_encrypted_content`,
//!    `insufficient_quota`, `content_policy_violation`, `invalid_api_key`, `request_too_large`,
//!    `invalid_image_format`, …).
//! 2. **Deterministic phrases**: reasoning replay, context overflow (vetoed on a 429 or by
//!    rate-limit wording), whole-request size (incl. the 429 "Request too large … tokens per
//!    min"), content policy, quota (vetoed by per-minute wording), auth.
//! 3. **Media** — image-limit phrases, media phrases, then a request path into an image /
//!    document part — *only for client errors*: a 4xx other than 429, or no status (a stream
//!    error). A 429 or 5xx is never media, whatever its text says.
//! 4. **Transient structured codes** (`overloaded_error`, `rate_limit_exceeded`,
//!    `RESOURCE_EXHAUSTED`, `DEADLINE_EXCEEDED`, …).
//! 5. **HTTP status** when it is a definite client error (4xx but 408/429/499).
//! 6. **Transient phrases**: timeout (before abort: "aborted due to timeout" is a timeout),
//!    abort, network, overloaded, rate limit, server error.
//! 7. **HTTP status** fallback: 400→invalid_request, 401/403→auth, 402→quota, 408→timeout,
//!    413→payload_too_large, 429→rate_limit, 499→aborted, 500/502/503→server_error,
//!    504→timeout, 529→overloaded.
//! 8. Weak phrases ("Bad Request") → invalid_request; otherwise `unknown`.
//!
//! The status used is the innermost one: a gateway's 400 wrapping an upstream 503 is a 503,
//! a 200/502 wrapper around an upstream 400 is a 400. A deeper symbolic code
//! (`invalid_request_error`, `INVALID_ARGUMENT`, `overloaded_error`) overrides a wrapper's
//! status of the other kind (client vs transient) but never replaces one of the same kind.

mod class;
mod envelope;
mod extract;
mod literal;
mod provider;
mod signals;
mod text;

use serde::Serialize;

pub use class::Class;
use signals::Rule;

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
    /// `true` only for rate_limit, overloaded, server_error, timeout, network; `null` for unknown.
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
    let capped = text::cap(text);
    let ev = envelope::unwrap(&capped);

    let mut hay = String::new();
    for t in &ev.texts {
        text::normalize(t, &mut hay);
        hay.push_str(" | ");
    }
    let status = effective_status(&ev.frames, hint.status);
    let path = block_path(&ev);
    let mut why = Vec::new();
    let class = decide(&ev, &hay, status, path, &mut why);

    let mut lower = String::new();
    text::normalize(&capped, &mut lower);
    let provider = provider::detect(hint.provider.as_deref(), &ev, &lower);

    let deepest = |get: fn(&envelope::Frame) -> Option<&String>| {
        ev.frames.iter().filter(|f| get(f).is_some()).max_by_key(|f| f.depth).and_then(get).cloned()
    };
    let message = deepest(|f| f.message.as_ref())
        .or_else(|| Some(capped.trim().to_string()).filter(|s| !s.is_empty()))
        .map(|m| text::clip(&m, MAX_MESSAGE));
    let limit =
        matches!(class, Class::ImageLimit | Class::MediaRejected | Class::ContextOverflow | Class::PayloadTooLarge)
            .then(|| extract::limit(&hay))
            .flatten();

    Classification {
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
    }
}

/// The innermost explicit status, corrected by a deeper symbolic code of the other kind.
fn effective_status(frames: &[envelope::Frame], hint: Option<u16>) -> Option<u16> {
    let explicit = frames.iter().filter(|f| f.status.is_some()).max_by_key(|f| f.depth);
    let (depth, mut status) = match explicit {
        Some(f) => (Some(f.depth), f.status),
        None => (None, hint),
    };
    let implied = frames
        .iter()
        .filter(|f| f.implied.is_some() && depth.is_none_or(|d| f.depth > d))
        .max_by_key(|f| f.depth)
        .and_then(|f| f.implied);
    if let Some(imp) = implied {
        let transient = |s: u16| s == 429 || s >= 500;
        status = match status {
            None => Some(imp),
            Some(s) if s < 400 => Some(imp),
            Some(s) if transient(s) != transient(imp) => Some(imp),
            keep => keep,
        };
    }
    status
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

/// Whether media signals may count: a client error, or no status at all (stream error).
/// A 429 or a 5xx is never a media failure.
fn media_allowed(status: Option<u16>) -> bool {
    match status {
        None => true,
        Some(429) => false,
        Some(s) => s < 500,
    }
}

/// The rule order documented at the top of this module. Every step that decides, and the
/// status it judged by, is written to `why` (shown by `classify --explain`).
fn decide(ev: &envelope::Evidence, hay: &str, status: Option<u16>, path: Option<&str>, why: &mut Vec<String>) -> Class {
    let codes = &ev.codes;
    why.push(match status {
        Some(s) => format!("status {s} ({})", status_origin(ev, s)),
        None => "no status: judged by codes and wording alone (a stream or transport error)".into(),
    });
    let media_ok = media_allowed(status);
    let allowed = |c: Class| match c {
        Class::MediaRejected | Class::ImageLimit => media_ok,
        Class::ContextOverflow => status != Some(429),
        _ => true,
    };
    let by_code = |table: &'static [(&'static str, Class)]| {
        table.iter().filter(|(c, class)| allowed(*class) && codes.iter().any(|x| x == c)).copied().next()
    };
    let by_phrase = |table: &'static [Rule]| table.iter().filter(|r| allowed(r.class)).find(|r| r.matches(hay));
    let phrase_why = |name: &str, r: &Rule| format!("{name} phrase {}", r.describe());
    let code_why = |name: &str, code: &str| format!("{name} code `{code}`");

    let phrase = by_phrase(signals::DETERMINISTIC_PHRASES);
    if let Some((code, c)) = by_code(signals::DETERMINISTIC_CODES) {
        // Anthropic's 413 `request_too_large` "Request size exceeds model context window"
        // is a token problem: the wording is more specific than the code.
        if let Some(r) = phrase.filter(|r| c == Class::PayloadTooLarge && r.class == Class::ContextOverflow) {
            why.push(phrase_why("deterministic", r));
            why.push(format!("(over the code `{code}`: the wording is more specific)"));
            return r.class;
        }
        why.push(code_why("deterministic", code));
        return c;
    }
    if let Some(r) = phrase {
        why.push(phrase_why("deterministic", r));
        return r.class;
    }
    if media_ok {
        for (name, table) in [("image-limit", signals::IMAGE_LIMIT_PHRASES), ("media", signals::MEDIA_PHRASES)] {
            if let Some(r) = by_phrase(table) {
                why.push(phrase_why(name, r));
                return r.class;
            }
        }
        if let Some(p) = path.filter(|p| extract::path_is_media(p) && status.is_some_and(|s| (400..500).contains(&s))) {
            why.push(format!("client error naming the media path `{p}`"));
            return Class::MediaRejected;
        }
    } else {
        why.push("media and image-limit signals ignored: a 429 or 5xx is never a media failure".into());
    }
    if let Some((code, c)) = by_code(signals::TRANSIENT_CODES) {
        why.push(code_why("transient", code));
        return c;
    }
    let definite_client = status.is_some_and(|s| (400..500).contains(&s) && !matches!(s, 408 | 429 | 499));
    if definite_client {
        why.push("a definite client error: judged by its status".into());
        return by_status(status);
    }
    let whole = hay.trim_end_matches([' ', '|']).trim_end_matches(['.', '!']);
    if let Some((text, c)) = signals::WHOLE_MESSAGES.iter().find(|(t, _)| *t == whole) {
        why.push(format!("the whole message is \"{text}\""));
        return *c;
    }
    if let Some(r) = by_phrase(signals::TRANSIENT_PHRASES) {
        why.push(phrase_why("transient", r));
        return r.class;
    }
    match by_status(status) {
        Class::Unknown => {
            if let Some((code, c)) = by_code(signals::WEAK_CODES) {
                why.push(code_why("weak", code));
                return c;
            }
            match by_phrase(signals::WEAK_PHRASES) {
                Some(r) => {
                    why.push(phrase_why("weak", r));
                    r.class
                }
                None => {
                    why.push("nothing matched".into());
                    Class::Unknown
                }
            }
        }
        c => {
            why.push("judged by its status".into());
            c
        }
    }
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

/// The last-resort mapping from an HTTP status.
fn by_status(status: Option<u16>) -> Class {
    match status {
        Some(401 | 403) => Class::Auth,
        Some(402) => Class::Quota,
        Some(408) => Class::Timeout,
        Some(413) => Class::PayloadTooLarge,
        Some(429) => Class::RateLimit,
        Some(499) => Class::Aborted,
        Some(504) => Class::Timeout,
        Some(529) => Class::Overloaded,
        Some(400..=499) => Class::InvalidRequest,
        Some(500..=599) => Class::ServerError,
        _ => Class::Unknown,
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
    }

    #[test]
    fn the_adapters_cancel_records_are_aborted() {
        for t in ["turn aborted: interrupted", "request aborted"] {
            assert_eq!(c(t).class, Class::Aborted, "{t}");
        }
    }

    #[test]
    fn empty_input_is_unknown() {
        let r = c("");
        assert_eq!((r.class, r.retryable, r.message), (Class::Unknown, None, None));
    }
}
