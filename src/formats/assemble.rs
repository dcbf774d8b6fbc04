//! From per-line records to the session the provider sees: which lines are
//! still in the history (tree paths, last-copy-wins records, rewinds,
//! compactions, logged requests), in what order, and which call each tool
//! result answers. Works on small owned records, after the bytes are gone.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use crate::model::{
    Attachment, Entry, Finding, MediaKind, Reasoning, Record, Ref, Role, Severity, Span, ToolCall, ToolResult,
};

use super::{Id, RawCall, RawReasoning, RawResult, Unit};

mod records;

use records::ById;
pub use records::{Records, append_shrinking, mapped};

/// One line after its media were decoded and judged; media bytes are dropped.
/// Most lines of a long session are plain text, so all but the entries and
/// the line's place in the history live behind one optional box. Its entries
/// sit in one vector for the whole file (a range of it here): a line's own
/// vector would cost an allocation per line, and the history keeps that one
/// vector, pruned in place, instead of a copy. Kept packed in [`Records`].
#[derive(Debug, Default)]
pub struct LineRecord {
    pub line: u64,
    /// Where the record's text sits in the file: a line, or the whole document.
    pub offset: u64,
    pub len: u64,
    pub unit: Unit,
    /// Its entries, in the file's entry vector.
    pub entries: Range<usize>,
    pub extra: Option<Box<Extra>>,
}

/// The rarer parts of a line: kept for every line with a tool call or result,
/// so 88 bytes, each part as long as it is (a vector's room for four would
/// cost a line of one call 320 bytes), the rarest behind one more box.
#[derive(Debug, Default)]
pub struct Extra {
    /// `entry` counts from the line's first entry; `line` is the payload's own line.
    pub attachments: Box<[Attachment]>,
    pub calls: Box<[RawCall]>,
    pub results: Box<[RawResult]>,
    /// When the line was written (kept only for lines with tool calls or results).
    pub at: Option<Box<str>>,
    pub reasoning: Box<[RawReasoning]>,
    pub rare: Option<Box<Rare>>,
}

/// What a few lines of a session carry.
#[derive(Debug, Default)]
pub struct Rare {
    /// The model and provider in force from this line on (Codex `turn_context`, pi `model_change`).
    pub context_model: Option<Arc<str>>,
    pub context_provider: Option<Arc<str>>,
    /// A compacting node's [`Unit::Node`] `keep_from` (kept here by [`Records`]).
    pub keep_from: Option<Id>,
    /// A [`Unit::ResetKeeping`]'s index or a [`Unit::DropTurns`]' count (kept here by [`Records`]).
    pub keep: u64,
    /// [`super::LineOut::turn`].
    pub turn: bool,
    /// [`super::LineOut::keys`]: each message's id and its first entry, counted
    /// from the line's first.
    pub keys: Box<[(Id, u32)]>,
}

impl Extra {
    pub fn rare(&self) -> Option<&Rare> {
        self.rare.as_deref()
    }

    /// What the `len` entries from the line's `start`-th hold, counted from
    /// the first of them (one message of a line holding many, [`Slot::part`]).
    fn of_entries(&self, start: usize, len: usize) -> Extra {
        let mine = |e: usize| (start..start + len).contains(&e);
        Extra {
            attachments: (self.attachments.iter().filter(|a| mine(a.entry)))
                .map(|a| Attachment { entry: a.entry - start, ..a.clone() })
                .collect(),
            calls: (self.calls.iter().filter(|c| mine(c.entry)))
                .map(|c| RawCall { entry: c.entry - start, ..c.clone() })
                .collect(),
            results: (self.results.iter().filter(|r| mine(r.entry)))
                .map(|r| RawResult { entry: r.entry - start, ..r.clone() })
                .collect(),
            at: self.at.clone(),
            reasoning: (self.reasoning.iter().filter(|r| mine(r.entry))).cloned().collect(),
            rare: None,
        }
    }
}

impl LineRecord {
    /// Does this record matter to the history at all?
    pub fn is_empty(&self) -> bool {
        matches!(self.unit, Unit::Plain | Unit::Hidden) && self.entries.is_empty() && self.extra.is_none()
    }

    pub fn attachments_mut(&mut self) -> &mut [Attachment] {
        self.extra.as_mut().map_or(&mut [], |e| &mut e.attachments)
    }
}

