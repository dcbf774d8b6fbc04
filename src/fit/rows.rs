//! The fit's pixels, a row at a time: decoded rows in, an area-averaged
//! (box filter) smaller image out, so a fit holds what a few rows need
//! instead of the whole decoded image and the resize's buffers (issue 37,
//! item 8).
//!
//! - A non-interlaced PNG is read row by row through the `png` crate's row
//!   reader, every sample normalized to 8 bits (a 16-bit PNG costs what an
//!   8-bit one does, issue 37, item 9), and the smaller rows go straight into
//!   the PNG encoder: memory is a few source rows, two rows of sums, the
//!   compressed input and output.
//! - A JPEG is decoded at the smallest of 1, 1/2, 1/4 or 1/8 scale (in its
//!   inverse DCT: `jpeg-decoder`'s `Decoder::scale`) that still covers the
//!   target in both directions, so the decoded image is under about twice the
//!   target's sides, never the whole photo (issue 36, item 4). A baseline JPEG
//!   is decoded a row of blocks at a time; a progressive one keeps every
//!   coefficient until its last scan (2 bytes a sample), and is refused past
//!   the budget for that.
//! - An interlaced PNG, a GIF or a WebP is decoded whole once (8 bits a
//!   sample, at most 4 bytes a pixel), then read a row at a time.
//! - A JPEG output, or an image whose EXIF orientation turns it, holds the
//!   fitted image (at most 4 bytes a pixel of the fitted size) to encode or
//!   turn it (issue 37, item 14).

use std::io::Cursor;

use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder as _, ImageFormat};

/// Bytes the whole-image decoders may allocate beyond the pixels themselves.
const DECODER_SLACK: u64 = 64 << 20;

/// Decoded pixels of one image, ready to be shrunk any number of times.
pub(super) struct Source<'a> {
    bytes: &'a [u8],
    /// Pixels decoded whole (8 bits a sample), or `None`: rows are read from the PNG each time.
    decoded: Option<Vec<u8>>,
    /// The size of the pixels read (a JPEG's decoded at a smaller scale).
    pub width: u32,
    pub height: u32,
    /// The image's own size, as stored (before its orientation).
    full: (u32, u32),
    /// Samples a pixel: 1 (grey), 2 (grey and alpha), 3 (RGB) or 4 (RGBA).
    channels: usize,
    pub orientation: Orientation,
}

