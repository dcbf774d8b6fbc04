//! The fuzz targets: one function per target, `fn(&[u8])`, panicking on a bug.
//!
//! Shared by the libFuzzer binaries in `fuzz/fuzz_targets/` (coverage-guided,
//! nightly) and by `tests/it/fuzz_corpus.rs`, which replays every committed corpus
//! file (`fuzz/corpus/<target>/`) through the same function in `cargo test`,
//! so every crash found becomes a regression test by being committed there.
//!
//! Input layouts: most targets read a first "selector" byte that picks a
//! format, depth or option, and treat the rest as the subject bytes.
#![allow(clippy::missing_panics_doc)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use session_doctor::classify::{self, Hint};
use session_doctor::json::splice;
use session_doctor::media::rules::Rules;
use session_doctor::media::{self, Depth, Payload};
use session_doctor::model::Format;
use session_doctor::overlay::{self, Event, Named, Overlay};
use session_doctor::preview;
use session_doctor::reader::{self, ReadOptions};
use session_doctor::request::write::Dialect;
use session_doctor::rewrite::{self, Rewrite, copy};

use crate::wrap;

/// One target: the name of its corpus folder and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target.
pub const TARGETS: &[Target] = &[
    ("reader", reader),
    ("media", media),
    ("payload", payload),
    ("classify", classify),
    ("overlay", overlay),
    ("splice", splice),
    ("rewrite", rewrite),
];

thread_local! {
    /// One scratch folder per thread: targets that need a file reuse it.
    static SCRATCH: RefCell<Option<tempfile::TempDir>> = const { RefCell::new(None) };
}

/// Runs `f` on a file named `name` in this thread's scratch folder holding `bytes`.
fn with_file<R>(name: &str, bytes: &[u8], f: impl FnOnce(&Path) -> R) -> R {
    let dir: PathBuf = SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let d = s.get_or_insert_with(|| tempfile::tempdir().expect("a scratch folder"));
        d.path().to_path_buf()
    });
    // Clear what an earlier run left (overlays, locks, sidecars).
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write the scratch file");
    f(&path)
}

/// Target `reader`: the bytes as a session file, read with every adapter.
/// Selector: low 4 bits pick `--format` (one past the last: auto), bit 4 the
/// `.json` extension, bit 7 `--deep`.
pub fn reader(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else { return };
    let n = Format::ALL.len();
    let format = Format::ALL.get(usize::from(sel & 0x0f) % (n + 1)).copied();
    let depth = if sel & 0x80 != 0 { Depth::Deep } else { Depth::Structural };
    let name = if sel & 0x10 != 0 { "session.json" } else { "session.jsonl" };
    with_file(name, body, |p| {
        let opts = ReadOptions { format, depth, threads: 1, ..ReadOptions::default() };
        // Ok or a clean error are both answers; a panic or a hang is the bug.
        if let Ok(s) = reader::read_session(p, &opts) {
            assert!(s.attachments.iter().all(|a| a.line >= 1 && a.line <= s.lines.max(1)), "attachment lines in range");
        }
    });
}

