//! Gemini 3's "Function call is missing a `thought_signature`": the provider
//! wants a signature on a function call of the current turn that has none (a
//! call another model made, or one whose signature was lost on the way: a
//! gateway that drops it, an agent that keeps none). Removing reasoning cannot
//! add one, so `diagnose` prescribes no rewrite and says what does get past it.
//!
//! Gemini validates the signatures of the current turn only: the model steps
//! since the last user message that is not a function response
//! (ai.google.dev/gemini-api/docs/thought-signatures). Google documents a
//! placeholder for calls it did not sign
//! ([`crate::provider::GEMINI_SKIP_SIGNATURE`]), which `session-doctor proxy`
//! puts on such calls in every request to a Gemini 3 model. No rewrite of
//! the session writes it: pi sends a signature only if it is base64 and the
//! same model's (the placeholder is neither), Gemini CLI reads none from the
//! calls it records (`toolCalls`), Gemini CLI and Cline (its AI SDK) add it
//! on their own, and opencode sends what it stores, unsigned. A new user message starts a turn the old
//! calls are no longer checked in.

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
        format!(
            "Gemini wants a thought signature on a function call of the current turn that has none (made by another model, or its signature dropped): \
             --strip-reasoning cannot add one. `session-doctor proxy` gives such calls \
             Google's placeholder (`{}`) in every request to a Gemini 3 model; or send a new message rather than the same request again: \
             Gemini checks the current turn only (the calls since the last user message)",
            crate::provider::GEMINI_SKIP_SIGNATURE
        )
    })
}
