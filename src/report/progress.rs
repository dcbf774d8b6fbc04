//! A progress bar for long reads: on stderr, only on a terminal, only for big files.
//! Sizes in decimal units (kB, MB, GB), as everywhere else.

use std::io::IsTerminal as _;
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};

use crate::model::Session;
use crate::reader::{self, Plan, ReadOptions};

/// Files smaller than this read too fast for a bar to help.
const MIN_BYTES: u64 = 64 << 20;

/// Reads a session, showing a bar when it is worth it.
pub fn read(path: &Path, opts: &ReadOptions) -> anyhow::Result<(Session, Plan)> {
    let plan = reader::plan(path, opts)?;
    // What the bar counts is the text read: a compressed session's decompressed size.
    let size = std::fs::metadata(plan.text(path)).map(|m| m.len()).unwrap_or(0);
    if size < MIN_BYTES || !std::io::stderr().is_terminal() {
        return Ok((reader::read_with_plan(path, opts, &plan, None)?, plan));
    }
    let bar = ProgressBar::new(size);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} [{wide_bar}] {decimal_bytes}/{decimal_total_bytes} {decimal_bytes_per_sec}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    bar.set_message(crate::text::sanitize(&name));
    let tick = |n: u64| bar.inc(n);
    let session = reader::read_with_plan(path, opts, &plan, Some(&tick));
    bar.finish_and_clear();
    Ok((session?, plan))
}