/// Signatures forced in front of the bytes by the `media` selector, so that
/// each check (PNG, JPEG, GIF, WebP, PDF) gets its share of the mutations.
const MAGIC: [&[u8]; 6] = [b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF\0\0\0\0WEBP", b"%PDF-1.4\n"];
const MIMES: [Option<&str>; 7] = [
    None,
    Some("image/png"),
    Some("image/jpeg"),
    Some("image/gif"),
    Some("image/webp"),
    Some("application/pdf"),
    Some("x"),
];

/// Target `media`: `media::inspect` at both depths. Selector: `% 6` forces a
/// signature (0: none), `/ 6 % 7` the declared type.
pub fn media(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else { return };
    let magic = MAGIC[usize::from(sel) % MAGIC.len()];
    let owned;
    let bytes = if rest.starts_with(magic) {
        rest
    } else {
        owned = [magic, rest].concat();
        &owned[..]
    };
    let declared = MIMES[usize::from(sel) / MAGIC.len() % MIMES.len()];
    let names = Rules::names();
    let rules = Rules::builtin(names[usize::from(sel) % names.len()]).unwrap_or_else(Rules::generic);
    let p = Payload { bytes, declared_mime: declared, encoded_len: None, name: Some("fuzz") };
    let shallow = media::inspect(&p, Depth::Structural, &rules);
    let deep = media::inspect(&p, Depth::Deep, &rules);
    // Deep checks everything structural does: it never finds less wrong.
    if shallow.verdict() == media::Verdict::Invalid {
        assert_eq!(
            deep.verdict(),
            media::Verdict::Invalid,
            "deep passed what structural rejected: {shallow:?} / {deep:?}"
        );
    }
}

/// Target `payload`: the base64 and data-URL decoders.
/// Properties: standard padded base64 decodes to what the `base64` crate
/// decodes; encoding any bytes and decoding gives them back.
pub fn payload(data: &[u8]) {
    use base64::Engine as _;
    let mut out = Vec::new();
    let ok = media::decode_base64_checked(data, &mut out);
    if let Ok(reference) = base64::engine::general_purpose::STANDARD.decode(data) {
        assert!(ok.is_ok(), "strict base64 refused: {ok:?}");
        assert_eq!(out, reference, "decodes differently from the base64 crate");
    }
    let text = String::from_utf8_lossy(data);
    if let Some((mime, is_b64, body)) = media::parse_data_url(&text) {
        assert!(text.len() >= body.len() + 6);
        if let Some(m) = mime {
            assert!(!m.contains(','), "a mime with a comma: {m:?}");
        }
        if is_b64 {
            let _ = media::decode_base64(body.as_bytes(), &mut out);
        }
    }
    let enc = base64::engine::general_purpose::STANDARD.encode(data);
    let mut back = Vec::new();
    assert!(media::decode_base64_checked(enc.as_bytes(), &mut back).expect("own encoding decodes").is_none());
    assert_eq!(back, data, "round trip");
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data);
    media::decode_base64(url.as_bytes(), &mut back).expect("URL-safe unpadded decodes");
    assert_eq!(back, data, "URL-safe round trip");
}

/// Target `classify`: any text, with a status hint from the selector
/// (0: none) and a provider hint from its top bits.
pub fn classify(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let status =
        [None, Some(400), Some(413), Some(429), Some(500), Some(529), Some(401), Some(404)][usize::from(sel & 7)];
    let provider = ["", "anthropic", "openai", "gemini"][usize::from(sel >> 6)];
    let hint = Hint { status, provider: (!provider.is_empty()).then(|| provider.to_string()) };
    let c = classify::classify(&text, &hint);
    let v = serde_json::to_value(&c).expect("serializes");
    assert!(v["class"].is_string());
    if let Some(m) = &c.message {
        assert!(m.len() <= 4096 + 8, "message clipped");
    }
}

/// Target `overlay`: any bytes as an overlay file. Properties: loading never
/// fails on content; an update keeps every event before it and lands on a line
/// of its own, whatever the overlay held (a torn last line, no final newline),
/// or refuses a file that is no overlay and leaves it as it was.
pub fn overlay(data: &[u8]) {
    with_file("s.jsonl.doctor", data, |p| {
        let before = Overlay::load(p).expect("an overlay's content is never fatal");
        let _ = before.excluded();
        let named = Named { reference: "L1.1".into(), sha256: Some("ab".into()), mime: None, name: Some("x".into()) };
        let ev = Event::new(overlay::EXCLUDED, vec![named], Some("fuzz".into()));
        let old = std::fs::read(p).unwrap_or_default();
        if let Err(e) = Overlay::update(p, &[], |_| Some(ev.clone())) {
            assert!(e.to_string().contains("is not an overlay"), "update: {e:#}");
            assert_eq!(std::fs::read(p).unwrap_or_default(), old, "a refused file is left as it was");
            return;
        }
        let after = Overlay::load(p).expect("reload");
        assert_eq!(after.events.len(), before.events.len() + 1, "every event kept, the new one added");
        assert_eq!(after.skipped.len(), before.skipped.len(), "no event torn by the update");
        let last = after.events.last().expect("the new event");
        assert_eq!((last.event.as_str(), &last.attachments), (ev.event.as_str(), &ev.attachments));
    });
}