/// The provider-visible part of a session.
#[derive(Debug, Default)]
pub struct Assembled {
    pub entries: Vec<Entry>,
    pub attachments: Vec<Attachment>,
    pub tool_calls: Vec<ToolCall>,
    pub tool_results: Vec<ToolResult>,
    pub reasoning: Vec<Reasoning>,
    /// The records the provider sees, in history order, with where each sits.
    pub records: Vec<Record>,
    /// The provider the session's latest entries name (metadata or the entries themselves),
    /// or a model change after them (pi's `/model`) names.
    pub provider: Option<String>,
    /// The model a change after the latest entries names: the next request goes to it.
    pub model: Option<String>,
    /// What assembling found wrong with the links between lines (parent cycles, missing parents).
    pub findings: Vec<Finding>,
}

/// Gives every attachment its ref: `L<line>.<n>`, numbered per line in document
/// order, over every attachment (visible or not) so refs never shift. The count
/// runs across records: the records of a one-document session (Cline, an
/// opencode export) share their line, and each attachment needs its own ref.
pub fn assign_refs(records: &mut Records) {
    let mut counter: HashMap<u64, u32> = HashMap::new();
    for a in records.attachments_mut() {
        let n = counter.entry(a.line).or_insert(0);
        *n += 1;
        a.reference = Ref::format(a.line, *n);
    }
}

/// Builds the history from records in file order and the file's entries
/// (which [`LineRecord::entries`] index), consuming them.
pub fn assemble(mut records: Records, entries: Vec<Entry>, links: Links) -> Assembled {
    let mut h = Assembled::default();
    let order = visible(&records, &entries, links, &mut h.findings);
    let ctx = Context::new(&records, &order);
    h.entries = visible_entries(&records, &order, entries);
    let calls = media_calls(&records);
    // Sized once: grown by doubling, each copy left behind stays resident.
    let (n_calls, n_results) = order
        .iter()
        .filter_map(|s| records.extra(s.record))
        .fold((0, 0), |(c, r), x| (c + x.calls.len(), r + x.results.len()));
    h.tool_calls.reserve_exact(n_calls);
    h.tool_results.reserve_exact(n_results);

    let mut attachments = Vec::new();
    let mut base = 0;
    for &slot in &order {
        let i = slot.record;
        let line = records.line(i);
        let (model, provider) = ctx.at(i);
        let first = base;
        let own = slot_entries(&records, slot);
        base += own.len();
        for e in &mut h.entries[first..base] {
            if e.model.is_none() {
                e.model.clone_from(&model);
            }
            if e.provider.is_none() {
                e.provider.clone_from(&provider);
            }
        }
        // Taken, not borrowed: a line's rare parts are freed as they move into
        // the history. A part of a line takes a copy of what its entries hold.
        let x = match slot.part {
            None => records.take_extra(i),
            Some(_) => {
                records.extra(i).map(|x| Box::new(x.of_entries(own.start - records.entries(i).start, own.len())))
            }
        };
        let Some(x) = x else { continue };
        let Extra { calls: line_calls, results, attachments: line_attachments, reasoning, at, .. } = *x;
        // The last call or result of the line takes its time; the others a copy.
        let mut dated = line_calls.len() + results.len();
        let mut at = at.map(String::from);
        let mut at_of = || {
            dated -= 1;
            if dated == 0 { at.take() } else { at.clone() }
        };
        // On the line of their entry (a document's messages each have their own).
        let line_of = |entries: &[Entry], e: usize| entries.get(first + e).map_or(line, |e| e.line);
        for c in line_calls {
            let (call_id, name, path) = (c.call_id, c.name, c.path);
            let line = line_of(&h.entries, c.entry);
            h.tool_calls.push(ToolCall { line, call_id, name, path, entry: first + c.entry, at: at_of() });
        }
        for t in results {
            let line = line_of(&h.entries, t.entry);
            h.tool_results.push(ToolResult { line, call_id: t.call_id, entry: first + t.entry, at: at_of() });
        }
        for mut a in line_attachments {
            a.entry += first;
            if let Some((tool, path)) = a.call_id.as_deref().and_then(|id| calls.get(id)) {
                if a.tool.is_none() {
                    a.tool.clone_from(tool);
                }
                if a.name.is_none() {
                    a.name.clone_from(path);
                }
            }
            attachments.push(a);
        }
        for r in reasoning {
            h.reasoning.push(Reasoning { line, kind: r.kind, id: r.id, pointer: r.pointer, id_at: r.id_at });
        }
    }
    h.attachments = attachments;
    mirrors_on_other_lines(&records, &mut h.attachments);
    assets_on_other_lines(&records, &mut h.attachments);
    mark_healed(&h.entries, &mut h.attachments);
    // The provider in use now: the one the latest entry that names one went to,
    // unless a model change comes after that entry (its own context, not an entry).
    h.provider = h.entries.iter().rev().find_map(|e| e.provider.as_deref().map(str::to_string));
    let named_last = order.iter().rev().find(|s| {
        let own = slot_entries(&records, **s);
        h.entries
            .get(own.start..own.end.min(h.entries.len()))
            .is_some_and(|es| es.iter().any(|e| e.error.is_none() && (e.provider.is_some() || e.model.is_some())))
    });
    if let Some(&(i, (ref model, ref provider))) = ctx.changes.last()
        && named_last.is_none_or(|s| s.record < i)
        // On the path the provider sees, where the file is a tree (a change on an
        // abandoned branch is not in force).
        && (!records.is_node(i) || order.iter().any(|s| s.record == i))
    {
        h.model = model.as_deref().map(str::to_string);
        if provider.is_some() {
            h.provider = provider.as_deref().map(str::to_string);
        }
    }
    h.records = records.into_spots(&order);
    h
}

