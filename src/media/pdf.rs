//! PDF: cheap byte checks first (header, `%%EOF` in the tail, `startxref`
//! pointing at an xref table or stream, a sane object count, `/Encrypt`),
//! then lopdf loaded STRICTLY — its default silently rebuilds a broken xref
//! and accepts truncated files — and our own page-tree walk with a visited
//! set and a depth limit, so a page tree that points at itself ends in a
//! finding rather than a hang. `Deep` also decompresses every stream
//! (bounded) and parses every page's content.
//!
//! Hostile input must end in a finding in bounded time and memory: every
//! loop here is bounded by the file length or an explicit cap, lopdf's stream
//! decompression is capped, and lopdf runs under `catch_unwind`.

use std::collections::HashSet;

use lopdf::{Document, LoadOptions, Object, ObjectId};
use memchr::memmem;

use super::{DECODE_CAP, Depth, Inspection, Verdict};

/// Deepest page tree we walk (real files use 3–6 levels).
const MAX_TREE_DEPTH: usize = 64;
/// Most page-tree nodes we visit.
const MAX_TREE_NODES: usize = 1_000_000;
/// Per-stream decompression cap handed to lopdf while loading.
const LOAD_STREAM_CAP: usize = 64 << 20;

/// Validates a PDF (the caller checked `%PDF-`) and fills in the page count.
pub(crate) fn check(bytes: &[u8], depth: Depth, ins: &mut Inspection) {
    let total = bytes.len();
    if !precheck(bytes, ins) {
        return;
    }
    let opts = LoadOptions { strict: true, max_decompressed_size: Some(LOAD_STREAM_CAP), ..LoadOptions::default() };
    let loaded = crate::contain::contain(|| Document::load_mem_with_options(bytes, opts));
    let doc = match loaded {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => {
            ins.invalid(
                "pdf.invalid",
                format!("the PDF's structure is broken ({e}) in this {total}-byte file; providers answer \"The PDF specified was not valid\""),
            );
            return;
        }
        Err(_) => {
            ins.invalid("pdf.invalid", "the PDF parser failed on this file: its structure is broken".into());
            return;
        }
    };
    if doc.xref_recovery.is_some() {
        ins.push(
            Verdict::Warn,
            "pdf.xref_damaged",
            "the PDF's cross-reference offsets are wrong and had to be corrected: the file was edited or damaged"
                .into(),
        );
    }
    if doc.is_encrypted() || doc.trailer.has(b"Encrypt") {
        encrypted(ins);
        return;
    }
    let pages = match walk_pages(&doc) {
        Ok(p) => p,
        Err(msg) => {
            ins.invalid("pdf.page_tree", msg);
            return;
        }
    };
    ins.pages = Some(u32::try_from(pages.ids.len()).unwrap_or(u32::MAX));
    if pages.ids.is_empty() {
        ins.invalid("pdf.no_pages", "the PDF has no pages; providers answer \"The document has no pages\"".into());
        return;
    }
    if let Some(c) = pages.declared
        && i64::try_from(pages.ids.len()) != Ok(c)
    {
        ins.push(
            Verdict::Warn,
            "pdf.page_count",
            format!("the PDF says it has {c} pages but its page tree holds {}", pages.ids.len()),
        );
    }
    if depth == Depth::Deep {
        deep(&doc, &pages.ids, ins);
    }
}

fn encrypted(ins: &mut Inspection) {
    ins.invalid(
        "pdf.encrypted",
        "the PDF is encrypted (password protected); providers reject encrypted PDFs — save an unprotected copy".into(),
    );
}

fn parse_uint(b: &[u8]) -> Option<(u64, usize)> {
    let start = b.iter().position(|c| !c.is_ascii_whitespace())?;
    let digits = b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 19 {
        return None;
    }
    let s = std::str::from_utf8(&b[start..start + digits]).ok()?;
    Some((s.parse().ok()?, start + digits))
}

