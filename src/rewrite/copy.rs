//! `repair`'s writer: the session copied record by record into a new file,
//! the rewrite's edits spliced into the records they touch, the new identity
//! written where the agent keeps it. The lines are read, split and edited on
//! one thread and written on another, a few 1 MiB chunks apart. The payloads
//! are not read at all ([`super::sparse`]): those the rewrite replaces are
//! never written, and those it keeps go from the session to the copy in the
//! kernel ([`crate::atomic::Sink`]), the lines around them read and edited
//! as usual. Memory stays at one line and those chunks.
//!
//! The copy is made from the file the plan was made from: the session is
//! opened once here and must still be the one the [`Snapshot`] taken before
//! the first read saw (same device, inode, size and modification time), both
//! when it is opened and after the last byte is copied; otherwise nothing is
//! written. What is copied is bounded by the size that was planned, so a line
//! an agent appends meanwhile cannot end up torn in the copy.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::mpsc;

use anyhow::Context as _;

use crate::alias::{Input, Snapshot};
use crate::atomic::{self, Existing, Sink};
use crate::model::Format;

use super::identity::{self, Identity};
use super::sparse::{Holes, Rewritten, Shape, Sparse};
use super::{Op, Rewrite, edits, mend};
use crate::json::salvage::{self, Salvaged};
use crate::json::splice;

/// What a repair wrote.
#[derive(Clone, Debug)]
pub struct Written {
    pub identity: Identity,
    pub lines: u64,
    /// Records changed by the rewrite.
    pub touched: u64,
    /// Lines left out: dropped by the rewrite, or damaged (cut short, not JSON).
    pub dropped: Vec<u64>,
    /// Records added: results for interrupted tool calls, and the line that
    /// marks a Gemini CLI copy as written by repair.
    pub inserted: u64,
    /// Damaged lines salvaged (rejoined or split), each said with its lines.
    pub salvaged: Vec<String>,
    /// Records whose only change is the copy's new session id.
    pub renamed: u64,
}

/// What `repair` copies from: the session, the snapshot taken before it was
/// first read, and every file the command read (none may be the copy).
pub struct CopySource<'a> {
    pub path: &'a Path,
    /// Who wrote the session, as its reading found it
    /// ([`crate::model::Session::written_by`]): whose command brings the copy
    /// back (`kilo import` for a Kilo Code CLI export, not `opencode import`).
    pub written_by: Option<crate::model::Fork>,
    pub planned: Snapshot,
    pub reads: &'a [Input],
}

/// Copies the session (read as `format`) to a new session with `rewrite` applied.
/// `damaged` are lines the reader could not read: they are left out.
pub fn repair(
    source: &CopySource<'_>,
    format: Format,
    single_document: bool,
    rewrite: &Rewrite,
    damaged: &[u64],
    dir: Option<&Path>,
) -> anyhow::Result<Written> {
    repair_text(source, source.path, format, single_document, rewrite, damaged, dir)
}

