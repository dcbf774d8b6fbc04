//! `preview`: the request body the agent would send once the overlay and the
//! rewrites apply, in the agent's own dialect or converted to another.
//!
//! The records the provider sees are read again from their byte ranges and
//! get the rewrite's edits on every core (`records.rs`); in history order, the
//! agent's adapter renders each as its agent does ([`Render`](crate::request::Render): most through
//! canonical messages, [`canon`]) and it is written out at once ([`mod@write`]).
//! A logged request in its own dialect is printed as logged, edits applied.

mod records;
mod stand_in;

use std::collections::HashMap;
use std::io::Write;

use anyhow::Context as _;

use crate::json::splice;
use crate::model::Session;
use crate::reader::Source;
use crate::rewrite::sparse::{Rewritten, Shape};
use crate::rewrite::{self, Rewrite};

use crate::request::{Dialect, Out, To, canon, write};

/// What a preview wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Previewed {
    pub target: &'static str,
    /// Messages or items in the request.
    pub items: u64,
    pub changes: rewrite::Summary,
    /// What the agent sends besides the history, which its session does not hold
    /// (its system prompt, tool list): named, never silently missing. Empty for
    /// a logged request, shown whole.
    pub not_in_session: &'static [&'static str],
}

/// Writes the request `session` would produce to `out`.
/// `threads` prepare the records (0: one per core). `converted`: `dialect`
/// is not the one the agent speaks, so calls are paired by its rules
/// ([`write::Writer::pair_calls`]).
#[allow(clippy::too_many_arguments)]
#[allow(
    clippy::needless_pass_by_value,
    reason = "fuzz/'s targets hand it an owned rewrite; a reference would change that crate"
)]
pub fn preview(
    source: &Source,
    session: &Session,
    rewrite: Rewrite,
    single_document: bool,
    dialect: Dialect,
    converted: bool,
    threads: usize,
    out: &mut dyn Write,
) -> anyhow::Result<Previewed> {
    build(source, session, &rewrite, single_document, dialect, out, How { only: None, threads, converted })
}

/// One item of the request the agent sends, as [`preview`] writes it, but
/// with every attachment's payload standing for where its bytes are: the one
/// model of that request, which `diagnose` reads a provider's block path
/// against. `None` when the request holds no item `index` or cannot be built.
pub fn item(source: &Source, session: &Session, single_document: bool, dialect: Dialect, index: u64) -> Option<Item> {
    let mut buf = Vec::new();
    let stand_ins = stand_in::StandIns::default();
    let only = Only { index, stand_ins: &stand_ins };
    // Building stops with an error once the item is out.
    let how = How { only: Some(only), threads: 0, converted: false };
    let _ = build(source, session, &Rewrite::default(), single_document, dialect, &mut buf, how);
    let value = serde_json::from_slice(&buf).ok()?;
    Some(Item { value, stand_ins })
}

/// How [`build`] builds: all of the request or one item of it, on how many threads.
struct How<'a> {
    only: Option<Only<'a>>,
    /// Threads preparing the records; 0: one per core.
    threads: usize,
    /// The dialect is not the agent's: calls are paired by the target's rules.
    converted: bool,
}

/// What [`item`] builds the request for.
struct Only<'a> {
    index: u64,
    stand_ins: &'a stand_in::StandIns,
}

/// One item of a request, its attachments standing for their byte ranges.
pub struct Item {
    pub value: serde_json::Value,
    stand_ins: stand_in::StandIns,
}

impl Item {
    /// The file offsets of the payloads at or under `node` (a part of
    /// [`Item::value`]) that stand for themselves, and every other string
    /// there (bytes a one-document session or Copilot CLI's assets carry inline).
    pub fn payloads<'v>(&self, node: &'v serde_json::Value, offsets: &mut Vec<u64>, inline: &mut Vec<&'v str>) {
        match node {
            serde_json::Value::String(s) => match self.stand_ins.offsets_in(s).as_slice() {
                [] => inline.push(s),
                found => offsets.extend_from_slice(found),
            },
            serde_json::Value::Array(a) => a.iter().for_each(|x| self.payloads(x, offsets, inline)),
            serde_json::Value::Object(o) => o.values().for_each(|x| self.payloads(x, offsets, inline)),
            _ => {}
        }
    }
}

