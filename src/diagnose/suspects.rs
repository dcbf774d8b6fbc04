//! The acceptance boundary and the suspects it leaves, ranked.

use crate::classify::Class;
use crate::media::Verdict;
use crate::model::{Origin, Role, Session};

use super::block_path;
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
    request: Option<&block_path::SentRequest<'_>>,
) -> Picked {
    let boundary = boundary(session, failing_entry.unwrap_or(session.entries.len()), model);
    let mut notes = vec![boundary_note(session, boundary, model)];
    let scope = Scope::new(session, failure, boundary);
    // The block the provider named, in the request the agent sends.
    let block = failure.and_then(|f| f.classification.block.as_deref());
    let named: Vec<usize> = block.map(|b| block_path::locate(b, session, request)).unwrap_or_default();
    let (chosen, widened) = scope.choose(block, &named, &mut notes);
    let boundary = boundary.map(|i| Boundary {
        line: session.entries[i].line,
        model: session.entries[i].model.as_deref().map(str::to_string),
    });
    let mut suspects: Vec<Suspect> =
        chosen.into_iter().map(|i| scope.suspect(i, named.contains(&i), block, boundary.as_ref(), widened)).collect();
    suspects.sort_by_key(|s| (!s.named, !s.prime, std::cmp::Reverse(s.attachment.verdict)));
    Picked { suspects, boundary, notes }
}

/// The entry before `end` of the latest answer `model` gave: every attachment
/// before it was in a request it accepted.
fn boundary(session: &Session, end: usize, model: Option<&str>) -> Option<usize> {
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
    (0..end).rev().find(|&i| accepted_by(i))
}

/// Where the suspects start, in words.
fn boundary_note(session: &Session, boundary: Option<usize>, model: Option<&str>) -> String {
    match (boundary, model) {
        (Some(i), _) => {
            // An answer that holds its tools' results (mux, Gemini CLI) sent them only later.
            let own = session.attachments.iter().any(|a| a.entry == i && a.origin == Origin::ToolResult);
            format!(
                "suspects are the attachments after the answer on line {}{}, the last request {} accepted",
                session.entries[i].line,
                if own { " (its own tool results included, which went out after it)" } else { "" },
                model.unwrap_or("the model")
            )
        }
        // Not "never in this session": a compaction replaces the answers before it.
        (None, Some(m)) => format!(
            "{m} accepted no request of the history sent now (a new session, a model switch, or a compaction that replaced what came before): every attachment is a suspect"
        ),
        (None, None) => "no request was ever accepted: every attachment is a suspect".into(),
    }
}

/// The attachments a failure can blame, as the boundary and the failure's
/// words narrow them.
struct Scope<'s> {
    session: &'s Session,
    class: Option<Class>,
    boundary: Option<usize>,
    /// A provider that says it could not process an *image* blames no healthy
    /// PDF (one whose bytes fail validation stays: the next request fails on it).
    images_only: bool,
}

impl<'s> Scope<'s> {
    fn new(session: &'s Session, failure: Option<&Failure>, boundary: Option<usize>) -> Scope<'s> {
        let images_only = failure.is_some_and(|f| {
            f.classification.class == Class::MediaRejected
                && f.classification.message.as_deref().is_some_and(names_images_only)
        });
        Scope { session, class: failure.map(|f| f.classification.class), boundary, images_only }
    }

    fn attachment(&self, i: usize) -> &'s crate::model::Attachment {
        &self.session.attachments[i]
    }

