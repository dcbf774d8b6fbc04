//! Walkers for the content-block dialects that several formats share:
//! Anthropic blocks (Claude Code, Anthropic logs), OpenAI parts and items
//! (Codex, Chat and Responses logs) and Gemini parts (Gemini CLI, Gemini logs).

use crate::json::Value;
use crate::model::{Origin, ReasoningKind};

use super::{LineOut, RawCall, RawPayload, Site, path_argument, path_in_arguments, ptr};

/// A `data:` URL or another reference, as a payload.
pub fn url_payload<'a>(url: &'a Value<'a>) -> Option<RawPayload<'a>> {
    let s = url.as_cow()?;
    if s.starts_with("data:") { Some(RawPayload::DataUrl(s)) } else { Some(RawPayload::Reference(s.to_string())) }
}

/// Anthropic content: a string or an array of blocks.
pub fn anthropic_content<'a>(content: &'a Value<'a>, site: &Site, base: &str, out: &mut LineOut<'a>) {
    for (i, b) in content.items().iter().enumerate() {
        anthropic_block(b, site, &ptr(base, i), out);
    }
}

fn anthropic_block<'a>(b: &'a Value<'a>, site: &Site, at: &str, out: &mut LineOut<'a>) {
    match b.get("type").as_str().unwrap_or("") {
        "image" | "document" => {
            let src = b.get("source");
            let mime = src.get("media_type").as_str();
            let payload = match src.get("type").as_str() {
                Some("url") => src.get("url").to_text().map(RawPayload::Reference),
                Some("file") => src.get("file_id").to_text().map(RawPayload::Reference),
                // A plain-text document is not media; content documents are blocks.
                Some("text" | "content") => None,
                _ => src.get("data").as_cow().map(RawPayload::Base64),
            };
            if let Some(p) = payload {
                let mut m = site.media(p, mime, at.to_string());
                if m.name.is_none() {
                    m.name = b.get("title").to_text();
                }
                out.media.push(m);
            }
        }
        "tool_use" | "server_tool_use" | "mcp_tool_use" => {
            if let Some(id) = b.get("id").to_text() {
                out.calls.push(RawCall {
                    entry: site.entry,
                    call_id: id,
                    name: b.get("name").to_text(),
                    path: path_argument(b.get("input")),
                });
            }
        }
        // `tool_result`, and the server tools' `web_fetch_tool_result`, … that may nest media.
        t if t.ends_with("tool_result") => {
            out.result(site.entry, b.get("tool_use_id").to_text());
            let inner = Site::tool_result(site.entry, b.get("tool_use_id").to_text());
            anthropic_content(b.get("content"), &inner, &ptr(at, "content"), out);
        }
        "thinking" if b.has("signature") => out.reasoning(ReasoningKind::AnthropicSignature, None, at),
        "redacted_thinking" => out.reasoning(ReasoningKind::AnthropicRedacted, None, at),
        _ => {}
    }
}

/// OpenAI content: a string or an array of parts (Chat `image_url`/`file`/`input_audio`,
/// Responses `input_image`/`input_file`).
pub fn openai_content<'a>(content: &'a Value<'a>, site: &Site, base: &str, out: &mut LineOut<'a>) {
    let mut tagged = site.clone();
    for (i, p) in content.items().iter().enumerate() {
        // Codex wraps attached images in `<image name=[Image #1] path="…">` text parts.
        if let Some(name) = p.get("text").as_str().and_then(image_tag_name) {
            tagged.name = Some(name);
            continue;
        }
        openai_part(p, &tagged, &ptr(base, i), out);
        tagged.name.clone_from(&site.name);
    }
}

/// The path (or else the name) in a Codex `<image …>` open tag.
fn image_tag_name(text: &str) -> Option<String> {
    let tag = text.trim().strip_prefix("<image")?;
    let attr = |key: &str| -> Option<String> {
        let rest = &tag[tag.find(key)? + key.len()..];
        let (open, close) = if rest.starts_with('"') { ('"', '"') } else { ('[', ']') };
        let rest = rest.strip_prefix(open)?;
        Some(rest[..rest.find(close)?].to_string())
    };
    attr("path=").or_else(|| attr("name="))
}

fn openai_part<'a>(p: &'a Value<'a>, site: &Site, at: &str, out: &mut LineOut<'a>) {
    match p.get("type").as_str().unwrap_or("") {
        "image_url" => {
            if let Some(pl) = url_payload(image_url(p)) {
                out.media.push(site.media(pl, None, at.to_string()));
            }
        }
        "input_image" | "output_image" => {
            let pl = url_payload(image_url(p)).or_else(|| p.get("file_id").to_text().map(RawPayload::Reference));
            if let Some(pl) = pl {
                out.media.push(site.media(pl, None, at.to_string()));
            }
        }
        "file" | "input_file" => {
            let f = if p.get("file").is_object() { p.get("file") } else { p };
            let pl = url_payload(f.get("file_data"))
                .or_else(|| url_payload(f.get("file_url")))
                .or_else(|| f.get("file_id").to_text().map(RawPayload::Reference));
            if let Some(pl) = pl {
                let mut m = site.media(pl, None, at.to_string());
                if let Some(n) = f.get("filename").to_text() {
                    m.name = Some(n);
                }
                out.media.push(m);
            }
        }
        "input_audio" => {
            let a = p.get("input_audio");
            if let Some(data) = a.get("data").as_cow() {
                let mime = a.get("format").as_str().map(|f| format!("audio/{f}"));
                out.media.push(site.media(RawPayload::Base64(data), mime.as_deref(), at.to_string()));
            }
        }
        _ => {}
    }
}

