//! Conventions of the Vercel AI SDK that mux and opencode both persist.

use crate::json::Value;
use crate::model::ReasoningKind;

use super::LineOut;

/// `"anthropic:claude-sonnet-4-5"` or `"openrouter/anthropic/claude…"` → (provider, model).
pub fn split_model(m: &str) -> (Option<String>, String) {
    match m.split_once(':').or_else(|| m.split_once('/')) {
        Some((p, rest)) if !p.is_empty() && !rest.is_empty() => (Some(p.to_string()), rest.to_string()),
        _ => (None, m.to_string()),
    }
}

/// Provider metadata on a part: `{"openai":{"itemId":"rs_…","reasoningEncryptedContent":…}}`,
/// `{"anthropic":{"signature":…}}`, `{"google":{"thoughtSignature":…}}`.
pub fn provider_reasoning(meta: &Value<'_>, at: &str, out: &mut LineOut<'_>) {
    let Value::Object(providers) = meta else {
        return;
    };
    for (_, m) in providers {
        let id = m.get("itemId").to_text().filter(|i| i.starts_with("rs_"));
        if m.get("reasoningEncryptedContent").as_str().is_some() {
            out.reasoning(ReasoningKind::OpenaiEncrypted, id, at);
        } else if id.is_some() {
            out.reasoning(ReasoningKind::OpenaiId, id, at);
        } else if m.has("signature") {
            out.reasoning(ReasoningKind::AnthropicSignature, None, at);
        } else if m.has("redactedData") {
            out.reasoning(ReasoningKind::AnthropicRedacted, None, at);
        } else if m.has("thoughtSignature") {
            out.reasoning(ReasoningKind::GeminiSignature, None, at);
        }
    }
}
