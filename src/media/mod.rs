//! Byte-level validation of embedded media (images, PDFs), judged against the
//! target provider's rules.
//!
//! CONTRACT used by the reader (`scan`) — keep these signatures:
//! - [`decode_base64`]: decode an attachment's base64 text into `out`.
//! - [`inspect`]: judge decoded bytes against a provider's rules.
//! - [`Verdict`], [`Defect`], [`Inspection`], [`Depth`], [`Payload`],
//!   [`rules::Rules`], [`rules::request_problems`].
//!
//! Layout, one concern per file: `payload` (base64, data URLs), `sniff` (what
//! the bytes really are), one file per format (`png`, `jpeg`, `gif`, `webp`,
//! `pdf`: structural walk + deep decode), `rules` (+ `rules.json`, provider
//! limits as data). This file only orchestrates: empty → type → structure →
//! provider limits.
//!
//! Every parser works on untrusted bytes: checked arithmetic, no `unwrap`,
//! decoders capped at [`DECODE_CAP`] bytes of pixels and run under
//! `catch_unwind` as a last resort.

mod gif;
mod jpeg;
mod payload;
mod pdf;
mod png;
pub mod refs;
pub mod rules;
mod sniff;
mod webp;

use std::cell::RefCell;

use serde::Serialize;

pub use payload::{decode_base64, decode_base64_checked, parse_data_url};
pub use rules::{RequestStats, Rules, request_problems};

use sniff::Kind;

/// Most bytes of decoded pixels (or decompressed PDF streams) a deep check
/// will allocate for one attachment; larger images are judged from their
/// headers and reported as not decoded.
pub const DECODE_CAP: u64 = 256 << 20;

/// Most bytes of pixels all workers together decode at once. The cap above is
/// per attachment; without a shared budget, one worker per core each decoding
/// a bomb just under it would take cores × the cap (16 × 243 MB = 3.4 GB).
/// A decode waits until its pixels fit; memory stays at this budget whatever `-j`.
pub const DECODE_BUDGET: u64 = DECODE_CAP;

/// The bytes of [`DECODE_BUDGET`] not held by a decode running now.
static BUDGET: std::sync::Mutex<u64> = std::sync::Mutex::new(DECODE_BUDGET);
static BUDGET_FREED: std::sync::Condvar = std::sync::Condvar::new();

/// Bytes of the shared decode budget, held until dropped.
struct Held(u64);

/// Waits until `bytes` (at most the whole budget) fit in the shared budget, and takes them.
fn hold(bytes: u64) -> Held {
    let bytes = bytes.min(DECODE_BUDGET);
    let mut free = BUDGET.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    while *free < bytes {
        free = BUDGET_FREED.wait(free).unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    *free -= bytes;
    Held(bytes)
}

impl Drop for Held {
    fn drop(&mut self) {
        *BUDGET.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += self.0;
        BUDGET_FREED.notify_all();
    }
}

/// Pillow refuses images over this many pixels as decompression bombs
/// (`DecompressionBombError`, 2 × 89,478,485), and many provider back ends
/// decode with Pillow.
const BOMB_PIXELS: u64 = 178_956_970;

/// How well an attachment will fare with the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    Warn,
    Invalid,
}

/// One thing wrong with an attachment, in words a user can act on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Defect {
    pub severity: Verdict,
    /// Stable machine code, e.g. `base64.invalid`, `png.truncated`.
    pub code: &'static str,
    pub message: String,
}

/// What validation learned about one payload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inspection {
    /// The mime type found in the bytes (`None`: no known type).
    pub mime_detected: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// PDF page count.
    pub pages: Option<u32>,
    /// Image frame count (GIF frames, APNG `acTL`, animated WebP); 1 for stills.
    pub frames: Option<u32>,
    pub problems: Vec<Defect>,
}

impl Inspection {
    /// The worst severity among the problems.
    pub fn verdict(&self) -> Verdict {
        self.problems.iter().map(|p| p.severity).max().unwrap_or(Verdict::Ok)
    }

    pub(crate) fn push(&mut self, severity: Verdict, code: &'static str, message: String) {
        self.problems.push(Defect { severity, code, message });
    }

