//! Parsing a line without walking its payloads.
//!
//! On a media-heavy session most bytes are base64 strings of megabytes, and the
//! JSON parser walked each one twice (looking for its closing quote, then
//! checking it is UTF-8): a sixth of a scan's CPU, for strings whose bytes the
//! media judge reads again anyway. So a long line is skimmed first: its string
//! contents of at least [`Skim::string`] bytes with no escape in them are found
//! with memchr, the line is parsed with only the first [`Skim::keep`] bytes of
//! each (a copy of the line without them), and the media judge reads each one
//! whole from the line itself ([`Text::whole`]).
//!
//! The result is the one a parse of the whole line gives, or the line is parsed
//! whole after all: a skimmed string must be the payload of a medium the
//! adapter names (adapters read a payload only through its first bytes, a
//! `data:` URL's header, and hand it on); any other is given back its bytes and
//! the line parsed again, and where the judge finds a skimmed string that is not
//! strict base64, it checks that the string was valid JSON text, and the line is
//! read whole when it was not (so an invalid line still says so).

use std::borrow::Cow;
use std::cell::Cell;
use std::ops::Range;

use crate::formats::RawMedia;
use crate::model::Span;

/// When a line is skimmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skim {
    /// Lines shorter than this are parsed whole.
    pub line: usize,
    /// Strings shorter than this are parsed whole.
    pub string: usize,
    /// The first bytes of a skimmed string the parser still sees: enough for a
    /// `data:` URL's header and for an adapter to tell a string from nothing.
    pub keep: usize,
}

impl Default for Skim {
    /// Payloads of 64 KiB and more on lines of 128 KiB and more: an image or a
    /// PDF, rarely anything else (a Codex reasoning item's encrypted text is a
    /// few KiB; a long text has escapes).
    fn default() -> Skim {
        Skim { line: 128 << 10, string: 64 << 10, keep: 256 }
    }
}

impl Skim {
    /// Never skims: every line is parsed whole.
    pub fn off() -> Skim {
        Skim { line: usize::MAX, string: usize::MAX, keep: 0 }
    }
}

/// Escape-free string contents of at least `skim.string` bytes in `raw`, in
/// order (an escaped string is unescaped by the parser, not borrowed from the
/// line, so it could not be found there again).
pub fn long_strings(raw: &[u8], skim: &Skim) -> Vec<Range<usize>> {
    if raw.len() < skim.line {
        return Vec::new();
    }
    crate::json::long_strings(raw, skim.string.max(skim.keep))
        .into_iter()
        .filter(|s| s.escapes == crate::json::Escapes::None)
        .map(|s| s.body)
        .collect()
}

/// A line with its long strings cut to their first bytes, for the parser.
pub struct Skimmed {
    pub text: Vec<u8>,
    holes: Vec<Hole>,
}

#[derive(Clone, Debug)]
struct Hole {
    /// Where the string's kept bytes start in the skimmed text.
    at: usize,
    /// Its kept bytes.
    keep: usize,
    /// The string's contents in the line.
    raw: Range<usize>,
    /// Bytes cut from the line up to and including this hole.
    cut: usize,
}

impl Skimmed {
    /// `raw` without all but the first `keep` bytes of each of `strings`
    /// (sorted, disjoint string contents, each at least `keep` long).
    pub fn new(raw: &[u8], strings: &[Range<usize>], keep: usize) -> Skimmed {
        let cut: usize = strings.iter().map(|s| s.len() - keep).sum();
        let mut text = Vec::with_capacity(raw.len() - cut);
        let (mut from, mut cut) = (0, 0);
        let mut holes = Vec::with_capacity(strings.len());
        for s in strings {
            text.extend_from_slice(&raw[from..s.start + keep]);
            cut += s.len() - keep;
            holes.push(Hole { at: text.len() - keep, keep, raw: s.clone(), cut });
            from = s.end;
        }
        text.extend_from_slice(&raw[from..]);
        Skimmed { text, holes }
    }

    /// The string contents in the line it cut that `media` name as their
    /// payload: all of them, or the line is to be parsed again without the rest.
    pub fn claimed(&self, media: &[RawMedia<'_>]) -> Vec<Range<usize>> {
        let base = self.text.as_ptr() as usize;
        let claimed = |h: &&Hole| {
            media
                .iter()
                .filter_map(|m| m.payload.text())
                .any(|t| (t.as_ptr() as usize).checked_sub(base) == Some(h.at) && t.len() == h.keep)
        };
        self.holes.iter().filter(claimed).map(|h| h.raw.clone()).collect()
    }

    /// The text the media of this skimmed line borrow from.
    pub fn text<'a>(&'a self, raw: &'a [u8], offset: u64) -> Text<'a> {
        Text { shown: &self.text, raw, offset, holes: &self.holes, refused: Cell::new(false) }
    }
}

/// The text a line's media borrow from: the line itself, or its skim.
pub struct Text<'a> {
    /// What the parser read.
    shown: &'a [u8],
    /// The line in the file.
    raw: &'a [u8],
    /// Where the line starts in the file.
    offset: u64,
    holes: &'a [Hole],
    /// A skimmed string turned out not to be JSON text ([`Text::refuse`]).
    refused: Cell<bool>,
}