/// [`repair`], the session's text read from `text`: the file itself, or its
/// decompressed copy when the file is compressed ([`crate::reader::Plan::text`]).
pub fn repair_text(
    source: &CopySource<'_>,
    text: &Path,
    format: Format,
    single_document: bool,
    rewrite: &Rewrite,
    damaged: &[u64],
    dir: Option<&Path>,
) -> anyhow::Result<Written> {
    let src = source.path;
    let from = text;
    let text = File::open(from).with_context(|| format!("opening {}", src.display()))?;
    // The text is the file's own, of the size planned; a decompressed copy is
    // whole, made once from the file, which must still be the one planned.
    let len = if from == src {
        source.planned.same_as(Snapshot::of_file(&text, src).ok().as_ref(), src)?;
        source.planned.len
    } else {
        source.planned.unchanged(src)?;
        text.metadata().with_context(|| format!("reading {}", src.display()))?.len()
    };
    let file = text;
    let planned = || (&file).take(len);
    // A one-document file is read once, whole; a JSON Lines file only for its
    // first line here (where the agents keep the session's id), then streamed.
    let document = if single_document { Some(whole(planned(), src)?) } else { None };
    let identity = match &document {
        Some(text) => identity::new(format, source.written_by, src, dir, text),
        None => {
            // Dropped before the copy: a one-line session's first line is all of it.
            let mut first = Vec::new();
            BufReader::new(planned()).read_until(b'\n', &mut first)?;
            (&file).seek(SeekFrom::Start(0)).with_context(|| format!("reading {}", src.display()))?;
            identity::new(format, source.written_by, src, dir, &first)
        }
    };
    let mut w =
        Written { identity, lines: 0, touched: 0, dropped: Vec::new(), inserted: 0, renamed: 0, salvaged: Vec::new() };
    let target = w.identity.path.clone();
    let companions = identity::companions(format, &w.identity, src);
    // A copy that is a folder of its own: Copilot CLI's session folder, named by
    // its id, and Cline's task folder.
    if (format == Format::Copilot || !companions.is_empty())
        && let Some(folder) = target.parent()
    {
        std::fs::create_dir_all(folder).with_context(|| format!("creating {}", folder.display()))?;
    }
    // The copy's companions (Cline's `ui_messages.repaired.json`) are checked
    // before the copy is written: none written is better than half a pair.
    for (path, _) in &companions {
        crate::alias::refuse_aliases(path, source.reads)?;
        if std::fs::symlink_metadata(path).is_ok() {
            anyhow::bail!(
                "{} already exists; session-doctor never overwrites it (nothing was written)",
                path.display()
            );
        }
    }
    atomic::write_with_mode(&target, Existing::Keep, atomic::mode_of(src), source.reads, |out| {
        match &document {
            Some(text) => {
                let lines = Copied { path: src, file: &file, holes: &Holes::default(), input: planned() };
                pipelined(out, &file, |chunks| copy(&mut w, lines, Some(text), format, rewrite, damaged, chunks))?;
            }
            None => {
                // The payloads are not read (see `sparse`).
                let holes = Holes::passing(&rewrite.replaced, &rewrite.kept());
                let input = Sparse::collapsed(&file, 0, len, &holes);
                let lines = Copied { path: src, file: &file, holes: &holes, input };
                pipelined(out, &file, |chunks| copy(&mut w, lines, None, format, rewrite, damaged, chunks))?;
                if format == Format::GeminiCli {
                    // The line that tells a fresh copy from one resumed since (`diagnose`).
                    let mut last = [0u8];
                    let open = len > 0
                        && std::os::unix::fs::FileExt::read_exact_at(&file, &mut last, len - 1).is_ok()
                        && last[0] != b'\n';
                    out.write_all(if open { b"\n" } else { b"" })?;
                    out.write_all(crate::formats::gemini_cli::REPAIRED.as_bytes())?;
                    out.write_all(b"\n")?;
                    w.lines += 1;
                    w.inserted += 1;
                }
            }
        }
        // Still the file the plan was made from, or nothing is written.
        source.planned.unchanged(src)
    })?;
    for (path, bytes) in companions {
        atomic::write_with_mode(&path, Existing::Keep, atomic::mode_of(src), source.reads, |out| {
            out.write_all(&bytes)?;
            Ok(())
        })?;
    }
    Ok(w)
}

/// Bytes per chunk handed from the copying thread to the writing one.
const CHUNK: usize = 1 << 20;
/// Chunks on their way at once: memory stays at a few MiB whatever the lines.
const IN_FLIGHT: usize = 4;

/// What the copying thread hands the writing one.
enum Piece {
    Bytes(Vec<u8>),
    /// A range of the session, written from the file.
    Range(Range<u64>),
}

