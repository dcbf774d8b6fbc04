//! Salvage before dropping: the records on lines a reader could not read, where
//! they can be read after all. An agent killed mid-write, or one that wrote a
//! raw newline inside a string, leaves one record split over lines (each part
//! invalid alone); a lost newline leaves two records glued on one line
//! (`}{`). A split record is rejoined when the join parses (the raw newline
//! becomes `\n` in its string); glued records are split at their boundary
//! ([`super::splice::glued`]); what neither makes readable is left out.

use super::splice;

/// Most lines one record is rejoined from (a record with that many raw newlines
/// in its strings is rare; past it the lines are left out, as before).
const MAX_JOIN: usize = 64;
/// Most bytes a rejoined record grows to: each try parses the join so far, so a
/// run of huge damaged lines is not parsed over and over past this.
const MAX_JOIN_BYTES: usize = 64 << 20;

/// What became of one damaged line (or a run of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Salvaged {
    /// Lines `first..=last` were one record split by raw newlines in a string.
    Rejoined { first: u64, last: u64, record: Vec<u8> },
    /// Line `line` held these records glued together.
    Split { line: u64, records: Vec<Vec<u8>> },
    /// Line `line` could not be read either way: left out.
    Lost { line: u64 },
}

impl Salvaged {
    /// The records it gives back, in order.
    pub fn records(&self) -> Vec<&[u8]> {
        match self {
            Salvaged::Rejoined { record, .. } => vec![record.as_slice()],
            Salvaged::Split { records, .. } => records.iter().map(Vec::as_slice).collect(),
            Salvaged::Lost { .. } => Vec::new(),
        }
    }

    /// What was (`done`) or will be done, for a person: where, and what.
    pub fn describe(&self, done: bool) -> String {
        match self {
            Salvaged::Rejoined { first, last, .. } => format!(
                "lines {first}–{last}: one record split by a raw newline inside a string; {} (the newline becomes `\\n` in the string)",
                if done { "rejoined" } else { "repair rejoins it" }
            ),
            Salvaged::Split { line, records } => format!(
                "line {line}: {} records glued on one line; {}",
                records.len(),
                if done { "split at their boundary" } else { "repair splits them at their boundary" }
            ),
            Salvaged::Lost { line } => format!(
                "line {line}: not readable, whole, rejoined with the next lines or split; {}",
                if done { "left out" } else { "repair leaves it out" }
            ),
        }
    }
}

/// A JSON object, as an agent's record is.
fn is_record(t: &[u8]) -> bool {
    matches!(serde_json::from_slice::<serde_json::Value>(t), Ok(serde_json::Value::Object(_)))
}

/// Salvages a run of consecutive damaged lines (number, text without its line
/// end), in order: each line rejoined with the ones after it, split, or lost.
pub fn salvage(run: &[(u64, &[u8])]) -> Vec<Salvaged> {
    let mut out = Vec::new();
    let mut i = 0;
    'lines: while i < run.len() {
        let (line, text) = run[i];
        if let Some(parts) = splice::glued(text) {
            let records: Vec<Vec<u8>> = parts.into_iter().map(|r| text[r].to_vec()).collect();
            if records.iter().all(|r| is_record(r)) {
                out.push(Salvaged::Split { line, records });
                i += 1;
                continue;
            }
        }
        let mut joined = text.strip_suffix(b"\r").unwrap_or(text).to_vec();
        let crlf = text.ends_with(b"\r");
        for (j, &(last, more)) in run.iter().enumerate().skip(i + 1).take(MAX_JOIN - 1) {
            if joined.len() + more.len() > MAX_JOIN_BYTES {
                break;
            }
            joined.extend_from_slice(if crlf { b"\\r\\n" } else { b"\\n" });
            joined.extend_from_slice(more.strip_suffix(b"\r").unwrap_or(more));
            if is_record(&joined) {
                out.push(Salvaged::Rejoined { first: line, last, record: joined });
                i = j + 1;
                continue 'lines;
            }
        }
        out.push(Salvaged::Lost { line });
        i += 1;
    }
    out
}

/// The runs of consecutive line numbers in `lines` (sorted): each run is
/// salvaged as one.
pub fn runs(lines: &[u64]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=lines.len() {
        if i == lines.len() || lines[i] != lines[i - 1] + 1 {
            if start < i {
                out.push(start..i);
            }
            start = i;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_split_by_a_raw_newline_is_rejoined() {
        let run: &[(u64, &[u8])] = &[(4, br#"{"type":"user","text":"first"#), (5, br#"second"}"#)];
        let got = salvage(run);
        assert_eq!(
            got,
            vec![Salvaged::Rejoined {
                first: 4,
                last: 5,
                record: br#"{"type":"user","text":"first\nsecond"}"#.to_vec()
            }]
        );
    }

    #[test]
    fn glued_records_are_split_and_a_brace_in_a_string_is_no_boundary() {
        let run: &[(u64, &[u8])] = &[(7, br#"{"a":"x}{y"}{"b":2} "#)];
        assert_eq!(
            salvage(run),
            vec![Salvaged::Split { line: 7, records: vec![br#"{"a":"x}{y"}"#.to_vec(), br#"{"b":2}"#.to_vec()] }]
        );
    }

    #[test]
    fn what_neither_reads_is_lost_and_the_rest_still_salvaged() {
        let run: &[(u64, &[u8])] = &[(2, b"garbage"), (3, br#"{"t":"a"#), (4, br#"b"}"#), (5, br#"{"x":1}{"#)];
        let got = salvage(run);
        assert_eq!(got[0], Salvaged::Lost { line: 2 });
        assert_eq!(got[1], Salvaged::Rejoined { first: 3, last: 4, record: br#"{"t":"a\nb"}"#.to_vec() });
        assert_eq!(got[2], Salvaged::Lost { line: 5 });
        assert_eq!(runs(&[2, 3, 4, 9, 11, 12]), vec![0..3, 3..4, 4..6]);
    }
}
