//! Big media payloads stay in the file while a preview is built.
//!
//! A record is parsed into a `serde_json::Value`, turned into canonical parts
//! and rendered again: each step would hold its own copy of a 150 MB base64
//! string. Instead, before parsing, every long base64 string of the record is
//! swapped for a short stand-in naming its byte range in the file; the stand-in
//! travels through parsing and rendering like any string, and [`Fill`] writes
//! the file's bytes in its place as the request goes out. The payload's text is
//! copied as spelled in the file, escapes included, which is a valid JSON
//! string body wherever the payload goes (a `data` field, a `data:` URL).
//!
//! Only base64 text is stood in for: no dialect looks inside it, so a
//! placeholder cannot change what is rendered. The stand-in carries a nonce
//! drawn per run, so text in a session cannot forge one.

use std::io::{self, Read as _, Seek as _, SeekFrom, Write};
use std::ops::Range;

use crate::json::splice::Edit;
use crate::reader::Handle;
use crate::rewrite::sparse::Shape;

/// Payloads shorter than this are cheap enough to carry through.
const MIN_LEN: usize = 64 << 10;

/// The stand-ins of one preview: their marker, and the file they point into.
pub struct StandIns {
    /// `\u0001sd-span-<nonce>:` as it appears in JSON text (escaped).
    marker: String,
}

impl Default for StandIns {
    fn default() -> Self {
        StandIns { marker: format!("\\u0001sd-span-{}:", uuid::Uuid::new_v4().simple()) }
    }
}

impl StandIns {
    /// Edits that replace each long base64 string body of `text` (the record
    /// at file offset `base`) by a stand-in; bodies overlapping `keep` (the
    /// rewrite's own edits) are left alone.
    pub fn edits(&self, text: &[u8], shape: &Shape, keep: &[Edit]) -> Vec<Edit> {
        if text.len() < MIN_LEN {
            return Vec::new();
        }
        let mut out = Vec::new();
        for found in crate::json::long_strings(text, MIN_LEN) {
            let body = base64_part(text, found.body, found.escapes != crate::json::Escapes::Others);
            if body.len() < MIN_LEN || keep.iter().any(|e| e.range.start < body.end && body.start < e.range.end) {
                continue;
            }
            let with = format!("{}{}:{}\\u0001", self.marker, shape.file_offset(body.start), body.len());
            out.push(Edit { range: body, with });
        }
        out
    }

    /// Edits that replace each of `spans` (file ranges of payloads, of the
    /// record at file offset `base`) by a stand-in, whatever its length: the
    /// request then names each attachment by where its bytes are.
    pub fn spans(&self, text: &[u8], shape: &Shape, spans: &[(u64, u64)]) -> Vec<Edit> {
        let base = shape.at();
        spans
            .iter()
            // A span the record was read without (a hole: what the rewrite replaces) is not placed.
            .filter_map(|&(o, l)| {
                let (from, to) = (shape.place(o)?, shape.place(o + l)?);
                let start = usize::try_from(from.checked_sub(base)?).ok()?;
                (to - from == l).then_some((start, o, usize::try_from(l).ok()?))
            })
            .filter(|&(start, _, l)| start + l <= text.len())
            .map(|(start, o, l)| {
                Edit { range: start..start + l, with: format!("{}{o}:{l}\\u0001", self.marker) }
            })
            .collect()
    }

    /// The file offsets of the stand-ins in `s` (a string of the request).
    pub fn offsets_in(&self, s: &str) -> Vec<u64> {
        // In a parsed string the marker's escapes are characters.
        let marker = self.marker.replace("\\u0001", "\u{1}");
        s.split(marker.as_str()).skip(1).filter_map(|rest| rest.split(':').next()?.parse().ok()).collect()
    }

    /// `out` with every stand-in written as the file's bytes it names.
    pub fn fill<W: Write>(&self, out: W, file: Handle) -> Fill<'_, W> {
        Fill { out, file, marker: self.marker.as_bytes(), pending: Vec::new() }
    }
}

/// How much of a payload is checked to be base64: text (a tool's output, a
/// file read) has a space or a newline escape long before this.
const SNIFF: usize = 4096;

