//! Standard output, with the characters a terminal acts on spelled as JSON
//! escapes when it is one.
//!
//! Human output is sanitized where it is made (`sanitize`); JSON output holds a
//! session's strings as they are, and JSON escapes only U+0000–U+001F. The C1
//! controls (U+0080–U+009F: U+009B is an 8-bit CSI), the bidi overrides and
//! isolates, the marks and the line and paragraph separators are legal
//! unescaped JSON, yet reorder or drive a terminal. On a terminal they go out
//! as `\uXXXX`: valid JSON wherever they stand (only strings can hold them), the
//! same value to any parser. To a pipe or a file every byte goes as it is.

use std::io::{self, IsTerminal as _, StdoutLock, Write};

/// Standard output, locked: escaping on a terminal ([`Escaping`]).
pub fn stdout() -> Escaping<StdoutLock<'static>> {
    let out = io::stdout();
    let tty = out.is_terminal();
    Escaping { inner: out.lock(), on: tty, held: Vec::new() }
}

/// A writer that spells the characters `escape` names as `\uXXXX`.
pub struct Escaping<W: Write> {
    inner: W,
    on: bool,
    /// The start of a UTF-8 sequence a write ended inside.
    held: Vec<u8>,
}

impl<W: Write> Escaping<W> {
    /// `inner`, escaping or not.
    pub fn new(inner: W, on: bool) -> Escaping<W> {
        Escaping { inner, on, held: Vec::new() }
    }
}

/// The code point of the 1-, 2- or 3-byte UTF-8 sequence at the start of `b`
/// when it is one a terminal acts on; `None` for any other.
fn escape(b: &[u8]) -> Option<(u32, usize)> {
    let cp = match *b {
        [0x7F, ..] => (0x7F, 1),
        [0xC2, c, ..] if (0x80..=0x9F).contains(&c) => (u32::from(c), 2),
        [0xD8, 0x9C, ..] => (0x061C, 2),
        [0xE2, 0x80, c, ..] if matches!(c, 0x8E | 0x8F | 0xA8..=0xAE) => (0x2000 + u32::from(c - 0x80), 3),
        [0xE2, 0x81, c, ..] if (0xA6..=0xA9).contains(&c) => (0x2040 + u32::from(c - 0x80), 3),
        _ => return None,
    };
    Some(cp)
}

/// Where the next byte that may start a sequence [`escape`] names is, at or
/// after `at`; `del` caches the next DEL's position (`data.len()` for none).
fn next_lead(data: &[u8], at: usize, del: &mut usize) -> Option<usize> {
    if *del < at {
        *del = memchr::memchr(0x7F, &data[at..]).map_or(data.len(), |i| at + i);
    }
    let lead = memchr::memchr3(0xC2, 0xD8, 0xE2, &data[at..*del]).map(|i| at + i);
    lead.or((*del < data.len()).then_some(*del))
}

/// Whether `b` (the end of a write) may be the start of such a sequence.
fn may_start(b: &[u8]) -> bool {
    matches!(b, [0xC2 | 0xD8 | 0xE2] | [0xE2, 0x80 | 0x81])
}

impl<W: Write> Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.on {
            return self.inner.write(buf);
        }
        let mut data = std::mem::take(&mut self.held);
        data.extend_from_slice(buf);
        let mut from = 0;
        let mut at = 0;
        // DEL is rare: found once ahead, sought again only once passed.
        let mut del = memchr::memchr(0x7F, &data).unwrap_or(data.len());
        while let Some(i) = next_lead(&data, at, &mut del) {
            if let Some((cp, len)) = escape(&data[i..]) {
                self.inner.write_all(&data[from..i])?;
                write!(self.inner, "\\u{cp:04x}")?;
                from = i + len;
                at = from;
            } else if may_start(&data[i..]) {
                self.inner.write_all(&data[from..i])?;
                self.held = data[i..].to_vec();
                return Ok(buf.len());
            } else {
                at = i + 1;
            }
        }
        self.inner.write_all(&data[from..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            self.inner.write_all(&held)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Escaping<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(chunks: &[&[u8]]) -> String {
        let mut out = Vec::new();
        {
            let mut w = Escaping::new(&mut out, true);
            for c in chunks {
                w.write_all(c).unwrap();
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn what_a_terminal_acts_on_is_escaped_and_the_json_means_the_same() {
        let text = "{\"a\":\"x\u{202e}y\u{9b}31m\u{85}\u{2028}\u{2067}\u{61c}é→€\u{7f}z\u{7f}\"}";
        let out = through(&[text.as_bytes()]);
        assert_eq!(out, "{\"a\":\"x\\u202ey\\u009b31m\\u0085\\u2028\\u2067\\u061cé→€\\u007fz\\u007f\"}");
        let a: serde_json::Value = serde_json::from_str(&out).unwrap();
        let b: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(a, b);
        // Split inside a sequence, at every byte.
        let bytes = text.as_bytes();
        for cut in 1..bytes.len() {
            assert_eq!(through(&[&bytes[..cut], &bytes[cut..]]), out, "cut at {cut}");
        }
        // Off (a pipe): as it is.
        let mut raw = Vec::new();
        Escaping::new(&mut raw, false).write_all(bytes).unwrap();
        assert_eq!(raw, bytes);
    }
}
