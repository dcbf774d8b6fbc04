//! `--json` and `--output-format json`: the result's stable schema, pretty-printed.

use std::io::{self, Write};

use serde::Serialize;

use super::Printer;

/// Prints any serializable result as one pretty JSON document and a newline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Json;

impl<R: Serialize + ?Sized> Printer<R> for Json {
    fn print(&self, out: &mut dyn Write, results: &R) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, results)?;
        writeln!(out)
    }
}
