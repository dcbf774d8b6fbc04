//! Term families: the vocabulary layer under the exact phrases of `signals`.
//!
//! A provider words the same failure many ways ("Corrupted thought signature", "Missing
//! `reasoning_content` field", "`thinking` blocks … cannot be modified"); an exact phrase
//! only knows the wording it was written for. A [`Family`] names the *kinds* of word a
//! failure needs — a reasoning term together with a defect term is replayed reasoning,
//! whatever the sentence around them — and the words that veto it where two families are
//! known to collide ("invalid `reasoning_effort`" is a bad parameter, not a replay).
//!
//! Matching is `str::contains` on the normalized haystack joined with the structured codes
//! (see `decide.rs`), so a family can see a Gemini `quotaId` as well as a message.

use super::class::Class;
use super::signals::RATE_WORDS;

/// A family matches when every group has at least one of its terms present and none of the
/// `unless` terms is.
#[derive(Debug)]
pub struct Family {
    /// Stable name, shown by `--explain` and used as the signal's id.
    pub name: &'static str,
    pub groups: &'static [&'static [&'static str]],
    pub unless: &'static [&'static str],
    /// When set, every group's term must occur within this many bytes of a term of the
    /// first group: the words must be *about* each other ("invalid API key", "credentials
    /// are invalid"), not merely in the same text ("Invalid model format or no credentials").
    pub near: Option<usize>,
    pub class: Class,
}

impl Family {
    /// The terms found for each group, or `None` when a group has none or a veto is present.
    pub fn matches<'a>(&'a self, hay: &str) -> Option<Vec<&'a str>> {
        if self.unless.iter().any(|u| hay.contains(u)) {
            return None;
        }
        match self.near {
            None => self.groups.iter().map(|g| g.iter().copied().find(|t| hay.contains(t))).collect(),
            Some(within) => self.matches_near(hay, within),
        }
    }

    /// The first occurrence of a first-group term such that every other group has a term
    /// starting within `within` bytes before it or after its end.
    fn matches_near<'a>(&'a self, hay: &str, within: usize) -> Option<Vec<&'a str>> {
        let (first, rest) = self.groups.split_first()?;
        for term in first.iter().copied() {
            for (at, _) in hay.match_indices(term) {
                let mut start = at.saturating_sub(within);
                while !hay.is_char_boundary(start) {
                    start -= 1;
                }
                let last = at + term.len() + within;
                let near = |t: &&str| hay[start..].match_indices(*t).any(|(p, _)| start + p <= last);
                let others: Option<Vec<&str>> = rest.iter().map(|g| g.iter().copied().find(near)).collect();
                if let Some(mut found) = others {
                    found.insert(0, term);
                    return Some(found);
                }
            }
        }
        None
    }

    /// `--explain`'s wording: the family and the terms that made it match.
    pub fn describe(&self, found: &[&str]) -> String {
        let terms: Vec<String> = found.iter().map(|t| format!("\"{t}\"")).collect();
        format!("{} ({})", self.name, terms.join(" + "))
    }
}

/// Words that name replayed reasoning.
const REASONING: &[&str] = &[
    "thinking",
    "thought",
    "reasoning",
    "encrypted content",
    "encrypted_content",
    "redacted_thinking",
    "previous response",
    "previous_response",
];
/// Words that say a replayed item is damaged, missing or altered. "invalid" only as a word:
/// `invalid_request_error` is a type, and model names say "…-thinking".
const REASONING_DEFECT: &[&str] = &[
    "signature",
    "corrupt",
    "invalid ",
    "invalid.",
    "invalid `",
    "is invalid",
    "not valid",
    "missing",
    "cannot be modified",
    "must remain as they were",
    "not found",
    "must be passed back",
    // "could not be verified", "could not be decrypted", and "The encrypted content for
    // item … couldn't be vertified" (Kilo-Org/kilocode#4552): a replayed item the server
    // cannot take back, however the verb is spelled.
    "could not be",
    "but found",
    "without its required",
    // "The final block in an assistant message cannot be `thinking`" (a reply cut after
    // its thinking, anthropics/claude-code#10199).
    "final block",
    // The signature by another spelling: "the tool history has no signed thinking block
    // to replay" (farion1231/cc-switch#5383).
    "signed",
    // A thinking block where the request's setting does not take one, or none where it
    // needs one: "When thinking is disabled, an `assistant` message in the final position
    // cannot contain `thinking`" (tailcallhq/forgecode#1853), "a final `assistant`
    // message must start with a thinking block" (OpenRouterTeam/ai-sdk-provider#162).
    "final position",
    "cannot contain",
    "must start with a thinking",
    "must begin with a thinking",
    "first block must be",
    // Replayed encrypted reasoning another caller was given ("reasoning `encrypted_content`
    // was not issued to this caller", anomalyco/opencode#48773).
    "not issued to",
];
/// Reasoning *settings* rather than replayed reasoning: a bad parameter, not a replay.
const REASONING_VETO: &[&str] = &[
    "budget",
    "effort",
    "not supported",
    "unsupported",
    "does not support",
    "extra inputs",
    "unrecognized",
    "thinking.type:",
    "thinking_config",
    "thinkingconfig",
    "include_thoughts",
    "thinking_level",
    "thinking level",
    // A list of the part types an API takes, `thinking` among them ("invalid value:
    // `document`, supported values are: `text`, `thinking`, …"): the refused value is another.
    "supported values are",
    // A JSON syntax error quoting the body it could not read ("Invalid JSON payload
    // received. Expected , or } … \"thoughtSignatur"): the JSON, not a replay.
    "invalid json payload",
];

/// Words for a tool call or its result.
const TOOL: &[&str] = &[
    "tool_result",
    "tool_use",
    "tool result",
    "tool use",
    "function call",
    "function response",
    "functioncall",
    "functionresponse",
    "tool call",
    "tool_call",
    "tool message",
    "toolresult",
    "tooluse",
    "tool output",
    "function_call_output",
];
/// Words that say calls and results do not pair up.
const PAIRING: &[&str] = &[
    "did not find",
    "not the same number",
    "matching number",
    "must be followed",
    "ids were found without",
    "corresponding",
    "no tool call found",
    "no tool output found",
    "preceding",
    "preceeding",
    "immediately after",
    "must have a response",
    "orphan",
    "does not match the number",
    "the number of",
];
/// A result answering a call the history does not hold, however the id is
/// spelled around it (MiniMax "tool result's tool id(call_…) not found").
const RESULT: &[&str] =
    &["tool result", "tool_result", "toolresult", "function response", "tool output", "function_call_output"];
const CALL_ID: &[&str] = &["tool id", "call id", "call_id", "tool_use_id", "tool_call_id", "tool_use id", "id("];
const NOT_THERE: &[&str] = &["not found", "no such", "unknown", "does not exist"];

