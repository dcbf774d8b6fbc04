//! The one table style, decided once: box lines on a terminal, plain ASCII elsewhere.

use std::io::IsTerminal as _;

use comfy_table::{ContentArrangement, Table, presets};

/// A table with `header`, styled for where stdout goes.
pub fn new(header: &[&str]) -> Table {
    let mut t = Table::new();
    let tty = std::io::stdout().is_terminal();
    t.load_preset(if tty { presets::UTF8_FULL_CONDENSED } else { presets::NOTHING });
    t.set_content_arrangement(if tty { ContentArrangement::Dynamic } else { ContentArrangement::Disabled });
    t.set_header(header.iter().copied());
    t
}

/// `1234567` → `1.2 MB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes() {
        assert_eq!(super::size(69), "69 B");
        assert_eq!(super::size(6_291_456), "6.3 MB");
    }
}