fn build(
    source: &Source,
    session: &Session,
    rewrite: &Rewrite,
    single_document: bool,
    dialect: Dialect,
    out: &mut dyn Write,
    how: How<'_>,
) -> anyhow::Result<Previewed> {
    let How { only, threads, converted } = how;
    let format = session.format;
    let name = source.describe();
    let mut file = source.open().with_context(|| format!("opening {name}"))?;
    let own = stand_in::StandIns::default();
    let stand_ins = only.as_ref().map_or(&own, |o| o.stand_ins);
    let edit = Editing { format, rewrite, single_document, spans: item_spans(session, only.is_some()), stand_ins };
    // Stand-ins are filled from the same open file: the request is of the file read.
    let mut filled;
    let out: &mut dyn Write = match only {
        // One item's stand-ins stay in it: they say which attachment is where.
        Some(_) => out,
        None => {
            filled = stand_ins.fill(out, source.open().with_context(|| format!("reading {name}"))?);
            &mut filled
        }
    };
    let mut read_record = |offset: u64, len: u64| -> anyhow::Result<Vec<u8>> {
        file.read_range(offset, len).with_context(|| format!("reading {name}"))
    };
    let adapter = format.adapter();
    // A logged request previewed in its own dialect: the body as logged.
    if format.behaviour().logged && adapter.dialect(session, "") == dialect {
        let items = logged_body(session, &edit, &mut read_record, out, &name)?;
        return Ok(Previewed { target: dialect.name(), items, changes: rewrite.summary.clone(), not_in_session: &[] });
    }
    let model = session.next_model().map(str::to_string);
    // Asked first: an agent whose request is not modelled leaves nothing half written.
    let to = To { session, dialect, provider: session.provider.as_deref(), model: model.as_deref() };
    let mut agent = adapter.request(&to, &mut read_record)?;
    let mut w = match &only {
        Some(o) => write::Writer::item(out, dialect, o.index),
        None => write::Writer::start(out, dialect, model.as_deref())?,
    };
    if converted {
        w.pair_calls();
    }
    agent.begin(&mut w);
    if single_document {
        // A one-document session's edited text, read once.
        let document = match session.records.first() {
            Some(r) => edit.edited(read_record(r.offset, r.len)?, r.offset, 1),
            None => None,
        };
        if let Some(text) = &document {
            render_document(text, format, agent.as_mut(), &mut w)?;
        }
    } else {
        render_lines(session, &edit, &file, &name, threads, agent.as_mut(), &mut w)?;
    }
    agent.finish(&mut w)?;
    let (out, items) = w.finish()?;
    out.flush()?;
    let absent = adapter.not_in_session(session, dialect);
    Ok(Previewed { target: dialect.name(), items, changes: rewrite.summary.clone(), not_in_session: absent })
}

/// For one item, every attachment's payload is stood in for, where it is
/// (file ranges, in order); for a whole request, none is.
fn item_spans(session: &Session, one_item: bool) -> Vec<(u64, u64)> {
    if !one_item {
        return Vec::new();
    }
    let mut all: Vec<(u64, u64)> =
        session.attachments.iter().filter_map(|a| a.span).map(|s| (s.offset, s.len)).collect();
    all.sort_unstable();
    all
}

/// How a record's text becomes what the request holds: the rewrite's edits,
/// and for a line of JSON Lines its long payloads stood in for.
struct Editing<'a> {
    format: crate::model::Format,
    rewrite: &'a Rewrite,
    single_document: bool,
    /// The payloads an item's stand-ins name ([`item_spans`]).
    spans: Vec<(u64, u64)>,
    stand_ins: &'a stand_in::StandIns,
}

impl Editing<'_> {
    /// The rewrite's edits of a record; `None` when the rewrite drops it.
    fn edits_of(&self, text: &[u8], offset: u64, line: u64) -> Option<Vec<splice::Edit>> {
        let key = if self.single_document { 1 } else { line };
        self.rewrite.ops.get(&key).map_or(Some(Vec::new()), |ops| rewrite::edits(self.format, text, offset, ops))
    }

    /// The record with `edits` applied and, for a line of JSON Lines, its
    /// long payloads stood in for. A whole document keeps its payloads: Cline's
    /// writer measures them. `shape`: where the record's text is in the file
    /// (it may be read collapsed).
    fn edited_by(&self, text: Vec<u8>, shape: &Shape, mut edits: Vec<splice::Edit>) -> Vec<u8> {
        let (offset, end) = (shape.at(), shape.at() + shape.len);
        let spans = &self.spans;
        let within = &spans[spans.partition_point(|s| s.0 < offset)..spans.partition_point(|s| s.0 < end)];
        let stood_in = match (self.single_document, within) {
            (true, _) => Vec::new(),
            (false, []) => self.stand_ins.edits(&text, shape, &edits),
            (false, spans) => self.stand_ins.spans(&text, shape, spans),
        };
        if edits.is_empty() && stood_in.is_empty() {
            return text;
        }
        edits.extend(stood_in);
        splice::apply(&text, &edits)
    }

    /// Both: the record as the request holds it, or `None`.
    fn edited(&self, text: Vec<u8>, offset: u64, line: u64) -> Option<Vec<u8>> {
        let edits = self.edits_of(&text, offset, line)?;
        let shape = Shape::whole(offset, text.len() as u64);
        Some(self.edited_by(text, &shape, edits))
    }
}

