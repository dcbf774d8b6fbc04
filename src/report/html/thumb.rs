//! What an attachment card shows of the bytes themselves: a downscaled
//! thumbnail for an image (what could be decoded of a broken one), the page
//! count and first text of a PDF, the first bytes of anything else.
//!
//! The bytes are untrusted and can be hostile: an image claiming more than
//! [`MAX_PIXELS`] is not decoded, decoders run with allocation limits and
//! under `catch_unwind`, and a PDF is only opened when validation found its
//! structure sound (so a page tree that loops never reaches lopdf's walk).

use std::io::Cursor;

use base64::Engine as _;
use image::{ImageEncoder as _, RgbaImage};

use crate::media::Verdict;
use crate::model::Attachment;

/// Longest side of a thumbnail, in pixels.
pub const THUMB_SIDE: u32 = 256;
/// Images claiming more pixels than this are not decoded for a preview.
pub const MAX_PIXELS: u64 = 64_000_000;
/// Most bytes a decoder may allocate for one preview (64 Mpx of RGBA, plus slack).
const MAX_ALLOC: u64 = MAX_PIXELS * 4 + (16 << 20);
/// A thumbnail larger than this (encoded) is re-encoded as a smaller JPEG.
const THUMB_TARGET: usize = 40 << 10;

/// What a card shows of the bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Preview {
    /// A thumbnail as a `data:` URL. `broken` says why only part of the image
    /// could be decoded (the rest is grey).
    Image { data_url: String, width: u32, height: u32, broken: Option<String> },
    /// A PDF that opens: its page count and the first text of page 1.
    Pdf { pages: u32, text: String },
    /// The bytes' sniffed type and their first bytes, as text (or hex).
    Bytes { kind: String, head: String },
    /// Nothing to show, and why.
    None { why: String },
}

impl Preview {
    /// Encoded size this preview adds to the page.
    pub fn weight(&self) -> usize {
        match self {
            Preview::Image { data_url, .. } => data_url.len(),
            Preview::Pdf { text, .. } => text.len(),
            Preview::Bytes { head, .. } => head.len(),
            Preview::None { why } => why.len(),
        }
    }
}

/// The preview of one attachment whose bytes are `bytes`.
pub fn preview(a: &Attachment, bytes: &[u8]) -> Preview {
    if bytes.is_empty() {
        return Preview::None { why: "empty: 0 bytes".into() };
    }
    let detected = a.mime_detected.as_deref().unwrap_or("");
    match detected {
        "image/png" | "image/jpeg" | "image/gif" | "image/webp" => image_preview(a, bytes, detected),
        "application/pdf" => pdf_preview(a, bytes),
        _ => head(a, bytes),
    }
}

fn image_preview(a: &Attachment, bytes: &[u8], mime: &str) -> Preview {
    if let (Some(w), Some(h)) = (a.width, a.height)
        && u64::from(w) * u64::from(h) > MAX_PIXELS
    {
        return Preview::None {
            why: format!("too large to preview: {w}×{h} px is over {} megapixels", MAX_PIXELS / 1_000_000),
        };
    }
    let decoded = crate::contain::contain(|| decode(bytes, mime));
    let (img, broken) = match decoded {
        // Some decoders fill in what a cut file lacks: the validation's damage still marks it.
        Ok(Ok(img)) => {
            (img, damaged(a).then(|| "shown as far as it decodes; the decoder filled in the rest".to_string()))
        }
        Ok(Err(e)) => match partial_png(bytes, mime) {
            Some((img, why)) => (img, Some(why)),
            None => return Preview::None { why: format!("does not decode: {e}") },
        },
        Err(_) => return Preview::None { why: "the decoder failed on these bytes: they are corrupt".into() },
    };
    let Some(thumb) = downscale(&img) else {
        return Preview::None { why: "the image has no pixels".into() };
    };
    let (width, height) = thumb.dimensions();
    match encode(&thumb) {
        Some(data_url) => Preview::Image { data_url, width, height, broken },
        None => Preview::None { why: "the thumbnail could not be encoded".into() },
    }
}

