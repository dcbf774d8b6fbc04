//! The overlay: the user's decisions about a session, kept beside it.
//!
//! A session file is never written. What the user decides (exclude this
//! attachment, include it again) is an event appended to a sidecar log,
//! `<session>.doctor` — JSON Lines, but never named `.jsonl`, so no agent
//! mistakes it for a session. Each event names the attachments by ref *and*
//! by sha256, so an exclusion still finds its bytes when the agent re-writes
//! records or line numbers shift.
//!
//! Every write takes an exclusive lock (`<overlay>.lock`), re-reads the
//! overlay under it, and replaces the file atomically: two `exclude` runs at
//! once both land, and a crash leaves the old overlay or the new one.
//!
//! The overlay and its lock sit in a folder an agent (or anyone) writes to, so
//! neither is trusted to be what its name says: both are opened without
//! following a symbolic link and must be regular files (a link would copy
//! another file's bytes into the overlay or create a file where it points; a
//! device or a FIFO would be read forever), and the overlay has a size cap.

use std::fs::{File, OpenOptions};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::alias::Input;
use crate::atomic::{self, Existing};
use crate::model::{Attachment, Session};

/// The largest overlay read: a decision is a few hundred bytes, so this is
/// tens of thousands of them; anything larger is not an overlay.
pub const MAX_BYTES: u64 = 16 << 20;

/// The event that excludes attachments.
pub const EXCLUDED: &str = "attachments.excluded";
/// The event that includes them again (`exclude --undo`).
pub const INCLUDED: &str = "attachments.included";
/// The event that makes `preview` and `repair` fit the context window
/// (`exclude --fit-context`), with the window it names, if any.
pub const CONTEXT_FITTED: &str = "context.fitted";
/// The event that stops it (`exclude --fit-context --undo`).
pub const CONTEXT_UNFITTED: &str = "context.unfitted";

/// One attachment as an event names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Named {
    #[serde(rename = "ref")]
    pub reference: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Named {
    pub fn of(a: &Attachment) -> Named {
        Named {
            reference: a.reference.clone(),
            sha256: a.sha256.clone(),
            mime: a.mime_detected.clone().or_else(|| a.mime_declared.clone()),
            name: a.name.clone().or_else(|| a.url.clone()),
        }
    }

    /// The attachments of `session` this names: the one at its ref when that
    /// still holds the same bytes, else every attachment with its bytes.
    pub fn find(&self, attachments: &[Attachment]) -> Vec<usize> {
        let same_bytes = |a: &Attachment| self.sha256.is_none() || a.sha256 == self.sha256;
        let at_ref: Vec<usize> = (0..attachments.len())
            .filter(|&i| attachments[i].reference == self.reference && same_bytes(&attachments[i]))
            .collect();
        if !at_ref.is_empty() || self.sha256.is_none() {
            return at_ref;
        }
        (0..attachments.len()).filter(|&i| attachments[i].sha256 == self.sha256).collect()
    }
}

/// One line of the overlay.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Event {
    pub event: String,
    /// When, as RFC 3339 UTC.
    pub at: String,
    pub attachments: Vec<Named>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// [`CONTEXT_FITTED`]: the window `--context-tokens` named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
}

impl Event {
    pub fn new(event: &str, attachments: Vec<Named>, reason: Option<String>) -> Event {
        Event { event: event.to_string(), at: crate::clock::now_rfc3339(), attachments, reason, context_tokens: None }
    }
}

/// An overlay as read: its events, in order, and what could not be read.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    pub path: PathBuf,
    pub events: Vec<Event>,
    /// Lines that were not events (a torn last line, an edit by hand), with their number.
    pub skipped: Vec<(u64, String)>,
}

/// Where the overlay of `session` lives by default: beside it, `<session>.doctor`.
pub fn default_path(session: &Path) -> PathBuf {
    let mut name = session.file_name().map(std::ffi::OsStr::to_os_string).unwrap_or_default();
    name.push(".doctor");
    session.with_file_name(name)
}

