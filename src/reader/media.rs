//! Turns the media an adapter found in a line into judged attachments:
//! decode, hash, validate, and remember where the bytes sit.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};
use xxhash_rust::xxh3::xxh3_128;

use crate::formats::{RawMedia, RawPayload};
use crate::media::{self, Defect, Depth, Facts, Verdict, rules::Rules};
use crate::model::{Attachment, Encoding, Span};

use super::skim::{Text, json_text};
use crate::media::refs::{self, Reference, read_local};

/// What a worker needs to judge media.
pub struct Judge<'r> {
    depth: Depth,
    rules: &'r Rules,
    /// Decode buffer reused across lines.
    buf: Vec<u8>,
    cache: HashMap<Key, Judgement>,
    /// The lengths of the payloads examined and not cached. A payload is
    /// hashed for the cache only once one of its length was seen before: a
    /// repeat has its length, while most payloads of a media session are
    /// unique, and hashing each cost 4.5 % of a scan. (The second of a repeat is
    /// examined again; every later one is not.)
    lengths: HashSet<usize>,
}

impl<'r> Judge<'r> {
    pub fn new(depth: Depth, rules: &'r Rules) -> Judge<'r> {
        Judge { depth, rules, buf: Vec::new(), cache: HashMap::new(), lengths: HashSet::new() }
    }
}

impl Judge<'_> {
    /// Builds the attachments of one line, whose media borrow from `text`.
    /// A skimmed payload that turns out not to be JSON text is marked on
    /// `text` ([`Text::refuse`]): the line is then to be read whole.
    ///
    /// A mirror (a UI copy of a tool result's media) joins the attachment with
    /// the same text, else the first one the same call produced (the UI copy
    /// may be re-encoded); only a mirror of a result that holds no media of its
    /// own — a PDF Claude Code read — stands as an attachment.
    pub fn attachments<'m>(&mut self, media: &'m [RawMedia<'_>], text: &'m Text<'_>) -> Vec<Attachment> {
        fn whole<'m>(m: &'m RawMedia<'_>, text: &'m Text<'_>) -> Option<(&'m [u8], &'m str)> {
            m.payload.text().map(|t| (text.whole(t), t))
        }
        let mut out: Vec<Attachment> = Vec::with_capacity(media.len());
        let mut texts: Vec<Option<&[u8]>> = Vec::with_capacity(media.len());
        let (own, mirrors): (Vec<&RawMedia>, Vec<&RawMedia>) = media.iter().partition(|m| !m.mirror);
        for m in own {
            texts.push(whole(m, text).map(|w| w.0));
            out.push(self.judge(m, text));
        }
        let own_count = out.len();
        for m in mirrors {
            let (bytes, t) = whole(m, text).unzip();
            if bytes == Some(&b""[..]) {
                // A UI copy a repair emptied: nothing is sent from it.
                continue;
            }
            let same = bytes
                .and_then(|b| texts[..own_count].iter().position(|o| *o == Some(b)))
                .or_else(|| out[..own_count].iter().position(|a| a.call_id.is_some() && a.call_id == m.call_id));
            match same {
                Some(i) => {
                    // Not judged: a skimmed copy unlike its attachment's bytes is checked here.
                    if let (Some(t), Some(b)) = (t, bytes)
                        && text.skimmed(t)
                        && texts[i] != Some(b)
                        && !json_text(b)
                    {
                        text.refuse();
                    }
                    out[i].mirrors.extend(t.and_then(|t| text.span(t)));
                    if out[i].name.is_none() {
                        out[i].name.clone_from(&m.name);
                    }
                }
                None => {
                    texts.push(bytes);
                    out.push(self.judge(m, text));
                }
            }
        }
        out
    }

    fn judge(&mut self, m: &RawMedia<'_>, line: &Text<'_>) -> Attachment {
        let mut a = Attachment {
            reference: String::new(),
            line: 0,
            origin: m.origin,
            call_id: m.call_id.clone(),
            tool: m.tool.clone(),
            name: m.name.clone(),
            mime_declared: m.mime.clone(),
            mime_detected: None,
            bytes: None,
            sha256: None,
            width: None,
            height: None,
            pages: None,
            verdict: Verdict::Ok,
            problems: Vec::new(),
            encoding: Encoding::Base64,
            url: None,
            pointer: m.pointer.clone(),
            span: None,
            mirrors: Vec::new(),
            excluded: false,
            healed: false,
            entry: m.entry,
            facts: None,
            source_problems: Vec::new(),
        };
        let (t, from): (&str, usize) = match &m.payload {
            RawPayload::Reference(url) => {
                a.encoding = Encoding::Reference;
                a.url = Some(url.clone());
                return self.reference(url, a);
            }
            RawPayload::Base64(t) => (t, 0),
            // No text to hash or to span: judged as read.
            RawPayload::Bytes(b) => {
                a.encoding = Encoding::Bytes;
                return self.judgement(b, None, None).apply(a, self.rules);
            }
            RawPayload::DataUrl(url) => {
                a.encoding = Encoding::DataUrl;
                let Some((mime, base64, payload)) = media::parse_data_url(url) else {
                    if line.skimmed(url) {
                        // Its comma may come after the bytes the parser kept.
                        line.refuse();
                    }
                    let message = "the data URL has no `,` before its payload".into();
                    let p = Defect { severity: Verdict::Invalid, code: "data_url.invalid", message };
                    return Judgement::failed(p).apply(a, self.rules);
                };
                if a.mime_declared.is_none() {
                    a.mime_declared = mime.map(str::to_string);
                }
                let from = url.len() - payload.len();
                if !base64 {
                    let text = &line.whole(url)[from..];
                    if line.skimmed(url) && !json_text(text) {
                        line.refuse();
                    }
                    return self.judgement(&percent_decode(text), None, None).apply(a, self.rules);
                }
                (url, from)
            }
        };
        let text = &line.whole(t)[from..];
        a.span = line.span(t).map(|s| Span { offset: s.offset + from as u64, len: s.len - from as u64, line: 0 });
        let key = self.lengths.contains(&text.len()).then(|| Key { text: xxh3_128(text), len: text.len() });
        if let Some(j) = key.as_ref().and_then(|k| self.cache.get(k)) {
            return j.clone().apply(a, self.rules);
        }
        let mut buf = std::mem::take(&mut self.buf);
        let decoded = media::decode_base64_checked(text, &mut buf);
        // Strict base64 is JSON text; anything else the parser was not shown is checked.
        let refused = !matches!(decoded, Ok(None)) && line.skimmed(t) && !json_text(text);
        let j = match decoded {
            Ok(warning) => self.judgement(&buf, Some(text.len()), warning),
            Err(p) => Judgement::failed(p),
        };
        self.buf = buf;
        if refused {
            // Not cached: every judgement in the cache is of JSON text.
            line.refuse();
            return j.apply(a, self.rules);
        }
        match key {
            Some(key) => {
                if self.cache.len() >= CACHE_ENTRIES {
                    self.cache.clear();
                }
                self.cache.insert(key, j.clone());
            }
            None => {
                if self.lengths.len() >= CACHE_ENTRIES * 4 {
                    self.lengths.clear();
                }
                self.lengths.insert(text.len());
            }
        }
        j.apply(a, self.rules)
    }

    /// A reference is ok only when the provider fetches it; a local file is read
    /// and judged like inline bytes; anything else cannot be sent.
    fn reference(&mut self, url: &str, a: Attachment) -> Attachment {
        match refs::classify(url, &self.rules.provider) {
            Reference::Fetchable => a,
            Reference::Local(path) => match read_local(&path) {
                Ok(Ok(bytes)) => self.judgement(&bytes, None, None).apply(a, self.rules),
                Ok(Err(message)) => {
                    Judgement::failed(Defect { severity: Verdict::Invalid, code: "reference.unreadable", message })
                        .apply(a, self.rules)
                }
                Err(e) => {
                    let why = match e.kind() {
                        std::io::ErrorKind::NotFound => "does not exist".to_string(),
                        _ => format!("cannot be read ({e})"),
                    };
                    let message = format!(
                        "the file {} {why}: it is no longer available, so the agent cannot send it",
                        path.display()
                    );
                    Judgement::failed(Defect { severity: Verdict::Invalid, code: "reference.missing", message })
                        .apply(a, self.rules)
                }
            },
            Reference::Unfetchable(message) => {
                Judgement::failed(Defect { severity: Verdict::Invalid, code: "reference.unfetchable", message })
                    .apply(a, self.rules)
            }
        }
    }

    /// Hashes and examines decoded bytes; `warning` is what decoding tolerated.
    fn judgement(&self, bytes: &[u8], encoded_len: Option<usize>, warning: Option<Defect>) -> Judgement {
        Judgement {
            sha256: Some(hex(&Sha256::digest(bytes))),
            facts: Some(Box::new(Facts::examine(bytes, encoded_len, self.depth))),
            source: warning.into_iter().collect(),
        }
    }
}

