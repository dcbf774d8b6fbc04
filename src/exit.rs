//! The process exit codes, the one contract CI scripts depend on.

use std::process::ExitCode;

/// `0` healthy / done, `1` problems found, `2` usage error or unreadable input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    Healthy = 0,
    Problems = 1,
    Failed = 2,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}
