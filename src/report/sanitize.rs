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
