//! PNG: our own chunk walk (every length and CRC, with crc32fast) for the
//! structural depth — it runs near memory speed and catches every truncation
//! and flipped byte in practice — and the png crate's full decode (inflate +
//! unfilter to exactly the size IHDR implies) for `Deep`, which additionally
//! catches a corrupt deflate stream that carries a valid CRC.

use super::{DECODE_CAP, Depth, Inspection, Verdict, with_scratch};

const SIG_LEN: usize = 8;

/// The IHDR fields we need.
#[derive(Clone, Copy, Debug)]
struct Ihdr {
    width: u32,
    height: u32,
    bit_depth: u8,
    color_type: u8,
}

impl Ihdr {
    /// Bytes of decoded pixels, as the png crate would allocate for one frame.
    fn pixel_bytes(&self) -> u64 {
        let channels: u64 = match self.color_type {
            2 => 3,
            4 => 2,
            6 => 4,
            _ => 1,
        };
        let bits_per_row = u64::from(self.width) * channels * u64::from(self.bit_depth);
        bits_per_row.div_ceil(8).saturating_add(1) * u64::from(self.height)
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// A chunk type for messages, formatted only when a message is built (the
/// walk itself allocates nothing): letters as text, anything else as hex.
struct ChunkName<'a>(&'a [u8]);

impl std::fmt::Display for ChunkName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.iter().all(u8::is_ascii_alphabetic) {
            f.write_str(&String::from_utf8_lossy(self.0))
        } else {
            for (i, b) in self.0.iter().enumerate() {
                write!(f, "{}{b:02X}", if i > 0 { " " } else { "" })?;
            }
            Ok(())
        }
    }
}