    pub(crate) fn invalid(&mut self, code: &'static str, message: String) {
        self.push(Verdict::Invalid, code, message);
    }

    /// A `--deep` decode, bounded and contained. An image whose pixels would
    /// exceed [`DECODE_CAP`] is judged by its header alone (a warning, never an
    /// allocation); a decoder error or a decoder panic means the data is corrupt.
    /// `codes` are the (not decoded, does not decode) problem codes.
    pub(crate) fn decode_bounded<T, E: std::fmt::Display>(
        &mut self,
        format: &str,
        codes: (&'static str, &'static str),
        pixel_bytes: u64,
        decode: impl FnOnce() -> Result<T, E>,
    ) -> Option<T> {
        if pixel_bytes > DECODE_CAP {
            let (w, h) = (self.width.unwrap_or(0), self.height.unwrap_or(0));
            let message = format!(
                "the {format} image is {w}×{h} px ({pixel_bytes} bytes of pixels), more than the {DECODE_CAP}-byte decode cap: it was judged by its header, not decoded"
            );
            self.push(Verdict::Warn, codes.0, message);
            return None;
        }
        // Held across the decode, released even when the decoder panics.
        let held = hold(pixel_bytes);
        let decoded = crate::contain::contain(decode);
        drop(held);
        match decoded {
            Ok(Ok(t)) => Some(t),
            Ok(Err(e)) => {
                self.invalid(codes.1, format!("the {format} image data does not decode ({e}): it is corrupt"));
                None
            }
            Err(_) => {
                self.invalid(codes.1, format!("the {format} decoder failed on this file: the image data is corrupt"));
                None
            }
        }
    }
}

/// Structural checks run at near disk speed; deep checks decode everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Depth {
    /// Signatures, chunk and segment walks, checksums, sizes, trailers,
    /// headers, PDF strict load and page tree.
    #[default]
    Structural,
    /// Everything structural does, plus a full decode: PNG inflate + unfilter,
    /// JPEG scans, every GIF frame, the WebP bitstream, every PDF stream and
    /// page content.
    Deep,
}

/// One attachment as the session holds it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Payload<'a> {
    /// The decoded bytes.
    pub bytes: &'a [u8],
    /// The media type the session claims (`media_type`, data URL type).
    pub declared_mime: Option<&'a str>,
    /// Length of the base64 text as it sits in the session, for providers
    /// that count the per-image limit on base64 (Anthropic). When `None`, it
    /// is computed from the byte count.
    pub encoded_len: Option<usize>,
    /// File name or path, if known, for messages.
    pub name: Option<&'a str>,
}

/// What the bytes of one payload are, whoever receives them: size, sniffed
/// type, dimensions, frames, pages and structural damage. Recorded once by the
/// streaming pass; [`Facts::judge`] applies a provider's rules to them later,
/// so `diagnose` can re-judge a session under the provider that actually failed
/// without decoding anything again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// Decoded size in bytes.
    pub bytes: u64,
    /// Length of the base64 text as it sits in the session (`None`: not base64).
    pub encoded_len: Option<u64>,
    pub(crate) kind: Option<sniff::Kind>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub pages: Option<u32>,
    pub frames: Option<u32>,
    /// What the structural (or deep) walk found wrong, provider aside.
    pub damage: Vec<Defect>,
    /// Unknown bytes that look like a PNG whose first bytes were damaged.
    pub damaged_png: bool,
}

impl Facts {
    /// Examines decoded bytes at `depth`; nothing here depends on a provider.
    pub fn examine(bytes: &[u8], encoded_len: Option<usize>, depth: Depth) -> Facts {
        let mut facts =
            Facts { bytes: bytes.len() as u64, encoded_len: encoded_len.map(|n| n as u64), ..Facts::default() };
        if bytes.is_empty() {
            return facts;
        }
        let kind = sniff::sniff(bytes);
        facts.kind = Some(kind);
        let mut ins = Inspection::default();
        match kind {
            Kind::Png => png::check(bytes, depth, &mut ins),
            Kind::Jpeg => jpeg::check(bytes, depth, &mut ins),
            Kind::Gif => gif::check(bytes, depth, &mut ins),
            Kind::Webp => webp::check(bytes, depth, &mut ins),
            Kind::Pdf => pdf::check(bytes, depth, &mut ins),
            Kind::Unknown => facts.damaged_png = sniff::looks_like_damaged_png(bytes),
            _ => {}
        }
        facts.width = ins.width;
        facts.height = ins.height;
        facts.pages = ins.pages;
        facts.frames = ins.frames;
        facts.damage.extend(ins.problems);
        facts
    }