/// A call id repeated or malformed: a stored call of the history, which a
/// repair re-ids or drops ("`tool_use` ids must be unique",
/// "`messages.1.content.1.tool_use.id`: String should match pattern").
const ID_DEFECT: &[&str] = &[
    "ids must be unique",
    "id must be unique",
    "duplicate id",
    "duplicate tool",
    "duplicated id",
    "id already exists",
    "more than once",
    ".id: string should match",
    "_id: string should match",
    "id should match pattern",
];

/// A tool *definition* problem (schema, name, choice), not a history one.
const TOOL_DEFINITION: &[&str] = &[
    "tools.",
    "tools[",
    "function.name:",
    "schema",
    "tool_choice",
    "invalid function",
    "not a valid tool",
    "function.name:",
    "tool definition",
    "too many tools",
];

/// Roles out of order.
/// Mistral names the role it did not expect ("Unexpected role 'user' after role 'tool'",
/// type `invalid_request_message_order`).
/// Alternation in any form: Bedrock's "must alternate between user and assistant roles",
/// Perplexity's "user and assistant roles should be alternating" (perplexityai/api-discussion#265).
const ROLE_ORDER: &[&str] = &[
    "successive",
    "consecutive",
    "alternate",
    "alternating",
    "alternation",
    "interleave",
    "roles must",
    "unexpected role",
    "message_order",
    // Baidu's "the length of messages must be an odd number": user and assistant alternate,
    // from the user's.
    "must be an odd number",
];
const ROLE: &[&str] = &["user", "assistant", "role", "message"];
/// A message where the API does not take it ("A conversation must start with a
/// user message", Bedrock; "The final message must be a user message").
const POSITION: &[&str] = &[
    "must start with a",
    "must begin with a",
    "must end with a",
    // Gemini's "Please ensure that multiturn requests ends with a user role or a function
    // response."
    "ends with a user",
    "first message must",
    "final message must",
    "last message must",
];
const ROLE_MESSAGE: &[&str] = &["user message", "assistant message", "user turn", "user role", "assistant role"];
/// A request field the API does not take, refused by name.
const REFUSED_FIELD: &[&str] = &[
    "extra inputs are not permitted",
    "extra_forbidden",
    "unrecognized request argument",
    "unknown parameter",
    "unrecognized parameter",
    // Google's proto JSON: "Invalid JSON payload received. Unknown name \"outputMimeType\" at
    // 'generation_config.image_config': Cannot find field." (agentjido/req_llm#517).
    "unknown name",
    "cannot find field",
    // Bedrock's schema: "extraneous key [response_mime_type] is not permitted".
    "extraneous key",
];
/// Parameters that cannot go together: how the client builds its request.
const CONFLICT: &[&str] =
    &["cannot both be specified", "mutually exclusive", "cannot be used together", "cannot be set together"];

/// Words for the request's token budget.
const PROMPT: &[&str] = &["prompt", "input", "context", "token", "messages"];
const WINDOW: &[&str] = &[
    "maximum model length",
    "maximum prompt length",
    "maximum number of tokens",
    "token count",
    "for requested model",
    "max_model_len",
    "context length",
    "context window",
    "context size",
    "context limit",
    // SiliconFlow "max_total_tokens (172191) must be less than or equal to max_seq_len
    // (131072)" (bytedance/deer-flow#376), "length of prompt_tokens (…) must be less than
    // max_seq_len" (bytedance/deer-flow#125).
    "max_seq_len",
    "maximum sequence length",
    "max sequence length",
    "too long and exceeds limit",
    "too long to fit",
    // GLM "Prompt exceeds max length" (code 1261); sglang "Input length (160062 tokens)
    // exceeds the maximum allowed length (59862 tokens)". A string's own limit says
    // "maximum length" (the size family's) and is vetoed below.
    "max length",
    "maximum allowed length",
    // "Message exceeds token limit." (VS Code Copilot Chat); a token limit per minute or
    // per day is a rate limit or a quota (vetoed).
    "token limit",
    // llama.cpp's and LM Studio's window: "Cannot truncate prompt with n_keep (15028) >=
    // n_ctx (7424)" (anomalyco/opencode#11141). Kiro's "Context limit exceeded
    // unexpectedly" is `context limit` above.
    "n_ctx",
];
/// A length of the input held to a stated range: DashScope's "Range of input length
/// should be [1, 204800]" (QwenLM/qwen-code#98), the model's own maximum exceeded
/// (Moonshot "model max length exceeded, max length:8192").
const INPUT_LENGTH: &[&str] =
    &["input length", "prompt length", "length of input", "length of prompt", "model max length"];
const HELD_TO: &[&str] = &[
    "range of",
    "should be [",
    "must be [",
    "should be in [",
    "must be in [",
    "should be between",
    "must be between",
    "exceed",
];

/// The input's tokens held to a bound: Text Generation Inference's "Input validation error:
/// `inputs` tokens + `max_new_tokens` must be <= 8192" and "`inputs` must have less than
/// 4096 tokens" (huggingface/chat-ui#1149, meta-llama/llama#1103). The bound alone on
/// `max_new_tokens` is a parameter, not the window: the input must be named.
const INPUT_TOKENS: &[&str] = &["inputs", "input tokens", "prompt tokens", "input_tokens", "prompt_tokens"];
const AT_MOST: &[&str] = &[
    "must be <=",
    "must be less than",
    "must have less than",
    "must not exceed",
    "must be at most",
    "less than or equal to",
];

/// Over the window, or the servers' advice that says so ("load the model with a larger
/// context length", "provide a shorter input").
const LONGER: &[&str] = &[
    "longer than",
    "too long",
    "exceed",
    "greater than",
    "too large",
    "larger than",
    "a larger context",
    "shorter input",
    // "Codex ran out of room in the model's context window."
    "out of room",
    "must be less than",
    // A prompt the server cannot cut to the window (llama.cpp "Cannot truncate prompt …").
    "cannot truncate",
];
/// A count of the prompt set against the window: "Prompt has 49202 tokens, but the
/// configured context size is 49152 tokens" (aaif-goose/goose#11048).
const PROMPT_COUNT: &[&str] = &["prompt has", "input has", "request has", "request contains", "you requested"];

