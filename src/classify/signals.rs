//! The phrase and code tables, as data. Every group cites where its wording was seen.
//!
//! Matching is `str::contains` on text that was lowercased and whitespace-collapsed once
//! (see `text.rs`), so each lookup is linear in the input and nothing can backtrack.
//! A [`Rule`] matches when *all* of its needles occur and *none* of its `unless` needles do.

use super::class::Class;

/// One phrase rule: every needle in `all` present, none of `unless` present.
#[derive(Debug)]
pub struct Rule {
    pub all: &'static [&'static str],
    pub unless: &'static [&'static str],
    pub class: Class,
}

const fn r(all: &'static [&'static str], class: Class) -> Rule {
    Rule { all, unless: &[], class }
}

const fn ru(all: &'static [&'static str], unless: &'static [&'static str], class: Class) -> Rule {
    Rule { all, unless, class }
}

impl Rule {
    /// Whether every needle of `all` and none of `unless` occurs in `hay`.
    pub fn matches(&self, hay: &str) -> bool {
        self.matches_with(hay, hay)
    }

    /// Every needle of `all` in `hay` (the messages), none of `unless` in `context` (the
    /// messages and the structured codes: a Gemini `quotaId` `…PerMinute…` vetoes quota).
    pub fn matches_with(&self, hay: &str, context: &str) -> bool {
        self.all.iter().all(|n| hay.contains(n)) && !self.unless.iter().any(|n| context.contains(n))
    }

    /// The rule as `--explain` prints it: `"a" + "b"`, then what would have vetoed it.
    pub fn describe(&self) -> String {
        let all: Vec<String> = self.all.iter().map(|n| format!("\"{n}\"")).collect();
        let mut out = all.join(" + ");
        if !self.unless.is_empty() {
            out.push_str(&format!(" (none of {:?} present)", self.unless));
        }
        out
    }
}

/// Returns the class of the first rule of `table` that matches `hay`.
#[cfg(test)]
fn first_match(table: &[Rule], hay: &str) -> Option<Class> {
    table.iter().find(|rule| rule.matches(hay)).map(|rule| rule.class)
}

/// Structured codes that name a deterministic failure: checked before any phrase.
pub const DETERMINISTIC_CODES: &[(&str, Class)] = &[
    // See: openai-python error codes; codex-rs/codex-api/src/sse/responses.rs;
    // llama.cpp server `exceed_context_size_error`; Anthropic stop_reason
    // `model_context_window_exceeded`; mux errorType `context_exceeded`; opencode ContextOverflowError.
    ("context_length_exceeded", Class::ContextOverflow),
    ("exceed_context_size_error", Class::ContextOverflow),
    ("model_context_window_exceeded", Class::ContextOverflow),
    ("context_exceeded", Class::ContextOverflow),
    ("contextoverflowerror", Class::ContextOverflow),
    // See: openai/codex#8119 `invalid_encrypted_content`; OpenAI `previous_response_not_found`.
    ("invalid_encrypted_content", Class::ReasoningRejected),
    ("previous_response_not_found", Class::ReasoningRejected),
    // See: https://platform.openai.com/docs/guides/error-codes (insufficient_quota);
    // codex-rs api_bridge.rs (usage_limit_reached, usage_not_included); Anthropic `billing_error`.
    ("insufficient_quota", Class::Quota),
    ("usage_limit_reached", Class::Quota),
    ("usage_not_included", Class::Quota),
    ("billing_error", Class::Quota),
    ("billing_hard_limit_reached", Class::Quota),
    // new-api's code when the account's billing is off, whatever load its words blame.
    ("billing_not_active", Class::Quota),
    ("insufficient_balance", Class::Quota),
    // See: litellm exception_mapping_utils.py (Azure content_policy_violation,
    // ResponsibleAIPolicyViolation); codex `cyber_policy`. Not `invalid_prompt`: OpenAI
    // sends it with its policy words ("flagged as potentially violating our usage policy",
    // the policy family's), MiniMax for any bad message ("tool result's tool id … not found");
    // https://ai.google.dev/api/generate-content#FinishReason (SAFETY, PROHIBITED_CONTENT, …).
    ("content_policy_violation", Class::ContentPolicy),
    ("content_filter", Class::ContentPolicy),
    ("responsibleaipolicyviolation", Class::ContentPolicy),
    ("cyber_policy", Class::ContentPolicy),
    ("safety", Class::ContentPolicy),
    ("prohibited_content", Class::ContentPolicy),
    ("blocklist", Class::ContentPolicy),
    ("spii", Class::ContentPolicy),
    ("image_safety", Class::ContentPolicy),
    ("recitation", Class::ContentPolicy),
    ("model_refusal", Class::ContentPolicy),
    // Google's ErrorInfo reason for a refused generation, under a bare "invalid argument"
    // (ffroliva/gflow-cli#342).
    ("public_error_unsafe_generation", Class::ContentPolicy),
    ("data_inspection_failed", Class::ContentPolicy),
    // See: OpenAI `invalid_api_key`; Gemini ErrorInfo reason `API_KEY_INVALID`;
    // https://docs.anthropic.com/en/api/errors (authentication_error, permission_error);
    // Bedrock AccessDeniedException; Claude Code `authentication_failed`; opencode ProviderAuthError.
    ("invalid_api_key", Class::Auth),
    ("api_key_invalid", Class::Auth),
    ("authentication_error", Class::Auth),
    ("permission_error", Class::Auth),
    ("authentication_failed", Class::Auth),
    ("unauthenticated", Class::Auth),
    ("permission_denied", Class::Auth),
    ("accessdeniedexception", Class::Auth),
    ("unrecognizedclientexception", Class::Auth),
    ("expiredtokenexception", Class::Auth),
    ("providerautherror", Class::Auth),
    // gpt4free's `MissingAuthError` ("Add a \"api_key\"").
    ("missingautherror", Class::Auth),
    // Exception class names that wrappers keep in their text (envelope::exception_names):
    // the inner, specific class outranks the wrapper's generic status.
    // See: litellm exception_mapping_utils.py / docs.litellm.ai/docs/exception_mapping
    // (BerriAI/litellm#16231 "litellm.BadRequestError: litellm.ContentPolicyViolationError:"),
    // openai-python / anthropic-sdk exception names.
    ("contentpolicyviolationerror", Class::ContentPolicy),
    ("contextwindowexceedederror", Class::ContextOverflow),
    ("authenticationerror", Class::Auth),
    ("permissiondeniederror", Class::Auth),
    ("budgetexceedederror", Class::Quota),
    // See: https://docs.anthropic.com/en/api/errors (413 request_too_large);
    // OpenAI `string_above_max_length` (one part over 10 MB).
    ("request_too_large", Class::PayloadTooLarge),
    ("string_above_max_length", Class::PayloadTooLarge),
    // See: OpenAI `invalid_image_format`, `invalid_image`, `image_parse_error`,
    // `invalid_image_url` (gated like media phrases).
    ("invalid_image_format", Class::MediaRejected),
    ("invalid_image", Class::MediaRejected),
    ("image_parse_error", Class::MediaRejected),
    ("invalid_image_url", Class::MediaRejected),
    ("unsupported_image_media_type", Class::MediaRejected),
    // OpenAI's code for a file it cannot read ("The file you uploaded is badly formatted or
    // corrupted", shared/seeds/000: a PDF cut short by an interrupted download).
    ("invalid_file", Class::MediaRejected),
    // LobeChat's error types (`AgentRuntimeErrorType`, packages/model-runtime), the only
    // thing its chat panel keeps of many failures (`{"errorType":"InvalidProviderAPIKey"}`).
    // Not `QuotaLimitReached`: LobeChat uses it for a key's request rate as well as its quota.
    ("exceededcontextwindow", Class::ContextOverflow),
    ("insufficientquota", Class::Quota),
    ("locationnotsupporterror", Class::Auth),
    ("invalidproviderapikey", Class::Auth),
    ("invalidbedrockcredentials", Class::Auth),
    ("invalidvertexcredentials", Class::Auth),
    ("invalidgithubtoken", Class::Auth),
    ("noopenaiapikey", Class::Auth),
    ("invalidaccesscode", Class::Auth),
    ("modelnotfound", Class::InvalidRequest),
    // OpenAI's code for a model the key cannot use or that does not exist.
    ("model_not_found", Class::InvalidRequest),
    // See: opencode MessageAbortedError; DOM AbortError; gRPC CANCELLED.
    ("messageabortederror", Class::Aborted),
    ("aborterror", Class::Aborted),
    ("cancelled", Class::Aborted),
];

