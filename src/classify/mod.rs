//! Provider-error classifier: one class, one remedy, retryable or not.
//!
//! CONTRACT used by `diagnose` — keep these signatures:
//! - [`classify`]`(text, hint) -> Classification`

use serde::Serialize;

/// What the caller already knows about the failure.
#[derive(Clone, Debug, Default)]
pub struct Hint {
    pub status: Option<u16>,
    pub provider: Option<String>,
}

/// The failure classes of DESIGN.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    MediaRejected,
    ImageLimit,
    ReasoningRejected,
    ContextOverflow,
    PayloadTooLarge,
    ContentPolicy,
    InvalidRequest,
    Auth,
    Quota,
    RateLimit,
    Overloaded,
    ServerError,
    Timeout,
    Network,
    Aborted,
    Unknown,
}

/// The classifier's answer; field names follow DESIGN.md `classify --json`.
#[derive(Clone, Debug, Serialize)]
pub struct Classification {
    pub class: Class,
    pub retryable: Option<bool>,
    pub provider: Option<String>,
    pub status: Option<u16>,
    pub code: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub message: Option<String>,
    pub limit: Option<u64>,
    pub block: Option<String>,
}

/// Classifies one provider error: a JSON body, an agent's recorded text, or a stream event.
pub fn classify(text: &str, hint: &Hint) -> Classification {
    Classification {
        class: Class::Unknown,
        retryable: None,
        provider: hint.provider.clone(),
        status: hint.status,
        code: None,
        kind: None,
        message: Some(text.to_string()),
        limit: None,
        block: None,
    }
}