/// Validation found structural damage in the image's own format (not a
/// provider limit: an image over a limit is whole).
fn damaged(a: &Attachment) -> bool {
    a.problems.iter().any(|p| {
        p.severity == Verdict::Invalid && ["png.", "jpeg.", "gif.", "webp."].iter().any(|f| p.code.starts_with(f))
    })
}

/// A full decode with the `image` crate, bounded by [`MAX_ALLOC`].
fn decode(bytes: &[u8], mime: &str) -> Result<RgbaImage, String> {
    let format = match mime {
        "image/png" => image::ImageFormat::Png,
        "image/jpeg" => image::ImageFormat::Jpeg,
        "image/gif" => image::ImageFormat::Gif,
        _ => image::ImageFormat::WebP,
    };
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_ALLOC);
    reader.limits(limits);
    let img = reader.decode().map_err(|e| e.to_string())?;
    Ok(img.into_rgba8())
}

/// What can be decoded of a truncated or damaged PNG: every row before the
/// damage, the rest left grey. `None` when not even the header reads.
fn partial_png(bytes: &[u8], mime: &str) -> Option<(RgbaImage, String)> {
    if mime != "image/png" {
        return None;
    }
    crate::contain::contain(|| {
        let mut dec = png::Decoder::new(Cursor::new(bytes));
        dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        dec.set_limits(png::Limits { bytes: usize::try_from(MAX_ALLOC).unwrap_or(usize::MAX) });
        let mut reader = dec.read_info().ok()?;
        let (w, h) = (reader.info().width, reader.info().height);
        if reader.info().interlaced || u64::from(w) * u64::from(h) > MAX_PIXELS {
            return None;
        }
        let (color, _) = reader.output_color_type();
        let mut img = RgbaImage::from_pixel(w, h, image::Rgba([150, 150, 150, 255]));
        let mut rows = 0;
        let mut error = None;
        while rows < h {
            match reader.next_row() {
                Ok(Some(row)) => {
                    let data = row.data();
                    for x in 0..w {
                        let px = pixel(data, x as usize, color);
                        img.put_pixel(x, rows, image::Rgba(px));
                    }
                    rows += 1;
                }
                Ok(None) => break,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            }
        }
        if rows == 0 {
            return None;
        }
        let why = match error {
            Some(e) => format!("only {rows} of {h} rows decode ({e}); the rest is grey"),
            None => format!("only {rows} of {h} rows decode; the rest is grey"),
        };
        Some((img, why))
    })
    .ok()
    .flatten()
}

/// One 8-bit pixel of an expanded PNG row, as RGBA.
fn pixel(row: &[u8], x: usize, color: png::ColorType) -> [u8; 4] {
    let at = |i: usize| row.get(i).copied().unwrap_or(0);
    match color {
        png::ColorType::Grayscale => {
            let g = at(x);
            [g, g, g, 255]
        }
        png::ColorType::GrayscaleAlpha => {
            let g = at(2 * x);
            [g, g, g, at(2 * x + 1)]
        }
        png::ColorType::Rgb | png::ColorType::Indexed => [at(3 * x), at(3 * x + 1), at(3 * x + 2), 255],
        png::ColorType::Rgba => [at(4 * x), at(4 * x + 1), at(4 * x + 2), at(4 * x + 3)],
    }
}

/// Fits the image in a [`THUMB_SIDE`] square, keeping its aspect ratio; never enlarges.
fn downscale(img: &RgbaImage) -> Option<RgbaImage> {
    let (w, h) = img.dimensions();
    if w == 0 || h == 0 {
        return None;
    }
    let long = w.max(h);
    if long <= THUMB_SIDE {
        return Some(img.clone());
    }
    let scale = |v: u32| {
        u32::try_from((u64::from(v) * u64::from(THUMB_SIDE)).div_ceil(u64::from(long)))
            .unwrap_or(THUMB_SIDE)
            .clamp(1, THUMB_SIDE)
    };
    Some(image::imageops::thumbnail(img, scale(w), scale(h)))
}

