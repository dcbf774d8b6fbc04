//! Crash-safe writes: every file session-doctor writes appears whole or not at all.
//!
//! The bytes go to a temporary file in the target's own folder (so the rename
//! never crosses file systems), are flushed to disk (a large file while it is
//! written, `atomic/writeback.rs`), and the temporary file is
//! renamed over the target; then the folder itself is synced so the rename
//! survives a power cut. A symlink at the target is replaced, never followed:
//! a session folder's link cannot redirect a write elsewhere.
//!
//! Before anything is written, the target is compared with what the command
//! reads ([`crate::alias::refuse_aliases`]): no flag can make a command write
//! over its session. The temporary file is named `.<target>.sd-tmp.<pid>.<random>`:
//! a run killed mid-write leaves it behind, and the next write into that folder
//! removes every one whose process is gone. Every write error names the target.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use anyhow::Context as _;

use crate::alias::{self, Input, io_error};
use crate::text::sanitize_path as shown;

mod writeback;

use writeback::Writeback;

/// What to do when the target exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Replace it (the overlay, `preview --out`).
    Replace,
    /// Refuse: an existing file is never overwritten (`repair`).
    Keep,
}

/// What marks session-doctor's temporary files, between the target's name and the pid.
const TEMP_MARK: &str = ".sd-tmp.";

/// Writes `path` atomically with what `fill` writes; `reads` are the files
/// the command reads, none of which `path` may name. The file gets the mode a
/// new file gets from the umask (0644 under the usual 022), not a temporary
/// file's 0600.
pub fn write(
    path: &Path,
    existing: Existing,
    reads: &[Input],
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    write_with_mode(path, existing, None, reads, |w| fill(w))
}

/// What a write is filled through: bytes, and ranges of another file, which
/// the kernel copies from file to file where it can (`copy_file_range`): a
/// repaired copy's payloads never pass through the process.
pub trait Sink: Write {
    /// Appends the bytes `range` of `from`.
    fn copy_range(&mut self, from: &File, range: Range<u64>) -> io::Result<()>;
}

/// As [`write()`], the file taking `mode` when given (a repaired copy takes its
/// original's: a private session stays private), set before it appears, and
/// filled through a [`Sink`].
pub fn write_with_mode(
    path: &Path,
    existing: Existing,
    mode: Option<u32>,
    reads: &[Input],
    fill: impl FnOnce(&mut dyn Sink) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    alias::refuse_aliases(path, reads)?;
    refuse_special(path)?;
    refuse_system(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        // Said of the file asked for, not of the hidden temporary one.
        anyhow::bail!("cannot write {}: there is no folder {}", shown(path), dir.display());
    }
    // The folder is opened once and everything after goes through that handle:
    // what was checked is what is written, though its path be swapped for a
    // link to the session's folder meanwhile.
    let pinned = Pinned::open(dir).map_err(|e| io_error(e, "cannot open the folder of", path))?;
    let dir = pinned.path();
    let target = dir.join(path.file_name().unwrap_or_default());
    alias::refuse_aliases_shown(&target, path, reads)?;
    let path_asked = path;
    let path = target.as_path();
    remove_stale(&dir, reads);
    let prefix = temp_prefix(path);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).rand_bytes(6);
    // Created as any new file is (0666 less the umask), then given `mode`.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder.tempfile_in(&dir).map_err(|e| io_error(e, "cannot create a temporary file in", path_asked))?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        tmp.as_file()
            .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))
            .map_err(|e| io_error(e, "cannot set the mode of", path_asked))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut behind = Writeback::new(tmp.as_file());
    fill_into(BufWriter::with_capacity(1 << 20, &mut behind), path_asked, fill)?;
    behind.finish().map_err(|e| io_error(e, "cannot write", path_asked))?;
    tmp.as_file().sync_all().map_err(|e| io_error(e, "cannot write", path_asked))?;
    match existing {
        Existing::Replace => {
            tmp.persist(path).map_err(|e| io_error(e.error, "cannot write", path_asked))?;
        }
        Existing::Keep => {
            tmp.persist_noclobber(path)
                .map_err(|e| e.error)
                .with_context(|| format!("{} already exists; session-doctor never overwrites it", shown(path_asked)))?;
        }
    }
    sync_dir(&dir);
    drop(pinned);
    Ok(())
}

