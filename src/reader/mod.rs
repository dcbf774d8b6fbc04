//! The streaming reader: a session file in, the canonical [`Session`] out.
//!
//! Sessions reach gigabytes of base64, so the file is never held whole: it is
//! split into newline-aligned byte ranges, one per core, and each worker
//! streams its range line by line through its own buffer (memory stays at one
//! line per worker). Each line is parsed, described by the format's adapter and
//! its media judged; only small records survive the line. Records are then
//! merged in file order, and the history is assembled.

mod board;
pub mod compressed;
mod detect;
mod fork;
mod gemini_cleanup;
mod line;
mod lines;
pub(crate) mod media;
mod opencode_store;
mod pi_store;

mod sidecar;
mod skim;
mod source;
mod sqlite;

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;

use crate::formats::Unit;
use crate::formats::assemble::{Extra, LineRecord, Links, Records, append_shrinking, assemble, assign_refs, mapped};
use crate::formats::cline;
use crate::json::Value;
use crate::media::Depth;
use crate::media::rules::Rules;
use crate::model::Cut;
use crate::model::Format;
use crate::model::{Entry, Finding, Session, Severity};

/// How to read a session.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Skip detection and read as this format.
    pub format: Option<Format>,
    pub depth: Depth,
    /// Judge media by this provider's rules instead of the session's own.
    pub provider: Option<String>,
    /// Judge media by the rules of this model's provider (when `provider` is not given).
    pub model: Option<String>,
    /// A JSON file whose fields override the chosen provider's rules.
    pub rules_file: Option<std::path::PathBuf>,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    /// The session to read from a store holding many (opencode's database):
    /// by default the most recently updated one.
    pub session: Option<String>,
    /// Records of a JSON Lines file read before reading stops with an error;
    /// `None`: [`MAX_RECORDS`].
    pub max_records: Option<u64>,
    /// Which long lines the reader parses without their payloads ([`Skim`]);
    /// the session read is the same either way, only the time differs.
    pub skim: Skim,
}

/// Records of a JSON Lines file read, at most, unless `--max-records` says
/// otherwise. The history is the one thing the reader keeps per line (about
/// 140 bytes a record, 600 for a tool call or result, docs/performance.md
/// "Memory per line"): this bounds it at about 1.4 GB of short lines, and a session past it
/// stops with a sentence instead of the machine running out of memory.
pub const MAX_RECORDS: u64 = 10_000_000;

/// Records a worker counts before it adds them to the shared count.
const COUNT_EVERY: u64 = 1024;

/// What the reader decided before reading.
#[derive(Clone, Debug)]
pub struct Plan {
    pub format: Format,
    pub detected: bool,
    pub rules: Rules,
    /// The file is one JSON document spanning many lines.
    pub single_document: bool,
    /// The session as JSON Lines, when it was taken out of a store (opencode's
    /// database or `storage/` tree, pi's SQLite store) rather than read from the file.
    pub memory: Option<std::sync::Arc<Vec<u8>>>,
    /// What the user should know about the choice made (which session of a store).
    pub note: Option<String>,
    /// The id of the session read, when `path` is a store of many.
    pub session: Option<String>,
    /// That session's own record in its store ([`Session::store_info`]).
    pub store_info: Option<serde_json::Value>,
    /// The session's text decompressed, when the file is compressed (Codex's
    /// `.jsonl.zst`): every read of the session's bytes goes there ([`Plan::text`]).
    pub spool: Option<std::sync::Arc<tempfile::TempPath>>,
    /// The session's text opened once, when the plan was made: every read of
    /// it goes through this handle ([`Source`]), never through its path
    /// again. `None` for a session taken out of a store.
    pub file: Option<std::sync::Arc<File>>,
}

impl Plan {
    /// Where the text of the session at `path` is read: the file itself, or its
    /// decompressed copy. Reports, overlays and copies still name `path`.
    pub fn text<'a>(&'a self, path: &'a Path) -> &'a Path {
        self.spool.as_deref().map_or(path, |s| s.as_ref())
    }
}

pub use detect::{NotASession, plan};
pub use lines::Lines;
pub use opencode_store::session_ids as store_sessions;
pub use sidecar::{RECORDED_BESIDE, files as sidecar_files, mended_ui};
pub use skim::Skim;
pub use source::{At, Handle, ReadAt, Source};

