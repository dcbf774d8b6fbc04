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
        Rules { provider: "generic".into(), max_images_per_request: None }
    }

    /// Built-in rules for a provider name (`anthropic`, `openai`, …).
    pub fn builtin(provider: &str) -> Option<Rules> {
        let _ = provider;
        None
    }

    /// The provider that serves a model id.
    pub fn provider_for_model(model: &str) -> Option<&'static str> {
        let _ = model;
        None
    }
}

/// Problems of a whole history sent as one request (image counts, PDF pages…).
pub fn history_problems(attachments: &[crate::model::Attachment], rules: &Rules) -> Vec<super::Problem> {
    let _ = (attachments, rules);
    Vec::new()
}
