//! Fitting a valid but oversized image to a provider's limits.
//!
//! Users ask for "shrink it instead of failing" far more than for "leave it
//! out": an oversized screenshot is still worth seeing. [`fit`] decodes an
//! image, downscales it by area averaging (`rows`: a row at a time, so a
//! PNG's fit holds a few rows, not the image) until every limit of the target
//! provider holds (bytes per image, pixels per side, total pixels, the stricter
//! side once a request carries many images), and re-encodes it: a PNG stays a
//! PNG unless only JPEG gets under the byte limit, a JPEG stays a JPEG, a GIF
//! or WebP becomes a PNG (its first frame, where the provider refuses
//! animation). The fitted bytes must pass session-doctor's own deep check
//! before they are returned.
//!
//! Undecodable bytes are never "fitted": a truncated PNG is excluded, not
//! repainted, so [`fit`] refuses anything the deep check calls invalid.

mod rows;

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::{DynamicImage, ImageFormat};

use crate::media::rules::{Measure, Rules};
use crate::media::{Depth, Facts, Verdict};

/// Most bytes of pixels a fit may decode whole (32 MP at 4 bytes a pixel:
/// 8000 × 4000, a 5K screenshot and more). Every decoder of a fit gives 8 bits
/// a sample, so 4 bytes a pixel is the most any image costs (a 16-bit PNG is
/// cut to 8 bits as it is read, issue 37, item 9). A non-interlaced PNG is
/// never decoded whole: its fit holds a few rows ([`rows`]); the pixel count
/// still bounds its time. Before (a Lanczos resize of the whole image), a fit
/// peaked near six times this (8100 × 4000 to 8000 × 3950: 0.76 GB).
const MAX_DECODE: u64 = 1 << 27;
/// JPEG quality tried when PNG cannot get under the byte limit.
const JPEG_QUALITY: u8 = 85;
/// How many smaller sizes are tried before giving up.
const MAX_TRIES: u32 = 16;

/// The limits one image must meet: one provider's, for a request holding
/// `images` images.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub provider: String,
    pub max_bytes: Option<u64>,
    pub bytes_on: Measure,
    pub max_side: Option<u32>,
    pub max_pixels: Option<u64>,
    pub animated_ok: bool,
}

impl Limits {
    /// The limits `rules` set for an image in a request of `images` images
    /// (the many-image side limit applies above its threshold).
    pub fn of(rules: &Rules, images: usize) -> Limits {
        let mut max_side = rules.max_side_px;
        if let Some(many) = rules.many_images
            && images > many.above_images as usize
        {
            max_side = Some(max_side.map_or(many.max_side_px, |s| s.min(many.max_side_px)));
        }
        Limits {
            provider: rules.provider.clone(),
            max_bytes: rules.max_image_bytes,
            bytes_on: rules.image_bytes_on,
            max_side,
            max_pixels: rules.max_pixels,
            animated_ok: rules.animated_gif,
        }
    }

    /// The size the provider measures for `n` raw bytes.
    fn measured(&self, n: usize) -> u64 {
        match self.bytes_on {
            Measure::Raw => n as u64,
            Measure::Base64 => (n as u64).div_ceil(3) * 4,
        }
    }

    fn bytes_fit(&self, n: usize) -> bool {
        self.max_bytes.is_none_or(|max| self.measured(n) <= max)
    }

    fn dims_fit(&self, w: u32, h: u32) -> bool {
        self.max_side.is_none_or(|max| w.max(h) <= max)
            && self.max_pixels.is_none_or(|max| u64::from(w) * u64::from(h) <= max)
    }

    /// The largest size with the same aspect ratio that meets the pixel limits.
    #[allow(clippy::cast_precision_loss, reason = "a pixel limit, far below 2^53; the scale is a float anyway")]
    fn target_dims(&self, w: u32, h: u32) -> (u32, u32) {
        let mut scale = 1.0_f64;
        if let Some(max) = self.max_side {
            scale = scale.min(f64::from(max) / f64::from(w.max(h)));
        }
        if let Some(max) = self.max_pixels {
            scale = scale.min((max as f64 / (f64::from(w) * f64::from(h))).sqrt());
        }
        scaled(w, h, scale)
    }
}

