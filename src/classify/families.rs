//! Term families: the vocabulary layer under the exact phrases of `signals`.
//!
//! A provider words the same failure many ways ("Corrupted thought signature", "Missing
//! `reasoning_content` field", "`thinking` blocks … cannot be modified"); an exact phrase
//! only knows the wording it was written for. A [`Family`] names the *kinds* of word a
//! failure needs — a reasoning term together with a defect term is replayed reasoning,
//! whatever the sentence around them — and the words that veto it where two families are
//! known to collide ("invalid reasoning_effort" is a bad parameter, not a replay).
//!
//! Matching is `str::contains` on the normalized haystack joined with the structured codes
//! (see `decide.rs`), so a family can see a Gemini `quotaId` as well as a message.

use super::class::Class;

/// A family matches when every group has at least one of its terms present and none of the
/// `unless` terms is.
#[derive(Debug)]
pub struct Family {
    /// Stable name, shown by `--explain` and used as the signal's id.
    pub name: &'static str,
    pub groups: &'static [&'static [&'static str]],
    pub unless: &'static [&'static str],
    pub class: Class,
}

impl Family {
    /// The terms found for each group, or `None` when a group has none or a veto is present.
    pub fn matches<'a>(&'a self, hay: &str) -> Option<Vec<&'a str>> {
        if self.unless.iter().any(|u| hay.contains(u)) {
            return None;
        }
        self.groups.iter().map(|g| g.iter().copied().find(|t| hay.contains(t))).collect()
    }

    /// `--explain`'s wording: the family and the terms that made it match.
    pub fn describe(&self, found: &[&str]) -> String {
        let terms: Vec<String> = found.iter().map(|t| format!("\"{t}\"")).collect();
        format!("{} ({})", self.name, terms.join(" + "))
    }
}

/// Words that name replayed reasoning.
const REASONING: &[&str] =
    &["thinking", "thought", "reasoning", "encrypted content", "encrypted_content", "redacted_thinking"];
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
    "could not be verified",
    "could not be decrypted",
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
    "thinking.type",
    "thinking_config",
    "thinkingconfig",
    "include_thoughts",
    "thinking_level",
    "thinking level",
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
    "number of function",
];
/// A tool *definition* problem (schema, name, choice), not a history one.
const TOOL_DEFINITION: &[&str] = &[
    "tools.",
    "tools[",
    "function name",
    "schema",
    "tool_choice",
    "invalid function",
    "not a valid tool",
    "function.name",
    "tool definition",
    "too many tools",
];

/// Roles out of order.
const ROLE_ORDER: &[&str] = &["successive", "consecutive", "must alternate", "interleave", "roles must"];
const ROLE: &[&str] = &["user", "assistant", "role", "message"];

/// Words for the request's token budget.
const PROMPT: &[&str] = &["prompt", "input", "context", "token", "messages"];
const WINDOW: &[&str] = &[
    "maximum model length",
    "max_model_len",
    "context length",
    "context window",
    "context size",
    "context limit",
    "too long and exceeds limit",
    "too long to fit",
];
const LONGER: &[&str] = &["longer than", "too long", "exceed", "greater than", "too large", "larger than"];
/// Throttling, not a window: Bedrock's "Too many tokens, please wait".
const RATE_WORDS: &[&str] = &["please wait", "rate limit", "per minute", "per min", "throttl", "(tpm)"];

/// Plan and billing words.
const PLAN: &[&str] = &[
    "credit",
    "balance",
    "billing",
    "quota",
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
    "free tier",
    "free_tier",
    "subscription",
    "payment",
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
    "more credits",
    "will reset",
    "resets",
    "limit: 0,",
];
/// A limit over a period longer than minutes, or none at all (a free tier with limit 0):
/// waiting minutes cannot lift it, whatever retry hint the provider adds.
const LONG_PERIOD: &[&str] =
    &["limit: 0,", "perday", "per day", "per_day", "daily", "permonth", "per month", "monthly", "weekly"];

