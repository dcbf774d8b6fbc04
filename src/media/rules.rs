//! Provider media rules as data: byte and pixel limits, counts per request.

/// The limits one provider applies to media in a request.
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    pub provider: String,
    /// Most images one request may carry.
    pub max_images_per_request: Option<u32>,
}

impl Rules {
    /// Rules when no provider is known: only checks every provider agrees on.
    pub fn generic() -> Rules {
        Rules {
            provider: "generic".into(),
            max_images_per_request: None,
        }
    }

    /// Built-in rules for a provider name (`anthropic`, `openai`, …).
    pub fn builtin(provider: &str) -> Option<Rules> {
        let _ = provider;
        None
    }
}