/// Byte-level checks that cost almost nothing and catch truncation and
/// hostile counts before lopdf sees the file. Returns whether to continue.
fn precheck(bytes: &[u8], ins: &mut Inspection) -> bool {
    let total = bytes.len();
    let version_ok = matches!(bytes.get(5..8), Some([b'1', b'.', b'0'..=b'9'] | b"2.0"));
    if !version_ok {
        let shown = String::from_utf8_lossy(&bytes[..total.min(12)]).replace(['\r', '\n'], " ");
        ins.invalid("pdf.bad_header", format!("the PDF header \"{shown}\" names no PDF version: it is not a real PDF"));
        return false;
    }
    let tail_start = total.saturating_sub(1024);
    if memmem::rfind(&bytes[tail_start..], b"%%EOF").is_none() {
        let place = if total > 1024 {
            format!("in the last 1024 of its {total} bytes")
        } else {
            format!("in its {total} bytes")
        };
        ins.invalid("pdf.truncated", format!("the PDF does not end with %%EOF (none {place}): the file was cut short"));
        return false;
    }
    let sx_region = total.saturating_sub(4096);
    let Some(sx) = memmem::rfind(&bytes[sx_region..], b"startxref").map(|i| i + sx_region) else {
        ins.invalid(
            "pdf.no_xref",
            "the PDF has no startxref near its end: there is no cross-reference table, so it is not a usable PDF"
                .into(),
        );
        return false;
    };
    let Some((offset, _)) = parse_uint(&bytes[sx + 9..]) else {
        ins.invalid("pdf.no_xref", format!("the startxref at byte {sx} is not followed by a byte offset"));
        return false;
    };
    if offset >= total as u64 {
        ins.invalid(
            "pdf.bad_xref",
            format!("startxref points at byte {offset}, past the end of the {total}-byte file: the file was cut short or damaged"),
        );
        return false;
    }
    let offset = usize::try_from(offset).unwrap_or(total);
    let at = &bytes[offset..];
    let skip = at.iter().take_while(|c| c.is_ascii_whitespace()).count();
    let at = &at[skip..];
    if at.starts_with(b"xref") {
        // First subsection header "start count": the count must fit the file
        // (each entry is 20 bytes; allow 18 for sloppy writers).
        if let Some((_, used)) = parse_uint(&at[4..])
            && let Some((count, _)) = parse_uint(&at[4 + used..])
        {
            let room = (at.len() / 18) as u64;
            if count > room {
                ins.invalid(
                    "pdf.bad_xref",
                    format!(
                        "the cross-reference table claims {count} objects but the file has room for at most {room}: it is damaged or hostile"
                    ),
                );
                return false;
            }
        }
    } else if !looks_like_obj_header(at) {
        let shown: String = String::from_utf8_lossy(&at[..at.len().min(16)])
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        ins.invalid(
            "pdf.bad_xref",
            format!(
                "startxref points at byte {offset}, where there is no cross-reference table (found \"{shown}\"): the file was damaged or edited"
            ),
        );
        return false;
    }
    // The trailer (or the xref stream's dictionary) lies from the xref offset
    // to the end.
    let trailer = &bytes[offset..];
    let mut search = 0usize;
    let mut checked = 0;
    while let Some(i) = memmem::find(&trailer[search..], b"/Size") {
        let p = search + i + 5;
        if let Some((size, _)) = parse_uint(&trailer[p..])
            && size > (total as u64).saturating_mul(8).max(1 << 20)
        {
            ins.invalid(
                "pdf.bad_xref",
                format!("the PDF trailer claims {size} objects in a {total}-byte file: it is damaged or hostile"),
            );
            return false;
        }
        search = p;
        checked += 1;
        if checked > 64 {
            break;
        }
    }
    if memmem::find(trailer, b"/Encrypt").is_some() {
        encrypted(ins);
        return false;
    }
    true
}

/// `N G obj` at the start of `b` (an xref stream object).
fn looks_like_obj_header(b: &[u8]) -> bool {
    let Some((_, a)) = parse_uint(b) else {
        return false;
    };
    let Some((_, c)) = parse_uint(&b[a..]) else {
        return false;
    };
    let rest = &b[a + c..];
    let ws = rest.iter().take_while(|x| x.is_ascii_whitespace()).count();
    rest[ws..].starts_with(b"obj")
}