/// Plan and billing words. Not "quota" alone: Google names every limit a quota, most of
/// them per minute ("Quota exceeded for …`online_prediction_requests_per_base_model`").
const PLAN: &[&str] = &[
    "credit",
    "balance",
    "billing",
    "spending limit",
    "spend limit",
    "budget",
    "usage limit",
    "session limit",
    "weekly limit",
    "monthly limit",
    "daily limit",
    "plan limit",
    "hit your limit",
    "no quota",
    "extra usage",
    "free tier",
    "free_tier",
    "free trial",
    // "Free Usage Exceeded, Subscribe To Go" (opencode's free models).
    "free usage",
    "subscription",
    // A plan, package (Zhipu's 1311 "订阅套餐暂未开放GLM-5权限，请开通": the plan has not
    // opened the model; please subscribe).
    "套餐",
    "payment",
    "recharge",
    "top up",
    // A free allowance the provider allots (Qwen OAuth's daily requests: "429 Free allocated
    // quota exceeded.", QwenLM/qwen-code#1742; DashScope's "The free quota has been
    // exhausted"): used up, it is the plan's limit, whatever the 429 says.
    "free quota",
    "free allocated",
    "allocated quota",
    // Copilot's plan unit ("You have exceeded your premium request allowance. We have
    // automatically switched you to GPT-4.1 which is included with your plan",
    // earendil-works/pi#3643).
    "premium request",
    "request allowance",
    // Chinese providers' billing words (Zhipu code 1113 "余额不足或无可用资源包,请充值",
    // "您的账户已欠费，请充值后重试"): balance, recharge, arrears, resource package.
    "余额",
    "充值",
    "欠费",
    "资源包",
];
/// Words that say the allowance is used up.
const EXHAUSTED: &[&str] = &[
    "exhausted",
    "exceeded",
    "insufficient",
    "too low",
    "reached",
    "hit your",
    "run out",
    "ran out",
    "depleted",
    "not enough",
    "requires more",
    // xAI 403 "Your newly created teams doesn't have any credits yet" (griptape-ai/griptape-nodes-engine#1079).
    "does not have any",
    "no quota",
    "is required",
    // "Usage credits are required for long context requests" (a 429 `rate_limit_error` that
    // waiting does not lift).
    "are required",
    "more credits",
    "will reset",
    "resets",
    "limit: 0,",
    // "insufficient", "in arrears", "please recharge" in Chinese.
    "不足",
    "欠费",
    "请充值",
    // Not opened, not activated, please activate.
    "未开放",
    "未开通",
    "请开通",
];
/// A limit over a period longer than minutes, or none at all (a free tier with limit 0):
/// waiting minutes cannot lift it, whatever retry hint the provider adds.
const LONG_PERIOD: &[&str] = &[
    "limit: 0,",
    "perday",
    "per day",
    "per_day",
    // OpenRouter's "Rate limit exceeded: free-models-per-day".
    "per-day",
    "daily",
    "permonth",
    "per month",
    "per-month",
    "monthly",
    "weekly",
    "tpd",
    "rpd",
];

/// A per-minute limit, or Gemini's generic 429 wording ("Resource has been exhausted (e.g.
/// check quota)"), which is a rate limit: the plan family does not apply.
const NOT_A_PLAN_LIMIT: &[&str] = &[
    // "You've hit your session rate limit. Please upgrade your plan or wait a moment for
    // your limit to reset": a wait of moments is a rate limit, whatever upgrade it offers.
    "wait a moment",
    "per minute",
    "per_minute",
    "perminute",
    "per min",
    "(tpm)",
    "(rpm)",
    "retry in",
    "retrydelay",
    "resource has been exhausted",
    "check quota",
];

/// Words for a refusal, and words for the policy behind it.
const BLOCKED: &[&str] = &[
    "blocked",
    // A response cut by the filter: "Incomplete response returned, reason: content_filter".
    "reason: content_filter",
    "block reason",
    "blockreason",
    "blockedreason",
    "filtered",
    "flagged",
    "intervened",
    "intervention",
    "rejected",
    "violat",
    "refus",
    // "may contain content that is not allowed by our safety system".
    "not allowed",
];
const POLICY: &[&str] = &[
    "prohibited",
    "content policy",
    "content_policy",
    "guardrail",
    "safety",
    "moderation",
    "content management",
    "content filtering",
    // Gemini's finish reason for output that recites its training data, and Copilot's
    // filter of the same ("the response matched public code so it was blocked").
    "recitation",
    "public code",
    // Claude Code's "Claude's safeguards flagged this message
    // (https://www.anthropic.com/legal/aup)": the provider's acceptable use policy.
    "safeguard",
    "legal/aup",
    "acceptable use",
    // "blocked by the content filter", Azure's `content_filter` code spelled as words.
    "content filter",
    "content_filter",
    "usage polic",
    "responsibleai",
];

/// An empty message or block: a history the agent must mend. Not an empty attachment.
const EMPTY: &[&str] = &[
    "must be non-empty",
    "cannot be empty",
    "must not be empty",
    "must have non-empty",
    "must have either content",
    // Gemini: "Unable to submit request because it has an empty text parameter."
    "has an empty",
    // A Go client's nil content (Copilot: "invalid message content type <nil>").
    "content type <nil>",
    // Bedrock Converse: "The text field in the ContentBlock object at messages.15.content.0
    // is blank" (aws-samples/bedrock-engineer#8).
    // Not "is empty": a wrapper says its own "response is empty" (Robitx/gp.nvim#257).
    "is blank",
    // Anthropic's "text content blocks must contain non-whitespace text".
    "non-whitespace",
    // Zhipu's 1214 "messages:输入不能为空" (the input cannot be empty).
    "不能为空",
    // None at all where one is needed: "at least one message is required", Bedrock's
    // "requires at least one non-system message".
    "at least one",
];
const EMPTY_OF: &[&str] = &["content", "message", "text", "parts", "toolresult", "tool_result"];
/// Not an empty message: an attachment, or a tool definition ("tools[0].type: type cannot be
/// empty", Zhipu's 1214 about the request's tools).
const EMPTY_VETO: &[&str] = &["image", "pdf", "document", "base64", "audio", "video", "tools[", "tools."];

/// The request's size in bytes, not tokens.
const SIZE: &[&str] = &[
    "payload",
    "request size",
    "request entity",
    "body size",
    "at 'body'",
    "string too long",
    "maximum length",
    "bytes",
    // "The request is too large to send through CAPI … (6.6 MB request; 5.0 MB limit)".
    "request is too large",
    "mb limit",
    // Kiro's gateway: "Failed to buffer the request body: length limit exceeded"
    // (kirodotdev/Kiro#10773).
    "request body",
    // "total message size 2100954 exceeds limit 2097152" (a gateway's cap on the body).
    "message size",
    "total size",
];
/// Over the size, including AWS's constraint wording ("Value at 'body' failed to satisfy
/// constraint: Member must have length less than or equal to 25000000").
const OVER_SIZE: &[&str] =
    &["exceeds", "too large", "too long", "maximum size", "length less than or equal to", "length limit exceeded"];
