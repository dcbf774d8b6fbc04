//! What the proxy changes in one request body, and nothing else.
//!
//! A body is edited by byte range ([`crate::json::splice`]): every byte the
//! proxy has no reason to change is forwarded as the agent wrote it (key
//! order, number spelling, escapes), and a body with nothing to change is not
//! rewritten at all. The changes are the ones `repair` makes to a session,
//! made to one request on its way out:
//!
//! - an attachment that does not decode, or that the provider refuses whole
//!   (a cut PNG, a PDF without its xref, a type it does not take) becomes the
//!   note `repair` writes for an excluded attachment;
//! - a valid image over the provider's limits is fitted ([`crate::fit`]);
//! - past the provider's image count the earliest images become the cap note;
//! - under `store: false` a replayed OpenAI reasoning item the API cannot
//!   resolve (an `rs_` id with no encrypted content) is dropped;
//! - to a Gemini 3 model, the first function call of each model step of the
//!   current turn that carries no thought signature gets Google's placeholder
//!   ([`crate::provider::GEMINI_SKIP_SIGNATURE`]): Gemini 3 refuses it
//!   unsigned ("Function call is missing a `thought_signature`").

use serde::Serialize;
use serde_json::Value;

use crate::fit::{self, Limits, Outcome};
use crate::json::splice::{self, Edit};
use crate::media::rules::Rules;
use crate::media::{Depth, Facts, Verdict};
use crate::request::Dialect;

/// One change made to a request: what, where (the provider's own numbering
/// of the block, `messages.2.content.0`), and why. No payload, no text of the
/// conversation: a change is journaled as it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `replaced`, `fitted`, `capped`, `reasoning_dropped`, `signed`.
    pub what: &'static str,
    pub block: String,
    pub why: String,
}

/// A body with its changes: `body` is `None` when nothing changed.
#[derive(Debug, Default)]
pub struct Mended {
    pub body: Option<Vec<u8>>,
    pub changes: Vec<Change>,
}

/// One attachment of a request.
struct Site {
    /// JSON pointer of the block that holds it (what a note replaces).
    block: String,
    /// Pointer of the string holding the payload (base64, or a data URL).
    data: String,
    /// Pointer of the member naming its media type, when it is a member of its own.
    mime_at: Option<String>,
    /// Whether `data` holds a data URL (else bare base64).
    url: bool,
    mime: Option<String>,
    /// Title or file name the block carries.
    name: Option<String>,
    base64: String,
}

impl Site {
    fn is_pdf(&self) -> bool {
        self.mime.as_deref() == Some("application/pdf")
    }

    fn is_image(&self) -> bool {
        self.mime.as_deref().is_some_and(|m| m.starts_with("image/"))
    }
}

/// How deep the walk for attachments goes (tool results inside messages inside
/// a list are four or five levels; an adversarial body is not walked further).
const MAX_DEPTH: usize = 24;

/// The attachments of `body` in `dialect`, in request order.
fn sites(body: &Value, dialect: Dialect) -> Vec<Site> {
    let root = match dialect {
        Dialect::Anthropic | Dialect::OpenaiChat => "messages",
        Dialect::OpenaiResponses => "input",
        Dialect::Gemini => "contents",
    };
    let mut out = Vec::new();
    if let Some(list) = body.get(root) {
        walk(list, &format!("/{root}"), dialect, 0, &mut out);
    }
    out
}

fn walk(v: &Value, at: &str, dialect: Dialect, depth: usize, out: &mut Vec<Site>) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, &format!("{at}/{i}"), dialect, depth + 1, out);
            }
        }
        Value::Object(map) => {
            if let Some(site) = site(v, at, dialect) {
                out.push(site);
                return;
            }
            for (k, child) in map {
                if matches!(child, Value::Array(_) | Value::Object(_)) {
                    let key = k.replace('~', "~0").replace('/', "~1");
                    walk(child, &format!("{at}/{key}"), dialect, depth + 1, out);
                }
            }
        }
        _ => {}
    }
}

fn str_at<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter().try_fold(v, |v, k| v.get(*k))?.as_str()
}