struct Pages {
    ids: Vec<ObjectId>,
    declared: Option<i64>,
}

/// Walks the page tree from the catalog with a visited set and a depth
/// limit; a loop, a missing node or a wrong type is an error message.
fn walk_pages(doc: &Document) -> Result<Pages, String> {
    let root = doc
        .trailer
        .get(b"Root")
        .and_then(Object::as_reference)
        .map_err(|_| "the PDF trailer names no document catalog (/Root)".to_string())?;
    let catalog = doc
        .get_dictionary(root)
        .map_err(|_| format!("the PDF's catalog (object {} {}) is missing or not a dictionary", root.0, root.1))?;
    let pages_root = catalog
        .get(b"Pages")
        .and_then(Object::as_reference)
        .map_err(|_| "the PDF's catalog has no page tree (/Pages)".to_string())?;
    let declared = doc.get_dictionary(pages_root).ok().and_then(|d| d.get(b"Count").ok()).and_then(|c| c.as_i64().ok());
    let mut visited: HashSet<ObjectId> = HashSet::new();
    let mut ids = Vec::new();
    // Depth-first, in document order: push kids reversed.
    let mut stack: Vec<(ObjectId, usize)> = vec![(pages_root, 0)];
    while let Some((id, depth)) = stack.pop() {
        if !visited.insert(id) {
            return Err(format!(
                "the PDF's page tree refers back to object {} {} (a loop or a page listed twice): viewers and providers cannot read it",
                id.0, id.1
            ));
        }
        if depth > MAX_TREE_DEPTH {
            return Err(format!("the PDF's page tree is nested more than {MAX_TREE_DEPTH} levels deep"));
        }
        if visited.len() > MAX_TREE_NODES {
            return Err(format!("the PDF's page tree has more than {MAX_TREE_NODES} nodes"));
        }
        let dict = doc.get_dictionary(id).map_err(|_| {
            format!("page tree node {} {} is missing or not a dictionary: the PDF is damaged", id.0, id.1)
        })?;
        let ty = dict.get(b"Type").and_then(Object::as_name).ok();
        let kids = dict.get(b"Kids").ok();
        let is_node = ty == Some(b"Pages".as_slice()) || (ty.is_none() && kids.is_some());
        if !is_node {
            ids.push(id);
            continue;
        }
        let kids = match kids {
            Some(Object::Reference(r)) => doc.get_object(*r).ok(),
            other => other,
        };
        let Some(Object::Array(kids)) = kids else {
            return Err(format!("page tree node {} {} has no list of kids: the PDF is damaged", id.0, id.1));
        };
        for kid in kids.iter().rev() {
            let Ok(kid) = kid.as_reference() else {
                return Err(format!("page tree node {} {} lists a kid that is not a reference", id.0, id.1));
            };
            stack.push((kid, depth + 1));
        }
    }
    Ok(Pages { ids, declared })
}

const DECODABLE: [&[u8]; 5] = [b"FlateDecode", b"LZWDecode", b"ASCII85Decode", b"ASCIIHexDecode", b"RunLengthDecode"];

fn deep(doc: &Document, pages: &[ObjectId], ins: &mut Inspection) {
    let result = crate::contain::contain(|| deep_inner(doc, pages));
    match result {
        Ok(problems) => {
            for (sev, code, msg) in problems {
                ins.push(sev, code, msg);
            }
        }
        Err(_) => ins.invalid("pdf.decode", "the PDF parser failed while decoding its streams: it is damaged".into()),
    }
}

