//! A JSON value that borrows its strings from the line it was parsed from.
//!
//! Sessions are mostly base64 inside a few huge strings. `serde_json::Value` would
//! copy each of them (doubling peak memory per line) and forget where they were;
//! this value borrows them, so a payload costs nothing until it is decoded and
//! its byte offset inside the line is known — which is what a rewrite needs to
//! find the bytes again. Strings with JSON escapes are the only ones copied.
//! A list of small whole numbers (Kiro CLI spells an image's bytes so) is kept
//! as the bytes it spells ([`List`]): one byte each where a `Value` takes 32.

pub mod salvage;
pub mod splice;

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One parsed JSON value. Objects keep their key order; lookups are linear,
/// which is faster than hashing for the handful of keys a record has.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Number(f64),
    Str(Cow<'a, str>),
    Array(List<'a>),
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

/// An array's elements. A list whose every element is a whole number from 0
/// to 255, written without fraction or exponent, is kept as those bytes:
/// Kiro CLI writes each image as such a list, a 4 MB image a 14 MB line, and
/// as values it cost 180 MB. It reads as a slice of values all the same
/// ([`Deref`]), built the first time it is asked for, so a consumer that wants
/// the bytes asks [`List::as_bytes`] (or [`Value::as_bytes`]) instead.
#[derive(Clone, Debug, Default)]
pub struct List<'a>(Repr<'a>);

#[derive(Clone, Debug)]
enum Repr<'a> {
    Values(Vec<Value<'a>>),
    /// The numbers own nothing borrowed, so their values are `'static`: a
    /// cell of `Value<'a>` would make `Value` invariant in `'a`.
    Bytes(Vec<u8>, OnceLock<Vec<Value<'static>>>),
}

impl Default for Repr<'_> {
    fn default() -> Self {
        Repr::Values(Vec::new())
    }
}

impl List<'_> {
    /// The elements as bytes, when every one is a whole number 0 to 255 as
    /// the parser met them; `None` for any other list (and for `[]`).
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match &self.0 {
            Repr::Bytes(b, _) => Some(b),
            Repr::Values(_) => None,
        }
    }

    /// The number of elements, without building values for a byte list.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Bytes(b, _) => b.len(),
            Repr::Values(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> From<Vec<Value<'a>>> for List<'a> {
    fn from(v: Vec<Value<'a>>) -> Self {
        List(Repr::Values(v))
    }
}

impl<'a> Deref for List<'a> {
    type Target = [Value<'a>];

    fn deref(&self) -> &[Value<'a>] {
        match &self.0 {
            Repr::Values(v) => v,
            Repr::Bytes(b, values) => values.get_or_init(|| b.iter().map(|&n| Value::Number(f64::from(n))).collect()),
        }
    }
}

impl<'b, 'a> IntoIterator for &'b List<'a> {
    type Item = &'b Value<'a>;
    type IntoIter = std::slice::Iter<'b, Value<'a>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq for List<'_> {
    /// Element by element, whichever way each list is kept.
    fn eq(&self, other: &Self) -> bool {
        match (self.as_bytes(), other.as_bytes()) {
            (Some(a), Some(b)) => a == b,
            _ => self.len() == other.len() && self[..] == other[..],
        }
    }
}

static NULL: Value<'static> = Value::Null;

/// A record parsed as a `serde_json::Value` (what preview builds requests
/// from), tolerant as [`Value::parse_tolerant`] is: a number an f64 cannot hold
/// reads 0 and a value nested past [`crate::json::splice::DEPTH`] levels
/// `null`, as the reader's finding (`line.too_deep`) says.
pub fn serde_tolerant(bytes: &[u8]) -> serde_json::Result<serde_json::Value> {
    serde_json::from_slice(bytes).or_else(|e| serde_json::from_slice(&tamed(bytes, e)?.0))
}

/// A same-length copy of `bytes` that `serde_json` parses, for the error `e` it
/// gave on them: its numbers too large read 0 and its values nested too deep
/// `null`, with where each of those starts. `e` again for any other error.
fn tamed(bytes: &[u8], e: serde_json::Error) -> serde_json::Result<(Vec<u8>, Vec<usize>)> {
    use splice::{tame_depth, tame_numbers, tame_surrogates};
    let said = e.to_string();
    let tameable = [
        "number out of range",
        "recursion limit exceeded",
        "lone leading surrogate",
        "unexpected end of hex escape",
        "invalid unicode code point",
    ];
    if !tameable.iter().any(|t| said.starts_with(t)) {
        return Err(e);
    }
    // Each taming keeps every offset, so they compose in any order.
    let mut copy: Option<Vec<u8>> = tame_surrogates(bytes);
    if let Some(n) = tame_numbers(copy.as_deref().unwrap_or(bytes)) {
        copy = Some(n);
    }
    match tame_depth(copy.as_deref().unwrap_or(bytes)) {
        Some(deep) => Ok(deep),
        None => copy.map(|n| (n, Vec::new())).ok_or(e),
    }
}

impl<'a> Value<'a> {
    /// Parses one JSON document; `serde_json`'s nesting limit (128) turns hostile
    /// depth into an error instead of a stack overflow.
    pub fn parse(bytes: &'a [u8]) -> Result<Value<'a>, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let v = Value::deserialize(&mut de)?;
        de.end()?;
        Ok(v)
    }

    /// As [`Value::parse`], but valid JSON that `serde_json` refuses does not
    /// lose the record: a number too large for an f64 (`1e400`) or values nested
    /// past its limit. The value is parsed from a same-length copy kept in
    /// `spare` where such numbers read 0 ([`crate::json::splice::tame_numbers`])
    /// and such values `null` ([`crate::json::splice::tame_depth`]). Returns
    /// the value, the bytes it borrows from (at the same offsets as `bytes`) and
    /// where each value read as `null` starts.
    pub fn parse_tolerant(
        bytes: &'a [u8],
        spare: &'a mut Option<Vec<u8>>,
    ) -> Result<(Value<'a>, &'a [u8], Vec<usize>), serde_json::Error> {
        match Value::parse(bytes) {
            Ok(v) => Ok((v, bytes, Vec::new())),
            Err(e) => {
                let (copy, cut) = tamed(bytes, e)?;
                let copy: &'a [u8] = spare.insert(copy);
                Value::parse(copy).map(|v| (v, copy, cut))
            }
        }
    }

    /// The member `key` of an object, or `Null`. Of a key given twice, the last,
    /// as the agents' `JSON.parse` (and `serde_json`) read it.
    pub fn get(&self, key: &str) -> &Value<'a> {
        match self {
            Value::Object(m) => m.iter().rev().find(|(k, _)| k == key).map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }

    /// Follows a chain of object keys.
    pub fn at(&self, keys: &[&str]) -> &Value<'a> {
        keys.iter().fold(self, |v, k| v.get(k))
    }

    pub fn has(&self, key: &str) -> bool {
        matches!(self, Value::Object(m) if m.iter().any(|(k, _)| k == key))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The string, borrowed from the source line when it had no escapes.
    pub fn as_cow(&self) -> Option<&Cow<'a, str>> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The elements of an array; empty for anything else. A byte list's
    /// values are built on the first call: [`Value::as_bytes`] reads it as it is kept.
    pub fn items(&self) -> &[Value<'a>] {
        match self {
            Value::Array(a) => a,
            _ => &[],
        }
    }

    /// An array of whole numbers 0 to 255 as its bytes, without a value per
    /// element; `None` for anything else (see [`List`]).
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Array(a) => a.as_bytes(),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    /// The object's keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        let m: &[(Cow<'a, str>, Value<'a>)] = match self {
            Value::Object(m) => m,
            _ => &[],
        };
        m.iter().map(|(k, _)| k.as_ref())
    }

    /// A short string for an id or a name: strings as they are, numbers printed.
    pub fn to_text(&self) -> Option<String> {
        match self {
            Value::Str(s) => Some(s.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Value<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor(std::marker::PhantomData))
    }
}

struct ValueVisitor<'a>(std::marker::PhantomData<&'a ()>);