/// Structured codes that name a transient failure: checked after the deterministic phrases,
/// so "Request too large … tokens per min" with `rate_limit_exceeded` stays `payload_too_large`.
pub const TRANSIENT_CODES: &[(&str, Class)] = &[
    // See: https://docs.anthropic.com/en/api/errors (overloaded_error 529, api_error 500,
    // rate_limit_error 429, timeout_error); codex api_bridge.rs (server_is_overloaded, slow_down).
    ("overloaded_error", Class::Overloaded),
    ("server_is_overloaded", Class::Overloaded),
    ("slow_down", Class::Overloaded),
    ("overloaded", Class::Overloaded),
    ("model_capacity_exhausted", Class::Overloaded),
    // See: OpenAI `rate_limit_exceeded`; Gemini RESOURCE_EXHAUSTED; Bedrock ThrottlingException.
    ("rate_limit_exceeded", Class::RateLimit),
    // See: github/copilot-cli#793 (`"code":"rate_limited"`), Mistral `"type":"rate_limited"`.
    ("rate_limited", Class::RateLimit),
    ("ratelimiterror", Class::RateLimit),
    // LobeChat's type for an Ollama it cannot reach (not running, wrong host).
    ("ollamaserviceunavailable", Class::Network),
    ("rate_limit_error", Class::RateLimit),
    ("rate_limit", Class::RateLimit),
    ("too_many_requests", Class::RateLimit),
    ("resource_exhausted", Class::RateLimit),
    ("throttlingexception", Class::RateLimit),
    ("servicequotaexceededexception", Class::RateLimit),
    ("modelnotreadyexception", Class::RateLimit),
    // See: Bedrock InternalServerException, ServiceUnavailableException: the provider's own
    // exception, before a client library's connection class around it
    // (aws-samples/foundation-model-benchmarking-tool#247: litellm.APIConnectionError
    // "Bad response code … ':exception-type': 'serviceUnavailableException'").
    ("internalserverexception", Class::ServerError),
    ("serviceunavailableexception", Class::ServerError),
    // See: gRPC DEADLINE_EXCEEDED; Anthropic timeout_error; Bedrock ModelTimeoutException.
    ("deadline_exceeded", Class::Timeout),
    ("timeout_error", Class::Timeout),
    ("modeltimeoutexception", Class::Timeout),
    ("etimedout", Class::Timeout),
    ("timeout", Class::Timeout),
    ("apitimeouterror", Class::Timeout),
    ("apiconnectiontimeouterror", Class::Timeout),
    ("timeouterror", Class::Timeout),
    ("readtimeout", Class::Timeout),
    ("connecttimeout", Class::Timeout),
    // See: Node.js system errors (ECONNRESET, ENOTFOUND, ECONNREFUSED); openai-node APIConnectionError.
    ("econnreset", Class::Network),
    ("enotfound", Class::Network),
    ("econnrefused", Class::Network),
    ("apiconnectionerror", Class::Network),
    ("remoteprotocolerror", Class::Network),
    ("connecterror", Class::Network),
    ("readerror", Class::Network),
    ("connectionerror", Class::Network),
    ("network", Class::Network),
    ("network_error", Class::Network),
];

/// Generic class names (`litellm.BadRequestError`, `litellm.InternalServerError`): they
/// decide only when nothing more specific matched and no status is known, so an
/// "`InternalServerError`: … Overloaded" is overloaded and "… Could not process image" media.
pub const WEAK_CODES: &[(&str, Class)] = &[
    // See: Anthropic api_error; OpenAI server_error: types any server failure carries, so
    // its words ("The server is overloaded") say more.
    ("api_error", Class::ServerError),
    ("server_error", Class::ServerError),
    ("system_error", Class::ServerError),
    // A reason of the client's own input (Cursor `{"type":"client","reason":"invalid_input"}`).
    ("invalid_input", Class::InvalidRequest),
    // The Copilot API's code for a body it refuses, also in a JS object an agent printed
    // (`code: 'invalid_request_body'`, caozhiyuan/copilot-api#251).
    ("invalid_request_body", Class::InvalidRequest),
    ("internal_server_error", Class::ServerError),
    ("internalservererror", Class::ServerError),
    // one-api's code for an upstream answer it could not decode.
    ("unmarshal_response_body_failed", Class::ServerError),
    ("serviceunavailableerror", Class::ServerError),
    ("badgatewayerror", Class::ServerError),
    // See: litellm exception_mapping_utils.py; openai-python _exceptions.py.
    ("badrequesterror", Class::InvalidRequest),
    ("unprocessableentityerror", Class::InvalidRequest),
    ("notfounderror", Class::InvalidRequest),
    ("invalidrequesterror", Class::InvalidRequest),
    ("validationexception", Class::InvalidRequest),
];

