//! A line splitter over a growable buffer: lines are borrowed in place, found
//! with SIMD memchr, and copied only when a partial line moves to the front
//! before the next read. `BufRead::read_until` copies every byte once more and
//! searches with the standard library's word-at-a-time memchr; on a
//! media-heavy session that was a tenth of the whole scan.
//!
//! The buffer holds only bytes read: it grows by reading into its spare
//! capacity, never by filling it with zeros first. A 150 MB line once doubled
//! the buffer to 256 MB of touched memory; now the pages past the line are
//! never touched, so memory follows the line's length, not the next power of two.

use std::io::{self, Read};

/// Reads `R` one line at a time; memory is one buffer as large as the longest line.
pub struct Lines<R> {
    inner: R,
    /// Bytes read and not yet consumed end at `buf.len()`.
    buf: Vec<u8>,
    start: usize,
    eof: bool,
}

/// First read size; the buffer grows to fit the longest line.
const INITIAL: usize = 1 << 20;

impl<R: Read> Lines<R> {
    pub fn new(inner: R) -> Lines<R> {
        Lines { inner, buf: Vec::with_capacity(INITIAL), start: 0, eof: false }
    }

    /// The next line including its `\n` (absent on a last line without one),
    /// or `None` at the end.
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        let mut searched = self.start;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[searched..]) {
                let line = self.start..searched + i + 1;
                self.start = line.end;
                return Ok(Some(&self.buf[line]));
            }
            searched = self.buf.len();
            if self.eof {
                if self.start == self.buf.len() {
                    return Ok(None);
                }
                let line = self.start..self.buf.len();
                self.start = self.buf.len();
                return Ok(Some(&self.buf[line]));
            }
            self.fill(&mut searched)?;
        }
    }

    /// Skips to the start of the next line without keeping the one skipped
    /// (a worker whose range starts inside a line, possibly a 150 MB one, leaves
    /// it to the previous worker: buffering it too would double its memory).
    /// Returns its length including the `\n`.
    pub fn skip_line(&mut self) -> io::Result<u64> {
        let mut skipped = 0u64;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..]) {
                skipped += i as u64 + 1;
                self.start += i + 1;
                return Ok(skipped);
            }
            skipped += (self.buf.len() - self.start) as u64;
            self.buf.clear();
            self.start = 0;
            if self.eof {
                return Ok(skipped);
            }
            let mut searched = 0;
            self.fill(&mut searched)?;
        }
    }

    /// Moves the unread bytes to the front and reads more after them.
    fn fill(&mut self, searched: &mut usize) -> io::Result<()> {
        // Make room: move the partial line to the front.
        if self.start > 0 {
            self.buf.copy_within(self.start.., 0);
            *searched -= self.start;
            self.buf.truncate(self.buf.len() - self.start);
            self.start = 0;
        }
        // Read into the spare capacity (grown when full, untouched until read into).
        let want = (self.buf.capacity() - self.buf.len()).max(INITIAL) as u64;
        let n = (&mut self.inner).take(want).read_to_end(&mut self.buf)?;
        if (n as u64) < want {
            self.eof = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Lines;

    fn collect(data: &[u8]) -> Vec<Vec<u8>> {
        let mut l = Lines::new(data);
        let mut out = Vec::new();
        while let Some(line) = l.next_line().expect("in-memory read") {
            out.push(line.to_vec());
        }
        out
    }

    #[test]
    fn splits_lines_and_keeps_the_unterminated_tail() {
        assert_eq!(collect(b"a\nbb\n\nccc"), vec![b"a\n".to_vec(), b"bb\n".to_vec(), b"\n".to_vec(), b"ccc".to_vec()]);
        assert!(collect(b"").is_empty());
    }

    #[test]
    fn a_skipped_line_is_counted_not_kept() {
        let mut data = vec![b'x'; (1 << 20) * 3 + 5];
        data.extend_from_slice(b"\nnext\n");
        let mut l = Lines::new(&data[..]);
        assert_eq!(l.skip_line().unwrap(), (1 << 20) * 3 + 6);
        assert!(l.buf.capacity() < 2 << 20, "the skipped line was buffered whole");
        assert_eq!(l.next_line().unwrap(), Some(&b"next\n"[..]));
        assert_eq!(l.next_line().unwrap(), None);
        assert_eq!(Lines::new(&b"tail"[..]).skip_line().unwrap(), 4);
    }

    #[test]
    fn lines_longer_than_the_buffer() {
        let long = vec![b'x'; (1 << 20) * 3 + 5];
        let mut data = long.clone();
        data.push(b'\n');
        data.extend_from_slice(b"tail\n");
        let got = collect(&data);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), long.len() + 1);
        assert_eq!(got[1], b"tail\n");
    }
}
