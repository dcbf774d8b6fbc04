//! WebP: the RIFF container (declared size vs the real file, every chunk
//! inside it) and the VP8 / VP8L / VP8X headers that carry the dimensions,
//! for the structural depth; image-webp decodes the bitstream for `Deep`.

use super::{Depth, Inspection, Verdict, with_scratch};

fn le32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(3)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], 0]))
}

/// Validates a WebP (the caller checked `RIFF....WEBP`) and fills in
/// dimensions and frame count.
#[allow(clippy::too_many_lines, reason = "one state machine over the format's bytes: the chunk walk")]
pub(crate) fn check(bytes: &[u8], depth: Depth, ins: &mut Inspection) {
    let total = bytes.len();
    let riff_size = le32(bytes, 4).unwrap_or(0);
    let riff_end = 8u64 + u64::from(riff_size);
    if riff_end > total as u64 {
        ins.invalid(
            "webp.truncated",
            format!("WebP ends after {total} of {riff_end} bytes its RIFF header declares: the file was cut short"),
        );
        return;
    }
    let riff_end = usize::try_from(riff_end).unwrap_or(total);
    if riff_end < total {
        ins.push(
            Verdict::Warn,
            "webp.trailing_data",
            format!(
                "{} bytes follow the end of the WebP data its RIFF header declares ({riff_end} of {total})",
                total - riff_end
            ),
        );
    }
    let mut pos = 12usize;
    let mut first = true;
    let mut image = false;
    let mut animated = false;
    let mut anmf = 0u32;
    let mut has_anim = false;
    while pos < riff_end {
        let (Some(fourcc), Some(size)) = (bytes.get(pos..pos + 4), le32(bytes, pos + 4)) else {
            ins.invalid(
                "webp.corrupt",
                format!("a WebP chunk header at byte {pos} runs past the end of the RIFF data ({riff_end} bytes)"),
            );
            return;
        };
        let name = FourCc(fourcc);
        let data_start = pos + 8;
        let data_end = data_start as u64 + u64::from(size);
        if data_end > riff_end as u64 {
            ins.invalid(
                "webp.truncated",
                format!(
                    "the WebP {name} chunk at byte {pos} needs {size} bytes but the data ends at byte {riff_end}: the file was cut short"
                ),
            );
            return;
        }
        let data = &bytes[data_start..usize::try_from(data_end).unwrap_or(riff_end)];
        let dims = match fourcc {
            b"VP8 " => {
                image = true;
                Some(vp8_dims(data))
            }
            b"VP8L" => {
                image = true;
                Some(vp8l_dims(data))
            }
            b"VP8X" => {
                if !first {
                    ins.invalid("webp.corrupt", format!("the WebP VP8X chunk at byte {pos} is not the first chunk"));
                    return;
                }
                if data.len() < 10 {
                    ins.invalid("webp.corrupt", format!("the WebP VP8X chunk at byte {pos} is too short"));
                    return;
                }
                animated = data[0] & 0x02 != 0;
                let w = le24(data, 4).unwrap_or(0) + 1;
                let h = le24(data, 7).unwrap_or(0) + 1;
                Some(Ok((w, h)))
            }
            b"ANIM" => {
                has_anim = true;
                None
            }
            b"ANMF" => {
                anmf += 1;
                image = true;
                None
            }
            _ => {
                if first {
                    ins.invalid(
                        "webp.corrupt",
                        format!("the first WebP chunk is \"{name}\", not VP8, VP8L or VP8X: the data is corrupt"),
                    );
                    return;
                }
                None
            }
        };
        if let Some(d) = dims {
            match d {
                Ok((w, h)) => {
                    if w == 0 || h == 0 {
                        ins.invalid("webp.bad_header", format!("the WebP header says the image is {w}×{h} px"));
                        return;
                    }
                    if ins.width.is_none() {
                        ins.width = Some(w);
                        ins.height = Some(h);
                    }
                }
                Err(msg) => {
                    ins.invalid("webp.bad_header", msg);
                    return;
                }
            }
        }
        first = false;
        // Chunks are padded to an even size.
        pos = usize::try_from(data_end + (data_end & 1)).unwrap_or(usize::MAX);
    }
    if !image {
        ins.invalid("webp.no_data", "the WebP file holds no image data (no VP8, VP8L or ANMF chunk)".into());
        return;
    }
    if animated && !has_anim {
        ins.push(Verdict::Warn, "webp.corrupt", "the WebP says it is animated but has no ANIM chunk".into());
    }
    ins.frames = Some(if animated { anmf.max(1) } else { 1 });
    if depth == Depth::Deep {
        deep(bytes, ins);
    }
}

