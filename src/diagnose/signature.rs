//! Gemini 3's "Function call is missing a `thought_signature`": the provider
//! wants a signature on a function call of the current turn that has none (a
//! call another model made, or one whose signature an agent dropped). Removing
//! reasoning cannot add one, so `diagnose` prescribes no rewrite and says what
//! does get past it.
//!
//! Gemini validates the signatures of the current turn only: the model steps
//! since the last user message that is not a function response
//! (ai.google.dev/gemini-api/docs/thought-signatures). Google documents a
//! placeholder for calls it did not sign (`skip_thought_signature_validator`;
//! also `context_engineering_is_the_way_to_go`), and the agents that speak
//! Gemini put it on the first call of each step of the current turn
//! themselves (Gemini CLI 0.61.0 `ensureActiveLoopHasThoughtSignatures`, the
//! AI SDK's `@ai-sdk/google`): a new user message starts a turn the old calls
//! are no longer checked in.

use crate::classify::Class;

use super::Failure;

/// Whether a reasoning refusal's text (lowercase) is the missing signature.
pub fn missing(text: &str) -> bool {
    text.contains("missing a thought_signature") || text.contains("missing thought_signature")
}

/// The note for that failure, or `None`.
pub fn note(failure: &Failure) -> Option<String> {
    let c = &failure.classification;
    let text = c.message.as_deref().unwrap_or("").to_ascii_lowercase();
    (c.class == Class::ReasoningRejected && missing(&text)).then(|| {
        "Gemini wants a thought signature on a function call of the current turn that has none (made by another model, or its signature dropped): \
         no rewrite adds one, and --strip-reasoning cannot help. Gemini checks the current turn only (the calls since the last user message): \
         send a new message rather than the same request again, or use an agent version that adds Google's placeholder \
         (`skip_thought_signature_validator`) itself, as Gemini CLI and the AI SDK do"
            .to_string()
    })
}
