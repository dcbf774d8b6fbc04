//! The bytes a session was read from, for every stage that reads them again.
//!
//! The reader keeps only byte ranges (records, payload spans); `preview`, the
//! suspects' deep re-check, the HTML page's thumbnails and `repair --fit` go
//! back to those ranges later. They must read the same bytes the ranges were
//! taken from: the file itself, the spool of stdin or of a `.jsonl.zst`
//! rollout, or the JSON Lines text a store (opencode's database, pi's SQLite
//! store) was turned into in memory — never the store file, whose offsets
//! mean something else. A [`Source`] is that one place.
//!
//! A file is opened once, when the reader plans how to read it
//! ([`super::Plan::file`]), and every later read goes through that handle, by
//! position: a session replaced meanwhile (an agent's rename, a sync tool)
//! cannot lend a deep re-check or a preview the bytes of another file.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Plan;

/// Where a session's bytes are, as the reader read them.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file opened once (the session itself, stdin's spool, a decompressed
    /// rollout), and the name to call it by.
    File { name: PathBuf, file: Arc<File> },
    /// A file opened again at each read, by its name (and the spool that name
    /// is, kept): what outlives its plan in a list of many sessions (`check`'s
    /// page), where a handle each would run out of file descriptors.
    Named { name: PathBuf, spool: Option<Arc<tempfile::TempPath>> },
    /// The JSON Lines a store's session was turned into.
    Memory(Arc<Vec<u8>>),
}

impl Source {
    /// The bytes `plan` read `path` from, through the handle the plan opened.
    pub fn of(plan: &Plan, path: &Path) -> Source {
        match (&plan.memory, &plan.file) {
            (Some(bytes), _) => Source::Memory(Arc::clone(bytes)),
            (None, Some(file)) => Source::File { name: plan.text(path).to_path_buf(), file: Arc::clone(file) },
            // Every plan of a file holds its handle: nothing to read otherwise.
            (None, None) => Source::Memory(Arc::default()),
        }
    }

    /// [`Source::of`], but holding no open file: for one of many sessions kept
    /// after their reading ([`Source::Named`]).
    pub fn named(plan: &Plan, path: &Path) -> Source {
        match &plan.memory {
            Some(bytes) => Source::Memory(Arc::clone(bytes)),
            None => Source::Named { name: plan.text(path).to_path_buf(), spool: plan.spool.clone() },
        }
    }

    /// Opens the bytes for reading anywhere in them.
    pub fn open(&self) -> io::Result<Handle> {
        Ok(match self {
            Source::File { file, .. } => Handle::File(At::new(Arc::clone(file), 0)),
            Source::Named { name, .. } => Handle::of_file(File::open(name)?),
            Source::Memory(bytes) => Handle::Memory(Cursor::new(Shared(Arc::clone(bytes)))),
        })
    }

    /// The `len` bytes at `offset`.
    pub fn read_range(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        self.open()?.read_range(offset, len)
    }

    /// What to call it in a message.
    pub fn describe(&self) -> String {
        match self {
            Source::File { name, .. } | Source::Named { name, .. } => name.display().to_string(),
            Source::Memory(_) => "the session taken out of its store".into(),
        }
    }
}

/// An open [`Source`].
pub enum Handle {
    File(At<Arc<File>>),
    Memory(Cursor<Shared>),
}

impl Handle {
    /// A handle on `file` from its start (its own position: the file's is not used).
    pub fn of_file(file: File) -> Handle {
        Handle::File(At::new(Arc::new(file), 0))
    }
}

/// A store's text, shared with the session read from it.
pub struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Handle {
    /// The `len` bytes at `offset`; an error when fewer are there (the file
    /// shrank since it was read).
    pub fn read_range(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let n = usize::try_from(len).map_err(|_| io::Error::other("a range too long for this machine"))?;
        let mut buf = vec![0; n];
        self.seek(SeekFrom::Start(offset))?;
        self.read_exact(&mut buf)?;
        Ok(buf)
    }
}

/// Reads `src` from a position of its own, by `pread`: the workers that share
/// one open file never move each other's place in it.
#[derive(Debug)]
pub struct At<R> {
    src: R,
    pos: u64,
}

impl<R> At<R> {
    pub fn new(src: R, pos: u64) -> At<R> {
        At { src, pos }
    }
}

impl<R: std::ops::Deref<Target = F>, F: ReadAt + ?Sized> Read for At<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.src.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for At<Arc<File>> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let moved = |base: u64, by: i64| {
            base.checked_add_signed(by)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))
        };
        self.pos = match to {
            SeekFrom::Start(n) => n,
            SeekFrom::Current(by) => moved(self.pos, by)?,
            SeekFrom::End(by) => moved(self.src.metadata()?.len(), by)?,
        };
        Ok(self.pos)
    }
}

/// Reads at a position without moving a cursor: workers share one open source.
pub trait ReadAt: Sync {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset)? {
                0 => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                n => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let from = usize::try_from(offset).unwrap_or(usize::MAX).min(self.len());
        let n = buf.len().min(self.len() - from);
        buf[..n].copy_from_slice(&self[from..from + n]);
        Ok(n)
    }
}

impl ReadAt for Handle {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        match self {
            Handle::File(f) => ReadAt::read_at(&*f.src, buf, offset),
            Handle::Memory(c) => c.get_ref().as_ref().read_at(buf, offset),
        }
    }
}

impl Read for Handle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Handle::File(f) => f.read(buf),
            Handle::Memory(c) => c.read(buf),
        }
    }
}

impl Seek for Handle {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match self {
            Handle::File(f) => f.seek(to),
            Handle::Memory(c) => c.seek(to),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_reads_the_same_from_a_file_and_from_memory() {
        let text = b"{\"a\":1}\n{\"b\":\"QUJD\"}\n".to_vec();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &text).unwrap();
        let file = Arc::new(File::open(&path).unwrap());
        for s in [Source::File { name: path.clone(), file }, Source::Memory(Arc::new(text.clone()))] {
            assert_eq!(s.read_range(14, 4).unwrap(), b"QUJD", "{}", s.describe());
            assert!(s.read_range(20, 10).is_err(), "past the end is an error, not a short read");
        }
    }
}