    /// The mime type found in the bytes.
    pub fn mime_detected(&self) -> Option<&'static str> {
        self.kind.and_then(sniff::Kind::mime)
    }

    /// Applies one provider's rules: is the type accepted and labelled right,
    /// does it fit the provider's per-attachment limits? `declared` and `name`
    /// are how the session labels the payload.
    pub fn judge(&self, declared: Option<&str>, name: Option<&str>, rules: &rules::Rules) -> Inspection {
        let mut ins = Inspection {
            mime_detected: self.mime_detected().map(String::from),
            width: self.width,
            height: self.height,
            pages: self.pages,
            frames: self.frames,
            problems: Vec::new(),
        };
        let Some(kind) = self.kind else {
            ins.invalid(
                "payload.empty",
                "the attachment is empty (0 bytes); providers answer \"image cannot be empty\"".into(),
            );
            return ins;
        };
        if let Some(d) = declared {
            check_declared(d, kind, name, rules, &mut ins);
        }
        if !check_accepted(kind, self.damaged_png, declared, name, rules, &mut ins) {
            return ins;
        }
        ins.problems.extend(self.damage.iter().cloned());
        check_limits(self, kind, rules, &mut ins);
        ins
    }
}

/// Judges one attachment: is it empty, what is it really, does it match the
/// declared type, is it well-formed (at `depth`), and does it fit `rules`?
/// The facts, then the policy: see [`Facts`].
pub fn inspect(p: &Payload<'_>, depth: Depth, rules: &rules::Rules) -> Inspection {
    let encoded = p.encoded_len;
    Facts::examine(p.bytes, encoded, depth).judge(p.declared_mime, p.name, rules)
}

/// Every type at least one built-in provider accepts.
const ACCEPTED_SOMEWHERE: [&str; 7] =
    ["image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf", "image/heic", "image/heif"];

fn same_family(a: &str, b: &str) -> bool {
    let heif = |m: &str| m == "image/heic" || m == "image/heif";
    a == b || (heif(a) && heif(b))
}

fn subject(name: Option<&str>) -> String {
    match name {
        Some(n) if !n.is_empty() => format!("\"{n}\""),
        _ => "the attachment".into(),
    }
}

/// Declared media type: well-formed, one the provider takes, and equal to
/// what the bytes are.
fn check_declared(declared: &str, kind: Kind, name: Option<&str>, rules: &Rules, ins: &mut Inspection) {
    let p = &rules.provider;
    let raw = declared.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let norm = sniff::normalize_mime(declared);
    let parts: Vec<&str> = norm.split('/').collect();
    if parts.len() != 2 || parts.iter().any(|s| s.is_empty()) {
        ins.invalid(
            "mime.malformed",
            format!("the declared media type \"{declared}\" is not of the form type/subtype (e.g. image/png); providers reject it"),
        );
        return;
    }
    if rules.strict_media_type && (raw != norm || !rules.accepts(&norm)) {
        ins.invalid(
            "mime.declared_unsupported",
            format!(
                "the declared media type \"{raw}\" is not one {p} accepts ({}); the request is rejected before the bytes are read",
                rules.formats.join(", ")
            ),
        );
    }
    let Some(det) = kind.mime() else { return };
    if same_family(det, &norm) || !(rules.accepts(det) || rules.some_accept(det)) {
        // Bytes this provider does not accept at all get their own, stronger
        // finding; relabelling would not help.
        return;
    }
    let who = subject(name);
    let base = format!("{who} is declared {norm} but the bytes are {}", kind.describe());
    if rules.strict_media_type {
        ins.invalid(
            "mime.mismatch",
            format!("{base}; {p} rejects a media type that does not match the bytes (\"Image does not match the provided media type\") — relabel it {det}"),
        );
    } else if rules.provider == "generic" {
        ins.push(
            Verdict::Warn,
            "mime.mismatch",
            format!("{base}; Anthropic rejects such a mismatch, other providers read the bytes — relabel it {det}"),
        );
    } else {
        ins.push(
            Verdict::Warn,
            "mime.mismatch",
            format!("{base}; {p} is not known to reject a mismatch, but relabel it {det} to be safe"),
        );
    }
}

