//! `--fit`: an image over the provider's limits is re-encoded to fit, in
//! place, with a note beside it, instead of being left out.
//!
//! Only images whose every problem is a size problem (see
//! [`crate::fit::FITTABLE`]) are fitted; bytes that do not decode keep their
//! own remedy (exclusion). The fitted payload replaces the base64 text where it
//! sits in the record, so the rest of the record stays byte for byte; the
//! note goes in as the next block of the same content list.

use super::{Op, Rewrite};
use crate::fit::{self, Limits, Outcome};
use crate::json::splice;
use crate::media::rules::Rules;
use crate::model::{Encoding, Session};

impl Rewrite {
    /// Plans a fit for every oversized image still sent (not excluded, not
    /// capped) of `session`, whose bytes are read back from `file`.
    pub fn fit(&mut self, session: &Session, source: &crate::reader::Source, rules: &Rules, single_document: bool) {
        let key = |line: u64| if single_document { 1 } else { line };
        let replaced: Vec<&String> = self.summary.excluded.iter().chain(&self.summary.capped).collect();
        let sent: Vec<_> = session
            .attachments
            .iter()
            .filter(|a| !a.excluded && a.is_image() && !replaced.contains(&&a.reference))
            .collect();
        let limits = Limits::of(rules, sent.len());
        for a in sent {
            let mut judged = a.clone();
            judged.judge(rules);
            let shape = fit::Shape { size: (judged.width, judged.height), mime: judged.mime_detected.as_deref() };
            if a.encoding == Encoding::Reference {
                continue;
            }
            // Over the limits, and too large to decode: said, never sent unchanged without a word.
            if let Some(why) = fit::unfittable(&judged.problems, shape, limits.max_side) {
                self.summary.not_fitted.push(format!("{}: {why}, so it was not fitted", a.reference));
                continue;
            }
            if !fit::fits_to(&judged.problems, shape, limits.max_side) {
                continue;
            }
            if a.encoding == Encoding::Bytes {
                self.summary.not_fitted.push(format!(
                    "{}: its bytes are a list of numbers (Kiro CLI), which --fit does not rewrite; exclude it instead",
                    a.reference
                ));
                continue;
            }
            // The type can change only where it sits with the bytes (a data URL): elsewhere a PNG
            // stays a PNG, and a GIF or WebP (fitted as PNG) is left as it is.
            let data_url = a.encoding == Encoding::DataUrl;
            let mime = a.mime_detected.as_deref().unwrap_or_default();
            if !data_url && !matches!(mime, "image/png" | "image/jpeg") {
                self.summary.not_fitted.push(format!(
                    "{}: a fitted {mime} would be a PNG, and its type is recorded apart from the bytes",
                    a.reference
                ));
                continue;
            }
            let allow_jpeg = data_url || mime == "image/jpeg";
            let Some(span) = a.span else { continue };
            let outcome = match crate::reader::read_payload(source, a) {
                Ok(bytes) => fit::fit_as(&bytes, &limits, allow_jpeg),
                Err(why) => Outcome::Refused(why),
            };
            match outcome {
                Outcome::Fitted(f) => {
                    let ops = self.ops.entry(key(a.line)).or_default();
                    let note = f.note(a.name.as_deref());
                    let from = a.mime_detected.clone().unwrap_or_default();
                    ops.push(Op::Fit {
                        pointer: a.pointer.clone(),
                        span,
                        data: base64_of(&f.bytes),
                        from,
                        to: f.mime.into(),
                        note,
                    });
                    for m in &a.mirrors {
                        ops.push(Op::Blank { offset: m.offset, len: m.len });
                    }
                    self.summary.fitted.push(a.reference.clone());
                }
                Outcome::Fits => {}
                Outcome::Refused(why) => self.summary.not_fitted.push(format!("{}: {why}", a.reference)),
            }
        }
    }
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The edits of one [`Op::Fit`] on a record's `text` at file offset `base`:
/// the payload replaced, a data URL's type changed with it, the note after the block.
pub(super) fn edits(format: crate::model::Format, text: &[u8], base: u64, op: &Op) -> Vec<splice::Edit> {
    let Op::Fit { pointer, span, data, from, to, note } = op else { return Vec::new() };
    let Some(start) = span.offset.checked_sub(base).and_then(|s| usize::try_from(s).ok()) else { return Vec::new() };
    let end = start.saturating_add(usize::try_from(span.len).unwrap_or(usize::MAX));
    if end > text.len() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let prefix = format!("data:{from};base64,");
    if from != to && text[..start].ends_with(prefix.as_bytes()) {
        out.push(splice::Edit { range: start - prefix.len()..end, with: format!("data:{to};base64,{data}") });
    } else {
        out.push(splice::Edit { range: start..end, with: data.clone() });
    }
    let parent_is_list = pointer
        .rsplit_once('/')
        .and_then(|(parent, _)| splice::locate(text, parent))
        .is_some_and(|r| text.get(r.start) == Some(&b'['));
    if let (true, Some(block)) = (parent_is_list, splice::locate(text, pointer)) {
        let with = format!(",{}", super::note_block(format, b"", note));
        out.push(splice::Edit { range: block.end..block.end, with });
    }
    out
}
