//! Which provider (or gateway) produced an error, when the caller did not say.
//!
//! Gateways win over the provider behind them: the user configured OpenRouter or LiteLLM,
//! and that is what they pass back as `--provider`. Then body shapes, then names in the text.

use super::envelope::Evidence;

/// Names in the (lowercased) text, in priority order.
/// See: formats.md §7 and the bodies quoted in research/demand.md.
const NAMES: &[(&str, &str)] = &[
    ("openrouter", "openrouter"),
    ("litellm", "litellm"),
    ("bedrock", "bedrock"),
    ("validationexception", "bedrock"),
    ("throttlingexception", "bedrock"),
    ("accessdeniedexception", "bedrock"),
    ("when calling the converse", "bedrock"),
    ("aiplatform.googleapis.com", "vertex"),
    ("req_vrtx_", "vertex"),
    ("vertex", "vertex"),
    ("anthropic", "anthropic"),
    ("claude", "anthropic"),
    ("generativelanguage.googleapis.com", "gemini"),
    ("ai.google.dev", "gemini"),
    ("gemini", "gemini"),
    ("azure", "azure"),
    ("mistral", "mistral"),
    ("x.ai", "xai"),
    ("grok", "xai"),
    ("groq", "groq"),
    ("deepseek", "deepseek"),
    ("ollama", "ollama"),
    ("vllm", "vllm"),
    ("openai", "openai"),
    ("response.failed", "openai"),
    ("response.completed", "openai"),
    ("gpt-", "openai"),
];

/// Detects the provider from a hint, the body shapes, or names in `lower` (lowercased input).
pub fn detect(hint: Option<&str>, ev: &Evidence, lower: &str) -> Option<String> {
    if let Some(h) = hint.map(str::trim).filter(|h| !h.is_empty()) {
        return Some(h.to_ascii_lowercase());
    }
    if !ev.providers.is_empty() && lower.contains("metadata") {
        return Some("openrouter".into());
    }
    for (needle, name) in &NAMES[..2] {
        if lower.contains(needle) {
            return Some((*name).into());
        }
    }
    let s = ev.shape;
    let by_shape = if s.anthropic {
        // Vertex and Bedrock serve Anthropic bodies too.
        Some(if lower.contains("req_vrtx_") { "vertex" } else { "anthropic" })
    } else if s.gemini {
        Some(if lower.contains("aiplatform.googleapis.com") { "vertex" } else { "gemini" })
    } else if s.vllm {
        Some("vllm")
    } else if s.object_error {
        Some("mistral")
    } else {
        None
    };
    if let Some(p) = by_shape {
        return Some(p.into());
    }
    if let Some((_, name)) = NAMES[2..].iter().find(|(needle, _)| lower.contains(needle)) {
        return Some((*name).into());
    }
    if s.openai {
        return Some("openai".into());
    }
    if s.bare_error_string {
        return Some("ollama".into());
    }
    None
}
