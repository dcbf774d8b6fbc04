//! Edits inside one JSON text by byte range, so that everything a rewrite does
//! not touch stays exactly as the agent wrote it: key order, number spelling,
//! escapes, spacing.
//!
//! [`locate`] walks the text to the value a JSON pointer names without
//! building a tree (a line may hold megabytes of base64); an [`Edit`] replaces
//! a range; [`apply`] applies a line's edits from the end backwards.

use std::ops::Range;

/// One change to a JSON text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub with: String,
}

/// Skips spaces.
fn ws(t: &[u8], mut i: usize) -> usize {
    while i < t.len() && matches!(t[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (its opening quote), after the closing
/// quote. Base64 strings run to megabytes: the scan jumps with memchr.
fn string_end(t: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        j += memchr::memchr2(b'"', b'\\', t.get(j..)?)?;
        if t[j] == b'"' {
            return Some(j + 1);
        }
        j += 2;
    }
}

/// The end of the value starting at `i`.
fn value_end(t: &[u8], i: usize) -> Option<usize> {
    match *t.get(i)? {
        b'"' => string_end(t, i),
        b'{' | b'[' => {
            // From one quote or closing bracket to the next (a SIMD search), the
            // opening brackets between them counted; strings are jumped whole.
            let mut depth = 0usize;
            let mut j = i;
            loop {
                let k = j + memchr::memchr3(b'"', b'}', b']', t.get(j..)?)?;
                depth += memchr::memchr2_iter(b'{', b'[', &t[j..k]).count();
                if t[k] == b'"' {
                    j = string_end(t, k)?;
                    continue;
                }
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k + 1);
                }
                j = k + 1;
            }
        }
        _ => {
            let mut j = i;
            while j < t.len() && !matches!(t[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// The values of a line that holds more than one, back to back (`{…}{…}`, two
/// records an agent glued together when a newline went missing): each value's
/// range, found by the same scan that finds a value's end (strings jumped
/// whole, so a `}{` inside one is no boundary); `None` when the line is one
/// value, or something else between them.
pub fn glued(t: &[u8]) -> Option<Vec<Range<usize>>> {
    let mut out = Vec::new();
    let mut i = ws(t, 0);
    while i < t.len() {
        if t[i] != b'{' {
            return None;
        }
        let end = value_end(t, i)?;
        out.push(i..end);
        i = ws(t, end);
    }
    (out.len() > 1).then_some(out)
}

/// A copy of `t` in which every number an f64 cannot hold (`1e400`, a 400-digit
/// integer: valid JSON that `serde_json` refuses) reads `0`, padded with spaces to
/// its length, so that the copy parses and every offset in it stays where it
/// was; `None` when `t` holds no such number. Only the reader's parse sees the
/// copy: a rewrite edits the original bytes, where the number stays as written.
pub fn tame_numbers(t: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < t.len() {
        match t[i] {
            b'"' => i = string_end(t, i).unwrap_or(t.len()),
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < t.len() && matches!(t[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    i += 1;
                }
                let too_big = std::str::from_utf8(&t[start..i])
                    .ok()
                    .and_then(|n| n.parse::<f64>().ok())
                    .is_some_and(f64::is_infinite);
                if too_big {
                    let o = out.get_or_insert_with(|| t.to_vec());
                    o[start] = b'0';
                    o[start + 1..i].fill(b' ');
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// A copy of `t` in which every lone surrogate escape in a string (`"\\ud83c"`
/// with no low half after it, what `JSON.stringify` writes of a string cut
/// inside an emoji, or a low half with no high one) reads `\\ufffd`, the
/// replacement character, at the same length; `None` when `t` holds none. The
/// record is valid JSON to JavaScript and RFC 8259's grammar, and the agents
/// read it; `serde_json` refuses it. As with [`tame_numbers`], only a parse
/// sees the copy: a rewrite edits the original bytes.
pub fn tame_surrogates(t: &[u8]) -> Option<Vec<u8>> {
    let at = lone_surrogates(t);
    if at.is_empty() {
        return None;
    }
    let mut out = t.to_vec();
    for i in at {
        out[i..i + 6].copy_from_slice(REPLACEMENT);
    }
    Some(out)
}

/// The escape of U+FFFD, the replacement character: as long as a surrogate's.
pub const REPLACEMENT: &[u8; 6] = b"\\ufffd";

/// Where each lone surrogate escape of `t` starts (its six bytes `\\udXXX`), in
/// order: a high half with no low half right after it, or a low half with no
/// high one right before it. Anthropic's JSON parser refuses either ("no low
/// surrogate in string", "invalid high surrogate in string").
pub fn lone_surrogates(t: &[u8]) -> Vec<usize> {
    let hex = |at: usize| -> Option<u16> {
        let d = t.get(at..at + 4)?;
        u16::from_str_radix(std::str::from_utf8(d).ok()?, 16).ok()
    };
    // The code unit of a `\\uXXXX` escape at `at`, if there is one.
    let unit = |at: usize| (t.get(at..at + 2) == Some(b"\\u")).then(|| hex(at + 2)).flatten();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_string = false;
    while i < t.len() {
        match (in_string, t[i]) {
            (_, b'"') => {
                in_string = !in_string;
                i += 1;
            }
            (true, b'\\') => match unit(i) {
                Some(0xD800..=0xDBFF) if unit(i + 6).is_some_and(|l| (0xDC00..=0xDFFF).contains(&l)) => i += 12,
                Some(0xD800..=0xDFFF) => {
                    out.push(i);
                    i += 6;
                }
                _ => i += 2,
            },
            _ => i += 1,
        }
    }
    out
}

/// How deep [`tame_depth`] lets values nest: well inside `serde_json`'s limit (128).
pub const DEPTH: usize = 100;

/// A copy of `t` in which every array or object nested [`DEPTH`] levels deep
/// that holds a deeper one reads `null`, padded with spaces to its length: JSON
/// nested past `serde_json`'s limit (valid, hostile or not) parses, every offset
/// in it where it was, the rest of the record read. With where each cut value
/// starts; `None` when nothing nests that deep. As with [`tame_numbers`], only
/// a parse sees the copy.
pub fn tame_depth(t: &[u8]) -> Option<(Vec<u8>, Vec<usize>)> {
    let mut out: Option<Vec<u8>> = None;
    let mut cuts = Vec::new();
    // Where each open array or object starts.
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        match t[i] {
            b'"' => {
                i = string_end(t, i).unwrap_or(t.len());
                continue;
            }
            b'[' | b'{' if open.len() == DEPTH => {
                // The innermost open value holds this one: it goes whole ("[[]]" at least).
                let start = open.pop().expect("DEPTH > 0");
                let Some(end) = value_end(t, start) else { break };
                let o = out.get_or_insert_with(|| t.to_vec());
                o[start..start + 4].copy_from_slice(b"null");
                o[start + 4..end].fill(b' ');
                cuts.push(start);
                i = end;
                continue;
            }
            b'[' | b'{' => open.push(i),
            b']' | b'}' => {
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    out.map(|o| (o, cuts))
}

/// The decoded text of the key string at `range` (quotes included).
fn key_text(t: &[u8], range: Range<usize>) -> Option<String> {
    let raw = &t[range.start + 1..range.end - 1];
    if !raw.contains(&b'\\') {
        return std::str::from_utf8(raw).ok().map(str::to_string);
    }
    serde_json::from_slice::<String>(&t[range]).ok()
}

/// One member of an object (with its key) or element of an array.
pub struct Child {
    pub key: Option<String>,
    /// The whole member, key included.
    pub member: Range<usize>,
    pub value: Range<usize>,
}

/// The members of the object or elements of the array at `i`.
pub fn children(t: &[u8], i: usize) -> Option<Vec<Child>> {
    let open = *t.get(i)?;
    let close = match open {
        b'{' => b'}',
        b'[' => b']',
        _ => return None,
    };
    let mut out = Vec::new();
    let mut j = ws(t, i + 1);
    if t.get(j) == Some(&close) {
        return Some(out);
    }
    loop {
        let start = j;
        let key = if open == b'{' {
            let end = string_end(t, j)?;
            let k = key_text(t, j..end)?;
            j = ws(t, end);
            if t.get(j) != Some(&b':') {
                return None;
            }
            j = ws(t, j + 1);
            Some(k)
        } else {
            None
        };
        let vstart = j;
        let vend = value_end(t, j)?;
        out.push(Child { key, member: start..vend, value: vstart..vend });
        j = ws(t, vend);
        match t.get(j) {
            Some(b',') => j = ws(t, j + 1),
            Some(c) if *c == close => return Some(out),
            _ => return None,
        }
    }
}

/// Splits a JSON pointer into its unescaped segments.
fn segments(pointer: &str) -> impl Iterator<Item = std::borrow::Cow<'_, str>> + '_ {
    pointer
        .split('/')
        .skip(1)
        .map(|s| if s.contains('~') { s.replace("~1", "/").replace("~0", "~").into() } else { s.into() })
}

/// Whether the key whose JSON string spans `range` of `t` is `want`: its
/// bytes compared where it has no escape (every key an agent writes), decoded
/// only where it has one.
fn key_is(t: &[u8], range: Range<usize>, want: &str) -> Option<bool> {
    let raw = &t[range.start + 1..range.end - 1];
    if !raw.contains(&b'\\') {
        return Some(raw == want.as_bytes());
    }
    Some(key_text(t, range)? == want)
}

/// The byte range of the value `pointer` names in `t` (`""` names the whole text).
/// Walks only as far as it must: members after the one it wants are not read.
pub fn locate(t: &[u8], pointer: &str) -> Option<Range<usize>> {
    let mut start = ws(t, 0);
    for seg in segments(pointer) {
        start = child(t, start, &seg)?;
    }
    Some(start..value_end(t, start)?)
}

/// Where the value of member `seg` (objects) or element `seg` (arrays) of the
/// container at `i` starts.
fn child(t: &[u8], i: usize, seg: &str) -> Option<usize> {
    let object = match *t.get(i)? {
        b'{' => true,
        b'[' => false,
        _ => return None,
    };
    let close = if object { b'}' } else { b']' };
    let want = if object { None } else { Some(seg.parse::<usize>().ok()?) };
    let mut j = ws(t, i + 1);
    let mut n = 0;
    // Of a key given twice, the last: the copy a parser reads.
    let mut last = None;
    while t.get(j)? != &close {
        let hit = if object {
            let end = string_end(t, j)?;
            let hit = key_is(t, j..end, seg)?;
            j = ws(t, end);
            if t.get(j) != Some(&b':') {
                return None;
            }
            j = ws(t, j + 1);
            hit
        } else {
            want == Some(n)
        };
        if hit && !object {
            return Some(j);
        }
        if hit {
            last = Some(j);
        }
        j = ws(t, value_end(t, j)?);
        match t.get(j)? {
            b',' => j = ws(t, j + 1),
            c if *c == close => return last,
            _ => return None,
        }
        n += 1;
    }
    last
}

/// The edit that removes the member or element `pointer` names, with one of
/// the commas around it, so the container stays valid JSON.
pub fn remove(t: &[u8], pointer: &str) -> Option<Edit> {
    let (parent, last) = pointer.rsplit_once('/')?;
    let container = locate(t, parent)?;
    let kids = children(t, container.start)?;
    let last = last.replace("~1", "/").replace("~0", "~");
    let at = if t[container.start] == b'{' {
        kids.iter().position(|c| c.key.as_deref() == Some(last.as_str()))?
    } else {
        last.parse::<usize>().ok().filter(|&n| n < kids.len())?
    };
    let member = kids[at].member.clone();
    let range = if at + 1 < kids.len() {
        // Up to the next member: its leading comma and spaces go too.
        member.start..kids[at + 1].member.start
    } else if at > 0 {
        kids[at - 1].member.end..member.end
    } else {
        member
    };
    Some(Edit { range, with: String::new() })
}

/// How many members or elements the container at `pointer` has.
pub fn count(t: &[u8], pointer: &str) -> Option<usize> {
    let r = locate(t, pointer)?;
    children(t, r.start).map(|k| k.len())
}

/// Applies edits to `t`. Edits must not overlap; an edit inside another is dropped.
pub fn apply(t: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len());
    // Writing to a Vec cannot fail.
    let _ = apply_to(t, edits, &mut out);
    out
}

/// [`apply`] written straight to `out`: a 150 MB line with a new session id
/// costs no second 150 MB buffer (`repair` streams its copy this way).
pub fn apply_to(t: &[u8], edits: &[Edit], out: &mut (impl std::io::Write + ?Sized)) -> std::io::Result<()> {
    apply_keeping(t, edits, out, |out, r| out.write_all(&t[r]))
}

/// [`apply_to`], each run of `t` that stays written by `keep` (given its
/// range in `t`): a copy writes the payloads in it from the file.
pub fn apply_keeping<W: std::io::Write + ?Sized>(
    t: &[u8],
    edits: &[Edit],
    out: &mut W,
    mut keep: impl FnMut(&mut W, Range<usize>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut at = 0;
    for e in applied(edits) {
        keep(out, at..e.range.start)?;
        out.write_all(e.with.as_bytes())?;
        at = e.range.end;
    }
    keep(out, at..t.len())
}

/// The edits [`apply`] makes of `edits`, in order: those inside (or
/// overlapping) one before them are dropped.
pub fn applied(edits: &[Edit]) -> Vec<&Edit> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, std::cmp::Reverse(e.range.end)));
    let mut at = 0;
    sorted.retain(|e| {
        let kept = e.range.start >= at;
        if kept {
            at = e.range.end;
        }
        kept
    });
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &[u8] = br#"{"a": 1.50, "message":{"content":[{"type":"text","text":"x\"}"},{"type":"image","source":{"data":"QUJD"}}],"k\/e~0y":true}, "z":[]}"#;

    #[test]
    fn locates_values_by_pointer() {
        let r = locate(LINE, "/message/content/1/source/data").unwrap();
        assert_eq!(&LINE[r], br#""QUJD""#);
        let r = locate(LINE, "/a").unwrap();
        assert_eq!(&LINE[r], b"1.50");
        let r = locate(LINE, "/message/k~1e~00y").unwrap();
        assert_eq!(&LINE[r], b"true");
        assert!(locate(LINE, "/message/content/2").is_none());
        assert_eq!(count(LINE, "/message/content"), Some(2));
        assert_eq!(count(LINE, "/z"), Some(0));
    }

    #[test]
    fn numbers_past_f64_read_as_zero_at_the_same_offsets() {
        let t = br#"{"n":1e400,"s":"1e400","m":-2E+999,"k":12.5,"big":1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000}"#;
        let tamed = tame_numbers(t).expect("two numbers overflow");
        assert_eq!(tamed.len(), t.len());
        let v: serde_json::Value = serde_json::from_slice(&tamed).expect("parses");
        assert_eq!((v["n"].as_f64(), v["m"].as_f64(), v["big"].as_f64()), (Some(0.0), Some(0.0), Some(0.0)));
        assert_eq!(v["s"], "1e400", "a string is left alone");
        assert_eq!(v["k"], 12.5);
        assert!(tame_numbers(br#"{"k":1e300}"#).is_none());
    }

    #[test]
    fn a_value_nested_past_the_limit_reads_null_and_the_rest_stays() {
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let t = format!(r#"{{"a":{deep},"b":"[{{not a bracket","c":[1,{{"d":2}}]}}"#);
        assert!(serde_json::from_str::<serde_json::Value>(&t).is_err());
        let (tamed, cuts) = tame_depth(t.as_bytes()).expect("nested past the limit");
        assert_eq!((tamed.len(), cuts.len()), (t.len(), 1));
        let v: serde_json::Value = serde_json::from_slice(&tamed).unwrap();
        assert_eq!(v["b"], "[{not a bracket");
        assert_eq!(v["c"][1]["d"], 2);
        // The array at the limit is the one cut: what is above it stays.
        let mut at = &v["a"]; // at depth 2
        for _ in 0..DEPTH - 3 {
            at = &at[0];
        }
        assert_eq!(at.as_array().map(Vec::len), Some(1), "{at}");
        assert_eq!(at[0], serde_json::Value::Null, "{at}");
        assert!(tame_depth(br#"{"a":[[1]],"b":"[[[[["}"#).is_none());
    }

    #[test]
    fn edits_keep_everything_else_byte_for_byte() {
        let r = locate(LINE, "/message/content/1").unwrap();
        let out = apply(LINE, &[Edit { range: r, with: r#"{"type":"text","text":"note"}"#.into() }]);
        let want = br#"{"a": 1.50, "message":{"content":[{"type":"text","text":"x\"}"},{"type":"text","text":"note"}],"k\/e~0y":true}, "z":[]}"#;
        assert_eq!(out, want.to_vec());
    }

    #[test]
    fn removal_keeps_the_json_valid() {
        for (ptr, want) in [
            ("/message/content/0", r#"{"type":"image","source":{"data":"QUJD"}}"#),
            ("/message/content/1", r#"{"type":"text","text":"x\"}"}"#),
        ] {
            let out = apply(LINE, &[remove(LINE, ptr).unwrap()]);
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(v["message"]["content"].as_array().unwrap().len(), 1);
            assert_eq!(v["message"]["content"][0], serde_json::from_str::<serde_json::Value>(want).unwrap());
        }
        let out = apply(LINE, &[remove(LINE, "/a").unwrap()]);
        assert!(out.starts_with(br#"{"message""#), "{}", String::from_utf8_lossy(&out));
        let out = apply(LINE, &[remove(LINE, "/z").unwrap()]);
        assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
    }
}