/// The attachment block `v` at `at` is in `dialect`, if it is one carried inline.
fn site(v: &Value, at: &str, dialect: Dialect) -> Option<Site> {
    let kind = v.get("type").and_then(Value::as_str);
    let name = ["title", "filename", "name"].iter().find_map(|k| str_at(v, &[k])).map(str::to_string);
    let mk = |data: String, mime_at: Option<String>, url: bool, mime: Option<&str>, text: &str| Site {
        block: at.to_string(),
        data,
        mime_at,
        url,
        mime: mime.map(str::to_string),
        name: name.clone(),
        base64: text.to_string(),
    };
    let from_url = |ptr: &str, text: &str, fallback: Option<&str>| {
        let (mime, b64, payload) = crate::media::parse_data_url(text)?;
        b64.then(|| mk(format!("{at}{ptr}"), None, true, mime.or(fallback), payload))
    };
    match dialect {
        Dialect::Anthropic => {
            if !matches!(kind, Some("image" | "document")) || str_at(v, &["source", "type"]) != Some("base64") {
                return None;
            }
            let data = str_at(v, &["source", "data"])?;
            let mime = str_at(v, &["source", "media_type"]);
            Some(mk(format!("{at}/source/data"), Some(format!("{at}/source/media_type")), false, mime, data))
        }
        Dialect::OpenaiResponses => match kind? {
            "input_image" => from_url("/image_url", str_at(v, &["image_url"])?, None),
            "input_file" => {
                let text = str_at(v, &["file_data"])?;
                from_url("/file_data", text, None).or_else(|| {
                    let mime =
                        name.as_deref().filter(|n| n.to_ascii_lowercase().ends_with(".pdf")).map(|_| "application/pdf");
                    Some(mk(format!("{at}/file_data"), None, false, mime, text))
                })
            }
            _ => None,
        },
        Dialect::OpenaiChat => match kind? {
            "image_url" => from_url("/image_url/url", str_at(v, &["image_url", "url"])?, None),
            "file" => from_url("/file/file_data", str_at(v, &["file", "file_data"])?, Some("application/pdf")),
            _ => None,
        },
        Dialect::Gemini => {
            let key = ["inlineData", "inline_data"].into_iter().find(|k| v.get(*k).is_some())?;
            let inline = v.get(key)?;
            let mime_key = ["mimeType", "mime_type"].into_iter().find(|k| inline.get(*k).is_some());
            let data = str_at(inline, &["data"])?;
            let mime = mime_key.and_then(|k| str_at(inline, &[k]));
            Some(mk(format!("{at}/{key}/data"), mime_key.map(|k| format!("{at}/{key}/{k}")), false, mime, data))
        }
    }
}

/// The provider's numbering of the block at `pointer`: `messages.2.content.0`
/// (Anthropic), `input[3].content[1]` (OpenAI), `contents[0].parts[1]` (Gemini).
pub fn provider_path(pointer: &str, dialect: Dialect) -> String {
    let parts = pointer.trim_start_matches('/').split('/');
    match dialect {
        Dialect::Anthropic => parts.collect::<Vec<_>>().join("."),
        _ => {
            let mut out = String::new();
            for p in parts {
                if p.bytes().all(|b| b.is_ascii_digit()) && !p.is_empty() {
                    out.push_str(&format!("[{p}]"));
                } else {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(p);
                }
            }
            out
        }
    }
}

/// The JSON pointer of a provider's block path (the inverse of [`provider_path`]).
pub fn pointer_of(block: &str) -> String {
    let mut out = String::new();
    for p in block.split(['.', '[', ']']).filter(|p| !p.is_empty()) {
        out.push('/');
        out.push_str(p);
    }
    out
}

/// The text block standing for a note in `dialect`.
fn note_block(dialect: Dialect, text: &str) -> String {
    let t = serde_json::to_string(text).unwrap_or_default();
    match dialect {
        Dialect::Gemini => format!("{{\"text\":{t}}}"),
        Dialect::OpenaiResponses => format!("{{\"type\":\"input_text\",\"text\":{t}}}"),
        Dialect::Anthropic | Dialect::OpenaiChat => format!("{{\"type\":\"text\",\"text\":{t}}}"),
    }
}