/// The thumbnail as a data URL: PNG (keeps transparency and sharp text), or
/// JPEG when the image is opaque and the JPEG is smaller.
fn encode(img: &RgbaImage) -> Option<String> {
    let (w, h) = img.dimensions();
    let opaque = img.pixels().all(|p| p.0[3] == 255);
    let mut png_bytes = Vec::new();
    let png = image::codecs::png::PngEncoder::new_with_quality(
        &mut png_bytes,
        image::codecs::png::CompressionType::Default,
        image::codecs::png::FilterType::Adaptive,
    );
    let rgb;
    let (raw, color): (&[u8], _) = if opaque {
        rgb = image::DynamicImage::ImageRgba8(img.clone()).into_rgb8();
        (rgb.as_raw(), image::ExtendedColorType::Rgb8)
    } else {
        (img.as_raw(), image::ExtendedColorType::Rgba8)
    };
    png.write_image(raw, w, h, color).ok()?;
    let mut best = ("image/png", png_bytes);
    if opaque && best.1.len() > THUMB_TARGET / 2 {
        for quality in [82, 60] {
            let mut jpeg = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, quality)
                .write_image(raw, w, h, color)
                .ok()?;
            if jpeg.len() < best.1.len() {
                best = ("image/jpeg", jpeg);
            }
            if best.1.len() <= THUMB_TARGET {
                break;
            }
        }
    }
    let (mime, bytes) = best;
    Some(format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes)))
}

fn pdf_preview(a: &Attachment, bytes: &[u8]) -> Preview {
    // Our own validation walked the page tree with a cycle guard; lopdf's own
    // walk (page list, text extraction) is only trusted on a sound structure.
    if let Some(p) = a.problems.iter().find(|p| p.severity == Verdict::Invalid && p.code.starts_with("pdf.")) {
        return Preview::None { why: format!("does not open: {}", p.message) };
    }
    let opened = crate::contain::contain(|| {
        let opts =
            lopdf::LoadOptions { strict: true, max_decompressed_size: Some(16 << 20), ..lopdf::LoadOptions::default() };
        let doc = lopdf::Document::load_mem_with_options(bytes, opts).map_err(|e| e.to_string())?;
        let pages = doc.get_pages();
        let text = match pages.keys().next() {
            Some(&first) => doc.extract_text_with_limit(&[first], 16 << 20).unwrap_or_default(),
            None => String::new(),
        };
        Ok::<_, String>((pages.len(), text))
    });
    match opened {
        Ok(Ok((pages, text))) => {
            let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(400).collect();
            Preview::Pdf { pages: a.pages.unwrap_or(u32::try_from(pages).unwrap_or(u32::MAX)), text }
        }
        Ok(Err(e)) => Preview::None { why: format!("does not open: {e}") },
        Err(_) => Preview::None { why: "the PDF parser failed on this file: its structure is broken".into() },
    }
}

/// The sniffed type and the first bytes: as text when they read as text, else hex.
fn head(a: &Attachment, bytes: &[u8]) -> Preview {
    let kind = a.mime_detected.clone().unwrap_or_else(|| "unknown bytes".into());
    let first = &bytes[..bytes.len().min(240)];
    let printable = first.iter().filter(|&&b| b.is_ascii_graphic() || b.is_ascii_whitespace()).count();
    let head = if printable * 10 >= first.len() * 9 {
        let text = String::from_utf8_lossy(first);
        let text = text.trim_end_matches('\u{FFFD}');
        crate::text::sanitize_keeping_lines(text)
    } else {
        first[..first.len().min(48)]
            .chunks(16)
            .map(|c| c.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Preview::Bytes { kind, head }
}
