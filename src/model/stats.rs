//! The history seen as one request, for the provider's per-request limits.

use super::{Encoding, Session};
use crate::media::RequestStats;

impl Session {
    /// Counts what the next request would carry: every attachment of the
    /// history the agent sends ([`super::Attachment::sent`]): not those the
    /// user excluded (a note stands in their place) or the agent healed away
    /// (its placeholder does).
    pub fn request_stats(&self) -> RequestStats {
        let mut s = RequestStats::default();
        for a in self.attachments.iter().filter(|a| a.sent()) {
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