impl<'a> Source<'a> {
    /// Opens `bytes` of type `mime`; `max_decode` bounds the bytes of a whole
    /// decode; `target` is the largest size (from the size shown) the fit will
    /// ask for, which a JPEG is decoded just large enough to cover.
    pub fn open(bytes: &'a [u8], mime: &str, max_decode: u64, target: Target<'_>) -> Result<Source<'a>, Unopened> {
        match mime {
            "image/png" => return open_png(bytes, max_decode).map_err(Unopened::Undecodable),
            "image/jpeg" => return open_jpeg(bytes, max_decode, target),
            _ => {}
        }
        let format = if mime == "image/gif" { ImageFormat::Gif } else { ImageFormat::WebP };
        let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
        let mut limits = image::Limits::default();
        limits.max_alloc = Some(max_decode + DECODER_SLACK);
        reader.limits(limits);
        let decoded = crate::contain::contain(|| -> image::ImageResult<(DynamicImage, Orientation)> {
            let mut decoder = reader.into_decoder()?;
            let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
            Ok((DynamicImage::from_decoder(decoder)?, orientation))
        })
        .map_err(|_| Unopened::Undecodable("the decoder failed".into()))?
        .map_err(|e| Unopened::Undecodable(e.to_string()))?;
        let (img, orientation) = decoded;
        let (width, height) = (img.width(), img.height());
        let (channels, pixels) = samples_of(img);
        Ok(Source { bytes, decoded: Some(pixels), width, height, full: (width, height), channels, orientation })
    }

    /// Whether the orientation swaps width and height.
    pub fn turned(&self) -> bool {
        turns(self.orientation)
    }

    /// The size the pixels read are shown at: a JPEG's decoded at a smaller
    /// scale may be smaller than the size a fit aims for, and no fit is larger.
    pub fn most(&self) -> (u32, u32) {
        if self.turned() { (self.height, self.width) } else { (self.width, self.height) }
    }

    /// The size the image is shown at (its orientation applied).
    pub fn shown(&self) -> (u32, u32) {
        let (w, h) = self.full;
        if self.turned() { (h, w) } else { (w, h) }
    }

    /// The image shown at `(tw, th)` (its orientation applied), encoded as
    /// `mime` (PNG or JPEG), or why it could not be.
    pub fn encode(&self, tw: u32, th: u32, mime: &str) -> Result<Vec<u8>, String> {
        let (sw, sh) = if self.turned() { (th, tw) } else { (tw, th) };
        if mime == "image/png" && self.orientation == Orientation::NoTransforms {
            return self.png_streamed(sw, sh);
        }
        let mut pixels = Vec::with_capacity(sw as usize * sh as usize * self.channels);
        self.shrink(sw, sh, &mut |row| {
            pixels.extend_from_slice(row);
            Ok(())
        })?;
        let mut img = image_of(sw, sh, self.channels, pixels).ok_or("the fitted pixels do not make an image")?;
        img.apply_orientation(self.orientation);
        super::encode(&img, mime).ok_or_else(|| format!("the {mime} encoder failed"))
    }

    /// The image at `(sw, sh)` as stored, each row going into the PNG encoder as it is made.
    fn png_streamed(&self, sw: u32, sh: u32) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, sw, sh);
        enc.set_color(match self.channels {
            1 => png::ColorType::Grayscale,
            2 => png::ColorType::GrayscaleAlpha,
            3 => png::ColorType::Rgb,
            _ => png::ColorType::Rgba,
        });
        enc.set_depth(png::BitDepth::Eight);
        let mut header = enc.write_header().map_err(|e| e.to_string())?;
        {
            let mut stream = header.stream_writer().map_err(|e| e.to_string())?;
            self.shrink(sw, sh, &mut |row| std::io::Write::write_all(&mut stream, row).map_err(|e| e.to_string()))?;
            stream.finish().map_err(|e| e.to_string())?;
        }
        header.finish().map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// Feeds every source row through a box filter to `(sw, sh)`, handing each finished row to `emit`.
    fn shrink(&self, sw: u32, sh: u32, emit: &mut dyn FnMut(&[u8]) -> Result<(), String>) -> Result<(), String> {
        let mut boxf = BoxFilter::new((self.width, self.height), (sw, sh), self.channels);
        if let Some(pixels) = &self.decoded {
            let stride = self.width as usize * self.channels;
            for row in pixels.chunks_exact(stride) {
                boxf.push(row, emit)?;
            }
        } else {
            let mut reader = png_reader(self.bytes).map_err(|e| e.to_string())?;
            while let Some(row) = reader.next_row().map_err(|e| e.to_string())? {
                boxf.push(row.data(), emit)?;
            }
        }
        boxf.finish(emit)
    }
}

fn png_reader(bytes: &[u8]) -> Result<png::Reader<Cursor<&[u8]>>, png::DecodingError> {
    let mut dec = png::Decoder::new(Cursor::new(bytes));
    // Palette and low bit depths expanded, 16-bit samples cut to 8: at most 4 bytes a pixel.
    dec.set_transformations(png::Transformations::normalize_to_color8());
    dec.read_info()
}