/// A folder opened once: on Linux its path is the handle's own
/// (`/proc/self/fd/N`), which no later rename or link of the folder's name
/// can redirect; elsewhere the path as given.
struct Pinned {
    #[cfg(target_os = "linux")]
    handle: File,
    #[cfg(not(target_os = "linux"))]
    dir: std::path::PathBuf,
}

impl Pinned {
    fn open(dir: &Path) -> io::Result<Pinned> {
        #[cfg(target_os = "linux")]
        {
            Ok(Pinned { handle: File::open(dir)? })
        }
        #[cfg(not(target_os = "linux"))]
        {
            Ok(Pinned { dir: dir.to_path_buf() })
        }
    }

    fn path(&self) -> std::path::PathBuf {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd as _;
            std::path::PathBuf::from(format!("/proc/self/fd/{}", self.handle.as_raw_fd()))
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.dir.clone()
        }
    }
}

/// Runs `fill` on `w` and flushes it. An error of the write itself (a full
/// disk) names the file it was for; any other (reading the session) already
/// names its own.
fn fill_into<W: Sink>(w: W, path: &Path, fill: impl FnOnce(&mut dyn Sink) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let mut w = Named { inner: w, failed: false };
    let filled = fill(&mut w).and_then(|()| Ok(w.flush()?));
    filled.map_err(|e| if w.failed { e.context(format!("cannot write {}", shown(path))) } else { e })
}

/// A target that exists and is not a regular file (a device, a FIFO, a folder)
/// is refused: replacing `/dev/stdout` or a folder by a file is never what was meant.
fn refuse_special(path: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => anyhow::bail!(
            "{} is not a regular file (a folder, a device or a pipe); session-doctor writes only regular files (nothing was written)",
            shown(path)
        ),
        _ => Ok(()),
    }
}

/// A target in `/dev` or `/proc` (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`)
/// is refused even where it resolves to a regular file (stdout redirected to
/// one): the rename would replace the system's link itself, not write through it.
fn refuse_system(path: &Path) -> anyhow::Result<()> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let folder = absolute.parent().map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf()));
    if folder.is_some_and(|d| d.starts_with("/dev") || d.starts_with("/proc")) {
        anyhow::bail!(
            "{} is a system path (in /dev or /proc); session-doctor writes only regular files of their own: give a file name, or leave the flag out to print to stdout (nothing was written)",
            shown(path)
        );
    }
    Ok(())
}

/// The writer `fill` gets: it remembers that a write failed, so the error can name the target.
struct Named<W: Write> {
    inner: W,
    failed: bool,
}

impl<W: Write> Write for Named<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).inspect_err(|_| self.failed = true)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf).inspect_err(|_| self.failed = true)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().inspect_err(|_| self.failed = true)
    }
}

impl<W: Sink> Sink for Named<W> {
    fn copy_range(&mut self, from: &File, range: Range<u64>) -> io::Result<()> {
        self.inner.copy_range(from, range).inspect_err(|_| self.failed = true)
    }
}

