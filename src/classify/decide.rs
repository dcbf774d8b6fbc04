//! The rule order: every signal the evidence offers, in priority order; the first one not
//! disabled wins, and the rest are what it beat (`classify --explain` prints both).
//!
//! Structure first, then vocabulary:
//! 1. **Deterministic structured codes** — of the innermost error; a wrapper's code counts
//!    only where the inner error has none of the kind.
//! 2. **Deterministic phrases** (`signals`), then **deterministic families** (`families`):
//!    reasoning replay, history structure, context overflow, content policy, plan/billing;
//!    then a client error whose request path points into a replayed message's reasoning.
//! 3. **Media** phrases, families and a request path into a media part — for a client
//!    error, a status-less stream error, or a 5xx that is not a hosted provider's (local
//!    servers answer deterministic refusals with 500). A 429 is never media.
//!    Then a known agent's own sentence for a provider error it did not print (`agents`),
//!    by the class of the error it stands for.
//! 4. **Transient structured codes** — but not a wrapper's (`api_error`,
//!    `InternalServerError`, `APIConnectionError`) around an inner client error; a timeout
//!    the words state goes before a transport class's network (`ConnectError`).
//! 5. **HTTP status** when it is a definite client error (4xx but 408/429/499).
//! 6. Whole-message words, then **transient families and phrases**: timeout, abort,
//!    overload and rate limit before the network words a wrapper adds ("stream
//!    disconnected before completion: Rate limit reached …" is a rate limit).
//! 7. **HTTP status** fallback; then weak codes and weak phrases; otherwise `unknown`.

use super::agents;
use super::class::Class;
use super::envelope::Evidence;
use super::extract;
use super::families::{self, Family};
use super::signals::{self, Rule};

/// One piece of evidence that names a class.
#[derive(Clone, Debug)]
pub struct Signal {
    /// Stable id (`phrase:"could not process image"`, `family:…`, `code:…`, `status:400`):
    /// what leave-one-source-out disables.
    pub id: String,
    /// The rule table it came from, and what matched, for people.
    pub what: String,
    pub class: Class,
}

/// What the rules saw: the normalized messages, the codes joined the same way, the status.
pub struct Seen<'a> {
    pub ev: &'a Evidence,
    /// Normalized human text.
    pub hay: &'a str,
    /// `hay` followed by every structured code: families may match either.
    pub all: &'a str,
    pub status: Option<u16>,
    /// Depth of the frame the status came from (`None` for a hint).
    pub status_depth: Option<usize>,
    pub path: Option<&'a str>,
    /// Whether a 5xx may still be a media failure: not a hosted provider's, or a local
    /// server's own words.
    pub local: bool,
    /// A hosted provider is named (not a local server): its 5xx is never about the request.
    pub hosted: bool,
}