/// Whether the provider accepts the kind of bytes. Returns `false` when
/// there is nothing more to check (not a format we validate).
fn check_accepted(
    kind: Kind,
    damaged_png: bool,
    declared: Option<&str>,
    name: Option<&str>,
    rules: &Rules,
    ins: &mut Inspection,
) -> bool {
    let p = &rules.provider;
    let who = subject(name);
    let declared = declared.map(|d| format!(" (declared {d})")).unwrap_or_default();
    let Some(mime) = kind.mime() else {
        let hint = if damaged_png { " — it looks like a PNG whose first bytes were damaged" } else { "" };
        ins.invalid("type.unknown", format!("{who}{declared} is {}{hint}; no provider can read it", kind.describe()));
        return false;
    };
    if rules.accepts(mime) {
        return kind.is_media();
    }
    if !ACCEPTED_SOMEWHERE.contains(&mime) {
        ins.invalid(
            "type.unsupported",
            format!("{who}{declared} is {}; no provider accepts it as an image or a PDF", kind.describe()),
        );
        return false;
    }
    if rules.some_accept(mime) {
        ins.push(
            Verdict::Warn,
            "type.not_everywhere",
            format!(
                "{who} is {}; only some providers accept it (Gemini does, Anthropic and OpenAI do not)",
                kind.describe()
            ),
        );
    } else {
        ins.invalid(
            "type.unsupported",
            format!("{who} is {}; {p} does not accept it (it accepts {})", kind.describe(), rules.formats.join(", ")),
        );
    }
    kind.is_media()
}

/// Per-attachment provider limits: bytes, pixels, animation, PDF pages.
fn check_limits(facts: &Facts, kind: Kind, rules: &Rules, ins: &mut Inspection) {
    let p = &rules.provider;
    let raw = facts.bytes;
    if kind == Kind::Pdf {
        if let Some(max) = rules.max_pdf_bytes
            && raw > max
        {
            ins.invalid("pdf.too_large", format!("the PDF is {raw} bytes; {p} accepts at most {max}"));
        }
        if let (Some(max), Some(pages)) = (rules.max_pdf_pages_per_request, ins.pages)
            && pages > max
        {
            ins.invalid(
                "pdf.too_many_pages",
                format!("the PDF has {pages} pages; {p} accepts at most {max} per request"),
            );
        }
        return;
    }
    if let Some(max) = rules.max_image_bytes {
        let (measured, how) = match rules.image_bytes_on {
            rules::Measure::Base64 => (
                facts.encoded_len.unwrap_or_else(|| payload::base64_len(usize::try_from(raw).unwrap_or(usize::MAX))),
                " as base64",
            ),
            rules::Measure::Raw => (raw, ""),
        };
        if measured > max {
            ins.invalid(
                "image.too_large",
                format!("the image is {measured} bytes{how}; {p} accepts at most {max} bytes per image — downscale or exclude it"),
            );
        }
    }
    if let (Some(w), Some(h)) = (ins.width, ins.height) {
        if let Some(max) = rules.max_side_px
            && w.max(h) > max
        {
            ins.invalid("image.too_many_pixels", format!("the image is {w}×{h} px; {p} rejects a side over {max} px"));
        }
        let px = u64::from(w) * u64::from(h);
        if let Some(max) = rules.max_pixels
            && px > max
        {
            ins.invalid(
                "image.too_many_pixels",
                format!("the image is {w}×{h} px = {px} pixels; {p} accepts at most {max} pixels"),
            );
        }
        if px > BOMB_PIXELS {
            ins.push(
                Verdict::Warn,
                "image.huge",
                format!(
                    "the image claims {w}×{h} px ({px} pixels); common decoders such as Pillow refuse more than {BOMB_PIXELS} pixels as a decompression bomb"
                ),
            );
        }
    }
    if kind == Kind::Gif
        && !rules.animated_gif
        && let Some(n) = ins.frames
        && n > 1
    {
        ins.invalid(
            "gif.animated",
            format!("the GIF is animated ({n} frames); {p} accepts only non-animated GIFs — send a still frame as PNG"),
        );
    }
}