/// What was decided about one attachment.
enum Judged {
    Keep,
    Broken(String),
    /// Valid, but over a per-image limit a smaller copy cures.
    Oversized(Vec<u8>),
    /// Valid; its bytes kept for the many-images side limit.
    Valid(Vec<u8>, Option<(u32, u32)>),
}

fn judge(site: &Site, rules: &Rules) -> Judged {
    let mut bytes = Vec::new();
    if let Err(p) = crate::media::decode_base64_checked(site.base64.as_bytes(), &mut bytes) {
        return Judged::Broken(p.message);
    }
    let facts = Facts::examine(&bytes, Some(site.base64.len()), Depth::Deep);
    let sniffed = facts.mime_detected();
    let media = |m: Option<&str>| m.is_some_and(|m| m.starts_with("image/") || m == "application/pdf");
    if !media(site.mime.as_deref()) && !media(sniffed) && !bytes.is_empty() {
        return Judged::Keep; // text or another file type the provider reads as it likes
    }
    let ins = facts.judge(site.mime.as_deref(), site.name.as_deref(), rules);
    let invalid: Vec<&str> =
        ins.problems.iter().filter(|p| p.severity == Verdict::Invalid).map(|p| p.message.as_str()).collect();
    let dims = ins.width.zip(ins.height);
    if invalid.is_empty() {
        return Judged::Valid(bytes, dims);
    }
    if fit::only_fittable(
        &ins.problems,
        fit::Shape { size: (ins.width, ins.height), mime: ins.mime_detected.as_deref() },
    ) {
        return Judged::Oversized(bytes);
    }
    Judged::Broken(invalid.join("; "))
}

/// Mends `body`, a request in `dialect` to a provider with `rules` and to
/// `model` where its path names one (Gemini's); at most `max_images` images
/// are kept (the rules' count when `None`).
pub fn mend(body: &[u8], dialect: Dialect, rules: &Rules, max_images: Option<usize>, model: Option<&str>) -> Mended {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return Mended::default(); // not JSON: the provider answers it as it will
    };
    let sites = sites(&v, dialect);
    let mut edits = Vec::new();
    let mut changes = Vec::new();
    let mut judged: Vec<Judged> = sites.iter().map(|s| judge(s, rules)).collect();
    for (site, j) in sites.iter().zip(&judged) {
        if let Judged::Broken(why) = j {
            replace(body, dialect, site, &omitted(site, dialect), "replaced", why, &mut edits, &mut changes);
        }
    }
    let limit = max_images.or(rules.max_images_per_request.map(|n| n as usize));
    let kept = cap(body, dialect, &sites, &mut judged, limit, rules, &mut edits, &mut changes);
    let limits = Limits::of(rules, kept);
    for (site, j) in sites.iter().zip(&judged) {
        let bytes = match j {
            Judged::Oversized(b) => b,
            // Many images: a side limit stricter than the one each was judged by.
            Judged::Valid(b, Some((w, h))) if limits.max_side.is_some_and(|m| (*w).max(*h) > m) => b,
            _ => continue,
        };
        match fit::fit(bytes, &limits) {
            Outcome::Fits => {}
            Outcome::Fitted(f) => {
                let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &f.bytes);
                let text = if site.url { format!("data:{};base64,{b64}", f.mime) } else { b64 };
                let Some(range) = splice::locate(body, &site.data) else { continue };
                edits.push(Edit { range, with: serde_json::to_string(&text).unwrap_or_default() });
                if let Some(range) = site.mime_at.as_deref().and_then(|m| splice::locate(body, m))
                    && site.mime.as_deref() != Some(f.mime)
                {
                    edits.push(Edit { range, with: serde_json::to_string(f.mime).unwrap_or_default() });
                }
                let why = f.note(site.name.as_deref());
                changes.push(Change { what: "fitted", block: provider_path(&site.block, dialect), why });
            }
            Outcome::Refused(why) => {
                replace(body, dialect, site, &omitted(site, dialect), "replaced", &why, &mut edits, &mut changes);
            }
        }
    }
    if dialect == Dialect::OpenaiResponses {
        drop_unresolvable_reasoning(body, &v, &mut edits, &mut changes);
    }
    if dialect == Dialect::Gemini && model.is_some_and(crate::provider::gemini_checks_signatures) {
        sign_current_turn(body, &v, &mut edits, &mut changes);
    }
    finish(body, &edits, changes)
}

