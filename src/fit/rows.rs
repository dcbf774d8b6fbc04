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
//! - An interlaced PNG, a JPEG, a GIF or a WebP is decoded whole once (8 bits
//!   a sample, at most 4 bytes a pixel), then read a row at a time.
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
    pub width: u32,
    pub height: u32,
    /// Samples a pixel: 1 (grey), 2 (grey and alpha), 3 (RGB) or 4 (RGBA).
    channels: usize,
    pub orientation: Orientation,
}

impl<'a> Source<'a> {
    /// Opens `bytes` of type `mime`; `max_decode` bounds the bytes of a whole decode.
    pub fn open(bytes: &'a [u8], mime: &str, max_decode: u64) -> Result<Source<'a>, String> {
        if mime == "image/png" {
            return open_png(bytes, max_decode);
        }
        let format = match mime {
            "image/jpeg" => ImageFormat::Jpeg,
            "image/gif" => ImageFormat::Gif,
            _ => ImageFormat::WebP,
        };
        let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
        let mut limits = image::Limits::default();
        limits.max_alloc = Some(max_decode + DECODER_SLACK);
        reader.limits(limits);
        let decoded = crate::contain::contain(|| -> image::ImageResult<(DynamicImage, Orientation)> {
            let mut decoder = reader.into_decoder()?;
            let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
            Ok((DynamicImage::from_decoder(decoder)?, orientation))
        })
        .map_err(|_| "the decoder failed".to_string())?
        .map_err(|e| e.to_string())?;
        let (img, orientation) = decoded;
        let (width, height) = (img.width(), img.height());
        let (channels, pixels) = samples_of(img);
        Ok(Source { bytes, decoded: Some(pixels), width, height, channels, orientation })
    }

    /// Whether the orientation swaps width and height.
    pub fn turned(&self) -> bool {
        matches!(
            self.orientation,
            Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH
        )
    }

    /// The size the image is shown at (its orientation applied).
    pub fn shown(&self) -> (u32, u32) {
        if self.turned() { (self.height, self.width) } else { (self.width, self.height) }
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
        let mut src = Source { bytes, decoded: None, width, height, channels, orientation };
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
