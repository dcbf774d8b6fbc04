//! The one table every human printer uses: plain aligned columns, as `ls -l` or
//! `docker ps` print them. No box lines; two spaces between columns; no trailing
//! spaces. On a terminal ([`Term::width`] is `Some`) a table wider than the screen
//! is fitted by truncating cells with `…` (a path keeps its end, where the file
//! name is) instead of letting the terminal wrap rows mid-word. Into a pipe or a
//! file nothing is truncated: full values there, and always in `--json`.

use anstyle::Style;
use comfy_table::{ContentArrangement, presets};
use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

use super::term::{Term, styles};

const GAP: &str = "  ";

/// Which side of a cell survives truncation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// `image/png (is te…`: for types, names, hashes.
    Start,
    /// `…/tmp/layout-diagram.png`: for paths.
    End,
}

#[derive(Clone, Debug)]
struct Column {
    header: String,
    right: bool,
    /// Truncated first, down to `min` columns, keeping this side.
    shrink: Option<(Keep, usize)>,
    /// Left out on a terminal too narrow for the whole table (the lowest rank goes first).
    optional: Option<usize>,
    /// Printed on a line of its own under each row when its share of a narrow
    /// terminal would be under a third of the width.
    own_line: bool,
}

/// One cell: its text (already sanitized) and how to paint it on a colour terminal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    pub text: String,
    pub style: Style,
}

impl Cell {
    pub fn styled(text: impl Into<String>, style: Style) -> Cell {
        Cell { text: text.into(), style }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, style: Style::new() }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_string())
    }
}

/// An aligned table; build it, add rows, [`Table::render`] it for a [`Term`].
#[derive(Clone, Debug)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        let columns = header
            .iter()
            .map(|h| Column { header: h.to_string(), right: false, shrink: None, optional: None, own_line: false })
            .collect();
        Table { columns, rows: Vec::new() }
    }

    fn column(&mut self, header: &str) -> &mut Column {
        let i = self.columns.iter().position(|c| c.header == header);
        &mut self.columns[i.unwrap_or_else(|| panic!("no column {header:?}"))]
    }

    /// Right-aligns a column (numbers, sizes).
    pub fn right(mut self, header: &str) -> Table {
        self.column(header).right = true;
        self
    }

    /// Lets a column be truncated to fit the terminal, down to `min` columns wide.
    pub fn shrink(mut self, header: &str, keep: Keep, min: usize) -> Table {
        let min = min.max(header.width());
        self.column(header).shrink = Some((keep, min));
        self
    }

    /// Lets a column be left out on a terminal too narrow for the table at its natural
    /// width: a column that repeats what another shows, or that only scripts need.
    /// Columns marked first go first.
    pub fn optional(mut self, header: &str) -> Table {
        let rank = self.columns.iter().filter(|c| c.optional.is_some()).count();
        self.column(header).optional = Some(rank);
        self
    }

    /// Lets a column move to a line of its own under each row (indented two
    /// spaces, the whole width less the indent) on a terminal where the other
    /// columns would leave it under a third of the width: a path cut to a dozen
    /// characters names nothing, while the other columns keep their width.
    pub fn own_line(mut self, header: &str) -> Table {
        self.column(header).own_line = true;
        self
    }

    /// Adds a row; missing cells are empty, extra ones are ignored.
    pub fn row<C: Into<Cell>>(&mut self, cells: impl IntoIterator<Item = C>) {
        let mut cells: Vec<Cell> = cells.into_iter().map(Into::into).take(self.columns.len()).collect();
        cells.resize(self.columns.len(), Cell::default());
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The header and every row, each line ending in `\n`.
    pub fn render(&self, term: &Term) -> String {
        let natural: Vec<usize> = (0..self.columns.len())
            .map(|i| {
                let cells = self.rows.iter().map(|r| r[i].text.width());
                cells.chain([self.columns[i].header.width()]).max().unwrap_or(0)
            })
            .collect();
        let mut shown: Vec<usize> = (0..self.columns.len()).collect();
        let mut widths = natural.clone();
        // The column printed on a line of its own under each row, if any.
        let mut below = None;
        if let Some(avail) = term.width {
            let mut optional: Vec<usize> =
                shown.iter().copied().filter(|&i| self.columns[i].optional.is_some()).collect();
            optional.sort_by_key(|&i| self.columns[i].optional);
            for drop in optional {
                if total(&shown.iter().map(|&i| natural[i]).collect::<Vec<_>>()) <= avail {
                    break;
                }
                shown.retain(|&i| i != drop);
            }
            self.fit_widths(&shown, &natural, avail, &mut widths);
            let starved = shown.iter().copied().find(|&i| {
                self.columns[i].own_line && shown.len() > 1 && widths[i] < natural[i] && widths[i] * 3 < avail
            });
            if let Some(i) = starved {
                shown.retain(|&c| c != i);
                self.fit_widths(&shown, &natural, avail, &mut widths);
                below = Some(i);
            }
        }
        let mut out = String::new();
        let header: Vec<Cell> = self.columns.iter().map(|c| Cell::styled(c.header.clone(), styles::HEADER)).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for (n, &i) in shown.iter().enumerate() {
                let (cell, col) = (&row[i], &self.columns[i]);
                let keep = col.shrink.map_or(Keep::Start, |(k, _)| k);
                let text = truncate(&cell.text, widths[i], keep);
                let pad = " ".repeat(widths[i].saturating_sub(text.width()));
                if n > 0 {
                    line.push_str(GAP);
                }
                let painted = if text.is_empty() { text } else { term.paint(cell.style, &text) };
                if col.right {
                    line.push_str(&pad);
                    line.push_str(&painted);
                } else {
                    line.push_str(&painted);
                    line.push_str(&pad);
                }
            }
            line.truncate(line.trim_end_matches(' ').len());
            out.push_str(&line);
            out.push('\n');
            if let (Some(i), Some(avail)) = (below, term.width) {
                let keep = self.columns[i].shrink.map_or(Keep::Start, |(k, _)| k);
                let text = truncate(&row[i].text, avail.saturating_sub(GAP.len()), keep);
                if !text.is_empty() {
                    out.push_str(GAP);
                    out.push_str(&term.paint(row[i].style, &text));
                    out.push('\n');
                }
            }
        }
        out
    }

    /// Sets `widths` of the `shown` columns to what fits `avail` (see [`fit`]).
    fn fit_widths(&self, shown: &[usize], natural: &[usize], avail: usize, widths: &mut [usize]) {
        let nat: Vec<usize> = shown.iter().map(|&i| natural[i]).collect();
        let min: Vec<Option<usize>> = shown.iter().map(|&i| self.columns[i].shrink.map(|(_, m)| m)).collect();
        for (&i, w) in shown.iter().zip(fit(&nat, &min, avail)) {
            widths[i] = w;
        }
    }
}

