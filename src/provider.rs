//! The one provider vocabulary: the names that the media rules, the error
//! classifier, format detection and the adapters all speak.
//!
//! Agents and gateways spell providers many ways (`claude`, `amazon-bedrock`,
//! `google-vertex`, `azure`, `x-ai`); every name from a session, an error body
//! or the command line goes through [`canonical`] before anything compares it.

/// Every provider session-doctor knows, in the order `--help` lists them.
pub const NAMES: [&str; 17] = [
    "anthropic",
    "bedrock",
    "vertex-anthropic",
    "openai",
    "azure-openai",
    "gemini",
    "vertex-gemini",
    "openrouter",
    "litellm",
    "mistral",
    "xai",
    "groq",
    "deepseek",
    "ollama",
    "vllm",
    "llamacpp",
    "lmstudio",
];

/// Other spellings, as agents, SDKs and gateways write them.
const ALIASES: &[(&str, &str)] = &[
    ("claude", "anthropic"),
    ("anthropic-api", "anthropic"),
    ("claude-code", "anthropic"),
    ("aws", "bedrock"),
    ("amazon-bedrock", "bedrock"),
    ("bedrock-anthropic", "bedrock"),
    ("bedrock-converse", "bedrock"),
    ("vertex", "vertex-gemini"),
    ("vertex_ai", "vertex-gemini"),
    ("vertex-ai", "vertex-gemini"),
    ("google-vertex", "vertex-gemini"),
    ("google-vertex-anthropic", "vertex-anthropic"),
    ("vertex_ai-anthropic", "vertex-anthropic"),
    ("azure", "azure-openai"),
    ("azure-openai-responses", "azure-openai"),
    ("openai-codex", "openai"),
    ("openai-responses", "openai"),
    ("openai-chat", "openai"),
    ("google", "gemini"),
    ("google-ai-studio", "gemini"),
    ("google-gemini-cli", "gemini"),
    ("gemini-cli", "gemini"),
    ("x-ai", "xai"),
    ("grok", "xai"),
    ("mistralai", "mistral"),
    ("llama.cpp", "llamacpp"),
    ("llama-cpp", "llamacpp"),
    ("lm-studio", "lmstudio"),
];

/// The canonical name for a provider name or alias (case and spacing ignored);
/// `None` for a name nobody here knows.
pub fn canonical(name: &str) -> Option<&'static str> {
    let n = name.trim().to_ascii_lowercase().replace([' ', '_'], "-");
    let raw = name.trim().to_ascii_lowercase();
    NAMES
        .iter()
        .copied()
        .find(|p| *p == n)
        .or_else(|| ALIASES.iter().find(|(a, _)| *a == raw || *a == n).map(|(_, p)| *p))
}

/// Spellings that name Google Vertex AI without saying which model family it
/// serves: the canonical name is `vertex-gemini` unless the evidence (a Claude
/// model, Anthropic's body shape) says `vertex-anthropic`.
pub fn names_vertex_of_either_family(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase().replace([' ', '_'], "-");
    matches!(n.as_str(), "vertex" | "vertex-ai" | "google-vertex")
}

/// A `--provider` value, checked at parse time: `generic` or any name or alias
/// of the vocabulary; the value is kept as typed (each command canonicalizes it).
pub fn parse_flag(s: &str) -> Result<String, String> {
    if s.trim().eq_ignore_ascii_case("generic") || canonical(s).is_some() {
        Ok(s.to_string())
    } else {
        Err(format!("unknown provider `{s}`; expected generic or one of: {}", NAMES.join(", ")))
    }
}

