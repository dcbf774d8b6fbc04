//! Conventions of the Vercel AI SDK that mux and opencode both persist.

use std::collections::HashSet;

use serde_json::json;

use crate::json::Value;
use crate::model::ReasoningKind;
use crate::request::Dialect;
use crate::request::canon::{Part, text_of};

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
/// `reasoning`: the part is a reasoning part (else a text part or a tool call,
/// whose OpenAI item id is an [`ReasoningKind::OpenaiReference`]).
pub fn provider_reasoning(metas: &[(&Value<'_>, &str)], at: &str, reasoning: bool, out: &mut LineOut<'_>) {
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
        // A text part's or a call's item id (`msg_`, `fc_`): a reference under `store: true`.
        let other_id = |m: &Value<'_>| m.get("itemId").to_text().filter(|i| !i.starts_with("rs_"));
        if name == "openai"
            && !reasoning
            && let Some(item) = held.iter().find_map(|(m, _)| other_id(m))
        {
            let at_ids = held
                .iter()
                .filter(|(m, _)| other_id(m).is_some())
                .map(|(_, k)| format!("{at}/{k}/{}/itemId", segment(name)))
                .collect();
            out.reasoning_at(ReasoningKind::OpenaiReference, Some(item), at, at_ids);
        } else if held.iter().any(|(m, _)| m.get("reasoningEncryptedContent").as_str().is_some()) {
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

/// How the AI SDK's provider packages send the `reasoning` part of an
/// assistant message, from its text and its provider options (keyed by
/// provider): `@ai-sdk/openai` (`convertToOpenAIResponsesInput`),
/// `@ai-sdk/anthropic` (`convertToAnthropicMessagesPrompt`) and
/// `@ai-sdk/google` (`convertToGoogleGenerativeAIMessages`), as opencode
/// 1.18.33 bundles them. Chat Completions carries no replayed reasoning.
pub struct Replay {
    dialect: Dialect,
    /// The Responses request's `store`: true (the API's default, which the SDK
    /// leaves unset) sends an `itemId` as an `item_reference` the provider's
    /// store must hold; false sends the item itself, id and encrypted content.
    store: bool,
    /// Item ids already sent in this request: the SDK sends each once.
    sent: HashSet<String>,
}

impl Replay {
    pub fn new(dialect: Dialect, store: bool) -> Replay {
        Replay { dialect, store, sent: HashSet::new() }
    }

    /// The part as the request carries it, or `None` when the SDK leaves it out.
    pub fn part(&mut self, text: &str, options: &serde_json::Value) -> Option<Part> {
        let raw = match self.dialect {
            Dialect::OpenaiResponses => self.responses(text, options.get("openai")?)?,
            Dialect::Anthropic => {
                let a = options.get("anthropic")?;
                if let Some(sig) = a.get("signature").and_then(serde_json::Value::as_str) {
                    json!({"type":"thinking","thinking":text,"signature":sig})
                } else {
                    json!({"type":"redacted_thinking","data":a.get("redactedData")?.as_str()?})
                }
            }
            Dialect::Gemini => {
                // An empty thought is not sent; its signature rides on it (`google`, or `vertex`).
                let google = options.get("google").or_else(|| options.get("vertex"));
                let sig = google.and_then(|g| g.get("thoughtSignature")).filter(|s| !s.is_null());
                let mut p = json!({"text":text,"thought":true});
                if let Some(sig) = sig {
                    p["thoughtSignature"] = json!(text_of(sig));
                }
                (!text.is_empty()).then_some(p)?
            }
            Dialect::OpenaiChat => return None,
        };
        let family = match self.dialect {
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            _ => "openai",
        };
        Some(Part::Reasoning { family, raw })
    }

    /// An `itemId` by reference (store) or as the item with its id; without
    /// one, the encrypted content alone; with neither, nothing.
    fn responses(&mut self, text: &str, openai: &serde_json::Value) -> Option<serde_json::Value> {
        let summary: Vec<serde_json::Value> =
            if text.is_empty() { Vec::new() } else { vec![json!({"type":"summary_text","text":text})] };
        let encrypted = openai.get("reasoningEncryptedContent");
        match openai.get("itemId").and_then(serde_json::Value::as_str) {
            // A later part of the same item adds its summary to the item sent.
            Some(id) if !self.sent.insert(id.to_string()) => None,
            Some(id) if self.store => Some(json!({"type":"item_reference","id":id})),
            Some(id) => {
                // `encrypted_content` as the part holds it: null when null, absent when absent.
                let mut item = json!({"type":"reasoning","id":id});
                if let Some(e) = encrypted {
                    item["encrypted_content"] = e.clone();
                }
                item["summary"] = json!(summary);
                Some(item)
            }
            None => Some(
                json!({"type":"reasoning","encrypted_content":encrypted.filter(|e| !e.is_null())?,"summary":summary}),
            ),
        }
    }
}