/// `image_url` as Chat writes it (`{"url": …, "detail"}`) or as Responses and
/// some clients do (the URL string itself).
fn image_url<'v, 'a>(part: &'v Value<'a>) -> &'v Value<'a> {
    let u = part.get("image_url");
    if u.is_object() { u.get("url") } else { u }
}

/// One OpenAI Responses item (also Codex's `response_item.payload`), as part of `entry`.
pub fn responses_item<'a>(item: &'a Value<'a>, entry: usize, at: &str, out: &mut LineOut<'a>) {
    match item.get("type").as_str().unwrap_or("message") {
        "message" => {
            let origin = if item.get("role").as_str() == Some("assistant") { Origin::Assistant } else { Origin::User };
            openai_content(item.get("content"), &Site::new(entry, origin), &ptr(at, "content"), out);
        }
        t @ ("function_call_output" | "custom_tool_call_output" | "tool_search_output" | "computer_call_output") => {
            // A tool search's output answers a call not counted as one (`tool_search_call`).
            if t != "tool_search_output" {
                out.result(entry, item.get("call_id").to_text());
            }
            let site = Site::tool_result(entry, item.get("call_id").to_text());
            let o = item.get("output");
            if o.is_array() {
                openai_content(o, &site, &ptr(at, "output"), out);
            } else if o.is_object() {
                // computer_call_output: {"type":"computer_screenshot","image_url":…}
                if let Some(pl) = url_payload(o.get("image_url")) {
                    out.media.push(site.media(pl, None, ptr(at, "output")));
                }
            }
        }
        "function_call" | "custom_tool_call" | "local_shell_call" | "computer_call" => {
            if let Some(id) = item.get("call_id").to_text() {
                let args = if item.has("arguments") { item.get("arguments") } else { item.get("input") };
                out.calls.push(RawCall {
                    entry,
                    call_id: id,
                    name: item.get("name").to_text(),
                    path: path_in_arguments(args),
                });
            }
        }
        "reasoning" => {
            let id = item.get("id").to_text();
            let kind = if item.get("encrypted_content").as_str().is_some() {
                ReasoningKind::OpenaiEncrypted
            } else {
                ReasoningKind::OpenaiId
            };
            if kind == ReasoningKind::OpenaiEncrypted || id.is_some() {
                let own = id.iter().map(|_| ptr(at, "id")).collect();
                out.reasoning_at(kind, id, at, own);
            }
        }
        "item_reference" => {
            if let Some(id) = item.get("id").to_text().filter(|i| i.starts_with("rs_")) {
                out.reasoning_at(ReasoningKind::OpenaiId, Some(id), at, vec![ptr(at, "id")]);
            }
        }
        _ => {}
    }
}

/// Gemini parts (camelCase or `snake_case`), including media nested in
/// `functionResponse.parts`.
pub fn gemini_parts<'a>(parts: &'a Value<'a>, site: &Site, base: &str, out: &mut LineOut<'a>) {
    for (i, p) in parts.items().iter().enumerate() {
        gemini_part(p, site, &ptr(base, i), out);
    }
}

fn either<'v, 'a>(v: &'v Value<'a>, camel: &str, snake: &str) -> &'v Value<'a> {
    either_key(v, camel, snake).1
}

/// Gemini accepts both spellings of every field; returns the one present.
fn either_key<'v, 'a, 'k>(v: &'v Value<'a>, camel: &'k str, snake: &'k str) -> (&'k str, &'v Value<'a>) {
    if v.has(camel) { (camel, v.get(camel)) } else { (snake, v.get(snake)) }
}

pub fn gemini_part<'a>(p: &'a Value<'a>, site: &Site, at: &str, out: &mut LineOut<'a>) {
    let inline = either(p, "inlineData", "inline_data");
    if let Some(data) = inline.get("data").as_cow() {
        let mime = either(inline, "mimeType", "mime_type").as_str();
        let mut m = site.media(RawPayload::Base64(data), mime, at.to_string());
        if let Some(n) = either(inline, "displayName", "display_name").to_text() {
            m.name = Some(n);
        }
        out.media.push(m);
    }
    let file = either(p, "fileData", "file_data");
    if let Some(uri) = either(file, "fileUri", "file_uri").to_text() {
        let mime = either(file, "mimeType", "mime_type").as_str();
        out.media.push(site.media(RawPayload::Reference(uri), mime, at.to_string()));
    }
    let call = either(p, "functionCall", "function_call");
    if call.is_object() {
        let id = call.get("id").to_text().or_else(|| call.get("name").to_text());
        if let Some(id) = id {
            out.calls.push(RawCall {
                entry: site.entry,
                call_id: id,
                name: call.get("name").to_text(),
                path: path_argument(call.get("args")),
            });
        }
    }
    let (rk, resp) = either_key(p, "functionResponse", "function_response");
    if resp.is_object() {
        let call_id = resp.get("id").to_text().or_else(|| resp.get("name").to_text());
        out.result(site.entry, call_id.clone());
        let mut inner = Site::tool_result(site.entry, call_id);
        inner.tool = resp.get("name").to_text();
        gemini_parts(resp.get("parts"), &inner, &ptr(&ptr(at, rk), "parts"), out);
    }
    if either(p, "thoughtSignature", "thought_signature").as_str().is_some() {
        out.reasoning(ReasoningKind::GeminiSignature, None, at);
    }
}