/// The tool and path argument of each call that an attachment names (a tool
/// result's media): every call of the file, visible or not, the last of an id
/// winning. Only those calls: a copy of every call's strings cost a session of
/// tool calls as much again as its calls.
fn media_calls(records: &Records) -> HashMap<String, (Option<String>, Option<String>)> {
    let extras = || (0..records.len()).filter_map(|i| records.extra(i));
    let named: HashSet<&str> = extras().flat_map(|x| &x.attachments).filter_map(|a| a.call_id.as_deref()).collect();
    if named.is_empty() {
        return HashMap::new();
    }
    extras()
        .flat_map(|x| &x.calls)
        .filter(|c| named.contains(c.call_id.as_str()))
        .map(|c| (c.call_id.clone(), (c.name.clone(), c.path.clone())))
        .collect()
}

/// The entries of the records in `order`, in that order. The usual history
/// keeps its records in file order (a path through a tree, or a list with some
/// lines dropped), so the file's vector is pruned in place; only a history that
/// moves lines earlier (a compaction keeping older entries) takes a copy.
fn visible_entries(records: &Records, order: &[Slot], entries: Vec<Entry>) -> Vec<Entry> {
    let ranges = || order.iter().map(|&s| slot_entries(records, s)).filter(|r| !r.is_empty());
    let mut last = 0;
    let in_file_order = ranges().all(|r| {
        let ok = r.start >= last;
        last = r.end;
        ok
    });
    if !in_file_order {
        return ranges().flat_map(|r| entries[r].to_vec()).collect();
    }
    let mut keep = vec![false; entries.len()];
    for r in ranges() {
        keep[r].fill(true);
    }
    retain_marked(entries, &keep)
}

/// `items` without those `keep` does not mark, in place, its room given back:
/// the history pruned without a second copy of it.
fn retain_marked<T>(mut items: Vec<T>, keep: &[bool]) -> Vec<T> {
    let mut k = 0;
    items.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    items.shrink_to_fit();
    items
}

/// Media on lines the provider never sees (Codex's `event_msg.user_message`
/// `images`) or no longer sees (a copy a later one superseded: Gemini CLI's
/// re-written records and older checkpoints, what a compaction replaced, a
/// branch left behind) repeat an attachment of the history: each becomes a
/// mirror of the visible attachment with the same bytes nearest before it
/// (else after it), so it is not counted twice and a rewrite that removes
/// those bytes removes every copy. Called once the history took the rare
/// parts of the records it holds whole, so what is left is out of it.
fn mirrors_on_other_lines(records: &Records, visible: &mut [Attachment]) {
    let seen: HashSet<u64> = visible.iter().filter_map(|a| a.span.map(|s| s.offset)).collect();
    for i in 0..records.len() {
        for m in records.extra(i).into_iter().flat_map(|x| &x.attachments) {
            let (Some(sha), Some(span)) = (&m.sha256, m.span) else { continue };
            // A message of a line seen in parts is the history's own.
            if seen.contains(&span.offset) {
                continue;
            }
            let i = visible
                .iter()
                .rposition(|a| a.sha256.as_ref() == Some(sha) && a.line <= m.line)
                .or_else(|| visible.iter().position(|a| a.sha256.as_ref() == Some(sha)));
            if let Some(i) = i {
                visible[i].mirrors.push(Span { line: m.line, ..span });
            }
        }
    }
}