/// Validates a PNG (the caller checked the signature) and fills in
/// dimensions and frame count.
#[allow(clippy::too_many_lines, reason = "one state machine over the format's bytes: the chunk walk")]
pub(crate) fn check(bytes: &[u8], depth: Depth, ins: &mut Inspection) {
    let total = bytes.len();
    let mut pos = SIG_LEN;
    let mut ihdr: Option<Ihdr> = None;
    let mut idat_chunks = 0u32;
    let mut idat_done = false; // a non-IDAT chunk followed the IDAT run
    let mut plte = false;
    let mut iend = false;
    let mut index = 0u32;
    while pos < total {
        index += 1;
        let Some(len) = be32(bytes, pos) else {
            ins.invalid(
                "png.truncated",
                format!(
                    "PNG ends after {total} bytes, inside the header of chunk {index}: the IEND chunk is missing — the file was cut short"
                ),
            );
            return;
        };
        let Some(ty) = bytes.get(pos + 4..pos + 8) else {
            ins.invalid(
                "png.truncated",
                format!(
                    "PNG ends after {total} bytes, inside the header of chunk {index}: the IEND chunk is missing — the file was cut short"
                ),
            );
            return;
        };
        let name = ChunkName(ty);
        if !ty.iter().all(u8::is_ascii_alphabetic) {
            ins.invalid(
                "png.corrupt",
                format!("chunk {index} at byte {pos} has the invalid type {name}: the PNG data is corrupt"),
            );
            return;
        }
        if len > 0x7FFF_FFFF {
            ins.invalid(
                "png.corrupt",
                format!("the {name} chunk at byte {pos} claims {len} bytes, more than PNG allows: the data is corrupt"),
            );
            return;
        }
        let data_start = pos + 8;
        let end = data_start as u64 + u64::from(len) + 4;
        if end > total as u64 {
            ins.invalid(
                "png.truncated",
                format!(
                    "PNG ends after {total} of at least {end} bytes, inside the {name} chunk at byte {pos}: the IEND chunk is missing — the file was cut short"
                ),
            );
            return;
        }
        let end = usize::try_from(end).unwrap_or(total);
        let data = &bytes[data_start..end - 4];
        let stored = be32(bytes, end - 4).unwrap_or(0);
        let computed = crc32fast::hash(&bytes[pos + 4..end - 4]);
        if stored != computed {
            ins.invalid(
                "png.crc",
                format!(
                    "the {name} chunk at byte {pos} fails its checksum (stored {stored:08x}, computed {computed:08x}): the data is corrupt"
                ),
            );
            return;
        }
        if index == 1 && ty != b"IHDR" {
            ins.invalid("png.no_ihdr", format!("the first PNG chunk is {name}, not IHDR: the file is malformed"));
            return;
        }
        match ty {
            b"IHDR" => {
                if ihdr.is_some() {
                    ins.invalid("png.corrupt", format!("a second IHDR chunk at byte {pos}: the file is malformed"));
                    return;
                }
                match parse_ihdr(data) {
                    Ok(h) => {
                        ins.width = Some(h.width);
                        ins.height = Some(h.height);
                        ins.frames.get_or_insert(1);
                        ihdr = Some(h);
                    }
                    Err(msg) => {
                        ins.invalid("png.bad_header", msg);
                        return;
                    }
                }
            }
            b"PLTE" => plte = true,
            b"IDAT" => {
                if idat_done {
                    ins.invalid(
                        "png.corrupt",
                        format!("an IDAT chunk at byte {pos} comes after other chunks that ended the image data: the file is malformed"),
                    );
                    return;
                }
                if idat_chunks == 0 && ihdr.is_some_and(|h| h.color_type == 3) && !plte {
                    ins.invalid(
                        "png.no_palette",
                        "the PNG uses a colour palette but has no PLTE chunk before its image data".into(),
                    );
                    return;
                }
                idat_chunks += 1;
            }
            b"acTL" => {
                if let Some(n) = be32(data, 0) {
                    ins.frames = Some(n.max(1));
                }
            }
            b"IEND" => {
                iend = true;
                pos = end;
                break;
            }
            _ => {
                if ty[0].is_ascii_uppercase() && ty != b"PLTE" {
                    ins.invalid(
                        "png.unknown_critical",
                        format!("the PNG has an unknown critical chunk {name} at byte {pos}: decoders refuse it"),
                    );
                    return;
                }
            }
        }
        if idat_chunks > 0 && ty != b"IDAT" {
            idat_done = true;
        }
        pos = end;
    }
    if idat_chunks == 0 {
        let what = if iend { "" } else { " and ends without IEND" };
        ins.invalid(
            "png.no_data",
            format!("the PNG has no IDAT chunk (no pixel data){what}: the file was cut short or is not a real image"),
        );
        return;
    }
    if !iend {
        ins.invalid(
            "png.truncated",
            format!("PNG ends after {total} bytes: the IEND chunk is missing — the file was cut short"),
        );
        return;
    }
    if pos < total {
        ins.push(
            Verdict::Warn,
            "png.trailing_data",
            format!(
                "{} bytes follow the IEND chunk (the PNG ends at byte {pos} of {total}); most decoders ignore them",
                total - pos
            ),
        );
    }
    let Some(h) = ihdr else { return };
    if depth == Depth::Deep {
        deep(bytes, h, ins);
    }
}

fn parse_ihdr(d: &[u8]) -> Result<Ihdr, String> {
    if d.len() != 13 {
        return Err(format!("the IHDR chunk is {} bytes long, not 13: the PNG header is malformed", d.len()));
    }
    let width = be32(d, 0).unwrap_or(0);
    let height = be32(d, 4).unwrap_or(0);
    let (bit_depth, color_type) = (d[8], d[9]);
    if width == 0 || height == 0 {
        return Err(format!("the PNG header says the image is {width}×{height} px: a side of 0 is not an image"));
    }
    if width > 0x7FFF_FFFF || height > 0x7FFF_FFFF {
        return Err(format!("the PNG header says the image is {width}×{height} px, beyond what PNG allows"));
    }
    let ok = match color_type {
        0 => matches!(bit_depth, 1 | 2 | 4 | 8 | 16),
        3 => matches!(bit_depth, 1 | 2 | 4 | 8),
        2 | 4 | 6 => matches!(bit_depth, 8 | 16),
        _ => false,
    };
    if !ok {
        return Err(format!(
            "the PNG header has bit depth {bit_depth} with colour type {color_type}, a combination PNG does not allow"
        ));
    }
    if d[10] != 0 || d[11] != 0 || d[12] > 1 {
        return Err(format!(
            "the PNG header names compression {}, filter {}, interlace {}; only 0, 0 and 0/1 exist",
            d[10], d[11], d[12]
        ));
    }
    Ok(Ihdr { width, height, bit_depth, color_type })
}