/// Why a session taken out of a store has no export that `repair` could
/// rewrite (pi's SQLite store has no export command; `opencode export`, and
/// Kilo Code CLI's `kilo export`, of an event-sourced session holds none of
/// its messages); `None` for a file, or a store whose export is the way.
pub fn no_export(path: &Path, plan: &Plan) -> Option<String> {
    let session = plan.session.as_deref().filter(|_| plan.memory.is_some())?;
    match plan.format {
        Format::Pi => Some("pi has no command that exports a session out of its SQLite store".into()),
        Format::Opencode if opencode_store::is_v2_session(path, session) => {
            // Kilo Code CLI's export was read in its code (not run): its
            // `Session.messages` pages the `message` table alone, as opencode's does.
            let fork = crate::formats::opencode::fork_of_store(path);
            let seen = match fork {
                Some(crate::model::Fork::Kilo) => "Kilo Code CLI 7.7.7 exports the `message` rows alone",
                None => "opencode 1.18.33",
            };
            let cli = crate::formats::opencode::command(fork);
            Some(format!(
                "session {session} is an event-sourced (v2) session, and `{cli} export` writes none of its messages ({seen})"
            ))
        }
        _ => None,
    }
}

/// Worker threads for `-j threads`: that many, 0 meaning one per core; at most 16.
pub fn workers(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        n => n,
    }
    .clamp(1, 16)
}

/// Reads a session into the canonical model; the file is opened read-only.
pub fn read_session(path: &Path, opts: &ReadOptions) -> anyhow::Result<Session> {
    let plan = plan(path, opts)?;
    read_with_plan(path, opts, &plan, None)
}