/// A visible attachment that names its bytes by their hash (`sha256:<hex>`,
/// Copilot CLI's `assetId`) while a line the provider never sees holds them
/// (its `session.binary_asset`): the attachment is those bytes, as judged
/// there. Without such a line it stays a reference nothing can fetch.
fn assets_on_other_lines(records: &Records, visible: &mut [Attachment]) {
    let hidden: Vec<&Attachment> = (0..records.len())
        .filter(|&i| records.is_hidden(i))
        .flat_map(|i| records.extra(i).into_iter().flat_map(|x| &x.attachments))
        .filter(|a| a.sha256.is_some())
        .collect();
    if hidden.is_empty() {
        return;
    }
    for a in visible.iter_mut() {
        let Some(hex) = a.url.as_deref().and_then(|u| u.strip_prefix("sha256:")) else { continue };
        let Some(held) = hidden.iter().find(|h| h.sha256.as_deref() == Some(hex)) else { continue };
        a.url = None;
        a.encoding = held.encoding;
        a.sha256.clone_from(&held.sha256);
        a.bytes = held.bytes;
        a.mime_detected.clone_from(&held.mime_detected);
        (a.width, a.height, a.pages) = (held.width, held.height, held.pages);
        a.verdict = held.verdict;
        a.problems.clone_from(&held.problems);
        a.facts.clone_from(&held.facts);
        a.source_problems.clone_from(&held.source_problems);
        // Where the bytes sit, for a resize or a preview; not a copy (a mirror)
        // but the very bytes that are sent.
        a.span = held.span.map(|span| Span { line: held.line, ..span });
    }
}

/// An agent's own heal ([`Entry::heals`]): the media of that kind in the
/// nearest earlier user entry carrying any are no longer sent. Walks back over
/// entries that carry none, as Claude Code does.
fn mark_healed(entries: &[Entry], attachments: &mut [Attachment]) {
    for (k, e) in entries.iter().enumerate() {
        let Some(kind) = e.heals else { continue };
        let of_kind = |a: &Attachment| match kind {
            MediaKind::Image => a.is_image(),
            MediaKind::Document => !a.is_image(),
        };
        let carrier = (0..k).rev().find(|&j| {
            entries[j].role != Role::Assistant && attachments.iter().any(|a| a.entry == j && !a.healed && of_kind(a))
        });
        if let Some(j) = carrier {
            attachments.iter_mut().filter(|a| a.entry == j && of_kind(a)).for_each(|a| a.healed = true);
        }
    }
}

/// The model and provider in force at each record: set by the records that name
/// them (Codex `turn_context`, pi `model_change` and assistant messages), in file
/// order, not history order; where the file is a tree, by the records of the path
/// the provider sees only (pi resumes on the last of them on its branch, not on
/// an abandoned branch's). Kept as the few points where they change, not one copy per record.
struct Context {
    /// (record index, model, provider) from that record on, by record index.
    changes: Vec<(usize, Names)>,
}

/// A model and a provider name, either possibly unknown.
type Names = (Option<Arc<str>>, Option<Arc<str>>);

impl Context {
    fn new(records: &Records, order: &[Slot]) -> Context {
        let mut changes = Vec::new();
        let (mut model, mut provider) = (None::<Arc<str>>, None::<Arc<str>>);
        let tree = (0..records.len()).any(|i| records.is_node(i));
        let path = || order.iter().map(|s| s.record);
        // A path that starts after the file does (a compaction replaced what
        // came before) takes, as its start, the model and provider in force in
        // the file before it: a compaction names none (Qwen Code's).
        let start = if tree { path().min().unwrap_or(0) } else { 0 };
        let before = (0..start).filter(|&i| records.is_node(i));
        let sources: Box<dyn Iterator<Item = usize>> =
            if tree { Box::new(before.chain(path())) } else { Box::new(0..records.len()) };
        for i in sources {
            let Some(x) = records.extra(i).and_then(Extra::rare) else { continue };
            if x.context_model.is_none() && x.context_provider.is_none() {
                continue;
            }
            if x.context_model.is_some() {
                model.clone_from(&x.context_model);
            }
            if x.context_provider.is_some() {
                provider.clone_from(&x.context_provider);
            }
            changes.push((i, (model.clone(), provider.clone())));
        }
        // A path is in file order unless a file was reordered by hand: `at` needs it sorted.
        if !changes.is_sorted_by_key(|c| c.0) {
            changes.sort_by_key(|c| c.0);
        }
        Context { changes }
    }

