//! From per-line records to the session the provider sees: which lines are
//! still in the history (tree paths, last-copy-wins records, rewinds,
//! compactions, logged requests), in what order, and which call each tool
//! result answers. Works on small owned records, after the bytes are gone.

use std::collections::HashMap;

use crate::model::{Attachment, Entry, Reasoning, ReasoningKind, Ref, ToolCall};

use super::{RawCall, RawEntry, Unit};

/// One line after its media were decoded and judged; media bytes are dropped.
#[derive(Debug, Default)]
pub struct LineRecord {
    pub line: u64,
    pub unit: Unit,
    pub entries: Vec<RawEntry>,
    /// `entry` indexes [`LineRecord::entries`]; `line` is the payload's own line.
    pub attachments: Vec<Attachment>,
    pub calls: Vec<RawCall>,
    pub reasoning: Vec<(ReasoningKind, Option<String>)>,
    pub context_model: Option<String>,
    pub context_provider: Option<String>,
}

impl LineRecord {
    /// Does this record matter to the history at all?
    pub fn is_empty(&self) -> bool {
        matches!(self.unit, Unit::Plain | Unit::Hidden)
            && self.entries.is_empty()
            && self.attachments.is_empty()
            && self.calls.is_empty()
            && self.context_model.is_none()
            && self.context_provider.is_none()
    }
}

/// The provider-visible part of a session.
#[derive(Debug, Default)]
pub struct History {
    pub entries: Vec<Entry>,
    pub attachments: Vec<Attachment>,
    pub tool_calls: Vec<ToolCall>,
    pub reasoning: Vec<Reasoning>,
    /// The provider named by the session's own metadata or entries.
    pub provider: Option<String>,
}

/// Gives every attachment its ref: `L<line>.<n>`, numbered per line in document
/// order, over every attachment (visible or not) so refs never shift.
pub fn assign_refs(records: &mut [LineRecord]) {
    for r in records {
        let mut counter: HashMap<u64, u32> = HashMap::new();
        for a in &mut r.attachments {
            let n = counter.entry(a.line).or_insert(0);
            *n += 1;
            a.reference = Ref::format(a.line, *n);
        }
    }
}

/// Builds the history from records in file order.
pub fn assemble(records: Vec<LineRecord>) -> History {
    let order = visible(&records);
    // Context (model/provider in force) follows file order, not history order.
    let mut ctx = Vec::with_capacity(records.len());
    let (mut model, mut provider) = (None::<String>, None::<String>);
    for r in &records {
        if r.context_model.is_some() {
            model.clone_from(&r.context_model);
        }
        if r.context_provider.is_some() {
            provider.clone_from(&r.context_provider);
        }
        ctx.push((model.clone(), provider.clone()));
    }
    let calls: HashMap<&str, &RawCall> =
        records.iter().flat_map(|r| r.calls.iter()).map(|c| (c.call_id.as_str(), c)).collect();

    let mut h = History::default();
    for &i in &order {
        let r = &records[i];
        let base = h.entries.len();
        for e in &r.entries {
            h.entries.push(Entry {
                line: r.line,
                role: e.role,
                model: e.model.clone().or_else(|| ctx[i].0.clone()),
                provider: e.provider.clone().or_else(|| ctx[i].1.clone()),
                accepted: e.accepted,
                error: e.error.clone(),
            });
        }
        for a in &r.attachments {
            let mut a = a.clone();
            a.entry += base;
            if let Some(call) = a.call_id.as_deref().and_then(|id| calls.get(id)) {
                if a.tool.is_none() {
                    a.tool.clone_from(&call.name);
                }
                if a.name.is_none() {
                    a.name.clone_from(&call.path);
                }
            }
            h.attachments.push(a);
        }
        for (kind, id) in &r.reasoning {
            h.reasoning.push(Reasoning { line: r.line, kind: *kind, id: id.clone() });
        }
        if h.provider.is_none() {
            h.provider = r.entries.iter().find_map(|e| e.provider.clone()).or_else(|| ctx[i].1.clone());
        }
    }
    h.tool_calls = records
        .iter()
        .flat_map(|r| {
            r.calls.iter().map(|c| ToolCall {
                line: r.line,
                call_id: c.call_id.clone(),
                name: c.name.clone(),
                path: c.path.clone(),
            })
        })
        .collect();
    h
}

/// Indices of the records the provider still sees, in history order.
fn visible(records: &[LineRecord]) -> Vec<usize> {
    if records.iter().any(|r| matches!(r.unit, Unit::Node { .. })) {
        return tree_path(records);
    }
    let mut list: Vec<Option<usize>> = Vec::new();
    let mut keyed: HashMap<&str, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        match &r.unit {
            Unit::Hidden | Unit::Node { .. } => {}
            Unit::Plain => list.push(Some(i)),
            Unit::Keyed(id) => match keyed.get(id.as_str()) {
                Some(&pos) => list[pos] = Some(i),
                None => {
                    keyed.insert(id, list.len());
                    list.push(Some(i));
                }
            },
            Unit::RewindTo(id) => {
                if let Some(&pos) = keyed.get(id.as_str()) {
                    list.truncate(pos);
                    keyed.retain(|_, p| *p < pos);
                }
            }
            Unit::Reset | Unit::Request => {
                list.clear();
                keyed.clear();
                list.push(Some(i));
            }
        }
    }
    list.into_iter().flatten().collect()
}

/// The path from the last node (not on a side branch) back to its root,
/// with compactions applied.
fn tree_path(records: &[LineRecord]) -> Vec<usize> {
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    let mut previous: HashMap<usize, usize> = HashMap::new();
    let mut leaf = None;
    let mut last_any = None;
    for (i, r) in records.iter().enumerate() {
        if let Unit::Node { id, sidechain, .. } = &r.unit {
            by_id.insert(id, i);
            if let Some(p) = last_any {
                previous.insert(i, p);
            }
            last_any = Some(i);
            if !sidechain {
                leaf = Some(i);
            }
        }
    }
    let mut path = Vec::new();
    let mut cur = leaf.or(last_any);
    while let Some(i) = cur {
        if path.len() > records.len() {
            break; // a parent cycle in a damaged file
        }
        path.push(i);
        cur = match &records[i].unit {
            // A parent that is nowhere in the file was on a damaged line: bridge
            // the gap to the node written just before, so the rest is still read.
            Unit::Node { parent: Some(p), .. } => by_id.get(p.as_str()).copied().or_else(|| previous.get(&i).copied()),
            _ => None,
        };
    }
    path.reverse();
    // The latest compaction on the path replaces what came before its kept range.
    let compaction = path.iter().rposition(|&i| matches!(&records[i].unit, Unit::Node { keep_from: Some(_), .. }));
    if let Some(c) = compaction {
        let Unit::Node { keep_from: Some(k), .. } = &records[path[c]].unit else {
            return path;
        };
        let kept_start =
            path[..c].iter().position(|&i| matches!(&records[i].unit, Unit::Node { id, .. } if id == k)).unwrap_or(c);
        let mut out = vec![path[c]];
        out.extend_from_slice(&path[kept_start..c]);
        out.extend_from_slice(&path[c + 1..]);
        return out;
    }
    path
}
