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

/// Filler bytes a collapsed read ([`Sparse::collapsed`]) leaves of a hole:
/// the string stays a string, and nothing after it (the line splitter, the
/// pointer search, the copy) walks through megabytes that are never written.
const KEPT: u64 = 4;

fn kept(h: &Range<u64>) -> u64 {
    (h.end - h.start).min(KEPT)
}

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

/// Where the holes of one record read collapsed are ([`Sparse::collapsed`]):
/// its length in the file, and each hole's few filler bytes in the record.
#[derive(Debug, Default)]
pub struct Shape {
    /// The record's length in the file.
    pub len: u64,
    /// The file offset the record starts at.
    at: u64,
    spots: Vec<Spot>,
}

#[derive(Debug)]
struct Spot {
    /// Where its filler starts in the collapsed record.
    at: usize,
    kept: usize,
    /// The hole in the file.
    file: Range<u64>,
}

impl Holes {
    /// The shape of the record a collapsed read gave as `len` bytes, which
    /// starts at file offset `at` (holes never straddle a record).
    pub fn shape(&self, at: u64, len: usize) -> Shape {
        let mut shape = Shape { len: len as u64, at, spots: Vec::new() };
        let (mut file, mut col) = (at, 0usize);
        for h in &self.0[self.0.partition_point(|h| h.end <= at)..] {
            let gap = usize::try_from(h.start.saturating_sub(file)).unwrap_or(usize::MAX);
            if col.saturating_add(gap) >= len {
                break;
            }
            let kept = kept(h) as usize;
            shape.spots.push(Spot { at: col + gap, kept, file: h.clone() });
            col += gap + kept;
            file = h.end;
        }
        shape.len = file - at + (len - col.min(len)) as u64;
        shape
    }
}

impl Shape {
    /// The record holds a collapsed hole: its offsets are not the file's.
    pub fn collapsed(&self) -> bool {
        !self.spots.is_empty()
    }

    /// Where file offset `pos` of the record is in the collapsed record, as a
    /// file offset (the record's start plus its place); `None` inside a hole.
    fn place(&self, pos: u64) -> Option<u64> {
        let mut shrunk = 0;
        for s in &self.spots {
            if pos <= s.file.start {
                break;
            }
            if pos < s.file.end {
                return None;
            }
            shrunk += s.file.end - s.file.start - s.kept as u64;
        }
        Some(pos - shrunk)
    }

    /// `ops` with their file offsets moved to where the collapsed record has
    /// them; `None` when one cannot be (it starts or ends inside a hole, or it
    /// is a fit, which reads the payload it replaces).
    pub fn ops(&self, ops: &[super::Op]) -> Option<Vec<super::Op>> {
        use super::Op;
        ops.iter()
            .map(|op| match op {
                Op::Blank { offset, len } => {
                    let (from, to) = (self.place(*offset)?, self.place(offset + len)?);
                    Some(Op::Blank { offset: from, len: to - from })
                }
                Op::Fit { .. } => None,
                other => Some(other.clone()),
            })
            .collect()
    }

    /// Whether `edits` of the collapsed record replace every hole in it, each
    /// within one edit: then the record it writes is the one the file holds,
    /// rewritten.
    pub fn replaced_by(&self, edits: &[Edit]) -> bool {
        self.spots.iter().all(|s| edits.iter().any(|e| e.range.start <= s.at && s.at + s.kept <= e.range.end))
    }

    /// The record's bytes as the file holds them.
    pub fn read(&self, file: &impl ReadAt) -> io::Result<Vec<u8>> {
        let mut bytes = vec![0; usize::try_from(self.len).map_err(io::Error::other)?];
        file.read_exact_at(&mut bytes, self.at)?;
        Ok(bytes)
    }
}

/// The file's bytes from `pos` to `end`, holes filled instead of read.
pub struct Sparse<'a, F: ReadAt> {
    file: &'a F,
    pos: u64,
    end: u64,
    holes: &'a [Range<u64>],
    /// Each hole shortened to [`KEPT`] bytes of filler.
    collapse: bool,
}

impl<'a, F: ReadAt> Sparse<'a, F> {
    pub fn new(file: &'a F, pos: u64, end: u64, holes: &'a Holes) -> Sparse<'a, F> {
        Sparse { file, pos, end, holes: holes.within(pos..end), collapse: false }
    }

    /// As [`Sparse::new`], but each hole reads as a few filler bytes, not as
    /// long as it is: [`Holes::shape`] tells where a record's are.
    pub fn collapsed(file: &'a F, pos: u64, end: u64, holes: &'a Holes) -> Sparse<'a, F> {
        Sparse { collapse: true, ..Sparse::new(file, pos, end, holes) }
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
            Some(h) if h.start <= self.pos && self.collapse => {
                // Its filler, then straight on to the hole's end (a read that
                // starts past the filler starts there).
                let stop = h.start + kept(h);
                if self.pos >= stop {
                    self.pos = h.end;
                    return self.read(buf);
                }
                let n = want.min(usize::try_from(stop - self.pos).unwrap_or(usize::MAX));
                buf[..n].fill(FILLER);
                self.pos += n as u64;
                if self.pos == stop {
                    self.pos = h.end;
                }
                return Ok(n);
            }
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
    fn a_collapsed_read_keeps_a_few_bytes_of_each_hole_and_knows_where() {
        let text = b"{\"a\":\"QUJDREVGR0hJ\",\"b\":\"QUI\"}\n{\"c\":\"S0xNTk9QUVJT\"}\n";
        let (_d, f) = file(text);
        let at = |s: &[u8]| text.windows(s.len()).position(|w| w == s).unwrap() as u64;
        let (a, b, c) = (at(b"QUJDREVG"), at(b"QUI\""), at(b"S0xNTk9Q"));
        let h = Holes::new(&[(a, 12), (b, 3), (c, 12)]);
        let mut out = Vec::new();
        Sparse::collapsed(&f, 0, text.len() as u64, &h).read_to_end(&mut out).unwrap();
        assert_eq!(out, b"{\"a\":\"AAAA\",\"b\":\"AAA\"}\n{\"c\":\"AAAA\"}\n".to_vec());
        // The first record: 22 bytes read, 31 in the file; its holes at 6 and 17.
        let first = h.shape(0, 23);
        assert_eq!(first.len, at(b"{\"c\""));
        assert_eq!(first.spots.iter().map(|s| (s.at, s.kept)).collect::<Vec<_>>(), vec![(6, 4), (17, 3)]);
        let second = h.shape(first.len, 13);
        assert_eq!(second.len, text.len() as u64 - first.len);
        assert_eq!(second.read(&f).unwrap(), b"{\"c\":\"S0xNTk9QUVJT\"}\n".to_vec());
        // A blank of a hole whole is placed over its filler; one inside a hole is not placed.
        let blank = |offset, len| vec![super::super::Op::Blank { offset, len }];
        assert_eq!(first.ops(&blank(b, 3)), Some(blank(17, 3)));
        assert_eq!(first.ops(&blank(a + 1, 2)), None);
        // Every hole replaced, each within one edit.
        let edit = |r: std::ops::Range<usize>| Edit { range: r, with: String::new() };
        assert!(first.replaced_by(&[edit(5..11), edit(16..21)]));
        assert!(!first.replaced_by(&[edit(5..11)]));
        assert!(!first.replaced_by(&[edit(5..8), edit(8..11), edit(16..21)]));
        assert!(!h.shape(0, 5).collapsed());
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
