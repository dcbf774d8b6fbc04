//! Problem codes as data: every code a finding, an attachment's problem, a
//! request limit or `check` can carry, with its usual severity and one line
//! saying what it means. The table of codes in `docs/codes.md` is generated from
//! [`CODES`] (`tests/it/codes.rs` checks it is current, and that every code
//! literal in `src/` is registered here).
//!
//! A code is `family.name`. Two families are patterns: `session.stuck.<class>`
//! and `session.predicted.<class>` take a failure class (`media_rejected`, …).

use crate::model::Severity;

/// One registered code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code {
    /// `png.truncated`; a pattern ends in `<class>`.
    pub code: &'static str,
    /// The severity it usually carries (some media codes are warnings under one
    /// provider and errors under another: the problem says which).
    pub severity: Severity,
    pub description: &'static str,
}

const fn c(code: &'static str, severity: Severity, description: &'static str) -> Code {
    Code { code, severity, description }
}

use Severity::{Error as E, Info as I, Warning as W};

/// Every code, grouped by family, in the order `docs/codes.md` lists them.
pub const CODES: &[Code] = &[
    // How the payload's bytes are spelled.
    c("base64.invalid", E, "the base64 text does not decode"),
    c("base64.nonstandard", W, "the base64 decodes, but is not standard padded base64; strict providers may reject it"),
    c("data_url.invalid", E, "the data URL is malformed (no `,` before its payload)"),
    c("reference.missing", E, "a referenced local file is gone, so the agent cannot send it"),
    c("reference.unfetchable", E, "a reference (URL, file id) cannot be resolved to bytes"),
    c(
        "reference.unreadable",
        E,
        "a referenced local path is no file an agent sends (a device, a pipe, a folder) or is past any provider's size limit; it is not read",
    ),
    c("payload.empty", E, "the attachment is empty (0 bytes)"),
    // What the bytes are, against what was declared.
    c("mime.malformed", E, "the declared media type is not of the form type/subtype"),
    c("mime.declared_unsupported", E, "the declared media type is not one the provider accepts"),
    c(
        "mime.mismatch",
        W,
        "the declared media type does not match the bytes (an error where the provider rejects that)",
    ),
    c("type.unknown", E, "the bytes are of no known media type"),
    c("type.unsupported", E, "the bytes are a type the provider does not accept"),
    c("type.not_everywhere", W, "the bytes are a type only some providers accept"),
    // Provider limits per attachment.
    c("image.too_large", E, "the image is over the provider's per-image byte limit"),
    c("image.too_many_pixels", E, "the image is over the provider's per-side or total pixel limit"),
    c("image.huge", W, "the image claims more pixels than common decoders accept (a decompression bomb)"),
    c("gif.animated", E, "the GIF is animated and the provider accepts only still GIFs"),
    c("pdf.too_large", E, "the PDF is over the provider's byte limit"),
    c("pdf.too_many_pages", E, "the PDF has more pages than the provider accepts per request"),
    // PNG structure and data.
    c("png.truncated", E, "the PNG was cut short (no IEND chunk)"),
    c("png.corrupt", E, "a PNG chunk is malformed, misplaced or of an invalid type"),
    c("png.crc", E, "a PNG chunk fails its CRC checksum"),
    c("png.no_ihdr", E, "the first PNG chunk is not IHDR"),
    c("png.bad_header", E, "the PNG header holds impossible values (a side of 0, a bad bit depth)"),
    c("png.no_palette", E, "a palette PNG has no PLTE chunk"),
    c("png.unknown_critical", E, "the PNG has an unknown critical chunk that decoders refuse"),
    c("png.no_data", E, "the PNG has no IDAT chunk (no pixel data)"),
    c("png.trailing_data", W, "bytes follow the PNG's IEND chunk"),
    c("png.data_missing", E, "the PNG's image data is too short for the size its header claims"),
    c("png.decode", E, "the PNG's image data does not decode (--deep)"),
    c("png.not_decoded", W, "the PNG is too large to decode within the cap; judged by its header"),
    // JPEG.
    c("jpeg.truncated", E, "the JPEG was cut short (no EOI marker)"),
    c("jpeg.corrupt", E, "a JPEG marker or segment is malformed"),
    c("jpeg.bad_header", E, "the JPEG frame header holds impossible values"),
    c("jpeg.no_data", E, "the JPEG holds no image data"),
    c("jpeg.data_missing", E, "the JPEG's image data is too short for the size its header claims"),
    c("jpeg.decode", E, "the JPEG's image data does not decode (--deep)"),
    c("jpeg.not_decoded", W, "the JPEG is too large to decode within the cap; judged by its header"),
    // GIF.
    c("gif.truncated", E, "the GIF was cut short (no trailer)"),
    c("gif.bad_header", E, "the GIF header holds impossible values"),
    c("gif.bad_frame", E, "a GIF frame has impossible dimensions"),
    c("gif.corrupt", E, "a GIF block is malformed"),
    c("gif.no_frames", E, "the GIF holds no frame"),
    c("gif.decode", E, "the GIF's frames do not decode (--deep)"),
    c("gif.not_decoded", W, "the GIF is too large to decode within the cap; judged by its header"),
    // WebP.
    c("webp.truncated", E, "the WebP was cut short (shorter than its RIFF header declares)"),
    c("webp.trailing_data", W, "bytes follow the WebP data its RIFF header declares"),
    c("webp.corrupt", E, "a WebP chunk is malformed or misplaced"),
    c("webp.bad_header", E, "the WebP header holds impossible values"),
    c("webp.no_data", E, "the WebP holds no image data"),
    c("webp.decode", E, "the WebP bitstream does not decode (--deep)"),
    c("webp.not_decoded", W, "the WebP is too large to decode within the cap; judged by its header"),
    // PDF.
    c("pdf.bad_header", E, "the PDF header names no PDF version"),
    c("pdf.truncated", E, "the PDF was cut short (no %%EOF)"),
    c("pdf.no_xref", E, "the PDF has no cross-reference table"),
    c("pdf.bad_xref", E, "the PDF's cross-reference table is missing, damaged or hostile"),
    c("pdf.xref_damaged", W, "the PDF's cross-reference offsets are wrong and had to be corrected"),
    c("pdf.invalid", E, "the PDF's structure does not parse"),
    c("pdf.encrypted", E, "the PDF is encrypted; providers reject encrypted PDFs"),
    c("pdf.page_tree", E, "the PDF's page tree is broken"),
    c("pdf.no_pages", E, "the PDF has no pages"),
    c("pdf.page_count", W, "the PDF's declared page count differs from its page tree"),
    c("pdf.decode", E, "the PDF's streams cannot be decoded (--deep)"),
    c("pdf.stream", E, "compressed PDF streams do not decompress (--deep)"),
    c("pdf.stream_cut", W, "compressed PDF streams end early (--deep)"),
    c("pdf.not_decoded", W, "the PDF's streams decompress past the cap; the rest were not checked"),
    c("pdf.page_content", W, "a PDF page's content stream does not parse; it may render blank (--deep)"),
    // The history as one request.
    c("request.too_many_images", E, "the request carries more images (or media) than the provider accepts"),
    c("request.too_many_pdf_pages", E, "the request carries more PDF pages than the provider accepts"),
    c("request.many_images_pixels", E, "with this many images, the provider rejects an image side this large"),
    c("request.too_large", E, "the request's media alone are over the provider's request size limit"),
    c("request.near_size_limit", W, "the request's media are close to the provider's request size limit"),
    c("request.over_max_images", E, "the history holds more images than `check --max-images` allows"),
    // The file's lines (reader findings).
    c("line.invalid_json", E, "a line is not valid JSON; skipped (repair rejoins or splits it where that reads)"),
    c("line.truncated", E, "the last line was cut short (the agent stopped mid-write); the record is skipped"),
    c("line.invalid_utf8", W, "a line holds bytes that are not UTF-8; read with them replaced"),
    c("line.not_utf8", E, "a line is neither valid JSON nor valid UTF-8; the record is skipped"),
    c(
        "line.not_a_record",
        E,
        "a line is JSON but not an object (a number, a string, an array): no record; it is skipped",
    ),
    c(
        "line.too_deep",
        W,
        "a line nests JSON past 100 levels; those values are read as null, the rest of the record is read",
    ),
    c(
        "line.lone_surrogate",
        W,
        "a line holds a lone surrogate escape (half of a character cut in two): read as U+FFFD; Anthropic refuses it, repair replaces it",
    ),
    c("line.crlf", I, "the file has Windows line endings; read as plain newlines"),
    c("line.bom", I, "the file starts with a UTF-8 byte-order mark; it is ignored"),
    c(
        "codex.compaction_rebuilt",
        I,
        "a Codex compaction without replacement history: Codex rebuilds what came before it from its initial context and the earlier user messages' text, which no line holds",
    ),
    // Files a line points to (Claude Code's persisted tool results).
    c(
        "saved_output.missing",
        W,
        "a tool result's full output, saved to a file the session names, is gone: only its preview is sent",
    ),
    c("saved_output.size", W, "a tool result's saved output differs from the size the agent recorded"),
    c("saved_output.media", W, "a tool result's saved output is media whose bytes do not validate"),
    c(
        "subagent.fork_media",
        E,
        "a fork subagent's requests carry its parent session's history, which holds invalid media",
    ),
    c(
        "kiro.bytes_invalid",
        E,
        "an image's list of bytes holds a value that is no byte (0 to 255): Kiro CLI cannot load the line",
    ),
    c(
        "gemini.cleanup_deletes",
        W,
        "Gemini CLI deletes this session at its next start on another: a file beside it with no message shares its short id",
    ),
    c(
        "subagent.fork_parent_missing",
        W,
        "the parent history a fork subagent's requests begin with is not where its `fork-context-ref` points",
    ),
    c("history.parent_cycle", W, "the records' parent links form a cycle; the history is read in file order"),
    c(
        "history.parent_missing",
        W,
        "a record names a parent that is not in the file; the history is read in file order",
    ),
    // The history's structure, as the provider checks it (issue 14).
    c(
        "history.call_without_result",
        E,
        "a tool call has no result before the next turn (a run interrupted mid-tool); `repair` pairs it; a warning where the agent pairs it itself on resume (Codex, Claude Code, pi)",
    ),
    c(
        "history.result_without_call",
        E,
        "a tool result answers a call that is not in the history (dropped or compacted away)",
    ),
    c("history.duplicate_result", E, "a tool call has more than one result"),
    c("history.empty_message", E, "a message the provider would receive has no content"),
    c(
        "history.roles_out_of_order",
        E,
        "messages are in an order the provider rejects (a tool message not after its call)",
    ),
    // What `check` concludes about a session.
    c("session.stuck.<class>", E, "a recorded failure of this class will come back on every retry (diagnose: stuck)"),
    c("session.predicted.<class>", E, "no failure is recorded, but the next request will fail with this class"),
    c(
        "session.failure_unrecovered",
        W,
        "the last recorded failure was not followed by an accepted request, but a retry can work",
    ),
    c(
        "session.undetermined",
        W,
        "the history ends in a request with no answer, and the agent records no failure there (Gemini CLI headless): the file cannot tell whether it failed",
    ),
    c("session.unreadable", E, "the session could not be read"),
    c(
        "sidecar.unreadable",
        W,
        "a file the agent keeps beside the session (Cline's `ui_messages.json`, its extension's `taskHistory.json`) cannot be read, so what it records (a failure, the messages Cline no longer sends) is not",
    ),
];