/// Runs `produce` on a thread of its own, and writes what it writes to `out`
/// here as it comes, in [`CHUNK`]s and ranges of `file`: reading, splitting
/// and editing the lines overlap writing them. A write error is the one
/// returned (it names the target); `produce` then stops at its next chunk.
fn pipelined(
    out: &mut dyn Sink,
    file: &File,
    produce: impl FnOnce(&mut Chunks) -> anyhow::Result<()> + Send,
) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::sync_channel::<Piece>(IN_FLIGHT);
    // Written chunks go back to be filled again, not freed and allocated anew.
    let (back, spare) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT + 2);
    std::thread::scope(|s| {
        let producer = s.spawn(move || {
            let mut chunks = Chunks { tx, spare, buf: Vec::with_capacity(CHUNK) };
            produce(&mut chunks)?;
            Ok::<_, anyhow::Error>(chunks.send()?)
        });
        let mut written = Ok(());
        for piece in &rx {
            let done = match piece {
                Piece::Bytes(mut chunk) => out.write_all(&chunk).map(|()| {
                    chunk.clear();
                    let _ = back.try_send(chunk);
                }),
                Piece::Range(r) => out.copy_range(file, r),
            };
            if let Err(e) = done {
                written = Err(e);
                break;
            }
        }
        // A producer still sending finds the channel closed.
        drop(rx);
        let produced = producer.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        written?;
        produced
    })
}

/// The writing end of [`pipelined`]: fills a chunk, sends it when full.
struct Chunks {
    tx: mpsc::SyncSender<Piece>,
    spare: mpsc::Receiver<Vec<u8>>,
    buf: Vec<u8>,
}

impl Chunks {
    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = self.spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        let full = std::mem::replace(&mut self.buf, next);
        self.put(Piece::Bytes(full))
    }

    fn put(&mut self, piece: Piece) -> std::io::Result<()> {
        self.tx
            .send(piece)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the copy's writer stopped"))
    }

    /// Writes the bytes `range` of the session, after what is written so far.
    fn pass(&mut self, range: Range<u64>) -> std::io::Result<()> {
        self.send()?;
        self.put(Piece::Range(range))
    }

    /// Writes `text[run]`, a run of a record read collapsed that stays as it
    /// is, each payload `passes` names in it written from the file in place of
    /// its filler.
    fn keep(&mut self, text: &[u8], run: Range<usize>, passes: &[(Range<usize>, Range<u64>)]) -> std::io::Result<()> {
        let mut at = run.start;
        for (filler, file) in passes.iter().filter(|(f, _)| f.start < run.end && run.start < f.end) {
            if filler.start < run.start || run.end < filler.end {
                // `Shape::rewritten` sends such a record to be read whole.
                return Err(std::io::Error::other("an edit cuts through a payload kept as it is"));
            }
            self.write_all(&text[at..filler.start])?;
            self.pass(file.clone())?;
            at = filler.end;
        }
        self.write_all(&text[at..run.end])
    }
}

