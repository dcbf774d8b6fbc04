//! A model or route that takes no images (`image_limit` with a limit of 0):
//! every image is refused, valid or not, so `diagnose` says who refused and
//! that an image-free copy is the way on, rather than blaming the images.

use crate::classify::Class;
use crate::model::Session;

use super::Failure;

/// A route that takes no images, and a next request that sends none: the
/// refusal cannot come again (a copy `--max-images 0` wrote, or a history
/// whose images are gone), so nothing is stuck on it — and offering
/// `--max-images 0` again would only loop.
pub fn none_sent(failure: &Failure, session: &Session) -> bool {
    let c = &failure.classification;
    c.class == Class::ImageLimit && c.limit == Some(0) && !session.attachments.iter().any(|a| a.is_image() && a.sent())
}

/// The note for a failure whose model or route takes no images, or `None`.
pub fn note(failure: &Failure, session: &Session, model: Option<&str>, provider: Option<&str>) -> Option<String> {
    let c = &failure.classification;
    if c.class != Class::ImageLimit || c.limit != Some(0) || none_sent(failure, session) {
        return None;
    }
    let images = session.attachments.iter().filter(|a| a.is_image() && a.sent()).count();
    let who = match (model, provider.or(c.provider.as_deref())) {
        (Some(m), Some(p)) => format!("the model {m} (via {p})"),
        (Some(m), None) => format!("the model {m}"),
        (None, Some(p)) => format!("the route ({p})"),
        (None, None) => "the model or route".to_string(),
    };
    let plural = if images == 1 { "" } else { "s" };
    Some(format!(
        "{who} takes no images: it refuses every one, valid or not, and the history sends {images} image{plural}; \
         `--max-images 0` writes a copy with a note in place of each (or switch back to a model that takes images)"
    ))
}
