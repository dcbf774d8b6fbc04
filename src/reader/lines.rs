//! A line splitter over a growable buffer: lines are borrowed in place, found
//! with SIMD memchr, and copied only when a partial line moves to the front
//! before the next read. `BufRead::read_until` copies every byte once more and
//! searches with the standard library's word-at-a-time memchr; on a
//! media-heavy session that was a tenth of the whole scan.

use std::io::{self, Read};

/// Reads `R` one line at a time; memory is one buffer as large as the longest line.
pub struct Lines<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
}

/// First read size; the buffer grows to fit the longest line.
const INITIAL: usize = 1 << 20;

impl<R: Read> Lines<R> {
    pub fn new(inner: R) -> Lines<R> {
        Lines { inner, buf: vec![0; INITIAL], start: 0, end: 0, eof: false }
    }

    /// The next line including its `\n` (absent on a last line without one),
    /// or `None` at the end.
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        let mut searched = self.start;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[searched..self.end]) {
                let line = self.start..searched + i + 1;
                self.start = line.end;
                return Ok(Some(&self.buf[line]));
            }
            searched = self.end;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let line = self.start..self.end;
                self.start = self.end;
                return Ok(Some(&self.buf[line]));
            }
            // Make room: move the partial line to the front, grow if it fills the buffer.
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                searched -= self.start;
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                let grown = self.buf.len() * 2;
                self.buf.resize(grown, 0);
            }
            let n = self.inner.read(&mut self.buf[self.end..])?;
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
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
