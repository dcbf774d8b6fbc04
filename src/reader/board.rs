//! Sharing a file's lines among the reader's workers.
//!
//! The file is first cut into one byte range per worker, but bytes are not
//! work: one half of a session may hold the unique screenshots and the other
//! their repeats (decoded once), and the worker done first then waited for the
//! other (17 ms of a 180 ms scan of the bench's session). So a worker done
//! with its range takes the second half of what is left of the range with the
//! most left, and reads that, and so on until what is left is too small to
//! share.
//!
//! A range's owner reads on only to where it has reserved, a stretch at a
//! time, and a split never falls before a reservation: no line is read twice
//! or missed. A line belongs to the range it starts in (the taker skips the
//! line it lands in, as every range but the first does), so a range ends
//! where its owner first finds a line starting at or past its end.

use std::sync::{Mutex, PoisonError};

/// How far a range's owner reads between two looks at the board.
const STRETCH: u64 = 1 << 20;

/// What is left of a range that is not worth sharing.
const LEAST_SHARED: u64 = 4 << 20;

/// The ranges being read.
pub struct Board {
    ranges: Mutex<Vec<Range>>,
}

#[derive(Debug)]
struct Range {
    /// Where the owner may read up to (a line starting before it).
    reserved: u64,
    /// Where the range ends: a line starting there or after is another's.
    end: u64,
}

/// A range to read: its index on the board and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub id: usize,
    pub start: u64,
}

impl Board {
    /// `size` bytes cut into `n` ranges of nearly equal length.
    pub fn new(size: u64, n: usize) -> Board {
        let n = n.max(1) as u64;
        let ranges = (0..n).map(|i| Range { reserved: size * i / n, end: size * (i + 1) / n }).collect();
        Board { ranges: Mutex::new(ranges) }
    }

    /// The first ranges, one per worker.
    pub fn first(&self) -> Vec<Share> {
        let ranges = self.lock();
        ranges.iter().enumerate().map(|(id, r)| Share { id, start: r.reserved }).collect()
    }

    /// Where the owner of range `id`, at `pos`, may read up to: `pos` itself
    /// when the range ends there (its next line is another's).
    pub fn reserve(&self, id: usize, pos: u64) -> u64 {
        let mut ranges = self.lock();
        let r = &mut ranges[id];
        r.reserved = pos.saturating_add(STRETCH).min(r.end).max(pos);
        if pos >= r.end { pos } else { r.reserved }
    }

    /// Where range `id` ends now (it may end sooner, once shared).
    pub fn end(&self, id: usize) -> u64 {
        self.lock()[id].end
    }

    /// The second half of what is left of the range with the most left,
    /// now a range of its own; `None` when none has enough left to share.
    pub fn take(&self) -> Option<Share> {
        let mut ranges = self.lock();
        let (id, left) =
            ranges.iter().enumerate().map(|(i, r)| (i, r.end.saturating_sub(r.reserved))).max_by_key(|x| x.1)?;
        if left < LEAST_SHARED {
            return None;
        }
        let split = ranges[id].reserved + left / 2;
        let end = std::mem::replace(&mut ranges[id].end, split);
        ranges.push(Range { reserved: split, end });
        Some(Share { id: ranges.len() - 1, start: split })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Range>> {
        self.ranges.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_shared_after_what_its_owner_reserved_and_never_twice() {
        let b = Board::new(100 << 20, 2);
        assert_eq!(b.first(), [Share { id: 0, start: 0 }, Share { id: 1, start: 50 << 20 }]);
        // Range 0's owner reads to 10 MB, reserving a stretch ahead.
        assert_eq!(b.reserve(0, 10 << 20), (10 << 20) + STRETCH);
        // Range 1 is done: the other half of what range 0 has not reserved is taken.
        assert_eq!(b.reserve(1, 100 << 20), 100 << 20);
        let split = (10 << 20) + STRETCH + ((50 << 20) - (10 << 20) - STRETCH) / 2;
        assert_eq!(b.take(), Some(Share { id: 2, start: split }));
        // Range 0 now ends at the split: its owner reserves up to there, then stops.
        assert_eq!(b.reserve(0, split - 10), split);
        assert_eq!(b.reserve(0, split + 7), split + 7);
        // What is left is shared until it is small; the ranges still tile the file.
        let mut starts = vec![0, 50 << 20, split];
        while let Some(share) = b.take() {
            starts.push(share.start);
        }
        let ranges = b.lock();
        assert!(ranges.iter().all(|r| r.end.saturating_sub(r.reserved) < LEAST_SHARED));
        let mut tiles: Vec<(u64, u64)> = starts.iter().zip(ranges.iter()).map(|(&s, r)| (s, r.end)).collect();
        tiles.sort_unstable();
        assert!(tiles.windows(2).all(|w| w[0].1 == w[1].0), "{tiles:?}");
        assert_eq!((tiles[0].0, tiles.last().unwrap().1), (0, 100 << 20));
    }
}
