//! Getting from the text in a session to bytes: base64 decoding and data URLs.
//!
//! The happy path is one base64-simd call into a reused buffer (research:
//! 14 GB/s, the largest single cost after JSON). Only when that fails do we
//! scan the text again to say *which* byte is bad, or fall back to the
//! variants some agents write (URL-safe alphabet, no padding, line breaks),
//! which decode but earn a warning because providers disagree on them.

use super::{Defect, Verdict};

fn invalid(message: String) -> Defect {
    Defect { severity: Verdict::Invalid, code: "base64.invalid", message }
}

/// Describes one byte for a message: printable ASCII as itself, else hex.
pub(crate) fn show_byte(b: u8) -> String {
    if b.is_ascii_graphic() || b == b' ' { format!("'{}'", b as char) } else { format!("0x{b:02X}") }
}

/// Decodes base64 (standard or URL-safe, padding optional) into `out`
/// (cleared first). On failure returns a problem that says which byte is bad.
/// Use [`decode_base64_checked`] to also learn about tolerated oddities.
pub fn decode_base64(text: &[u8], out: &mut Vec<u8>) -> Result<(), Defect> {
    decode_base64_checked(text, out).map(|_| ())
}

/// Like [`decode_base64`], but also returns a warning when the text decodes
/// only as a variant (URL-safe alphabet, missing padding, embedded line
/// breaks or spaces) that a strict provider may refuse.
pub fn decode_base64_checked(bytes: &[u8], out: &mut Vec<u8>) -> Result<Option<Defect>, Defect> {
    out.clear();
    // Fast path: canonical padded standard base64.
    if base64_simd::STANDARD.decode_append(bytes, out).is_ok() {
        return Ok(None);
    }
    out.clear();
    slow_path(bytes, out)
}

fn slow_path(bytes: &[u8], out: &mut Vec<u8>) -> Result<Option<Defect>, Defect> {
    if bytes.len() >= 5 && bytes[..5].eq_ignore_ascii_case(b"data:") {
        let end = memchr::memchr(b',', bytes).map_or(bytes.len().min(40), |i| i + 1);
        let prefix = String::from_utf8_lossy(&bytes[..end.min(60)]);
        return Err(invalid(format!(
            "the base64 field still starts with its data URL prefix \"{prefix}\"; providers expect the bare base64 payload"
        )));
    }
    let mut has_ws = false;
    let mut url = false;
    let mut std_only = false;
    let mut pad_at: Option<usize> = None;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => {
                if let Some(p) = pad_at {
                    return Err(invalid(format!(
                        "byte {p} of {} is '=' padding in the middle of the base64 text (more data follows at byte {i}); two payloads were probably glued together",
                        bytes.len()
                    )));
                }
            }
            b'+' | b'/' | b'-' | b'_' => {
                if let Some(p) = pad_at {
                    return Err(invalid(format!(
                        "byte {p} of {} is '=' padding in the middle of the base64 text (more data follows at byte {i})",
                        bytes.len()
                    )));
                }
                if b == b'-' || b == b'_' {
                    url = true;
                } else {
                    std_only = true;
                }
                if url && std_only {
                    return Err(invalid(format!(
                        "byte {i} of {} is {}: the text mixes the standard ('+', '/') and URL-safe ('-', '_') base64 alphabets",
                        bytes.len(),
                        show_byte(b)
                    )));
                }
            }
            b'=' => {
                pad_at.get_or_insert(i);
            }
            b' ' | b'\t' | b'\r' | b'\n' => has_ws = true,
            _ => {
                return Err(invalid(format!("byte {i} of {} is {}, not base64", bytes.len(), show_byte(b))));
            }
        }
    }
    // Every byte is from the alphabet; strip whitespace if any.
    let owned;
    let clean: &[u8] = if has_ws {
        owned = bytes.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect::<Vec<u8>>();
        &owned
    } else {
        bytes
    };
    let body_len = clean.iter().rposition(|&b| b != b'=').map_or(0, |i| i + 1);
    let pads = clean.len() - body_len;
    if body_len % 4 == 1 {
        return Err(invalid(format!(
            "the base64 text has {body_len} data characters, a length no base64 encoding produces: it was cut short or a character is missing"
        )));
    }
    if pads > 2 || (pads > 0 && !clean.len().is_multiple_of(4)) {
        return Err(invalid(format!(
            "the base64 text ends in {pads} '=' and is {} characters long: the padding is wrong",
            clean.len()
        )));
    }
    let unpadded = &clean[..body_len];
    let res = if url {
        base64_simd::URL_SAFE_NO_PAD.decode_append(unpadded, out)
    } else {
        base64_simd::STANDARD_NO_PAD.decode_append(unpadded, out)
    };
    if res.is_err() {
        out.clear();
        return Err(invalid(format!(
            "the last base64 characters carry stray bits (the text is {} characters long): it was probably cut short",
            bytes.len()
        )));
    }
    let mut oddities = Vec::new();
    if url {
        oddities.push("uses the URL-safe alphabet ('-', '_')");
    }
    if pads == 0 && !body_len.is_multiple_of(4) {
        oddities.push("lacks its '=' padding");
    }
    if has_ws {
        oddities.push("contains spaces or line breaks");
    }
    if oddities.is_empty() {
        return Ok(None);
    }
    Ok(Some(Defect {
        severity: Verdict::Warn,
        code: "base64.nonstandard",
        message: format!(
            "the base64 text {}; it decodes, but a strict provider may reject it — re-encode as standard padded base64",
            oddities.join(" and ")
        ),
    }))
}