const SIZE_VETO: &[&str] = &["image", "pdf", "document", "context window", "token"];

/// Credentials.
const CREDENTIAL: &[&str] = &[
    "api key",
    // A chat UI's own gate ("empty access code", NextChat).
    "access code",
    // Baidu's and Volcengine's key pairs ("no enough credential found, use any one of
    // (access_key, secret_key)").
    "access_key",
    "access key",
    "secret_key",
    "secret key",
    // LobeChat's `InvalidProviderAPIKey` error type, joined into the codes lowercase.
    "apikey",
    "api-key",
    "authenticate",
    "api_key",
    "x-api-key",
    "credential",
    "permission",
    "access to the model",
    "unauthorized",
    "unauthenticated",
    "forbidden",
    "oauth",
    // A token the client refreshes or sends for the user ("Failed to refresh token: 400 Bad
    // Request: Invalid 'refresh_token'", jlcodes99/cockpit-tools#2232).
    "refresh_token",
    "refresh token",
    "access token",
    "access_token",
];
const REFUSED_CREDENTIAL: &[&str] = &[
    "invalid",
    "not able to",
    "unable to",
    "not valid",
    "expired",
    "denied",
    "does not have",
    "do not have",
    "unauthorized",
    "unauthenticated",
    "forbidden",
    "incorrect",
    // "OAuth token has been revoked. Please obtain a new token." (anomalyco/opencode#164).
    "revoked",
    "obtain a new",
    // None sent at all ("No credentials for provider: github").
    "no credential",
    "missing credential",
    // A refresh the auth server refused ("Failed to refresh token", "Token refresh failed").
    "failed to refresh",
    "refresh failed",
    // None sent: "Groq API key is missing", "API Key is not provided".
    "is missing",
    "not provided",
    "not set",
    // Incorrect, invalid, empty, expired in Chinese ("API Key 不正确或为空", LobeChat).
    "不正确",
    "无效",
    "为空",
    "过期",
    "empty",
    "not correct",
    "no enough",
    // "Did not find anthropic_api_key, please add an environment variable"; "The api_key
    // client option must be set".
    "did not find",
    "must be set",
    "must provide",
    // None sent, in the words that name the key ("No API key provided").
    "no api key",
    "no api_key",
];
/// How far (bytes) an item's id and "not found" may stand from "item with id": past the id
/// itself (an `rs_` id is 50 characters) and its quotes, no further.
const ITEM_ID_NEAR: usize = 80;
/// How far (bytes) a refusal may stand from the credential it refuses.
const CREDENTIAL_NEAR: usize = 20;
/// `extra_forbidden` is pydantic's unknown-field error; plan words are quota.
const CREDENTIAL_VETO: &[&str] = &["extra_forbidden", "not permitted", "quota", "credit", "rate limit", "billing"];

/// Limits named by period (see [`LONG_PERIOD`]).
const PLAN_OR_LIMIT: &[&str] = &[
    "credit",
    "balance",
    "billing",
    "quota",
    "spending limit",
    "budget",
    "usage limit",
    "plan",
    "free tier",
    "free_tier",
    "token limit",
    "request limit",
    // A rate limit counted per day ("organization TPD rate limit", Moonshot): waiting
    // minutes does not lift it.
    "rate limit",
];

/// A thing the request names that is not there: a deployment, a model, an endpoint. Waiting
/// does not create it, whatever "please wait a moment" the text adds (Azure's
/// `DeploymentNotFound`).
const MISSING: &[&str] = &[
    "does not exist",
    "may not exist",
    "not found",
    "no endpoints found",
    "could not route to",
    "no route for",
    // "The model … is not available on your Bedrock deployment" (Claude Code).
    "not available on your",
];
const RESOURCE: &[&str] =
    &["deployment", "model", "resource", "endpoint", "entity", "object identifier", "/v1/", "/ai/"];

