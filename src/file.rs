//! Reading a small file a command is pointed at (settings, a guard file, an
//! error text), bounded: a regular file of at most a given size, opened without
//! blocking, so a link to `/dev/zero` cannot grow memory without end and a FIFO
//! cannot hang the command, even under `--dry-run`.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _};
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum Refused {
    /// The file system refused (a missing file is `NotFound`).
    Io(io::Error),
    /// It is not a regular file: a device, a FIFO, a folder.
    NotRegular,
    /// It is larger than the bound: its size.
    TooLarge(u64),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Io(e) => write!(f, "{e}"),
            Refused::NotRegular => f.write_str("it is not a regular file (a device, a pipe or a folder)"),
            Refused::TooLarge(n) => write!(f, "it is {n} bytes, more than such a file ever holds"),
        }
    }
}

impl std::error::Error for Refused {}

/// `path` (links followed) opened for reading when it is a regular file. It is
/// opened non-blocking and judged by the handle itself, so a FIFO swapped in
/// after a look at its name blocks nothing.
pub fn open_regular(path: &Path) -> Result<File, Refused> {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        #[allow(clippy::cast_possible_wrap, reason = "O_NONBLOCK is a small flag bit")]
        o.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file: File = o.open(path).map_err(Refused::Io)?;
    if !file.metadata().map_err(Refused::Io)?.is_file() {
        return Err(Refused::NotRegular);
    }
    Ok(file)
}

/// The bytes of `path` when it is a regular file ([`open_regular`]) of at
/// most `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, Refused> {
    let file = open_regular(path)?;
    let meta = file.metadata().map_err(Refused::Io)?;
    if meta.len() > max {
        return Err(Refused::TooLarge(meta.len()));
    }
    let mut bytes = Vec::new();
    // A file that grows while it is read is still cut at the bound.
    file.take(max + 1).read_to_end(&mut bytes).map_err(Refused::Io)?;
    if bytes.len() as u64 > max {
        return Err(Refused::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_within_the_bound_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.json");
        std::fs::write(&f, b"{}").unwrap();
        assert_eq!(read_bounded(&f, 2).unwrap(), b"{}");
        assert!(matches!(read_bounded(&f, 1), Err(Refused::TooLarge(2))));
        assert!(
            matches!(read_bounded(&dir.path().join("none"), 9), Err(Refused::Io(e)) if e.kind() == io::ErrorKind::NotFound)
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_device_a_fifo_and_a_folder_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(matches!(read_bounded(&fifo, 1 << 20), Err(Refused::NotRegular)));
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(read_bounded(&zero, 1 << 20), Err(Refused::NotRegular)));
        assert!(matches!(read_bounded(dir.path(), 1 << 20), Err(Refused::NotRegular)));
    }
}