/// What [`fit`] made of one image.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The image already meets every limit: send it as it is.
    Fits,
    /// A smaller copy that meets every limit.
    Fitted(Fitted),
    /// The bytes cannot be fitted (undecodable, not an image, too large to
    /// decode safely): leave them out instead. The reason is a sentence.
    Refused(String),
}

/// A re-encoded image that meets the provider's limits.
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    pub bytes: Vec<u8>,
    pub mime: &'static str,
    pub from: (u32, u32),
    pub to: (u32, u32),
    pub provider: String,
}

impl Fitted {
    /// The note placed beside the fitted image, saying what changed.
    pub fn note(&self, original: Option<&str>) -> String {
        let (fw, fh) = self.from;
        let (tw, th) = self.to;
        let what = if (fw, fh) == (tw, th) {
            format!("re-encoded at {tw}×{th}")
        } else {
            format!("resized from {fw}×{fh} to {tw}×{th}")
        };
        let file = original.map(|o| format!(" Original file: {o}")).unwrap_or_default();
        format!("[Image {what} to fit {}'s limits.{file}]", self.provider)
    }

    /// The extension for a file holding these bytes.
    pub fn extension(&self) -> &'static str {
        if self.mime == "image/jpeg" { "jpg" } else { "png" }
    }
}

/// Problem codes that a smaller copy of the same image cures.
pub const FITTABLE: [&str; 3] = ["image.too_large", "image.too_many_pixels", "gif.animated"];

/// What `--fit` knows of an image before reading its bytes: its size (width,
/// height) and the type its bytes are.
#[derive(Clone, Copy, Debug)]
pub struct Shape<'a> {
    pub size: (Option<u32>, Option<u32>),
    pub mime: Option<&'a str>,
}

impl Shape<'_> {
    /// Why [`fit`] cannot decode an image of this shape (one claiming
    /// 100000×100000 px), or `None` when it can. A JPEG is decoded at up to
    /// 1/8 scale (the `rows` module), so only its 1/8 size counts.
    pub fn undecodable(&self) -> Option<String> {
        let (Some(w), Some(h)) = self.size else { return None };
        let jpeg = self.mime == Some("image/jpeg");
        let (d, each) = if jpeg { (8, 6) } else { (1, 4) };
        let bytes = u64::from(w.div_ceil(d)) * u64::from(h.div_ceil(d)) * each;
        (bytes > MAX_DECODE).then(|| {
            if jpeg {
                let most = MAX_DECODE / 6;
                format!("the image is {w}×{h} px: even decoded at 1/8 scale it is over the {most}-pixel decode budget")
            } else {
                let most = MAX_DECODE / 4;
                format!("the image is {w}×{h} px, over the {most}-pixel decode budget: too large to decode safely")
            }
        })
    }
}

/// Whether every invalid problem of an image is one [`fit`] cures (and there is one).
fn over_limits_only(problems: &[crate::media::Defect]) -> bool {
    let mut invalid = problems.iter().filter(|p| p.severity == Verdict::Invalid).peekable();
    invalid.peek().is_some() && invalid.all(|p| FITTABLE.contains(&p.code))
}

/// Whether every invalid problem of an image is one [`fit`] cures (and there is
/// one), and [`fit`] can decode an image of its shape at all: one claiming
/// 100000×100000 px is refused as too large to decode, so fitting it is no
/// remedy to offer.
pub fn only_fittable(problems: &[crate::media::Defect], shape: Shape<'_>) -> bool {
    over_limits_only(problems) && shape.undecodable().is_none()
}

/// Whether `--fit` is the remedy for an image with `problems`: one that is
/// only too large, or a valid one over `side`, the stricter side a request of
/// many images must keep (`None` where that limit does not apply), whether or
/// not it can be decoded. The second is what Anthropic refuses past 20 images:
/// every image can stay once each is fitted.
pub fn wants_fit(problems: &[crate::media::Defect], shape: Shape<'_>, side: Option<u32>) -> bool {
    if over_limits_only(problems) {
        return true;
    }
    let valid = problems.iter().all(|p| p.severity != Verdict::Invalid);
    let (Some(w), Some(h), Some(side)) = (shape.size.0, shape.size.1, side) else { return false };
    valid && w.max(h) > side
}