/// A chunk id for messages, formatted lazily so the walk does not allocate.
struct FourCc<'a>(&'a [u8]);

impl std::fmt::Display for FourCc<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.0))
    }
}

fn vp8_dims(d: &[u8]) -> Result<(u32, u32), String> {
    if d.len() < 10 {
        return Err("the WebP VP8 frame header is too short".into());
    }
    if d[0] & 1 != 0 {
        return Err("the WebP VP8 data does not start with a key frame".into());
    }
    if d[3..6] != [0x9D, 0x01, 0x2A] {
        return Err("the WebP VP8 frame lacks its start code (9D 01 2A): the data is corrupt".into());
    }
    let w = u32::from(u16::from_le_bytes([d[6], d[7]]) & 0x3FFF);
    let h = u32::from(u16::from_le_bytes([d[8], d[9]]) & 0x3FFF);
    Ok((w, h))
}

fn vp8l_dims(d: &[u8]) -> Result<(u32, u32), String> {
    if d.len() < 5 {
        return Err("the WebP VP8L header is too short".into());
    }
    if d[0] != 0x2F {
        return Err(format!("the WebP VP8L signature is 0x{:02X}, not 0x2F: the data is corrupt", d[0]));
    }
    let bits = u32::from_le_bytes([d[1], d[2], d[3], d[4]]);
    let w = (bits & 0x3FFF) + 1;
    let h = ((bits >> 14) & 0x3FFF) + 1;
    if bits >> 29 != 0 {
        return Err("the WebP VP8L header has an unknown version: the data is corrupt".into());
    }
    Ok((w, h))
}

fn deep(bytes: &[u8], ins: &mut Inspection) {
    let (w, h) = (u64::from(ins.width.unwrap_or(0)), u64::from(ins.height.unwrap_or(0)));
    ins.decode_bounded("WebP", ("webp.not_decoded", "webp.decode"), w * h * 4, || decode(bytes));
}

fn decode(bytes: &[u8]) -> Result<(), image_webp::DecodingError> {
    let mut dec = image_webp::WebPDecoder::new(std::io::Cursor::new(bytes))?;
    let size = dec.output_buffer_size().unwrap_or(0);
    let frames = if dec.is_animated() { dec.num_frames() } else { 1 };
    with_scratch(size, |buf| {
        if frames > 1 || dec.is_animated() {
            for _ in 0..frames {
                dec.read_frame(buf)?;
            }
            Ok(())
        } else {
            dec.read_image(buf)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn riff_findings() {
        let mut ins = Inspection::default();
        check(b"RIFF\xff\0\0\0WEBPVP8L", Depth::Structural, &mut ins);
        assert_eq!(ins.problems[0].code, "webp.truncated");
        let mut ins = Inspection::default();
        check(b"RIFF\x04\0\0\0WEBP", Depth::Structural, &mut ins);
        assert_eq!(ins.problems[0].code, "webp.no_data");
        let mut ins = Inspection::default();
        let f = b"RIFF\x11\0\0\0WEBPVP8L\x05\0\0\0\x2f\0\0\0\0\0";
        check(f, Depth::Structural, &mut ins);
        assert_eq!((ins.width, ins.height), (Some(1), Some(1)));
    }

    #[test]
    fn vp8_and_vp8l_headers() {
        let key = [0x50, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xF0, 0x00];
        assert_eq!(vp8_dims(&key), Ok((320, 240)));
        let mut inter = key;
        inter[0] |= 1;
        assert!(vp8_dims(&inter).is_err());
        let mut no_start = key;
        no_start[3] = 0;
        assert!(vp8_dims(&no_start).unwrap_err().contains("start code"));
        // 100 x 50: (w-1) | (h-1) << 14
        #[allow(clippy::decimal_bitwise_operands, reason = "w - 1 and h - 1, numbers as the comment says")]
        let bits: u32 = 99 | (49 << 14);
        let b = bits.to_le_bytes();
        assert_eq!(vp8l_dims(&[0x2F, b[0], b[1], b[2], b[3]]), Ok((100, 50)));
        assert!(vp8l_dims(&[0x2E, 0, 0, 0, 0]).is_err());
    }
}