impl<'a> Text<'a> {
    /// A line parsed whole.
    pub fn whole_line(raw: &'a [u8], offset: u64) -> Text<'a> {
        Text { shown: raw, raw, offset, holes: &[], refused: Cell::new(false) }
    }

    /// Says that a skimmed string is not what the parser would have accepted
    /// (not JSON text, or a `data:` URL whose header was cut): the line must
    /// be read whole, and what was made of it thrown away.
    pub fn refuse(&self) {
        self.refused.set(true);
    }

    pub fn refused(&self) -> bool {
        self.refused.get()
    }

    /// Whether some string of the line was cut (the judge then checks any
    /// such string it cannot decode strictly is JSON text after all).
    pub fn skimmed(&self, t: &str) -> bool {
        self.hole(t).is_some()
    }

    fn hole(&self, t: &str) -> Option<&Hole> {
        let at = self.at(t)?;
        let i = self.holes.partition_point(|h| h.at < at);
        self.holes.get(i).filter(|h| h.at == at && h.keep == t.len())
    }

    /// Where a borrowed string starts in what the parser read.
    fn at(&self, t: &str) -> Option<usize> {
        let at = (t.as_ptr() as usize).checked_sub(self.shown.as_ptr() as usize)?;
        (at + t.len() <= self.shown.len()).then_some(at)
    }

    /// The whole bytes of string `t` the parser gave (all of a cut one).
    pub fn whole<'t>(&'t self, t: &'t str) -> &'t [u8] {
        match self.hole(t) {
            Some(h) => &self.raw[h.raw.clone()],
            None => t.as_bytes(),
        }
    }

    /// Where string `t` sits in the file; `None` for one that had to be
    /// unescaped (it is not a slice of the line).
    pub fn span(&self, t: &str) -> Option<Span> {
        if let Some(h) = self.hole(t) {
            return Some(self.span_at(h.raw.start, h.raw.len()));
        }
        let at = self.at(t)?;
        // Bytes cut before it: those of every hole that ends before it starts.
        let i = self.holes.partition_point(|h| h.at + h.keep <= at);
        let cut = i.checked_sub(1).map_or(0, |i| self.holes[i].cut);
        Some(self.span_at(at + cut, t.len()))
    }

    fn span_at(&self, at: usize, len: usize) -> Span {
        Span { offset: self.offset + at as u64, len: len as u64, line: 0 }
    }

    /// The line as in the file.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }
}

/// `raw` with its long strings cut, for a reader that needs none of them
/// (which agent wrote a file, which provider its last lines name). The
/// strings cut are not checked to be JSON text: a line that is not JSON only
/// inside a payload still tells which agent wrote it (the reader then says
/// what is wrong with it).
pub fn cut<'r>(raw: &'r [u8], skim: &Skim) -> Cow<'r, [u8]> {
    let strings = long_strings(raw, skim);
    if strings.is_empty() { Cow::Borrowed(raw) } else { Cow::Owned(Skimmed::new(raw, &strings, skim.keep).text) }
}

/// Whether `bytes` could stand unescaped in a JSON string: UTF-8, no control
/// character (what the parser would have checked of a string it was not shown).
pub fn json_text(bytes: &[u8]) -> bool {
    !bytes.iter().any(|&b| b < 0x20) && std::str::from_utf8(bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eager() -> Skim {
        Skim { line: 0, string: 8, keep: 3 }
    }

    #[test]
    fn finds_long_unescaped_strings_only() {
        let raw = br#"{"a":"0123456789","b":"01234\"6789","c":"short","long key name":"x"}"#;
        let found: Vec<&[u8]> = long_strings(raw, &eager()).into_iter().map(|r| &raw[r]).collect();
        assert_eq!(found, [&b"0123456789"[..], b"long key name"]);
        // A short line is not looked at.
        assert!(long_strings(raw, &Skim { line: raw.len() + 1, ..eager() }).is_empty());
        // An unterminated string ends the search, keeping what was found.
        let cut = br#"{"a":"0123456789","b":"0123456789"#;
        assert_eq!(long_strings(cut, &eager()), vec![6..16]);
        let escaped_end = br#"{"a":"0123456789\"#;
        assert!(long_strings(escaped_end, &eager()).is_empty());
    }

    #[test]
    fn spans_map_back_to_the_line() {
        let raw = br#"{"a":"0123456789","b":"xy","c":"abcdefghij"}"#;
        let strings = long_strings(raw, &eager());
        let s = Skimmed::new(raw, &strings, 3);
        assert_eq!(s.text, br#"{"a":"012","b":"xy","c":"abc"}"#);
        let v = crate::json::Value::parse(&s.text).unwrap();
        let text = s.text(raw, 100);
        for key in ["a", "b", "c"] {
            let t = v.get(key).as_str().unwrap();
            let span = text.span(t).unwrap();
            let at = usize::try_from(span.offset - 100).unwrap();
            assert_eq!(&raw[at..at + usize::try_from(span.len).unwrap()], text.whole(t), "{key}");
        }
        assert_eq!(text.whole(v.get("c").as_str().unwrap()), b"abcdefghij");
        assert!(text.skimmed(v.get("a").as_str().unwrap()));
        assert!(!text.skimmed(v.get("b").as_str().unwrap()));
    }

    #[test]
    fn json_text_is_what_a_parser_accepts_in_a_string() {
        assert!(json_text(b"iVBOR w0=/+"));
        assert!(json_text("caf\u{e9}".as_bytes()));
        assert!(!json_text(b"a\tb"));
        assert!(!json_text(b"\xff"));
    }
}