/// Gemini 3 validates the thought signatures of the current turn: each model
/// step since the last user content that holds text and no function response
/// (as Google's own client counts it: Gemini CLI's
/// `ensureActiveLoopHasThoughtSignatures`) must carry one on its first function call
/// (ai.google.dev/gemini-api/docs/thought-signatures; the later calls of a
/// parallel step carry none, and need none). A first call without one (made
/// by another model, or its signature lost on the way) gets Google's
/// placeholder, in the spelling of the part's own keys; a call with a
/// signature is left as it is.
fn sign_current_turn(body: &[u8], v: &Value, edits: &mut Vec<Edit>, changes: &mut Vec<Change>) {
    fn parts_of(c: &Value) -> &[Value] {
        c.get("parts").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }
    let Some(contents) = v.get("contents").and_then(Value::as_array) else { return };
    let is_model = |c: &Value| c.get("role").and_then(Value::as_str) == Some("model");
    let responds = |p: &Value| p.get("functionResponse").is_some() || p.get("function_response").is_some();
    let starts_turn = |c: &Value| {
        let parts = parts_of(c);
        !is_model(c) && !parts.iter().any(responds) && parts.iter().any(|p| p.get("text").is_some())
    };
    let start = contents.iter().rposition(starts_turn).unwrap_or(0);
    for (i, content) in contents.iter().enumerate().skip(start) {
        if !is_model(content) {
            continue;
        }
        let parts = parts_of(content);
        let Some(j) = parts.iter().position(|p| p.get("functionCall").is_some() || p.get("function_call").is_some())
        else {
            continue;
        };
        let part = &parts[j];
        let signed = |k: &str| part.get(k).and_then(Value::as_str).is_some_and(|s| !s.is_empty());
        if signed("thoughtSignature") || signed("thought_signature") {
            continue;
        }
        // The signature member the part has (empty or null), else the spelling of its call's key.
        let key = ["thoughtSignature", "thought_signature"]
            .into_iter()
            .find(|k| part.get(*k).is_some())
            .unwrap_or(if part.get("function_call").is_some() { "thought_signature" } else { "thoughtSignature" });
        let at = format!("/contents/{i}/parts/{j}");
        let placeholder = serde_json::to_string(crate::provider::GEMINI_SKIP_SIGNATURE).unwrap_or_default();
        let edit = if part.get(key).is_some() {
            // An empty or null signature: its value becomes the placeholder.
            splice::locate(body, &format!("{at}/{key}")).map(|range| Edit { range, with: placeholder })
        } else {
            // A member of its own, first in the part (the part holds its call, so it is not empty).
            splice::locate(body, &at)
                .filter(|r| body.get(r.start) == Some(&b'{'))
                .map(|r| Edit { range: r.start + 1..r.start + 1, with: format!("\"{key}\":{placeholder},") })
        };
        if let Some(e) = edit {
            edits.push(e);
            changes.push(Change {
                what: "signed",
                block: provider_path(&at, Dialect::Gemini),
                why: "a function call of the current turn without a thought signature, which Gemini 3 refuses: \
                      Google's placeholder for a call it did not sign"
                    .into(),
            });
        }
    }
}

/// Signs the current turn's unsigned calls after Gemini refused the request
/// for one ("Function call is missing a `thought_signature`"), whatever the
/// model's name says; `None` when every such call is signed.
pub fn sign_refused(body: &[u8]) -> Option<Mended> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let (mut edits, mut changes) = (Vec::new(), Vec::new());
    sign_current_turn(body, &v, &mut edits, &mut changes);
    Some(finish(body, &edits, changes)).filter(|m| m.body.is_some())
}