    /// What puts a note where an excluded attachment was: `repair` alone where
    /// `preview` does not model the agent's request (Kiro CLI).
    fn who_notes(&self) -> &'static str {
        if self.session.format.behaviour().previews { "preview and repair put" } else { "repair puts" }
    }

    fn all(&self) -> std::ops::Range<usize> {
        0..self.session.attachments.len()
    }

    /// After the boundary. The accepted answer's own tool results (kept inside
    /// it by some agents) went out only with the next request: they are too.
    fn after(&self, i: usize) -> bool {
        let a = self.attachment(i);
        self.boundary.is_none_or(|b| a.entry > b || (a.entry == b && a.origin == Origin::ToolResult))
    }

    /// Excluded by the user, or healed away by the agent itself: not in the next request.
    fn gone(&self, i: usize) -> bool {
        !self.attachment(i).sent()
    }

    fn active(&self, i: usize) -> bool {
        let a = self.attachment(i);
        !self.gone(i) && (!self.images_only || a.is_image() || a.verdict == Verdict::Invalid)
    }

    /// An attachment before the boundary with the bytes of `i`: the model took them once.
    fn accepted_copy(&self, i: usize) -> Option<&crate::model::Attachment> {
        self.boundary?;
        let sha = self.attachment(i).sha256.as_ref()?;
        (self.all())
            .filter(|&j| j != i && !self.after(j))
            .map(|j| self.attachment(j))
            .find(|c| c.sha256.as_ref() == Some(sha))
    }

    fn invalid(&self, i: usize) -> bool {
        self.attachment(i).verdict == Verdict::Invalid
    }

    /// The suspects, in attachment order (the named ones last), and whether
    /// they were widened past the boundary.
    fn choose(&self, block: Option<&str>, named: &[usize], notes: &mut Vec<String>) -> (Vec<usize>, bool) {
        let mut chosen: Vec<usize> = self.all().filter(|&i| self.active(i) && self.after(i)).collect();
        let mut widened = false;
        let named_live: Vec<usize> = named.iter().copied().filter(|&i| !self.gone(i)).collect();
        if let (Some(b), false, true) = (block, named.is_empty(), named_live.is_empty()) {
            // What the provider named is gone from the next request: the user excluded
            // it (a note there), or the agent healed it (a placeholder); only bytes that
            // fail validation are still to blame.
            notes.push(if named.iter().all(|&i| !self.attachment(i).excluded) {
                format!(
                    "the agent healed the rejection itself: it no longer sends the block the provider named ({b}), a placeholder goes in its place"
                )
            } else {
                format!("the block the provider named ({b}) is excluded: {} a note in its place", self.who_notes())
            });
            chosen.retain(|&i| self.invalid(i));
        } else if named_live.is_empty() {
            // A path that maps to nothing says nothing: the suspects are chosen as
            // if the provider had named no block (never "nothing left to blame").
            if let Some(b) = block {
                notes.push(format!(
                    "the provider names {b}, which holds no attachment in the request as this agent builds it: the suspects are chosen as if it named none"
                ));
            }
            if chosen.is_empty() {
                widened = self.when_none_after(&mut chosen, notes);
            }
        }
        for &i in &named_live {
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        if self.class.is_some_and(|c| !media_class(c)) {
            chosen.retain(|&i| named.contains(&i) || self.invalid(i));
        }
        (chosen, widened)
    }

    /// The boundary leaves no suspect: say why the next request differs, or
    /// widen to every attachment when the failure is about media (returns true).
    fn when_none_after(&self, chosen: &mut Vec<usize>, notes: &mut Vec<String>) -> bool {
        let healed: Vec<&str> = (self.all())
            .filter(|&i| self.attachment(i).healed && !self.attachment(i).excluded && self.after(i))
            .map(|i| self.attachment(i).reference.as_str())
            .collect();
        let answered = self.all().any(|i| self.gone(i) && self.after(i));
        if !healed.is_empty() {
            notes.push(format!(
                "the agent healed the rejection itself: it no longer sends {} (a placeholder goes in its place), so the next request differs",
                healed.join(", ")
            ));
        } else if answered {
            notes.push(format!(
                "every attachment the model had not accepted is excluded: {} notes in their place",
                self.who_notes()
            ));
        } else if self.class.is_some_and(|c| matches!(c, Class::MediaRejected | Class::ImageLimit)) {
            let rest: Vec<usize> = self.all().filter(|&i| self.active(i)).collect();
            let invalid_left = rest.iter().any(|&i| self.invalid(i));
            let invalid_excluded = self.session.attachments.iter().any(|a| a.excluded && a.verdict == Verdict::Invalid);
            if invalid_excluded && !invalid_left && self.class == Some(Class::MediaRejected) {
                // The user took out what validation blames; what is left the model
                // accepted: the next request differs from the one that failed.
                let line = self.boundary.map(|b| format!(" (line {})", self.session.entries[b].line));
                notes.push(format!(
                    "the boundary leaves no suspect and every attachment whose bytes fail validation is excluded; the rest were accepted{}: the next request differs",
                    line.unwrap_or_default()
                ));
            } else if !rest.is_empty() {
                *chosen = rest;
                notes.push(
                    "the boundary leaves no suspect, yet the failure is about media (the provider's limits, the model or the route changed since it accepted them): every attachment in the history is a suspect"
                        .into(),
                );
                return true;
            }
        }
        false
    }

    /// Attachment `i` as a suspect, with why it is one.
    fn suspect(
        &self,
        i: usize,
        named: bool,
        block: Option<&str>,
        boundary: Option<&Boundary>,
        widened: bool,
    ) -> Suspect {
        let a = self.attachment(i);
        let invalid = a.verdict == Verdict::Invalid;
        let worst = a.problems.iter().max_by_key(|p| p.severity).map(|p| p.message.clone());
        let block = block.unwrap_or_default();
        let why = match (named, invalid) {
            (true, true) => format!("the provider's error names it ({block}); {}", worst.unwrap_or_default()),
            (true, false) => format!("the provider's error names it ({block})"),
            (false, true) => worst.unwrap_or_else(|| "its bytes fail validation".into()),
            (false, false) => {
                let taken = match (boundary, widened && !self.after(i)) {
                    (Some(b), true) => {
                        format!("accepted by the model (line {}), yet the failure is about media", b.line)
                    }
                    _ => match self.accepted_copy(i) {
                        Some(c) => format!("the model accepted the same bytes at line {} ({})", c.line, c.reference),
                        None => "not yet accepted by the model".into(),
                    },
                };
                match (a.verdict, worst) {
                    (Verdict::Warn, Some(w)) => format!("{taken}; {w}"),
                    _ => format!("{taken}; its bytes look valid"),
                }
            }
        };
        // The facts served the judgement; the report needs none of them.
        let attachment = crate::model::Attachment { facts: None, ..a.clone() };
        Suspect { attachment, prime: named || invalid, named, why }
    }
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
