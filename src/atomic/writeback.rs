//! Flushing a large file to disk while it is still being written.
//!
//! An atomic write ends with an fsync, which waits for every byte to reach the
//! disk: for a copy of a gigabyte session, seconds in which nothing else
//! happens (the kernel starts writing dirty pages back on its own only past a
//! tenth of the machine's memory). So once [`EVERY`] bytes are written, a
//! thread of its own syncs what is written so far, again and again while the
//! copy goes on, and the last fsync waits only for the last stretch.
//!
//! A writeback error seen by that thread is kept and fails the write: Linux
//! reports it to one fsync of the file only, which may be the thread's.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// Bytes written between two syncs asked for.
const EVERY: u64 = 8 << 20;

/// Writes to a file, syncing it behind the writes.
pub struct Writeback<'f> {
    file: &'f File,
    since: u64,
    syncer: Option<Syncer>,
    /// What the syncer could not flush.
    failed: Arc<Mutex<Option<io::Error>>>,
}

struct Syncer {
    ask: SyncSender<()>,
    thread: JoinHandle<()>,
}

impl<'f> Writeback<'f> {
    pub fn new(file: &'f File) -> Writeback<'f> {
        Writeback { file, since: 0, syncer: None, failed: Arc::default() }
    }

    /// Asks for a sync of what is written; never waits for one (a sync still
    /// running takes in what was written since when it is asked again).
    fn ask(&mut self) -> io::Result<()> {
        if self.syncer.is_none() {
            let file = self.file.try_clone()?;
            let failed = Arc::clone(&self.failed);
            let (ask, asked) = sync_channel::<()>(1);
            let thread = std::thread::spawn(move || {
                for () in asked {
                    if let Err(e) = file.sync_data() {
                        failed.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
                        return;
                    }
                }
            });
            self.syncer = Some(Syncer { ask, thread });
        }
        if let Some(s) = &self.syncer {
            let _ = s.ask.try_send(());
        }
        Ok(())
    }

    /// Waits for the syncs asked for; the error one of them met, if any. The
    /// caller still syncs the file: the last bytes may not have been asked for.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(Syncer { ask, thread }) = self.syncer.take() {
            drop(ask);
            let _ = thread.join();
        }
        match self.failed.lock().unwrap_or_else(PoisonError::into_inner).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Writeback<'_> {
    /// Counts `n` bytes written, and asks for a sync once past [`EVERY`].
    fn wrote(&mut self, n: u64) -> io::Result<()> {
        self.since += n;
        if self.since >= EVERY {
            self.since = 0;
            self.ask()?;
        }
        Ok(())
    }
}

impl Write for Writeback<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (&mut &*self.file).write(buf)?;
        self.wrote(n as u64)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&mut &*self.file).flush()
    }
}

impl super::Sink for Writeback<'_> {
    /// In the kernel, file to file, where the file systems allow it; by
    /// reading and writing where they do not (another file system on an old
    /// kernel, a platform without `copy_file_range`).
    fn copy_range(&mut self, from: &File, range: std::ops::Range<u64>) -> io::Result<()> {
        let mut at = range.start;
        #[cfg(target_os = "linux")]
        while at < range.end {
            let want = usize::try_from(range.end - at).unwrap_or(usize::MAX).min(1 << 30);
            match rustix::fs::copy_file_range(from, Some(&mut at), self.file, None, want) {
                // The source ends short of the range: said by the plain copy below.
                Ok(0) => break,
                Ok(n) => self.wrote(n as u64)?,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) if cannot_copy_range(e) => break,
                Err(e) => return Err(e.into()),
            }
        }
        super::copy_by_reading(self, from, at..range.end)
    }
}

/// The errors that say `copy_file_range` cannot copy between these two files,
/// not that the copy failed.
#[cfg(target_os = "linux")]
fn cannot_copy_range(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    [Errno::XDEV, Errno::NOSYS, Errno::INVAL, Errno::OPNOTSUPP, Errno::PERM, Errno::BADF].contains(&e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_it_is_given_and_syncs_behind_once_past_the_threshold() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let mut w = Writeback::new(tmp.as_file());
        w.write_all(b"small").unwrap();
        assert!(w.syncer.is_none(), "no thread for a small file");
        let block = vec![b'x'; 1 << 20];
        for _ in 0..=(EVERY >> 20) {
            w.write_all(&block).unwrap();
        }
        assert!(w.syncer.is_some());
        w.finish().unwrap();
        assert_eq!(std::fs::metadata(tmp.path()).unwrap().len(), 5 + (EVERY + (1 << 20)));
    }

    #[test]
    fn a_range_copied_in_counts_towards_the_sync_behind() {
        use crate::atomic::Sink as _;
        let src = tempfile::NamedTempFile::new().unwrap();
        src.as_file().write_all(&vec![b'y'; usize::try_from(EVERY + 1).unwrap()]).unwrap();
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let mut w = Writeback::new(tmp.as_file());
        w.write_all(b"<").unwrap();
        w.copy_range(src.as_file(), 0..EVERY + 1).unwrap();
        w.write_all(b">").unwrap();
        assert!(w.syncer.is_some(), "the copied bytes were not counted");
        w.finish().unwrap();
        let copy = std::fs::read(tmp.path()).unwrap();
        assert_eq!((copy.len() as u64, copy[0], copy[1], copy[copy.len() - 1]), (EVERY + 3, b'<', b'y', b'>'));
    }
}