impl<W: Sink> Sink for BufWriter<W> {
    fn copy_range(&mut self, from: &File, range: Range<u64>) -> io::Result<()> {
        // What is buffered goes first: the range follows it in the file.
        self.flush()?;
        self.get_mut().copy_range(from, range)
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn copy_range(&mut self, from: &File, range: Range<u64>) -> io::Result<()> {
        (**self).copy_range(from, range)
    }
}

/// A buffer in memory (tests, and whatever collects a copy) reads the range.
impl Sink for Vec<u8> {
    fn copy_range(&mut self, from: &File, range: Range<u64>) -> io::Result<()> {
        copy_by_reading(self, from, range)
    }
}

/// [`Sink::copy_range`] the plain way: read, then written.
pub fn copy_by_reading(out: &mut (impl Write + ?Sized), from: &File, range: Range<u64>) -> io::Result<()> {
    let mut left = range.end.saturating_sub(range.start);
    let mut buf = vec![0; usize::try_from(left).unwrap_or(usize::MAX).min(1 << 18)];
    let mut at = range.start;
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = std::os::unix::fs::FileExt::read_at(from, &mut buf[..want], at)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file ended before the range to copy"));
        }
        out.write_all(&buf[..n])?;
        at += n as u64;
        left -= n as u64;
    }
    Ok(())
}

/// `.<target>.sd-tmp.<run>.`: hidden, never `.jsonl` (no agent lists it), and
/// telling which run wrote it ([`run_tag`]). A long name is cut so the whole stays legal.
fn temp_prefix(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut cut = name.len().min(120);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(".{}{TEMP_MARK}{}.", &name[..cut], run_tag())
}