/// Escapes one pointer segment (RFC 6901).
fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Every pointer into `v` (the root's `""` first), at most `cap`.
fn pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>, cap: usize) {
    if out.len() >= cap {
        return;
    }
    out.push(at.clone());
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                pointers(x, format!("{at}/{}", escape(k)), out, cap);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out, cap);
            }
        }
        _ => {}
    }
}

/// Target `splice`: `locate`/`remove`/`count`/`apply` on any bytes with any
/// pointer (never panic), and on valid JSON the properties: `locate` finds the
/// value the pointer names; `remove` + `apply` give valid JSON with exactly
/// that member gone. Layout: the pointer, a newline, the text (no newline:
/// the whole input is the text and every pointer into it is tried).
pub fn splice(data: &[u8]) {
    let (given, text) = match memchr_nl(data) {
        Some(i) => (Some(String::from_utf8_lossy(&data[..i]).into_owned()), &data[i + 1..]),
        None => (None, data),
    };
    if let Some(p) = &given {
        let _ = splice::locate(text, p);
        let _ = splice::count(text, p);
        if let Some(e) = splice::remove(text, p) {
            let _ = splice::apply(text, &[e]);
        }
    }
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(text) else { return };
    let mut all = Vec::new();
    pointers(&doc, String::new(), &mut all, 256);
    // Duplicate keys: serde_json keeps the last, the splice engine finds the
    // first; the property is about well-formed documents only.
    for p in &all {
        let here = doc.pointer(p).expect("a pointer made from the document");
        let n = match here {
            serde_json::Value::Object(m) => m.len(),
            serde_json::Value::Array(a) => a.len(),
            _ => continue,
        };
        if splice::count(text, p) != Some(n) {
            if here.is_object() {
                return;
            }
            panic!("count({p:?}) = {:?}, the array has {n}", splice::count(text, p));
        }
    }
    for p in &all {
        let want = doc.pointer(p).expect("pointer");
        let r = splice::locate(text, p).unwrap_or_else(|| panic!("locate({p:?}) found nothing"));
        let got: serde_json::Value = serde_json::from_slice(&text[r.clone()])
            .unwrap_or_else(|e| panic!("locate({p:?}) = {r:?} is not JSON: {e}"));
        assert_eq!(&got, want, "locate({p:?})");
        if p.is_empty() {
            continue;
        }
        let e = splice::remove(text, p).unwrap_or_else(|| panic!("remove({p:?}) found nothing"));
        let out = splice::apply(text, &[e]);
        let edited: serde_json::Value = serde_json::from_slice(&out).unwrap_or_else(|err| {
            panic!("removing {p:?} left invalid JSON ({err}): {}", String::from_utf8_lossy(&out))
        });
        let mut expect = doc.clone();
        let (parent, last) = p.rsplit_once('/').expect("a member pointer");
        match expect.pointer_mut(parent).expect("parent") {
            serde_json::Value::Object(m) => {
                m.remove(&last.replace("~1", "/").replace("~0", "~"));
            }
            serde_json::Value::Array(a) => {
                a.remove(last.parse::<usize>().expect("index"));
            }
            _ => unreachable!("a parent is a container"),
        }
        assert_eq!(edited, expect, "remove({p:?}) changed more than that member");
    }
}

fn memchr_nl(d: &[u8]) -> Option<usize> {
    d.iter().position(|&b| b == b'\n')
}

const ITEM_MIMES: [&str; 5] = ["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"];