/// The registered entry for `code`, matching the `<class>` patterns by the
/// failure classes they take.
pub fn lookup(code: &str) -> Option<&'static Code> {
    if let Some(c) = CODES.iter().find(|c| c.code == code) {
        return Some(c);
    }
    let (family, class) = code.rsplit_once('.')?;
    let known = crate::classify::Class::ALL.iter().any(|c| c.as_str() == class);
    let pattern = format!("{family}.<class>");
    CODES.iter().find(|c| known && c.code == pattern)
}

/// The codes `typed` may mean, for a usage error: those under the family it
/// names (`session.stuck.*`, `session.stuck`, a `<class>` pattern spelled out),
/// each class of a pattern given.
pub fn near(typed: &str) -> Vec<String> {
    let family = typed.trim_end_matches(['*', '.']).trim_end_matches(".<class>");
    if family.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in CODES {
        if let Some(f) = c.code.strip_suffix(".<class>").filter(|f| *f == family) {
            out.extend(crate::classify::Class::ALL.iter().map(|k| with_class(f, *k)));
        } else if c.code.strip_prefix(family).is_some_and(|rest| rest.starts_with('.')) {
            out.push(c.code.to_string());
        }
    }
    out
}

/// The code of a failure class under a pattern family, e.g.
/// `session.stuck.media_rejected`.
pub fn with_class(family: &str, class: crate::classify::Class) -> String {
    format!("{family}.{class}")
}

/// The table of codes in `docs/codes.md` (between the markers the codes test keeps current).
pub fn markdown_table() -> String {
    let mut out = String::from("| code | severity | meaning |\n| --- | --- | --- |\n");
    for c in CODES {
        out.push_str(&format!("| `{}` | {} | {} |\n", c.code, c.severity, c.description.replace('|', "\\|")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_patterns_resolve() {
        let mut seen = std::collections::HashSet::new();
        for c in CODES {
            assert!(seen.insert(c.code), "{} registered twice", c.code);
        }
        assert!(lookup("png.truncated").is_some());
        assert!(lookup("session.stuck.media_rejected").is_some());
        assert!(lookup("session.predicted.reasoning_rejected").is_some());
        assert!(lookup("session.stuck.nonsense").is_none());
        assert!(lookup("png.nonsense").is_none());
    }
}