/// Deterministic families, in priority order, checked after the exact phrases.
pub const DETERMINISTIC: &[Family] = &[
    Family {
        name: "replayed reasoning rejected",
        groups: &[REASONING, REASONING_DEFECT],
        unless: REASONING_VETO,
        near: None,
        class: Class::ReasoningRejected,
    },
    // A replayed Responses item the provider does not hold: "Item with id 'rs_…' not found.
    // Items are not persisted when `store` is set to false" (anomalyco/opencode#7724), and the
    // same 404 for a reply's text or call item, `msg_…` or `fc_…` (an `item_reference` the AI
    // SDK sends under `store: true`, anomalyco/opencode's zen handler; 404s logged by
    // ShreyasPatel031/openai-realtime-elkjs-tool). One cure for all three:
    // `--drop-reasoning-ids` drops the ids so the items replay self-contained. An item looked
    // up in a stored conversation ("… not found in conversation") is not a replay.
    Family {
        name: "a replayed item the provider does not hold",
        groups: &[&["item with id"], &["rs_", "msg_", "fc_"], &["not found"]],
        unless: &["not found in conversation"],
        near: Some(ITEM_ID_NEAR),
        class: Class::ReasoningRejected,
    },
    // An input item (a replayed reasoning or message item, by id) the server gave another
    // connection or caller: Copilot's "input item ID does not belong to this connection"
    // (github/copilot-cli#4505, a resumed session's stale ids). Dropping the replayed ids is
    // the cure, as for an `rs_…` that is "not found".
    Family {
        name: "a replayed item issued to another connection",
        groups: &[
            &["item id", "item_id", "input item", "encrypted_content", "encrypted content", "reasoning item"],
            &["does not belong to this", "not issued to this", "belongs to another", "issued to another"],
        ],
        unless: &[],
        near: None,
        class: Class::ReasoningRejected,
    },
    Family {
        name: "tool calls and results do not pair",
        groups: &[TOOL, PAIRING],
        unless: TOOL_DEFINITION,
        near: None,
        class: Class::HistoryInvalid,
    },
    Family {
        name: "a result whose call is not there",
        groups: &[RESULT, CALL_ID, NOT_THERE],
        unless: TOOL_DEFINITION,
        near: None,
        class: Class::HistoryInvalid,
    },
    // A role the API takes nowhere in the list ("Unexpected role \"system\". The Messages API
    // accepts a top-level `system` parameter", Robitx/gp.nvim#257) is how the client builds
    // its request, not an order a repair of the history mends.
    Family {
        name: "a call id repeated or malformed",
        groups: &[TOOL, ID_DEFECT],
        unless: &["tools.", "tools[", "schema", "tool_choice", "tool definition", "tool names", "function names"],
        near: None,
        class: Class::HistoryInvalid,
    },
    // A system message the API or the model's chat template takes only first (Qwen's
    // templates: "System message must be at the beginning"): how the client builds its
    // request (several system parts), not a history a repair mends.
    Family {
        name: "a system message out of place",
        groups: &[
            &["system message", "system prompt", "system role"],
            &["at the beginning", "must be first", "must come first", "must be the first", "only the first"],
        ],
        unless: &[],
        near: None,
        class: Class::InvalidRequest,
    },
    Family {
        name: "a message where the API does not take it",
        groups: &[POSITION, ROLE_MESSAGE],
        unless: &["top-level `system`", "role \"system\"", "role 'system'"],
        near: None,
        class: Class::HistoryInvalid,
    },
    Family {
        name: "parameters that cannot go together",
        groups: &[CONFLICT],
        unless: &[],
        near: None,
        class: Class::InvalidRequest,
    },
    // Ahead of the media families: a tool the API does not offer ("The requested
    // tool image_generation is not supported", param `tools`) and a field refused
    // by name ("Extra inputs are not permitted, field: 'vl_high_resolution_images'")
    // are the request's, whatever their names say.
    Family {
        name: "a tool the API does not offer",
        groups: &[&["requested tool"], &["not supported", "unsupported", "not available", "does not exist"]],
        unless: &[],
        near: None,
        class: Class::InvalidRequest,
    },
    // A capability the model lacks: tools offered to a model without tool support
    // ("registry.ollama.ai/library/gemma3:4b does not support tools", a 400 Ollama types
    // `api_error`, louisho5/picobot#6). Every request offers the tools again; not media.
    Family {
        name: "tools offered to a model without tool support",
        groups: &[
            &["does not support", "not supported", "unsupported"],
            &["tools", "tool use", "tool calling", "tool calls", "function calling"],
        ],
        unless: &["image", "vision", "pdf", "audio", "video", "tool_result", "tool result", "tools."],
        near: None,
        class: Class::InvalidRequest,
    },
    Family {
        name: "a request field refused by name",
        groups: &[REFUSED_FIELD],
        unless: &[],
        near: None,
        class: Class::InvalidRequest,
    },
    Family {
        name: "roles out of order",
        groups: &[ROLE_ORDER, ROLE],
        unless: &["top-level `system`", "role \"system\"", "role 'system'"],
        near: None,
        class: Class::HistoryInvalid,
    },
    Family {
        name: "an empty message",
        groups: &[EMPTY_OF, EMPTY],
        unless: EMPTY_VETO,
        near: None,
        class: Class::HistoryInvalid,
    },
    Family {
        name: "prompt longer than the window",
        groups: &[PROMPT, WINDOW, LONGER],
        unless: RATE_WORDS,
        near: None,
        class: Class::ContextOverflow,
    },
    // A chat UI's words for the window: "The message you submitted was too long, please
    // reload the conversation", "Conversation is too long, please start a new chat". What is
    // too long is the conversation or the prompt, not a name, file or field.
    Family {
        name: "a conversation too long for the model",
        groups: &[
            &[
                "conversation",
                "this message",
                "chat history",
                "message you submitted",
                "your message",
                "your prompt",
                "prompt is",
                "input is",
            ],
            &["too long"],
        ],
        unless: &["name", "title", "file", "image", "url", "description", "field"],
        near: Some(30),
        class: Class::ContextOverflow,
    },
    Family {
        name: "input length outside the model's range",
        groups: &[INPUT_LENGTH, HELD_TO],
        unless: RATE_WORDS,
        near: None,
        class: Class::ContextOverflow,
    },
    Family {
        name: "input tokens held to a bound",
        groups: &[INPUT_TOKENS, AT_MOST, &["token"]],
        unless: RATE_WORDS,
        near: None,
        class: Class::ContextOverflow,
    },
    Family {
        name: "prompt counted against the window",
        groups: &[PROMPT_COUNT, WINDOW],
        unless: RATE_WORDS,
        near: None,
        class: Class::ContextOverflow,
    },
    Family {
        name: "request larger than the size limit",
        groups: &[SIZE, OVER_SIZE],
        unless: SIZE_VETO,
        near: None,
        class: Class::PayloadTooLarge,
    },
    Family {
        name: "refused by a content policy",
        groups: &[BLOCKED, POLICY],
        unless: &[],
        near: None,
        class: Class::ContentPolicy,
    },
    // Content a provider's filter calls sensitive or unsafe: MiniMax's `new_sensitive`,
    // new-api's "sensitive words detected", Zhipu's 1301 "…可能包含不安全或敏感内容".
    Family {
        name: "sensitive content refused",
        groups: &[&["sensitive", "敏感", "不安全"], &["content", "word", "input", "detected", "new_sensitive", "内容"]],
        unless: &["case sensitive", "case-sensitive", "sensitive data"],
        near: Some(20),
        class: Class::ContentPolicy,
    },
    Family {
        name: "plan or billing limit over a long period",
        groups: &[PLAN_OR_LIMIT, LONG_PERIOD],
        unless: &["perminute", "per minute", "per_minute"],
        near: None,
        class: Class::Quota,
    },
    Family {
        name: "plan or billing allowance used up",
        groups: &[PLAN, EXHAUSTED],
        unless: NOT_A_PLAN_LIMIT,
        near: None,
        class: Class::Quota,
    },
    Family {
        name: "a plan limit an upgrade lifts",
        groups: &[&["upgrade"], &["limit", "quota", "to continue", "to pro", "your plan", "subscription"]],
        unless: NOT_A_PLAN_LIMIT,
        near: None,
        class: Class::Quota,
    },
    Family {
        name: "credentials refused",
        groups: &[CREDENTIAL, REFUSED_CREDENTIAL],
        unless: CREDENTIAL_VETO,
        // The refusal next to the credential it refuses ("Invalid OpenAI Credentials", "API
        // key not valid"), not a sentence away from a credential it merely mentions
        // ("Invalid model format or no credentials for provider", nesquena/hermes-webui#5940).
        near: Some(CREDENTIAL_NEAR),
        class: Class::Auth,
    },
    // Access refused for where the user is, not for what the request says ("This model
    // provider doesn't serve your region", cursor/cursor#3378; OpenAI's 403 "Country, region,
    // or territory not supported"): no retry and no fix to the request lifts it.
    // A model the service does not offer, whatever status a gateway gives it ("Model
    // hy3-preview-free not supported" under a 401): naming another model fixes it, new
    // credentials do not. Not a feature the model lacks (images, tools, a parameter).
    Family {
        name: "a model the service does not offer",
        groups: &[
            &["model", "模型"],
            // "The provided model identifier is invalid." (Bedrock through an SDK).
            &["not supported", "is unsupported", "identifier is invalid", "无可用渠道", "no available channel"],
        ],
        unless: &[
            "image",
            "pdf",
            "document ",
            "base64",
            "audio",
            "video",
            "vision",
            "tool",
            "function",
            "parameter",
            "feature",
            "stream",
            "param",
            "region",
            "location",
            "country",
            "support image",
        ],
        near: Some(40),
        class: Class::InvalidRequest,
    },
    Family {
        name: "the user's region refused",
        groups: &[
            &[
                "your region",
                "your country",
                "your location",
                "your territory",
                "region, or territory",
                "user location",
            ],
            &["does not serve", "not supported", "not available", "unsupported", "not allowed"],
        ],
        unless: &[],
        near: Some(CREDENTIAL_NEAR),
        class: Class::Auth,
    },
    // A header the request must carry ("anthropic-version: header is required", Portkey's
    // "Either x-portkey-config or x-portkey-provider header is required", mlflow/mlflow#24391);
    // a credential's header is `auth`.
    Family {
        name: "a required header missing",
        groups: &[&["header"], &["is required", "are required", "missing required", "required header"]],
        unless: &["api key", "api_key", "api-key", "authorization", "credential", "token", "auth"],
        near: None,
        class: Class::InvalidRequest,
    },
    Family {
        name: "the model or resource does not exist",
        groups: &[MISSING, RESOURCE],
        // "No endpoints found that support image input" is a media failure; a model *name*
        // may say "image" ("gpt-5.4-image-2").
        unless: &["support image", "image input", "image_url", "vision", "file"],
        near: None,
        class: Class::InvalidRequest,
    },
];