/// Whether `--fit` fits an image: it [`wants_fit`] and can be decoded.
pub fn fits_to(problems: &[crate::media::Defect], shape: Shape<'_>, side: Option<u32>) -> bool {
    wants_fit(problems, shape, side) && shape.undecodable().is_none()
}

/// Why `--fit` leaves an image it [`wants_fit`] as it is: it cannot be decoded
/// (every output says so, instead of sending it unchanged without a word).
pub fn unfittable(problems: &[crate::media::Defect], shape: Shape<'_>, side: Option<u32>) -> Option<String> {
    wants_fit(problems, shape, side).then(|| shape.undecodable()).flatten()
}

/// Fits `bytes` to `limits`; see the module doc.
pub fn fit(bytes: &[u8], limits: &Limits) -> Outcome {
    fit_as(bytes, limits, true)
}

/// [`fit`], where `allow_jpeg` says whether a PNG may become a JPEG to meet
/// the byte limit (not where the mime type sits apart from the bytes and
/// cannot change with them).
pub fn fit_as(bytes: &[u8], limits: &Limits, allow_jpeg: bool) -> Outcome {
    let facts = Facts::examine(bytes, None, Depth::Deep);
    let Some(mime) = facts.mime_detected() else {
        return Outcome::Refused("the bytes are not an image session-doctor can decode".into());
    };
    if !matches!(mime, "image/png" | "image/jpeg" | "image/gif" | "image/webp") {
        return Outcome::Refused(format!("{mime} is not an image session-doctor can resize"));
    }
    if let Some(bad) = facts.damage.iter().find(|p| p.severity == Verdict::Invalid) {
        return Outcome::Refused(format!("the image does not decode ({}), so it cannot be fitted", bad.message));
    }
    let (Some(w), Some(h)) = (facts.width, facts.height) else {
        return Outcome::Refused("the image's dimensions are unknown".into());
    };
    let animated = facts.frames.is_some_and(|f| f > 1);
    if limits.dims_fit(w, h) && limits.bytes_fit(bytes.len()) && (limits.animated_ok || !animated) {
        return Outcome::Fits;
    }
    if let Some(why) = (Shape { size: (Some(w), Some(h)), mime: Some(mime) }).undecodable() {
        return Outcome::Refused(why);
    }
    let target = |sw, sh| limits.target_dims(sw, sh);
    let src = match rows::Source::open(bytes, mime, MAX_DECODE, &target) {
        Ok(src) => src,
        Err(rows::Unopened::TooLarge(why)) => {
            return Outcome::Refused(format!("the {w}×{h} image is too large to fit: {why}"));
        }
        Err(rows::Unopened::Undecodable(e)) => {
            return Outcome::Refused(format!("the image does not decode ({e}), so it cannot be fitted"));
        }
    };
    // Limits hold for the image as shown: an EXIF orientation that turns it
    // is applied, and the sizes named are the shown ones.
    let (w, h) = src.shown();
    let keep_png = mime != "image/jpeg";
    let (mut tw, mut th) = limits.target_dims(w, h);
    let (mw, mh) = src.most();
    if mw < tw || mh < th {
        (tw, th) = (mw.min(tw), mh.min(th));
    }
    let mut failed = None;
    for _ in 0..MAX_TRIES {
        let candidates: &[&'static str] = match (keep_png, allow_jpeg) {
            (true, true) => &["image/png", "image/jpeg"],
            (true, false) => &["image/png"],
            (false, _) => &["image/jpeg"],
        };
        for &out_mime in candidates {
            let out = match src.encode(tw, th, out_mime) {
                Ok(out) => out,
                Err(e) => {
                    failed = Some(e);
                    continue;
                }
            };
            if limits.bytes_fit(out.len()) && passes_deep_check(&out) {
                return Outcome::Fitted(Fitted {
                    bytes: out,
                    mime: out_mime,
                    from: (w, h),
                    to: (tw, th),
                    provider: limits.provider.clone(),
                });
            }
        }
        if tw <= 16 || th <= 16 {
            break;
        }
        (tw, th) = scaled(tw, th, 0.75);
    }
    if let Some(e) = failed {
        return Outcome::Refused(format!("the {w}×{h} image could not be fitted ({e})"));
    }
    Outcome::Refused(format!("no smaller copy of the {w}×{h} image meets {}'s limits", limits.provider))
}

