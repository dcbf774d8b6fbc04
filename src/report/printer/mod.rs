//! Printers behind one trait, one file per output form, as hyperfine's
//! exporters: a command builds its results, chooses a printer, and hands the
//! results over. Printers decide nothing; they only turn results into bytes.
//!
//! - [`human::Human`]: what a person reads (tables and prose fitted to the terminal);
//! - [`json::Json`]: the stable `--json` schemas (any serializable result);
//! - [`junit::Junit`]: a JUnit XML report of `check` for CI test views;
//! - [`github::Github`]: GitHub Actions workflow commands (`::error file=…`) of `check`;
//! - [`html::Html`]: `check`'s self-contained HTML page, a section per session;
//! - [`sarif::Sarif`]: a SARIF 2.1.0 log of `check` for code scanning;
//! - [`gitlab::Gitlab`]: a GitLab Code Quality report of `check`.

pub mod github;
pub mod gitlab;
pub mod html;
pub mod human;
pub mod json;
pub mod junit;
pub mod sarif;

use std::io::{self, Write};

/// Turns a command's results `R` into output.
pub trait Printer<R: ?Sized> {
    fn print(&self, out: &mut dyn Write, results: &R) -> io::Result<()>;
}

pub use github::Github;
pub use gitlab::Gitlab;
pub use html::{CheckPage, Html};
pub use human::Human;
pub use json::Json;
pub use junit::Junit;
pub use sarif::Sarif;