/// Payloads examined by one worker, so a payload the history repeats (every
/// logged request re-sends all before it; a screenshot pasted twice; records
/// re-written in full) is decoded, hashed and validated once. Keyed by a
/// 128-bit hash of the encoded text, read at memory speed: the facts depend on
/// the bytes alone, and the provider's rules are applied to them per site.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    text: u128,
    len: usize,
}

/// Bounds the cache; a session with more distinct payloads just starts over.
const CACHE_ENTRIES: usize = 4096;

/// What examining a payload found: everything but where it sits and whose
/// rules judge it.
#[derive(Clone, Debug)]
struct Judgement {
    sha256: Option<String>,
    facts: Option<Box<Facts>>,
    /// What decoding found or tolerated (bad base64, a broken data URL).
    source: Vec<Defect>,
}

impl Judgement {
    /// Bytes that could not be had at all: no size, no hash, one problem.
    fn failed(p: Defect) -> Judgement {
        Judgement { sha256: None, facts: None, source: vec![p] }
    }

    fn apply(self, mut a: Attachment, rules: &Rules) -> Attachment {
        a.bytes = self.facts.as_ref().map(|f| f.bytes);
        a.sha256 = self.sha256;
        a.facts = self.facts;
        a.source_problems = self.source;
        a.judge(rules);
        a
    }
}

