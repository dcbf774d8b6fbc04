//! Kiro CLI: `~/.kiro/sessions/cli/<id>.jsonl` (`$KIRO_HOME` moves `~/.kiro`),
//! beside its metadata `<id>.json`.
//!
//! Kiro CLI is not on npm, so it is not driven here; the layout is read from
//! sessions other projects keep as fixtures of real runs (kiro-cli 2.24 and
//! 2.27, cited in `docs/formats.md`). Each line is one row of Kiro's event
//! log, `{version: "v1", kind, data}`:
//!
//! - `Prompt`: the user's message, `data.content` a list of `{kind, data}`
//!   blocks (`text`, `image`), `data.meta.timestamp` in seconds;
//! - `AssistantMessage`: a reply, blocks `text`, `thinking` (`{text,
//!   signature, redactedContent, modelId}`) and `toolUse` (`{toolUseId, name,
//!   input}`);
//! - `ToolResults`: `toolResult` blocks (`{toolUseId, content, status}`, the
//!   content blocks `text`, `json` or `image`), text the user sent while the
//!   tools ran, and `data.results`, Kiro's own record of each tool's run,
//!   whose `Success.items` repeat the result's images (`{"Image": …}`);
//! - `Clear` (`/clear`): nothing before it is sent again;
//! - `Compaction` (`/compact`): `data.summary` and `data.messages_snapshot`,
//!   the messages kept after it (`{id, role, content, meta}`), which are sent
//!   after the summary instead of everything before;
//! - `CancelledPrompt`: the user message before it is not sent.
//!
//! An image is `{format: "png"|"jpeg"|"gif"|"webp", source: {kind: "bytes",
//! data: [137, 80, …]}}`: its bytes as a list of numbers.
//!
//! Kiro CLI writes no failed request to either file: `diagnose` asks for
//! the error it printed. It talks to Kiro's own service, whose request no
//! public source shows, so `preview` does not model it.

use crate::json::Value;
use crate::model::{Origin, ReasoningKind, Role, Session, Severity};
use crate::request::{Dialect, ReadRange, Render, To};

use super::{Adapter, Behaviour, LineOut, Pairing, RawCall, RawEntry, RawPayload, Site, Unit, path_argument, ptr};

/// Kiro passes the provider's own errors through (Anthropic's 2000-pixel
/// many-image wording, kirodotdev/Kiro#8884; "too many images and documents:
/// 101 + 0 > 100", #9629, a model limit its maintainers say), and its models
/// are Anthropic's: Anthropic's limits judge it. A
/// tool use must be answered in the next message (a call left without its
/// result is refused as "invalid conversation history received").
pub const BEHAVIOUR: Behaviour = Behaviour {
    default_provider: Some("anthropic"),
    pairing: Pairing::Anthropic,
    unrecorded_failures: Some("Kiro CLI records no failed request in its session files"),
    previews: false,
    ..Behaviour::agent("Kiro CLI")
};

/// What `preview` says of a Kiro CLI session.
pub const NOT_MODELLED: &str = "preview does not model Kiro CLI's request: it sends the history to Kiro's own service, in a form no public source shows; scan, diagnose, exclude and repair read the session itself";

/// The code of an image whose byte list holds a value that is no byte.
pub const BYTES_INVALID: &str = "kiro.bytes_invalid";

pub struct Kiro;

/// The row kinds Kiro CLI writes.
const KINDS: [&str; 6] = ["Prompt", "AssistantMessage", "ToolResults", "Clear", "Compaction", "CancelledPrompt"];

impl Adapter for Kiro {
    fn sniff(&self, v: &Value<'_>) -> u32 {
        let Some(kind) = v.get("kind").as_str() else { return 0 };
        if !KINDS.contains(&kind) || v.get("version").as_str().is_none() {
            return 0;
        }
        if v.at(&["data", "content"]).is_array() || v.at(&["data", "message_id"]).as_str().is_some() { 6 } else { 3 }
    }