/// Writes the body of the last logged request, edits applied; the number of
/// its messages or items.
fn logged_body(
    session: &Session,
    edit: &Editing<'_>,
    read_record: &mut dyn FnMut(u64, u64) -> anyhow::Result<Vec<u8>>,
    out: &mut dyn Write,
    name: &str,
) -> anyhow::Result<u64> {
    let Some(r) = session.records.iter().rev().find(|r| is_request(&read_record(r.offset, r.len).unwrap_or_default()))
    else {
        anyhow::bail!("{name}: no logged request to preview");
    };
    let text = read_record(r.offset, r.len)?;
    let text = edit.edited(text, r.offset, r.line).unwrap_or_default();
    let body = ["/request", "/body", ""].iter().find_map(|p| {
        let range = splice::locate(&text, p)?;
        (text[range.start] == b'{' && (p.is_empty() || is_request(&text[range.clone()]))).then_some(range)
    });
    let body = body.map_or(&text[..], |r| &text[r]);
    out.write_all(body)?;
    out.write_all(b"\n")?;
    out.flush()?;
    let items = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| ["messages", "input", "contents"].iter().find_map(|k| v.get(k)?.as_array().map(Vec::len)))
        .unwrap_or(0);
    Ok(items as u64)
}

/// One JSON document: its elements (an array, or a `messages` list) are the records.
fn render_document(
    text: &[u8],
    format: crate::model::Format,
    agent: &mut dyn crate::request::Render,
    w: &mut Out<'_>,
) -> anyhow::Result<()> {
    let mut doc = crate::json::serde_tolerant(text).context("the edited document is not JSON")?;
    agent.document(text, &mut doc);
    let list = doc
        .as_array()
        .or_else(|| doc.get("messages").and_then(|m| m.as_array()).filter(|_| !format.behaviour().logged));
    match list {
        Some(items) => items.iter().try_for_each(|v| agent.record(v, None, w))?,
        None => agent.record(&doc, None, w)?,
    }
    Ok(())
}

/// The records of a JSON Lines session: read (but for what the rewrite
/// replaces), edited and parsed on every core; rendered here, in order.
fn render_lines(
    session: &Session,
    edit: &Editing<'_>,
    file: &crate::reader::Handle,
    name: &str,
    threads: usize,
    agent: &mut dyn crate::request::Render,
    w: &mut Out<'_>,
) -> anyhow::Result<()> {
    let (format, rewrite) = (edit.format, edit.rewrite);
    let holes = rewrite::sparse::Holes::new(&rewrite.replaced);
    let prepare = |r: &crate::model::Record| -> records::Prepared {
        let (text, shape) = holes.read_collapsed(file, r.offset, r.len).with_context(|| format!("reading {name}"))?;
        let ops = rewrite.ops.get(&r.line).map(Vec::as_slice);
        let edits = |t: &[u8], ops: Option<&[rewrite::Op]>| {
            ops.map_or(Some(Vec::new()), |ops| rewrite::edits(format, t, r.offset, ops))
        };
        let (text, shape, edits) = match shape.rewritten(&text, ops, edits) {
            Rewritten::Edits(e) => (text, shape, e),
            Rewritten::Whole => {
                let text = shape.read(file).with_context(|| format!("reading {name}"))?;
                let e = edits(&text, ops);
                (text, Shape::whole(r.offset, r.len), e)
            }
        };
        let Some(edits) = edits else { return Ok(None) };
        Ok(crate::json::serde_tolerant(&edit.edited_by(text, &shape, edits)).ok())
    };
    // A line seen in parts (a checkpoint taken apart) answers its calls after its last part.
    let last_part: HashMap<u64, Option<u32>> = session.records.iter().map(|r| (r.line, r.part)).collect();
    records::each(&session.records, threads, prepare, |r, v| {
        let Some(v) = v else { return Ok(()) };
        agent.record(&v, r.part, w)?;
        // Interrupted calls of this turn get their result right after it.
        let ops = rewrite.ops.get(&r.line).filter(|_| last_part.get(&r.line) == Some(&r.part));
        for op in ops.into_iter().flatten() {
            if let rewrite::Op::Answer { call_id, tool } = op {
                agent.added(interrupted_answer(format, call_id, tool.clone()), w)?;
            }
        }
        Ok(())
    })
}

/// The result the rewrite gives an interrupted call, as a message.
fn interrupted_answer(format: crate::model::Format, call_id: &str, tool: Option<String>) -> canon::Msg {
    let text = canon::Part::Text(rewrite::mend::interrupted(format).into());
    let error = format.behaviour().interrupted().1;
    let result = canon::Part::Result { id: call_id.to_string(), name: tool, parts: vec![text], error, extra: None };
    canon::Msg::new(canon::WireRole::User, vec![result])
}

fn is_request(text: &[u8]) -> bool {
    ["/messages", "/input", "/contents", "/request", "/body"].iter().any(|p| splice::locate(text, p).is_some())
}