    /// What is in force at record `i` (set at or before it).
    fn at(&self, i: usize) -> Names {
        let n = self.changes.partition_point(|c| c.0 <= i);
        n.checked_sub(1).map_or((None, None), |k| self.changes[k].1.clone())
    }
}

/// How the agent walks parent links it finds broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Past a parent missing from the file, read on in file order.
    Bridged,
    /// Stop at a parent missing from the file, as this agent does (pi,
    /// [`super::Behaviour::stops_at_missing_parent`]): what came before is not sent.
    StopAtMissing(&'static str),
}

/// A record the provider sees, or one message of a line holding a whole
/// history ([`Rare::keys`]) that later records took apart: replaced a message
/// of it, or rewound into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub record: usize,
    /// The message of the line ([`crate::model::Record::part`]); `None`: all of it.
    pub part: Option<u32>,
}

impl Slot {
    fn whole(record: usize) -> Slot {
        Slot { record, part: None }
    }
}

/// The keyed messages of record `i` ([`Rare::keys`]).
fn keys(records: &Records, i: usize) -> &[(Id, u32)] {
    records.extra(i).and_then(Extra::rare).map_or(&[], |x| &x.keys)
}

/// The entries of a slot, in the file's entry vector.
fn slot_entries(records: &Records, slot: Slot) -> Range<usize> {
    let all = records.entries(slot.record);
    let Some(k) = slot.part else { return all };
    let keys = keys(records, slot.record);
    let at = |k: usize| keys.get(k).map_or(all.end, |&(_, e)| (all.start + e as usize).min(all.end));
    at(k as usize)..at(k as usize + 1)
}

/// The records (or parts of them) the provider still sees, in history order.
fn visible(records: &Records, entries: &[Entry], links: Links, findings: &mut Vec<Finding>) -> Vec<Slot> {
    if (0..records.len()).any(|i| records.is_node(i)) {
        return tree_path(records, entries, links, findings).into_iter().map(Slot::whole).collect();
    }
    let mut list = Keyed::default();
    for i in 0..records.len() {
        match records.unit(i) {
            Unit::Hidden | Unit::Node { .. } => {}
            Unit::Plain => list.line(records, i),
            Unit::Keyed(id) => list.put(id, Slot::whole(i)),
            Unit::RewindTo(id) => list.rewind_to(id),
            Unit::DropTurns(n) => list.drop_turns(records, n),
            Unit::ResetKeeping(index) => {
                // Entry `index` is on line `index + 1` when no line is blank or damaged.
                let kept: Vec<Slot> = list.slots.iter().copied().filter(|j| records.line(j.record) > index).collect();
                list = Keyed::default();
                list.slots.push(Slot::whole(i));
                list.slots.extend(kept);
            }
            Unit::Reset | Unit::Request => {
                list = Keyed::default();
                list.line(records, i);
            }
            Unit::Replace => {
                let before = std::mem::take(&mut list);
                list.line(records, i);
                list.before = Some((Box::new(before), list.slots.len()));
            }
        }
    }
    rejoin(records, list.slots)
}

/// A history of records in file order, some keyed by an id.
#[derive(Default)]
struct Keyed {
    slots: Vec<Slot>,
    /// Where each id's slot is.
    at: HashMap<Id, usize>,
    /// The history a [`Unit::Replace`] replaced, and how many slots the
    /// replacement itself holds at the start of this one.
    before: Option<(Box<Keyed>, usize)>,
}

impl Keyed {
    /// The last copy of an id wins, at the place of the first.
    fn put(&mut self, id: Id, slot: Slot) {
        match self.at.get(&id) {
            Some(&pos) => self.slots[pos] = slot,
            None => {
                self.at.insert(id, self.slots.len());
                self.slots.push(slot);
            }
        }
    }

    /// Record `i`: each of its keyed messages as a keyed record, else the line.
    fn line(&mut self, records: &Records, i: usize) {
        let keys = keys(records, i);
        if keys.is_empty() {
            self.slots.push(Slot::whole(i));
        }
        for (k, &(id, _)) in keys.iter().enumerate() {
            self.put(id, Slot { record: i, part: Some(u32::try_from(k).unwrap_or(u32::MAX)) });
        }
    }