/// Words for one attachment or the model's media input.
const MEDIA: &[&str] = &[
    "image",
    "base64",
    "data:",
    "data url",
    "data uri",
    "mime",
    "file type",
    "media type",
    "media_type",
    "multimodal",
    "mmproj",
    "projector",
    "content part",
    "pdf",
    "file bytes",
    "inline_data",
    "inlinedata",
    // A document as a word, not the "documentation" an error points to ("Permitted models
    // can be found in the documentation").
    "document ",
    "document.",
    "document,",
    "document:",
    "document_",
    "documents",
    "audio",
    "video",
    // Gemini's `file_data.file_uri` ("Invalid or unsupported file uri: https://…jpg",
    // BoundaryML/baml#1548).
    "file uri",
    "file_uri",
];
/// A media item fetched by URL: named, or known by its file name's extension.
const FETCHED: &[&str] = &[
    "image",
    "multimodal",
    "media",
    "pdf",
    "document ",
    "document.",
    "documents",
    ".png",
    ".jpg",
    ".jpeg",
    ".webp",
    ".gif",
    "video",
    "audio",
];
/// Words that say it cannot be taken.
const MEDIA_DEFECT: &[&str] = &[
    "illegal",
    "invalid ",
    "invalid.",
    "invalid `",
    "is invalid",
    "not supported",
    "unsupported",
    // Vertex "400 Image input modality is not enabled for <model>" (google/generative-ai-docs#513).
    "not enabled",
    "not a valid",
    "not valid",
    "exceeds",
    "too large",
    "too big",
    // Held to a minimum size ("The image you provided is too small").
    "too small",
    // "An error occurred while processing the image".
    "while processing the",
    "error processing the",
    "failed to decode",
    "cannot",
    "could not",
    "unable to",
    "not compiled",
    "corrupt",
    "malformed",
    "does not support",
    // "currently we don't support image url: …png" (a route that takes no image by URL).
    "do not support",
    // A local server without its vision projector ("…not configured with a mmproj module").
    "not configured with",
    // An image block spelled in a way it does not take ("must be a URL … or base64 encoded").
    "must be a url",
    "failed to",
    "unknown format",
    "does not match",
    "appears to be a",
    "has no pages",
    // Held to a list of image types ("MIME type must be image/png, image/jpeg, …",
    // EvanZhouDev/gemini-ai#3) or to requirements it does not meet (DashScope "The image
    // length and width do not meet the model restrictions", QwenLM/qwen-code#2505).
    "must be image/",
    "should be image/",
    "must be 'image/",
    "should be 'image/",
    "do not meet",
    "does not meet",
];
/// Counted media.
/// Kiro counts "inline media segments" ("too many inline media segments: 101 exceeds
/// limit 100", issue 38).
const MEDIA_COUNT: &[&str] = &[
    "image items",
    "image(s)",
    "images",
    "media items",
    "media segments",
    "pdf pages",
    "image count",
    "one image",
    "single image",
    // "supports at most 1 image per prompt" (Moonshot via OpenRouter).
    "image per",
    "images per",
    // A chat UI's own cap on what one message carries ("Too many files attached").
    "attachments",
    "files attached",
    "attached files",
];
const TOO_MANY: &[&str] = &[
    "but passed",
    "may be provided",
    "too many",
    "maximum of",
    "exceeding the maximum",
    "at most",
    "exceeds limit",
    // "Your message will exceed the maximum image count for this chat" (claude.ai).
    "exceed the maximum",
    "only supports one",
    "only supports a single",
    "maximum number of",
];

/// Media families (gated like media phrases: a client error, a stream error, or a local
/// server's 5xx).
pub const MEDIA_FAMILIES: &[Family] = &[
    Family {
        name: "too many media items",
        groups: &[MEDIA_COUNT, TOO_MANY],
        unless: &["encoder cache"],
        near: None,
        class: Class::ImageLimit,
    },
    Family {
        name: "an attachment the model cannot take",
        groups: &[MEDIA, MEDIA_DEFECT],
        unless: RATE_WORDS,
        near: None,
        class: Class::MediaRejected,
    },
    // A URL the request names that the provider cannot fetch: every request names it
    // again ("Timeout while downloading url: http://192.168…png", param `image_url`,
    // coze-dev/coze-studio#577; DashScope "Download multimodal file timed out",
    // labring/FastGPT#4393). Media families count only for a client error or no status.
    Family {
        name: "an attachment the provider cannot fetch",
        groups: &[
            // DashScope's "Error checking URL: HTTPConnectionPool(…): Max retries exceeded
            // with url: /bucket/frame_1109.jpg" under its 400.
            &["download", "fetch", "retriev", "checking url", "with url"],
            FETCHED,
            &["timeout", "timed out", "failed", "could not", "unable", "max retries exceeded"],
        ],
        unless: RATE_WORDS,
        near: None,
        class: Class::MediaRejected,
    },
    // A chat API downloads nothing but the attachments the request names by URL: a failed
    // download is one of them, named or not (OpenAI "Error while downloading …",
    // openai/openai-python#2790). Not Node's "fetch failed" (the client's own request).
    Family {
        name: "a download the provider could not make",
        groups: &[&[
            "while downloading",
            "error downloading",
            "failed to download",
            "download failed",
            "unable to download",
            "could not download",
            "cannot download",
        ]],
        unless: RATE_WORDS,
        near: None,
        class: Class::MediaRejected,
    },
];