fn deep_inner(doc: &Document, pages: &[ObjectId]) -> Vec<(Verdict, &'static str, String)> {
    let mut out = Vec::new();
    let mut budget = usize::try_from(DECODE_CAP).unwrap_or(usize::MAX);
    let mut bad_streams = Vec::new();
    let mut skipped_budget = false;
    let mut cut_streams = 0u32;
    for (id, obj) in &doc.objects {
        let Object::Stream(s) = obj else { continue };
        let Ok(filters) = s.filters() else { continue };
        if filters.is_empty() || !filters.iter().all(|f| DECODABLE.contains(f)) {
            continue;
        }
        if budget == 0 {
            skipped_budget = true;
            break;
        }
        if filters[0] == b"FlateDecode" {
            // lopdf hands back whatever inflated before the damage, so inflate
            // the raw data ourselves to see corruption.
            use miniz_oxide::inflate::{TINFLStatus, decompress_to_vec_zlib_with_limit};
            match decompress_to_vec_zlib_with_limit(&s.content, budget.min(LOAD_STREAM_CAP)) {
                Ok(v) => budget = budget.saturating_sub(v.len()),
                Err(e) if e.status == TINFLStatus::HasMoreOutput => skipped_budget = true,
                Err(e) if e.status == TINFLStatus::FailedCannotMakeProgress => cut_streams += 1,
                Err(e) => bad_streams.push(format!("{} {} ({:?})", id.0, id.1, e.status)),
            }
            continue;
        }
        match s.decompressed_content_with_limit(budget.min(LOAD_STREAM_CAP)) {
            Ok(v) => budget = budget.saturating_sub(v.len()),
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
                skipped_budget = true;
            }
            Err(e) => bad_streams.push(format!("{} {} ({e})", id.0, id.1)),
        }
    }
    if !bad_streams.is_empty() {
        let n = bad_streams.len();
        bad_streams.truncate(3);
        out.push((
            Verdict::Invalid,
            "pdf.stream",
            format!(
                "{n} compressed stream(s) of the PDF do not decompress, e.g. object {}: the file is corrupt",
                bad_streams.join(", ")
            ),
        ));
    }
    if cut_streams > 0 {
        out.push((
            Verdict::Warn,
            "pdf.stream_cut",
            format!("{cut_streams} compressed stream(s) of the PDF end early; viewers usually show what is there"),
        ));
    }
    if skipped_budget {
        out.push((
            Verdict::Warn,
            "pdf.not_decoded",
            format!("the PDF's streams decompress to more than {DECODE_CAP} bytes; the rest were not checked"),
        ));
    }
    for (n, &page) in pages.iter().enumerate() {
        // An error is the size cap: already reported above, or harmless.
        let Ok(content) = doc.get_page_content_with_limit(page, LOAD_STREAM_CAP) else { continue };
        if lopdf::content::Content::decode(&content).is_err() {
            out.push((
                Verdict::Warn,
                "pdf.page_content",
                format!("page {} of the PDF has a content stream that does not parse; it may render blank", n + 1),
            ));
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pre(b: &[u8]) -> Inspection {
        let mut ins = Inspection::default();
        precheck(b, &mut ins);
        ins
    }

    #[test]
    fn prechecks() {
        assert_eq!(pre(b"%PDF-1.4 not really a pdf").problems[0].code, "pdf.truncated");
        assert_eq!(pre(b"%PDF-x").problems[0].code, "pdf.bad_header");
        assert_eq!(pre(b"%PDF-1.4\n%%EOF").problems[0].code, "pdf.no_xref");
        assert_eq!(pre(b"%PDF-1.4\nstartxref\n999\n%%EOF").problems[0].code, "pdf.bad_xref");
        assert_eq!(pre(b"%PDF-1.4\nstartxref\n3\n%%EOF").problems[0].code, "pdf.bad_xref");
        let huge =
            b"%PDF-1.4\nxref\n0 2147483647\n0000000000 65535 f \ntrailer\n<< /Size 2147483647 >>\nstartxref\n9\n%%EOF";
        let big_size =
            b"%PDF-1.4\nxref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 2147483647 >>\nstartxref\n9\n%%EOF";
        assert!(pre(big_size).problems[0].message.contains("trailer claims 2147483647"));
        let ins = pre(huge);
        assert_eq!(ins.problems[0].code, "pdf.bad_xref", "{:?}", ins.problems);
        assert!(ins.problems[0].message.contains("2147483647"));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_uint(b"  42 x"), Some((42, 4)));
        assert_eq!(parse_uint(b"x"), None);
        assert_eq!(parse_uint(b"99999999999999999999999"), None);
        assert!(looks_like_obj_header(b"12 0 obj <<"));
        assert!(!looks_like_obj_header(b"12 0 ob"));
    }
}
