//! The acceptance boundary and the suspects it leaves, ranked.

use crate::classify::Class;
use crate::media::Verdict;
use crate::model::{Origin, Role, Session};

use super::blocks;
use super::{Boundary, Failure, Suspect};

/// What [`pick`] found.
pub struct Picked {
    pub suspects: Vec<Suspect>,
    pub boundary: Option<Boundary>,
    pub notes: Vec<String>,
}

/// Classes where an attachment can be to blame; for the others (auth, rate
/// limits, …) only attachments whose bytes fail validation are listed.
fn media_class(c: Class) -> bool {
    matches!(
        c,
        Class::MediaRejected | Class::ImageLimit | Class::PayloadTooLarge | Class::InvalidRequest | Class::Unknown
    )
}

/// Do two model ids name the same model? Agents write `anthropic/claude-x`,
/// `anthropic:claude-x` and `claude-x` for one model.
fn same_model(a: &str, b: &str) -> bool {
    let bare = |m: &str| -> String {
        let m = m.rsplit(['/', ':']).find(|s| !s.is_empty() && !s.chars().all(|c| c.is_ascii_digit())).unwrap_or(m);
        m.to_ascii_lowercase()
    };
    a.eq_ignore_ascii_case(b) || bare(a) == bare(b)
}

/// Does the provider's message speak of images, and of no other kind of media?
fn names_images_only(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("image") && !["pdf", "document", "file", "media", "attachment"].iter().any(|w| m.contains(w))
}