/// Deterministic phrases, in priority order: reasoning, overflow, whole-request size,
/// content policy, quota, auth. None of these is gated on status.
pub const DETERMINISTIC_PHRASES: &[Rule] = &[
    // An item id the provider does not hold ("Item with id 'rs_…' not found") is the family
    // "a replayed item the provider does not hold" (`families`). See: vercel/ai#7099 (without
    // its required following item); openai/codex#8119 (encrypted content … could not be verified).
    r(&["of type 'reasoning' was provided without its required following item"], Class::ReasoningRejected),
    r(&["encrypted content", "could not be verified"], Class::ReasoningRejected),
    r(&["encrypted content", "could not be decrypted"], Class::ReasoningRejected),
    r(&["missing required parameter", "encrypted_content"], Class::ReasoningRejected),
    r(&["encrypted_content'", "expected a string"], Class::ReasoningRejected),
    r(&["previous response with id", "not found"], Class::ReasoningRejected),
    // See: anthropics/claude-code#10627 ("messages.1.content.0: Invalid `signature` in
    // `thinking` block"); kaitranntt/ccs#415 (without backticks).
    r(&["invalid `signature` in `thinking` block"], Class::ReasoningRejected),
    r(&["invalid signature in thinking block"], Class::ReasoningRejected),
    r(&[".thinking.signature"], Class::ReasoningRejected),
    // See: lbjlaq/Antigravity-Manager#139, nanbingxyz/5ire#405 (Gemini 3 "Function call is
    // missing a thought_signature in functionCall parts").
    r(&["missing a thought_signature"], Class::ReasoningRejected),
    // Short forms. See: lbjlaq/Antigravity-Manager#139 ("Expected `thinking` or
    // `redacted_thinking`, but found `text`": the replayed assistant turn lost its thinking
    // block); oh-my-pi#41 / opencode#7724 ("Items are not persisted when `store` is set to
    // false", any item id, not only rs_).
    r(&["expected `thinking` or `redacted_thinking`"], Class::ReasoningRejected),
    r(&["expected thinking or redacted_thinking"], Class::ReasoningRejected),
    r(&["items are not persisted when"], Class::ReasoningRejected),
    r(&["invalid `signature` in"], Class::ReasoningRejected),
    r(&["invalid signature in"], Class::ReasoningRejected),
    r(&["thought_signature", "invalid"], Class::ReasoningRejected),
    // See: decolua/9router#301 (Vertex "Thought signature is not valid").
    r(&["thought signature", "not valid"], Class::ReasoningRejected),
    // See: badlogic/pi-mono packages/ai/src/utils/overflow.ts OVERFLOW_PATTERNS (one per
    // provider), opencode provider/error.ts, litellm is_error_str_context_window_exceeded.
    // Vetoed by rate-limit wording: Bedrock "Too many tokens, please wait" is throttling.
    ru(&["prompt is too long"], RATE_WORDS, Class::ContextOverflow),
    ru(&["input is too long"], RATE_WORDS, Class::ContextOverflow),
    ru(&["exceeds the context window"], RATE_WORDS, Class::ContextOverflow),
    ru(&["input token count", "exceeds the maximum"], RATE_WORDS, Class::ContextOverflow),
    ru(&["exceeds the maximum number of tokens allowed"], RATE_WORDS, Class::ContextOverflow),
    ru(&["maximum prompt length is"], RATE_WORDS, Class::ContextOverflow),
    ru(&["reduce the length of the messages"], RATE_WORDS, Class::ContextOverflow),
    ru(&["maximum context length"], RATE_WORDS, Class::ContextOverflow),
    ru(&["context length is only"], RATE_WORDS, Class::ContextOverflow),
    ru(&["token count of", "exceeds the limit of"], RATE_WORDS, Class::ContextOverflow),
    ru(&["exceeds the available context size"], RATE_WORDS, Class::ContextOverflow),
    ru(&["greater than the context length"], RATE_WORDS, Class::ContextOverflow),
    ru(&["context window exceeds limit"], RATE_WORDS, Class::ContextOverflow),
    ru(&["exceeded model token limit"], RATE_WORDS, Class::ContextOverflow),
    ru(&["exceed context limit"], RATE_WORDS, Class::ContextOverflow),
    ru(&["exceeds model context window"], RATE_WORDS, Class::ContextOverflow),
    ru(&["exceeded max context length"], RATE_WORDS, Class::ContextOverflow),
    ru(&["input tokens exceed the configured limit"], RATE_WORDS, Class::ContextOverflow),
    ru(&["current length is", "while limit is"], RATE_WORDS, Class::ContextOverflow),
    ru(&["context length exceeded"], RATE_WORDS, Class::ContextOverflow),
    ru(&["context window exceeded"], RATE_WORDS, Class::ContextOverflow),
    // A chat UI's own words for the same window: full, or the conversation's length capped.
    ru(&["context window is full"], RATE_WORDS, Class::ContextOverflow),
    ru(&["context window full"], RATE_WORDS, Class::ContextOverflow),
    ru(&["conversation length limit"], RATE_WORDS, Class::ContextOverflow),
    ru(&["context_length_exceeded"], RATE_WORDS, Class::ContextOverflow),
    ru(&["token limit exceeded"], RATE_WORDS, Class::ContextOverflow),
    ru(&["too many tokens"], RATE_WORDS, Class::ContextOverflow),
    // Claude Code's own compaction refused for the same window: "Error during
    // compaction: Error: Conversation too long. Press esc twice to go up a few
    // messages and try again." (anthropics/claude-code #8330, #23047).
    ru(&["conversation too long"], RATE_WORDS, Class::ContextOverflow),
    // Its 2.1.3xx wording, recorded as `/compact`'s output (the round-trip suite's Claude Code 2.1.332).
    ru(&["could not be reduced below the context limit"], RATE_WORDS, Class::ContextOverflow),
    // Self-hosted servers. See: vllm-project/vllm#5700 (the prompt leaves no room: "max_tokens
    // must be at least 1, got -160"); lmstudio-bug-tracker#546, dyad-sh/dyad#925 ("Trying to
    // keep the first N tokens when context the overflows").
    r(&["max_tokens must be at least 1, got -"], Class::ContextOverflow),
    r(&["max_tokens must be at least 1, got 0"], Class::ContextOverflow),
    ru(&["when context the overflows"], RATE_WORDS, Class::ContextOverflow),
    ru(&["when context overflows"], RATE_WORDS, Class::ContextOverflow),
    // See: OpenAI TPM 429 "Request too large for gpt-4o … on tokens per min (TPM)"
    // (Aider-AI/aider#1880: "you will always get this error"); Anthropic 413
    // request_too_large "Request exceeds the maximum size"; pi isRequestTooLarge; Vertex
    // "Request payload size exceeds the limit"; Claude Code "Request too large (max 20MB)".
    r(&["request too large"], Class::PayloadTooLarge),
    r(&["request_too_large"], Class::PayloadTooLarge),
    r(&["request exceeds the maximum size"], Class::PayloadTooLarge),
    r(&["request entity too large"], Class::PayloadTooLarge),
    r(&["payload too large"], Class::PayloadTooLarge),
    r(&["request payload size exceeds"], Class::PayloadTooLarge),
    r(&["string too long", "maximum length"], Class::PayloadTooLarge),
    // See: Anthropic "Output blocked by content filtering policy"; Azure "content management
    // policy"; OpenAI "flagged as potentially violating our usage policy"; Gemini "The
    // response was blocked" / blockReason; DashScope "inappropriate content".
    r(&["content filtering policy"], Class::ContentPolicy),
    r(&["content management policy"], Class::ContentPolicy),
    r(&["content_policy_violation"], Class::ContentPolicy),
    r(&["violating our usage polic"], Class::ContentPolicy),
    // See: anthropics/claude-code#3028, #50795, #61653 (Claude Code's own refusal wording).
    r(&["violate our usage polic"], Class::ContentPolicy),
    r(&["flagged as potentially violating"], Class::ContentPolicy),
    r(&["rejected as a result of our safety system"], Class::ContentPolicy),
    r(&["the response was blocked"], Class::ContentPolicy),
    r(&["prompt was blocked"], Class::ContentPolicy),
    r(&["finishreason: safety"], Class::ContentPolicy),
    r(&["inappropriate content"], Class::ContentPolicy),
    // The history breaks the provider's structural rules (DESIGN.md history_invalid): a
    // tool call without its result, a result without its call, roles out of order, an
    // empty message. See: anthropics/claude-code#1237, #5989 ("`tool_use` ids were found
    // without `tool_result` blocks immediately after"), #10834, decocms/studio#1803
    // ("unexpected `tool_use_id` found in `tool_result` blocks"), #6774 ("all messages must
    // have non-empty content"); microsoft/vscode#320060, continuedev/continue#10092 ("No tool
    // call found for function call output"); tjardoo/openai-client#124 ("No tool output found
    // for function call"); aliasrobotics/cai#111 (Chat "must be followed by tool messages");
    // google-gemini/gemini-cli#11814, langchain-ai/langchain#27799 (Gemini turn order);
    // Just-Curieous/Curie#16, strands-agents/harness-sdk#1223 (Bedrock toolResult/toolUse).
    r(&["ids were found without", "tool_result"], Class::HistoryInvalid),
    r(&["unexpected `tool_use_id`"], Class::HistoryInvalid),
    r(&["unexpected tool_use_id"], Class::HistoryInvalid),
    r(&["no tool output found for function call"], Class::HistoryInvalid),
    r(&["no tool call found for function call output"], Class::HistoryInvalid),
    r(&["must be followed by tool messages responding to each"], Class::HistoryInvalid),
    r(&["did not have response messages"], Class::HistoryInvalid),
    r(&["must be a response to a preceeding message with"], Class::HistoryInvalid),
    r(&["must be a response to a preceding message with"], Class::HistoryInvalid),
    r(&["function call turn comes immediately after"], Class::HistoryInvalid),
    r(&["function response turn comes immediately after"], Class::HistoryInvalid),
    r(&["number of function response parts is equal to the number of function call parts"], Class::HistoryInvalid),
    r(&["toolresult blocks", "exceeds the number of tooluse blocks"], Class::HistoryInvalid),
    r(&["expected toolresult blocks at"], Class::HistoryInvalid),
    r(&["blocks cannot be provided in the same turn"], Class::HistoryInvalid),
    r(&["must have non-empty content"], Class::HistoryInvalid),
    r(&["text content blocks must be non-empty"], Class::HistoryInvalid),
    r(&["content blocks must be non-empty"], Class::HistoryInvalid),
    r(&["must have either content or tool_calls"], Class::HistoryInvalid),
    r(&["roles must alternate"], Class::HistoryInvalid),
    r(&["must alternate between"], Class::HistoryInvalid),
    r(&["expected last role"], Class::HistoryInvalid),
    r(&["first message must use the"], Class::HistoryInvalid),
    r(&["cannot be empty when status value is error"], Class::HistoryInvalid),
    // A lone surrogate escape in the history ("\ud83c": `JSON.stringify` of a tool output
    // cut inside an emoji). Anthropic's JSON parser (yyjson's wording, through orjson:
    // "The request body is not valid JSON: … : line 1 column N (char N)") refuses a high
    // half with no low one after it, a low half with no high one before it, and a high
    // half followed by another escape. Stored in the history, it comes back on every
    // request: anthropics/claude-code#1939, #3277, #6273, #60394, #65607,
    // link-assistant/hive-mind#1324.
    r(&["no low surrogate in string"], Class::HistoryInvalid),
    r(&["invalid high surrogate in string"], Class::HistoryInvalid),
    r(&["invalid low surrogate in string"], Class::HistoryInvalid),
    // See: OpenAI insufficient_quota ("You exceeded your current quota, please check your
    // plan and billing details"); Anthropic "Your credit balance is too low"; DeepSeek 402
    // "Insufficient Balance"; OpenRouter 402 "requires more credits … can only afford".
    // Vetoed by per-minute wording: Gemini's free tier says "quota" for a per-minute limit.
    ru(&["insufficient_quota"], PER_MINUTE, Class::Quota),
    ru(&["exceeded your current quota"], PER_MINUTE, Class::Quota),
    ru(&["credit balance is too low"], PER_MINUTE, Class::Quota),
    ru(&["insufficient credits"], PER_MINUTE, Class::Quota),
    ru(&["insufficient balance"], PER_MINUTE, Class::Quota),
    ru(&["requires more credits"], PER_MINUTE, Class::Quota),
    ru(&["hit your usage limit"], PER_MINUTE, Class::Quota),
    ru(&["payment required"], PER_MINUTE, Class::Quota),
    ru(&["billing"], PER_MINUTE, Class::Quota),
    // Per-key budgets set on a router key, and plan gates: waiting does not help.
    // See: RooCodeInc/Roo-Code#515, gptme/gptme#1449 (OpenRouter 403 "Key limit exceeded
    // (monthly limit)"), anomalyco/opencode#12219 ("create a key with a higher monthly
    // limit"), xtekky/gpt4free#3456 ("Token limit (500,000 per day) exceeded", a 500),
    // anthropics/claude-code#33514 (a 429 "Extra usage is required for long context").
    ru(&["key limit exceeded"], PER_MINUTE, Class::Quota),
    ru(&["create a key with a higher"], PER_MINUTE, Class::Quota),
    r(&["token limit", "per day"], Class::Quota),
    // A throttle over a day: waiting minutes does not lift it. See: minorun365/agent-book#29
    // (Bedrock ThrottlingException "Too many tokens per day, please wait before trying again").
    r(&["tokens per day"], Class::Quota),
    r(&["requests per day"], Class::Quota),
    r(&["extra usage is required"], Class::Quota),
    // See: OpenAI "Incorrect API key provided"; Anthropic "invalid x-api-key"; Gemini
    // "API key not valid. Please pass a valid API key." / "API Key not found"; OpenRouter
    // "No auth credentials found"; AWS "The security token included in the request is invalid".
    r(&["incorrect api key"], Class::Auth),
    r(&["invalid api key"], Class::Auth),
    r(&["invalid x-api-key"], Class::Auth),
    r(&["api key not valid"], Class::Auth),
    r(&["api key not found"], Class::Auth),
    r(&["api key expired"], Class::Auth),
    r(&["no auth credentials"], Class::Auth),
    r(&["invalid authentication"], Class::Auth),
    r(&["authentication failed"], Class::Auth),
    r(&["oauth token has expired"], Class::Auth),
    r(&["security token included in the request is invalid"], Class::Auth),
    r(&["does not have permission"], Class::Auth),
    // An account gate on the model: OpenAI's "Your organization must be verified to stream
    // this model … click on Verify Organization" (a 400, continuedev/continue#8209).
    r(&["organization must be verified"], Class::Auth),
    // A project or key the provider does not let use the model (Vertex's FAILED_PRECONDITION
    // "Project `…` is not allowed to use Publisher Model `…`", yym68686/uni-api#41).
    r(&["not allowed to use", "model"], Class::Auth),
    r(&["verify organization"], Class::Auth),
    // See: anthropics/skills#574 (litellm "OllamaException - unauthorized"), agent0ai/agent-zero#769
    // ("OpenAIException - UNAUTHENTICATED").
    r(&["unauthorized"], Class::Auth),
    r(&["unauthenticated"], Class::Auth),
    // See: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
    // (AccessDeniedException: "You don't have access to the model with the specified model ID.").
    r(&["accessdeniedexception"], Class::Auth),
    // The refusal in its plainest words, a 403's own reason phrase.
    r(&["access denied"], Class::Auth),
    r(&["authorization required"], Class::Auth),
    // An account or organization the provider has shut (Anthropic's "This organization has
    // been disabled."): no retry and no fix to the request lifts it.
    r(&["organization has been disabled"], Class::Auth),
    r(&["account has been disabled"], Class::Auth),
    r(&["account is disabled"], Class::Auth),
    r(&["has been suspended"], Class::Auth),
    // A header the browser cannot send: the one a user types into is the API key (a
    // pasted key with a non-Latin character; "Failed to read the 'headers' property from
    // 'RequestInit': String contains non ISO-8859-1 code point"), whatever "Connection
    // error" the app puts around it.
    r(&["non iso-8859-1"], Class::Auth),
    // A login or token that lapsed: an agent's or app's own sign-in, not the model's tokens.
    r(&["token expired"], Class::Auth),
    r(&["token has expired"], Class::Auth),
    r(&["token is expired"], Class::Auth),
    r(&["session expired"], Class::Auth),
    r(&["session has expired"], Class::Auth),
    r(&["log in again"], Class::Auth),
    r(&["login again"], Class::Auth),
    r(&["sign in again"], Class::Auth),
    r(&["re-authenticate"], Class::Auth),
    r(&["reauthenticate"], Class::Auth),
    r(&["not logged in"], Class::Auth),
    r(&["not signed in"], Class::Auth),
    r(&["do not have access to the model"], Class::Auth),
    // A body the server cannot parse is the client's, whatever media word the URL it was
    // sent to holds (Volcengine's "we could not parse the JSON body of your request" at
    // `…/embeddings/multimodal`).
    r(&["could not parse the json body"], Class::InvalidRequest),
    r(&["failed to parse the request body"], Class::InvalidRequest),
    // Kiro's (Amazon Q's, CodeWhisperer's) ValidationException, also bare in its chat panel
    // ("Error sending prompt: Improperly formed request.", kirodotdev/Kiro#10965), and under
    // a proxy's 500 ("CodeWhisperer Error: … Improperly formed request."): the request's.
    r(&["improperly formed request"], Class::InvalidRequest),
];

