//! `session-doctor proxy`: a pass-through on the loopback that keeps every
//! agent's requests free of what would get its session stuck.
//!
//! An agent pointed at it (its base URL, [`print_env`]) sends its requests
//! here; each goes on to the provider with what the rest of the tool already
//! knows applied to it ([`mend`]): attachments checked, the broken ones made
//! the notes `repair` writes, the oversized ones fitted, the image count kept,
//! unresolvable reasoning ids dropped, Gemini 3's unsigned calls of the
//! current turn given Google's placeholder signature. A request with nothing to change goes
//! on byte for byte. On a deterministic rejection that names a block, the
//! block is replaced and the request sent once more, never twice ([`server`]).
//! What it changed goes to a journal ([`journal`]), never a credential or a body.
//!
//! It binds 127.0.0.1 and nothing else: there is no option for another address.

pub mod journal;
pub mod mend;
pub mod server;

use crate::request::Dialect;

/// The dialect of a request by its path (query aside), for the routes the
/// proxy mends; `None` for any other path (it is forwarded untouched).
pub fn dialect_of(path: &str) -> Option<Dialect> {
    let route = path.split('?').next().unwrap_or_default();
    if route.ends_with("/messages") || route.ends_with("/messages/count_tokens") {
        Some(Dialect::Anthropic)
    } else if route.ends_with("/responses") {
        Some(Dialect::OpenaiResponses)
    } else if route.ends_with("/chat/completions") {
        Some(Dialect::OpenaiChat)
    } else if route.contains("/models/")
        && (route.ends_with(":generateContent") || route.ends_with(":streamGenerateContent"))
    {
        Some(Dialect::Gemini)
    } else {
        None
    }
}

/// The model a Gemini request's path names (`/v1beta/models/<model>:generateContent`,
/// Vertex's `…/publishers/google/models/<model>:streamGenerateContent`).
pub fn model_of(path: &str) -> Option<&str> {
    let route = path.split('?').next().unwrap_or_default();
    let (_, rest) = route.rsplit_once("/models/")?;
    let (model, _) = rest.split_once(':')?;
    (!model.is_empty()).then_some(model)
}

/// The provider whose rules judge a request in `dialect`.
pub fn provider_of(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Anthropic => "anthropic",
        Dialect::OpenaiResponses | Dialect::OpenaiChat => "openai",
        Dialect::Gemini => "gemini",
    }
}

/// The real provider a request goes to without `--upstream`: by its dialect,
/// else by the headers only one provider's clients send.
pub fn default_upstream(path: &str, headers: &[(&str, &str)]) -> &'static str {
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    match dialect_of(path) {
        Some(Dialect::Anthropic) => "https://api.anthropic.com",
        Some(Dialect::Gemini) => "https://generativelanguage.googleapis.com",
        Some(Dialect::OpenaiResponses | Dialect::OpenaiChat) => "https://api.openai.com",
        None if has("anthropic-version") || has("x-api-key") => "https://api.anthropic.com",
        None if has("x-goog-api-key") || path.starts_with("/v1beta") => "https://generativelanguage.googleapis.com",
        None => "https://api.openai.com",
    }
}

/// The agents `--print-env` knows, as the suite names them.
pub const AGENTS: &[&str] = &["claude-code", "codex", "pi", "gemini-cli", "opencode", "copilot", "cline"];

/// What points `agent` at a proxy listening on `base` (`http://127.0.0.1:PORT`):
/// shell lines to paste (a variable, or where a setting goes).
pub fn print_env(agent: &str, base: &str) -> Option<String> {
    Some(match agent {
        "claude-code" => format!("export ANTHROPIC_BASE_URL={base}\n"),
        "codex" => format!(
            "export OPENAI_BASE_URL={base}/v1\n\
             # or, in ~/.codex/config.toml, a provider of your own:\n\
             # [model_providers.doctor]\n# name = \"doctor\"\n# base_url = \"{base}/v1\"\n\
             # wire_api = \"responses\"\n# env_key = \"OPENAI_API_KEY\"\n"
        ),
        "pi" => format!(
            "# ~/.pi/agent/models.json (merge into what is there):\n\
             # {{\"providers\": {{\"anthropic\": {{\"baseUrl\": \"{base}\"}}, \"openai\": {{\"baseUrl\": \"{base}/v1\"}}, \"google\": {{\"baseUrl\": \"{base}/v1beta\"}}}}}}\n"
        ),
        "gemini-cli" => format!("export GOOGLE_GEMINI_BASE_URL={base}\n"),
        "opencode" => format!(
            "# opencode.json, the provider's options (with \"/v1\": the AI SDK adds the rest):\n\
             # {{\"provider\": {{\"anthropic\": {{\"options\": {{\"baseURL\": \"{base}/v1\"}}}}}}}}\n"
        ),
        "copilot" => format!(
            "export COPILOT_PROVIDER_BASE_URL={base}/\n\
             # with COPILOT_PROVIDER_TYPE=anthropic (or openai, and {base}/v1)\n"
        ),
        "cline" => format!("# cline auth … -b {base}/v1\n"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::model_of;

    #[test]
    fn the_model_of_a_gemini_path() {
        assert_eq!(model_of("/v1beta/models/gemini-3-pro-preview:generateContent"), Some("gemini-3-pro-preview"));
        let vertex =
            "/v1/projects/p/locations/global/publishers/google/models/gemini-3-flash:streamGenerateContent?alt=sse";
        assert_eq!(model_of(vertex), Some("gemini-3-flash"));
        assert_eq!(model_of("/v1/messages"), None);
    }
}
