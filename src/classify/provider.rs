//! Which provider (or gateway) produced an error, when the caller did not say, in the
//! project's one provider vocabulary (DESIGN.md "One provider vocabulary"): `anthropic`,
//! `bedrock`, `vertex-anthropic`, `openai`, `azure-openai`, `gemini`, `vertex-gemini`,
//! `openrouter`, `litellm`, `mistral`, `xai`, `groq`, `deepseek`, `ollama`, `vllm`,
//! `llamacpp`, `lmstudio`.
//!
//! Gateways win over the provider behind them: the user configured OpenRouter or LiteLLM,
//! and that is what they pass back as `--provider`. Then body shapes, then names in the text.
//! A hint is normalised with the same aliases, so `--provider claude` and detection agree.

use super::envelope::Evidence;

/// Names in the (lowercased) text, in priority order. `vertex` is resolved afterwards into
/// `vertex-anthropic` or `vertex-gemini`.
/// See: formats.md §7 and the bodies quoted in research/demand.md.
const NAMES: &[(&str, &str)] = &[
    ("openrouter", "openrouter"),
    ("litellm", "litellm"),
    // Ollama's registry and its Python client name the server, whatever model family the
    // model's name says ("registry.ollama.ai/library/dolphin-mistral:latest",
    // rayketcham-lab/vox#89).
    ("registry.ollama.ai", "ollama"),
    ("ollama._types", "ollama"),
    ("bedrock", "bedrock"),
    ("validationexception", "bedrock"),
    ("throttlingexception", "bedrock"),
    ("accessdeniedexception", "bedrock"),
    ("when calling the converse", "bedrock"),
    ("when calling the invokemodel", "bedrock"),
    // InvokeModel's ValidationException message, as SDKs and gateways pass it on.
    ("the model returned the following errors", "bedrock"),
    // Bedrock's model ids and its throughput options ("Invocation of model ID
    // anthropic.claude-3-7-sonnet-20250219-v1:0 with on-demand throughput isn't supported").
    ("anthropic.claude", "bedrock"),
    ("on-demand throughput", "bedrock"),
    ("inference profile", "bedrock"),
    ("aiplatform.googleapis.com", "vertex"),
    ("req_vrtx_", "vertex"),
    ("vertex", "vertex"),
    // Google's error details (`"@type": "type.googleapis.com/google.rpc.ErrorInfo"`), in a
    // body quoted past parsing: Google's, whatever model it names (the Code Assist API
    // serves Claude models to Gemini CLI and Antigravity too).
    ("type.googleapis.com/google.rpc", "gemini"),
    ("anthropic", "anthropic"),
    ("claude", "anthropic"),
    ("generativelanguage.googleapis.com", "gemini"),
    ("ai.google.dev", "gemini"),
    // Gemini's own advice, "Please retry or report in
    // https://developers.generativeai.google/guide/troubleshooting", inside a reseller's
    // OpenAI-shaped envelope (egoist/chatwise-releases#799).
    ("developers.generativeai.google", "gemini"),
    // The Google AI JavaScript SDK's errors: "[GoogleGenerativeAI Error]: …".
    ("googlegenerativeai", "gemini"),
    ("google generative ai", "gemini"),
    ("gemini", "gemini"),
    // Google's 429 advice, in its own words, and its API's request type
    // ("GenerateContentRequest.contents[23]…", block/goose#1359).
    ("(e.g. check quota)", "gemini"),
    ("generatecontentrequest", "gemini"),
    ("azure", "azure-openai"),
    ("mistral", "mistral"),
    ("x.ai", "xai"),
    ("grok", "xai"),
    ("groq", "groq"),
    ("deepseek", "deepseek"),
    ("ollama", "ollama"),
    ("vllm", "vllm"),
    ("llama.cpp", "llamacpp"),
    ("llama-server", "llamacpp"),
    ("llamacpp", "llamacpp"),
    ("lm studio", "lmstudio"),
    // LM Studio's own advice in its context errors (lmstudio-bug-tracker#546).
    ("load the model with a larger context length", "lmstudio"),
    ("lmstudio", "lmstudio"),
    ("openai", "openai"),
    // Codex's ChatGPT login: its errors link its usage pages (openai/codex#42554).
    ("chatgpt.com", "openai"),
    ("response.failed", "openai"),
    ("response.completed", "openai"),
    ("gpt-", "openai"),
];