    fn read<'a>(&self, v: &'a Value<'a>, out: &mut LineOut<'a>) {
        let data = v.get("data");
        match v.get("kind").as_str().unwrap_or("") {
            "Prompt" => {
                out.at = data.at(&["meta", "timestamp"]).to_text();
                out.turn = true;
                let e = out.entry(RawEntry::new(Role::User));
                blocks(data.get("content"), "/data/content", e, Origin::User, out);
            }
            "AssistantMessage" => {
                let mut entry = RawEntry::new(Role::Assistant);
                // Written once the reply came: the request before it was accepted.
                entry.accepted = true;
                let e = out.entry(entry);
                blocks(data.get("content"), "/data/content", e, Origin::Assistant, out);
            }
            "ToolResults" => {
                // The last user message, which a `CancelledPrompt` takes back.
                out.turn = true;
                let e = out.entry(RawEntry::new(Role::User));
                blocks(data.get("content"), "/data/content", e, Origin::User, out);
            }
            "Clear" => out.unit = Unit::Reset,
            "Compaction" => {
                out.unit = Unit::Reset;
                // The summary goes first, in a context entry of Kiro's own.
                out.entry(RawEntry::new(Role::User));
                for (i, m) in data.get("messages_snapshot").items().iter().enumerate() {
                    let (role, origin) = match m.get("role").as_str() {
                        Some("assistant") => (Role::Assistant, Origin::Assistant),
                        _ => (Role::User, Origin::User),
                    };
                    let mut entry = RawEntry::new(role);
                    entry.accepted = role == Role::Assistant;
                    let e = out.entry(entry);
                    let at = ptr(&ptr("/data/messages_snapshot", i), "content");
                    blocks(m.get("content"), &at, e, origin, out);
                }
            }
            "CancelledPrompt" => out.unit = Unit::DropTurns(1),
            _ => out.unit = Unit::Hidden,
        }
    }

    fn dialect(&self, _: &Session, _: &str) -> Dialect {
        Dialect::Anthropic
    }

    fn request<'a>(&self, _: &To<'a>, _: &mut ReadRange<'_>) -> anyhow::Result<Box<dyn Render + 'a>> {
        anyhow::bail!(NOT_MODELLED)
    }
}

/// A message's `{kind, data}` blocks at `at`, in entry `e`.
fn blocks<'a>(content: &'a Value<'a>, at: &str, e: usize, origin: Origin, out: &mut LineOut<'a>) {
    for (i, b) in content.items().iter().enumerate() {
        let at = ptr(at, i);
        let d = b.get("data");
        match b.get("kind").as_str().unwrap_or("") {
            "image" => image(d, &at, &Site::new(e, origin), out),
            "toolUse" => {
                let Some(id) = d.get("toolUseId").to_text() else { continue };
                let input = d.get("input");
                out.calls.push(RawCall {
                    entry: e,
                    call_id: id,
                    name: d.get("name").to_text(),
                    path: read_path(input).or_else(|| path_argument(input)),
                });
            }
            "toolResult" => {
                let id = d.get("toolUseId").to_text();
                out.result(e, id.clone());
                let site = Site::tool_result(e, id);
                for (j, c) in d.get("content").items().iter().enumerate() {
                    if c.get("kind").as_str() == Some("image") {
                        image(c.get("data"), &ptr(&ptr(&at, "data/content"), j), &site, out);
                    }
                }
            }
            "thinking" => {
                let at = ptr(&at, "data");
                if d.get("signature").as_str().is_some_and(|s| !s.is_empty()) {
                    out.reasoning(ReasoningKind::AnthropicSignature, None, &at);
                } else if matches!(d.get("redactedContent"), Value::Array(a) if !a.is_empty()) {
                    out.reasoning(ReasoningKind::AnthropicRedacted, None, &at);
                }
            }
            _ => {}
        }
    }
}

/// The file a call reads: Kiro's `read` takes a list of `operations`, each
/// with a `path` or `image_paths`; other tools name it as most agents do.
fn read_path(input: &Value<'_>) -> Option<String> {
    let op = input.get("operations").items().first()?;
    op.get("path").to_text().or_else(|| op.get("image_paths").items().first().and_then(Value::to_text))
}

