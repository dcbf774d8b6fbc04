//! The failure classes of DESIGN.md, each with exactly one remedy and one retry verdict.
//!
//! Kept apart from the rules so that `diagnose`, `check` and the CLI can print a class
//! without knowing how it was reached.

use serde::Serialize;

/// The failure classes of DESIGN.md ("Failure classes"); serialized in `snake_case`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// One attachment is unacceptable: corrupt, truncated, unsupported, over a per-image limit.
    MediaRejected,
    /// Too many images / media / PDF pages in one request.
    ImageLimit,
    /// Replayed reasoning refused (OpenAI `rs_…`, encrypted content, thinking signatures).
    ReasoningRejected,
    /// Too many tokens for the model's window.
    ContextOverflow,
    /// The request is too large in bytes, or larger than a per-minute budget can ever admit.
    PayloadTooLarge,
    /// Safety / moderation refusal.
    ContentPolicy,
    /// The history breaks the provider's structural rules: a tool call without its result,
    /// a result without its call, roles out of order, an empty message, a lone surrogate
    /// escape its JSON parser refuses.
    HistoryInvalid,
    /// Any other deterministic client error.
    InvalidRequest,
    /// Bad, expired or unauthorized credentials.
    Auth,
    /// Billing, insufficient quota, plan limit.
    Quota,
    /// Too many requests: wait and retry.
    RateLimit,
    /// The provider is overloaded: wait and retry.
    Overloaded,
    /// Any other server-side failure: retry.
    ServerError,
    /// The request or a proxy timed out: retry.
    Timeout,
    /// Connection reset, DNS failure, stream cut off: retry.
    Network,
    /// The user cancelled.
    Aborted,
    /// Nothing matched.
    Unknown,
}

impl Class {
    /// Every class, in the order of DESIGN.md's table.
    pub const ALL: [Class; 17] = [
        Class::MediaRejected,
        Class::ImageLimit,
        Class::ReasoningRejected,
        Class::ContextOverflow,
        Class::PayloadTooLarge,
        Class::ContentPolicy,
        Class::HistoryInvalid,
        Class::InvalidRequest,
        Class::Auth,
        Class::Quota,
        Class::RateLimit,
        Class::Overloaded,
        Class::ServerError,
        Class::Timeout,
        Class::Network,
        Class::Aborted,
        Class::Unknown,
    ];

    /// The stable `snake_case` name, as in `classify --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::MediaRejected => "media_rejected",
            Class::ImageLimit => "image_limit",
            Class::ReasoningRejected => "reasoning_rejected",
            Class::ContextOverflow => "context_overflow",
            Class::PayloadTooLarge => "payload_too_large",
            Class::ContentPolicy => "content_policy",
            Class::HistoryInvalid => "history_invalid",
            Class::InvalidRequest => "invalid_request",
            Class::Auth => "auth",
            Class::Quota => "quota",
            Class::RateLimit => "rate_limit",
            Class::Overloaded => "overloaded",
            Class::ServerError => "server_error",
            Class::Timeout => "timeout",
            Class::Network => "network",
            Class::Aborted => "aborted",
            Class::Unknown => "unknown",
        }
    }

    /// Parses the `snake_case` name back (used by tests and test tables).
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// One line of advice, per DESIGN.md's table.
    pub fn remedy(self) -> &'static str {
        match self {
            Class::MediaRejected => {
                "exclude the attachment(s) the provider rejects (session-doctor exclude FILE --suspects), or downscale an oversized image"
            }
            Class::ImageLimit => {
                "keep fewer images per request: session-doctor preview FILE --max-images N (then repair FILE --max-images N), N below the provider's limit"
            }
            Class::ReasoningRejected => {
                "strip replayed reasoning: session-doctor repair FILE --drop-reasoning-ids when an item (rs_, msg_ or fc_) is \"not found\", repair FILE --strip-reasoning otherwise"
            }
            Class::ContextOverflow => "compact, or continue from a repaired copy with less in it",
            Class::PayloadTooLarge => "drop or shrink attachments so the request fits",
            Class::ContentPolicy => "change the content the provider refuses",
            Class::HistoryInvalid => {
                "repair the history: session-doctor repair FILE gives every interrupted tool call a result, drops orphan results and replaces each lone surrogate (broken Unicode) with U+FFFD"
            }
            Class::InvalidRequest => "read the provider's reason below and fix the request",
            Class::Auth => "fix the credentials (API key, token, permissions)",
            Class::Quota => "check billing, credits or the plan's usage limit",
            Class::RateLimit => "wait and retry",
            Class::Overloaded => "wait and retry: the provider is overloaded",
            Class::ServerError => "retry: the provider failed",
            Class::Timeout => "retry: the request timed out",
            Class::Network => "retry: the connection failed",
            Class::Aborted => "nothing to fix: the request was cancelled",
            Class::Unknown => "not recognised: read the raw error below",
        }
    }

    /// Whether sending the same request again can succeed: only transient classes are;
    /// `None` for `unknown`, where nobody can tell.
    pub fn retryable(self) -> Option<bool> {
        match self {
            Class::RateLimit | Class::Overloaded | Class::ServerError | Class::Timeout | Class::Network => Some(true),
            Class::Unknown => None,
            _ => Some(false),
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Class;

    #[test]
    fn names_round_trip_and_match_serde() {
        for c in Class::ALL {
            assert_eq!(Class::from_name(c.as_str()), Some(c));
            let json = serde_json::to_string(&c).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
    }

    #[test]
    fn only_transient_classes_retry() {
        let retry: Vec<_> = Class::ALL.into_iter().filter(|c| c.retryable() == Some(true)).collect();
        assert_eq!(retry, [Class::RateLimit, Class::Overloaded, Class::ServerError, Class::Timeout, Class::Network]);
        assert_eq!(Class::Unknown.retryable(), None);
    }
}