/// The width of columns this wide with the gaps between them.
fn total(w: &[usize]) -> usize {
    w.iter().sum::<usize>() + GAP.len() * w.len().saturating_sub(1)
}

/// Column widths that fit `avail`: shrinkable columns (`min` is `Some`) give up
/// width first, the widest first, down to their minimum; only then every column,
/// down to one character. Widths are never raised above `natural`.
fn fit(natural: &[usize], min: &[Option<usize>], avail: usize) -> Vec<usize> {
    let mut w = natural.to_vec();
    let floors: [fn(Option<usize>) -> Option<usize>; 2] = [|m| m, |_| Some(1)];
    for floor in floors {
        while total(&w) > avail {
            // The widest column that may still give a character up.
            let widest = (0..w.len()).filter(|&i| floor(min[i]).is_some_and(|m| w[i] > m)).max_by_key(|&i| w[i]);
            match widest {
                Some(i) => w[i] -= 1,
                None => break,
            }
        }
    }
    w
}

/// `s` cut to at most `width` display columns, the cut marked with `…`.
pub fn truncate(s: &str, width: usize, keep: Keep) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let budget = width - 1; // room left beside the `…`
    let mut used = 0;
    let take = |c: &char| {
        used += c.width().unwrap_or(0);
        used <= budget
    };
    match keep {
        Keep::Start => s.chars().take_while(take).chain(['…']).collect(),
        Keep::End => {
            let mut tail: Vec<char> = s.chars().rev().take_while(take).collect();
            tail.push('…');
            tail.into_iter().rev().collect()
        }
    }
}

/// Prose for a terminal: `first` then `text`, wrapped at spaces to `width` columns
/// with continuation lines indented by `indent` spaces; unchanged when `width` is `None`
/// (a pipe keeps one line per message, for grep). A word longer than a line is left
/// whole; a prefix wider than the first word allows (a long path) keeps its line to
/// itself; the lines of a text that has several each start under the indent.
pub fn wrap(first: &str, text: &str, width: Option<usize>, indent: usize) -> String {
    let Some(width) = width else { return format!("{first}{text}") };
    let mut out = String::from(first);
    let mut col = visible_width(first);
    let mut fresh = true; // nothing but the prefix on this line yet
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            col = indent;
            fresh = true;
        }
        wrap_line(&mut out, &mut col, &mut fresh, line, width, indent);
    }
    out
}