/// Words that turn an apparent overflow (or a media defect) into throttling or an
/// allowance over a period: Bedrock's "Too many tokens, please wait", g4f's "Token limit
/// (500,000 per day) exceeded". Shared with the term families.
pub const RATE_WORDS: &[&str] =
    &["please wait", "rate limit", "per minute", "per min", "throttl", "(tpm)", "per day", "per hour", "daily"];
/// Words that turn an apparent quota message into a per-minute limit.
/// A limit per minute, or a wait of moments: "Limit: 3 / min. Please try again in 20s … add
/// a payment method to increase your rate limit" is a rate limit whatever billing it
/// mentions. (Not "try again in": "try again in 5 days" is a plan's limit.)
const PER_MINUTE: &[&str] =
    &["per minute", "per_minute", "perminute", "per min", "retry in", "retrydelay", "wait a moment"];

/// Per-request count limits. Only for client errors (see `mod.rs`).
pub const IMAGE_LIMIT_PHRASES: &[Rule] = &[
    // See: anthropics/claude-code#3397 ("Too much media: 0 document pages + 103 images > 100"),
    // #24541 ("too many images and documents"); anomalyco/opencode#47721 ("request contains
    // 52 images, exceeding the maximum of 50"); microsoft/vscode#303825 ("11 images were
    // provided, but the model supports a maximum of 10"); Anthropic "A maximum of 100 PDF
    // pages may be provided"; "Too many images in request: 31 > 30".
    r(&["too many images"], Class::ImageLimit),
    // The phrasings agent-core's classifier lists (shared/seeds/002): "maximum (number) of N
    // images", "number of images … exceeds".
    r(&["maximum number of", "images"], Class::ImageLimit),
    r(&["number of images", "exceed"], Class::ImageLimit),
    r(&["too much media"], Class::ImageLimit),
    r(&["images, exceeding the maximum of"], Class::ImageLimit),
    r(&["images were provided", "maximum of"], Class::ImageLimit),
    r(&["image count", "exceeds limit"], Class::ImageLimit),
    r(&["maximum of", "pdf pages"], Class::ImageLimit),
    r(&["too many pdf pages"], Class::ImageLimit),
    // Self-hosted servers. See: vllm-project/vllm#13513, #9739 ("At most 1 image(s) may be
    // provided in one request", also as a bare ValueError); ollama/ollama-js#213 ("vision
    // model only supports a single image per message"); hiyouga/LlamaFactory#6636 ("Mllama
    // only supports one image per sample").
    r(&["image(s) may be provided"], Class::ImageLimit),
    r(&["only supports a single image"], Class::ImageLimit),
    r(&["only supports one image"], Class::ImageLimit),
];