fn scaled(w: u32, h: u32, scale: f64) -> (u32, u32) {
    if scale >= 1.0 {
        return (w, h);
    }
    // Truncating casts on purpose: the result must not exceed the limit.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "scale is below 1, so the floor is in 0..=n (NaN: 0, then 1)"
    )]
    let side = |n: u32| ((f64::from(n) * scale).floor() as u32).max(1);
    (side(w), side(h))
}

fn encode(img: &DynamicImage, mime: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match mime {
        "image/png" => img.write_to(&mut Cursor::new(&mut out), ImageFormat::Png).ok()?,
        _ => {
            // JPEG has no alpha channel: flatten onto white, as a screenshot viewer would.
            let rgb = flatten(img);
            JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY).encode_image(&rgb).ok()?;
        }
    }
    Some(out)
}

fn flatten(img: &DynamicImage) -> DynamicImage {
    if !img.color().has_alpha() {
        return DynamicImage::ImageRgb8(img.to_rgb8());
    }
    let rgba = img.to_rgba8();
    let rgb = image::RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let [r, g, b, a] = rgba.get_pixel(x, y).0;
        let over =
            |c: u8| u8::try_from((u16::from(c) * u16::from(a) + 255 * (255 - u16::from(a))) / 255).unwrap_or(u8::MAX);
        image::Rgb([over(r), over(g), over(b)])
    });
    DynamicImage::ImageRgb8(rgb)
}

