//! JPEG: a marker walk (SOI, every segment length, SOF dimensions, entropy
//! data after each SOS, EOI) for the structural depth — about memchr speed —
//! and zune-jpeg's strict decode of every scan for `Deep`.
//!
//! A JPEG without EOI is judged invalid: in sessions it is almost always a
//! download or a screenshot cut short, even though some decoders paper over
//! it with "Premature end of JPEG file".

use super::{DECODE_CAP, Depth, Inspection, with_scratch};

fn be16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

fn marker_name(m: u8) -> String {
    match m {
        0xC0 => "SOF0 (baseline frame header)".into(),
        0xC2 => "SOF2 (progressive frame header)".into(),
        0xC4 => "DHT (Huffman table)".into(),
        0xDA => "SOS (start of scan)".into(),
        0xDB => "DQT (quantization table)".into(),
        0xDD => "DRI (restart interval)".into(),
        0xE0..=0xEF => format!("APP{}", m - 0xE0),
        0xFE => "COM (comment)".into(),
        0xC1 | 0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => {
            format!("SOF{} (frame header)", m - 0xC0)
        }
        _ => format!("marker FF{m:02X}"),
    }
}

fn is_sof(m: u8) -> bool {
    matches!(m, 0xC0..=0xCF) && !matches!(m, 0xC4 | 0xC8 | 0xCC)
}

/// Validates a JPEG (the caller checked `FF D8 FF`) and fills in dimensions.
#[allow(clippy::too_many_lines, reason = "one state machine over the format's bytes: the segment walk")]
pub(crate) fn check(bytes: &[u8], depth: Depth, ins: &mut Inspection) {
    let total = bytes.len();
    let mut pos = 2usize;
    let mut sof = false;
    let mut scans = 0u32;
    let mut entropy = 0u64; // bytes of entropy-coded data over all scans
    loop {
        if pos >= total {
            let what = if !sof {
                "before its frame header (SOF)"
            } else if scans == 0 {
                "before any image data (SOS)"
            } else {
                "after the image data"
            };
            ins.invalid(
                "jpeg.truncated",
                format!("JPEG ends after {total} bytes {what}: the EOI marker is missing — the file was cut short"),
            );
            return;
        }
        if bytes[pos] != 0xFF {
            ins.invalid(
                "jpeg.corrupt",
                format!("expected a JPEG marker at byte {pos}, found 0x{:02X}: the data is corrupt", bytes[pos]),
            );
            return;
        }
        // Fill bytes: any number of 0xFF before the marker code.
        while pos + 1 < total && bytes[pos + 1] == 0xFF {
            pos += 1;
        }
        let Some(&m) = bytes.get(pos + 1) else {
            pos = total;
            continue;
        };
        match m {
            0xD9 => {
                if scans == 0 {
                    ins.invalid(
                        "jpeg.no_data",
                        format!("the JPEG ends (EOI at byte {pos}) before any image data: it holds no picture"),
                    );
                    return;
                }
                break;
            }
            0xD8 => {
                ins.invalid(
                    "jpeg.corrupt",
                    format!("a second start-of-image marker at byte {pos}: the data is corrupt"),
                );
                return;
            }
            0x01 | 0xD0..=0xD7 => {
                pos += 2;
                continue;
            }
            0x00 => {
                ins.invalid(
                    "jpeg.corrupt",
                    format!("a stray 0xFF00 at byte {pos} outside image data: the data is corrupt"),
                );
                return;
            }
            _ => {}
        }
        let Some(len) = be16(bytes, pos + 2) else {
            ins.invalid(
                "jpeg.truncated",
                format!(
                    "JPEG ends after {total} bytes inside a {} segment header: the EOI marker is missing — the file was cut short",
                    marker_name(m)
                ),
            );
            return;
        };
        if len < 2 {
            ins.invalid(
                "jpeg.corrupt",
                format!("the {} segment at byte {pos} has length {len}: the data is corrupt", marker_name(m)),
            );
            return;
        }
        let seg_end = pos + 2 + usize::from(len);
        if seg_end > total {
            ins.invalid(
                "jpeg.truncated",
                format!(
                    "JPEG ends after {total} of at least {seg_end} bytes, inside a {} segment: the EOI marker is missing — the file was cut short",
                    marker_name(m)
                ),
            );
            return;
        }
        let seg = &bytes[pos + 4..seg_end];
        if is_sof(m) {
            if seg.len() < 6 {
                ins.invalid("jpeg.bad_header", format!("the JPEG frame header at byte {pos} is too short"));
                return;
            }
            let h = be16(seg, 1).unwrap_or(0);
            let w = be16(seg, 3).unwrap_or(0);
            let ncomp = seg[5];
            if w == 0 || h == 0 {
                ins.invalid(
                    "jpeg.bad_header",
                    format!("the JPEG frame header says the image is {w}×{h} px: a side of 0 is not an image"),
                );
                return;
            }
            if !matches!(ncomp, 1 | 3 | 4) || seg.len() < 6 + 3 * usize::from(ncomp) {
                ins.invalid(
                    "jpeg.bad_header",
                    format!("the JPEG frame header lists {ncomp} colour components; decoders accept 1, 3 or 4"),
                );
                return;
            }
            if !sof {
                ins.width = Some(u32::from(w));
                ins.height = Some(u32::from(h));
                ins.frames = Some(1);
            }
            sof = true;
        }
        pos = seg_end;
        if m == 0xDA {
            if !sof {
                ins.invalid(
                    "jpeg.corrupt",
                    format!("the JPEG starts a scan at byte {pos} before any frame header: the data is corrupt"),
                );
                return;
            }
            scans += 1;
            // Entropy-coded data runs to the next marker that is not a stuffed
            // zero or a restart marker.
            let start = pos;
            let mut p = pos;
            loop {
                // A marker needs its second byte: data that ends first was cut short.
                let Some(at) = memchr::memchr(0xFF, &bytes[p..]).map(|i| p + i).filter(|at| at + 1 < bytes.len())
                else {
                    ins.invalid(
                        "jpeg.truncated",
                        format!(
                            "JPEG ends after {total} bytes in the middle of its image data (scan {scans}): the EOI marker is missing — the file was cut short"
                        ),
                    );
                    return;
                };
                match bytes[at + 1] {
                    0x00 | 0xD0..=0xD7 | 0xFF => p = at + 1,
                    _ => {
                        pos = at;
                        break;
                    }
                }
            }
            if pos == start {
                ins.invalid("jpeg.no_data", format!("scan {scans} of the JPEG at byte {start} holds no image data"));
                return;
            }
            entropy += (pos - start) as u64;
        }
    }
    if depth == Depth::Deep {
        deep(bytes, entropy, ins);
    }
}