impl std::io::Write for Chunks {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = data.len().min(CHUNK - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() == CHUNK {
            self.send()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What [`copy`] reads the lines from: `input`, the session with `holes`
/// (ranges the rewrite replaces) filled, and the `file` (at `path`) to read a
/// hole from after all when a line's edits do not replace it.
struct Copied<'a, R> {
    path: &'a Path,
    file: &'a File,
    holes: &'a Holes,
    input: R,
}

/// The records of `input` (or the one `document`) into `out`, rewritten.
fn copy(
    w: &mut Written,
    input: Copied<'_, impl Read>,
    document: Option<&[u8]>,
    format: Format,
    rewrite: &Rewrite,
    damaged: &[u64],
    out: &mut Chunks,
) -> anyhow::Result<()> {
    if let Some(text) = document {
        return copy_document(w, text, format, rewrite, out);
    }
    let Copied { path, file, holes, input } = input;
    // A damaged line's children are bridged where the reader bridges them; pi
    // stops at such a link (it skips a line that is not JSON), and its copy
    // sends what it sent: the line goes, its children's links stay.
    let bridge = !format.behaviour().stops_at_missing_parent;
    let chain = Chain::of(format, bridge && !damaged.is_empty());
    let mut lines = LineCopy { w, format, rewrite, damaged, chain, bridge, path, file, pending: Vec::new() };
    // The reader's own splitter: SIMD newline search, lines borrowed in place.
    let mut reader = crate::reader::Lines::new(input);
    let (mut line, mut offset) = (0u64, 0u64);
    while let Some(buf) = reader.next_line()? {
        line += 1;
        // The line as read: its holes a few bytes each (see `Sparse::collapsed`).
        let shape = holes.shape(offset, buf.len());
        offset += shape.len;
        lines.line(line, &shape, buf, out)?;
    }
    lines.salvage(out)
}

/// A one-document session (an opencode export, a Cline task) into `out`,
/// rewritten and given the copy's identity.
fn copy_document(
    w: &mut Written,
    text: &[u8],
    format: Format,
    rewrite: &Rewrite,
    out: &mut Chunks,
) -> anyhow::Result<()> {
    let body_at = if text.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let body = &text[body_at..];
    let e = rewrite
        .ops
        .get(&1)
        .map_or_else(|| Some(Vec::new()), |ops| edits(format, body, body_at as u64, ops))
        .unwrap_or_default();
    // The new identity goes into the rewritten text, so what the rewrite put
    // in (an opencode note part, which carries its part's ids) gets it too.
    let rewritten = splice::apply(body, &e);
    let ids = identity::edit(format, &w.identity, &rewritten, true);
    w.touched += u64::from(rewritten != body || !ids.is_empty());
    out.write_all(&text[..body_at])?;
    // The lines of the copy as written: a note in place of a pretty-printed
    // media block takes fewer lines than the block.
    let copy = splice::apply(&rewritten, &ids);
    out.write_all(&copy)?;
    w.lines = memchr::memchr_iter(b'\n', &copy).count() as u64 + u64::from(!copy.is_empty() && !copy.ends_with(b"\n"));
    Ok(())
}

/// The copy of a JSON Lines session, one line at a time: each line's edits
/// found, the line written with them, the results of its interrupted calls
/// written after it.
struct LineCopy<'a> {
    w: &'a mut Written,
    format: Format,
    rewrite: &'a Rewrite,
    /// Lines the reader could not read (sorted): left out.
    damaged: &'a [u64],
    chain: Option<Chain>,
    /// A damaged line's children are linked past it.
    bridge: bool,
    path: &'a Path,
    file: &'a File,
    /// The run of damaged lines just read (number, text): salvaged, or left
    /// out, before the next line that is read ([`crate::json::salvage`]).
    pending: Vec<(u64, Vec<u8>)>,
}

/// The edits of one line ([`LineCopy::edits`]).
struct Edited {
    /// `None`: the line is left out.
    edits: Option<Vec<splice::Edit>>,
    /// The rewrite or a parent link changes the line (not only its identity).
    rewritten: bool,
    /// The line as the file holds it, where its edits are found only there.
    whole: Option<Vec<u8>>,
}

impl LineCopy<'_> {
    /// Line number `line`, read as `buf` (its holes as `shape` has them), into `out`.
    fn line(&mut self, line: u64, shape: &Shape, buf: &[u8], out: &mut Chunks) -> anyhow::Result<()> {
        let newline = buf.last() == Some(&b'\n');
        let text = if newline { &buf[..buf.len() - 1] } else { buf };
        if let Some(note) = identity::resume_note_for(self.format, text) {
            self.w.identity.resume_note = Some(note.to_string());
        }
        if self.damaged.binary_search(&line).is_ok() {
            // No payload of a damaged line was read: it has no holes, these are its bytes.
            self.pending.push((line, text.to_vec()));
            return Ok(());
        }
        self.salvage(out)?;
        let Edited { edits, rewritten, whole } = self.edits(line, shape, text)?;
        // Read whole, the line holds its payloads: none is passed through.
        let (buf, passes): (&[u8], Vec<_>) = match &whole {
            Some(real) => (real, Vec::new()),
            None => (buf, shape.passes().collect()),
        };
        let text = if newline { &buf[..buf.len() - 1] } else { buf };
        let Some(e) = edits else {
            self.w.dropped.push(line);
            if let Some(c) = self.chain.as_mut() {
                c.drop(text);
            }
            return Ok(());
        };
        if e.is_empty() {
            out.keep(buf, 0..buf.len(), &passes)?;
            if !newline && answers_after(self.rewrite, line) {
                out.write_all(b"\n")?;
            }
        } else {
            self.w.touched += u64::from(rewritten);
            self.w.renamed += u64::from(!rewritten);
            splice::apply_keeping(text, &e, out, |out, run| out.keep(text, run, &passes))?;
            out.write_all(b"\n")?;
        }
        self.w.lines += 1;
        self.answer(line, text, out)
    }