/// Reads with a plan already made; `progress` receives consumed byte counts.
pub fn read_with_plan(
    path: &Path,
    opts: &ReadOptions,
    plan: &Plan,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> anyhow::Result<Session> {
    // What Cline no longer sends of an IDE task's history, as its extension keeps it.
    let (range, range_unread) = sidecar::deleted_range(path, plan.format);
    let mut cut = None;
    let Parts { mut records, entries, mut findings, lines, written_by } = if let Some(bytes) = &plan.memory {
        in_memory(path, bytes, opts, plan)
    } else {
        let file = plan.file.as_deref().with_context(|| format!("{} was not opened", path.display()))?;
        if plan.single_document {
            let mut bytes = Vec::new();
            At::new(file, 0).read_to_end(&mut bytes).with_context(|| format!("reading {}", path.display()))?;
            let (parts, c) = single_document(&bytes, opts, plan, range.as_ref())
                .with_context(|| format!("{} is not a JSON document", path.display()))?;
            cut = c;
            parts
        } else {
            let size = file.metadata().with_context(|| format!("reading {}", path.display()))?.len();
            let n = if size < 4 << 20 { 1 } else { workers(opts.threads) };
            read_lines(path, opts, plan, &board::Board::new(size, n), progress)?
        }
    };
    if let Some(rec) = sidecar::context(path, plan.format) {
        records.insert_first(rec);
    }
    assign_refs(&mut records);
    let behaviour = plan.format.behaviour();
    let links = if behaviour.stops_at_missing_parent { Links::StopAtMissing(behaviour.agent) } else { Links::Bridged };
    let mut h = assemble(records, entries, links);
    if !plan.detected && h.entries.is_empty() {
        return Err(nothing_recognised(path, opts, plan));
    }
    findings.append(&mut h.findings);
    // Cline keeps the failure of a task's last request beside the history: it comes after all of it.
    let (failed, unread) = sidecar::failure(path, plan.format);
    h.entries.extend(failed);
    findings.extend(unread);
    findings.extend(range_unread);
    if plan.format == Format::ClaudeCode {
        findings.extend(fork::findings(path, opts));
    }
    if plan.format == Format::GeminiCli {
        findings.extend(gemini_cleanup::findings(path));
    }
    let mut session = Session {
        file: path.display().to_string(),
        format: plan.format,
        written_by,
        lines,
        entries: h.entries,
        attachments: h.attachments,
        tool_calls: h.tool_calls,
        tool_results: h.tool_results,
        reasoning: h.reasoning,
        findings,
        provider: h.provider,
        model: h.model,
        records: h.records,
        cut,
        store_info: plan.store_info.clone(),
        structure: crate::model::Structure::default(),
    };
    // The history's structure (calls without results, …) is a fact about the file too.
    session.structure = crate::history::check(&session);
    session.findings.extend(crate::history::findings(&session.structure.faults));
    session.findings.sort_by_key(|f| f.line);
    Ok(session)
}

/// An explicit `--format` under which nothing was recognised: an error, not an
/// empty all-clear, naming the format the content looks like.
fn nothing_recognised(path: &Path, opts: &ReadOptions, plan: &Plan) -> anyhow::Error {
    let given = plan.format.name();
    let auto = ReadOptions { format: None, ..opts.clone() };
    let looks = match detect::plan(path, &auto) {
        Ok(p) if p.format != plan.format => {
            format!("the content looks like {0}: pass --format {0} (or --format auto)", p.format.name())
        }
        Ok(_) => "nothing in it is part of a history".to_string(),
        Err(_) => "it does not look like any format session-doctor reads".to_string(),
    };
    let a = crate::text::units::article(given);
    anyhow::anyhow!("{}: read as {given}, nothing in it is {a} {given} record (0 entries); {looks}", path.display())
}

/// Reads the lines of a JSON Lines session, a worker for each range of
/// `board` and for each part of one it takes ([`board`]), and merges them.
fn read_lines(
    path: &Path,
    opts: &ReadOptions,
    plan: &Plan,
    board: &board::Board,
    progress: Option<&(dyn Fn(u64) + Sync)>,
) -> anyhow::Result<Parts> {
    let cap = RecordCap { most: opts.max_records.unwrap_or(MAX_RECORDS), count: AtomicU64::new(0), path };
    let cap = &cap;
    let read = |first: board::Share| -> anyhow::Result<Vec<(u64, Chunk)>> {
        let mut chunks = Vec::new();
        let mut share = Some(first);
        while let Some(s) = share {
            chunks.push((s.start, read_range(path, opts, plan, s, board, progress, cap)?));
            share = board.take();
        }
        Ok(chunks)
    };
    let read: Vec<anyhow::Result<Vec<(u64, Chunk)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = board.first().into_iter().map(|first| s.spawn(move || read(first))).collect();
        // A panic in a worker is a bug: let it surface (tests catch it) rather than pass as an error.
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    let mut chunks = Vec::new();
    for r in read {
        chunks.extend(r?);
    }
    // In file order: each worker's ranges are its first, then those it took.
    chunks.sort_by_key(|c| c.0);
    Ok(merge(chunks.into_iter().map(|c| c.1).collect()))
}

/// What one worker read from its byte range; line numbers are relative to it.
struct Chunk {
    records: Records,
    /// The entries its records index.
    entries: Vec<Entry>,
    findings: Vec<Finding>,
    lines: u64,
    /// The first line ending in CRLF: a fact about the file, told once after the merge.
    crlf: Option<u64>,
    /// [`Parts::written_by`], as the chunk's lines say it.
    written_by: Option<crate::model::Fork>,
}

/// What reading the lines gave: records, the entries they index, findings,
/// the number of lines, and who wrote the session where a line says it.
struct Parts {
    records: Records,
    entries: Vec<Entry>,
    findings: Vec<Finding>,
    lines: u64,
    written_by: Option<crate::model::Fork>,
}

/// Puts chunk-relative line numbers back in file order.
fn merge(mut chunks: Vec<Chunk>) -> Parts {
    // The first chunk's records and entries grow in place (a large vector grows by
    // remapping its pages, not copying them) and each later chunk shrinks as it is
    // moved ([`append_shrinking`]): nothing is held twice (a later chunk freed only
    // once moved whole held the second half of a file's records twice).
    let total: usize = chunks.iter().map(|c| c.records.len()).sum();
    let mut records = chunks.first_mut().map(|c| std::mem::take(&mut c.records)).unwrap_or_default();
    records.reserve_exact(total - records.len());
    let total: usize = chunks.iter().map(|c| c.entries.len()).sum();
    let mut entries = chunks.first_mut().map(|c| std::mem::take(&mut c.entries)).unwrap_or_default();
    entries.reserve_exact(total - entries.len());
    let mut findings = Vec::new();
    let mut base = 0;
    let mut crlf = None;
    let mut written_by = None;
    for (i, c) in chunks.into_iter().enumerate() {
        crlf = crlf.or(c.crlf.map(|l| l + base));
        written_by = written_by.or(c.written_by);
        if i == 0 {
            findings.extend(c.findings);
            base += c.lines;
            continue;
        }
        let shift = entries.len();
        append_shrinking(&mut entries, c.entries, |mut e| {
            e.line += base;
            e
        });
        records.append_shifted(c.records, base, shift);
        for mut f in c.findings {
            f.line += base;
            findings.push(f);
        }
        base += c.lines;
    }
    if let Some(line) = crlf {
        let message = "ends with CRLF (Windows line endings); read as plain newlines".into();
        findings.push(line::finding(line, Severity::Info, "line.crlf", message));
    }
    Parts { records, entries, findings, lines: base, written_by }
}

/// A byte range this large may hold enough lines for its worker's vectors to
/// grow to MBs: they start mapped ([`mapped`]) rather than grow through
/// copies, at the cost of 96 MiB of address space a worker, none of memory.
/// Smaller ranges hold too few lines for their copies to matter, and a small
/// file reserves nothing (which a tight `ulimit -v` would feel).
const MANY_LINES: u64 = 8 << 20;

/// The records all workers have read, against the cap.
struct RecordCap<'a> {
    most: u64,
    count: AtomicU64,
    /// The session, to name.
    path: &'a Path,
}

