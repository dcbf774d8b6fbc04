//! Untrusted text (a file name, a path) inside a command the user is told to run.
//!
//! [`super::sanitize()`] makes text safe to show but changes it: `\u{1b}` in a
//! printed command names another file. A command must name the real one, so
//! text going into a command is quoted for a POSIX shell instead: single quotes
//! around it, and every character that could drive a terminal (controls, bidi
//! overrides) spelled as the octal bytes of a `printf` the shell runs, so the
//! printed line holds none of them and the shell still gets the exact name.

/// `s` as one word of a POSIX shell command, unquoted when nothing in it needs quoting.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        return s.to_string();
    }
    let mut out = String::new();
    // Whether a single-quoted part is open.
    let mut open = false;
    let mut escaped = String::new();
    let flush = |out: &mut String, escaped: &mut String| {
        if !escaped.is_empty() {
            // `printf` turns `\NNN` into the byte; `$(…)` in double quotes keeps it one word.
            out.push_str(&format!("\"$(printf '{escaped}')\""));
            escaped.clear();
        }
    };
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        // Command substitution strips trailing newlines: a newline goes into the
        // `printf` with the character after it, so it is never the last byte. A
        // name ending in one keeps it quoted as it is (every POSIX shell reads it
        // back; the line after holds only the closing quote and our own words).
        if c == '\n' && chars.peek().is_none() {
            flush(&mut out, &mut escaped);
            out.push_str(if open { "\n'" } else { "'\n'" });
            open = false;
            break;
        }
        let after_newline = escaped.ends_with("\\012");
        if hazardous(c) || after_newline {
            if open {
                out.push('\'');
                open = false;
            }
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                escaped.push_str(&format!("\\{b:03o}"));
            }
            continue;
        }
        flush(&mut out, &mut escaped);
        if c == '\'' {
            // A quote cannot appear inside single quotes: close, escape it, reopen.
            if open {
                out.push('\'');
                open = false;
            }
            out.push_str("\\'");
            continue;
        }
        if !open {
            out.push('\'');
            open = true;
        }
        out.push(c);
    }
    flush(&mut out, &mut escaped);
    if open {
        out.push('\'');
    }
    if out.is_empty() { "''".into() } else { out }
}

/// What [`super::sanitize()`] would escape: a command shows none of it. A newline
/// stays inside the quotes as it is (sanitize keeps it too): command
/// substitution would drop one that ends the name.
fn hazardous(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn plain_words_stay_as_they_are() {
        assert_eq!(shell_quote("/tmp/a-b_c.jsonl"), "/tmp/a-b_c.jsonl");
    }

    #[test]
    fn quotes_spaces_and_quotes() {
        assert_eq!(shell_quote("my session.jsonl"), "'my session.jsonl'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn controls_become_printf_bytes_not_visible_escapes() {
        let q = shell_quote("a\u{1b}[31mb.jsonl");
        assert_eq!(q, "'a'\"$(printf '\\033')\"'[31mb.jsonl'");
        assert!(!q.contains('\u{1b}') && !q.contains("\\u{"));
        assert_eq!(shell_quote("x\u{202e}y"), "'x'\"$(printf '\\342\\200\\256')\"'y'");
    }

    /// The shell itself reads each quoted word back as the exact name.
    #[test]
    fn a_shell_reads_back_the_real_name() {
        for name in ["a\u{1b}[31mb.jsonl", "it's \u{7}x", "end\u{1b}", "x\u{202e}y", "line\nbreak\n", "'"] {
            let script = format!("printf %s {}", shell_quote(name));
            let out = std::process::Command::new("sh").arg("-c").arg(&script).output().expect("sh runs");
            assert_eq!(String::from_utf8_lossy(&out.stdout), name, "{script}");
        }
    }
}