impl Overlay {
    /// Reads an overlay; a missing file is an empty overlay. Lines that are
    /// not events are skipped and remembered, never fatal: a torn last line
    /// from a crash must not lose the decisions before it.
    pub fn load(path: &Path) -> anyhow::Result<Overlay> {
        let mut o = Overlay { path: path.to_path_buf(), ..Overlay::default() };
        let Some(text) = read_bytes(path)? else { return Ok(o) };
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Event>(line) {
                Ok(e) => o.events.push(e),
                Err(e) => o.skipped.push((i as u64 + 1, e.to_string())),
            }
        }
        Ok(o)
    }

    /// The attachments excluded now: every exclusion not undone by a later inclusion.
    pub fn excluded(&self) -> Vec<Named> {
        // A list with holes and an index into it: a hostile overlay of many
        // entries costs one pass, not one search of the list per entry.
        let mut out: Vec<Option<&Named>> = Vec::new();
        let mut at: std::collections::HashMap<(&str, Option<&str>), usize> = std::collections::HashMap::new();
        for e in &self.events {
            for n in &e.attachments {
                let key = (n.reference.as_str(), n.sha256.as_deref());
                match e.event.as_str() {
                    EXCLUDED if !at.contains_key(&key) => {
                        at.insert(key, out.len());
                        out.push(Some(n));
                    }
                    INCLUDED => {
                        if let Some(i) = at.remove(&key) {
                            out[i] = None;
                        }
                    }
                    _ => {}
                }
            }
        }
        out.into_iter().flatten().cloned().collect()
    }

    /// Whether `preview` and `repair` fit the context window by the overlay's
    /// decision (the latest of [`CONTEXT_FITTED`] and [`CONTEXT_UNFITTED`]),
    /// and the window it names: `Some(window)` when they do.
    pub fn fit_context(&self) -> Option<Option<u64>> {
        let last = (self.events.iter().rev()).find(|e| e.event == CONTEXT_FITTED || e.event == CONTEXT_UNFITTED)?;
        (last.event == CONTEXT_FITTED).then_some(last.context_tokens)
    }

    /// Marks the session's excluded attachments (`Attachment::excluded`).
    pub fn apply(&self, session: &mut Session) {
        for n in self.excluded() {
            for i in n.find(&session.attachments) {
                session.attachments[i].excluded = true;
            }
        }
    }

    /// Under the overlay's lock: reads it again, asks `decide` for the event
    /// to append (`None`: nothing to change, nothing is written), and writes
    /// the overlay with it, atomically.
    /// `reads` are the files the command reads (the session): the overlay may name none of them.
    pub fn update(
        path: &Path,
        reads: &[Input],
        decide: impl FnOnce(&Overlay) -> Option<Event>,
    ) -> anyhow::Result<Option<Event>> {
        let lock_path = {
            let mut n = path.as_os_str().to_os_string();
            n.push(".lock");
            PathBuf::from(n)
        };
        // Neither the overlay nor its lock may be a file the command reads:
        // refused before the lock is created or opened for writing.
        crate::alias::refuse_aliases(path, reads)?;
        crate::alias::refuse_aliases(&lock_path, reads)?;
        let lock = open_regular(&lock_path, "the overlay lock", true)?;
        wait_for(&lock, &lock_path)?;
        let current = Overlay::load(path)?;
        let old = read_bytes(path)?.unwrap_or_default();
        // Only an overlay is appended to: a file of other lines (a session given
        // as `--overlay`) is not rewritten. A torn last line is an overlay's.
        let blank = |l: &[u8]| l.iter().all(u8::is_ascii_whitespace);
        let last = old.split(|&b| b == b'\n').enumerate().filter(|(_, l)| !blank(l)).last().map(|(i, _)| i as u64 + 1);
        let foreign = current.skipped.iter().any(|(line, _)| Some(*line) != last)
            || (current.events.is_empty() && last.is_some());
        if foreign {
            let (line, why) = current.skipped.first().cloned().unwrap_or_default();
            anyhow::bail!(
                "{} is not an overlay (line {line}: {why}); session-doctor appends only to its own overlays, and leaves this file as it is",
                shown(path)
            );
        }
        let Some(event) = decide(&current) else { return Ok(None) };
        atomic::write(path, Existing::Replace, reads, |w| {
            w.write_all(&old)?;
            if !old.is_empty() && !old.ends_with(b"\n") {
                // A torn last line stays what it was: its own (skipped) line.
                w.write_all(b"\n")?;
            }
            serde_json::to_writer(&mut *w, &event)?;
            w.write_all(b"\n")?;
            Ok(())
        })?;
        drop(lock);
        Ok(Some(event))
    }
}