/// Transient families, checked before the wrapper's network words: a cut stream that
/// reports a rate limit is a rate limit.
pub const TRANSIENT: &[Family] = &[
    Family {
        name: "too many connections",
        groups: &[&["too many connections", "too many concurrent connections"]],
        unless: &[],
        near: None,
        class: Class::Overloaded,
    },
    Family {
        name: "a concurrency or rate limit",
        groups: &[&[
            "concurrency limit",
            // "Request limit exceeded." under a 429 a router wrapped as its own `api_error`.
            "request limit exceeded",
            "requests limit exceeded",
            "rate limit",
            "rate_limit",
            "ratelimit",
            "too many requests",
            "throttl",
            "please wait",
            "capacity exceeded",
            "resource exhausted",
            "resource_exhausted",
            "quota exceeded",
        ]],
        unless: &["overloaded"],
        near: None,
        class: Class::RateLimit,
    },
    // A limit per minute or second, used up: "Tokens per minute limit exceeded - too many
    // tokens processed." (Cerebras, continuedev/continue#9800). Waiting lifts it.
    Family {
        name: "a per-minute limit used up",
        groups: &[
            &[
                "per minute",
                "per min",
                "per second",
                "(tpm)",
                "(rpm)",
                "perminute",
                "max rpm",
                "max tpm",
                "rpm limit",
                "tpm limit",
            ],
            &["limit exceeded", "exceeded", "limit reached", "too many", "reached"],
        ],
        unless: &["per day", "daily", "per month", "monthly"],
        near: None,
        class: Class::RateLimit,
    },
];