fn open_png(bytes: &[u8], max_decode: u64) -> Result<Source<'_>, String> {
    let opened = crate::contain::contain(|| -> Result<Source<'_>, png::DecodingError> {
        let mut reader = png_reader(bytes)?;
        let (color, _) = reader.output_color_type();
        let info = reader.info();
        let (width, height, interlaced) = (info.width, info.height, info.interlaced);
        let orientation =
            info.exif_metadata.as_deref().and_then(Orientation::from_exif_chunk).unwrap_or(Orientation::NoTransforms);
        let channels = color.samples();
        let mut src = Source { bytes, decoded: None, width, height, full: (width, height), channels, orientation };
        if interlaced {
            // Adam7's passes come out of order: decode the frame whole (8 bits a sample).
            let need = reader.output_buffer_size().ok_or(png::DecodingError::LimitsExceeded)?;
            if need as u64 > max_decode {
                return Err(png::DecodingError::LimitsExceeded);
            }
            let mut pixels = vec![0; need];
            reader.next_frame(&mut pixels)?;
            src.decoded = Some(pixels);
        }
        Ok(src)
    });
    opened.map_err(|_| "the decoder failed".to_string())?.map_err(|e| e.to_string())
}

/// Bytes a pixel of a JPEG's decode costs at most: its components' planes (3
/// samples a pixel unsubsampled) and the interleaved pixels made from them.
const JPEG_BYTES_A_PIXEL: u64 = 6;

/// Why an image was not opened for a fit.
#[derive(Debug)]
pub(super) enum Unopened {
    /// Valid, as far as anyone knows, but over the memory a fit may use: the reason.
    TooLarge(String),
    /// The decoder refused the bytes: its error.
    Undecodable(String),
}

/// The largest size a fit will ask for, given the size shown.
pub(super) type Target<'t> = &'t dyn Fn(u32, u32) -> (u32, u32);

fn turns(o: Orientation) -> bool {
    matches!(
        o,
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH
    )
}

/// A JPEG decoded at the smallest IDCT scale that covers the target (see the module doc).
fn open_jpeg<'a>(bytes: &'a [u8], max_decode: u64, target: Target<'_>) -> Result<Source<'a>, Unopened> {
    use jpeg_decoder::{CodingProcess, PixelFormat};
    let opened = crate::contain::contain(|| -> Result<Source<'a>, Unopened> {
        let undecodable = |e: jpeg_decoder::Error| Unopened::Undecodable(e.to_string());
        let mut dec = jpeg_decoder::Decoder::new(Cursor::new(bytes));
        dec.read_info().map_err(undecodable)?;
        let info = dec.info().ok_or_else(|| Unopened::Undecodable("the JPEG has no frame header".into()))?;
        let (w, h) = (u32::from(info.width), u32::from(info.height));
        let orientation = dec.exif_data().and_then(Orientation::from_exif_chunk).unwrap_or(Orientation::NoTransforms);
        let (tw, th) = if turns(orientation) { target(h, w) } else { target(w, h) };
        let (sw, sh) = if turns(orientation) { (th, tw) } else { (tw, th) };
        // The largest divisor whose image still covers the target both ways; a
        // larger one where that decode would be over the budget (the fit is then
        // to the decoded size, smaller than the limits need, never a whole decode).
        let cost = |d: u32| u64::from(w.div_ceil(d)) * u64::from(h.div_ceil(d)) * JPEG_BYTES_A_PIXEL;
        let mut d = [8, 4, 2, 1].into_iter().find(|&d| w.div_ceil(d) >= sw && h.div_ceil(d) >= sh).unwrap_or(1);
        while d < 8 && cost(d) > max_decode {
            d *= 2;
        }
        if info.coding_process == CodingProcess::DctProgressive {
            let need = progressive_coefficients(bytes).unwrap_or(u64::from(w) * u64::from(h) * 6);
            if need > 2 * max_decode {
                return Err(Unopened::TooLarge(format!(
                    "it is a progressive JPEG, whose {} of coefficients are held whole until its last scan, \
                     more than the {} a fit may use",
                    crate::text::units::size(need),
                    crate::text::units::size(2 * max_decode)
                )));
            }
        }
        let size = |n: u32| u16::try_from(n.div_ceil(d)).unwrap_or(u16::MAX);
        let (ow, oh) = dec.scale(size(w), size(h)).map_err(undecodable)?;
        let (ow, oh) = (u32::from(ow), u32::from(oh));
        if u64::from(ow) * u64::from(oh) * JPEG_BYTES_A_PIXEL > max_decode {
            return Err(Unopened::TooLarge(format!("even at 1/8 scale it is {ow}×{oh} px, over the decode budget")));
        }
        dec.set_max_decoding_buffer_size(usize::try_from(max_decode).unwrap_or(usize::MAX));
        let raw = dec.decode().map_err(undecodable)?;
        let (channels, pixels) = match info.pixel_format {
            PixelFormat::L8 => (1, raw),
            // Big-endian 16-bit samples: the high byte is the 8-bit one.
            PixelFormat::L16 => (1, raw.chunks_exact(2).map(|s| s[0]).collect()),
            PixelFormat::RGB24 => (3, raw),
            // jpeg-decoder hands CMYK over as stored (Adobe's inverted ink): white is 255 in each.
            PixelFormat::CMYK32 => (3, cmyk_to_rgb(&raw)),
        };
        Ok(Source { bytes, decoded: Some(pixels), width: ow, height: oh, full: (w, h), channels, orientation })
    });
    opened.map_err(|_| Unopened::Undecodable("the decoder failed".into()))?
}