/// `vertex` resolved by model family: Anthropic's body shape or a Claude model name makes
/// it `vertex-anthropic`, anything else `vertex-gemini`.
fn vertex(ev: &Evidence, lower: &str) -> &'static str {
    if ev.shape.anthropic || lower.contains("claude") || lower.contains("req_vrtx_") {
        "vertex-anthropic"
    } else {
        "vertex-gemini"
    }
}

/// Maps a provider name onto the one vocabulary ([`crate::provider::canonical`]);
/// a Vertex name of either family is resolved by the evidence, and unknown
/// names (from a session, never from the command line) pass through lowercased.
pub fn normalize(hint: &str, ev: &Evidence, lower: &str) -> String {
    if crate::provider::names_vertex_of_either_family(hint) {
        return vertex(ev, lower).into();
    }
    crate::provider::canonical(hint).map_or_else(|| hint.trim().to_ascii_lowercase(), str::to_string)
}

/// Detects the provider from a hint, the body shapes, or names in `lower` (lowercased input).
pub fn detect(hint: Option<&str>, ev: &Evidence, lower: &str) -> Option<String> {
    if let Some(h) = hint.filter(|h| !h.trim().is_empty()) {
        return Some(normalize(h, ev, lower));
    }
    let name = detect_name(ev, lower)?;
    Some(if name == "vertex" { vertex(ev, lower) } else { name }.into())
}

/// Names only one provider's own errors hold, stronger than a body shape two
/// providers share or a model id another provider's: OpenAI's help links, the
/// `sequence_number` of a Responses stream event, whose error envelope is
/// shaped like Anthropic's, and Google's Code Assist host.
const OWN_WORDS: &[(&str, &str)] = &[
    ("help.openai.com", "openai"),
    ("platform.openai.com", "openai"),
    ("\"sequence_number\"", "openai"),
    // Google's Code Assist API, behind Gemini CLI's Google login.
    ("cloudcode-pa.googleapis.com", "gemini"),
];

/// Hosts of open models that answer in Mistral's `{"object":"error"}` shape too.
const OBJECT_ERROR_HOSTS: &[&str] = &["fireworks", "together.ai", "togethercomputer", "deepinfra"];

fn detect_name(ev: &Evidence, lower: &str) -> Option<&'static str> {
    if !ev.providers.is_empty() && lower.contains("metadata") {
        return Some("openrouter");
    }
    for (needle, name) in NAMES[..2].iter().chain(OWN_WORDS) {
        if lower.contains(needle) {
            return Some(name);
        }
    }
    let s = ev.shape;
    let by_shape = if s.anthropic {
        // Vertex and Bedrock serve Anthropic bodies too.
        Some(if lower.contains("req_vrtx_") || lower.contains("aiplatform.googleapis.com") {
            "vertex"
        } else if lower.contains("bedrock") {
            "bedrock"
        } else {
            "anthropic"
        })
    } else if s.gemini {
        Some(if lower.contains("aiplatform.googleapis.com") { "vertex" } else { "gemini" })
    } else if s.vllm {
        Some("vllm")
    } else if s.object_error && !OBJECT_ERROR_HOSTS.iter().any(|h| lower.contains(h)) {
        Some("mistral")
    } else {
        None
    };
    if by_shape.is_some() {
        return by_shape;
    }
    if let Some((_, name)) = NAMES[2..].iter().find(|(needle, _)| lower.contains(needle)) {
        return Some(name);
    }
    if s.openai {
        return Some("openai");
    }
    None
}

/// Local model servers: they answer deterministic refusals (no vision, too many images)
/// with 500 or no status, so a 5xx from them may still be a media failure.
const LOCAL: &[&str] = &["ollama", "vllm", "llamacpp", "lmstudio", "llamafile"];
/// Words only a local server's errors use. See: ggml-org/llama.cpp#13566, #15377
/// ("got exception: … image input is not supported … provide the mmproj"), #12947
/// ("Failed to parse messages: Unsupported content part type"), mozilla-ai/llamafile#298
/// ("model projector can't be loaded"), vLLM's `--limit-mm-per-prompt`.
const LOCAL_WORDS: &[&str] = &[
    "ollama",
    "vllm",
    "llama.cpp",
    "llama-server",
    "llamafile",
    "lm studio",
    "lmstudio",
    "mmproj",
    "projector",
    "limit-mm-per-prompt",
    "limit_mm_per_prompt",
    "got exception:",
    "failed to parse messages",
    "by this server",
];

/// Whether the provider (or the text) is a local model server.
pub fn is_local(provider: Option<&str>, lower: &str) -> bool {
    provider.is_some_and(|p| LOCAL.contains(&p)) || LOCAL_WORDS.iter().any(|w| lower.contains(w))
}