/// The fitted bytes must be what session-doctor itself would call valid.
fn passes_deep_check(bytes: &[u8]) -> bool {
    Facts::examine(bytes, None, Depth::Deep).damage.iter().all(|p| p.severity != Verdict::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy_png(w: u32, h: u32) -> Vec<u8> {
        // Noise does not compress, so the byte limit is what has to give.
        let mut seed = 0x1234_5678_u32;
        let img = image::RgbImage::from_fn(w, h, |_, _| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let [a, b, c, _] = seed.to_le_bytes();
            image::Rgb([a, b, c])
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img).write_to(&mut Cursor::new(&mut out), ImageFormat::Png).unwrap();
        out
    }

    #[test]
    fn an_image_past_the_decode_budget_is_refused_before_it_is_decoded() {
        // A valid 5800 × 5800 RGBA PNG of zeros: 135 MB of pixels in well under 1 MB,
        // written row by row.
        let side = 5800;
        let mut png = Vec::new();
        let mut enc = png::Encoder::new(&mut png, side, side);
        enc.set_color(png::ColorType::Rgba);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc.write_header().unwrap();
        let mut rows = w.stream_writer().unwrap();
        let row = vec![0u8; side as usize * 4];
        for _ in 0..side {
            std::io::Write::write_all(&mut rows, &row).unwrap();
        }
        rows.finish().unwrap();
        drop(w);
        match fit(&png, &limits(None, Some(2000))) {
            Outcome::Refused(why) => assert!(why.contains("over the 33554432-pixel decode budget"), "{why}"),
            _ => panic!("fitted past the decode budget"),
        }
    }

    fn limits(max_bytes: Option<u64>, max_side: Option<u32>) -> Limits {
        Limits {
            provider: "anthropic".into(),
            max_bytes,
            bytes_on: Measure::Raw,
            max_side,
            max_pixels: None,
            animated_ok: true,
        }
    }

    #[test]
    fn an_image_within_limits_is_left_alone() {
        assert_eq!(fit(&noisy_png(40, 30), &limits(None, Some(100))), Outcome::Fits);
    }

    #[test]
    fn a_side_over_the_limit_is_downscaled_keeping_png_and_aspect() {
        let Outcome::Fitted(f) = fit(&noisy_png(400, 300), &limits(None, Some(100))) else { panic!("not fitted") };
        assert_eq!((f.from, f.to, f.mime), ((400, 300), (100, 75), "image/png"));
        let facts = Facts::examine(&f.bytes, None, Depth::Deep);
        assert_eq!((facts.width, facts.height), (Some(100), Some(75)));
        assert!(
            f.note(Some("shot.png")).starts_with("[Image resized from 400×300 to 100×75 to fit anthropic's limits.")
        );
    }

    #[test]
    fn a_byte_limit_png_cannot_meet_turns_to_jpeg_before_shrinking_further() {
        let png = noisy_png(200, 200);
        let max = (png.len() / 3) as u64;
        let Outcome::Fitted(f) = fit(&png, &limits(Some(max), None)) else { panic!("not fitted") };
        assert!(f.bytes.len() as u64 <= max, "{} > {max}", f.bytes.len());
        assert_eq!(f.mime, "image/jpeg");
    }

    #[test]
    fn base64_measure_counts_the_encoded_length() {
        let png = noisy_png(64, 64);
        let raw = png.len() as u64;
        let l = Limits { bytes_on: Measure::Base64, ..limits(Some(raw + 1), None) };
        // Fits raw, but not as base64 (4/3 larger).
        assert!(matches!(fit(&png, &l), Outcome::Fitted(_)));
    }

    #[test]
    fn undecodable_bytes_are_refused_never_fitted() {
        let png = noisy_png(400, 300);
        let cut = &png[..png.len() / 2];
        assert!(matches!(fit(cut, &limits(None, Some(100))), Outcome::Refused(r) if r.contains("does not decode")));
        assert!(matches!(fit(b"%PDF-1.4 hello", &limits(None, Some(100))), Outcome::Refused(_)));
    }

    fn gradient_jpeg(w: u16, h: u16, progressive: bool) -> Vec<u8> {
        let rgb: Vec<u8> =
            (0..h).flat_map(|y| (0..w).flat_map(move |x| [x.to_le_bytes()[0], y.to_le_bytes()[0], 128])).collect();
        let mut out = Vec::new();
        let mut enc = jpeg_encoder::Encoder::new(&mut out, 85);
        enc.set_progressive(progressive);
        enc.encode(&rgb, w, h, jpeg_encoder::ColorType::Rgb).unwrap();
        out
    }

    #[test]
    fn a_jpeg_is_decoded_at_the_smallest_scale_that_covers_the_target() {
        for progressive in [false, true] {
            let jpeg = gradient_jpeg(900, 600, progressive);
            // 400 px wide needs 450 (1/2): 1/4 (225) would not cover it.
            let target = |_, _| (400, 266);
            let src = rows::Source::open(&jpeg, "image/jpeg", MAX_DECODE, &target).unwrap();
            assert_eq!((src.width, src.height, src.shown()), (450, 300, (900, 600)));
            let Outcome::Fitted(f) = fit(&jpeg, &limits(None, Some(400))) else { panic!("not fitted") };
            assert_eq!((f.from, f.to, f.mime), ((900, 600), (400, 266), "image/jpeg"));
        }
        // Over the budget at the scale the target needs: the next scale down, and the fit is to it.
        let jpeg = gradient_jpeg(900, 600, false);
        let src = rows::Source::open(&jpeg, "image/jpeg", 450 * 300 * 6 - 1, &|_, _| (400, 266)).unwrap();
        assert_eq!((src.width, src.height, src.most()), (225, 150, (225, 150)));
    }

    #[test]
    fn a_progressive_jpeg_past_its_coefficient_budget_is_refused_with_why() {
        let jpeg = gradient_jpeg(64, 64, true);
        let target = |_, _| (32, 32);
        let Err(rows::Unopened::TooLarge(why)) = rows::Source::open(&jpeg, "image/jpeg", 1000, &target) else {
            panic!("opened, or called undecodable")
        };
        assert_eq!(
            why,
            "it is a progressive JPEG, whose 12.3 kB of coefficients are held whole until its last scan, more than the 2.0 kB a fit may use"
        );
    }

    #[test]
    fn many_images_tighten_the_side_limit() {
        let rules = Rules::builtin("anthropic").unwrap();
        assert_eq!(Limits::of(&rules, 1).max_side, Some(8000));
        assert_eq!(Limits::of(&rules, 21).max_side, Some(2000));
    }
}