/// `%XX` escapes of a non-base64 data URL.
fn percent_decode(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hexval = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hexval(b[i + 1]), hexval(b[i + 2]))
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(u8::MAX));
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    use crate::formats::{RawMedia, RawPayload};
    use crate::model::Origin;

    fn media<'a>(text: &'a Cow<'a, str>, mime: &str) -> RawMedia<'a> {
        RawMedia {
            entry: 0,
            origin: Origin::User,
            call_id: None,
            tool: None,
            name: None,
            mime: Some(mime.to_string()),
            payload: RawPayload::Base64(text),
            pointer: String::new(),
            mirror: false,
        }
    }

    #[test]
    fn a_repeated_payload_is_examined_once_but_judged_by_what_its_site_declares() {
        let rules = Rules::builtin("anthropic").expect("rules");
        let mut judge = Judge::new(Depth::Structural, &rules);
        // A real 1×1 PNG.
        let png: Cow<'_, str> = Cow::Borrowed(
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
        );
        let line = Text::whole_line(png.as_bytes(), 0);
        let first = judge.attachments(&[media(&png, "image/png")], &line);
        // A length not seen before: examined, not hashed for the cache.
        assert_eq!(judge.cache.len(), 0);
        let again = judge.attachments(&[media(&png, "image/png")], &line);
        assert_eq!(judge.cache.len(), 1);
        assert_eq!(first, again);
        assert_eq!(first[0].verdict, Verdict::Ok);
        // The same bytes declared as JPEG: the cached facts, judged by what this site declares.
        let mislabelled = judge.attachments(&[media(&png, "image/jpeg")], &line);
        assert_eq!(judge.cache.len(), 1);
        assert_eq!(mislabelled[0].verdict, Verdict::Invalid);
        assert_eq!(mislabelled[0].sha256, first[0].sha256);
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode(b"a%20b%3C"), b"a b<");
        assert_eq!(percent_decode(b"100%"), b"100%");
        assert_eq!(percent_decode(b"%2"), b"%2");
    }
}