    /// The damaged lines just read, salvaged where they can be: a record split
    /// over them rejoined, records glued on one split apart, each written with
    /// the copy's identity and parent links; the rest left out.
    fn salvage(&mut self, out: &mut Chunks) -> anyhow::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let run: Vec<(u64, &[u8])> = pending.iter().map(|(n, t)| (*n, t.as_slice())).collect();
        for s in salvage::salvage(&run) {
            let first = match &s {
                Salvaged::Lost { line } => {
                    self.w.dropped.push(*line);
                    let text = run.iter().find(|(n, _)| n == line).map_or(&[][..], |(_, t)| t);
                    if let Some(c) = self.chain.as_mut().filter(|_| self.bridge) {
                        c.drop(text);
                    }
                    continue;
                }
                Salvaged::Rejoined { first, .. } => *first,
                Salvaged::Split { line, .. } => *line,
            };
            for (k, record) in s.records().into_iter().enumerate() {
                let mut e: Vec<splice::Edit> = self.chain.as_mut().and_then(|c| c.keep(record)).into_iter().collect();
                e.extend(identity::edit(self.format, &self.w.identity, record, first == 1 && k == 0));
                out.write_all(&splice::apply(record, &e))?;
                out.write_all(b"\n")?;
                self.w.lines += 1;
                self.w.touched += 1;
            }
            self.w.salvaged.push(s.describe(true));
        }
        Ok(())
    }

    /// Every edit of line `line` (`text`, read as `shape` has it): the
    /// rewrite's, its parent link's, its new identity's. Where they can be
    /// found only in the line as the file holds it, that is read.
    fn edits(&mut self, line: u64, shape: &Shape, text: &[u8]) -> anyhow::Result<Edited> {
        let rewrite = self.rewrite;
        let ops = rewrite.ops.get(&line).map(Vec::as_slice);
        let at = shape.at();
        let (format, identity, chain) = (self.format, &self.w.identity, &mut self.chain);
        let mut rewritten = false;
        let mut edited = |text: &[u8], ops: Option<&[Op]>| {
            let mut e = ops.map_or(Some(Vec::new()), |ops| edits(format, text, at, ops))?;
            if let Some(c) = chain.as_mut() {
                e.extend(c.keep(text));
            }
            rewritten = !e.is_empty();
            e.extend(identity::edit(format, identity, text, line == 1));
            Some(e)
        };
        let (edits, whole) = match shape.rewritten(text, ops, &mut edited) {
            Rewritten::Edits(e) => (e, None),
            // A hole the edits leave in place, or one they touch: the line as
            // in the file after all.
            Rewritten::Whole => {
                let real =
                    shape.read(self.file).with_context(|| format!("reading line {line} of {}", self.path.display()))?;
                let newline = real.last() == Some(&b'\n');
                let e = edited(if newline { &real[..real.len() - 1] } else { &real }, ops);
                (e, Some(real))
            }
        };
        Ok(Edited { edits, rewritten, whole })
    }

    /// The interrupted calls of line `line` (`text`, the turn that made
    /// them): their results follow it.
    fn answer(&mut self, line: u64, text: &[u8], out: &mut Chunks) -> anyhow::Result<()> {
        let calls: Vec<(String, Option<String>)> = self
            .rewrite
            .ops
            .get(&line)
            .into_iter()
            .flatten()
            .filter_map(|op| match op {
                Op::Answer { call_id, tool } => Some((call_id.clone(), tool.clone())),
                _ => None,
            })
            .collect();
        if calls.is_empty() {
            return Ok(());
        }
        // Claude Code answers them in one user message; Codex and pi one record each.
        let groups: Vec<Vec<(String, Option<String>)>> =
            if self.format == Format::ClaudeCode { vec![calls] } else { calls.into_iter().map(|c| vec![c]).collect() };
        let mut after = text.to_vec();
        for g in groups {
            let id = match self.format {
                Format::Pi => uuid::Uuid::new_v4().simple().to_string()[..8].to_string(),
                _ => uuid::Uuid::new_v4().to_string(),
            };
            let Some(record) = mend::answer_record(self.format, &after, &g, &id, self.w.identity.id.as_deref()) else {
                break;
            };
            out.write_all(record.as_bytes())?;
            out.write_all(b"\n")?;
            self.w.lines += 1;
            self.w.inserted += 1;
            if let Some(c) = self.chain.as_mut() {
                c.insert_after(&after, record.as_bytes());
            }
            after = record.into_bytes();
        }
        Ok(())
    }
}