/// An image block's `data` at `at` (the pointer of the block holding it).
fn image<'a>(d: &'a Value<'a>, at: &str, site: &Site, out: &mut LineOut<'a>) {
    let source = d.get("source");
    if source.get("kind").as_str() != Some("bytes") {
        return;
    }
    let data = source.get("data");
    // Kept as bytes by the parser (one byte a number, not a value each); a
    // list it kept as values holds a number written otherwise, or no byte.
    let bytes: Option<Vec<u8>> = match data.as_bytes() {
        Some(b) => Some(b.to_vec()),
        None => data.items().iter().map(|n| n.as_f64().and_then(byte)).collect(),
    };
    let Some(bytes) = bytes else {
        out.findings.push((
            Severity::Error,
            BYTES_INVALID,
            format!("the image at {at} lists a value that is no byte (0 to 255): Kiro CLI cannot load this line"),
        ));
        return;
    };
    let mime = d.get("format").as_str().map(|f| match f.to_ascii_lowercase().as_str() {
        "jpg" => "image/jpeg".to_string(),
        f => format!("image/{f}"),
    });
    out.media.push(site.media(RawPayload::Bytes(bytes), mime.as_deref(), at.to_string()));
}

/// A whole number from 0 to 255.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a whole number in 0..=255")]
fn byte(f: f64) -> Option<u8> {
    (f.fract() == 0.0 && (0.0..=255.0).contains(&f)).then_some(f as u8)
}

/// Where `data.results` repeats the image of the tool result block at
/// `pointer` (`/data/content/<i>/data/content/<j>`) of a `ToolResults` line:
/// the `Image` item of that result's `result.Success.items` in the same
/// place among its images as the block is among the result's. A repair that
/// leaves the block out replaces it there too, so no copy of it stays.
pub fn results_copy(text: &[u8], pointer: &str) -> Option<std::ops::Range<usize>> {
    use crate::json::splice;
    let rest = pointer.strip_prefix("/data/content/")?;
    let (i, rest) = rest.split_once("/data/content/")?;
    let j: usize = rest.parse().ok()?;
    let result = format!("/data/content/{i}/data");
    let id = splice::locate(text, &format!("{result}/toolUseId"))
        .and_then(|r| serde_json::from_slice::<String>(&text[r]).ok())?;
    let is_image = |r: std::ops::Range<usize>, key: &str| splice::locate(&text[r], key).is_some();
    let content = splice::locate(text, &format!("{result}/content"))?;
    let blocks = splice::children(text, content.start)?;
    let nth = blocks.get(..=j)?.iter().filter(|b| is_kind_image(&text[b.value.clone()])).count().checked_sub(1)?;
    let esc = id.replace('~', "~0").replace('/', "~1");
    let items = splice::locate(text, &format!("/data/results/{esc}/result/Success/items"))?;
    let images: Vec<_> =
        splice::children(text, items.start)?.into_iter().filter(|c| is_image(c.value.clone(), "/Image")).collect();
    images.get(nth).map(|c| c.value.clone())
}

/// A `{kind, data}` block whose kind is `image`.
fn is_kind_image(block: &[u8]) -> bool {
    crate::json::splice::locate(block, "/kind").is_some_and(|r| &block[r] == b"\"image\"")
}

#[cfg(test)]
mod tests {
    use super::results_copy;

    /// The n-th image of a result is the n-th `Image` item of its record,
    /// whatever text sits between them.
    #[test]
    fn the_results_copy_of_an_image_is_found_by_its_place_among_images() {
        let img = |b: u8| format!(r#"{{"format":"png","source":{{"kind":"bytes","data":[{b}]}}}}"#);
        let line = format!(
            r#"{{"version":"v1","kind":"ToolResults","data":{{"content":[{{"kind":"toolResult","data":{{"toolUseId":"t/1","content":[{{"kind":"text","data":"a"}},{{"kind":"image","data":{a}}},{{"kind":"image","data":{b}}}],"status":"success"}}}}],"results":{{"t/1":{{"tool":null,"result":{{"Success":{{"items":[{{"Text":"a"}},{{"Image":{a}}},{{"Image":{b}}}]}}}}}}}}}}}}"#,
            a = img(1),
            b = img(2)
        );
        let t = line.as_bytes();
        let second = results_copy(t, "/data/content/0/data/content/2").expect("found");
        assert_eq!(&line[second], format!(r#"{{"Image":{}}}"#, img(2)));
        let first = results_copy(t, "/data/content/0/data/content/1").expect("found");
        assert_eq!(&line[first], format!(r#"{{"Image":{}}}"#, img(1)));
        assert_eq!(results_copy(t, "/data/content/0/data/content/0"), None, "a text block has no image copy");
        assert_eq!(results_copy(t, "/data/content/1"), None);
    }
}
