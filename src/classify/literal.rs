//! A small, lenient parser for the non-JSON object literals that agents record:
//! Python SDK reprs (`{'error': {'message': "…", 'param': None}}`, `True`/`False`/`None`,
//! single or double quotes, `\xNN` escapes, tuples) and JavaScript-ish literals with bare
//! keys (`{name:"APIError", data:{…}}`, `undefined`).
//!
//! Strict JSON is handled by `serde_json`; this is the fallback. It is a recursive-descent
//! parser with a depth cap, one pass over the input, no backtracking: linear and bounded.

use serde_json::{Map, Value};

/// Deepest nesting accepted; deeper input is refused rather than risking the stack.
const MAX_DEPTH: usize = 64;

/// Parses one literal at the start of `s` (leading whitespace allowed).
/// Returns the value and the number of bytes consumed, or `None` if it is not a literal.
pub fn parse_prefix(s: &str) -> Option<(Value, usize)> {
    let mut p = Parser { b: s.as_bytes(), s, i: 0 };
    p.ws();
    let v = p.value(0)?;
    Some((v, p.i))
}

struct Parser<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.seq(b']', depth),
            b'(' => self.seq(b')', depth),
            b'\'' | b'"' => self.string().map(Value::String),
            b'-' | b'0'..=b'9' => self.number(),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let word = self.ident()?;
                match word {
                    "True" | "true" => Some(Value::Bool(true)),
                    "False" | "false" => Some(Value::Bool(false)),
                    "None" | "null" | "undefined" => Some(Value::Null),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.i += 1; // '{'
        let mut map = Map::new();
        loop {
            self.ws();
            match self.peek()? {
                b'}' => {
                    self.i += 1;
                    return Some(Value::Object(map));
                }
                b',' => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            let key = match self.peek()? {
                b'\'' | b'"' => self.string()?,
                b'-' | b'0'..=b'9' => match self.number()? {
                    Value::Number(n) => n.to_string(),
                    _ => return None,
                },
                c if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => self.ident()?.to_string(),
                _ => return None,
            };
            self.ws();
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            let v = self.value(depth + 1)?;
            map.insert(key, v);
        }
    }

    fn seq(&mut self, close: u8, depth: usize) -> Option<Value> {
        self.i += 1; // '[' or '('
        let mut items = Vec::new();
        loop {
            self.ws();
            match self.peek()? {
                c if c == close => {
                    self.i += 1;
                    return Some(Value::Array(items));
                }
                b',' => self.i += 1,
                _ => items.push(self.value(depth + 1)?),
            }
        }
    }

    fn ident(&mut self) -> Option<&str> {
        let start = self.i;
        while self.i < self.b.len()
            && (self.b[self.i].is_ascii_alphanumeric() || self.b[self.i] == b'_' || self.b[self.i] == b'$')
        {
            self.i += 1;
        }
        (self.i > start).then(|| &self.s[start..self.i])
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        while self.i < self.b.len() && matches!(self.b[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
            self.i += 1;
        }
        let text = &self.s[start..self.i];
        if let Ok(n) = text.parse::<i64>() {
            return Some(Value::from(n));
        }
        text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
    }

    /// A quoted string with Python/JS escapes. Unknown escapes keep the backslash.
    fn string(&mut self) -> Option<String> {
        let quote = self.b[self.i];
        self.i += 1;
        let mut out = String::new();
        loop {
            // Copy the run up to the next quote or backslash in one go (keeps UTF-8 intact).
            let run_start = self.i;
            while self.i < self.b.len() && self.b[self.i] != quote && self.b[self.i] != b'\\' {
                self.i += 1;
            }
            out.push_str(self.s.get(run_start..self.i)?);
            match self.peek()? {
                c if c == quote => {
                    self.i += 1;
                    return Some(out);
                }
                _ => {
                    // backslash
                    self.i += 1;
                    let e = self.peek()?;
                    self.i += 1;
                    match e {
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        b'r' => out.push('\r'),
                        b'0' => out.push('\0'),
                        b'\\' => out.push('\\'),
                        b'\'' => out.push('\''),
                        b'"' => out.push('"'),
                        b'/' => out.push('/'),
                        b'x' => out.push(self.hex(2)?),
                        b'u' => out.push(self.hex(4)?),
                        b'U' => out.push(self.hex(8)?),
                        b'\n' => {}
                        _ => {
                            out.push('\\');
                            // Re-read the escaped byte as ordinary text (it may start a UTF-8 char).
                            self.i -= 1;
                        }
                    }
                }
            }
        }
    }

    fn hex(&mut self, n: usize) -> Option<char> {
        let digits = self.s.get(self.i..self.i + n)?;
        let code = u32::from_str_radix(digits, 16).ok()?;
        self.i += n;
        Some(char::from_u32(code).unwrap_or('\u{fffd}'))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_prefix;
    use serde_json::json;

    #[test]
    fn python_repr() {
        let s = r#"{'error': {'message': "Item with id 'rs_1' not found.", 'type': 'invalid_request_error', 'param': None, 'code': None, 'ok': True}} trailing"#;
        let (v, used) = parse_prefix(s).expect("parses");
        assert_eq!(
            v,
            json!({"error": {"message": "Item with id 'rs_1' not found.", "type": "invalid_request_error", "param": null, "code": null, "ok": true}})
        );
        assert_eq!(&s[used..], " trailing");
    }

    #[test]
    fn escapes_and_tuples() {
        let (v, _) = parse_prefix(r"{'m': 'it\'s \x41\u00e9', 't': (1, 2.5, -3)}").expect("parses");
        assert_eq!(v, json!({"m": "it's Aé", "t": [1, 2.5, -3]}));
    }

    #[test]
    fn javascript_bare_keys() {
        let (v, _) = parse_prefix(r#"{name:"APIError", data:{statusCode:400, isRetryable:false, x:undefined}}"#)
            .expect("parses");
        assert_eq!(v, json!({"name": "APIError", "data": {"statusCode": 400, "isRetryable": false, "x": null}}));
    }

    #[test]
    fn refuses_garbage_and_deep_nesting() {
        assert!(parse_prefix("{'a': oops}").is_none());
        assert!(parse_prefix("{'a': 'unterminated").is_none());
        let deep = "[".repeat(10_000);
        assert!(parse_prefix(&deep).is_none());
    }
}
