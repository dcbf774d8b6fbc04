//! Reading records again without the bytes a rewrite replaces.
//!
//! On a media-heavy session most of the file is payloads, and an image over
//! the cap or excluded becomes a note: its base64 is never written out. So
//! where a copy or a preview reads a record again, the payloads the
//! [`Rewrite`](super::Rewrite) replaces whole (its `replaced` ranges) are not
//! read: they are filled with `A`s, which keep the record's JSON the same
//! shape (inside a string, as the payload was; no quote, backslash or newline),
//! so every pointer is found where it was. Whether the edits then do replace
//! each such range is checked per record; where one does not, its real bytes
//! are read after all, and the record is as in the file.

use std::io::{self, Read};
use std::ops::Range;

use crate::reader::ReadAt;

use super::splice::Edit;

/// What stands for a byte not read: base64's own alphabet.
const FILLER: u8 = b'A';

/// Sorted, merged file ranges that need not be read.
#[derive(Clone, Debug, Default)]
pub struct Holes(Vec<Range<u64>>);

impl Holes {
    /// The ranges `(offset, length)`, in any order, overlapping or not.
    pub fn new(ranges: &[(u64, u64)]) -> Holes {
        let mut v: Vec<Range<u64>> = ranges.iter().filter(|r| r.1 > 0).map(|&(o, l)| o..o + l).collect();
        v.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(v.len());
        for r in v {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        Holes(merged)
    }

    /// The holes inside `span` of the file (holes never straddle a record:
    /// each is a string's text on one line).
    pub fn within(&self, span: Range<u64>) -> &[Range<u64>] {
        let from = self.0.partition_point(|h| h.end <= span.start);
        let to = from + self.0[from..].partition_point(|h| h.start < span.end);
        &self.0[from..to]
    }

    /// Whether `edits` of the record text at file offset `base` replace every
    /// hole inside it, each within one edit.
    pub fn replaced_by(&self, base: u64, len: u64, edits: &[Edit]) -> bool {
        self.within(base..base + len)
            .iter()
            .all(|h| edits.iter().any(|e| base + e.range.start as u64 <= h.start && h.end <= base + e.range.end as u64))
    }

    /// The record of `len` bytes at `offset`, its holes filled, with its
    /// edits (`edits_of` it; `None` when it is dropped); read after all, and
    /// its edits found again, when they do not replace every hole.
    pub fn read(
        &self,
        file: &impl ReadAt,
        offset: u64,
        len: u64,
        edits_of: impl Fn(&[u8]) -> Option<Vec<Edit>>,
    ) -> io::Result<(Vec<u8>, Option<Vec<Edit>>)> {
        let mut buf = vec![0; usize::try_from(len).map_err(io::Error::other)?];
        let mut reader = Sparse::new(file, offset, offset + len, self);
        reader.read_exact(&mut buf)?;
        let edits = edits_of(&buf);
        if edits.as_ref().is_some_and(|e| !self.replaced_by(offset, len, e)) {
            file.read_exact_at(&mut buf, offset)?;
            let edits = edits_of(&buf);
            return Ok((buf, edits));
        }
        Ok((buf, edits))
    }
}

/// The file's bytes from `pos` to `end`, holes filled instead of read.
pub struct Sparse<'a, F: ReadAt> {
    file: &'a F,
    pos: u64,
    end: u64,
    holes: &'a [Range<u64>],
}

impl<'a, F: ReadAt> Sparse<'a, F> {
    pub fn new(file: &'a F, pos: u64, end: u64, holes: &'a Holes) -> Sparse<'a, F> {
        Sparse { file, pos, end, holes: holes.within(pos..end) }
    }
}

impl<F: ReadAt> Read for Sparse<'_, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.holes.first().is_some_and(|h| h.end <= self.pos) {
            self.holes = &self.holes[1..];
        }
        let left = self.end.saturating_sub(self.pos);
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let n = match self.holes.first() {
            Some(h) if h.start <= self.pos => {
                let n = want.min(usize::try_from(h.end - self.pos).unwrap_or(usize::MAX));
                buf[..n].fill(FILLER);
                n
            }
            next => {
                let until = next.map_or(want, |h| want.min(usize::try_from(h.start - self.pos).unwrap_or(usize::MAX)));
                self.file.read_at(&mut buf[..until], self.pos)?
            }
        };
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    fn file(text: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, text).unwrap();
        let f = File::open(&path).unwrap();
        (dir, f)
    }

    #[test]
    fn holes_merge_and_are_found_by_span() {
        let h = Holes::new(&[(50, 10), (10, 5), (12, 10), (100, 0)]);
        assert_eq!(h.0, vec![10..22, 50..60]);
        assert_eq!(h.within(0..10), &[] as &[Range<u64>]);
        assert_eq!(h.within(0..11).to_vec(), vec![10..22]);
        assert_eq!(h.within(22..50), &[] as &[Range<u64>]);
        assert_eq!(h.within(15..55), &[10..22, 50..60]);
    }

    #[test]
    fn a_sparse_read_fills_the_holes_and_reads_the_rest() {
        let (_d, f) = file(b"0123456789abcdefghij");
        let h = Holes::new(&[(2, 3), (8, 2), (18, 5)]);
        let mut out = Vec::new();
        Sparse::new(&f, 1, 20, &h).read_to_end(&mut out).unwrap();
        assert_eq!(out, b"1AAA567AAabcdefghAA");
    }

    #[test]
    fn a_hole_the_edits_do_not_replace_is_read_after_all() {
        let text = br#"{"a":"QUJD","b":"REVG"}"#;
        let (_d, f) = file(text);
        // The payloads of "a" (6..10) and "b" (17..21).
        let h = Holes::new(&[(6, 4), (17, 4)]);
        let note = |t: &[u8]| Some(vec![Edit { range: 5..11, with: String::from_utf8(t[5..11].to_vec()).unwrap() }]);
        // Only "a" is replaced: "b" is read, and the edits are of the text read.
        let (got, edits) = h.read(&f, 0, text.len() as u64, note).unwrap();
        assert_eq!(got, text.to_vec());
        assert_eq!(edits.unwrap()[0].with, r#""QUJD""#);
        let both =
            |_: &[u8]| Some(vec![Edit { range: 5..11, with: "1".into() }, Edit { range: 16..22, with: "2".into() }]);
        assert_eq!(h.read(&f, 0, text.len() as u64, both).unwrap().0, br#"{"a":"AAAA","b":"AAAA"}"#.to_vec());
        // A dropped record is not read.
        assert_eq!(h.read(&f, 0, text.len() as u64, |_| None).unwrap(), (br#"{"a":"AAAA","b":"AAAA"}"#.to_vec(), None));
    }
}