    /// Drops the last `n` user turns: from the first line of the `n`-th last
    /// turn on (of the first, with fewer); nothing without a turn.
    /// A rollback past the turns since a [`Unit::Replace`] undoes it first:
    /// the history before it comes back, followed by what came after.
    fn drop_turns(&mut self, records: &Records, n: u64) {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        if n == 0 {
            return;
        }
        while self.turns(records).len() < n {
            let Some((before, own)) = self.before.take() else { break };
            let after: Vec<Slot> = self.slots.drain(own.min(self.slots.len())..).collect();
            *self = *before;
            // What follows a replacing compaction (Codex's items) is keyed by no id.
            self.slots.extend(after);
        }
        let turns = self.turns(records);
        let Some(&first) = turns.first() else { return };
        let cut = if n >= turns.len() { first } else { turns[turns.len() - n] };
        self.slots.truncate(cut);
        self.at.retain(|_, p| *p < cut);
    }

    /// Where the user's turns start ([`super::LineOut::turn`]).
    fn turns(&self, records: &Records) -> Vec<usize> {
        (self.slots.iter().enumerate())
            .filter(|(_, s)| s.part.is_none() && records.extra(s.record).and_then(Extra::rare).is_some_and(|x| x.turn))
            .map(|(k, _)| k)
            .collect()
    }

    /// Drops `id` and what follows it; all of it when `id` is not here.
    fn rewind_to(&mut self, id: Id) {
        let pos = self.at.get(&id).copied().unwrap_or(0);
        self.slots.truncate(pos);
        self.at.retain(|_, p| *p < pos);
    }
}

/// Every part of a line, in order and together, is the line.
fn rejoin(records: &Records, slots: Vec<Slot>) -> Vec<Slot> {
    if slots.iter().all(|s| s.part.is_none()) {
        return slots;
    }
    let mut out = Vec::with_capacity(slots.len());
    let mut k = 0;
    while k < slots.len() {
        let s = slots[k];
        let n = keys(records, s.record).len();
        let run = (0..n).all(|j| {
            slots.get(k + j) == Some(&Slot { record: s.record, part: Some(u32::try_from(j).unwrap_or(u32::MAX)) })
        });
        if s.part == Some(0) && run {
            out.push(Slot::whole(s.record));
            k += n;
        } else {
            out.push(s);
            k += 1;
        }
    }
    out
}

/// The path from the last node (not on a side branch) back to its root,
/// with compactions applied. A damaged link — a parent that is nowhere in the
/// file, or one already on the path (the entry names itself or a descendant: a
/// cycle) — is a finding, and the walk goes on from the node written just
/// before, so what was collected is kept and the rest is read in file order;
/// at a missing parent under [`Links::StopAtMissing`] it ends there, as the agent's does.
fn tree_path(records: &Records, entries: &[Entry], links: Links, findings: &mut Vec<Finding>) -> Vec<usize> {
    let by_id = ById::new(records);
    let mut leaf = None;
    let mut last_any = None;
    for i in 0..records.len() {
        if let Unit::Node { sidechain, .. } = records.unit(i) {
            last_any = Some(i);
            if !sidechain {
                leaf = Some(i);
            }
        }
    }
    let mut on_path = vec![false; records.len()];
    let before = |i: usize, on_path: &[bool]| (0..i).rev().find(|&j| !on_path[j] && records.is_node(j));
    let mut path = Vec::new();
    let mut cur = leaf.or(last_any);
    while let Some(i) = cur {
        path.push(i);
        on_path[i] = true;
        let Unit::Node { parent: Some(p), .. } = records.unit(i) else { break };
        cur = match by_id.get(p, records) {
            Some(j) if !on_path[j] => Some(j),
            Some(j) => {
                let whom = if j == i {
                    "itself".to_string()
                } else {
                    format!("line {}, which descends from it,", records.line(j))
                };
                let message = format!(
                    "names {whom} as its parent (a parent cycle); the entries before it are read in file order"
                );
                findings.push(link_finding(records.line(i), "history.parent_cycle", message));
                before(i, &on_path)
            }
            None => {
                let next = before(i, &on_path);
                // The first entry of a file may continue another one (a resumed or forked session).
                if next.is_some() {
                    let message = match links {
                        Links::Bridged => "names a parent that is not in the file (a damaged or removed line); the entries before it are read in file order".to_string(),
                        Links::StopAtMissing(agent) => format!("names a parent that is not in the file (a damaged or removed line): {agent} stops there, and sends only the entries from this line on, so the model no longer sees the ones before it"),
                    };
                    findings.push(link_finding(records.line(i), "history.parent_missing", message));
                }
                match links {
                    Links::Bridged => next,
                    Links::StopAtMissing(_) => None,
                }
            }
        };
    }
    path.reverse();
    join_parallel_results(records, entries, &mut path, &mut on_path);
    // The latest compaction on the path replaces what came before its kept range.
    let keep_from =
        |i: usize| records.extra(i).and_then(Extra::rare).and_then(|x| x.keep_from).filter(|_| records.is_node(i));
    let compaction = path.iter().rposition(|&i| keep_from(i).is_some());
    if let Some(c) = compaction {
        let Some(k) = keep_from(path[c]) else { return path };
        let kept_start = path[..c].iter().position(|&i| records.node_id(i) == Some(k)).unwrap_or(c);
        let mut out = vec![path[c]];
        // An earlier compaction in the kept range sends nothing: only the
        // latest one's summary is sent (pi 0.73.1, two compactions on the
        // path, the suite's `context_overflow_trimmed`).
        out.extend(path[kept_start..c].iter().copied().filter(|&i| keep_from(i).is_none()));
        out.extend_from_slice(&path[c + 1..]);
        return out;
    }
    path
}