impl RecordCap<'_> {
    /// Adds `n` records read; an error once they are more than the cap.
    fn add(&self, n: u64) -> anyhow::Result<()> {
        let count = self.count.fetch_add(n, Ordering::Relaxed) + n;
        if count > self.most {
            anyhow::bail!(
                "{}: holds more than {} records, and the history session-doctor keeps costs about 140 bytes a record (600 for a tool call or result), so reading stopped there; pass --max-records N to read on, with the memory that takes",
                self.path.display(),
                self.most
            );
        }
        Ok(())
    }
}

/// Streams the lines that start inside range `share` of the board, up to
/// where the board says it ends (sooner, when another worker takes a part).
fn read_range(
    path: &Path,
    opts: &ReadOptions,
    plan: &Plan,
    board::Share { id, start }: board::Share,
    board: &board::Board,
    progress: Option<&(dyn Fn(u64) + Sync)>,
    cap: &RecordCap<'_>,
) -> anyhow::Result<Chunk> {
    let file = plan.file.as_deref().with_context(|| format!("{} was not opened", path.display()))?;
    // The line that straddles `start` belongs to the previous range.
    let mut pos = start.saturating_sub(1);
    let mut r = lines::Lines::new(At::new(file, pos));
    if start > 0 {
        pos += r.skip_line()?;
    }
    let adapter = plan.format.adapter();
    let mut worker = line::Worker::new(media::Judge::new(opts.depth, &plan.rules), opts.skim);
    let mut chunk = Chunk {
        records: Records::default(),
        entries: Vec::new(),
        findings: Vec::new(),
        lines: 0,
        crlf: None,
        written_by: None,
    };
    if board.end(id).saturating_sub(start) >= MANY_LINES {
        (chunk.records, worker.entries) = (Records::for_many(), mapped());
    }
    let mut counted = 0;
    let mut reserved = board.reserve(id, pos);
    while pos < reserved {
        let Some(buf) = r.next_line().with_context(|| format!("reading {}", path.display()))? else {
            break;
        };
        let n = buf.len();
        let offset = pos;
        pos += n as u64;
        if pos >= reserved {
            reserved = board.reserve(id, pos);
        }
        chunk.lines += 1;
        if let Some(p) = progress {
            p(n as u64);
        }
        let terminated = buf.last() == Some(&b'\n');
        let mut raw: &[u8] = if terminated { &buf[..buf.len() - 1] } else { buf };
        let mut body_offset = offset;
        if let Some(stripped) = raw.strip_suffix(b"\r") {
            raw = stripped;
            chunk.crlf.get_or_insert(chunk.lines);
        }
        if offset == 0
            && let Some(stripped) = raw.strip_prefix(b"\xEF\xBB\xBF")
        {
            raw = stripped;
            body_offset += 3;
            chunk.findings.push(line::finding(
                1,
                Severity::Info,
                "line.bom",
                "starts with a UTF-8 byte-order mark; it is ignored".into(),
            ));
        }
        if let Some(rec) = worker
            .read_line(adapter, raw, chunk.lines, body_offset, terminated, &mut chunk.findings)
            .filter(|r| !r.is_empty())
        {
            chunk.records.push(rec);
            counted += 1;
            if counted == COUNT_EVERY {
                cap.add(std::mem::take(&mut counted))?;
            }
        }
    }
    cap.add(counted)?;
    chunk.entries = worker.entries;
    chunk.written_by = worker.written_by;
    Ok(chunk)
}