thread_local! {
    /// Reused pixel buffer for deep decodes: one per thread, kept unless huge.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a zeroed scratch buffer of `len` bytes, reusing the
/// thread's buffer so deep checks do not allocate per image.
/// The largest scratch buffer a thread keeps between decodes.
const SCRATCH_KEPT: usize = 8 << 20;

pub(crate) fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    let mut buf = SCRATCH.with(std::cell::RefCell::take);
    buf.clear();
    buf.resize(len, 0);
    let r = f(&mut buf);
    // A buffer is kept for the next decode on this thread only when small: a
    // large one kept per worker would be memory outside the shared budget.
    if buf.capacity() <= SCRATCH_KEPT {
        SCRATCH.with(|c| c.replace(buf));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decode_budget_is_shared_and_given_back() {
        let whole = hold(DECODE_BUDGET);
        // Another decode waits until the budget is given back.
        let waited = std::thread::scope(|s| {
            let other = s.spawn(|| {
                let _h = hold(1 << 20);
                *BUDGET.lock().unwrap()
            });
            drop(whole);
            other.join().unwrap()
        });
        assert!(waited <= DECODE_BUDGET - (1 << 20));
        // More than the budget takes the whole budget, not forever.
        drop(hold(u64::MAX));
    }

    #[test]
    fn empty_and_text() {
        let r = Rules::generic();
        let ins = inspect(&Payload { bytes: b"", ..Payload::default() }, Depth::Structural, &r);
        assert_eq!(ins.problems[0].code, "payload.empty");
        let p = Payload {
            bytes: b"<html>404</html>",
            declared_mime: Some("image/png"),
            name: Some("a.png"),
            ..Default::default()
        };
        let ins = inspect(&p, Depth::Structural, &r);
        assert_eq!(ins.verdict(), Verdict::Invalid);
        assert!(ins.problems[0].message.contains("HTML"), "{:?}", ins.problems);
        assert_eq!(ins.mime_detected.as_deref(), Some("text/html"));
    }

    #[test]
    fn a_signature_cut_short_is_its_kind_cut_short() {
        // `infer` names `\x89PNG` a PNG from four bytes: it must be checked as one,
        // not passed as a type no check knows. Every cut of every signature is invalid.
        let r = Rules::generic();
        let sigs: [&[u8]; 5] =
            [b"\x89PNG\r\n\x1a\n", &[0xFF, 0xD8, 0xFF, 0xE0], b"GIF89a", b"RIFF\0\0\0\0WEBP", b"%PDF-1.7"];
        for sig in sigs {
            for n in 1..=sig.len() {
                let p = Payload { bytes: &sig[..n], declared_mime: Some("image/png"), ..Default::default() };
                let ins = inspect(&p, Depth::Structural, &r);
                assert_eq!(ins.verdict(), Verdict::Invalid, "{:?}: {:?}", &sig[..n], ins.problems);
            }
        }
    }

    #[test]
    fn declared_type_forms() {
        let a = Rules::builtin("anthropic").unwrap_or_else(Rules::generic);
        let png = b"\x89PNG\r\n\x1a\n";
        let p = Payload { bytes: png, declared_mime: Some("image"), ..Default::default() };
        assert!(inspect(&p, Depth::Structural, &a).problems.iter().any(|p| p.code == "mime.malformed"));
        let p = Payload { bytes: png, declared_mime: Some("image/jpg"), ..Default::default() };
        assert!(inspect(&p, Depth::Structural, &a).problems.iter().any(|p| p.code == "mime.declared_unsupported"));
    }

    #[test]
    fn scratch_is_reused_and_zeroed() {
        with_scratch(16, |b| b.fill(7));
        with_scratch(8, |b| assert!(b.iter().all(|&x| x == 0)));
    }
}