/// The suspects of `failure` (or of the next request when none), by the
/// acceptance boundary of `model`, ranked: the block the provider named, then
/// bytes that fail validation, then the rest.
pub fn pick(
    session: &Session,
    failure: Option<&Failure>,
    failing_entry: Option<usize>,
    model: Option<&str>,
    request: Option<&blocks::Request<'_>>,
) -> Picked {
    let mut notes = Vec::new();
    let end = failing_entry.unwrap_or(session.entries.len());
    let accepted_by = |i: usize| {
        let e = &session.entries[i];
        e.role == Role::Assistant
            && e.accepted
            && e.error.is_none()
            && match (model, e.model.as_deref()) {
                (Some(m), Some(em)) => same_model(m, em),
                // An answer whose model is not recorded counts for any model.
                _ => true,
            }
    };
    let boundary = (0..end).rev().find(|&i| accepted_by(i));
    let boundary_info = boundary.map(|i| Boundary {
        line: session.entries[i].line,
        model: session.entries[i].model.as_deref().map(str::to_string),
    });
    match (boundary, model) {
        (Some(i), _) => {
            // An answer that holds its tools' results (mux, Gemini CLI) sent them only later.
            let own = session.attachments.iter().any(|a| a.entry == i && a.origin == Origin::ToolResult);
            notes.push(format!(
                "suspects are the attachments after the answer on line {}{}, the last request {} accepted",
                session.entries[i].line,
                if own { " (its own tool results included, which went out after it)" } else { "" },
                model.unwrap_or("the model")
            ))
        }
        (None, Some(m)) => notes.push(format!(
            // Not "never in this session": a compaction replaces the answers before it.
            "{m} accepted no request of the history sent now (a new session, a model switch, or a compaction that replaced what came before): every attachment is a suspect"
        )),
        (None, None) => notes.push("no request was ever accepted: every attachment is a suspect".into()),
    }

    let class = failure.map(|f| f.classification.class);
    // The accepted answer's own tool results (kept inside it by some agents)
    // went out only with the next request: they are suspects too.
    let after = |i: usize| {
        let a = &session.attachments[i];
        boundary.is_none_or(|b| a.entry > b || (a.entry == b && a.origin == Origin::ToolResult))
    };
    // A provider that says it could not process an *image* blames no healthy
    // PDF (one whose bytes fail validation stays: the next request fails on it).
    let images_only = failure.is_some_and(|f| {
        f.classification.class == Class::MediaRejected
            && f.classification.message.as_deref().is_some_and(names_images_only)
    });
    // Excluded by the user, or healed away by the agent itself: not in the next request.
    let gone = |i: usize| !session.attachments[i].sent();
    let active = |i: usize| {
        let a = &session.attachments[i];
        !gone(i) && (!images_only || a.is_image() || a.verdict == Verdict::Invalid)
    };
    let mut chosen: Vec<usize> = (0..session.attachments.len()).filter(|&i| active(i) && after(i)).collect();
    let answered = (0..session.attachments.len()).any(|i| gone(i) && after(i));
    let healed: Vec<&str> = (0..session.attachments.len())
        .filter(|&i| session.attachments[i].healed && !session.attachments[i].excluded && after(i))
        .map(|i| session.attachments[i].reference.as_str())
        .collect();
    // Suspects the model did accept, listed because the failure is about media.
    let mut widened = false;
    // The block the provider named, in the request the agent sends.
    let block = failure.and_then(|f| f.classification.block.as_deref());
    let named: Vec<usize> = block.map(|b| blocks::locate(b, session, request)).unwrap_or_default();
    let named_live: Vec<usize> = named.iter().copied().filter(|&i| !gone(i)).collect();
    if let (Some(b), false, true) = (block, named.is_empty(), named_live.is_empty()) {
        // What the provider named is gone from the next request: the user excluded
        // it (a note there), or the agent healed it (a placeholder); only bytes that
        // fail validation are still to blame.
        if named.iter().all(|&i| !session.attachments[i].excluded) {
            notes.push(format!(
                "the agent healed the rejection itself: it no longer sends the block the provider named ({b}), a placeholder goes in its place"
            ));
        } else {
            notes.push(format!(
                "the block the provider named ({b}) is excluded: the next request carries a note in its place"
            ));
        }
        chosen.retain(|&i| session.attachments[i].verdict == Verdict::Invalid);
    } else if named_live.is_empty() {
        // A path that maps to nothing says nothing: the suspects are chosen as
        // if the provider had named no block (never "nothing left to blame").
        if let Some(b) = block {
            notes.push(format!(
                "the provider names {b}, which holds no attachment in the request as this agent builds it: the suspects are chosen as if it named none"
            ));
        }
        if chosen.is_empty() && !healed.is_empty() {
            notes.push(format!(
                "the agent healed the rejection itself: it no longer sends {} (a placeholder goes in its place), so the next request differs",
                healed.join(", ")
            ));
        } else if chosen.is_empty() && answered {
            notes.push(
                "every attachment the model had not accepted is excluded: the next request carries notes in their place"
                    .into(),
            );
        } else if chosen.is_empty() && class.is_some_and(|c| matches!(c, Class::MediaRejected | Class::ImageLimit)) {
            let rest: Vec<usize> = (0..session.attachments.len()).filter(|&i| active(i)).collect();
            let invalid_left = rest.iter().any(|&i| session.attachments[i].verdict == Verdict::Invalid);
            let invalid_excluded = session.attachments.iter().any(|a| a.excluded && a.verdict == Verdict::Invalid);
            if invalid_excluded && !invalid_left && class == Some(Class::MediaRejected) {
                // The user took out what validation blames; what is left the model
                // accepted: the next request differs from the one that failed.
                notes.push(format!(
                    "the boundary leaves no suspect and every attachment whose bytes fail validation is excluded; the rest were accepted{}: the next request differs",
                    boundary_info.as_ref().map(|b| format!(" (line {})", b.line)).unwrap_or_default()
                ));
            } else if !rest.is_empty() {
                chosen = rest;
                widened = true;
                notes.push(
                    "the boundary leaves no suspect, yet the failure is about media (the provider's limits, the model or the route changed since it accepted them): every attachment in the history is a suspect"
                        .into(),
                );
            }
        }
    }
    for &i in &named_live {
        if !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    if class.is_some_and(|c| !media_class(c)) {
        chosen.retain(|&i| named.contains(&i) || session.attachments[i].verdict == Verdict::Invalid);
    }

    let mut suspects: Vec<Suspect> = chosen
        .into_iter()
        .map(|i| {
            let a = &session.attachments[i];
            let is_named = named.contains(&i);
            let invalid = a.verdict == Verdict::Invalid;
            let worst = a.problems.iter().max_by_key(|p| p.severity).map(|p| p.message.clone());
            let why = match (is_named, invalid) {
                (true, true) => format!(
                    "the provider's error names it ({}); {}",
                    block.unwrap_or_default(),
                    worst.unwrap_or_default()
                ),
                (true, false) => format!("the provider's error names it ({})", block.unwrap_or_default()),
                (false, true) => worst.unwrap_or_else(|| "its bytes fail validation".into()),
                (false, false) => {
                    let taken = match (&boundary_info, widened && !after(i)) {
                        (Some(b), true) => {
                            format!("accepted by the model (line {}), yet the failure is about media", b.line)
                        }
                        _ => "not yet accepted by the model".into(),
                    };
                    match (a.verdict, worst) {
                        (Verdict::Warn, Some(w)) => format!("{taken}; {w}"),
                        _ => format!("{taken}; its bytes look valid"),
                    }
                }
            };
            Suspect { attachment: a.clone(), prime: is_named || invalid, named: is_named, why }
        })
        .collect();
    suspects.sort_by_key(|s| (!s.named, !s.prime, std::cmp::Reverse(s.attachment.verdict)));
    for s in &mut suspects {
        // The facts served the judgement; the report needs none of them.
        s.attachment.facts = None;
    }
    Picked { suspects, boundary: boundary_info, notes }
}

#[cfg(test)]
mod tests {
    use super::same_model;

    #[test]
    fn model_ids_compare_across_spellings() {
        assert!(same_model("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"));
        assert!(same_model("anthropic:claude-sonnet-4-5", "Claude-Sonnet-4-5"));
        assert!(!same_model("claude-opus-4-1", "claude-sonnet-4-5"));
    }
}