fn deep(bytes: &[u8], h: Ihdr, ins: &mut Inspection) {
    // Too large to decode into a buffer: stream the image data instead, so an image whose
    // data runs out is invalid whatever size its header claims (issue 11).
    if h.pixel_bytes() > DECODE_CAP && !stream_check(bytes, h, ins) {
        return;
    }
    ins.decode_bounded("PNG", ("png.not_decoded", "png.decode"), h.pixel_bytes(), || decode(bytes));
}

/// Deflate cannot expand data more than this (a 258-byte match in 2 bits is 1032:1).
const MAX_INFLATE_RATIO: u64 = 1032;
/// Output window of the streaming check: the only buffer it allocates besides the
/// inflater's own 32 KiB dictionary.
const STREAM_WINDOW: usize = 64 << 10;

impl Ihdr {
    /// Bits per pixel.
    fn bits_per_pixel(&self) -> u64 {
        let channels: u64 = match self.color_type {
            2 => 3,
            4 => 2,
            6 => 4,
            _ => 1,
        };
        channels * u64::from(self.bit_depth)
    }

    /// Bytes of filtered scanlines (a filter byte per row) the IDAT stream must inflate
    /// to; for an interlaced image, the sum over the seven Adam7 passes.
    fn raw_bytes(&self, interlaced: bool) -> u64 {
        // (x start, y start, x step, y step) of each Adam7 pass.
        const PASSES: [(u64, u64, u64, u64); 7] =
            [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)];
        let (w, h, bpp) = (u64::from(self.width), u64::from(self.height), self.bits_per_pixel());
        let rows = |pw: u64, ph: u64| if pw == 0 { 0 } else { ((pw * bpp).div_ceil(8) + 1) * ph };
        if !interlaced {
            return rows(w, h);
        }
        PASSES
            .iter()
            .map(|&(x0, y0, dx, dy)| rows(w.saturating_sub(x0).div_ceil(dx), h.saturating_sub(y0).div_ceil(dy)))
            .sum()
    }
}

/// The IDAT chunks' data, in order (the structural walk has validated the chunk layout).
fn idat_data(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut pos = SIG_LEN;
    std::iter::from_fn(move || {
        loop {
            let len = be32(bytes, pos)? as usize;
            let ty = bytes.get(pos + 4..pos + 8)?;
            let data = bytes.get(pos + 8..pos + 8 + len)?;
            pos += 12 + len;
            match ty {
                b"IDAT" => return Some(data),
                b"IEND" => return None,
                _ => {}
            }
        }
    })
}

/// Streams the image data of an image too large to decode, with memory bounded by
/// [`STREAM_WINDOW`]: inflates it window by window, checks each row's filter byte, and
/// stops as soon as the data runs out. Returns whether the data held up so far (the
/// caller then reports it as not decoded); `false` after recording why it is invalid.
fn stream_check(bytes: &[u8], h: Ihdr, ins: &mut Inspection) -> bool {
    use miniz_oxide::inflate::stream::{InflateState, inflate};
    use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

    let interlaced = bytes.get(SIG_LEN + 8 + 12) == Some(&1);
    let need = h.raw_bytes(interlaced);
    let have: u64 = idat_data(bytes).map(|d| d.len() as u64).sum();
    // Cheap and exact: no deflate stream this short can hold that many bytes.
    if have.saturating_mul(MAX_INFLATE_RATIO).saturating_add(1024) < need {
        ins.invalid(
            "png.data_missing",
            format!(
                "the PNG header claims {}×{} px ({need} bytes of scanlines), but its image data is {have} bytes, \
                 far too little to hold them: the data is missing or cut short",
                h.width, h.height
            ),
        );
        return false;
    }
    let row = if interlaced { None } else { Some((u64::from(h.width) * h.bits_per_pixel()).div_ceil(8) + 1) };
    let mut state = InflateState::new_boxed(DataFormat::Zlib);
    let mut window = vec![0u8; STREAM_WINDOW];
    let mut produced: u64 = 0;
    let mut ended = false;
    'chunks: for data in idat_data(bytes) {
        let mut input = data;
        loop {
            let r = inflate(&mut state, input, &mut window, MZFlush::None);
            input = &input[r.bytes_consumed..];
            if let Some(row) = row {
                // Visit only the filter bytes: the first row start in this window, then
                // every `row` bytes.
                let mut at = (row - produced % row) % row;
                while at < r.bytes_written as u64 && produced + at < need {
                    let b = window[usize::try_from(at).unwrap_or(usize::MAX)];
                    if b > 4 {
                        ins.invalid(
                            "png.decode",
                            format!(
                                "the PNG row {} has the invalid filter type {b}: the image data is corrupt",
                                (produced + at) / row
                            ),
                        );
                        return false;
                    }
                    at += row;
                }
            }
            produced += r.bytes_written as u64;
            match r.status {
                Ok(MZStatus::StreamEnd) => {
                    ended = true;
                    break 'chunks;
                }
                Ok(_) | Err(MZError::Buf) if r.bytes_written == 0 && input.is_empty() => break,
                Ok(_) | Err(MZError::Buf) => {}
                Err(e) => {
                    ins.invalid("png.decode", format!("the PNG image data does not inflate ({e:?}): it is corrupt"));
                    return false;
                }
            }
            // Past the decode cap the data holds up as far as anyone will look.
            if produced > DECODE_CAP {
                return true;
            }
        }
    }
    if produced < need {
        let how = if ended { "its compressed stream ends" } else { "its image data runs out" };
        ins.invalid(
            "png.data_missing",
            format!(
                "the PNG header claims {}×{} px ({need} bytes of scanlines), but {how} after {produced}: the data is missing or cut short",
                h.width, h.height
            ),
        );
        return false;
    }
    true
}