/// Splits a `data:` URL into (mime type, whether it is base64, payload).
/// `data:image/png;base64,AAAA` → `(Some("image/png"), true, "AAAA")`;
/// `None` when the text is not a data URL (no `data:` scheme or no comma).
pub fn parse_data_url(url: &str) -> Option<(Option<&str>, bool, &str)> {
    let head = url.get(..5)?;
    if !head.eq_ignore_ascii_case("data:") {
        return None;
    }
    let rest = &url[5..];
    let comma = rest.find(',')?;
    let meta = &rest[..comma];
    let payload = &rest[comma + 1..];
    let mut parts = meta.split(';');
    let mime = parts.next().map(str::trim).filter(|m| !m.is_empty());
    let is_base64 = meta.split(';').skip(1).any(|p| p.trim().eq_ignore_ascii_case("base64"));
    Some((mime, is_base64, payload))
}

/// Length of the base64 text for `n` raw bytes (padded).
pub(crate) fn base64_len(n: usize) -> u64 {
    (n as u64).div_ceil(3) * 4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Result<(Vec<u8>, Option<Defect>), Defect> {
        let mut v = Vec::new();
        decode_base64_checked(s.as_bytes(), &mut v).map(|w| (v, w))
    }

    #[test]
    fn standard_and_variants() {
        assert_eq!(dec("aGVsbG8=").unwrap(), (b"hello".to_vec(), None));
        assert_eq!(dec("").unwrap().0, b"");
        let (v, w) = dec("aGVsbG8").unwrap();
        assert_eq!(v, b"hello");
        assert!(w.unwrap().message.contains("padding"));
        let (v, w) = dec("-_-_").unwrap();
        assert_eq!(v, vec![0xfb, 0xff, 0xbf]);
        assert!(w.unwrap().message.contains("URL-safe"));
        let (v, w) = dec("aGVs\nbG8=\n").unwrap();
        assert_eq!(v, b"hello");
        assert!(w.unwrap().message.contains("line breaks"));
    }

    #[test]
    fn says_which_byte_is_bad() {
        let e = dec("aGVs#G8=").unwrap_err();
        assert_eq!(e.code, "base64.invalid");
        assert!(e.message.contains("byte 4 of 8 is '#', not base64"), "{}", e.message);
        let e = dec("aGVsbG8=aGVsbG8=").unwrap_err();
        assert!(e.message.contains("padding in the middle"), "{}", e.message);
        let e = dec("aGVsb").unwrap_err();
        assert!(e.message.contains("cut short"), "{}", e.message);
        let e = dec("data:image/png;base64,aGVsbG8=").unwrap_err();
        assert!(e.message.contains("data URL prefix"), "{}", e.message);
        let e = dec("ab+-").unwrap_err();
        assert!(e.message.contains("mixes"), "{}", e.message);
        let e = dec("aGVsbG8===").unwrap_err();
        assert!(e.message.contains("padding"), "{}", e.message);
        assert!(dec("aGVsbG9").is_err() || dec("aGVsbG9").is_ok()); // no panic on stray bits
        let e = dec("aGVsbG\u{e9}=").unwrap_err();
        assert!(e.message.contains("0xC3"), "{}", e.message);
    }

    #[test]
    fn data_urls() {
        assert_eq!(parse_data_url("data:image/png;base64,AAAA"), Some((Some("image/png"), true, "AAAA")));
        assert_eq!(parse_data_url("DATA:;base64,"), Some((None, true, "")));
        assert_eq!(parse_data_url("data:text/plain,hi"), Some((Some("text/plain"), false, "hi")));
        assert_eq!(parse_data_url("data:image;base64,xx"), Some((Some("image"), true, "xx")));
        assert_eq!(parse_data_url("http://x"), None);
        assert_eq!(parse_data_url("data:nocomma"), None);
        assert_eq!(parse_data_url("da"), None);
        assert_eq!(parse_data_url("dat\u{e9}:x,"), None);
    }

    #[test]
    fn base64_length() {
        assert_eq!(base64_len(0), 0);
        assert_eq!(base64_len(1), 4);
        assert_eq!(base64_len(3), 4);
        assert_eq!(base64_len(4), 8);
    }
}
