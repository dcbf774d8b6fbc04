//! `check --output-format html`: one self-contained page, a summary table of
//! the sessions and a section per session, made of `diagnose --html`'s parts
//! (`report::html`).

use std::io::{self, Write};

use crate::check::CheckReport;
use crate::report::html::{self, CheckSession};

use super::Printer;

/// Prints `check`'s page.
#[derive(Clone, Copy, Debug, Default)]
pub struct Html;

/// `check`'s report with what the page shows of each session (in the
/// report's order): its diagnosis when it could be read.
pub struct CheckPage<'a> {
    pub report: &'a CheckReport,
    pub sessions: Vec<CheckSession<'a>>,
}

impl Printer<CheckPage<'_>> for Html {
    fn print(&self, out: &mut dyn Write, page: &CheckPage<'_>) -> io::Result<()> {
        html::write_check(out, page.report, &page.sessions)
    }
}