/// RGB of inverted CMYK samples (as Adobe writes them and jpeg-decoder returns them).
fn cmyk_to_rgb(cmyk: &[u8]) -> Vec<u8> {
    let mul = |a: u8, b: u8| u8::try_from(u16::from(a) * u16::from(b) / 255).unwrap_or(u8::MAX);
    cmyk.chunks_exact(4).flat_map(|p| [mul(p[0], p[3]), mul(p[1], p[3]), mul(p[2], p[3])]).collect()
}

/// The bytes a decoder holds for a progressive JPEG's coefficients: 2 a
/// sample of every component, in whole blocks of whole MCUs, read from the
/// frame header (`None` when there is none to read).
fn progressive_coefficients(bytes: &[u8]) -> Option<u64> {
    let be16 = |at: usize| bytes.get(at..at + 2).map(|b| u64::from(u16::from_be_bytes([b[0], b[1]])));
    let mut pos = 2;
    loop {
        if *bytes.get(pos)? != 0xFF {
            return None;
        }
        let m = *bytes.get(pos + 1)?;
        if m == 0xFF {
            pos += 1;
            continue;
        }
        let len = usize::try_from(be16(pos + 2)?).ok()?;
        if matches!(m, 0xC0..=0xCF) && !matches!(m, 0xC4 | 0xC8 | 0xCC) {
            let (h, w, n) = (be16(pos + 5)?, be16(pos + 7)?, usize::from(*bytes.get(pos + 9)?));
            let factors: Vec<(u64, u64)> = (0..n)
                .map(|i| bytes.get(pos + 11 + 3 * i).map(|&b| (u64::from(b >> 4).max(1), u64::from(b & 15).max(1))))
                .collect::<Option<_>>()?;
            let hmax = factors.iter().map(|f| f.0).max()?;
            let vmax = factors.iter().map(|f| f.1).max()?;
            let (mcux, mcuy) = (w.div_ceil(8 * hmax), h.div_ceil(8 * vmax));
            return Some(factors.iter().map(|&(fh, fv)| mcux * fh * 8 * mcuy * fv * 8 * 2).sum());
        }
        pos += 2 + len;
    }
}