/// Parallel tool calls as Claude Code chains them: one reply split over one
/// line per call, and each result chained to the line of its own call, so the
/// path from the leaf misses some calls and results; the agent sends them all,
/// in file order. A side node joins the path when its parent is on it and it
/// is a line of a reply on the path (same [`Unit::Node`] `group`), or only
/// answers calls of the path that nothing on it answers (so a rewound, re-run
/// call is never answered twice).
fn join_parallel_results(records: &Records, entries: &[Entry], path: &mut Vec<usize>, on_path: &mut [bool]) {
    fn take<'a>(x: Option<&'a Extra>, called: &mut HashSet<&'a str>, answered: &mut HashSet<&'a str>) {
        if let Some(x) = x {
            called.extend(x.calls.iter().map(|c| c.call_id.as_str()));
            answered.extend(x.results.iter().map(|r| r.call_id.as_str()));
        }
    }
    let mut children: HashMap<Id, Vec<usize>> = HashMap::new();
    for (j, _) in on_path.iter().enumerate().filter(|(_, on)| !**on) {
        if let Unit::Node { parent: Some(p), sidechain: false, .. } = records.unit(j) {
            children.entry(p).or_default().push(j);
        }
    }
    if children.is_empty() {
        return;
    }
    let extra = |i: usize| records.extra(i);
    let group = |i: usize| match records.unit(i) {
        Unit::Node { group, .. } => group,
        _ => None,
    };
    let mut groups: HashSet<Id> = path.iter().filter_map(|&i| group(i)).collect();
    let mut called: HashSet<&str> = HashSet::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for &i in path.iter() {
        take(extra(i), &mut called, &mut answered);
    }
    let mut queue: std::collections::VecDeque<usize> = path.iter().copied().collect();
    while let Some(i) = queue.pop_front() {
        let Some(id) = records.node_id(i) else { continue };
        for &j in children.get(&id).map_or(&[][..], Vec::as_slice) {
            if on_path[j] {
                continue;
            }
            let results = extra(j).map_or(&[][..], |x| &x.results[..]);
            let only_results =
                !results.is_empty() && entries[records.entries(j)].iter().all(|e| e.role != Role::Assistant);
            let joins = group(j).is_some_and(|g| groups.contains(&g))
                || (only_results
                    && results
                        .iter()
                        .all(|r| called.contains(r.call_id.as_str()) && !answered.contains(r.call_id.as_str())));
            if !joins {
                continue;
            }
            // Before the first later node of the path written after it.
            let at = path.iter().position(|&k| k == i).unwrap_or(0);
            let pos = (at + 1..path.len()).find(|&q| path[q] > j).unwrap_or(path.len());
            path.insert(pos, j);
            on_path[j] = true;
            groups.extend(group(j));
            take(extra(j), &mut called, &mut answered);
            queue.push_back(j);
        }
    }
}