/// Every signal, in priority order.
pub fn signals(s: &Seen) -> Vec<Signal> {
    let mut out = Vec::new();
    let status = s.status;
    let media_ok = match status {
        None => true,
        Some(429) => false,
        Some(st) if st >= 500 => s.local,
        Some(_) => true,
    };
    // A count over a maximum the text states ("500 too many images in the message, max
    // allowed is 16", QuantumNous/new-api#1233) is the request's, whatever 5xx a gateway
    // that no hosted provider is named behind wraps it in.
    let states_max = ["max allowed", "maximum allowed", "maximum of", "at most"].iter().any(|w| s.all.contains(w));
    let count_ok = media_ok || (status.is_some_and(|st| st >= 500) && !s.hosted && states_max);
    let allowed = |c: Class| match c {
        Class::ImageLimit => count_ok,
        Class::MediaRejected => media_ok,
        Class::ContextOverflow => status != Some(429),
        _ => true,
    };
    let client = status.is_some_and(|st| (400..500).contains(&st) && !matches!(st, 408 | 429 | 499));
    // A wrapper's code: shallower than (or level with) an inner client error's status.
    let wrapper = |depth: usize| client && s.status_depth.is_some_and(|d| depth <= d);
    let codes = |table: &'static [(&'static str, Class)], stage: &str, skip_wrappers: bool, out: &mut Vec<Signal>| {
        for (code, class) in table {
            if !allowed(*class) {
                continue;
            }
            let found = s.ev.codes_at().any(|(c, d)| c == *code && !(skip_wrappers && wrapper(d)));
            if found {
                out.push(Signal { id: format!("code:{code}"), what: format!("{stage} code `{code}`"), class: *class });
            }
        }
    };
    let phrases = |table: &'static [Rule], stage: &str, out: &mut Vec<Signal>| {
        for r in table.iter().filter(|r| allowed(r.class) && r.matches_with(s.hay, s.all)) {
            out.push(Signal {
                id: format!("phrase:{}", r.all.join("+")),
                what: format!("{stage} phrase {}", r.describe()),
                class: r.class,
            });
        }
    };
    let fams = |table: &'static [Family], stage: &str, out: &mut Vec<Signal>| {
        for f in table.iter().filter(|f| allowed(f.class)) {
            if let Some(found) = f.matches(s.all) {
                out.push(Signal {
                    id: format!("family:{}", f.name),
                    what: format!("{stage} family {}", f.describe(&found)),
                    class: f.class,
                });
            }
        }
    };

    if s.ev.codes.iter().any(|c| c == "request_too_large") {
        out.extend(overflow_under_size_code(s, &allowed));
    }
    codes(signals::DETERMINISTIC_CODES, "deterministic", false, &mut out);
    out.extend(bare_code(s.hay, &allowed));
    phrases(signals::DETERMINISTIC_PHRASES, "deterministic", &mut out);
    fams(families::DETERMINISTIC, "deterministic", &mut out);
    // A client error that blames a replayed message's reasoning by its path (a router's
    // "Invalid input: expected string, received undefined" at
    // `messages.2.reasoning_details.0.data`, cline/cline#8295): whatever the words, it is the
    // replay the provider refuses.
    if let Some(p) = s.path.filter(|p| extract::path_is_reasoning(p) && client) {
        out.push(Signal {
            id: "path:reasoning".into(),
            what: format!("client error naming the replayed reasoning path `{p}`"),
            class: Class::ReasoningRejected,
        });
    }
    if count_ok {
        phrases(signals::IMAGE_LIMIT_PHRASES, "image-limit", &mut out);
    }
    if media_ok {
        phrases(signals::MEDIA_PHRASES, "media", &mut out);
        fams(families::MEDIA_FAMILIES, "media", &mut out);
        if let Some(p) = s.path.filter(|p| extract::path_is_media(p) && client) {
            out.push(Signal {
                id: "path:media".into(),
                what: format!("client error naming the media path `{p}`"),
                class: Class::MediaRejected,
            });
        }
    }
    // After every provider's own words (deterministic and media): an agent's sentence is
    // what is left when the provider's body was not printed.
    out.extend(agent_wordings(s.hay, &allowed));
    let transient_codes = out.len();
    codes(signals::TRANSIENT_CODES, "transient", true, &mut out);
    // The transient phrases are matched once: those that say why a transient code failed go
    // before it, the rest in their places below.
    let (mut timeouts, mut transients) = (Vec::new(), Vec::new());
    phrases(signals::TIMEOUT_PHRASES, "transient", &mut timeouts);
    phrases(signals::TRANSIENT_PHRASES, "transient", &mut transients);
    let why = causes_before_classes(&out[transient_codes..], timeouts.iter().chain(&transients), s.hay);
    out.splice(transient_codes..transient_codes, why);
    if client {
        out.push(Signal {
            id: format!("status:{}", status.unwrap_or_default()),
            what: "status (a definite client error)".into(),
            class: by_status(status),
        });
    }
    let whole = s.hay.trim_end_matches([' ', '|']);
    // Gemini CLI's wrapper around the whole message: "[API Error: terminated]".
    let whole = whole.strip_prefix("[api error: ").and_then(|w| w.strip_suffix(']')).unwrap_or(whole);
    let whole = whole.trim_end_matches(['.', '!']);
    if let Some((text, c)) = signals::WHOLE_MESSAGES.iter().find(|(t, _)| *t == whole) {
        out.push(Signal { id: format!("whole:{text}"), what: format!("the whole message is \"{text}\""), class: *c });
    }
    let listed: Vec<String> = out.iter().map(|s| s.id.clone()).collect();
    out.extend(timeouts.into_iter().filter(|t| !listed.contains(&t.id)));
    fams(families::TRANSIENT, "transient", &mut out);
    out.extend(transients.into_iter().filter(|t| !listed.contains(&t.id)));
    fams(families::LATE, "transient", &mut out);
    if !client && !matches!(by_status(status), Class::Unknown) {
        out.push(Signal {
            id: format!("status:{}", status.unwrap_or_default()),
            what: "status".into(),
            class: by_status(status),
        });
    }
    codes(signals::WEAK_CODES, "weak", false, &mut out);
    phrases(signals::WEAK_PHRASES, "weak", &mut out);
    out
}