/// One attachment rejected. Only for client errors (see `mod.rs`).
pub const MEDIA_PHRASES: &[Rule] = &[
    // See: anthropics/claude-code#1747 "Could not process image"; #2939 "image exceeds 5 MB
    // maximum"; #13480/#16173 "image dimensions exceed max allowed size"; #13131 "Image does
    // not match the provided media type"; #18528 "image cannot be empty"; #25323 "The PDF
    // specified was not valid"; #19013 "password protected"; #8184 "media_type: Input should
    // be"; #90363 "could not be processed and was removed".
    r(&["could not process image"], Class::MediaRejected),
    // OpenAI's words for a file it cannot read (shared/seeds/000).
    r(&["badly formatted or corrupted"], Class::MediaRejected),
    r(&["could not process pdf"], Class::MediaRejected),
    r(&["image exceeds"], Class::MediaRejected),
    r(&["image dimensions exceed"], Class::MediaRejected),
    // See: anthropics/claude-code#39185 (Claude Code's own words for the many-image limit).
    r(&["exceeds the dimension limit"], Class::MediaRejected),
    r(&["dimensions exceed max allowed size"], Class::MediaRejected),
    r(&["does not match the provided media type"], Class::MediaRejected),
    r(&["the image was specified using the"], Class::MediaRejected),
    r(&["image cannot be empty"], Class::MediaRejected),
    r(&["the pdf specified was not valid"], Class::MediaRejected),
    r(&["the pdf specified is password protected"], Class::MediaRejected),
    r(&["the document has no pages"], Class::MediaRejected),
    r(&["media_type: input should be"], Class::MediaRejected),
    r(&["image in the conversation could not be processed"], Class::MediaRejected),
    r(&["an image could not be read"], Class::MediaRejected),
    r(&["image base64 size"], Class::MediaRejected),
    // GitHub Copilot CLI 1.0.102's `session.warning` (`image_error`) after a provider's 400
    // on an image (tests/data/agents/copilot/attachment-healed, written by the CLI).
    r(&["image input was rejected"], Class::MediaRejected),
    // See: felixarntz/ai-services#19 and anthropic-sdk-typescript#603 ("invalid base64
    // data"); Gemini "Base64 decoding failed"; oh-my-pi#389 (invalid base64-encoded value).
    r(&["invalid base64"], Class::MediaRejected),
    r(&["base64 decoding failed"], Class::MediaRejected),
    r(&["invalid base64-encoded value"], Class::MediaRejected),
    // See: openai/codex#3097 "does not represent a valid image"; codex#5346 "Expected a
    // base64-encoded data URL with an image MIME type"; codex#33011 image_url "Expected a
    // valid URL"; qwen-code#9291 "image media type not supported".
    r(&["does not represent a valid image"], Class::MediaRejected),
    r(&["expected a base64-encoded data url"], Class::MediaRejected),
    r(&["image_url'. expected a valid url"], Class::MediaRejected),
    r(&["image media type not supported"], Class::MediaRejected),
    r(&["unsupported mime type"], Class::MediaRejected),
    r(&["unsupported image"], Class::MediaRejected),
    r(&["invalid image"], Class::MediaRejected),
    // See: google-gemini/gemini-cli#5064 "Unable to process input image"; Gemini "Provided
    // image is not valid"; openclaw#36662 "does not contain a valid JPG, PNG, or WebP image".
    r(&["unable to process input image"], Class::MediaRejected),
    r(&["provided image is not valid"], Class::MediaRejected),
    r(&["not contain a valid jpg, png, or webp image"], Class::MediaRejected),
    r(&["unable to determine image format"], Class::MediaRejected),
    // See: boto/boto3#4415 (Bedrock "The provided image does not match the specified image
    // format"); NousResearch/hermes-agent#33536 ("Failed to sanitize image").
    r(&["provided image does not match"], Class::MediaRejected),
    r(&["failed to sanitize image"], Class::MediaRejected),
    // A model without vision: every image in the history fails the same way.
    // See: NousResearch/hermes-agent#23411 (OpenRouter 404 "No endpoints found that support
    // image input"); vllm-project/vllm#11629 ("image_url is only supported by certain
    // models"); cloudflare/cloudflare-os#97 ("this model does not support image input");
    // earendil-works/pi#8960 ("This model doesn't support the image field"); DayuanJiang/
    // next-ai-draw-io#55 (DeepSeek "unknown variant `image_url`").
    r(&["no endpoints found that support image"], Class::MediaRejected),
    r(&["image_url is only supported by certain models"], Class::MediaRejected),
    r(&["does not support image"], Class::MediaRejected),
    // sigoden/aichat#566 ("The current model does not support vision").
    r(&["does not support vision"], Class::MediaRejected),
    r(&["does not support the image"], Class::MediaRejected),
    r(&["unknown variant `image_url`"], Class::MediaRejected),
    // Model runners that could not decode the bytes. See: ollama/ollama#11320 ("failed to
    // process inputs: image: unknown format"); potato-os/core#89 (llama.cpp mtmd "failed to
    // decode image bytes"); abetlen/llama-cpp-python#1140 ("can't load image from bytes");
    // ggml-org/llama.cpp#12410 ("failed to load image"); vllm-project/vllm#19202 (Pillow
    // "cannot identify image file").
    r(&["failed to decode image"], Class::MediaRejected),
    r(&["image: unknown format"], Class::MediaRejected),
    r(&["cannot load image"], Class::MediaRejected),
    r(&["failed to load image"], Class::MediaRejected),
    r(&["cannot identify image file"], Class::MediaRejected),
    r(&["unidentifiedimageerror"], Class::MediaRejected),
];

