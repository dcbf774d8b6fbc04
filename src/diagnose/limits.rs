//! The limits a request breaks as a whole, not through one attachment: each
//! is one entry of [`LIMITS`], which says the failure it makes and its remedy.
//! `diagnose` (the prediction, whether it is stuck, the verdict), the next
//! commands and `repair` ask here, so a new request-level limit is one entry
//! (and its check in [`crate::media::request_problems`]).

use crate::classify::Class;
use crate::media::rules::{RequestStats, Rules};
use crate::media::{Defect, Verdict};
use crate::model::Attachment;

/// What cures a broken request-level limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Remedy {
    /// Keep at most this many images: `--max-images N` (the older go).
    Cap(u64),
    /// Fit every image to this side: `--fit`, which keeps every image. Past
    /// the threshold no one image is the cause, so none is left out for it.
    Fit(u32),
    /// Leave these documents out (their refs, oldest first): no cap on images
    /// lowers a count of pages.
    Exclude(Vec<String>),
    /// Leave every image out: `--max-images 0`.
    NoImages,
}

impl Remedy {
    /// The number the remedy goes by: the images kept, or the side fitted to.
    pub fn number(&self) -> Option<u64> {
        match self {
            Remedy::Cap(n) => Some(*n),
            Remedy::Fit(side) => Some(u64::from(*side)),
            Remedy::Exclude(_) | Remedy::NoImages => None,
        }
    }
}

/// One request-level limit: its problem code, the class of the failure it
/// makes, and its remedy for a request of these stats under these rules.
pub struct Limit {
    pub code: &'static str,
    pub class: Class,
    /// The provider's maximum, as its rules state it (a count, a side, bytes).
    pub maximum: fn(&Rules) -> Option<u64>,
    remedy: fn(&Judged<'_>) -> Remedy,
}

/// What a remedy is decided from.
pub struct Judged<'a> {
    pub stats: &'a RequestStats,
    pub rules: &'a Rules,
    /// The limit the provider's error states, when it states one.
    pub stated: Option<u64>,
    /// The attachments of the next request, in history order.
    pub sent: &'a [&'a Attachment],
}

/// Every request-level limit.
pub const LIMITS: &[Limit] = &[
    // Anthropic's 100 images (PDF pages counted with them), OpenAI's 1500, a
    // gateway's own count ("too many inline media segments: 101 exceeds limit 100").
    Limit {
        code: "request.too_many_images",
        class: Class::ImageLimit,
        maximum: |r| r.max_images_per_request.map(u64::from),
        remedy: fewer_images,
    },
    Limit {
        code: "request.too_many_pdf_pages",
        class: Class::ImageLimit,
        maximum: |r| r.max_pdf_pages_per_request.map(u64::from),
        remedy: |j| documents_to_leave_out(j, j.rules.max_pdf_pages_per_request.map_or(0, u64::from)),
    },
    // Anthropic: past 20 images no side over 2000 px.
    Limit {
        code: "request.many_images_pixels",
        class: Class::MediaRejected,
        maximum: |r| r.many_images.map(|m| u64::from(m.max_side_px)),
        remedy: |j| Remedy::Fit(j.rules.many_images.map_or(u32::MAX, |m| m.max_side_px)),
    },
    Limit {
        code: "request.too_large",
        class: Class::PayloadTooLarge,
        maximum: |r| r.max_request_bytes,
        remedy: |_| Remedy::NoImages,
    },
];

fn entry(code: &str) -> Option<&'static Limit> {
    LIMITS.iter().find(|l| l.code == code)
}

/// The first limit the request breaks, with its entry: what a request with
/// no failure recorded fails on.
pub fn first(limits: &[Defect]) -> Option<(&Defect, &'static Limit)> {
    first_of(limits, |_| true)
}

/// The broken limit that explains a failure of `class`: the request as a
/// whole is the cause, and its remedy the cure.
pub fn explaining(limits: &[Defect], class: Class) -> Option<(&Defect, &'static Limit)> {
    first_of(limits, |l| l.class == class)
}

