//! Text from a session is untrusted: strip what could drive a terminal.

/// Replaces control characters (C0 except `\n`/`\t`, DEL, C1) and bidi overrides
/// with visible escapes, so an ANSI sequence in a file name or error prints as text.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.extend(c.escape_unicode()),
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                out.extend(c.escape_unicode())
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
    use super::sanitize;

    #[test]
    fn escapes_ansi_and_bidi() {
        assert_eq!(sanitize("a\x1b[31mb"), "a\\u{1b}[31mb");
        assert_eq!(sanitize("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(sanitize("ok\nline\ttab"), "ok\nline\ttab");
    }
}