/// Timeout and abort phrases, first among the transient ones: a timeout worded as an abort
/// is a timeout.
pub const TIMEOUT_PHRASES: &[Rule] = &[
    // See: Node.js DOMException TimeoutError "The operation was aborted due to timeout";
    // openai-node APIConnectionTimeoutError "Request timed out."; codex "idle timeout
    // waiting for SSE"; litellm timeout strings.
    r(&["aborted due to timeout"], Class::Timeout),
    r(&["timed out"], Class::Timeout),
    // Chromium's net errors: "net::ERR_CONNECTION_TIMED_OUT", "net::ERR_TIMED_OUT".
    r(&["timed_out"], Class::Timeout),
    r(&["timeout"], Class::Timeout),
    r(&["deadline exceeded"], Class::Timeout),
    r(&["gateway time-out"], Class::Timeout),
    // See: openai-node APIUserAbortError "Request was aborted."; DOM AbortError "This
    // operation was aborted"; gRPC CANCELLED.
    r(&["request was aborted"], Class::Aborted),
    r(&["operation was aborted"], Class::Aborted),
    r(&["user aborted"], Class::Aborted),
    r(&["cancelled by user"], Class::Aborted),
    r(&["canceled by user"], Class::Aborted),
    r(&["request was cancelled"], Class::Aborted),
    r(&["request was canceled"], Class::Aborted),
    // The adapters' own words for a user's cancel the agent recorded without an
    // error text: Codex `event_msg` `turn_aborted` ("turn aborted: interrupted"),
    // pi `stopReason: "aborted"` ("request aborted").
    r(&["turn aborted"], Class::Aborted),
    r(&["request aborted"], Class::Aborted),
    // Go's `context.Canceled`, the error every Go agent and gateway (crush, mcp-go, obot)
    // returns when the request's context is cancelled: the caller stopped waiting.
    // A context that ran out of time says "context deadline exceeded" (a timeout, above).
    r(&["context canceled"], Class::Aborted),
    r(&["context cancelled"], Class::Aborted),
];