fn decode(bytes: &[u8]) -> Result<(), png::DecodingError> {
    let mut opts = png::DecodeOptions::default();
    opts.set_ignore_adler32(false);
    let mut dec = png::Decoder::new_with_options(std::io::Cursor::new(bytes), opts);
    dec.set_limits(png::Limits { bytes: usize::try_from(DECODE_CAP).unwrap_or(usize::MAX) });
    let mut reader = dec.read_info()?;
    let frames = reader.info().animation_control().map_or(1, |a| a.num_frames.max(1));
    // Row by row: every byte is inflated, unfiltered and checked as a whole
    // frame's decode would, but only one row is held (a 9000x9000 frame is 240 MB).
    let row = reader.output_line_size(reader.info().width).ok_or(png::DecodingError::LimitsExceeded)?;
    with_scratch(row, |buf| {
        for frame in 0..frames {
            if frame > 0 {
                reader.next_frame_info()?;
            }
            while reader.read_row(buf)?.is_some() {}
        }
        reader.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(ty: &[u8], data: &[u8]) -> Vec<u8> {
        let mut c = u32::try_from(data.len()).unwrap().to_be_bytes().to_vec();
        c.extend_from_slice(ty);
        c.extend_from_slice(data);
        let crc = crc32fast::hash(&c[4..]);
        c.extend_from_slice(&crc.to_be_bytes());
        c
    }

    fn ihdr(w: u32, h: u32, depth: u8, ct: u8) -> Vec<u8> {
        let mut d = w.to_be_bytes().to_vec();
        d.extend_from_slice(&h.to_be_bytes());
        d.extend_from_slice(&[depth, ct, 0, 0, 0]);
        chunk(b"IHDR", &d)
    }

    fn run(bytes: &[u8], depth: Depth) -> Inspection {
        let mut ins = Inspection::default();
        check(bytes, depth, &mut ins);
        ins
    }

    #[test]
    fn bomb_header_is_judged_without_allocating() {
        let mut f = b"\x89PNG\r\n\x1a\n".to_vec();
        f.extend(ihdr(100_000, 100_000, 8, 6));
        f.extend(chunk(b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]));
        f.extend(chunk(b"IEND", b""));
        let ins = run(&f, Depth::Deep);
        assert_eq!((ins.width, ins.height), (Some(100_000), Some(100_000)));
        // The data cannot hold the pixels the header claims: invalid, not "not decoded".
        assert_eq!(ins.verdict(), Verdict::Invalid, "{:?}", ins.problems);
        assert_eq!(ins.problems[0].code, "png.data_missing");
        // The structural depth still judges by the walk alone.
        assert_eq!(run(&f, Depth::Structural).verdict(), Verdict::Ok);
    }

    /// A zlib stream of `n` zero bytes, from the inflater's twin.
    fn zeros(n: usize) -> Vec<u8> {
        miniz_oxide::deflate::compress_to_vec_zlib(&vec![0u8; n], 1)
    }

    #[test]
    fn huge_image_with_data_that_runs_out_is_invalid() {
        // 20000×20000 gray: 400 MB of scanlines, over the decode cap. The IDAT holds a
        // plausible amount of compressed data (so the ratio bound cannot decide) whose
        // stream inflates to only 2 MB: the streaming check must find the data missing.
        let mut f = b"\x89PNG\r\n\x1a\n".to_vec();
        f.extend(ihdr(20_000, 20_000, 8, 0));
        let mut data = zeros(2 << 20);
        data.resize(400_000, 0); // padding after the stream's end: still far too little
        f.extend(chunk(b"IDAT", &data));
        f.extend(chunk(b"IEND", b""));
        let ins = run(&f, Depth::Deep);
        assert_eq!(ins.verdict(), Verdict::Invalid, "{:?}", ins.problems);
        assert_eq!(ins.problems[0].code, "png.data_missing");
        assert!(ins.problems[0].message.contains("ends after"), "{}", ins.problems[0].message);
    }

    #[test]
    fn huge_image_with_all_its_data_is_only_not_decoded() {
        // 16385×16385 gray with every row present (filter 0, zero pixels): over the cap,
        // the stream holds up, so it is judged by its header as before.
        let (w, h) = (16_385u32, 16_385u32);
        let mut f = b"\x89PNG\r\n\x1a\n".to_vec();
        f.extend(ihdr(w, h, 8, 0));
        f.extend(chunk(b"IDAT", &zeros((w as usize + 1) * h as usize)));
        f.extend(chunk(b"IEND", b""));
        let ins = run(&f, Depth::Deep);
        assert_eq!(ins.verdict(), Verdict::Warn, "{:?}", ins.problems);
        assert_eq!(ins.problems[0].code, "png.not_decoded");
    }

    #[test]
    fn bad_headers() {
        for (h, code) in [(ihdr(0, 5, 8, 2), "png.bad_header"), (ihdr(5, 5, 4, 2), "png.bad_header")] {
            let mut f = b"\x89PNG\r\n\x1a\n".to_vec();
            f.extend(h);
            assert_eq!(run(&f, Depth::Structural).problems[0].code, code);
        }
        let mut f = b"\x89PNG\r\n\x1a\n".to_vec();
        f.extend(chunk(b"IEND", b""));
        assert_eq!(run(&f, Depth::Structural).problems[0].code, "png.no_ihdr");
        let f = b"\x89PNG\r\n\x1a\n\0\0".to_vec();
        assert_eq!(run(&f, Depth::Structural).problems[0].code, "png.truncated");
    }

    /// A 4×4 gray APNG of two frames; the second frame's rows use `filter`.
    fn apng_with_second_frame_filter(filter: u8) -> Vec<u8> {
        let fctl = |seq: u32| {
            let mut d = seq.to_be_bytes().to_vec();
            for v in [4u32, 4, 0, 0] {
                d.extend_from_slice(&v.to_be_bytes());
            }
            d.extend_from_slice(&[0, 1, 0, 1, 0, 0]);
            chunk(b"fcTL", &d)
        };
        let rows = |f: u8| miniz_oxide::deflate::compress_to_vec_zlib(&[f, 1, 2, 3, 4].repeat(4), 1);
        let mut f = b"\x89PNG\r\n\x1a\n".to_vec();
        f.extend(ihdr(4, 4, 8, 0));
        f.extend(chunk(b"acTL", &[0, 0, 0, 2, 0, 0, 0, 0]));
        f.extend(fctl(0));
        f.extend(chunk(b"IDAT", &rows(0)));
        f.extend(fctl(1));
        let mut fdat = 2u32.to_be_bytes().to_vec();
        fdat.extend(rows(filter));
        f.extend(chunk(b"fdAT", &fdat));
        f.extend(chunk(b"IEND", b""));
        f
    }

    #[test]
    fn every_frame_is_decoded_row_by_row() {
        assert!(decode(&apng_with_second_frame_filter(0)).is_ok());
        // Filter type 9 does not exist: only decoding the second frame finds it.
        assert!(decode(&apng_with_second_frame_filter(9)).is_err());
    }
}
