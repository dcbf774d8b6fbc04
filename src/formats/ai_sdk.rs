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

/// Provider metadata on the part at `at`, under each of `metas` (`(value, member name)`:
/// mux keeps `providerOptions` and may keep `providerMetadata` beside it,
/// opencode keeps `metadata`): `{"openai":{"itemId":"rs_…","reasoningEncryptedContent":…}}`,
/// `{"anthropic":{"signature":…}}`, `{"google":{"thoughtSignature":…}}`.
/// One provider's reasoning on a part is one item, whichever members name it;
/// its `rs_` id is at every `…/openai/itemId` that holds it, so a copy that
/// drops ids drops each (the AI SDK sends `item_reference` from either).
pub fn provider_reasoning(metas: &[(&Value<'_>, &str)], at: &str, out: &mut LineOut<'_>) {
    let mut names: Vec<&str> = Vec::new();
    for (meta, _) in metas {
        if let Value::Object(providers) = meta {
            for (k, _) in providers {
                if !names.contains(&k.as_ref()) {
                    names.push(k);
                }
            }
        }
    }
    for name in names {
        let held: Vec<(&Value<'_>, &str)> = metas.iter().map(|(meta, p)| (meta.get(name), *p)).collect();
        let any = |key: &str| held.iter().any(|(m, _)| m.has(key));
        let rs_id = |m: &Value<'_>| m.get("itemId").to_text().filter(|i| i.starts_with("rs_"));
        let id = held.iter().find_map(|(m, _)| rs_id(m));
        // Pointers are spelled only for the ids a copy may remove.
        let id_at = held
            .iter()
            .filter(|(m, _)| rs_id(m).is_some())
            .map(|(_, k)| format!("{at}/{k}/{}/itemId", segment(name)))
            .collect();
        if held.iter().any(|(m, _)| m.get("reasoningEncryptedContent").as_str().is_some()) {
            out.reasoning_at(ReasoningKind::OpenaiEncrypted, id, at, id_at);
        } else if id.is_some() {
            out.reasoning_at(ReasoningKind::OpenaiId, id, at, id_at);
        } else if any("signature") {
            out.reasoning(ReasoningKind::AnthropicSignature, None, at);
        } else if any("redactedData") {
            out.reasoning(ReasoningKind::AnthropicRedacted, None, at);
        } else if any("thoughtSignature") {
            out.reasoning(ReasoningKind::GeminiSignature, None, at);
        }
    }
}

/// `key` as one JSON-pointer segment.
fn segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