fn link_finding(line: u64, code: &'static str, message: String) -> Finding {
    Finding { line, severity: Severity::Warning, message, code: Some(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(line: u64) -> Entry {
        Entry {
            line,
            role: Role::User,
            accepted: false,
            model: None,
            provider: None,
            error: None,
            blocks: 0,
            empty: false,
            heals: None,
        }
    }

    fn record(line: u64, entries: Range<usize>, unit: Unit) -> LineRecord {
        LineRecord { line, offset: 0, len: 0, unit, entries, extra: None }
    }

    fn store(lines: Vec<LineRecord>) -> Records {
        let mut records = Records::default();
        for r in lines {
            records.push(r);
        }
        records
    }

    fn lines(h: &Assembled) -> Vec<u64> {
        h.entries.iter().map(|e| e.line).collect()
    }

    #[test]
    fn a_history_in_file_order_keeps_the_files_entry_vector() {
        let entries: Vec<Entry> = [1, 2, 2, 3].map(entry).into();
        let at = entries.as_ptr();
        let records = vec![record(1, 0..1, Unit::Plain), record(2, 1..3, Unit::Plain), record(3, 3..4, Unit::Plain)];
        let h = assemble(store(records), entries, Links::Bridged);
        assert_eq!(lines(&h), [1, 2, 2, 3]);
        assert_eq!(h.entries.as_ptr(), at, "kept, not copied");
    }

    #[test]
    fn lines_left_out_of_the_history_leave_its_entries() {
        let entries: Vec<Entry> = [1, 2, 4, 4].map(entry).into();
        // Line 2 is rewound away: a keyed record, then a rewind to it.
        let records = vec![
            record(1, 0..1, Unit::Plain),
            record(2, 1..2, Unit::Keyed(Id::of("b"))),
            record(3, 2..2, Unit::RewindTo(Id::of("b"))),
            record(4, 2..4, Unit::Plain),
        ];
        let h = assemble(store(records), entries, Links::Bridged);
        assert_eq!(lines(&h), [1, 4, 4]);
    }

    #[test]
    fn a_compaction_that_keeps_older_entries_puts_them_after_it() {
        let entries: Vec<Entry> = (1..=4).map(entry).collect();
        // pi v1: line 4 compacts, keeping the entries from index 2 (lines 3 on).
        let records = vec![
            record(1, 0..1, Unit::Plain),
            record(2, 1..2, Unit::Plain),
            record(3, 2..3, Unit::Plain),
            record(4, 3..4, Unit::ResetKeeping(2)),
        ];
        let h = assemble(store(records), entries, Links::Bridged);
        assert_eq!(lines(&h), [4, 3]);
    }

    /// A checkpoint on `line` holding one entry per id.
    fn checkpoint(line: u64, entries: Range<usize>, ids: &[&str]) -> LineRecord {
        let keys = ids.iter().enumerate().map(|(k, id)| (Id::of(id), u32::try_from(k).unwrap())).collect();
        let rare = Some(Box::new(Rare { keys, ..Rare::default() }));
        let extra = Some(Box::new(Extra { rare, ..Extra::default() }));
        LineRecord { line, offset: 0, len: 0, unit: Unit::Reset, entries, extra }
    }

    #[test]
    fn a_checkpoints_messages_are_keyed_like_records_of_their_own() {
        // Line 2 checkpoints a, b, c; line 3 re-writes b; line 4 rewinds to c.
        let entries: Vec<Entry> = [1, 2, 2, 2, 3].map(entry).into();
        let records = vec![
            record(1, 0..1, Unit::Plain),
            checkpoint(2, 1..4, &["a", "b", "c"]),
            record(3, 4..5, Unit::Keyed(Id::of("b"))),
            record(4, 5..5, Unit::RewindTo(Id::of("c"))),
        ];
        let h = assemble(store(records), entries, Links::Bridged);
        assert_eq!(lines(&h), [2, 3]);
        let parts: Vec<(u64, Option<u32>)> = h.records.iter().map(|r| (r.line, r.part)).collect();
        assert_eq!(parts, [(2, Some(0)), (3, None)]);
        // Whole and in order, a checkpoint is its line; a rewind to an id it
        // does not hold empties the history.
        let entries: Vec<Entry> = [2, 2, 3].map(entry).into();
        let records = vec![checkpoint(2, 0..2, &["a", "b"]), record(3, 2..3, Unit::Keyed(Id::of("d")))];
        let h = assemble(store(records), entries, Links::Bridged);
        assert_eq!(h.records.iter().map(|r| (r.line, r.part)).collect::<Vec<_>>(), [(2, None), (3, None)]);
        let entries: Vec<Entry> = [2, 2].map(entry).into();
        let records = vec![checkpoint(2, 0..2, &["a", "b"]), record(3, 2..2, Unit::RewindTo(Id::of("x")))];
        assert_eq!(lines(&assemble(store(records), entries, Links::Bridged)), Vec::<u64>::new());
    }
}