/// The other transient phrases, in priority order: the cause (overload, rate limit) before
/// the network words a wrapper adds around it ("stream disconnected before completion: Rate
/// limit reached …", openai/codex#10055), then server errors.
pub const TRANSIENT_PHRASES: &[Rule] = &[
    // See: Anthropic 529 "Overloaded"; Gemini 503 "The model is overloaded."
    r(&["overloaded"], Class::Overloaded),
    r(&["over capacity"], Class::Overloaded),
    // See: Google's 503 "No capacity available for model …" (reason MODEL_CAPACITY_EXHAUSTED).
    r(&["no capacity available"], Class::Overloaded),
    // A service stating its load ("Our servers are experiencing high traffic right now,
    // please try again in a minute", the Antigravity agent, jlcodes99/vscode-antigravity-cockpit#178);
    // a guess ("This may be because of a period of high traffic", cursor/cursor#721) is not.
    r(&["experiencing high traffic"], Class::Overloaded),
    r(&["experiencing high demand"], Class::Overloaded),
    // A server saying it is busy or under load (DeepSeek's "The server is busy. Please try
    // again later."; written before batch 48): the same state in other words.
    r(&["server is busy"], Class::Overloaded),
    r(&["servers are busy"], Class::Overloaded),
    r(&["service is busy"], Class::Overloaded),
    r(&["system is busy"], Class::Overloaded),
    r(&["server busy"], Class::Overloaded),
    r(&["under heavy load"], Class::Overloaded),
    r(&["under high load"], Class::Overloaded),
    // "Our systems are a bit busy at the moment".
    r(&["a bit busy"], Class::Overloaded),
    r(&["busy at the moment"], Class::Overloaded),
    // "Selected model is at capacity. Please try a different model." (Warp): its capacity
    // used by everyone, as "over capacity".
    r(&["at capacity"], Class::Overloaded),
    // Chinese gateways' words for a load past what the upstream takes: "upstream load
    // saturated" (当前分组上游负载已饱和，请稍后再试, new-api), overloaded, busy.
    r(&["负载已饱和"], Class::Overloaded),
    r(&["负载过高"], Class::Overloaded),
    r(&["过载"], Class::Overloaded),
    r(&["繁忙"], Class::Overloaded),
    // See: Gemini CLI (Code Assist) 429 "You have exhausted your capacity on this model.
    // Your quota will reset after 2s." (reason RATE_LIMIT_EXCEEDED): the user's allowance,
    // lifted after the wait it names; a wait of hours makes it a quota (classify::mod).
    r(&["exhausted your capacity"], Class::RateLimit),
    // See: litellm is_error_str_rate_limit (rate limit, Mistral "service tier capacity
    // exceeded"); Gemini RESOURCE_EXHAUSTED; Bedrock "Too many tokens, please wait".
    r(&["rate limit"], Class::RateLimit),
    r(&["rate_limit"], Class::RateLimit),
    r(&["ratelimit"], Class::RateLimit),
    r(&["too many requests"], Class::RateLimit),
    r(&["throttl"], Class::RateLimit),
    // Chinese gateways' words: rate limit, requests too frequent, throttled ("gpt-5.1
    // 所有账号均已达速率限制，请 117 秒后重试", dwgx/WindsurfAPI#66).
    r(&["速率限制"], Class::RateLimit),
    // Too frequent (请求过于频繁, "request too frequent"; 访问过于频繁, "access too frequent").
    r(&["过于频繁"], Class::RateLimit),
    r(&["限流"], Class::RateLimit),
    r(&["resource exhausted"], Class::RateLimit),
    r(&["resource_exhausted"], Class::RateLimit),
    r(&["capacity exceeded"], Class::RateLimit),
    r(&["quota exceeded"], Class::RateLimit),
    r(&["please wait"], Class::RateLimit),
    // Google's generic 429 text, without its status (google-gemini/gemini-cli#19976).
    r(&["resource has been exhausted"], Class::RateLimit),
    // A failure the words place in the transport, whatever "internal error" they call it
    // ("Internal error occurred at transport layer", Warp's Agent Mode).
    r(&["transport layer"], Class::Network),
    r(&["transport error"], Class::Network),
    // OpenAI's own words for its server's failure, inside Codex's "stream disconnected
    // before completion: An error occurred while processing your request" (openai/codex#41895).
    r(&["error occurred while processing your request"], Class::ServerError),
    // An answer that was no JSON, as JavaScript's parser words it ("Unexpected token 'A',
    // \"An intern\"... is not valid JSON": an HTML or plain-text error page).
    r(&["unexpected token", "is not valid json"], Class::ServerError),
    // See: vercel/ai handle-fetch-error.ts ("fetch failed", ECONNRESET, ECONNREFUSED);
    // pi agent-session.ts _isRetryableError ("other side closed", "reset before headers");
    // codex "stream closed before response.completed"; openai-node "Connection error.".
    // Agents' own words for a provider they cannot reach (Cursor "We're having trouble
    // connecting to the model provider", "Connection failed. Please try again").
    r(&["trouble connecting"], Class::Network),
    r(&["issue connecting"], Class::Network),
    r(&["problem connecting"], Class::Network),
    r(&["error connecting"], Class::Network),
    // An agent that could not reach its provider (Cursor "We had a problem reaching
    // OpenAI…", cursor/cursor#721).
    r(&["problem reaching"], Class::Network),
    r(&["trouble reaching"], Class::Network),
    r(&["unable to reach"], Class::Network),
    r(&["could not reach"], Class::Network),
    r(&["failed to reach"], Class::Network),
    r(&["connection failed"], Class::Network),
    r(&["econnreset"], Class::Network),
    r(&["connection reset"], Class::Network),
    r(&["enotfound"], Class::Network),
    r(&["getaddrinfo"], Class::Network),
    r(&["econnrefused"], Class::Network),
    r(&["connection refused"], Class::Network),
    r(&["fetch failed"], Class::Network),
    // The browser's `TypeError: Failed to fetch`: the request never got an answer (CORS, a
    // blocked host, no route), as chat UIs print it (ChatGPTNextWeb/NextChat#3548
    // `{"error": true, "message": "Failed to fetch"}`).
    r(&["failed to fetch"], Class::Network),
    r(&["socket hang up"], Class::Network),
    r(&["stream ended unexpectedly"], Class::Network),
    r(&["stream closed before"], Class::Network),
    r(&["premature close"], Class::Network),
    r(&["other side closed"], Class::Network),
    r(&["upstream connect error"], Class::Network),
    r(&["reset before headers"], Class::Network),
    r(&["connection error"], Class::Network),
    r(&["network error"], Class::Network),
    // Open WebUI's "OpenAI: Network Problem"; Zed's "Error interacting with language model
    // not connected" (zed-industries/zed#18916).
    r(&["network problem"], Class::Network),
    r(&["not connected"], Class::Network),
    r(&["epipe"], Class::Network),
    r(&["unexpected eof"], Class::Network),
    // See: openai/codex#12207 ("stream disconnected before completion: error sending request
    // for url (…)"), openai/codex#22472 ("Transport error: network error: error decoding").
    r(&["error sending request"], Class::Network),
    // Go gateways' words for an HTTP call that never got an answer (one-api/new-api "do
    // request failed: upstream error: do request failed").
    r(&["do request failed"], Class::Network),
    // A stream event cut before its JSON ("Failed to parse Anthropic message stream event:
    // EOF while parsing a value at line 1 column 0", serde_json's words).
    r(&["eof while parsing"], Class::Network),
    // node-fetch's FetchError: "request to https://… failed, reason: ECONNRESET".
    r(&["request to", "failed, reason:"], Class::Network),
    // A stream chunk cut mid-string ("Error parsing item: {…chunk… SyntaxError: JSON Parse
    // error: Unterminated string").
    r(&["json parse error", "unterminated"], Class::Network),
    // Chromium's network errors (`net::ERR_NETWORK_CHANGED`, `net::ERR_HTTP2_PROTOCOL_ERROR`);
    // its timeouts are the timeout phrases' (`…_TIMED_OUT`).
    r(&["net::err_"], Class::Network),
    // Gemini CLI's words for a stream that ended without content ("Model stream was invalid
    // or completed without valid content"), as the table files its "ended with an invalid
    // chunk": a stream cut.
    r(&["completed without valid content"], Class::Network),
    // Claude Code's "API returned an empty or malformed response (HTTP 200) — check for a
    // proxy or gateway intercepting the request".
    r(&["empty or malformed response"], Class::Network),
    // WebKit's fetch failure ("Load failed"), after an app's prefix; not a model or file.
    ru(&["load failed"], &["model", "file", "image", "config", "plugin"], Class::Network),
    // Gemini CLI's words for a stream line it could not read ("Unexpected line format in
    // response: ,").
    r(&["unexpected line format"], Class::Network),
    r(&["stream disconnected before completion"], Class::Network),
    // A response cut before its content (Kilo Code's "The provider repeatedly ended the
    // response before returning usable output.", diegosouzapw/OmniRoute#8320).
    r(&["ended the response before"], Class::Network),
    r(&["response ended before"], Class::Network),
    r(&["response ended unexpectedly"], Class::Network),
    // See: undici "TypeError: terminated" with cause "SocketError: other side closed" (ericc-ch/
    // copilot-api#148, langchain-ai/langgraphjs#1887); httpx/httpcore "peer closed connection
    // without sending complete message body" (encode/httpx#1927), "Server disconnected
    // without sending a response" (BerriAI/litellm#13249).
    r(&["typeerror: terminated"], Class::Network),
    r(&["und_err_socket"], Class::Network),
    r(&["peer closed connection"], Class::Network),
    r(&["server disconnected"], Class::Network),
    r(&["incomplete chunked read"], Class::Network),
    // See: generic gateway pages (502 Bad Gateway, 503 Service Unavailable).
    r(&["internal server error"], Class::ServerError),
    r(&["internal error"], Class::ServerError),
    r(&["bad gateway"], Class::ServerError),
    r(&["service unavailable"], Class::ServerError),
    r(&["server error"], Class::ServerError),
    // See: openai/codex#48 "The server had an error while processing your request".
    r(&["server had an error"], Class::ServerError),
    // DashScope's `system_error` "An system error has occurred, please try again later."
    // (open-webui/open-webui#10737).
    r(&["system error"], Class::ServerError),
    // See: ollama/ollama#9968 ("llama runner process has terminated: exit status 2", a 500).
    r(&["runner process has terminated"], Class::ServerError),
];

/// Whole messages that are nothing but one word an agent records: matched against the
/// entire normalized text, so "aborted" inside a longer sentence does not count.
pub const WHOLE_MESSAGES: &[(&str, Class)] = &[
    // See: fitchmultz/pi-cursor-sdk#41 (pi shows a bare "Aborted"); Node http "Error: aborted"
    // and undici "terminated" are a cut stream, not a user's cancel (pi agent-session.ts
    // _isRetryableError lists "terminated").
    ("aborted", Class::Aborted),
    ("cancelled", Class::Aborted),
    ("canceled", Class::Aborted),
    ("interrupted", Class::Aborted),
    ("terminated", Class::Network),
    // An app's bare words for a stream or a fetch that failed: WebKit's `TypeError: Load
    // failed` is Safari's "Failed to fetch".
    ("stream error", Class::Network),
    ("load failed", Class::Network),
    ("error: aborted", Class::Network),
    ("error: terminated", Class::Network),
];