/// The parent links of a tree-shaped session (Claude Code `uuid`/`parentUuid`,
/// pi `id`/`parentId`), kept intact around the lines a repair leaves out: a
/// line whose parent was left out is re-parented onto that line's own parent;
/// one whose parent cannot be known (it was on a damaged line) onto the line
/// written just before, as the reader bridges it.
struct Chain {
    id: &'static str,
    parent: &'static str,
    /// Left-out ids → the parent they had (raw JSON text), already resolved.
    dropped: std::collections::HashMap<String, String>,
    /// Hashes of the ids written so far: kept only when a damaged line will be
    /// left out (millions of lines otherwise cost memory for nothing).
    seen: Option<std::collections::HashSet<u64>>,
    /// The raw JSON of the last id written.
    last: Option<String>,
    /// A damaged line was left out: its id, and so its children, are unknown.
    lost: bool,
}

impl Chain {
    fn of(format: Format, damaged: bool) -> Option<Chain> {
        let (id, parent) = match format {
            Format::ClaudeCode | Format::QwenCode => ("/uuid", "/parentUuid"),
            Format::Pi => ("/id", "/parentId"),
            _ => return None,
        };
        let seen = damaged.then(Default::default);
        Some(Chain { id, parent, dropped: std::collections::HashMap::new(), seen, last: None, lost: false })
    }

    fn raw<'t>(text: &'t [u8], ptr: &str) -> Option<&'t [u8]> {
        splice::locate(text, ptr).map(|r| &text[r])
    }

    fn drop(&mut self, text: &[u8]) {
        match (Self::raw(text, self.id), Self::raw(text, self.parent)) {
            (Some(id), Some(parent)) => {
                let parent = String::from_utf8_lossy(parent).into_owned();
                let resolved = self.dropped.get(&parent).cloned().unwrap_or(parent);
                self.dropped.insert(String::from_utf8_lossy(id).into_owned(), resolved);
            }
            _ => self.lost = true,
        }
    }

    /// A record written after `after`: the children `after` had become its children.
    fn insert_after(&mut self, after: &[u8], record: &[u8]) {
        if let (Some(old), Some(new)) = (Self::raw(after, self.id), Self::raw(record, self.id)) {
            let new = String::from_utf8_lossy(new).into_owned();
            self.dropped.insert(String::from_utf8_lossy(old).into_owned(), new.clone());
            if let Some(seen) = self.seen.as_mut() {
                seen.insert(xxhash_rust::xxh3::xxh3_64(new.as_bytes()));
            }
            self.last = Some(new);
        }
    }

    fn keep(&mut self, text: &[u8]) -> Option<splice::Edit> {
        // Nothing left out yet and no damaged line to bridge: every link stands,
        // and the last id is only ever read to bridge one.
        if self.dropped.is_empty() && self.seen.is_none() {
            return None;
        }
        let hash = |b: &[u8]| xxhash_rust::xxh3::xxh3_64(b);
        let range = splice::locate(text, self.parent);
        let edit = range.and_then(|r| {
            let parent = &text[r.clone()];
            if parent == b"null" {
                return None;
            }
            let with = match self.dropped.get(String::from_utf8_lossy(parent).as_ref()) {
                Some(p) => p.clone(),
                None if self.lost && self.seen.as_ref().is_some_and(|s| !s.contains(&hash(parent))) => {
                    self.last.clone()?
                }
                None => return None,
            };
            Some(splice::Edit { range: r, with })
        });
        if let Some(seen) = self.seen.as_mut()
            && let Some(id) = Self::raw(text, self.id)
        {
            seen.insert(hash(id));
            self.last = Some(String::from_utf8_lossy(id).into_owned());
        }
        edit
    }
}