/// Which provider serves a model id, as agents write it: `claude-sonnet-4-5` →
/// anthropic, `gpt-5`/`o3` → openai, `gemini-2.5-pro` → gemini, `grok-4` → xai,
/// `pixtral-12b` → mistral. Understands OpenRouter-style `anthropic/claude-…`,
/// mux-style `anthropic:claude-…`, Bedrock ids (`us.anthropic.claude-…-v1:0`)
/// and Vertex ids (`claude-…@20240620`). `None` when the model is unknown.
pub fn for_model(model: &str) -> Option<&'static str> {
    const OPENAI: [&str; 8] = ["gpt", "chatgpt", "o1", "o3", "o4", "codex", "davinci", "text-embedding"];
    const MISTRAL: [&str; 7] =
        ["mistral", "pixtral", "magistral", "codestral", "devstral", "ministral", "open-mistral"];
    let m = model.trim().to_ascii_lowercase();
    if m.is_empty() {
        return None;
    }
    // "provider:model" (mux) — only when the prefix names a provider, since
    // Bedrock ids end in ":0".
    if let Some((prefix, rest)) = m.split_once(':')
        && !prefix.contains('.')
    {
        if prefix == "openrouter" {
            return for_model(rest);
        }
        if let Some(p) = canonical(prefix) {
            return Some(p);
        }
    }
    // "vendor/model" (OpenRouter, LiteLLM); "openrouter/vendor/model".
    if let Some((prefix, rest)) = m.split_once('/') {
        if prefix == "openrouter" {
            return for_model(rest);
        }
        if let Some(p) = canonical(prefix) {
            // "vertex_ai/claude…", "bedrock/anthropic.claude…"
            if p == "vertex-gemini" && rest.contains("claude") {
                return Some("vertex-anthropic");
            }
            return Some(p);
        }
        return for_model(rest);
    }
    // Bedrock: "anthropic.claude-…", "us.anthropic.claude-…-v1:0".
    if m.contains("anthropic.claude") {
        return Some("bedrock");
    }
    let name = m.as_str();
    if name.starts_with("claude") {
        // Vertex model ids carry "@version".
        return Some(if name.contains('@') { "vertex-anthropic" } else { "anthropic" });
    }
    if OPENAI.iter().any(|p| name.starts_with(p)) {
        return Some("openai");
    }
    if name.starts_with("gemini") || name.starts_with("learnlm") {
        return Some("gemini");
    }
    if name.starts_with("grok") {
        return Some("xai");
    }
    if MISTRAL.iter().any(|p| name.starts_with(p)) {
        return Some("mistral");
    }
    if name.starts_with("deepseek") {
        return Some("deepseek");
    }
    None
}

/// Google's placeholder thought signature for a function call Gemini did not
/// sign (a call another model made, or one whose signature was lost): set in
/// the part's thought signature field, it skips validation
/// (ai.google.dev/gemini-api/docs/thought-signatures#faqs, which names
/// `context_engineering_is_the_way_to_go` as the other one).
pub const GEMINI_SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// Whether a Gemini model refuses an unsigned function call in the current
/// turn: Gemini 3 and later (`gemini-3-pro-preview`, `gemini-3.1-flash`), by
/// the major version in its name; `false` for a name without one (an alias
/// such as `gemini-flash-latest`).
pub fn gemini_checks_signatures(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    let Some(rest) = name.strip_prefix("gemini-") else { return false };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u32>().is_ok_and(|major| major >= 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_fold_into_one_vocabulary() {
        let cases = [
            ("Claude", Some("anthropic")),
            ("amazon-bedrock", Some("bedrock")),
            ("google-vertex", Some("vertex-gemini")),
            ("azure", Some("azure-openai")),
            ("Azure OpenAI", Some("azure-openai")),
            ("openai-codex", Some("openai")),
            ("google", Some("gemini")),
            ("x-ai", Some("xai")),
            ("llama.cpp", Some("llamacpp")),
            ("vertex_ai", Some("vertex-gemini")),
            ("nope", None),
        ];
        for (name, want) in cases {
            assert_eq!(canonical(name), want, "{name}");
        }
        for n in NAMES {
            assert_eq!(canonical(n), Some(n));
        }
    }

    #[test]
    fn model_to_provider() {
        let cases = [
            ("claude-sonnet-4-5", Some("anthropic")),
            ("claude-3-5-sonnet@20240620", Some("vertex-anthropic")),
            ("us.anthropic.claude-opus-4-6-v1", Some("bedrock")),
            ("anthropic.claude-3-5-sonnet-20240620-v1:0", Some("bedrock")),
            ("gpt-5", Some("openai")),
            ("o3", Some("openai")),
            ("gemini-2.5-pro", Some("gemini")),
            ("grok-4", Some("xai")),
            ("mistral-large-latest", Some("mistral")),
            ("pixtral-12b", Some("mistral")),
            ("anthropic/claude-3.5-sonnet", Some("anthropic")),
            ("openrouter/google/gemini-2.5-flash", Some("gemini")),
            ("anthropic:claude-opus-4-1", Some("anthropic")),
            ("openai:gpt-4o", Some("openai")),
            ("groq/llama-4-scout", Some("groq")),
            ("vertex_ai/claude-3-5-sonnet", Some("vertex-anthropic")),
            ("llama-3", None),
            ("", None),
        ];
        for (m, want) in cases {
            assert_eq!(for_model(m), want, "{m}");
        }
    }

    #[test]
    fn gemini_3_and_later_check_signatures() {
        for m in ["gemini-3-pro-preview", "gemini-3.1-flash", "models/gemini-3-flash-preview", "gemini-10-pro"] {
            assert!(gemini_checks_signatures(m), "{m}");
        }
        for m in ["gemini-2.5-flash", "gemini-1.5-pro", "gemini-pro-latest", "claude-sonnet-4-5", "gemini-"] {
            assert!(!gemini_checks_signatures(m), "{m}");
        }
    }
}
