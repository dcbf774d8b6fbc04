//! Before reading: which format, which provider's rules, one document or lines.
//!
//! The first lines are parsed one at a time and scored by every adapter, so
//! detection holds one line, however long, and never a copy of it.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use anyhow::{Context as _, bail};

use crate::formats::{Adapter, LineOut};
use crate::json::Value;
use crate::media::rules::Rules;
use crate::model::Format;

use super::lines::Lines;
use super::skim::{self, Skim};
use super::{Plan, ReadOptions};

/// Lines and bytes looked at to tell the format.
const SNIFF_LINES: usize = 32;
const SNIFF_BYTES: u64 = 64 << 20;

/// How a file that is not a session's UTF-8 text can start, and the way out.
const NOT_A_SESSION: &[(&[u8], &str)] = &[
    (b"\xFF\xFE", "is UTF-16 text (PowerShell's `>` writes it); convert it first: `iconv -f UTF-16 -t UTF-8`"),
    (b"\xFE\xFF", "is UTF-16 text; convert it first: `iconv -f UTF-16 -t UTF-8`"),
    (b"\x1F\x8B", "is compressed (gzip); decompress it first: `zcat FILE > session.jsonl`"),
    (b"\x28\xB5\x2F\xFD", "is compressed (zstd); decompress it first: `zstdcat FILE > session.jsonl`"),
];

/// Whether the start of a file is binary rather than text: session text (JSON
/// in UTF-8) never holds a NUL byte outside an escape.
fn is_binary(start: &[u8]) -> bool {
    memchr::memchr(0, &start[..start.len().min(8192)]).is_some()
}

/// What the first lines say about each format.
struct Evidence {
    scores: [u32; Format::ALL.len()],
    /// The first provider each format's adapter finds named (directly or by model).
    providers: [Option<&'static str>; Format::ALL.len()],
    lines: usize,
}

impl Evidence {
    fn new() -> Evidence {
        Evidence { scores: [0; Format::ALL.len()], providers: [None; Format::ALL.len()], lines: 0 }
    }

    fn weigh(&mut self, v: &Value<'_>) {
        self.lines += 1;
        for (i, f) in Format::ALL.iter().enumerate() {
            let a = f.adapter();
            let s = a.sniff(v);
            self.scores[i] += s;
            if s > 0 && self.providers[i].is_none() {
                self.providers[i] = provider_named(a, v);
            }
        }
    }

    fn best(&self) -> Option<Format> {
        let (i, &score) = self.scores.iter().enumerate().max_by_key(|&(i, s)| (*s, usize::MAX - i))?;
        (score > 0).then(|| Format::ALL[i])
    }

    fn provider(&self, f: Format) -> Option<&'static str> {
        Format::ALL.iter().position(|&g| g == f).and_then(|i| self.providers[i])
    }
}

/// The file is not a session any agent here wrote (not JSON, empty, another
/// tool's log, no format recognised): a walk passes over it. Every other error
/// of [`plan`] is about the file's access or the user's settings, and is told.
#[derive(Debug)]
pub struct NotASession(pub String);

impl std::fmt::Display for NotASession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotASession {}

/// Returns early with a [`NotASession`] error.
macro_rules! not_a_session {
    ($($arg:tt)*) => { return Err(NotASession(format!($($arg)*)).into()) };
}