/// Whether a synthetic record follows `line`.
fn answers_after(rewrite: &Rewrite, line: u64) -> bool {
    rewrite.ops.get(&line).is_some_and(|ops| ops.iter().any(|o| matches!(o, Op::Answer { .. })))
}

fn whole(mut input: impl Read, src: &Path) -> anyhow::Result<Vec<u8>> {
    let mut v = Vec::new();
    input.read_to_end(&mut v).with_context(|| format!("reading {}", src.display()))?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies `text` with `rewrite` (no new identity), reading it as `repair` does.
    fn copied(text: &[u8], rewrite: &Rewrite) -> Vec<u8> {
        passed(text, rewrite).bytes
    }

    /// [`copied`], with how many ranges were written from the file.
    fn passed(text: &[u8], rewrite: &Rewrite) -> Passed {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, text).unwrap();
        let file = File::open(&path).unwrap();
        let identity =
            Identity { path: dir.path().join("c.jsonl"), id: None, old_id: None, resume: None, resume_note: None };
        let mut w = Written {
            identity,
            lines: 0,
            touched: 0,
            dropped: Vec::new(),
            inserted: 0,
            renamed: 0,
            salvaged: Vec::new(),
        };
        let holes = Holes::passing(&rewrite.replaced, &rewrite.kept());
        let input = Sparse::collapsed(&file, 0, text.len() as u64, &holes);
        let lines = Copied { path: &path, file: &file, holes: &holes, input };
        let mut out = Passed::default();
        pipelined(&mut out, &file, |chunks| copy(&mut w, lines, None, Format::Codex, rewrite, &[], chunks)).unwrap();
        out
    }

    /// A copy in memory that counts the ranges it is given.
    #[derive(Default)]
    struct Passed {
        bytes: Vec<u8>,
        ranges: usize,
    }
    impl Write for Passed {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.bytes.write(b)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl Sink for Passed {
        fn copy_range(&mut self, from: &File, range: Range<u64>) -> std::io::Result<()> {
            self.ranges += 1;
            atomic::copy_by_reading(&mut self.bytes, from, range)
        }
    }

    #[test]
    fn a_kept_payload_is_written_from_the_file_and_a_container_written_anew_reads_it_first() {
        let (big, other) = ("QUJD".repeat(5000), "RUZH".repeat(5000));
        let line1 = format!("{{\"a\":{{\"image_url\":\"data:image/png;base64,{big}\"}},\"m\":\"TU5P\"}}\n");
        let line2 = format!("{{\"c\":[{{\"x\":\"S0xN\"}},{{\"y\":\"{other}\"}}]}}\n");
        let text = format!("{line1}{line2}{{\"e\":1}}\n");
        let at = |needle: &str| text.find(needle).unwrap() as u64;
        let payloads = vec![(at(&big), big.len() as u64), (at(&other), other.len() as u64)];
        let mut rewrite = Rewrite { payloads, ..Default::default() };
        // The first line's payload is passed through around an edit of its
        // line; the second's array is written anew by the removal of its
        // first block, so its line is read whole.
        rewrite.ops.insert(1, vec![Op::Blank { offset: at("TU5P"), len: 4 }]);
        rewrite.ops.insert(2, vec![Op::Remove { pointer: "/c/0".into() }]);
        let p = passed(text.as_bytes(), &rewrite);
        let (out, ranges) = (String::from_utf8(p.bytes).unwrap(), p.ranges);
        let want = format!(
            "{{\"a\":{{\"image_url\":\"data:image/png;base64,{big}\"}},\"m\":\"\"}}\n{{\"c\":[{{\"y\":\"{other}\"}}]}}\n{{\"e\":1}}\n"
        );
        assert_eq!(out, want);
        assert_eq!(ranges, 1, "the first line's payload, not the second's");
        // Unedited, both are.
        let p = passed(text.as_bytes(), &Rewrite { payloads: rewrite.payloads.clone(), ..Default::default() });
        assert_eq!((p.bytes, p.ranges), (text.clone().into_bytes(), 2));
        // A payload the rewrite replaces or blanks is never passed through.
        rewrite.replaced.push((at(&big), 4));
        rewrite.ops.insert(2, vec![Op::Blank { offset: at(&other), len: other.len() as u64 }]);
        assert_eq!(rewrite.kept(), vec![]);
    }

    #[test]
    fn a_payload_the_edits_replace_is_not_read_and_one_they_keep_is_copied_as_it_is() {
        let text = b"{\"a\":{\"image_url\":\"data:image/png;base64,QUJDRA==\"}}\n{\"b\":\"RUZHSA==\"}\n";
        let at = |needle: &[u8]| text.windows(needle.len()).position(|w| w == needle).unwrap() as u64;
        // The second line's payload is marked replaced, but no op replaces it.
        let mut rewrite = Rewrite { replaced: vec![(at(b"QUJD"), 8), (at(b"RUZH"), 8)], ..Default::default() };
        rewrite.ops.insert(1, vec![Op::Note { pointer: "/a".into(), text: "gone".into() }]);
        let out = copied(text, &rewrite);
        assert_eq!(out, b"{\"a\":{\"type\":\"input_text\",\"text\":\"gone\"}}\n{\"b\":\"RUZHSA==\"}\n".to_vec());
    }

    #[test]
    fn a_blanked_mirror_and_a_dropped_line_are_placed_in_the_collapsed_lines() {
        let text = b"{\"a\":\"QUJDRA==\",\"m\":\"QUJDRA==\",\"k\":\"RUZHSA==\"}\n{\"d\":\"SUpLTA==\"}\n{\"e\":1}\n";
        let at = |needle: &[u8], from: usize| {
            (from + text[from..].windows(needle.len()).position(|w| w == needle).unwrap()) as u64
        };
        let (a, m, d) = (at(b"QUJD", 0), at(b"QUJD", 8), at(b"SUpL", 0));
        let mut rewrite = Rewrite { replaced: vec![(a, 8), (m, 8), (d, 8)], ..Default::default() };
        rewrite
            .ops
            .insert(1, vec![Op::Note { pointer: "/a".into(), text: "gone".into() }, Op::Blank { offset: m, len: 8 }]);
        rewrite.ops.insert(2, vec![Op::Drop]);
        let out = copied(text, &rewrite);
        let want = b"{\"a\":{\"type\":\"input_text\",\"text\":\"gone\"},\"m\":\"\",\"k\":\"RUZHSA==\"}\n{\"e\":1}\n";
        assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(want));
    }

    #[test]
    fn the_copy_goes_through_chunks_whole_and_in_order() {
        let mut text = Vec::new();
        for i in 0..3000 {
            text.extend_from_slice(format!("{{\"n\":{i},\"pad\":\"{}\"}}\n", "x".repeat(1000)).as_bytes());
        }
        assert_eq!(copied(&text, &Rewrite::default()), text);
    }
}
