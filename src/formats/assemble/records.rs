//! The records of a whole file, kept from the read until the history is
//! assembled: one per line that matters, so a session of a million short lines
//! keeps a million. Each is stored in two columns: its place in the file (the
//! [`Record`] that becomes [`crate::model::Session::records`], pruned in place,
//! never copied) and how it joins the history (a [`Link`], 32 bytes: the ids
//! of a tree node, the end of its entries, its rare parts behind a box). The
//! full [`Unit`] an adapter gives (48 bytes with a compaction's kept id) is
//! rebuilt on demand; what only compactions carry lives in the box, and a
//! node's parent is listed apart only when it is not the node just before
//! (a chain of lines, each the parent of the next, lists none).

use std::ops::Range;

use crate::model::{Attachment, Record};

use super::{Extra, Id, LineRecord, Slot, Unit};

/// How a record joins the history, without the payload of its [`Unit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Plain,
    Hidden,
    Node,
    Keyed,
    RewindTo,
    Reset,
    Replace,
    ResetKeeping,
    DropTurns,
    Request,
}

/// Where a node's parent is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Parent {
    None,
    /// The id of the nearest node before it.
    Previous,
    /// In [`Records::parents`].
    Listed,
}

/// A record's [`Unit`] and entries, packed.
#[derive(Debug)]
struct Link {
    /// A node's own id, or the id of a keyed record or of a rewind's target.
    id: Option<Id>,
    group: Option<Id>,
    extra: Option<Box<Extra>>,
    /// Where its entries end in the file's entry vector; they start where the
    /// previous record's end (the entries are pushed in record order). A `u32`:
    /// 2^32 entries of 56 bytes each would not fit in memory before it overflowed.
    end: u32,
    kind: Kind,
    parent: Parent,
    sidechain: bool,
}

/// Every record of a file, in file order.
#[derive(Debug, Default)]
pub struct Records {
    spots: Vec<Record>,
    links: Vec<Link>,
    /// The parents that are not the node just before, by record index (ascending).
    parents: Vec<(u32, Id)>,
    /// The id of the last node pushed.
    last_node: Option<Id>,
}

/// An entry index as stored: fewer than 2^32 entries fit in memory.
fn index(n: usize) -> u32 {
    u32::try_from(n).expect("fewer than 2^32 entries (56 bytes each) in memory")
}