/// A file that is one JSON document (a pretty-printed body, a legacy Gemini CLI
/// `.json`, a Cline history): read whole. An array is read element by element,
/// each as a line would be, on the line it starts on (a Cline message, a logged
/// request body: the last request is the history); anything else is one record.
/// Payloads keep their own lines.
/// A finding about the places `at` (offsets in the line's text) of one line.
type LineFinding = fn(u64, &[u8], &[usize]) -> Option<Finding>;

/// Reads a one-document session; `range`: the Cline IDE task's
/// `conversationHistoryDeletedRange`, whose messages become records the
/// provider does not see (and the [`Cut`] it makes, returned).
fn single_document(
    bytes: &[u8],
    opts: &ReadOptions,
    plan: &Plan,
    range: Option<&serde_json::Value>,
) -> anyhow::Result<(Parts, Option<Cut>)> {
    let lines = memchr::memchr_iter(b'\n', bytes).count() as u64 + u64::from(!bytes.ends_with(b"\n"));
    let mut worker = line::Worker::new(media::Judge::new(opts.depth, &plan.rules), opts.skim);
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let offset = (bytes.len() - body.len()) as u64;
    let mut spare = None;
    let text = body;
    let (v, body, cut) = crate::json::Value::parse_tolerant(text, &mut spare)?;
    // Each value nested too deep, and each lone surrogate escape, is a finding
    // on the line it starts on.
    let by_line = |at: &[usize], finding: LineFinding| -> Vec<Finding> {
        at.chunk_by(|&a, &b| memchr::memchr(b'\n', &text[a..b]).is_none())
            .filter_map(|same| {
                let start = memchr::memrchr(b'\n', &text[..same[0]]).map_or(0, |n| n + 1);
                let line = 1 + memchr::memchr_iter(b'\n', &text[..start]).count() as u64;
                finding(line, &text[start..], &same.iter().map(|c| c - start).collect::<Vec<_>>())
            })
            .collect()
    };
    let mut deep = by_line(&cut, |line, _, at| line::too_deep(line, at));
    if !std::ptr::eq(body, text) {
        deep.extend(by_line(&crate::json::splice::lone_surrogates(text), line::lone_surrogates));
    }
    let adapter = plan.format.adapter();
    let Value::Array(items) = &v else {
        let rec = worker.record(adapter, &v, body, 1, offset, true);
        // Each entry on the line its message starts on.
        let starts = adapter.entry_messages(&v).into_iter().map(|m| start_of(m, body));
        for (e, at) in worker.entries[rec.entries.clone()].iter_mut().zip(starts) {
            e.line = 1 + at.map_or(0, |at| memchr::memchr_iter(b'\n', &body[..at]).count() as u64);
        }
        let mut found = worker.take_findings();
        found.append(&mut deep);
        let mut records = Records::default();
        records.push(rec);
        let written_by = worker.written_by;
        return Ok((Parts { records, entries: worker.entries, findings: found, lines, written_by }, None));
    };
    let cut = range.filter(|_| plan.format == crate::model::Format::Cline).and_then(|r| Cut::of(r, items.len()));
    let mut records = Records::default();
    for (i, item) in items.iter().enumerate() {
        let mut rec = worker.record(adapter, item, body, 1, offset, true);
        if cut.is_some_and(|c| c.drops(i)) {
            rec.unit = Unit::Hidden;
        }
        let orphaned = cut.filter(|c| c.orphans(i)).and_then(|_| orphaned_results(&mut rec, item));
        let line = 1 + start_of(item, body).map_or(0, |at| memchr::memchr_iter(b'\n', &body[..at]).count() as u64);
        for e in &mut worker.entries[rec.entries.clone()] {
            e.line = line;
        }
        for mut rec in orphaned.into_iter().chain([rec]) {
            rec.line = line;
            for a in rec.attachments_mut() {
                a.pointer = format!("/{i}{}", a.pointer);
            }
            if let Some(x) = rec.extra.as_mut() {
                for r in &mut x.reasoning {
                    r.pointer = format!("/{i}{}", r.pointer);
                }
            }
            if !rec.is_empty() {
                records.push(rec);
            }
        }
    }
    let mut found = worker.take_findings();
    found.append(&mut deep);
    let written_by = worker.written_by;
    Ok((Parts { records, entries: worker.entries, findings: found, lines, written_by }, cut))
}