/// The last word when nothing else matched and no status is known.
pub const WEAK_PHRASES: &[Rule] = &[
    // See: research/classifiers.md §3.5 — an empty "400 status code (no body)" / "Bad Request"
    // is a deterministic client error, not an overflow.
    r(&["bad request"], Class::InvalidRequest),
    r(&["invalid request"], Class::InvalidRequest),
    // Kiro's "There was an error processing your request. (Request ID: …)", which its
    // maintainers file with the transient server errors (kirodotdev/Kiro#9062 → #6352): weak,
    // so an exception class the text names decides first (Azure App Service's "The app
    // encountered an error processing your request … <class 'openai.error.InvalidRequestError'>").
    r(&["error processing your request"], Class::ServerError),
    // "Provider returned error" says only that a router's upstream failed: after the status
    // a router states (OpenRouter's 429 and 400 under it), a server failure without one.
    r(&["provider returned error"], Class::ServerError),
    r(&["invalid argument"], Class::InvalidRequest),
    // The vocabulary of request validation, when nothing more specific matched and no
    // status is known. See: diffbot/code-gpt-docs#300 (Bedrock "Malformed input request:
    // … required key [max_tokens] not found"), boto/boto3#4463 ("Validation Error"),
    // editor-code-assistant/eca#231 (pydantic "Extra inputs are not permitted").
    r(&["malformed input"], Class::InvalidRequest),
    r(&["malformed request"], Class::InvalidRequest),
    // A model the request names that the server refuses by name (LibreChat's "Illegal model
    // request", danny-avila/LibreChat#2602).
    r(&["illegal model"], Class::InvalidRequest),
    r(&["invalid model"], Class::InvalidRequest),
    r(&["unknown model"], Class::InvalidRequest),
    r(&["validation error"], Class::InvalidRequest),
    r(&["required key"], Class::InvalidRequest),
    r(&["field required"], Class::InvalidRequest),
    r(&["extra inputs are not permitted"], Class::InvalidRequest),
    // OpenAI "Unsupported parameter: 'max_tokens' is not supported with this model"
    // (code `invalid_request_body`, caozhiyuan/copilot-api#164); Gemini "Invalid JSON payload received.
    // Unknown name \"additionalProperties\"" (glowingjade/obsidian-smart-composer#455).
    r(&["unsupported parameter"], Class::InvalidRequest),
    r(&["unknown parameter"], Class::InvalidRequest),
    r(&["invalid parameter"], Class::InvalidRequest),
    r(&["invalid params"], Class::InvalidRequest),
    r(&["invalid options"], Class::InvalidRequest),
    r(&["parameter check failed"], Class::InvalidRequest),
    r(&["unknown field"], Class::InvalidRequest),
    r(&["method not allowed"], Class::InvalidRequest),
    // A parameter illegal, wrong or invalid, in Chinese (Zhipu's "max_tokens参数非法").
    r(&["参数非法"], Class::InvalidRequest),
    r(&["参数错误"], Class::InvalidRequest),
    r(&["参数无效"], Class::InvalidRequest),
    r(&["parameter is invalid"], Class::InvalidRequest),
    r(&["parameter is illegal"], Class::InvalidRequest),
    // "You must provide a model parameter"; Anthropic's "max_tokens: 64000 > 32000, which is
    // the maximum allowed number of output tokens for …".
    r(&["must provide a"], Class::InvalidRequest),
    r(&["maximum allowed number of output tokens"], Class::InvalidRequest),
    // Bedrock's "The value at toolConfig.tools.26…type must be one of the following: object."
    r(&["must be one of the following"], Class::InvalidRequest),
    // "Unexpected value(s) for the `anthropic-beta` header".
    r(&["unexpected value"], Class::InvalidRequest),
    // A parameter wrong, in Chinese (Zhipu's 1210 "API 调用参数有误").
    r(&["参数有误"], Class::InvalidRequest),
    // OpenAI's bounds on a parameter ("14 is greater than the maximum of 1 - 'top_p'") and
    // its 404 for a path it does not serve ("Invalid URL (POST /v1/chat/completions)").
    r(&["greater than the maximum of"], Class::InvalidRequest),
    r(&["less than the minimum of"], Class::InvalidRequest),
    r(&["invalid url"], Class::InvalidRequest),
    r(&["request was malformed"], Class::InvalidRequest),
    // A client, model or API version the service has retired: waiting does not bring it
    // back ("This version of Antigravity is no longer supported. Please upgrade").
    r(&["no longer supported"], Class::InvalidRequest),
    r(&["has been deprecated"], Class::InvalidRequest),
    r(&["missing required parameter"], Class::InvalidRequest),
    r(&["unsupported model"], Class::InvalidRequest),
    r(&["unrecognized request argument"], Class::InvalidRequest),
    r(&["invalid json payload"], Class::InvalidRequest),
    // The error type of Anthropic's and OpenAI's every 400, in a body a wrapper quoted past
    // parsing (Robitx/gp.nvim#257, escaped quotes inside a quoted string).
    r(&["invalid_request_error"], Class::InvalidRequest),
    // A capability or setting the server refuses by name ("Provider agents not supported",
    // danny-avila/LibreChat#12699): waiting does not add it. Media refusals ("image input is
    // not supported") are decided earlier, by the media families.
    r(&["not supported"], Class::InvalidRequest),
];

/// gRPC status names (Gemini `error.status`), lowercased.
const GRPC: &[(&str, u16)] = &[
    // See: https://cloud.google.com/apis/design/errors#handling_errors (code ↔ HTTP mapping).
    ("invalid_argument", 400),
    ("failed_precondition", 400),
    ("out_of_range", 400),
    ("unauthenticated", 401),
    ("permission_denied", 403),
    ("not_found", 404),
    ("already_exists", 409),
    ("aborted", 409),
    ("resource_exhausted", 429),
    ("cancelled", 499),
    ("internal", 500),
    ("unknown", 500),
    ("data_loss", 500),
    ("unimplemented", 501),
    ("unavailable", 503),
    ("deadline_exceeded", 504),
];

/// Status implied by a symbolic code when no number is given.
const IMPLIED: &[(&str, u16)] = &[
    // See: https://docs.anthropic.com/en/api/errors (error types ↔ HTTP status).
    ("invalid_request_error", 400),
    ("authentication_error", 401),
    ("billing_error", 402),
    ("permission_error", 403),
    ("not_found_error", 404),
    ("request_too_large", 413),
    ("rate_limit_error", 429),
    ("api_error", 500),
    ("timeout_error", 504),
    ("overloaded_error", 529),
    // See: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html (Errors).
    ("validationexception", 400),
    ("accessdeniedexception", 403),
    ("resourcenotfoundexception", 404),
    ("modeltimeoutexception", 408),
    ("throttlingexception", 429),
    ("servicequotaexceededexception", 429),
    ("internalserverexception", 500),
    ("serviceunavailableexception", 503),
];

/// Whether `name` (lowercase) is a gRPC status name such as `invalid_argument`.
pub fn is_grpc_status(name: &str) -> bool {
    GRPC.iter().any(|(n, _)| *n == name)
}

/// The HTTP status a symbolic code stands for (`resource_exhausted` → 429), if any.
pub fn implied_status(code: &str) -> Option<u16> {
    // xAI spells Google's names with hyphens (`invalid-argument`).
    let code = code.to_ascii_lowercase().replace('-', "_");
    GRPC.iter().chain(IMPLIED).find(|(n, _)| *n == code).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_need_all_and_respect_unless() {
        assert_eq!(first_match(DETERMINISTIC_PHRASES, "prompt is too long: 1 > 0"), Some(Class::ContextOverflow));
        assert_eq!(first_match(DETERMINISTIC_PHRASES, "too many tokens, please wait"), None);
    }

    #[test]
    fn needles_are_lowercase_and_trimmed() {
        for table in [
            DETERMINISTIC_PHRASES,
            IMAGE_LIMIT_PHRASES,
            MEDIA_PHRASES,
            TIMEOUT_PHRASES,
            TRANSIENT_PHRASES,
            WEAK_PHRASES,
        ] {
            for rule in table {
                for n in rule.all.iter().chain(rule.unless) {
                    assert_eq!(*n, n.to_lowercase(), "{n}");
                    assert!(!n.contains("  "), "{n}");
                    // The haystack spells contractions out (`text::normalize`).
                    assert!(!n.contains("n't"), "{n} can never match");
                }
            }
        }
        for (c, _) in DETERMINISTIC_CODES.iter().chain(TRANSIENT_CODES) {
            assert_eq!(*c, c.to_lowercase());
        }
    }

    #[test]
    fn implied_statuses() {
        assert_eq!(implied_status("RESOURCE_EXHAUSTED"), Some(429));
        assert_eq!(implied_status("overloaded_error"), Some(529));
        assert_eq!(implied_status("ValidationException"), Some(400));
        assert_eq!(implied_status("nope"), None);
        assert_eq!(implied_status("invalid-argument"), Some(400));
    }
}