/// Removes the temporary files in `dir` that a killed run left: those whose
/// run is over ([`run_gone`]). Best effort: a file that cannot be removed
/// stays, and so does one the command reads (`reads`: a session may bear such
/// a name, copied or restored by hand).
fn remove_stale(dir: &Path, reads: &[Input]) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(tag) = temp_run(name) else { continue };
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if regular && run_gone(tag) && !alias::reads_file(&entry.path(), reads) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The run tag in a temporary file's name, when it is one of ours.
fn temp_run(name: &str) -> Option<&str> {
    if !name.starts_with('.') {
        return None;
    }
    let (_, rest) = name.rsplit_once(TEMP_MARK)?;
    let (tag, random) = rest.split_once('.')?;
    (random.len() == 6 && random.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(tag)
}

/// This run, as the names of its temporary files tell it: `<pid>_<start>`,
/// the process id and when the process started (Linux: clock ticks since
/// boot). A pid is reused (and on Linux a thread's id is one too); with its
/// start time it names one process only, whatever the program is called (two
/// runs under different names, `sd` linked to the binary, tell each other apart).
pub fn run_tag() -> String {
    let pid = std::process::id();
    match start_time(pid) {
        Some(start) => format!("{pid}_{start}"),
        None => pid.to_string(),
    }
}

/// Whether the run `tag` names ([`run_tag`]) is over: its process no longer
/// runs, or its pid now names a process that started at another time. Not
/// this run; a tag with no start time (where none can be read) counts as over
/// only when its pid runs nothing.
pub fn run_gone(tag: &str) -> bool {
    let (pid, start) = match tag.split_once('_') {
        Some((p, s)) => (p, s.parse::<u64>().ok()),
        None => (tag, None),
    };
    let Ok(pid) = pid.parse::<u32>() else { return false };
    if tag == run_tag() {
        return false;
    }
    !alive(pid) || start.is_some_and(|s| start_time(pid).is_some_and(|now| now != s))
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else { return false };
    // EPERM: it runs, as another user.
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

#[cfg(not(unix))]
fn alive(_: u32) -> bool {
    true
}

/// When process `pid` started (field 22 of `/proc/<pid>/stat`, after its
/// name, which may hold spaces and parentheses).
#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, fields) = stat.rsplit_once(')')?;
    fields.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
fn start_time(_: u32) -> Option<u64> {
    None
}

/// The permission bits of `path` (for a file written to take them), where the
/// platform has them.
pub fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Makes a rename in `dir` durable. Best effort: some file systems refuse it.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_folder_swapped_for_a_link_to_the_sessions_mid_write_does_not_redirect_it() {
        let t = tempfile::tempdir().unwrap();
        let (sess, d, real) = (t.path().join("sess"), t.path().join("d"), t.path().join("real"));
        std::fs::create_dir(&sess).unwrap();
        std::fs::create_dir(&d).unwrap();
        let session = sess.join("s.jsonl");
        std::fs::write(&session, "the session").unwrap();
        let reads = [Input::new("the session", session.as_path())];
        write(&d.join("s.jsonl"), Existing::Replace, &reads, |w| {
            // What another process does between the check and the rename.
            std::fs::rename(&d, &real).unwrap();
            std::os::unix::fs::symlink(&sess, &d).unwrap();
            Ok(w.write_all(b"the preview")?)
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&session).unwrap(), "the session");
        assert_eq!(std::fs::read_to_string(real.join("s.jsonl")).unwrap(), "the preview");
    }

    /// A disk that fills after `room` bytes.
    struct Full {
        room: usize,
    }
    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(28));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    impl Sink for Full {
        fn copy_range(&mut self, from: &File, range: Range<u64>) -> io::Result<()> {
            copy_by_reading(self, from, range)
        }
    }

    #[test]
    fn a_range_follows_the_bytes_buffered_before_it_and_a_short_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("s.jsonl");
        std::fs::write(&src, b"0123456789").unwrap();
        let from = File::open(&src).unwrap();
        let target = dir.path().join("copy.jsonl");
        write_with_mode(&target, Existing::Keep, None, &[], |w| {
            w.write_all(b"<")?;
            w.copy_range(&from, 2..7)?;
            w.write_all(b">")?;
            Ok(())
        })
        .unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"<23456>");
        let e = write_with_mode(&dir.path().join("short.jsonl"), Existing::Keep, None, &[], |w| {
            Ok(w.copy_range(&from, 8..20)?)
        });
        assert!(format!("{:#}", e.unwrap_err()).contains("ended before"));
        assert!(!dir.path().join("short.jsonl").exists());
    }

    #[test]
    fn a_full_disk_names_the_target() {
        // A write past the buffer goes straight to the disk: the error must still name the file.
        let r = fill_into(Full { room: 10 }, Path::new("/x/out.json"), |w| Ok(w.write_all(&vec![0; 2 << 20])?));
        let e = format!("{:#}", r.unwrap_err());
        assert!(e.starts_with("cannot write /x/out.json: "), "{e}");
        let other = fill_into(Full { room: 10 }, Path::new("/x/out.json"), |_| anyhow::bail!("reading s.jsonl"));
        assert_eq!(format!("{:#}", other.unwrap_err()), "reading s.jsonl");
        let e = format!("{:#}", io_error(io::Error::from_raw_os_error(28), "cannot write", Path::new("/x/o")));
        assert!(e.contains("/x/o") && e.contains("the disk is full"), "{e}");
    }

    #[test]
    fn temporary_names_carry_the_run_and_are_recognised() {
        let p = temp_prefix(Path::new("/x/s.jsonl.doctor"));
        assert_eq!(p, format!(".s.jsonl.doctor.sd-tmp.{}.", run_tag()));
        assert_eq!(temp_run(&format!("{p}a1B2c3")), Some(run_tag().as_str()));
        assert_eq!(temp_run(".s.jsonl.sd-tmp.12.x"), None);
        assert_eq!(temp_run("s.jsonl.sd-tmp.12.abcdef"), None);
        assert!(temp_prefix(Path::new(&"é".repeat(200))).len() < 200);
        assert!(alive(std::process::id()));
    }

    /// A run is told by its pid and start time, not by its program's name: a
    /// live run under another name keeps its file, a reused pid does not.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_run_is_gone_by_its_pid_and_start_time_not_its_name() {
        let mine = run_tag();
        assert!(!run_gone(&mine), "this run");
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        let theirs = format!("{pid}_{}", start_time(pid).unwrap());
        assert!(!run_gone(&theirs), "a live run of another program name is not gone");
        assert!(run_gone(&format!("{pid}_{}", start_time(pid).unwrap() + 1)), "a reused pid is gone");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(run_gone(&theirs), "a finished run is gone");
    }
}