/// The first message after a [`Cut`] as Cline sends it: without its tool
/// results, whose calls were cut (`item` is the message). Their attachments
/// move to a record of their own that the provider does not see, placed
/// before the message's (Cline writes tool results first), so that they are
/// mirrors of the same bytes sent elsewhere and their refs keep their order.
fn orphaned_results(rec: &mut LineRecord, item: &Value<'_>) -> Option<LineRecord> {
    let x = rec.extra.as_mut()?;
    if item.get("role").as_str() != Some("user") {
        return None;
    }
    x.results = Box::default();
    let (gone, kept): (Vec<_>, Vec<_>) =
        std::mem::take(&mut x.attachments).into_iter().partition(|a| cline::orphaned_block(item, &a.pointer));
    x.attachments = kept.into();
    let extra = Extra { attachments: gone.into(), ..Extra::default() };
    let end = rec.entries.start;
    let hidden = LineRecord {
        line: rec.line,
        offset: rec.offset,
        len: rec.len,
        unit: Unit::Hidden,
        entries: end..end,
        extra: Some(Box::new(extra)),
    };
    hidden.extra.as_ref().is_some_and(|x| !x.attachments.is_empty()).then_some(hidden)
}

/// Where a parsed value starts in the text it borrows from, as near as its
/// first borrowed string (an object's first key) tells.
fn start_of(v: &Value<'_>, text: &[u8]) -> Option<usize> {
    let at = |s: &str| (s.as_ptr() as usize).checked_sub(text.as_ptr() as usize).filter(|&o| o < text.len());
    match v {
        Value::Str(std::borrow::Cow::Borrowed(s)) => at(s),
        Value::Object(m) => m.iter().find_map(|(k, v)| match k {
            std::borrow::Cow::Borrowed(k) => at(k),
            std::borrow::Cow::Owned(_) => start_of(v, text),
        }),
        Value::Array(a) => a.iter().find_map(|v| start_of(v, text)),
        _ => None,
    }
}

/// JSON Lines taken out of a store, read as a file's lines would be.
fn in_memory(path: &Path, bytes: &[u8], opts: &ReadOptions, plan: &Plan) -> Parts {
    let mut worker = line::Worker::new(media::Judge::new(opts.depth, &plan.rules), opts.skim);
    let (mut records, mut findings) = (Records::default(), Vec::new());
    let adapter = plan.format.adapter();
    let mut n = 0;
    let mut offset = 0u64;
    for raw in bytes.split_inclusive(|b| *b == b'\n') {
        n += 1;
        let body = raw.strip_suffix(b"\n").unwrap_or(raw);
        if let Some(rec) = worker.read_line(adapter, body, n, offset, true, &mut findings).filter(|r| !r.is_empty()) {
            records.push(rec);
        }
        offset += raw.len() as u64;
    }
    // A store's lines carry no version: its place says whose it is.
    let written_by = worker.written_by.or_else(|| match plan.format {
        Format::Opencode => crate::formats::opencode::fork_of_store(path),
        _ => None,
    });
    Parts { records, entries: worker.entries, findings, lines: n, written_by }
}

/// Most encoded (base64) bytes read back from the session for one attachment
/// ([`read_payload`]): a preview or a fit of more is not worth the memory.
const MAX_PAYLOAD_READ: u64 = 96 << 20;