/// Wraps a key so `visit_borrowed_str` keeps it borrowed.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_str(ValueVisitor(std::marker::PhantomData))? {
            Value::Str(s) => Ok(Key(s)),
            _ => Err(de::Error::custom("object key is not a string")),
        }
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ValueVisitor<'a> {
    type Value = Value<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value<'a>, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value<'a>, E> {
        Ok(Value::Bool(v))
    }
    #[allow(clippy::cast_precision_loss, reason = "a JSON number is an f64, as the agents' JavaScript reads it")]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value<'a>, E> {
        Ok(Value::Number(v as f64))
    }
    #[allow(clippy::cast_precision_loss, reason = "a JSON number is an f64, as the agents' JavaScript reads it")]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value<'a>, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value<'a>, E> {
        Ok(Value::Number(v))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Value<'a>, E> {
        Ok(Value::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value<'a>, E> {
        Ok(Value::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value<'a>, E> {
        Ok(Value::Str(Cow::Owned(v)))
    }
    /// Bytes while every element is one, values from the first that is not.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value<'a>, A::Error> {
        let mut bytes = Vec::new();
        let other = loop {
            match seq.next_element::<Element<'a>>()? {
                Some(Element::Byte(b)) => bytes.push(b),
                Some(Element::Other(v)) => break v,
                None if bytes.is_empty() => return Ok(Value::Array(List::default())),
                None => {
                    bytes.shrink_to_fit();
                    return Ok(Value::Array(List(Repr::Bytes(bytes, OnceLock::new()))));
                }
            }
        };
        let mut out = Vec::with_capacity((bytes.len() + 1).max(seq.size_hint().unwrap_or(0).min(64)));
        out.extend(bytes.into_iter().map(|n| Value::Number(f64::from(n))));
        out.push(other);
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out.into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value<'a>, A::Error> {
        let mut out = Vec::new();
        while let Some((Key(k), v)) = map.next_entry::<Key<'a>, Value<'a>>()? {
            out.push((k, v));
        }
        Ok(Value::Object(out))
    }
}

