//! Agents' own sentences for a provider error they do not print.
//!
//! An agent often replaces the provider's body with a sentence of its own ("API Error: 400
//! due to tool use concurrency issues." is all Claude Code shows for Anthropic's "`tool_use`
//! ids were found without `tool_result` blocks"). No vocabulary of the provider's is left in
//! it, so each known sentence is mapped to the class of the provider error it stands for,
//! with the agent and that error named for `--explain`. The provider's own words, when a
//! text carries them too, decide first (`decide.rs` lists these after the deterministic and
//! media signals, before the transient codes and the status).

use super::class::Class;

/// One agent's sentence: every needle present (normalized text), and what it wraps.
#[derive(Debug)]
pub struct Wording {
    pub agent: &'static str,
    pub all: &'static [&'static str],
    /// The provider error the agent prints this sentence for.
    pub wraps: &'static str,
    pub class: Class,
}

impl Wording {
    pub fn matches(&self, hay: &str) -> bool {
        self.all.iter().all(|n| hay.contains(n))
    }
}

/// The known sentences, most specific first.
pub const WORDINGS: &[Wording] = &[
    // See: anthropics/claude-code#21088, #9288 ("… Run /rewind to recover the conversation"),
    // #54638 (the same session's log holds Anthropic's "`tool_use` ids were found without
    // `tool_result` blocks immediately after"), #21088's comments ("tool_use ids must be unique").
    Wording {
        agent: "claude-code",
        all: &["due to tool use concurrency issues"],
        wraps: "Anthropic's 400 on tool_use / tool_result pairing (\"`tool_use` ids were found without `tool_result` blocks\")",
        class: Class::HistoryInvalid,
    },
    // Cline's (and its forks Roo Code's and Kilo Code's) words for a completion that came
    // back without an assistant message: an empty or cut response, which the agent itself
    // retries (cline/cline#1662, Kilo-Org/kilocode#6027).
    Wording {
        agent: "cline",
        all: &["the language model did not provide any assistant messages"],
        wraps: "a provider's empty or cut-off completion (no assistant content in a 200)",
        class: Class::ServerError,
    },
    // Zed's words for a 200 whose `choices` list is empty, what OpenRouter returns when the
    // upstream failed mid-request (zed-industries/zed#50573).
    Wording {
        agent: "zed",
        all: &["response contained no choices"],
        wraps: "a completion with an empty `choices` list (an upstream failure behind a router)",
        class: Class::ServerError,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needles_are_normalized_text() {
        for w in WORDINGS {
            assert!(!w.all.is_empty(), "{}", w.agent);
            for n in w.all {
                assert_eq!(*n, n.to_lowercase(), "{}", w.agent);
                assert!(!n.contains("n't") && !n.contains("  "), "{n} can never match");
            }
        }
    }
}