/// Transient families checked after the transient phrases: the broad vocabulary of a
/// cancel, a failed connection and a failed server, for wordings no phrase knows.
pub const LATE: &[Family] = &[
    Family {
        name: "the request was cancelled",
        groups: &[
            &["abort", "cancel", "client closed request", "interrupted by", "stopped by"],
            &["request", "operation", "user", "client", "turn", "task"],
        ],
        // "AI response error; aborting request: 400 …": the client giving up on an error
        // is no cancel.
        unless: &["timeout", "timed out", "aborting"],
        near: None,
        class: Class::Aborted,
    },
    Family {
        name: "the connection failed",
        groups: &[
            &[
                "connection",
                "connect",
                "socket",
                "stream",
                "network",
                "transport",
                "getaddrinfo",
                "econn",
                "enotfound",
                "epipe",
                "und_err",
                "ssl",
                "tls",
            ],
            &[
                "reset",
                "refused",
                "closed",
                "ended",
                "disconnect",
                "hang up",
                "terminat",
                "enotfound",
                "getaddrinfo",
                "error sending",
                "error decoding",
                "unexpected eof",
                "premature",
                // "proxy error: Failed to read connection".
                "failed to read",
                // "The connection to the server was lost", "stream interrupted",
                // "connection dropped": a transport that went away mid-request.
                "lost",
                "interrupted",
                "dropped",
                "handshake",
                "unreachable",
            ],
        ],
        unless: &[],
        near: None,
        class: Class::Network,
    },
    // A host that cannot be reached or named, or a server that never answered: no word of
    // the request's, so the next try may pass.
    Family {
        name: "the host did not answer or the transport failed",
        groups: &[&[
            // Chromium's and Firefox's own: "net::ERR_NAME_NOT_RESOLVED", "NetworkError when
            // attempting to fetch resource.", "Error in input stream" (a transport that
            // failed: "transport layer" is a phrase, ahead of the "internal error" it may say).
            "name_not_resolved",
            // Java's HttpClient: "HTTP/1.1 header parser received no bytes".
            "received no bytes",
            // A network error, unreachable, abnormal, in Chinese.
            "网络错误",
            "网络不通",
            "网络异常",
            "host not found",
            "could not connect",
            "unable to connect",
            "cannot connect",
            "failed to connect",
            "internet_disconnected",
            "networkerror",
            "error in input stream",
            "network is unreachable",
            "host unreachable",
            "no route to host",
            "could not resolve host",
            "name resolution",
            "name or service not known",
            "no response from",
            "no response received",
            "did not respond",
            "not responding",
        ]],
        unless: &[],
        near: None,
        class: Class::Network,
    },
    Family {
        name: "the server failed",
        groups: &[&[
            "bad gateway",
            "service unavailable",
            "temporarily unavailable",
            "internal server error",
            "internal error",
            "server error",
            "server had an error",
            "error occurred while processing your request",
            "runner process has terminated",
            // A gateway's upstream that failed, a model still loading (Hugging Face's 503
            // "Model … is currently loading"), an answer with nothing in it: the provider's
            // side, and the next try may pass.
            "upstream error",
            "upstream request failed",
            "upstream failed",
            "currently loading",
            "model is loading",
            // Ollama's "an unknown error was encountered while running the model"; Bedrock's
            // ServiceUnavailableException "Bedrock is unable to process your request".
            "while running the model",
            // Jan's "Failed to start model: … failed to load".
            "failed to start model",
            "unable to process your request",
            // Not "response is empty": a wrapper says it of a body it failed to read
            // (Robitx/gp.nvim#257, whose body is Anthropic's 400).
            "empty response",
            // Copilot Chat's "Sorry, no response was returned."
            "no response was returned",
            "returned no response",
            // A local server that cannot load the model it was asked for.
            "failed to load model",
            "model failed to load",
            "invalid response from",
            // node-fetch's "invalid json response body at … reason: Unexpected end of JSON
            // input": the server's answer was no JSON.
            "invalid json response",
            // Go's JSON decoder on an answer that was no JSON (one-api's
            // `unmarshal_response_body_failed`: "invalid character '<' looking for beginning
            // of value", an HTML error page from upstream).
            "looking for beginning of value",
            "empty completion",
            // A local server that cannot load the model: "model requires more system memory
            // (164.8 GiB) than is available" (Ollama's 500).
            "more system memory",
            "out of memory",
            "insufficient memory",
        ]],
        unless: &["bad request"],
        near: None,
        class: Class::ServerError,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn first(table: &[Family], hay: &str) -> Option<Class> {
        table.iter().find(|f| f.matches(hay).is_some()).map(|f| f.class)
    }

    /// Wordings written before batch 48 was harvested, from the classes' definitions: a
    /// transport that went away, a host that never answered, a provider that answered
    /// nothing, a content filter. Each was `unknown` before.
    #[test]
    fn the_broad_vocabulary_of_transient_failures_and_filters() {
        let late = |hay: &str| first(LATE, hay);
        assert_eq!(late("the connection to the server was lost"), Some(Class::Network));
        assert_eq!(late("ssl handshake failed"), Some(Class::Network));
        assert_eq!(late("stream interrupted"), Some(Class::Network));
        assert_eq!(late("no response from server"), Some(Class::Network));
        assert_eq!(late("could not resolve host: api.openai.com"), Some(Class::Network));
        assert_eq!(late("the model is currently loading, please try again later"), Some(Class::ServerError));
        assert_eq!(late("empty response from model"), Some(Class::ServerError));
        assert_eq!(late("upstream request failed"), Some(Class::ServerError));
        assert_eq!(first(DETERMINISTIC, "the request was blocked by the content filter"), Some(Class::ContentPolicy));
        let det = |hay: &str| first(DETERMINISTIC, hay);
        assert_eq!(det("conversation is too long, please start a new chat"), Some(Class::ContextOverflow));
        assert_eq!(det("the message you submitted was too long, please reload"), Some(Class::ContextOverflow));
        assert_eq!(det("the tool name is too long"), None);
    }

    #[test]
    fn any_replayed_item_id_not_found_is_a_replay_the_provider_does_not_hold() {
        for hay in [
            "item with id 'rs_68c1a7f0b' not found. items are not persisted when `store` is set to false.",
            "item with id 'msg_0ead8b004a3b165d0069436a6b6834819896da85b63b196a3f' not found.",
            "404 item with id 'fc_68746e56c49c81a0ab141d66f059de6e0c8acdddfc55f836' not found",
        ] {
            assert_eq!(first(DETERMINISTIC, hay), Some(Class::ReasoningRejected), "{hay}");
        }
        // A stored conversation's item looked up by id is no replay; nor is an id far away.
        assert_eq!(first(DETERMINISTIC, "item with id 'msg_nonexistent123' not found in conversation."), None);
        let far = format!("item with id 'x1' was sent; {} msg_2 not found", "word ".repeat(30));
        assert_eq!(first(DETERMINISTIC, &far), None);
    }

    #[test]
    fn a_region_the_provider_does_not_serve_is_auth_and_a_premium_allowance_used_up_quota() {
        let hay = "model not available this model provider does not serve your region. visit https://docs.cursor.com/account/regions";
        assert_eq!(first(DETERMINISTIC, hay), Some(Class::Auth));
        assert_eq!(first(DETERMINISTIC, "country, region, or territory not supported"), Some(Class::Auth));
        assert_eq!(first(DETERMINISTIC, "the model is not available in us-west-1; pick another region"), None);
        let hay = "you have exceeded your premium request allowance. we have automatically switched you to gpt-4.1";
        assert_eq!(first(DETERMINISTIC, hay), Some(Class::Quota));
    }

    #[test]
    fn a_refused_token_refresh_is_auth() {
        let hay = "failed to refresh token: 400 bad request: invalid 'refresh_token': empty string.";
        assert_eq!(first(DETERMINISTIC, hay), Some(Class::Auth));
    }

    #[test]
    fn reasoning_needs_a_defect_and_no_setting() {
        assert_eq!(first(DETERMINISTIC, "corrupted thought signature."), Some(Class::ReasoningRejected));
        assert_eq!(
            first(DETERMINISTIC, "missing `reasoning_content` field in the assistant message at message index 2"),
            Some(Class::ReasoningRejected)
        );
        assert_eq!(first(DETERMINISTIC, "invalid reasoning effort: extreme"), None);
        assert_eq!(first(DETERMINISTIC, "thinking.budget_tokens: input should be greater than or equal to 1024"), None);
    }

    #[test]
    fn a_token_limit_is_the_window_unless_it_is_per_period() {
        assert_eq!(first(DETERMINISTIC, "error: message exceeds token limit."), Some(Class::ContextOverflow));
        assert_eq!(
            first(DETERMINISTIC, "codex ran out of room in the model's context window."),
            Some(Class::ContextOverflow)
        );
        assert_ne!(
            first(DETERMINISTIC, "500 - token limit (500,000 per day) exceeded. used: 508,311 tokens."),
            Some(Class::ContextOverflow)
        );
    }

    #[test]
    fn quota_and_rate_limit_by_period() {
        assert_eq!(
            first(
                DETERMINISTIC,
                "you exceeded your current quota … free_tier_requests, limit: 0, model: x. please retry in 25s"
            ),
            Some(Class::Quota)
        );
        assert_eq!(
            first(
                DETERMINISTIC,
                "rate limit reached … on tokens per minute (tpm) … upgrade at console.groq.com/settings/billing"
            ),
            None
        );
        assert_eq!(first(DETERMINISTIC, "claude ai usage limit reached|1762952400"), Some(Class::Quota));
    }

    #[test]
    fn the_input_held_to_a_bound_is_the_window_but_not_the_output_alone() {
        assert_eq!(
            first(DETERMINISTIC, "input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048."),
            Some(Class::ContextOverflow)
        );
        assert_eq!(first(DETERMINISTIC, "input validation error: `max_new_tokens` must be <= 192"), None);
    }

    #[test]
    fn billing_words_in_chinese_are_plan_words() {
        assert_eq!(first(DETERMINISTIC, "429 余额不足或无可用资源包,请充值。"), Some(Class::Quota));
        assert_eq!(first(DETERMINISTIC, "您的账户已欠费，请充值后重试。"), Some(Class::Quota));
    }

    #[test]
    fn a_required_header_is_a_bad_request_unless_it_is_the_credential() {
        assert_eq!(first(DETERMINISTIC, "anthropic-version: header is required"), Some(Class::InvalidRequest));
        assert_ne!(first(DETERMINISTIC, "x-api-key header is required"), Some(Class::InvalidRequest));
    }

    #[test]
    fn credentials_are_refused_only_by_a_word_next_to_them() {
        assert_eq!(first(DETERMINISTIC, "error: invalid openai credentials"), Some(Class::Auth));
        assert_eq!(first(DETERMINISTIC, "oauth token has been revoked. please obtain a new token."), Some(Class::Auth));
        // A refusal a sentence away from a credential the text merely mentions.
        assert_ne!(
            first(DETERMINISTIC, "invalid value for 'temperature'. set it in the settings next to your api key."),
            Some(Class::Auth)
        );
    }

    #[test]
    fn terms_are_lowercase() {
        for f in DETERMINISTIC.iter().chain(MEDIA_FAMILIES).chain(TRANSIENT).chain(LATE) {
            for t in f.groups.iter().flat_map(|g| g.iter()).chain(f.unless) {
                assert_eq!(*t, t.to_lowercase(), "{}", f.name);
                assert!(!t.contains("n't"), "{t} can never match: the haystack spells contractions out");
            }
        }
    }
}