/// Reads an attachment's decoded bytes straight from its span in the session
/// file (as [`reexamine`] does), so a page or a fit never needs
/// the whole session in memory.
pub fn read_payload(source: &Source, a: &crate::model::Attachment) -> Result<Vec<u8>, String> {
    if a.encoding == crate::model::Encoding::Reference {
        return Err("the bytes are not in the session (it holds a reference)".into());
    }
    if a.encoding == crate::model::Encoding::Bytes {
        return Err("the bytes are a list of numbers in the session (Kiro CLI), which is not read back".into());
    }
    let span = a.span.ok_or("the payload is stored escaped in the file; no preview")?;
    if span.len > MAX_PAYLOAD_READ {
        return Err(format!("too large to preview ({} MB of base64)", span.len >> 20));
    }
    let text = source.read_range(span.offset, span.len).map_err(|e| format!("cannot read the session again: {e}"))?;
    let mut bytes = Vec::new();
    crate::media::decode_base64_checked(&text, &mut bytes).map_err(|p| p.message)?;
    Ok(bytes)
}

/// Examines one attachment's bytes again at `depth`, read straight from its
/// span in the session's bytes: `diagnose` deep-checks its few suspects this
/// way after a structural pass, instead of decoding the whole session deeply.
/// `None` when the payload has no span (it was unescaped, or is a reference)
/// or cannot be read.
pub fn reexamine(source: &Source, a: &crate::model::Attachment, depth: Depth) -> Option<crate::media::Facts> {
    let span = a.span?;
    let text = source.read_range(span.offset, span.len).ok()?;
    let mut bytes = Vec::new();
    crate::media::decode_base64_checked(&text, &mut bytes).ok()?;
    Some(crate::media::Facts::examine(&bytes, Some(text.len()), depth))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Claude Code session of `size` bytes or more: short lines and lines with
    /// an image, so that ranges start inside lines of every length.
    fn session(size: usize) -> tempfile::NamedTempFile {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
        let mut text = String::new();
        let mut n = 0;
        while text.len() < size {
            n += 1;
            let (uuid, parent) = (format!("u{n}"), format!("u{}", n - 1));
            let line = if n % 7 == 0 {
                // Padding after the PNG's end: a long payload, a warning, still one image.
                let data = format!("{png}{}", "A".repeat(200_000 + n * 13));
                format!(
                    r#"{{"type":"user","uuid":"{uuid}","parentUuid":"{parent}","message":{{"role":"user","content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}]}}}}"#
                )
            } else {
                format!(
                    r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":"{parent}","message":{{"role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"line {n}"}}]}}}}"#
                )
            };
            text.push_str(&line);
            text.push('\n');
        }
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn ranges_shared_anywhere_read_as_one_range_does() {
        let f = session(40 << 20);
        let path = f.path();
        let opts = ReadOptions::default();
        let plan = plan(path, &opts).unwrap();
        let size = std::fs::metadata(path).unwrap().len();
        let whole = read_lines(path, &opts, &plan, &board::Board::new(size, 1), None).unwrap();
        // Cut in parts before any is read: each split lands inside some line.
        let shared = board::Board::new(size, 3);
        let mut parts = 3;
        while shared.take().is_some() {
            parts += 1;
        }
        assert!(parts >= 8, "{parts} parts");
        let parts = read_lines(path, &opts, &plan, &shared, None).unwrap();
        // The history assembled: a range's first record names its parent where
        // a later one says "the previous record", which is the same link.
        let history = |Parts { mut records, entries, findings, lines, .. }: Parts| {
            assert!(records.len() > 1000, "{} records", records.len());
            assign_refs(&mut records);
            let h = assemble(records, entries, Links::Bridged);
            let h = (h.entries, h.attachments, h.tool_calls, h.tool_results, h.records, h.provider, h.findings);
            format!("{h:#?} {findings:#?} {lines}")
        };
        let (a, b) = (history(parts), history(whole));
        if let Some(at) = a.lines().zip(b.lines()).position(|(x, y)| x != y) {
            let show = |s: &str| s.lines().skip(at.saturating_sub(8)).take(12).collect::<Vec<_>>().join("\n");
            panic!("differs at line {at}:\n{}\n--- one range:\n{}", show(&a), show(&b));
        }
        assert_eq!(a.len(), b.len());
    }
}