/// Target `rewrite`, end to end: a session built by `wrap::session` around
/// the input's media, some attachments excluded through the overlay, then
/// `repair` and `preview`. Properties: the repaired copy reads back as the
/// same format, with the same lines; its attachments are exactly the
/// original's minus the excluded and capped ones, in order; every preview is
/// valid JSON.
///
/// Layout: format selector, option byte (low 3 bits: `--max-images`, 0 none;
/// bit 3 `--strip-reasoning`, bit 4 `--drop-reasoning-ids`), exclusion bit
/// mask, then items of (mime selector, u16 LE length, bytes), at most 6.
pub fn rewrite(data: &[u8]) {
    let [fsel, osel, mask, rest @ ..] = data else { return };
    let format = wrap::FORMATS[usize::from(*fsel) % wrap::FORMATS.len()];
    let mut items: Vec<(String, &str)> = Vec::new();
    let mut rest = rest;
    while let [m, a, b, tail @ ..] = rest {
        let len = usize::from(u16::from_le_bytes([*a, *b])).min(tail.len());
        let b64 = {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(&tail[..len])
        };
        items.push((b64, ITEM_MIMES[usize::from(*m) % ITEM_MIMES.len()]));
        rest = &tail[len..];
        if items.len() == 6 {
            break;
        }
    }
    if items.is_empty() {
        return;
    }
    let wrapped: Vec<wrap::Item<'_>> = items.iter().map(|(b, m)| wrap::Item { base64: b, mime: m }).collect();
    let text = wrap::session(format, &wrapped);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, &text).expect("write");
    let ropts = rewrite::RewriteOptions {
        max_images: Some(usize::from(osel & 7)).filter(|&n| n > 0),
        strip_reasoning: osel & 8 != 0,
        strip_only: None,
        drop_reasoning_ids: osel & 16 != 0,
    };
    let opts = ReadOptions { threads: 1, ..ReadOptions::default() };
    let plan = reader::plan(&path, &opts).expect("a wrapped session is detected");
    let mut session = reader::read_with_plan(&path, &opts, &plan, None).expect("a wrapped session reads");
    // Exclude the attachments the mask names, through the overlay, as `exclude` does.
    let chosen: Vec<Named> = session
        .attachments
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < 8 && mask >> i & 1 == 1)
        .map(|(_, a)| Named::of(a))
        .collect();
    let ov = overlay::default_path(&path);
    if !chosen.is_empty() {
        Overlay::update(&ov, &[], |_| Some(Event::new(overlay::EXCLUDED, chosen, None))).expect("overlay update");
    }
    Overlay::load(&ov).expect("overlay").apply(&mut session);
    let mut rw = Rewrite::plan(&session, &ropts, plan.single_document);
    let read_from = reader::Source::of(&plan, &path);
    rw.drop_failures(&session, plan.single_document.then_some(&read_from));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("out dir");
    let planned = session_doctor::alias::Snapshot::of(&path).expect("the session is there");
    let source = copy::CopySource { path: &path, planned, reads: &[], written_by: session.written_by };
    let written =
        copy::repair(&source, plan.format, plan.single_document, &rw, &[], Some(&out)).expect("repair writes");
    let back = reader::read_session(&written.identity.path, &opts).expect("the repaired copy reads");
    assert_eq!(back.format, session.format, "the copy reads back as the same format");
    // Only the line that marks a Gemini CLI copy as repair's is added.
    assert_eq!(back.lines, session.lines + written.inserted, "no line lost or added");
    let gone: Vec<&String> = rw.summary.excluded.iter().chain(&rw.summary.capped).collect();
    let kept: Vec<&Option<String>> =
        session.attachments.iter().filter(|a| !gone.contains(&&a.reference)).map(|a| &a.sha256).collect();
    let now: Vec<&Option<String>> = back.attachments.iter().map(|a| &a.sha256).collect();
    assert_eq!(now, kept, "only the excluded and capped attachments changed ({format}, {:?})", rw.summary);
    for a in session.attachments.iter().filter(|a| a.excluded) {
        assert!(rw.summary.excluded.contains(&a.reference), "{} is excluded but was not rewritten", a.reference);
    }
    let provider = session.provider.clone().unwrap_or_else(|| plan.rules.provider.clone());
    let native = session_doctor::formats::native_of(&session, &provider);
    for dialect in [native, Dialect::Anthropic, Dialect::OpenaiChat, Dialect::OpenaiResponses, Dialect::Gemini] {
        let mut buf = Vec::new();
        let source = session_doctor::reader::Source::of(&plan, &path);
        let converted = dialect != native;
        if preview::preview(&source, &session, rw.clone(), plan.single_document, dialect, converted, 0, &mut buf)
            .is_ok()
        {
            let v: Result<serde_json::Value, _> = serde_json::from_slice(&buf);
            assert!(v.is_ok(), "preview as {} is not JSON: {}", dialect.name(), String::from_utf8_lossy(&buf));
        }
    }
}