fn wrap_line(out: &mut String, col: &mut usize, fresh: &mut bool, text: &str, width: usize, indent: usize) {
    for word in text.split(' ') {
        let w = word.width();
        let need = if *fresh { w } else { 1 + w };
        // Break where a break gains room: never on a line holding only the indent.
        if *col + need > width && (!*fresh || *col > indent) {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            *col = indent;
            *fresh = true;
        }
        if !*fresh {
            out.push(' ');
            *col += 1;
        }
        out.push_str(word);
        *col += w;
        *fresh = false;
    }
}

/// Display columns of `s`, not counting SGR colour sequences (`\x1b[…m`).
pub fn visible_width(s: &str) -> usize {
    let mut width = 0;
    let mut rest = s;
    while let Some(i) = rest.find('\u{1b}') {
        width += rest[..i].width();
        rest = &rest[i..];
        rest = rest.find('m').map_or("", |end| &rest[end + 1..]);
    }
    width + rest.width()
}

/// A comfy-table without borders or wrapping, for printers written before [`Table`].
/// New printers use [`Table`], which fits the terminal and paints cells.
pub fn new(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(presets::NOTHING);
    t.set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(header.iter().copied());
    t
}

/// `1234567` → `1.2 MB` (decimal units, as everywhere: [`crate::text::units::size`]).
pub fn size(bytes: u64) -> String {
    crate::text::units::size(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new(&["ref", "size", "name", "verdict"]).right("size").shrink("name", Keep::End, 8);
        t.row(["L2.1", "601 B", "-", "ok"]);
        t.row(["L7.1", "1.2 MB", "/home/dev/shop/tmp/layout-diagram.png", "INVALID"]);
        t
    }

    #[test]
    fn plain_output_is_aligned_full_and_without_trailing_spaces() {
        let out = table().render(&Term::PLAIN);
        assert_eq!(
            out,
            "ref     size  name                                   verdict\n\
             L2.1   601 B  -                                      ok\n\
             L7.1  1.2 MB  /home/dev/shop/tmp/layout-diagram.png  INVALID\n"
        );
    }

    #[test]
    fn a_terminal_gets_the_table_fitted_keeping_the_file_name() {
        let out = table().render(&Term { color: false, width: Some(40) });
        for line in out.lines() {
            assert!(line.width() <= 40, "{line:?} is {} wide", line.width());
            assert_eq!(line, line.trim_end());
        }
        assert!(out.contains("L7.1  1.2 MB  …yout-diagram.png  INVALID\n"), "{out}");
    }

    #[test]
    fn a_very_narrow_terminal_still_gets_no_wrapped_row() {
        let out = table().render(&Term { color: false, width: Some(20) });
        assert!(out.lines().all(|l| l.width() <= 20), "{out}");
    }

    #[test]
    fn colour_wraps_only_the_text() {
        let mut t = Table::new(&["a", "verdict"]);
        t.row([Cell::from("x"), Cell::styled("INVALID", styles::INVALID)]);
        let out = t.render(&Term { color: true, width: None });
        assert!(out.ends_with("x  \u{1b}[1m\u{1b}[31mINVALID\u{1b}[0m\n"), "{out:?}");
    }

    #[test]
    fn truncation_counts_display_columns() {
        assert_eq!(truncate("abcdef", 4, Keep::Start), "abc…");
        assert_eq!(truncate("/a/b/file.png", 9, Keep::End), "…file.png");
        assert_eq!(truncate("日本語です", 5, Keep::Start), "日本…");
        assert_eq!(truncate("short", 9, Keep::End), "short");
    }

    #[test]
    fn optional_columns_go_before_anything_is_cut() {
        let t = table().optional("size");
        let out = t.render(&Term { color: false, width: Some(56) });
        assert!(!out.contains("size"), "{out}");
        assert!(out.contains("/home/dev/shop/tmp/layout-diagram.png  INVALID"), "{out}");
        assert!(table().optional("size").render(&Term::PLAIN).contains("size"));
    }

    #[test]
    fn prose_wraps_at_spaces_on_a_terminal_only() {
        let text = "PNG ends after 434 of at least 639 bytes: the file was cut short";
        assert_eq!(wrap("  L7.1 INVALID: ", text, None, 4), format!("  L7.1 INVALID: {text}"));
        let out = wrap("  L7.1 INVALID: ", text, Some(40), 4);
        assert_eq!(out, "  L7.1 INVALID: PNG ends after 434 of at\n    least 639 bytes: the file was cut\n    short");
    }

    #[test]
    fn colour_sequences_take_no_room() {
        assert_eq!(visible_width("\u{1b}[1m\u{1b}[31mINVALID\u{1b}[0m: x"), 10);
    }

    #[test]
    fn sizes() {
        assert_eq!(size(69), "69 B");
        assert_eq!(size(6_291_456), "6.3 MB");
    }
}