/// Applies `edits`; a result that is not JSON (two removals meeting at a
/// comma) is not sent: the body goes as the agent wrote it.
fn finish(body: &[u8], edits: &[Edit], changes: Vec<Change>) -> Mended {
    if edits.is_empty() {
        return Mended::default();
    }
    let out = splice::apply(body, edits);
    if serde_json::from_slice::<serde::de::IgnoredAny>(&out).is_err() {
        return Mended::default();
    }
    Mended { body: Some(out), changes }
}

fn omitted(site: &Site, dialect: Dialect) -> String {
    let name = site.name.clone().unwrap_or_else(|| provider_path(&site.block, dialect));
    crate::rewrite::omitted_note(&name, site.mime.as_deref().unwrap_or("unknown type"))
}

#[allow(clippy::too_many_arguments, reason = "one edit and its journal line, side by side")]
fn replace(
    body: &[u8],
    dialect: Dialect,
    site: &Site,
    note: &str,
    what: &'static str,
    why: &str,
    edits: &mut Vec<Edit>,
    changes: &mut Vec<Change>,
) {
    if let Some(range) = splice::locate(body, &site.block) {
        edits.push(Edit { range, with: note_block(dialect, note) });
        changes.push(Change { what, block: provider_path(&site.block, dialect), why: why.to_string() });
    }
}

/// Keeps at most `limit` images (PDF pages count where the rules say so):
/// the earliest become the cap note. Returns how many images stay.
#[allow(clippy::too_many_arguments, reason = "the request, its attachments and where the edits go")]
fn cap(
    body: &[u8],
    dialect: Dialect,
    sites: &[Site],
    judged: &mut [Judged],
    limit: Option<usize>,
    rules: &Rules,
    edits: &mut Vec<Edit>,
    changes: &mut Vec<Change>,
) -> usize {
    let live = |j: &Judged| matches!(j, Judged::Valid(..) | Judged::Oversized(_) | Judged::Keep);
    let images: Vec<usize> = (0..sites.len()).filter(|&i| live(&judged[i]) && sites[i].is_image()).collect();
    let pages: usize = if rules.pdf_pages_count_as_images {
        (0..sites.len()).filter(|&i| live(&judged[i]) && sites[i].is_pdf()).map(|i| pdf_pages(&sites[i])).sum()
    } else {
        0
    };
    let Some(limit) = limit else { return images.len() };
    let room = limit.saturating_sub(pages);
    let over = images.len().saturating_sub(room);
    for &i in &images[..over] {
        let why = format!("{} images in one request, over the provider's {limit}", images.len() + pages);
        let note = crate::rewrite::cap_note_for(room, sites[i].name.as_deref().unwrap_or("not recorded"));
        replace(body, dialect, &sites[i], &note, "capped", &why, edits, changes);
        judged[i] = Judged::Keep;
    }
    images.len() - over
}

fn pdf_pages(site: &Site) -> usize {
    let mut bytes = Vec::new();
    if crate::media::decode_base64(site.base64.as_bytes(), &mut bytes).is_err() {
        return 1;
    }
    Facts::examine(&bytes, None, Depth::Structural).pages.map_or(1, |p| p as usize)
}

/// Under `store: false` the Responses API resolves no `rs_` id: a replayed
/// reasoning item that has an id and no encrypted content cannot be sent
/// (404 "Item with id … not found"); it goes, as `--drop-reasoning-ids` would
/// have it in a session.
fn drop_unresolvable_reasoning(body: &[u8], v: &Value, edits: &mut Vec<Edit>, changes: &mut Vec<Change>) {
    if v.get("store") != Some(&Value::Bool(false)) {
        return;
    }
    let Some(items) = v.get("input").and_then(Value::as_array) else { return };
    for (i, item) in items.iter().enumerate() {
        let kind = item.get("type").and_then(Value::as_str);
        let id = item.get("id").and_then(Value::as_str).unwrap_or_default();
        let unresolvable = match kind {
            Some("reasoning") => !id.is_empty() && item.get("encrypted_content").is_none_or(Value::is_null),
            Some("item_reference") => id.starts_with("rs_"),
            _ => false,
        };
        if unresolvable && let Some(e) = splice::remove(body, &format!("/input/{i}")) {
            edits.push(e);
            changes.push(Change {
                what: "reasoning_dropped",
                block: format!("input[{i}]"),
                why: "a replayed reasoning id under store:false, with no encrypted content: the API cannot resolve it"
                    .into(),
            });
        }
    }
}