/// The samples of `img` at 8 bits, and how many a pixel.
fn samples_of(img: DynamicImage) -> (usize, Vec<u8>) {
    match img {
        DynamicImage::ImageLuma8(i) => (1, i.into_raw()),
        DynamicImage::ImageLumaA8(i) => (2, i.into_raw()),
        DynamicImage::ImageRgb8(i) => (3, i.into_raw()),
        DynamicImage::ImageRgba8(i) => (4, i.into_raw()),
        other if other.color().has_alpha() => (4, other.to_rgba8().into_raw()),
        other => (3, other.to_rgb8().into_raw()),
    }
}

fn image_of(w: u32, h: u32, channels: usize, pixels: Vec<u8>) -> Option<DynamicImage> {
    Some(match channels {
        1 => DynamicImage::ImageLuma8(image::GrayImage::from_raw(w, h, pixels)?),
        2 => DynamicImage::ImageLumaA8(image::GrayAlphaImage::from_raw(w, h, pixels)?),
        3 => DynamicImage::ImageRgb8(image::RgbImage::from_raw(w, h, pixels)?),
        _ => DynamicImage::ImageRgba8(image::RgbaImage::from_raw(w, h, pixels)?),
    })
}

/// Area averaging from `(w, h)` down to `(tw, th)`, rows in, rows out: each
/// output pixel is the mean of the source area it covers, source pixels on
/// its edge counted by the part inside. Positions are integers (a source
/// column spans `tw` units of `w` to an output column), so the weights are exact.
struct BoxFilter {
    src: (u64, u64),
    out: (u64, u64),
    channels: usize,
    /// Per source column: its output column and the weights (in units) into it and the next.
    cols: Vec<(usize, f32, f32)>,
    /// The next source row.
    y: u64,
    /// The output row `sums[0]` is for (`sums[1]` is the next).
    row: u64,
    line: Vec<f32>,
    sums: [Vec<f32>; 2],
    bytes: Vec<u8>,
}

impl BoxFilter {
    fn new((w, h): (u32, u32), (tw, th): (u32, u32), channels: usize) -> BoxFilter {
        let (w, h, tw, th) = (u64::from(w), u64::from(h), u64::from(tw.max(1)), u64::from(th.max(1)));
        #[allow(clippy::cast_precision_loss, reason = "a weight in 0..=w, w a pixel count far below 2^24")]
        let cols = (0..w)
            .map(|x| {
                let (a, b) = (x * tw, (x + 1) * tw);
                let ox = a / w;
                let edge = (ox + 1) * w;
                let (w0, w1) = if b <= edge { (b - a, 0) } else { (edge - a, b - edge) };
                (usize::try_from(ox).unwrap_or(usize::MAX), w0 as f32 / w as f32, w1 as f32 / w as f32)
            })
            .collect();
        let width = usize::try_from(tw).unwrap_or(usize::MAX) * channels;
        BoxFilter {
            src: (w, h),
            out: (tw, th),
            channels,
            cols,
            y: 0,
            row: 0,
            line: vec![0.0; width],
            sums: [vec![0.0; width], vec![0.0; width]],
            bytes: vec![0; width],
        }
    }

    #[allow(clippy::cast_precision_loss, reason = "a weight in 0..=h, h a pixel count far below 2^24")]
    fn push(&mut self, row: &[u8], emit: &mut dyn FnMut(&[u8]) -> Result<(), String>) -> Result<(), String> {
        let ((_, h), (tw, th), ch) = (self.src, self.out, self.channels);
        if self.y >= h || self.row >= th {
            return Ok(());
        }
        self.line.fill(0.0);
        let last = usize::try_from(tw).unwrap_or(usize::MAX) - 1;
        for (px, &(ox, w0, w1)) in row.chunks_exact(ch).zip(&self.cols) {
            let at = ox.min(last) * ch;
            for (c, &v) in px.iter().enumerate() {
                self.line[at + c] += f32::from(v) * w0;
            }
            if w1 > 0.0 && ox < last {
                for (c, &v) in px.iter().enumerate() {
                    self.line[at + ch + c] += f32::from(v) * w1;
                }
            }
        }
        let (a, b) = (self.y * th, (self.y + 1) * th);
        let edge = (a / h + 1) * h;
        let (w0, w1) = if b <= edge { (b - a, 0) } else { (edge - a, b - edge) };
        let slot = usize::from(a / h > self.row);
        let (w0, w1) = (w0 as f32 / h as f32, w1 as f32 / h as f32);
        for (i, &v) in self.line.iter().enumerate() {
            self.sums[slot][i] += v * w0;
        }
        if w1 > 0.0 && slot == 0 {
            for (i, &v) in self.line.iter().enumerate() {
                self.sums[1][i] += v * w1;
            }
        }
        self.y += 1;
        // The output row is whole once the source rows reach its lower edge.
        while self.row < th && self.y * th >= (self.row + 1) * h {
            self.emit_row(emit)?;
        }
        Ok(())
    }