impl Records {
    pub fn len(&self) -> usize {
        self.links.len()
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    pub fn reserve_exact(&mut self, more: usize) {
        self.spots.reserve_exact(more);
        self.links.reserve_exact(more);
    }

    /// Records for a worker that may read millions of lines ([`mapped`]).
    pub fn for_many() -> Records {
        Records { spots: mapped(), links: mapped(), ..Records::default() }
    }

    /// Appends a record; its entries follow those of the records before it.
    pub fn push(&mut self, r: LineRecord) {
        debug_assert_eq!(r.entries.start, self.end_of_entries(), "entries out of record order");
        let (kind, id, parent, group, sidechain, keep_from, keep) = match r.unit {
            Unit::Plain => (Kind::Plain, None, None, None, false, None, None),
            Unit::Hidden => (Kind::Hidden, None, None, None, false, None, None),
            Unit::Node { id, parent, sidechain, group, keep_from } => {
                (Kind::Node, Some(id), parent, group, sidechain, keep_from, None)
            }
            Unit::Keyed(id) => (Kind::Keyed, Some(id), None, None, false, None, None),
            Unit::RewindTo(id) => (Kind::RewindTo, Some(id), None, None, false, None, None),
            Unit::Reset => (Kind::Reset, None, None, None, false, None, None),
            Unit::Replace => (Kind::Replace, None, None, None, false, None, None),
            Unit::ResetKeeping(k) => (Kind::ResetKeeping, None, None, None, false, None, Some(k)),
            Unit::DropTurns(n) => (Kind::DropTurns, None, None, None, false, None, Some(n)),
            Unit::Request => (Kind::Request, None, None, None, false, None, None),
        };
        let mut extra = r.extra;
        if keep_from.is_some() || keep.is_some() {
            let x = extra.get_or_insert_with(Box::default).rare.get_or_insert_with(Box::default);
            x.keep_from = keep_from;
            x.keep = keep.unwrap_or(0);
        }
        let parent = match parent {
            None => Parent::None,
            Some(p) if Some(p) == self.last_node => Parent::Previous,
            Some(p) => {
                self.parents.push((index(self.len()), p));
                Parent::Listed
            }
        };
        if kind == Kind::Node {
            self.last_node = id;
        }
        self.spots.push(Record { line: r.line, offset: r.offset, len: r.len, part: None });
        self.links.push(Link { id, group, extra, end: index(r.entries.end), kind, parent, sidechain });
    }

    /// Puts a record with no entries before all others (what a file's sidecar says).
    pub fn insert_first(&mut self, r: LineRecord) {
        assert!(r.entries.is_empty(), "a record put first has no entries");
        let mut rest = std::mem::take(self);
        self.reserve_exact(rest.len() + 1);
        self.push(r);
        self.spots.append(&mut rest.spots);
        self.links.append(&mut rest.links);
        self.parents = rest.parents.into_iter().map(|(i, p)| (i + 1, p)).collect();
        self.last_node = rest.last_node.or(self.last_node);
    }

    /// Appends a later chunk's records, their lines counted from `line_base`
    /// and their entries from `entry_base` in the merged vector.
    pub fn append_shifted(&mut self, other: Records, line_base: u64, entry_base: usize) {
        let shift = index(entry_base);
        let at = index(self.len());
        self.parents.extend(other.parents.iter().map(|&(i, p)| (i + at, p)));
        self.last_node = other.last_node.or(self.last_node);
        append_shrinking(&mut self.spots, other.spots, |s| Record { line: s.line + line_base, ..s });
        append_shrinking(&mut self.links, other.links, |mut l| {
            l.end += shift;
            for a in l.extra.iter_mut().flat_map(|x| x.attachments.iter_mut()) {
                a.line += line_base;
            }
            l
        });
    }

    fn end_of_entries(&self) -> usize {
        self.links.last().map_or(0, |l| l.end as usize)
    }

    pub fn line(&self, i: usize) -> u64 {
        self.spots[i].line
    }

    /// Its place in the history, as the adapter gave it.
    pub fn unit(&self, i: usize) -> Unit {
        let l = &self.links[i];
        let rare = || l.extra.as_ref().and_then(|x| x.rare());
        let keep_from = || rare().and_then(|x| x.keep_from);
        match (l.kind, l.id) {
            (Kind::Node, Some(id)) => Unit::Node {
                id,
                parent: self.parent(i),
                sidechain: l.sidechain,
                group: l.group,
                keep_from: keep_from(),
            },
            (Kind::Keyed, Some(id)) => Unit::Keyed(id),
            (Kind::RewindTo, Some(id)) => Unit::RewindTo(id),
            (Kind::Hidden, _) => Unit::Hidden,
            (Kind::Reset, _) => Unit::Reset,
            (Kind::Replace, _) => Unit::Replace,
            (Kind::ResetKeeping, _) => Unit::ResetKeeping(rare().map_or(0, |x| x.keep)),
            (Kind::DropTurns, _) => Unit::DropTurns(rare().map_or(0, |x| x.keep)),
            (Kind::Request, _) => Unit::Request,
            // `push` gives every node, keyed record and rewind its id.
            (Kind::Plain | Kind::Node | Kind::Keyed | Kind::RewindTo, _) => Unit::Plain,
        }
    }

    /// A node's parent.
    fn parent(&self, i: usize) -> Option<Id> {
        match self.links[i].parent {
            Parent::None => None,
            Parent::Previous => (0..i).rev().find_map(|j| self.node_id(j)),
            Parent::Listed => {
                let k = self.parents.partition_point(|&(j, _)| (j as usize) < i);
                self.parents.get(k).filter(|&&(j, _)| j as usize == i).map(|&(_, p)| p)
            }
        }
    }

    pub fn is_node(&self, i: usize) -> bool {
        self.links[i].kind == Kind::Node
    }

    pub fn is_hidden(&self, i: usize) -> bool {
        self.links[i].kind == Kind::Hidden
    }

    /// A node's id (`None` for other records).
    pub fn node_id(&self, i: usize) -> Option<Id> {
        self.links[i].id.filter(|_| self.is_node(i))
    }

    pub fn extra(&self, i: usize) -> Option<&Extra> {
        self.links[i].extra.as_deref()
    }

    /// Takes a record's rare parts out (what the history keeps of them moves there).
    pub fn take_extra(&mut self, i: usize) -> Option<Box<Extra>> {
        self.links[i].extra.take()
    }

    /// Its entries, in the file's entry vector.
    pub fn entries(&self, i: usize) -> Range<usize> {
        let start = i.checked_sub(1).map_or(0, |p| self.links[p].end as usize);
        start..self.links[i].end as usize
    }

    /// Every record's attachments, in file order.
    pub fn attachments_mut(&mut self) -> impl Iterator<Item = &mut Attachment> {
        self.links.iter_mut().flat_map(|l| l.extra.iter_mut().flat_map(|x| x.attachments.iter_mut()))
    }

    /// The places of the records at `order` (indices into these records), in
    /// that order. A history in file order keeps the vector, pruned in place.
    pub fn into_spots(self, order: &[Slot]) -> Vec<Record> {
        let Records { spots, links, .. } = self;
        drop(links);
        let whole = order.iter().all(|s| s.part.is_none());
        if !whole || !order.windows(2).all(|w| w[0].record < w[1].record) {
            return order.iter().map(|s| Record { part: s.part, ..spots[s.record] }).collect();
        }
        let mut keep = vec![false; spots.len()];
        for s in order {
            keep[s.record] = true;
        }
        super::retain_marked(spots, &keep)
    }
}

/// Bytes past which glibc's malloc always maps a block of its own (its
/// largest dynamic mmap threshold): such a block grows by remapping its pages
/// and its pages go back to the system when it shrinks or is freed.
const MAPPED: usize = 32 << 20;

/// An empty vector with room for `MAPPED` bytes of items (address space,
/// not memory: a page is resident only once written). A vector that grows
/// from small through the sizes below the threshold is copied at each step in
/// the heap, and every copy it leaves behind stays resident: a worker's three
/// vectors of a million lines left as much again behind as they held.
pub fn mapped<T>() -> Vec<T> {
    Vec::with_capacity(MAPPED / std::mem::size_of::<T>().max(1))
}

/// Appends `src`, each item through `f`, without the two held whole at once:
/// `src` is turned around and taken from its end in slices of a sixteenth,
/// shrinking as it goes, so the pages it gives back are those `dst` takes.
/// (Appending a worker's records whole held the second half of the file's
/// records twice.)
pub fn append_shrinking<T>(dst: &mut Vec<T>, mut src: Vec<T>, mut f: impl FnMut(T) -> T) {
    dst.reserve_exact(src.len());
    src.reverse();
    let step = (src.len() / 16).max(4096);
    while !src.is_empty() {
        let from = src.len().saturating_sub(step);
        dst.extend(src.drain(from..).rev().map(&mut f));
        src.shrink_to_fit();
    }
}

/// The last node of each id, for walking a tree from its leaf: an
/// open-addressing table of record indices (4 bytes a slot, at most 80 % full),
/// keyed by the ids the records hold, so a node costs 5 bytes here rather than
/// the 35 of a hash map holding id and index.
pub struct ById {
    slots: Vec<u32>,
}

const EMPTY: u32 = u32::MAX;

impl ById {
    pub fn new(records: &Records) -> ById {
        let nodes = (0..records.len()).filter(|&i| records.is_node(i)).count();
        let mut t = ById { slots: vec![EMPTY; nodes + nodes / 4 + 1] };
        for i in 0..records.len() {
            let Some(id) = records.node_id(i) else { continue };
            let mut s = t.home(id);
            loop {
                let at = t.slots[s];
                if at == EMPTY || records.node_id(at as usize) == Some(id) {
                    // A later node with the same id replaces the earlier one.
                    t.slots[s] = u32::try_from(i).expect("fewer than 2^32 records in memory");
                    break;
                }
                s = (s + 1) % t.slots.len();
            }
        }
        t
    }

