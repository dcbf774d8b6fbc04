//! The history seen as one request, for the provider's per-request limits.
//! What the agent leaves out of that request is its own rule (Codex drops an
//! output whose call is gone), so the count lives with the formats.

use crate::media::RequestStats;
use crate::model::{Attachment, Encoding, Format, Session};

impl Session {
    /// The attachments the agent sends with its next request, as `preview`
    /// builds it: those [`Attachment::sent`] says it sends, but for the ones in a
    /// Codex output whose call is gone (Codex leaves such an output out,
    /// [`super::codex::pairs`]).
    pub fn sent_attachments(&self) -> impl Iterator<Item = &Attachment> {
        let pairs = (self.format == Format::Codex).then(|| super::codex::pairs::Pairs::of(self));
        self.attachments.iter().filter(move |a| {
            a.sent() && !a.call_id.as_deref().is_some_and(|c| pairs.as_ref().is_some_and(|p| p.orphan(c)))
        })
    }

    /// Counts what the next request would carry: every attachment of the
    /// history the agent sends ([`Attachment::sent`]): not those the
    /// user excluded (a note stands in their place) or the agent healed away
    /// (its placeholder does).
    pub fn request_stats(&self) -> RequestStats {
        let mut s = RequestStats::default();
        for a in self.sent_attachments() {
            let is_pdf = a.mime_detected.as_deref().or(a.mime_declared.as_deref()) == Some("application/pdf");
            if a.is_image() {
                s.images += 1;
                s.max_image_side = s.max_image_side.max(a.width.unwrap_or(0)).max(a.height.unwrap_or(0));
            } else if is_pdf {
                s.pdf_pages += a.pages.unwrap_or(1);
            }
            if a.encoding != Encoding::Reference {
                s.media_bytes += a.span.map_or(a.bytes.unwrap_or(0) * 4 / 3, |sp| sp.len);
            }
        }
        s
    }
}
