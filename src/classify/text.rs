//! Bounding and normalising untrusted input before any matching.
//!
//! Errors can be megabytes (an agent that logged a whole request body next to the error).
//! The signal is always near the start (status, envelope) or the end (the provider's reason),
//! so a huge input is cut to its head and tail. Matching text is lowercased and its
//! whitespace collapsed once, so every table lookup is a plain linear `contains`.

use std::borrow::Cow;

/// Inputs up to this size are classified whole.
pub const MAX_INPUT: usize = 256 * 1024;
/// Bytes kept from each end of a larger input.
const KEEP: usize = MAX_INPUT / 2;

/// The head and tail of `text` when it is larger than [`MAX_INPUT`], on char boundaries.
pub fn cap(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_INPUT {
        return Cow::Borrowed(text);
    }
    let mut head = KEEP;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - KEEP;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    Cow::Owned(format!("{}\n…\n{}", &text[..head], &text[tail..]))
}

/// Reads `input` to its end keeping what [`cap`] would keep: all of it up to
/// [`MAX_INPUT`], else its head and tail, in memory bounded by `MAX_INPUT`
/// whatever its size (a gigabyte piped to `classify -`). Bytes that are not
/// UTF-8 are replaced.
pub fn read_capped(mut input: impl std::io::Read) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(KEEP);
    (&mut input).take(MAX_INPUT as u64).read_to_end(&mut head)?;
    if head.len() < MAX_INPUT {
        return Ok(String::from_utf8_lossy(&head).into_owned());
    }
    // Past the whole-input size: the head is its first KEEP bytes, and the tail
    // the last KEEP of everything read, kept in a ring.
    let mut ring = head.split_off(KEEP);
    let mut at = 0;
    let mut more = false;
    let mut buf = vec![0; 64 * 1024];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        more = true;
        for &b in &buf[..n] {
            ring[at] = b;
            at = (at + 1) % KEEP;
        }
    }
    ring.rotate_left(at);
    if !more {
        head.extend_from_slice(&ring);
        return Ok(String::from_utf8_lossy(&head).into_owned());
    }
    Ok(format!("{}\n…\n{}", String::from_utf8_lossy(&head), String::from_utf8_lossy(&ring)))
}

/// Lowercases, turns `\n`-style escapes and whitespace runs into one space, maps the
/// typographic apostrophe to `'`, and spells negative contractions out ("couldn't" →
/// "could not"), so every table needs one spelling of a phrase.
pub fn normalize(s: &str, out: &mut String) {
    let start = out.len();
    let mut space = out.is_empty() || out.ends_with(' ');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        // A setting's assignment (`API_TIMEOUT_MS=600000ms`, the advice an agent adds)
        // names no failure: left out up to the next space.
        if c.is_ascii_uppercase() && space && assignment(chars.clone()) {
            while chars.peek().is_some_and(|n| !n.is_whitespace()) {
                chars.next();
            }
            continue;
        }
        let ws = c.is_whitespace()
            || (c == '\\' && matches!(chars.peek(), Some('n' | 't' | 'r')) && {
                chars.next();
                true
            });
        if ws {
            if !space {
                out.push(' ');
                space = true;
            }
            continue;
        }
        space = false;
        match c {
            '\u{2019}' | '\u{2018}' => out.push('\''),
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
    // A URL's query string (a signed URL's `X-Amz-Credential=…`) and its folders (a
    // documentation link's `/docs/multimodal/`) are no vocabulary.
    if out[start..].contains("://") {
        let masked = without_queries(&out[start..]);
        out.truncate(start);
        out.push_str(&masked);
    }
    if out[start..].contains("n't") {
        let spelled = out[start..].replace("can't", "cannot").replace("won't", "will not").replace("n't", " not");
        out.truncate(start);
        out.push_str(&spelled);
    }
}

/// Shortens `s` to at most `max` bytes on a char boundary, marking the cut with `…`.
/// Whether the token that goes on with `rest` after an upper-case letter is
/// `NAME_WITH_UNDERSCORES=value`.
fn assignment(mut rest: std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    let mut underscore = false;
    let mut len = 1;
    while let Some(&c) = rest.peek() {
        match c {
            'A'..='Z' | '0'..='9' => {}
            '_' => underscore = true,
            '=' => return underscore && len > 2,
            _ => return false,
        }
        len += 1;
        rest.next();
    }
    false
}

/// `s` with every URL cut to its host, first and last path segments: the query string
/// (from a `?`) and the folders between are left out, up to the next space, quote or
/// closing bracket. The host and first segment name the provider (`cloud.google.com/
/// vertex-ai`); the last segment names the file (an image's `….png`) or the page.
fn without_queries(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let url_end = rest[i..].find([' ', '"', '\'', ')', ']', '>', ',']).map_or(rest.len(), |e| i + e);
        let url = &rest[i + 3..url_end];
        let url = url.find('?').map_or(url, |q| &url[..q]);
        out.push_str(&rest[..i + 3]);
        let first_end = url.find('/').and_then(|h| url[h + 1..].find('/').map(|f| h + 1 + f));
        match (first_end, url.rfind('/')) {
            (Some(first_end), Some(last)) if last > first_end => {
                out.push_str(&url[..first_end]);
                out.push_str(&url[last..]);
            }
            _ => out.push_str(url),
        }
        rest = &rest[url_end..];
    }
    out.push_str(rest);
    out
}

pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_input_is_read_as_its_head_and_tail_in_bounded_memory() {
        let small = "x".repeat(1000);
        assert_eq!(read_capped(small.as_bytes()).unwrap(), small);
        let exact = "y".repeat(MAX_INPUT);
        assert_eq!(read_capped(exact.as_bytes()).unwrap(), exact);
        let big = format!("HEAD{}TAIL", "z".repeat(3 * MAX_INPUT));
        let read = read_capped(big.as_bytes()).unwrap();
        assert_eq!(read, cap(&big), "what is read is what cap keeps");
        assert!(read.starts_with("HEAD") && read.ends_with("TAIL") && read.len() < MAX_INPUT + 10);
    }

    #[test]
    fn normalize_collapses_and_lowercases() {
        let mut out = String::new();
        normalize("Invalid `signature` in `thinking`\\n      Block  Couldn\u{2019}t", &mut out);
        assert_eq!(out, "invalid `signature` in `thinking` block could not");
        let mut out = String::new();
        normalize("Can't load it; it won't parse, and doesn't decode", &mut out);
        assert_eq!(out, "cannot load it; it will not parse, and does not decode");
    }

    #[test]
    fn a_settings_assignment_is_no_vocabulary() {
        let mut out = String::new();
        normalize("Connection error. API_TIMEOUT_MS=600000ms, try increasing it RESOURCE_EXHAUSTED", &mut out);
        assert_eq!(out, "connection error. try increasing it resource_exhausted");
    }

    #[test]
    fn a_urls_query_is_no_vocabulary() {
        let mut out = String::new();
        normalize("Timeout while downloading url: http://h/a.png?X-Amz-Credential=k%2F1 Request id: 7", &mut out);
        assert_eq!(out, "timeout while downloading url: http://h/a.png request id: 7");
        let mut out = String::new();
        normalize("see https://platform.openai.com/docs (no query) and \"http://x/?a=1\"", &mut out);
        assert_eq!(out, "see https://platform.openai.com/docs (no query) and \"http://x/\"");
    }

    #[test]
    fn cap_keeps_head_and_tail() {
        let big = format!("HEAD{}TAIL", "é".repeat(MAX_INPUT));
        let capped = cap(&big);
        assert!(capped.len() <= MAX_INPUT + 8);
        assert!(capped.starts_with("HEAD") && capped.ends_with("TAIL"));
        assert!(matches!(cap("small"), Cow::Borrowed("small")));
    }

    #[test]
    fn clip_respects_char_boundaries() {
        assert_eq!(clip("ééé", 3), "é…");
        assert_eq!(clip("abc", 3), "abc");
    }
}