/// An array's element: a byte, or any other value.
enum Element<'a> {
    Byte(u8),
    Other(Value<'a>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Element<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ElementVisitor(std::marker::PhantomData))
    }
}

/// [`ValueVisitor`], but an integer 0 to 255 is a [`Element::Byte`]. A number
/// written with a fraction or exponent (`1.0`, `1e2`) comes as an f64 and is a
/// value, so a list holding one keeps its numbers as the file spells them.
struct ElementVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ElementVisitor<'a> {
    type Value = Element<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Element<'a>, E> {
        Ok(Element::Other(Value::Null))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Element<'a>, E> {
        Ok(Element::Other(Value::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Element<'a>, E> {
        match u8::try_from(v) {
            Ok(b) => Ok(Element::Byte(b)),
            Err(_) => ValueVisitor(std::marker::PhantomData).visit_i64(v).map(Element::Other),
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Element<'a>, E> {
        match u8::try_from(v) {
            Ok(b) => Ok(Element::Byte(b)),
            Err(_) => ValueVisitor(std::marker::PhantomData).visit_u64(v).map(Element::Other),
        }
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Element<'a>, E> {
        Ok(Element::Other(Value::Number(v)))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Element<'a>, E> {
        Ok(Element::Other(Value::Str(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Element<'a>, E> {
        Ok(Element::Other(Value::Str(Cow::Owned(v.to_owned()))))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Element<'a>, E> {
        Ok(Element::Other(Value::Str(Cow::Owned(v))))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Element<'a>, A::Error> {
        ValueVisitor(std::marker::PhantomData).visit_seq(seq).map(Element::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Element<'a>, A::Error> {
        ValueVisitor(std::marker::PhantomData).visit_map(map).map(Element::Other)
    }
}

impl serde::Serialize for Value<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            #[allow(clippy::cast_possible_truncation, reason = "whole and below 9e15: exact in i64")]
            Value::Number(n) if n.fract() == 0.0 && n.abs() < 9e15 => s.serialize_i64(*n as i64),
            Value::Number(n) => s.serialize_f64(*n),
            Value::Str(v) => s.serialize_str(v),
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                match a.as_bytes() {
                    Some(bytes) => bytes.iter().try_for_each(|b| seq.serialize_element(b))?,
                    None => a.iter().try_for_each(|v| seq.serialize_element(v))?,
                }
                seq.end()
            }
            Value::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k.as_ref(), v)?;
                }
                map.end()
            }
        }
    }
}

impl fmt::Display for Value<'_> {
    /// Compact JSON, as the value would be written back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(s) => f.write_str(s),
            v => f.write_str(&serde_json::to_string(v).map_err(|_| fmt::Error)?),
        }
    }
}

/// The body (between the quotes) of a string [`long_strings`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LongString {
    pub body: std::ops::Range<usize>,
    pub escapes: Escapes,
}

/// What escapes a string's body holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escapes {
    None,
    /// Only `\/`, the one escape base64 text may carry.
    Slashes,
    Others,
}