fn deep(bytes: &[u8], entropy: u64, ins: &mut Inspection) {
    let (w, h) = (u64::from(ins.width.unwrap_or(0)), u64::from(ins.height.unwrap_or(0)));
    // Too large to decode: judge whether the data can hold the picture at all. Every
    // 8×8 block of every component costs at least one bit (its DC code), and no component
    // is sampled coarser than 1/4, so a JPEG needs at least ⌈w/32⌉·⌈h/32⌉ bits of scan data.
    let min_bits = w.div_ceil(32) * h.div_ceil(32);
    if w * h * 3 > DECODE_CAP && entropy.saturating_mul(8) < min_bits {
        ins.invalid(
            "jpeg.data_missing",
            format!(
                "the JPEG header claims {w}×{h} px, but its image data is {entropy} bytes, too little to hold that many blocks: the data is missing or cut short"
            ),
        );
        return;
    }
    ins.decode_bounded("JPEG", ("jpeg.not_decoded", "jpeg.decode"), w * h * 3, || decode(bytes));
}

fn decode(bytes: &[u8]) -> Result<(), String> {
    use zune_jpeg::zune_core::bytestream::ZCursor;
    use zune_jpeg::zune_core::options::DecoderOptions;
    let opts = DecoderOptions::default().set_strict_mode(true).set_max_width(1 << 16).set_max_height(1 << 16);
    let mut dec = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), opts);
    dec.decode_headers().map_err(|e| format!("{e:?}"))?;
    let size = dec.output_buffer_size().ok_or("no output size")?;
    if size as u64 > DECODE_CAP {
        return Err(format!("{size} bytes of pixels exceed the decode cap"));
    }
    with_scratch(size, |buf| dec.decode_into(buf).map_err(|e| format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(bytes: &[u8]) -> Inspection {
        let mut ins = Inspection::default();
        check(bytes, Depth::Structural, &mut ins);
        ins
    }

    #[test]
    fn marker_walk_findings() {
        assert_eq!(run(&[0xFF, 0xD8, 0xFF]).problems[0].code, "jpeg.truncated");
        assert_eq!(run(&[0xFF, 0xD8, 0xFF, 0xD9]).problems[0].code, "jpeg.no_data");
        assert_eq!(run(&[0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 1]).problems[0].code, "jpeg.truncated");
        assert_eq!(run(&[0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00]).problems[0].code, "jpeg.corrupt");
        // SOF with zero width
        let sof = [0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 8, 0, 0, 1, 1, 0x11, 0];
        assert_eq!(run(&sof).problems[0].code, "jpeg.bad_header");
        // SOS before SOF
        let sos = [0xFF, 0xD8, 0xFF, 0xDA, 0, 2, 1, 2, 0xFF, 0xD9];
        assert_eq!(run(&sos).problems[0].code, "jpeg.corrupt");
    }

    #[test]
    fn huge_claim_with_a_few_bytes_of_data_is_invalid_when_deep() {
        // 60000×60000 gray baseline: a frame header, one scan of 4 bytes, EOI.
        let mut f = vec![0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0xEA, 0x60, 0xEA, 0x60, 1, 1, 0x11, 0];
        f.extend([0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0, 1, 2, 3, 4, 0xFF, 0xD9]);
        assert_eq!(run(&f).verdict(), crate::media::Verdict::Ok);
        let mut ins = Inspection::default();
        check(&f, Depth::Deep, &mut ins);
        assert_eq!(ins.problems[0].code, "jpeg.data_missing", "{:?}", ins.problems);
        assert_eq!(ins.verdict(), crate::media::Verdict::Invalid);
    }
}