/// The words that say *why*, to go before a transient class or code that says *how*
/// (`codes`), from the transient phrases that matched (`said`):
/// - a transport class (`ConnectError`, `APIConnectionError`) and a timeout in its words:
///   connect-es's "`ConnectError: [deadline_exceeded] … context deadline exceeded`"
///   (Exafunction/codeium#173) is a timeout;
/// - a rate-limit class or code (`rate_limit_error`, litellm's `RateLimitError`, new-api's
///   `rate_limit_exceeded`) and a server stating its load: "The engine is currently
///   overloaded" under a 429 `rate_limit_error`, Cerebras' "experiencing high traffic" inside
///   a `RateLimitError` — unless the words blame the caller's own usage (Azure's "high demand
///   … Your request exceeds the maximum usage size allowed during peak load").
///
/// What goes first is not listed again later.
fn causes_before_classes<'a>(codes: &[Signal], said: impl Iterator<Item = &'a Signal>, hay: &str) -> Vec<Signal> {
    let has = |c: Class| codes.iter().any(|s| s.class == c);
    let own_usage = ["exceed", "usage", "quota", "per minute", "tokens per", "requests per"];
    let throttled = has(Class::RateLimit) && !own_usage.iter().any(|w| hay.contains(w));
    said.filter(|t| (t.class == Class::Timeout && has(Class::Network)) || (t.class == Class::Overloaded && throttled))
        .cloned()
        .collect()
}

/// Anthropic's 413 `request_too_large` "Request size exceeds model context window" is a
/// token problem: overflow wording is more specific than the size code.
fn overflow_under_size_code(s: &Seen, allowed: &dyn Fn(Class) -> bool) -> Vec<Signal> {
    let mut out = Vec::new();
    let overflow = signals::DETERMINISTIC_PHRASES.iter().filter(|r| r.class == Class::ContextOverflow);
    for r in overflow.filter(|r| allowed(r.class) && r.matches(s.hay)) {
        out.push(Signal {
            id: format!("phrase:{}", r.all.join("+")),
            what: format!("deterministic phrase {} (more specific than the size code)", r.describe()),
            class: r.class,
        });
    }
    for f in families::DETERMINISTIC.iter().filter(|f| f.class == Class::ContextOverflow) {
        if let Some(found) = f.matches(s.all) {
            out.push(Signal {
                id: format!("family:{}", f.name),
                what: format!("deterministic family {} (more specific than the size code)", f.describe(&found)),
                class: f.class,
            });
        }
    }
    out
}

/// A text that is nothing but a code (an agent printing a bare
/// `invalid_encrypted_content`) names that code, as a structured one would;
/// a kind the agent tags on after it (mux's `errorType`, read as ` [api]`)
/// is not part of the text.
fn bare_code(hay: &str, allowed: &dyn Fn(Class) -> bool) -> Option<Signal> {
    let hay = hay.trim_end_matches([' ', '|']).trim();
    let tag = |t: &str| t.strip_suffix(']').is_some_and(|k| k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    let hay = match hay.rsplit_once(" [") {
        Some((head, t)) if tag(t) => head,
        _ => hay,
    };
    let bare = hay.trim().trim_matches(['"', '\'', '`', '.']);
    if !bare.contains('_') || !bare.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let (code, class) = signals::DETERMINISTIC_CODES.iter().find(|(c, class)| *c == bare && allowed(*class))?;
    Some(Signal { id: format!("code:{code}"), what: format!("the whole text is the code `{code}`"), class: *class })
}

/// A known agent's own sentence, named by the class of the provider error it stands for.
fn agent_wordings(hay: &str, allowed: &dyn Fn(Class) -> bool) -> Vec<Signal> {
    agents::WORDINGS
        .iter()
        .filter(|w| allowed(w.class) && w.matches(hay))
        .map(|w| Signal {
            id: format!("agent:{}:{}", w.agent, w.all.join("+")),
            what: format!("{}'s own wording {:?}, which stands for {}", w.agent, w.all.join(" + "), w.wraps),
            class: w.class,
        })
        .collect()
}

/// The last-resort mapping from an HTTP status.
pub fn by_status(status: Option<u16>) -> Class {
    match status {
        Some(401 | 403) => Class::Auth,
        Some(402) => Class::Quota,
        Some(408) => Class::Timeout,
        Some(413) => Class::PayloadTooLarge,
        // Unavailable for legal reasons: the provider refuses the user's region.
        Some(451) => Class::Auth,
        Some(429) => Class::RateLimit,
        Some(499) => Class::Aborted,
        Some(504) => Class::Timeout,
        Some(529) => Class::Overloaded,
        Some(400..=499) => Class::InvalidRequest,
        Some(500..=599) => Class::ServerError,
        _ => Class::Unknown,
    }
}