/// Decides how to read `path`.
pub fn plan(path: &Path, opts: &ReadOptions) -> anyhow::Result<Plan> {
    // A FIFO or a device can be read once, and a second open blocks for ever
    // once its writer is gone: the reader reads a file more than once.
    if let Ok(m) = std::fs::metadata(path)
        && !m.is_file()
        && !m.is_dir()
    {
        bail!(
            "{} is not a regular file (a pipe, a socket or a device): session-doctor reads a session more than once; save it to a file, or pipe it to `-`",
            crate::text::sanitize_path(path)
        );
    }
    if let Some(store) = super::opencode_store::open(path, opts)? {
        let format = store.format;
        if let Some(f) = opts.format.filter(|f| *f != format) {
            bail!("{} is {}'s store; it cannot be read as {}", path.display(), format.name(), f.name());
        }
        return finish(path, opts, format, true, &Evidence::new(), Content::Memory(store));
    }
    let spool = super::compressed::spool(path)?;
    let mut plan = plan_text(path, spool.as_deref().map_or(path, |s| s.as_ref()), opts)?;
    plan.spool = spool;
    Ok(plan)
}

/// Decides how to read the session at `path` from its text at `text`: the file
/// itself, or its decompressed copy. Messages name `path`.
fn plan_text(path: &Path, text: &Path, opts: &ReadOptions) -> anyhow::Result<Plan> {
    // The one open of the text: the reader and every later stage read this handle.
    let file = std::sync::Arc::new(File::open(text).with_context(|| format!("opening {}", path.display()))?);
    let mut r = Lines::new(super::At::new(&*file, 0));
    let mut ev = Evidence::new();
    let (mut seen, mut total) = (0, 0u64);
    // Does the first line leave a value open (`[`, `{`, a pretty-printed body), or
    // hold an array? Then the file may be one document.
    let mut maybe_document = None;
    let mut one_line_export = false;
    while seen < SNIFF_LINES && total < SNIFF_BYTES {
        let Some(line) = r.next_line().with_context(|| format!("reading {}", path.display()))? else { break };
        if let Some((_, why)) = NOT_A_SESSION.iter().find(|(magic, _)| total == 0 && line.starts_with(magic)) {
            // The way out names the file itself, quoted as a shell needs it.
            let why = why.replace("FILE", &crate::text::shell_quote(&path.display().to_string()));
            not_a_session!("{} {why}", path.display());
        }
        if total == 0 && is_binary(line) {
            not_a_session!("{} is a binary file (it holds NUL bytes), not a session's JSON text", path.display());
        }
        total += line.len() as u64;
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line).trim_ascii();
        if line.is_empty() {
            continue;
        }
        seen += 1;
        let mut spare = None;
        let line = skim::cut(line, &Skim::default());
        match Value::parse_tolerant(&line, &mut spare) {
            Ok((v, ..)) => {
                maybe_document.get_or_insert(v.is_array());
                if v.is_object() {
                    ev.weigh(&v);
                }
                // An opencode export written on one line (`jq -c`): one document all the same.
                one_line_export |= seen == 1 && v.get("messages").is_array() && v.get("info").is_object();
            }
            Err(e) => {
                maybe_document.get_or_insert(e.is_eof());
            }
        }
    }
    // Whole-document first: a file that parses as one JSON value is read as one,
    // however it is laid out (pretty-printed, one element per line); only then
    // as JSON Lines.
    let mut document = None;
    let one_line_export = one_line_export && seen == 1 && opts.format.is_none_or(|f| f == Format::Opencode);
    if maybe_document == Some(true) || one_line_export {
        let mut whole = Vec::new();
        super::At::new(&*file, 0).read_to_end(&mut whole).with_context(|| format!("reading {}", path.display()))?;
        let body = whole.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&whole);
        let mut spare = None;
        match Value::parse_tolerant(body, &mut spare) {
            Ok((v, ..)) => {
                ev = Evidence::new();
                weigh_document(&mut ev, &v);
                drop(v);
                document = Some(whole);
            }
            Err(e) if ev.lines == 0 => {
                not_a_session!("{} is neither JSON Lines nor one JSON document: {e}", path.display())
            }
            Err(_) => {}
        }
    }
    let (format, detected) = match opts.format {
        Some(f) => (f, false),
        None => match ev.best() {
            Some(f) => (f, true),
            None if seen == 0 => not_a_session!("{}: the file is empty; there is no session to read", path.display()),
            None => not_a_session!(
                "{}: cannot tell which agent wrote this file (looked at its {}); pass --format with one of: {}",
                path.display(),
                if seen == 1 { "first line".to_string() } else { format!("first {seen} lines") },
                Format::ALL.map(Format::name).join(", ")
            ),
        },
    };
    let source = match document {
        Some(bytes) => Content::Document(bytes, file),
        None => Content::Lines(file),
    };
    finish(path, opts, format, detected, &ev, source)
}

