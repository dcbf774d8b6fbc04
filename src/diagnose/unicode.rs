//! A lone surrogate escape in the history (`"\ud83c"`: what `JSON.stringify`
//! writes of a string cut inside an emoji). The agents read it, Anthropic's
//! JSON parser refuses it ("no low surrogate in string", "invalid high
//! surrogate in string"), and since the record is history every request sends
//! it again. The reader names each line holding one (`line.lone_surrogate`);
//! `repair` puts U+FFFD in its place and keeps the record.

use crate::classify::Class;
use crate::model::Session;

use super::Failure;

/// Whether the provider refused the request for a lone surrogate.
pub fn refused(failure: &Failure) -> bool {
    let c = &failure.classification;
    c.class == Class::HistoryInvalid
        && c.message.as_deref().is_some_and(|m| m.to_ascii_lowercase().contains("surrogate"))
}

/// The lines the reader found a lone surrogate escape on, in order.
pub fn lines(session: &Session) -> Vec<u64> {
    let mut lines: Vec<u64> =
        session.findings.iter().filter(|f| f.code == Some("line.lone_surrogate")).map(|f| f.line).collect();
    lines.sort_unstable();
    lines.dedup();
    lines
}

/// What `diagnose` says of a refusal for a lone surrogate: the lines that hold
/// one and the cure, or, when none does, where the broken character is instead.
pub fn note(lines: &[u64]) -> String {
    match lines {
        [] => "no line of the session holds a lone surrogate escape: the broken character is in what the agent adds to every request (its system prompt, a CLAUDE.md, a plugin's or hook's context), which no copy of the session changes; remove it there".into(),
        [line] => format!(
            "line {line} holds a lone surrogate escape (half of a character cut in two), which every request sends again; `repair` writes a copy with U+FFFD in its place, the record kept"
        ),
        many => format!(
            "{} lines hold a lone surrogate escape (half of a character cut in two: lines {}), which every request sends again; `repair` writes a copy with U+FFFD in their place, each record kept",
            many.len(),
            crate::text::units::first_few(many)
        ),
    }
}