    /// The slot an id's probe starts at (ids are already hashes).
    #[allow(clippy::cast_possible_truncation, reason = "the high half of id × len is below len")]
    fn home(&self, id: Id) -> usize {
        ((u128::from(id.0.get()) * self.slots.len() as u128) >> 64) as usize
    }

    /// The index of the last node with this id.
    pub fn get(&self, id: Id, records: &Records) -> Option<usize> {
        let mut s = self.home(id);
        loop {
            let at = self.slots[s];
            if at == EMPTY {
                return None;
            }
            if records.node_id(at as usize) == Some(id) {
                return Some(at as usize);
            }
            s = (s + 1) % self.slots.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(line: u64, id: &str, parent: Option<&str>, entries: Range<usize>) -> LineRecord {
        let unit = Unit::Node {
            id: Id::of(id),
            parent: parent.map(Id::of),
            sidechain: false,
            group: line.is_multiple_of(2).then(|| Id::of("g")),
            keep_from: (id == "compact").then(|| Id::of("b")),
        };
        LineRecord { line, offset: line * 10, len: 9, unit, entries, extra: None }
    }

    fn plain(line: u64, unit: Unit, entries: Range<usize>) -> LineRecord {
        LineRecord { line, offset: line * 10, len: 9, unit, entries, extra: None }
    }

    /// Every unit as it was pushed, in order.
    fn units(r: &Records) -> Vec<(u64, Unit, Range<usize>)> {
        (0..r.len()).map(|i| (r.line(i), r.unit(i), r.entries(i))).collect()
    }

    fn expected(lines: &[LineRecord]) -> Vec<(u64, Unit, Range<usize>)> {
        lines.iter().map(|l| (l.line, l.unit.clone(), l.entries.clone())).collect()
    }

    fn lines() -> Vec<LineRecord> {
        vec![
            node(1, "a", None, 0..1),
            node(2, "b", Some("a"), 1..3),
            plain(3, Unit::Hidden, 3..3),
            node(4, "c", Some("b"), 3..4),
            // A branch: its parent is not the node before it.
            node(5, "d", Some("b"), 4..5),
            node(6, "compact", Some("d"), 5..6),
            node(7, "e", Some("e"), 6..6),
            plain(8, Unit::Keyed(Id::of("k")), 6..7),
            plain(9, Unit::RewindTo(Id::of("k")), 7..7),
            plain(10, Unit::ResetKeeping(3), 7..8),
            plain(11, Unit::Request, 8..9),
            node(12, "f", Some("e"), 9..10),
        ]
    }

    #[test]
    fn every_unit_comes_back_as_it_was_pushed() {
        let mut r = Records::default();
        for l in lines() {
            r.push(l);
        }
        assert_eq!(units(&r), expected(&lines()));
        assert_eq!(r.parents.len(), 2, "only the parents that are not the node before are listed: {:?}", r.parents);
    }

    #[test]
    fn merged_chunks_and_a_record_put_first_keep_every_unit() {
        let all = lines();
        let (mut first, mut second) = (Records::default(), Records::default());
        all.into_iter().enumerate().for_each(|(i, mut l)| {
            if i < 5 {
                first.push(l);
            } else {
                // As a later worker reads it: lines and entries counted from its own start.
                l.line -= 5;
                l.entries = l.entries.start - 5..l.entries.end - 5;
                second.push(l);
            }
        });
        first.append_shifted(second, 5, 5);
        first.insert_first(plain(0, Unit::Hidden, 0..0));
        let mut want = vec![(0, Unit::Hidden, 0..0)];
        want.extend(expected(&lines()));
        assert_eq!(units(&first), want);
    }

    #[test]
    fn the_id_index_finds_the_last_node_of_each_id() {
        let mut r = Records::default();
        for (i, id) in ["a", "b", "a", "c"].into_iter().enumerate() {
            r.push(node(i as u64 + 1, id, None, 0..0));
        }
        r.push(plain(5, Unit::Keyed(Id::of("c")), 0..0));
        let by_id = ById::new(&r);
        assert_eq!(by_id.get(Id::of("a"), &r), Some(2));
        assert_eq!(by_id.get(Id::of("b"), &r), Some(1));
        assert_eq!(by_id.get(Id::of("c"), &r), Some(3), "a keyed record is not a node");
        assert_eq!(by_id.get(Id::of("z"), &r), None);
        assert_eq!(ById::new(&Records::default()).get(Id::of("a"), &Records::default()), None);
    }
}
