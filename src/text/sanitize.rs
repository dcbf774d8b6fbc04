//! Text from a session is untrusted: strip what could drive a terminal or forge output.

/// `s` as one line of plain text: every control character (C0 with `\n`,
/// `\r` and `\t`, DEL, C1), the Unicode line and paragraph separators and
/// the bidi overrides as visible escapes. A newline in a file name or a tool
/// name would otherwise start a row of its own (`check` printing a forged
/// `ok` line), an ANSI sequence would drive the terminal. Every string from a
/// session shown to a person goes through it: tables, prose, `check` rows,
/// annotations, errors.
pub fn sanitize(s: &str) -> String {
    escape(s, false)
}

/// [`sanitize`] keeping newlines and tabs: for markup (the HTML page), where
/// they cannot start a row and a multi-line text reads as it was written.
pub fn sanitize_keeping_lines(s: &str) -> String {
    escape(s, true)
}

/// A path as [`sanitize`] shows it: the one spelling of a file name in a message.
pub fn sanitize_path(path: &std::path::Path) -> String {
    sanitize(&path.display().to_string())
}

fn escape(s: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' if keep_lines => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.extend(c.escape_unicode()),
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                out.extend(c.escape_unicode());
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` as XML or HTML character data or a quoted attribute value: markup and
/// quotes escaped; newlines, tabs and carriage returns as character references
/// (an attribute keeps them, text renders them the same); the controls XML 1.0
/// forbids even as references replaced. JUnit reports and the HTML page share it.
pub fn markup_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{sanitize, sanitize_keeping_lines};

    #[test]
    fn escapes_ansi_and_bidi() {
        assert_eq!(sanitize("a\x1b[31mb"), "a\\u{1b}[31mb");
        assert_eq!(sanitize("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(sanitize_keeping_lines("ok\nline\ttab\x1b"), "ok\nline\ttab\\u{1b}");
    }

    #[test]
    fn every_separator_stays_on_one_line() {
        let forged = "x\nok    FORGED.jsonl (claude-code)\r\u{2028}\u{2029}\u{85}\u{b}\u{c}\t";
        let shown = sanitize(forged);
        assert_eq!(shown.lines().count(), 1, "{shown}");
        assert!(!shown.chars().any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}'), "{shown}");
        assert!(shown.starts_with("x\\nok    FORGED.jsonl (claude-code)\\r\\u{2028}"), "{shown}");
    }
}