/// The strings of the JSON text `text` whose bodies are at least `min` bytes
/// long, in order. Outside strings JSON holds no quote or backslash, so a
/// walk from quote to quote with SIMD search, skipping escaped bytes, finds
/// every string exactly without parsing the text. A string left open at the
/// end (a line cut short) is not one.
pub fn long_strings(text: &[u8], min: usize) -> Vec<LongString> {
    let mut found = Vec::new();
    let mut pos = 0;
    while let Some(open) = memchr::memchr(b'"', &text[pos..]) {
        let start = pos + open + 1;
        let (mut at, mut escapes) = (start, Escapes::None);
        let end = loop {
            match memchr::memchr2(b'"', b'\\', &text[at..]) {
                Some(i) if text[at + i] == b'\\' => {
                    escapes = match (escapes, text.get(at + i + 1)) {
                        (Escapes::None | Escapes::Slashes, Some(b'/')) => Escapes::Slashes,
                        _ => Escapes::Others,
                    };
                    at += i + 2;
                    if at > text.len() {
                        return found;
                    }
                }
                Some(i) => break at + i,
                None => return found,
            }
        };
        if end - start >= min {
            found.push(LongString { body: start..end, escapes });
        }
        pos = end + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_lone_surrogate_escape_reads_as_the_replacement_character() {
        for (text, want) in [
            (r#"{"a":"cut \ud83c"}"#, "cut \u{fffd}"),
            (r#"{"a":"\udc00 low"}"#, "\u{fffd} low"),
            (r#"{"a":"\ud83c\u0041"}"#, "\u{fffd}A"),
            (r#"{"a":"\ud83c\udf89 ok"}"#, "\u{1f389} ok"),
        ] {
            let v = super::serde_tolerant(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(v["a"], want, "{text}");
        }
        assert_eq!(super::splice::tame_surrogates(br#"{"a":"\\ud83c"}"#), None, "an escaped backslash is no escape");
    }

    use super::*;

    #[test]
    fn borrows_unescaped_strings() {
        let line = br#"{"a":{"data":"iVBORw0KGgo="},"t":"x\ny"}"#;
        let v = Value::parse(line).unwrap();
        let data = v.at(&["a", "data"]).as_cow().unwrap();
        assert!(matches!(data, Cow::Borrowed(_)));
        let off = data.as_ptr() as usize - line.as_ptr() as usize;
        assert_eq!(&line[off..off + data.len()], b"iVBORw0KGgo=");
        assert!(matches!(v.get("t").as_cow().unwrap(), Cow::Owned(_)));
        assert_eq!(v.get("missing"), &Value::Null);
    }

    #[test]
    fn long_strings_are_found_with_their_escapes() {
        let text = br#"{"a":"0123456789","b":"01\/3456789","c":"01\"3456789","d":"x","long key name":1,"e":"0123"#;
        let found: Vec<(&[u8], Escapes)> =
            long_strings(text, 8).into_iter().map(|s| (&text[s.body], s.escapes)).collect();
        assert_eq!(
            found,
            [
                (&b"0123456789"[..], Escapes::None),
                (br"01\/3456789", Escapes::Slashes),
                (br#"01\"3456789"#, Escapes::Others),
                (b"long key name", Escapes::None),
            ]
        );
        assert!(long_strings(br#"{"a":"0123456789\"#, 8).is_empty(), "an escape at the end leaves it open");
    }

    #[test]
    fn a_list_of_bytes_is_kept_as_bytes_and_reads_as_numbers() {
        let line = br#"{"data":[137,80,0,255],"empty":[]}"#;
        let v = Value::parse(line).unwrap();
        let data = v.get("data");
        assert_eq!(data.as_bytes(), Some(&[137, 80, 0, 255][..]));
        let numbers: Vec<f64> = data.items().iter().filter_map(Value::as_f64).collect();
        assert_eq!(numbers, [137.0, 80.0, 0.0, 255.0]);
        assert_eq!(data, &Value::Array(numbers.iter().map(|&n| Value::Number(n)).collect::<Vec<_>>().into()));
        assert_eq!(v.to_string(), std::str::from_utf8(line).unwrap(), "written back as it was");
        assert_eq!((v.get("empty").as_bytes(), v.get("empty").items().len()), (None, 0));
    }

    #[test]
    fn a_list_with_an_element_that_is_no_byte_is_kept_as_values() {
        for (text, want) in [
            ("[1,2,300,4]", "[1,2,300,4]"),
            ("[1,-1]", "[1,-1]"),
            ("[1,2.5]", "[1,2.5]"),
            // A byte written as a float is a value, as the file spells it.
            ("[1,1.0]", "[1,1]"),
            (r#"[0,"a",[7,8],{"k":[9]}]"#, r#"[0,"a",[7,8],{"k":[9]}]"#),
        ] {
            let v = Value::parse(text.as_bytes()).unwrap();
            assert_eq!(v.as_bytes(), None, "{text}");
            assert_eq!(v.to_string(), want, "{text}");
            assert_eq!(v.items()[0], Value::Number(f64::from(text.as_bytes()[1] - b'0')), "{text}");
        }
        let nested = Value::parse(br#"[0,"a",[7,8],{"k":[9]}]"#).unwrap();
        assert_eq!(nested.items()[2].as_bytes(), Some(&[7, 8][..]));
        assert_eq!(nested.items()[3].get("k").as_bytes(), Some(&[9][..]));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert!(Value::parse(deep.as_bytes()).is_err());
    }
}
