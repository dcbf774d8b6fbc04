//! The bytes a session was read from, for every stage that reads them again.
//!
//! The reader keeps only byte ranges (records, payload spans); `preview`, the
//! suspects' deep re-check, the HTML page's thumbnails and `repair --fit` go
//! back to those ranges later. They must read the same bytes the ranges were
//! taken from: the file itself, the spool of stdin or of a `.jsonl.zst`
//! rollout, or the JSON Lines text a store (opencode's database, pi's SQLite
//! store) was turned into in memory — never the store file, whose offsets
//! mean something else. A [`Source`] is that one place.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Plan;

/// Where a session's bytes are, as the reader read them.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file: the session itself, or stdin's spool.
    File(PathBuf),
    /// A decompressed rollout, kept as long as a stage may read it.
    Spool(Arc<tempfile::TempPath>),
    /// The JSON Lines a store's session was turned into.
    Memory(Arc<Vec<u8>>),
}

impl Source {
    /// The bytes `plan` read `path` from.
    pub fn of(plan: &Plan, path: &Path) -> Source {
        match (&plan.memory, &plan.spool) {
            (Some(bytes), _) => Source::Memory(Arc::clone(bytes)),
            (None, Some(spool)) => Source::Spool(Arc::clone(spool)),
            (None, None) => Source::File(path.to_path_buf()),
        }
    }

    /// Opens the bytes for reading anywhere in them.
    pub fn open(&self) -> io::Result<Handle> {
        match self {
            Source::File(path) => File::open(path).map(Handle::File),
            Source::Spool(path) => File::open(path.as_ref() as &Path).map(Handle::File),
            Source::Memory(bytes) => Ok(Handle::Memory(Cursor::new(Shared(Arc::clone(bytes))))),
        }
    }

    /// The `len` bytes at `offset`.
    pub fn read_range(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        self.open()?.read_range(offset, len)
    }

    /// What to call it in a message.
    pub fn describe(&self) -> String {
        match self {
            Source::File(path) => path.display().to_string(),
            Source::Spool(path) => path.display().to_string(),
            Source::Memory(_) => "the session taken out of its store".into(),
        }
    }
}

/// An open [`Source`].
pub enum Handle {
    File(File),
    Memory(Cursor<Shared>),
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
            Handle::File(f) => ReadAt::read_at(f, buf, offset),
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
        for s in [Source::File(path.clone()), Source::Memory(Arc::new(text.clone()))] {
            assert_eq!(s.read_range(14, 4).unwrap(), b"QUJD", "{}", s.describe());
            assert!(s.read_range(20, 10).is_err(), "past the end is an error, not a short read");
        }
    }
}