/// The part of a string body that is base64: all of it, or what follows the
/// comma of a `data:…;base64,` URL; empty when it holds anything else. A body
/// whose only escapes are `\/` and whose first [`SNIFF`] bytes are all of the
/// base64 alphabet is taken for base64 without reading the rest: it would be
/// copied out as the file spells it all the same, and no dialect reads inside it.
fn base64_part(text: &[u8], body: Range<usize>, plain: bool) -> Range<usize> {
    let none = body.start..body.start;
    if !plain {
        return none;
    }
    let s = &text[body.clone()];
    let from = if s.starts_with(b"data:") {
        match memchr::memchr(b',', &s[..s.len().min(256)]) {
            Some(c) if s[..c].ends_with(b";base64") => c + 1,
            _ => return none,
        }
    } else {
        0
    };
    let sniff = &s[from..s.len().min(from + SNIFF)];
    let alphabet = |b: &u8| matches!(b, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' | b'=' | b'\\');
    if !sniff.iter().all(alphabet) {
        return none;
    }
    body.start + from..body.end
}

enum Spec {
    Partial,
    Invalid,
    Done(u64, u64),
}

/// What follows a stand-in's marker: `<offset>:<len>\u0001`, so far.
fn range_of(tail: &[u8]) -> Spec {
    const END: &[u8] = b"\\u0001";
    let Some(colon) = tail.iter().position(|b| *b == b':') else {
        return if tail.iter().all(u8::is_ascii_digit) && tail.len() < 21 { Spec::Partial } else { Spec::Invalid };
    };
    let rest = &tail[colon + 1..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let end = &rest[digits..];
    if end.len() < END.len() {
        return if END.starts_with(end) && digits < 21 { Spec::Partial } else { Spec::Invalid };
    }
    let number = |b: &[u8]| std::str::from_utf8(b).ok()?.parse::<u64>().ok();
    match (end == END, number(&tail[..colon]), number(&rest[..digits])) {
        (true, Some(o), Some(l)) => Spec::Done(o, l),
        _ => Spec::Invalid,
    }
}

/// A writer that replaces stand-ins by the file's bytes. Backslash escapes are
/// read in pairs, so an escaped backslash before `u0001` never starts a match.
pub struct Fill<'a, W: Write> {
    out: W,
    file: Handle,
    marker: &'a [u8],
    /// Bytes from a backslash on, until they are known to be a stand-in or not.
    pending: Vec<u8>,
}

impl<W: Write> Fill<'_, W> {
    /// Decides on `pending`: writes it through, or the file range it names.
    fn settle(&mut self) -> io::Result<()> {
        let p = &self.pending;
        let known = p.len().min(self.marker.len());
        if p[..known] != self.marker[..known] {
            // An ordinary escape: the backslash and the character after it go out as a pair.
            let keep = if p.len() >= 2 { 2 } else { p.len() };
            self.out.write_all(&p[..keep])?;
            let rest = p[keep..].to_vec();
            self.pending.clear();
            return self.feed(&rest);
        }
        if p.len() <= self.marker.len() {
            return Ok(());
        }
        let (offset, len) = match range_of(&p[self.marker.len()..]) {
            Spec::Partial => return Ok(()),
            Spec::Invalid => return Err(io::Error::other("a preview stand-in names no byte range")),
            Spec::Done(offset, len) => (offset, len),
        };
        self.pending.clear();
        self.file.seek(SeekFrom::Start(offset))?;
        let copied = io::copy(&mut (&mut self.file).take(len), &mut self.out)?;
        if copied != len {
            return Err(io::Error::other("the session is shorter than when it was read"));
        }
        Ok(())
    }

    fn feed(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            if self.pending.is_empty() {
                match memchr::memchr(b'\\', buf) {
                    None => return self.out.write_all(buf),
                    Some(i) => {
                        self.out.write_all(&buf[..i])?;
                        buf = &buf[i..];
                    }
                }
            }
            self.pending.push(buf[0]);
            buf = &buf[1..];
            self.settle()?;
        }
        Ok(())
    }
}

impl<W: Write> Write for Fill<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.feed(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let p = std::mem::take(&mut self.pending);
            self.out.write_all(&p)?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(record: &str) -> (String, usize) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let file = format!("{{\"x\":1}}\n{record}\n");
        std::fs::write(&path, &file).unwrap();
        let base = 8;
        let s = StandIns::default();
        let edits = s.edits(record.as_bytes(), &Shape::whole(base, record.len() as u64), &[]);
        let n = edits.len();
        let small = crate::json::splice::apply(record.as_bytes(), &edits);
        let v: serde_json::Value = serde_json::from_slice(&small).unwrap();
        let mut out = Vec::new();
        {
            let mut w = s.fill(&mut out, Handle::of_file(std::fs::File::open(&path).unwrap()));
            serde_json::to_writer(&mut w, &v).unwrap();
            w.flush().unwrap();
        }
        (String::from_utf8(out).unwrap(), n)
    }

    #[test]
    fn long_base64_goes_out_as_the_file_spells_it() {
        let b64 = "QUJD".repeat(40_000) + "\\/==";
        let url = format!("data:image/png;base64,{}", "QUJD".repeat(30_000));
        let record = format!(r#"{{"a":"{b64}","b":"{url}","t":"\\\\u0001sd-span","c":"short"}}"#);
        let (out, n) = round_trip(&record);
        assert_eq!(n, 2);
        let want: serde_json::Value = serde_json::from_str(&record).unwrap();
        let got: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn long_text_that_is_not_base64_is_parsed_as_usual() {
        let text = "a line of text\\n".repeat(10_000);
        let record = format!(r#"{{"text":"{text}"}}"#);
        let (out, n) = round_trip(&record);
        assert_eq!(n, 0);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&out).unwrap()["text"].as_str().unwrap().len(), 150_000);
    }

    #[test]
    fn a_forged_marker_without_the_nonce_is_text() {
        let record = format!(r#"{{"t":"\u0001sd-span-0:0:8\u0001","pad":"{}"}}"#, "x".repeat(70_000));
        let (out, _) = round_trip(&record);
        let got: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(got["t"], "\u{1}sd-span-0:0:8\u{1}");
    }
}
