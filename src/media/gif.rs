//! GIF: a block walk (header, logical screen, colour tables, every extension
//! and image block's sub-blocks, the `;` trailer) for the structural depth;
//! it also counts frames, because OpenAI and Mistral refuse animated GIFs.
//! `Deep` LZW-decodes every frame with the gif crate.

use super::{DECODE_CAP, Depth, Inspection};

fn le16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

/// Skips a chain of data sub-blocks starting at `pos`; returns the position
/// after the terminating zero-length block, or `None` if the data ends first.
fn skip_sub_blocks(bytes: &[u8], mut pos: usize) -> Option<usize> {
    loop {
        let n = usize::from(*bytes.get(pos)?);
        pos += 1;
        if n == 0 {
            return Some(pos);
        }
        pos = pos.checked_add(n)?;
        if pos > bytes.len() {
            return None;
        }
    }
}

/// Validates a GIF (the caller checked the `GIF87a`/`GIF89a` signature) and
/// fills in dimensions and frame count.
pub(crate) fn check(bytes: &[u8], depth: Depth, ins: &mut Inspection) {
    let total = bytes.len();
    let cut = |ins: &mut Inspection, what: &str| {
        ins.invalid(
            "gif.truncated",
            format!("GIF ends after {total} bytes {what}: the trailer is missing — the file was cut short"),
        );
    };
    let (Some(w), Some(h), Some(&packed)) = (le16(bytes, 6), le16(bytes, 8), bytes.get(10)) else {
        cut(ins, "inside its header");
        return;
    };
    if w == 0 || h == 0 {
        ins.invalid(
            "gif.bad_header",
            format!("the GIF header says the image is {w}×{h} px: a side of 0 is not an image"),
        );
        return;
    }
    ins.width = Some(u32::from(w));
    ins.height = Some(u32::from(h));
    let mut pos = 13usize;
    if packed & 0x80 != 0 {
        pos += 3 << ((packed & 7) + 1);
    }
    let mut frames = 0u32;
    loop {
        let Some(&b) = bytes.get(pos) else {
            let what = if frames == 0 { "before its first frame".to_string() } else { format!("after frame {frames}") };
            cut(ins, &what);
            return;
        };
        match b {
            0x3B => break,
            0x21 => {
                if bytes.get(pos + 1).is_none() {
                    cut(ins, "inside an extension block");
                    return;
                }
                match skip_sub_blocks(bytes, pos + 2) {
                    Some(p) => pos = p,
                    None => {
                        cut(ins, "inside an extension block");
                        return;
                    }
                }
            }
            0x2C => {
                frames += 1;
                let Some(&fpacked) = bytes.get(pos + 9) else {
                    cut(ins, &format!("inside the header of frame {frames}"));
                    return;
                };
                let (fw, fh) = (le16(bytes, pos + 5).unwrap_or(0), le16(bytes, pos + 7).unwrap_or(0));
                if fw == 0 || fh == 0 {
                    ins.invalid(
                        "gif.bad_frame",
                        format!("frame {frames} of the GIF is {fw}×{fh} px: the data is corrupt"),
                    );
                    return;
                }
                pos += 10;
                if fpacked & 0x80 != 0 {
                    pos += 3 << ((fpacked & 7) + 1);
                }
                let Some(&min_code) = bytes.get(pos) else {
                    cut(ins, &format!("inside frame {frames}"));
                    return;
                };
                if !(1..=11).contains(&min_code) {
                    ins.invalid(
                        "gif.corrupt",
                        format!("frame {frames} at byte {pos} has LZW code size {min_code}: the data is corrupt"),
                    );
                    return;
                }
                match skip_sub_blocks(bytes, pos + 1) {
                    Some(p) => pos = p,
                    None => {
                        cut(ins, &format!("in the middle of frame {frames}"));
                        return;
                    }
                }
            }
            _ => {
                ins.invalid(
                    "gif.corrupt",
                    format!("unexpected byte 0x{b:02X} at offset {pos} of {total} where a GIF block should start: the data is corrupt"),
                );
                return;
            }
        }
    }
    ins.frames = Some(frames);
    if frames == 0 {
        ins.invalid("gif.no_frames", "the GIF holds no image (no frame before its trailer)".into());
        return;
    }
    if depth == Depth::Deep {
        deep(bytes, frames, ins);
    }
}

fn deep(bytes: &[u8], frames: u32, ins: &mut Inspection) {
    let (w, h) = (u64::from(ins.width.unwrap_or(0)), u64::from(ins.height.unwrap_or(0)));
    let decoded = ins.decode_bounded("GIF", ("gif.not_decoded", "gif.decode"), w * h, || decode(bytes));
    if let Some(n) = decoded.filter(|&n| n != frames) {
        ins.invalid(
            "gif.decode",
            format!("the GIF decoder found {n} frames where the block walk found {frames}: the data is corrupt"),
        );
    }
}

fn decode(bytes: &[u8]) -> Result<u32, gif::DecodingError> {
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::Indexed);
    opts.set_memory_limit(gif::MemoryLimit::Bytes(
        std::num::NonZeroU64::new(DECODE_CAP).unwrap_or(std::num::NonZeroU64::MIN),
    ));
    opts.check_lzw_end_code(false);
    let mut dec = opts.read_info(bytes)?;
    let mut n = 0u32;
    while dec.read_next_frame()?.is_some() {
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_findings() {
        let mut ins = Inspection::default();
        check(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", Depth::Structural, &mut ins);
        assert_eq!(ins.problems[0].code, "gif.no_frames");
        let mut ins = Inspection::default();
        check(b"GIF89a\x01\x00\x01\x00\x00\x00\x00\x2c\0\0\0\0\x01\0\x01\0\0\x02\x02\x4c", Depth::Structural, &mut ins);
        assert_eq!(ins.problems[0].code, "gif.truncated");
        let mut ins = Inspection::default();
        check(b"GIF89a\x00\x00\x01\x00\x00\x00\x00;", Depth::Structural, &mut ins);
        assert_eq!(ins.problems[0].code, "gif.bad_header");
        let mut ins = Inspection::default();
        check(b"GIF89a\x01\x00\x01\x00\x00\x00\x00\x99", Depth::Structural, &mut ins);
        assert_eq!(ins.problems[0].code, "gif.corrupt");
    }
}