/// A per-minute limit, or Gemini's generic 429 wording ("Resource has been exhausted (e.g.
/// check quota)"), which is a rate limit: the plan family does not apply.
const NOT_A_PLAN_LIMIT: &[&str] = &[
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
const BLOCKED: &[&str] =
    &["blocked", "block reason", "blockreason", "blockedreason", "filtered", "flagged", "intervened", "intervention"];
const POLICY: &[&str] = &[
    "prohibited",
    "content policy",
    "content_policy",
    "guardrail",
    "safety",
    "moderation",
    "content management",
    "usage polic",
    "responsibleai",
];

/// Deterministic families, in priority order, checked after the exact phrases.
pub const DETERMINISTIC: &[Family] = &[
    Family {
        name: "replayed reasoning rejected",
        groups: &[REASONING, REASONING_DEFECT],
        unless: REASONING_VETO,
        class: Class::ReasoningRejected,
    },
    Family {
        name: "tool calls and results do not pair",
        groups: &[TOOL, PAIRING],
        unless: TOOL_DEFINITION,
        class: Class::HistoryInvalid,
    },
    Family { name: "roles out of order", groups: &[ROLE_ORDER, ROLE], unless: &[], class: Class::HistoryInvalid },
    Family {
        name: "prompt longer than the window",
        groups: &[PROMPT, WINDOW, LONGER],
        unless: RATE_WORDS,
        class: Class::ContextOverflow,
    },
    Family {
        name: "refused by a content policy",
        groups: &[BLOCKED, POLICY],
        unless: &[],
        class: Class::ContentPolicy,
    },
    Family {
        name: "plan or billing limit over a long period",
        groups: &[PLAN, LONG_PERIOD],
        unless: &["perminute", "per minute", "per_minute"],
        class: Class::Quota,
    },
    Family {
        name: "plan or billing allowance used up",
        groups: &[PLAN, EXHAUSTED],
        unless: NOT_A_PLAN_LIMIT,
        class: Class::Quota,
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
    "document",
    "audio",
    "video",
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
    "not a valid",
    "not valid",
    "exceeds",
    "too large",
    "failed to decode",
    "cannot",
    "can't",
    "could not",
    "unable to",
    "not compiled",
    "corrupt",
    "malformed",
    "does not support",
    "doesn't support",
];
/// Counted media.
const MEDIA_COUNT: &[&str] = &["image items", "image(s)", "images", "media items", "pdf pages"];
const TOO_MANY: &[&str] =
    &["but passed", "may be provided", "too many", "maximum of", "exceeding the maximum", "at most"];

/// Media families (gated like media phrases: a client error, a stream error, or a local
/// server's 5xx).
pub const MEDIA_FAMILIES: &[Family] = &[
    Family {
        name: "too many media items",
        groups: &[MEDIA_COUNT, TOO_MANY],
        unless: &["encoder cache"],
        class: Class::ImageLimit,
    },
    Family {
        name: "an attachment the model cannot take",
        groups: &[MEDIA, MEDIA_DEFECT],
        unless: RATE_WORDS,
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
        class: Class::Overloaded,
    },
    Family {
        name: "a concurrency or rate limit",
        groups: &[&["concurrency limit", "rate limit", "rate_limit", "too many requests"]],
        unless: &[],
        class: Class::RateLimit,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn first(table: &[Family], hay: &str) -> Option<Class> {
        table.iter().find(|f| f.matches(hay).is_some()).map(|f| f.class)
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
    fn terms_are_lowercase() {
        for f in DETERMINISTIC.iter().chain(MEDIA_FAMILIES).chain(TRANSIENT) {
            for t in f.groups.iter().flat_map(|g| g.iter()).chain(f.unless) {
                assert_eq!(*t, t.to_lowercase(), "{}", f.name);
            }
        }
    }
}
