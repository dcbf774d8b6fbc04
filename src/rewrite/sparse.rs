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

use crate::json::splice::{self, Edit};

/// What stands for a byte not read: base64's own alphabet.
const FILLER: u8 = b'A';

/// Filler bytes a collapsed read ([`Sparse::collapsed`]) leaves of a hole:
/// the string stays a string, and nothing after it (the line splitter, the
/// pointer search, the copy) walks through megabytes that are never written.
const KEPT: u64 = FILLED.len() as u64;
/// The [`KEPT`] bytes of filler a collapsed hole reads as.
const FILLED: &[u8] = &[FILLER; 4];

fn kept(h: &Range<u64>) -> u64 {
    (h.end - h.start).min(KEPT)
}

/// Sorted, merged file ranges that need not be read: payloads the rewrite
/// replaces, and payloads a copy passes through as they are ([`Holes::passing`]).
#[derive(Clone, Debug, Default)]
pub struct Holes(Vec<Hole>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Hole {
    range: Range<u64>,
    /// Kept as it is: written from the file, never read by the process.
    pass: bool,
}

/// A payload shorter than this is read with its line: passing it through
/// costs more than copying it.
pub const PASS_MIN: u64 = 16 << 10;

impl Holes {
    /// The ranges `(offset, length)`, in any order, overlapping or not.
    pub fn new(ranges: &[(u64, u64)]) -> Holes {
        Holes(merged(ranges, false))
    }

    /// [`Holes::new`] for `replaced`, and `kept` passed through: every range of
    /// `kept` of [`PASS_MIN`] bytes or more that no replaced one touches (a
    /// payload the rewrite replaces is never written as it is).
    pub fn passing(replaced: &[(u64, u64)], kept: &[(u64, u64)]) -> Holes {
        let replaced = merged(replaced, false);
        let touches = |r: &Range<u64>| {
            let i = replaced.partition_point(|h| h.range.end <= r.start);
            replaced.get(i).is_some_and(|h| h.range.start < r.end)
        };
        let kept: Vec<(u64, u64)> =
            kept.iter().copied().filter(|&(o, l)| l >= PASS_MIN && !touches(&(o..o + l))).collect();
        let mut all = replaced;
        all.extend(merged(&kept, true));
        all.sort_by_key(|h| h.range.start);
        Holes(all)
    }

    /// The holes inside `span` of the file (holes never straddle a record:
    /// each is a string's text on one line).
    fn within(&self, span: Range<u64>) -> &[Hole] {
        let from = self.0.partition_point(|h| h.range.end <= span.start);
        let to = from + self.0[from..].partition_point(|h| h.range.start < span.end);
        &self.0[from..to]
    }
}

/// `ranges` as sorted holes, those that overlap or touch made one.
fn merged(ranges: &[(u64, u64)], pass: bool) -> Vec<Hole> {
    let mut v: Vec<Range<u64>> = ranges.iter().filter(|r| r.1 > 0).map(|&(o, l)| o..o + l).collect();
    v.sort_by_key(|r| r.start);
    let mut merged: Vec<Hole> = Vec::with_capacity(v.len());
    for r in v {
        match merged.last_mut() {
            Some(last) if r.start <= last.range.end => last.range.end = last.range.end.max(r.end),
            _ => merged.push(Hole { range: r, pass }),
        }
    }
    merged
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
    /// A payload kept as it is, written from the file ([`Holes::passing`]).
    pass: bool,
}

impl Holes {
    /// The record of `len` bytes at file offset `offset` read collapsed (each
    /// of its holes a few filler bytes), and its shape.
    pub fn read_collapsed(&self, file: &impl ReadAt, offset: u64, len: u64) -> io::Result<(Vec<u8>, Shape)> {
        let mut text = Vec::with_capacity(usize::try_from(len).map_err(io::Error::other)?.min(1 << 20));
        Sparse::collapsed(file, offset, offset + len, self).read_to_end(&mut text)?;
        let shape = self.shape(offset, text.len());
        Ok((text, shape))
    }

    /// The shape of the record a collapsed read gave as `len` bytes, which
    /// starts at file offset `at` (holes never straddle a record).
    pub fn shape(&self, at: u64, len: usize) -> Shape {
        let mut shape = Shape { len: len as u64, at, spots: Vec::new() };
        let (mut file, mut col) = (at, 0usize);
        for h in &self.0[self.0.partition_point(|h| h.range.end <= at)..] {
            let gap = usize::try_from(h.range.start.saturating_sub(file)).unwrap_or(usize::MAX);
            if col.saturating_add(gap) >= len {
                break;
            }
            let kept = usize::try_from(kept(&h.range)).unwrap_or(usize::MAX);
            shape.spots.push(Spot { at: col + gap, kept, file: h.range.clone(), pass: h.pass });
            col += gap + kept;
            file = h.range.end;
        }
        shape.len = file - at + (len - col.min(len)) as u64;
        shape
    }
}

/// How a record read collapsed is rewritten ([`Shape::rewritten`]).
pub enum Rewritten {
    /// By these edits of the collapsed record; `None`: it is left out.
    Edits(Option<Vec<Edit>>),
    /// Only as the file holds it: read it whole ([`Shape::read`]) and find
    /// its edits there.
    Whole,
}

impl Shape {
    /// The shape of a record read whole: `len` bytes at file offset `at`.
    pub fn whole(at: u64, len: u64) -> Shape {
        Shape { len, at, spots: Vec::new() }
    }

    /// The record holds a collapsed hole: its offsets are not the file's.
    pub fn collapsed(&self) -> bool {
        !self.spots.is_empty()
    }

    /// The file offset the record starts at.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// How the record, read collapsed as `text`, is rewritten by `ops` (its
    /// rewrite's, at file offsets), `edits` finding every edit of a text for
    /// ops at its places (`None`: the record is left out). The ops are moved
    /// to where the collapsed record has them; where one cannot be, the edits
    /// leave a replaced hole in place, or one touches a payload passed
    /// through (a container written anew holds its filler), the record is
    /// rewritten only whole.
    pub fn rewritten(
        &self,
        text: &[u8],
        ops: Option<&[super::Op]>,
        mut edits: impl FnMut(&[u8], Option<&[super::Op]>) -> Option<Vec<Edit>>,
    ) -> Rewritten {
        if !self.collapsed() {
            return Rewritten::Edits(edits(text, ops));
        }
        let placed = match ops.map(|ops| self.ops(ops)) {
            Some(None) => return Rewritten::Whole,
            placed => placed.flatten(),
        };
        match edits(text, placed.as_deref()) {
            Some(e) if !self.fits(&e) => Rewritten::Whole,
            e => Rewritten::Edits(e),
        }
    }

    /// The file offset of byte `pos` of the collapsed record (not one of a
    /// hole's filler bytes).
    pub fn file_offset(&self, pos: usize) -> u64 {
        let shrunk: u64 =
            self.spots.iter().filter(|s| s.at + s.kept <= pos).map(|s| s.file.end - s.file.start - s.kept as u64).sum();
        self.at + pos as u64 + shrunk
    }

    /// Where file offset `pos` of the record is in the collapsed record, as a
    /// file offset (the record's start plus its place); `None` inside a hole.
    pub fn place(&self, pos: u64) -> Option<u64> {
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
    fn ops(&self, ops: &[super::Op]) -> Option<Vec<super::Op>> {
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

    /// Whether `edits` of the collapsed record replace every replaced hole in
    /// it, each within one edit that does not write its filler again, and
    /// touch no payload passed through: then the record it writes is the one
    /// the file holds, rewritten. (An edit that rewrites a container keeps the
    /// members it does not remove as they read: one that still holds a hole
    /// would write its filler in place of the payload.)
    fn fits(&self, edits: &[Edit]) -> bool {
        let applied = splice::applied(edits);
        self.spots.iter().all(|s| {
            let (from, to) = (s.at, s.at + s.kept);
            if s.pass {
                // An insertion at either end leaves the filler whole.
                !edits.iter().any(|e| e.range.start < to && from < e.range.end)
            } else {
                let filler = &FILLED[..s.kept];
                applied.iter().any(|e| {
                    e.range.start <= from
                        && to <= e.range.end
                        && memchr::memmem::find(e.with.as_bytes(), filler).is_none()
                })
            }
        })
    }

    /// The payloads passed through, in order: where each one's filler is in
    /// the collapsed record (`at..at + kept`), and its range in the file.
    pub fn passes(&self) -> impl Iterator<Item = (Range<usize>, Range<u64>)> + '_ {
        self.spots.iter().filter(|s| s.pass).map(|s| (s.at..s.at + s.kept, s.file.clone()))
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
    holes: &'a [Hole],
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
        while self.holes.first().is_some_and(|h| h.range.end <= self.pos) {
            self.holes = &self.holes[1..];
        }
        let left = self.end.saturating_sub(self.pos);
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let n = match self.holes.first().map(|h| &h.range) {
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
        let ranges = |h: &[Hole]| h.iter().map(|h| h.range.clone()).collect::<Vec<_>>();
        assert_eq!(ranges(&h.0), vec![10..22, 50..60]);
        assert_eq!(ranges(h.within(0..10)), vec![]);
        assert_eq!(ranges(h.within(0..11)), vec![10..22]);
        assert_eq!(ranges(h.within(22..50)), vec![]);
        assert_eq!(ranges(h.within(15..55)), vec![10..22, 50..60]);
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
        assert!(first.fits(&[edit(5..11), edit(16..21)]));
        assert!(!first.fits(&[edit(5..11)]));
        assert!(!first.fits(&[edit(5..8), edit(8..11), edit(16..21)]));
        assert!(!h.shape(0, 5).collapsed());
    }

    #[test]
    fn a_record_read_collapsed_is_rewritten_there_only_when_its_edits_replace_every_hole() {
        let text = br#"{"a":"QUJDREVGR0hJ","b":"S0xNTk9QUVJT"}"#;
        let (_d, f) = file(text);
        // The payloads of "a" (6..18) and "b" (25..37).
        let h = Holes::new(&[(6, 12), (25, 12)]);
        let (collapsed, shape) = h.read_collapsed(&f, 0, text.len() as u64).unwrap();
        assert_eq!(collapsed, br#"{"a":"AAAA","b":"AAAA"}"#.to_vec());
        assert_eq!((shape.place(25), shape.file_offset(17), shape.file_offset(21)), (Some(17), 25, 37));
        let blank = |offset, len| super::super::Op::Blank { offset, len };
        // Each blank an edit of its (placed) range.
        let edits = |_: &[u8], ops: Option<&[super::super::Op]>| {
            let edit = |op: &super::super::Op| match op {
                super::super::Op::Blank { offset, len } => Edit {
                    range: usize::try_from(*offset).unwrap()..usize::try_from(offset + len).unwrap(),
                    with: "N".into(),
                },
                _ => unreachable!("only blanks here"),
            };
            Some(ops.unwrap_or_default().iter().map(edit).collect::<Vec<_>>())
        };
        let both = [blank(6, 12), blank(25, 12)];
        match shape.rewritten(&collapsed, Some(&both), edits) {
            Rewritten::Edits(Some(e)) => {
                assert_eq!(e.iter().map(|e| e.range.clone()).collect::<Vec<_>>(), vec![6..10, 17..21]);
            }
            _ => panic!("both holes are replaced where the collapsed record has them"),
        }
        // Only "a" replaced, or a blank inside a hole: the record is rewritten whole.
        assert!(matches!(shape.rewritten(&collapsed, Some(&[blank(6, 12)]), edits), Rewritten::Whole));
        assert!(matches!(shape.rewritten(&collapsed, Some(&[blank(7, 2), blank(25, 12)]), edits), Rewritten::Whole));
        // Left out: nothing more to read.
        assert!(matches!(shape.rewritten(&collapsed, Some(&both), |_, _| None), Rewritten::Edits(None)));
        assert_eq!(shape.read(&f).unwrap(), text.to_vec());
    }
}