/// Replaces the media block at the provider's `block` path with the note for
/// it, after the provider rejected the request naming it; `None` when that
/// path names no attachment of the request (nothing to replace: no retry).
pub fn replace_named(body: &[u8], dialect: Dialect, block: &str, why: &str) -> Option<Mended> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let pointer = pointer_of(block);
    let site =
        sites(&v, dialect).into_iter().find(|s| s.block == pointer || pointer.starts_with(&format!("{}/", s.block)))?;
    let (mut edits, mut changes) = (Vec::new(), Vec::new());
    replace(body, dialect, &site, &omitted(&site, dialect), "replaced", why, &mut edits, &mut changes);
    Some(finish(body, &edits, changes)).filter(|m| m.body.is_some())
}

/// Keeps at most `limit` images, after the provider refused a request for
/// carrying more; `None` when the request has no more than that.
pub fn cap_to(body: &[u8], dialect: Dialect, limit: usize, rules: &Rules) -> Option<Mended> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let sites = sites(&v, dialect);
    let mut judged: Vec<Judged> = sites.iter().map(|_| Judged::Keep).collect();
    let (mut edits, mut changes) = (Vec::new(), Vec::new());
    cap(body, dialect, &sites, &mut judged, Some(limit), rules, &mut edits, &mut changes);
    Some(finish(body, &edits, changes)).filter(|m| m.body.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_paths_go_both_ways() {
        assert_eq!(provider_path("/messages/2/content/0", Dialect::Anthropic), "messages.2.content.0");
        assert_eq!(provider_path("/input/3/content/1", Dialect::OpenaiResponses), "input[3].content[1]");
        assert_eq!(pointer_of("contents[0].parts[1]"), "/contents/0/parts/1");
        assert_eq!(pointer_of("messages.2.content.0"), "/messages/2/content/0");
    }

    #[test]
    fn text_beside_a_function_response_starts_no_turn() {
        // An agent that answers a call and adds the user's words in one content:
        // the call before it is still in the current turn.
        let body = br#"{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{}}},{"text":"go on"}]}]}"#;
        let rules = Rules::builtin("gemini").unwrap();
        let m = mend(body, Dialect::Gemini, &rules, None, Some("gemini-3-flash-preview"));
        let v: Value = serde_json::from_slice(&m.body.expect("signed")).unwrap();
        assert_eq!(v["contents"][1]["parts"][0]["thoughtSignature"], "skip_thought_signature_validator");
        // A text turn after it ends that turn: nothing to sign.
        let later = br#"{"contents":[{"role":"model","parts":[{"functionCall":{"name":"a","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"a","response":{}}}]},{"role":"user","parts":[{"text":"next"}]}]}"#;
        assert!(mend(later, Dialect::Gemini, &rules, None, Some("gemini-3-flash-preview")).body.is_none());
        // snake_case parts get the snake_case key, an empty or null signature its value (no second member).
        let snake = br#"{"contents":[{"role":"model","parts":[{"function_call":{"name":"a","args":{}}}]},{"role":"model","parts":[{"functionCall":{"name":"b","args":{}},"thoughtSignature":""}]},{"role":"model","parts":[{"functionCall":{"name":"c","args":{}},"thought_signature":null}]}]}"#;
        let v: Value = serde_json::from_slice(&sign_refused(snake).expect("signed").body.unwrap()).unwrap();
        let skip = "skip_thought_signature_validator";
        assert_eq!(v["contents"][0]["parts"][0]["thought_signature"], skip);
        assert_eq!(v["contents"][1]["parts"][0]["thoughtSignature"], skip);
        assert_eq!(v["contents"][2]["parts"][0]["thought_signature"], skip);
        assert!(v["contents"][2]["parts"][0].get("thoughtSignature").is_none());
    }
}