    fn emit_row(&mut self, emit: &mut dyn FnMut(&[u8]) -> Result<(), String>) -> Result<(), String> {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "clamped to 0..=255 first")]
        for (b, &s) in self.bytes.iter_mut().zip(&self.sums[0]) {
            *b = s.round().clamp(0.0, 255.0) as u8;
        }
        emit(&self.bytes)?;
        self.sums.swap(0, 1);
        self.sums[1].fill(0.0);
        self.row += 1;
        Ok(())
    }

    /// Rows the source did not reach (a short image) come out as they are summed.
    fn finish(mut self, emit: &mut dyn FnMut(&[u8]) -> Result<(), String>) -> Result<(), String> {
        while self.row < self.out.1 {
            self.emit_row(emit)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(w: u32, h: u32, tw: u32, th: u32, ch: usize, px: impl Fn(u32, u32) -> u8) -> Vec<Vec<u8>> {
        let mut f = BoxFilter::new((w, h), (tw, th), ch);
        let mut rows = Vec::new();
        let mut emit = |r: &[u8]| {
            rows.push(r.to_vec());
            Ok(())
        };
        for y in 0..h {
            let row: Vec<u8> = (0..w).flat_map(|x| std::iter::repeat_n(px(x, y), ch)).collect();
            f.push(&row, &mut emit).unwrap();
        }
        f.finish(&mut emit).unwrap();
        rows
    }

    #[test]
    fn a_flat_image_stays_flat_at_any_ratio() {
        for (w, h, tw, th) in [(10, 10, 3, 7), (8100, 3, 8000, 2), (7, 5, 7, 5), (5, 9, 1, 1)] {
            let rows = run(w, h, tw, th, 3, |_, _| 200);
            assert_eq!(rows.len(), th as usize);
            assert!(rows.iter().all(|r| r.len() == tw as usize * 3 && r.iter().all(|&v| v == 200)), "{w}x{h}");
        }
    }

    #[test]
    fn each_output_pixel_is_the_mean_of_the_area_it_covers() {
        // 4 × 2 down to 2 × 1: the left half is 0 and 100, the right 50 and 250.
        let rows = run(4, 2, 2, 1, 1, |x, y| match (x < 2, y) {
            (true, 0) => 0,
            (true, _) => 100,
            (false, 0) => 50,
            (false, _) => 250,
        });
        assert_eq!(rows, vec![vec![50, 150]]);
        // 3 columns into 2: the middle one splits in half.
        let rows = run(3, 1, 2, 1, 1, |x, _| [0, 90, 180][x as usize]);
        assert_eq!(rows, vec![vec![30, 150]]);
    }

    #[test]
    fn the_same_size_is_the_same_pixels() {
        let rows = run(5, 4, 5, 4, 2, |x, y| u8::try_from(x * 40 + y).unwrap());
        for (y, r) in (0u8..).zip(&rows) {
            let want: Vec<u8> = (0..5u8).flat_map(|x| [x * 40 + y; 2]).collect();
            assert_eq!(r, &want);
        }
    }
}