/// How the content reaches the reader (not [`super::Source`], the bytes later stages read again).
enum Content {
    /// JSON Lines, in the file opened.
    Lines(std::sync::Arc<File>),
    /// One JSON document: its bytes, and the file they were read from.
    Document(Vec<u8>, std::sync::Arc<File>),
    /// A session taken out of a store (opencode's database or storage tree, pi's SQLite store), as JSON Lines.
    Memory(super::sqlite::Store),
}

/// Weighs one document: an array by its first elements (a Cline history, logged
/// request bodies), anything else as a line.
fn weigh_document(ev: &mut Evidence, v: &Value<'_>) {
    if v.is_array() {
        for item in v.items().iter().take(SNIFF_LINES).filter(|i| i.is_object()) {
            ev.weigh(item);
        }
    } else {
        ev.weigh(v);
    }
}

/// The rest of the plan once the format is known: which provider's rules.
fn finish(
    path: &Path,
    opts: &ReadOptions,
    format: Format,
    detected: bool,
    ev: &Evidence,
    source: Content,
) -> anyhow::Result<Plan> {
    let provider = match (&opts.provider, &opts.model) {
        (Some(p), _) => Some(p.as_str()),
        (None, Some(m)) => Some(crate::provider::for_model(m).with_context(|| {
            format!(
                "cannot tell which provider serves model `{m}`; pass --provider with one of: {}",
                Rules::names().join(", ")
            )
        })?),
        (None, None) => None,
    };
    let mut rules = match provider {
        Some(p) => Rules::builtin(p)
            .with_context(|| format!("unknown provider `{p}`; expected one of: {}", Rules::names().join(", ")))?,
        // The provider the session names last (the next request goes there), else
        // the first it names, else the format's own.
        None => match &source {
            Content::Lines(file) => tail_provider(path, file, format)?,
            Content::Document(bytes, _) => document_provider(format, bytes),
            Content::Memory(store) => {
                let size = store.lines.len() as u64;
                last_provider(store.lines.as_slice(), size, size, format)?
            }
        }
        .or_else(|| super::sidecar::provider(path, format))
        .or_else(|| ev.provider(format))
        .or_else(|| format.default_provider())
        .and_then(Rules::builtin)
        .unwrap_or_else(Rules::generic),
    };
    if let Some(file) = &opts.rules_file {
        rules = rules.with_overrides_from(file)?;
    }
    let (single_document, memory, note, session, store_info, file) = match source {
        Content::Lines(file) => (false, None, None, None, None, Some(file)),
        Content::Document(_, file) => (true, None, None, None, None, Some(file)),
        Content::Memory(store) => (false, Some(store.lines), store.note, Some(store.session), store.info, None),
    };
    Ok(Plan { format, detected, rules, single_document, memory, note, session, store_info, spool: None, file })
}

/// How much of the file's end is looked at for the provider in use now.
const TAIL_BYTES: u64 = 8 << 20;

/// The last provider a document names: an array's from its last element back.
fn document_provider(format: Format, bytes: &[u8]) -> Option<&'static str> {
    let v = Value::parse(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)).ok()?;
    let a = format.adapter();
    if v.is_array() { v.items().iter().rev().find_map(|i| provider_named(a, i)) } else { provider_named(a, &v) }
}

