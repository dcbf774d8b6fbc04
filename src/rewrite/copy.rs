//! `repair`'s writer: the session copied record by record into a new file,
//! the rewrite's edits spliced into the records they touch, the new identity
//! written where the agent keeps it. Memory stays at one line.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::Context as _;

use crate::atomic::{self, Existing};
use crate::formats::Format;

use super::identity::{self, Identity};
use super::{Rewrite, edits, splice};

/// What a repair wrote.
#[derive(Clone, Debug)]
pub struct Written {
    pub identity: Identity,
    pub lines: u64,
    /// Records changed by the rewrite.
    pub touched: u64,
    /// Lines left out: dropped by the rewrite, or damaged (cut short, not JSON).
    pub dropped: Vec<u64>,
}

/// Copies `src` (read as `format`) to a new session with `rewrite` applied.
/// `damaged` are lines the reader could not read: they are left out.
pub fn repair(
    src: &Path,
    format: Format,
    single_document: bool,
    rewrite: &Rewrite,
    damaged: &[u64],
    dir: Option<&Path>,
) -> anyhow::Result<Written> {
    let open = || File::open(src).with_context(|| format!("opening {}", src.display()));
    let mut first = Vec::new();
    BufReader::new(open()?).read_until(b'\n', &mut first)?;
    let first_record = if single_document { whole(src)? } else { first };
    let identity = identity::new(format, src, dir, &first_record);
    let mut w = Written { identity, lines: 0, touched: 0, dropped: Vec::new() };
    let target = w.identity.path.clone();
    atomic::write(&target, Existing::Keep, |out| {
        if single_document {
            let text = whole(src)?;
            let body_at = if text.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
            let body = &text[body_at..];
            let mut e = rewrite
                .ops
                .get(&1)
                .map_or_else(|| Some(Vec::new()), |ops| edits(format.name(), body, body_at as u64, ops))
                .unwrap_or_default();
            e.extend(identity::edit(format, &w.identity, body, true));
            w.touched += u64::from(!e.is_empty());
            out.write_all(&text[..body_at])?;
            out.write_all(&splice::apply(body, e))?;
            w.lines = memchr::memchr_iter(b'\n', body).count() as u64;
            return Ok(());
        }
        let mut reader = BufReader::with_capacity(1 << 20, open()?);
        let mut buf = Vec::new();
        let (mut line, mut offset) = (0u64, 0u64);
        loop {
            buf.clear();
            if reader.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            line += 1;
            let at = offset;
            offset += buf.len() as u64;
            if damaged.binary_search(&line).is_ok() {
                w.dropped.push(line);
                continue;
            }
            let newline = buf.last() == Some(&b'\n');
            let text = if newline { &buf[..buf.len() - 1] } else { &buf[..] };
            let mut e = match rewrite.ops.get(&line) {
                Some(ops) => match edits(format.name(), text, at, ops) {
                    Some(e) => e,
                    None => {
                        w.dropped.push(line);
                        continue;
                    }
                },
                None => Vec::new(),
            };
            let rewritten = !e.is_empty();
            e.extend(identity::edit(format, &w.identity, text, line == 1));
            if e.is_empty() {
                out.write_all(&buf)?;
            } else {
                w.touched += u64::from(rewritten);
                out.write_all(&splice::apply(text, e))?;
                out.write_all(b"\n")?;
            }
            w.lines += 1;
        }
        Ok(())
    })?;
    Ok(w)
}

fn whole(src: &Path) -> anyhow::Result<Vec<u8>> {
    let mut v = Vec::new();
    File::open(src).and_then(|mut f| f.read_to_end(&mut v)).with_context(|| format!("reading {}", src.display()))?;
    Ok(v)
}