/// How long an update waits for another process's hold on the overlay lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Takes the overlay lock; held by another process, says so once and waits
/// up to [`LOCK_WAIT`], then gives up rather than hang behind a stuck holder.
fn wait_for(lock: &File, path: &Path) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let mut told = false;
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", shown(path)));
            }
        }
        if !told {
            eprintln!("session-doctor: waiting for {}: another process is changing the overlay", shown(path));
            told = true;
        }
        if start.elapsed() > LOCK_WAIT {
            anyhow::bail!(
                "{} stayed locked by another process for {} s; nothing was written (try again once it is done)",
                shown(path),
                LOCK_WAIT.as_secs()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The overlay's bytes, `None` when there is none; a link, a special file or
/// one over [`MAX_BYTES`] is refused, never read through.
fn read_bytes(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    let file = match open_regular(path, "the overlay", false) {
        Ok(f) => f,
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let mut text = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut text)
        .with_context(|| format!("cannot read the overlay {}", shown(path)))?;
    if text.len() as u64 > MAX_BYTES {
        anyhow::bail!(
            "the overlay {} is larger than {} MiB; an overlay holds a few decisions, so this is not one: pass --overlay with the right file",
            shown(path),
            MAX_BYTES >> 20
        );
    }
    Ok(Some(text))
}

/// Opens `path` (`what` it is, for the error) without following a symbolic
/// link and without blocking on a FIFO; anything but a regular file is refused.
/// `create`: open for writing, creating it (the lock).
fn open_regular(path: &Path, what: &str, create: bool) -> anyhow::Result<File> {
    let mut o = OpenOptions::new();
    if create {
        o.create(true).truncate(false).write(true);
    } else {
        o.read(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        o.custom_flags(flags.bits().cast_signed());
    }
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        anyhow::bail!("{what} {} is a symbolic link; session-doctor does not follow it", shown(path));
    }
    let file = match o.open(path) {
        Ok(f) => f,
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => anyhow::bail!(
            "{what} {} is a symbolic link; session-doctor does not follow it (it would read or create the file it points to): remove the link",
            shown(path)
        ),
        Err(e) => return Err(anyhow::Error::new(e).context(format!("cannot open {what} {}", shown(path)))),
    };
    let meta = file.metadata().with_context(|| format!("cannot read {what} {}", shown(path)))?;
    if !meta.is_file() {
        anyhow::bail!("{what} {} is not a regular file (a folder, a device or a pipe); it is refused", shown(path));
    }
    Ok(file)
}

fn shown(path: &Path) -> String {
    crate::text::sanitize_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_keeps_the_decisions_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl.doctor");
        let named = Named { reference: "L3.1".into(), sha256: Some("ab".into()), mime: None, name: None };
        let ev = Event::new(EXCLUDED, vec![named.clone()], None);
        let mut text = serde_json::to_string(&ev).unwrap();
        text.push_str("\n{\"event\":\"attachments.inc");
        std::fs::write(&path, text).unwrap();
        let o = Overlay::load(&path).unwrap();
        assert_eq!(o.excluded(), vec![named.clone()]);
        assert_eq!(o.skipped.len(), 1);
        // An update after the torn line still lands, on a line of its own.
        Overlay::update(&path, &[], |_| Some(Event::new(INCLUDED, vec![named], None))).unwrap();
        let o = Overlay::load(&path).unwrap();
        assert!(o.excluded().is_empty());
        assert_eq!((o.events.len(), o.skipped.len()), (2, 1));
    }

    #[test]
    fn the_default_path_is_beside_the_session_and_not_jsonl() {
        let p = default_path(Path::new("/x/abc.jsonl"));
        assert_eq!(p, Path::new("/x/abc.jsonl.doctor"));
    }
}