/// The last provider the lines at the end of the file name, looking from the
/// last line backwards (usually one or two lines parse).
fn tail_provider(path: &Path, file: &File, format: Format) -> anyhow::Result<Option<&'static str>> {
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    last_provider(file, size, TAIL_BYTES, format).with_context(|| format!("reading {}", path.display()))
}

/// Bytes read at a time, from the end back.
const BACK_BLOCK: u64 = 1 << 20;

/// Hands `each` the lines of the last `window` bytes of `file` (of `size`
/// bytes), the last first, until it returns true. A line the window cuts is
/// not handed on. Read back a block at a time into one buffer as long as the
/// longest line: the window is megabytes of payloads, and the provider is
/// usually named on the last line or two.
fn last_lines(
    file: &(impl super::ReadAt + ?Sized),
    size: u64,
    window: u64,
    mut each: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    let floor = size.saturating_sub(window);
    // The bytes from `pos` on not handed on yet: a partial line, then whole ones.
    let (mut buf, mut pos) = (Vec::new(), size);
    loop {
        while let Some(i) = memchr::memrchr(b'\n', &buf) {
            if each(&buf[i + 1..]) {
                return Ok(());
            }
            buf.truncate(i);
        }
        if pos == floor {
            if pos == 0 {
                each(&buf);
            }
            return Ok(());
        }
        let n = usize::try_from(BACK_BLOCK.min(pos - floor)).unwrap_or(usize::MAX);
        pos -= n as u64;
        let kept = buf.len();
        buf.resize(kept + n, 0);
        buf.copy_within(..kept, n);
        file.read_exact_at(&mut buf[..n], pos)?;
    }
}

/// The last provider the last `window` bytes of `text` name, looking from the end.
fn last_provider(
    text: &(impl super::ReadAt + ?Sized),
    size: u64,
    window: u64,
    format: Format,
) -> std::io::Result<Option<&'static str>> {
    let mut found = None;
    last_lines(text, size, window, |line| {
        let line = skim::cut(line.trim_ascii(), &Skim::default());
        found = Value::parse(&line).ok().and_then(|v| provider_named(format.adapter(), &v));
        found.is_some()
    })?;
    Ok(found)
}

/// The provider a line names, directly or through a model id it mentions.
fn provider_named(adapter: &dyn Adapter, v: &Value<'_>) -> Option<&'static str> {
    let mut out = LineOut::default();
    adapter.read(v, &mut out);
    let mut named = out.context_provider.iter().chain(out.entries.iter().filter_map(|e| e.provider.as_ref()));
    if let Some(p) = named.find_map(|p| crate::provider::canonical(p)) {
        return Some(p);
    }
    let mut models = out.context_model.iter().chain(out.entries.iter().filter_map(|e| e.model.as_ref()));
    models.find_map(|m| crate::provider::for_model(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines `last_lines` hands on, all of them.
    fn handed(text: &[u8], window: u64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        last_lines(text, text.len() as u64, window, |l| {
            out.push(l.to_vec());
            false
        })
        .unwrap();
        out
    }

    #[test]
    fn last_lines_come_last_first_and_whole() {
        let long = vec![b'x'; usize::try_from(2 * BACK_BLOCK).unwrap() + 5];
        let text = [b"first".as_slice(), b"\n", &long, b"\nlast\n"].concat();
        let size = text.len() as u64;
        assert_eq!(handed(&text, size), [b"".to_vec(), b"last".to_vec(), long.clone(), b"first".to_vec()]);
        // A window that cuts the first line leaves it out; one that ends inside the long line, it too.
        assert_eq!(handed(&text, size - 2), [b"".to_vec(), b"last".to_vec(), long.clone()]);
        assert_eq!(handed(&text, 100), [b"".to_vec(), b"last".to_vec()]);
        // It stops where it is told to.
        let mut seen = 0;
        last_lines(text.as_slice(), size, size, |l| {
            seen += 1;
            l == b"last"
        })
        .unwrap();
        assert_eq!(seen, 2);
    }
}