/// Every limit the request breaks, with its entry.
pub fn broken(limits: &[Defect]) -> impl Iterator<Item = (&Defect, &'static Limit)> {
    (limits.iter()).filter(|d| d.severity == Verdict::Invalid).filter_map(|d| entry(d.code).map(|l| (d, l)))
}

fn first_of(limits: &[Defect], want: impl Fn(&Limit) -> bool) -> Option<(&Defect, &'static Limit)> {
    broken(limits).find(|(_, l)| want(l))
}

/// The remedy of a broken limit.
pub fn remedy(defect: &Defect, judged: &Judged<'_>) -> Option<Remedy> {
    entry(defect.code).map(|l| (l.remedy)(judged))
}

/// The images a copy may keep: the count the provider states (else its
/// rules'), less the PDF pages it counts with them, which a cap on images
/// leaves in ("60 document pages + 50 images > 100": 40 images, not 100).
/// A count stated that is not the rules' own (a gateway's) is taken as of images alone.
pub fn images_to_keep(j: &Judged<'_>) -> u64 {
    let own = j.rules.max_images_per_request.map(u64::from);
    let most = j.stated.or(own).unwrap_or(20);
    let counted = j.rules.pdf_pages_count_as_images && (j.stated.is_none() || j.stated == own);
    let pages = if counted { u64::from(j.stats.pdf_pages) } else { 0 };
    most.saturating_sub(pages)
}

/// Fewer images, or, where the PDF pages counted with them fill the count
/// alone, fewer PDFs: no cap on images brings those under it.
fn fewer_images(j: &Judged<'_>) -> Remedy {
    let keep = images_to_keep(j);
    if keep > 0 || j.stats.pdf_pages == 0 {
        return Remedy::Cap(keep);
    }
    let most = j.stated.or(j.rules.max_images_per_request.map(u64::from)).unwrap_or(0);
    documents_to_leave_out(j, most.saturating_sub(u64::from(j.stats.images)))
}

/// The oldest PDFs whose pages, left out, bring the request to `most` pages:
/// a cap on images changes none of them.
fn documents_to_leave_out(j: &Judged<'_>, most: u64) -> Remedy {
    let mut over = u64::from(j.stats.pdf_pages).saturating_sub(most);
    let mut refs = Vec::new();
    for a in j.sent.iter().filter(|a| is_pdf(a)) {
        if over == 0 {
            break;
        }
        over = over.saturating_sub(u64::from(a.pages.unwrap_or(1)));
        refs.push(a.reference.clone());
    }
    Remedy::Exclude(refs)
}

fn is_pdf(a: &Attachment) -> bool {
    a.mime_detected.as_deref().or(a.mime_declared.as_deref()) == Some("application/pdf")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_a_limit_is_checked_by_has_one_entry_and_is_registered() {
        for l in LIMITS {
            assert_eq!(LIMITS.iter().filter(|o| o.code == l.code).count(), 1, "{}", l.code);
            assert!(crate::codes::lookup(l.code).is_some(), "{} is not a registered code", l.code);
        }
    }

    #[test]
    fn a_cap_leaves_room_for_the_pages_counted_with_images() {
        let rules = Rules::builtin("anthropic").unwrap();
        let stats = RequestStats { images: 50, pdf_pages: 60, max_image_side: 100, media_bytes: 0 };
        let j = Judged { stats: &stats, rules: &rules, stated: Some(100), sent: &[] };
        assert_eq!(images_to_keep(&j), 40);
        let openai = Rules::builtin("openai").unwrap();
        let j = Judged { stats: &stats, rules: &openai, stated: None, sent: &[] };
        assert_eq!(images_to_keep(&j), 1500);
        // A gateway's own count is of images alone.
        let j = Judged { stats: &stats, rules: &rules, stated: Some(2), sent: &[] };
        assert_eq!(images_to_keep(&j), 2);
    }
}
