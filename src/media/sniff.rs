//! What the bytes really are, regardless of the name or media type the
//! session gives them.
//!
//! Providers decide from the bytes: an HTML error page saved as `.png`, an SVG
//! or a HEIC photo labelled `image/jpeg` are the commonest causes of "Could not
//! process image". Magic numbers cover the media types we validate; `infer`
//! names the rest; our own checks catch the text formats `infer` does not
//! (HTML, SVG, XML, plain text) and HEIC/AVIF brands.

/// The type found in the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Png,
    Jpeg,
    Gif,
    Webp,
    Pdf,
    Heic,
    Heif,
    Avif,
    Bmp,
    Tiff,
    Ico,
    Svg,
    Html,
    Xml,
    Text,
    /// Something `infer` knows (zip, mp4, …), with its mime type.
    Other(&'static str),
    /// Binary data of no known type.
    Unknown,
}

impl Kind {
    /// The mime type, when the kind has one.
    pub(crate) fn mime(self) -> Option<&'static str> {
        Some(match self {
            Kind::Png => "image/png",
            Kind::Jpeg => "image/jpeg",
            Kind::Gif => "image/gif",
            Kind::Webp => "image/webp",
            Kind::Pdf => "application/pdf",
            Kind::Heic => "image/heic",
            Kind::Heif => "image/heif",
            Kind::Avif => "image/avif",
            Kind::Bmp => "image/bmp",
            Kind::Tiff => "image/tiff",
            Kind::Ico => "image/vnd.microsoft.icon",
            Kind::Svg => "image/svg+xml",
            Kind::Html => "text/html",
            Kind::Xml => "application/xml",
            Kind::Text => "text/plain",
            Kind::Other(m) => m,
            Kind::Unknown => return None,
        })
    }

    /// Words for a message: "a PNG image", "an HTML page".
    pub(crate) fn describe(self) -> String {
        match self {
            Kind::Png => "a PNG image".into(),
            Kind::Jpeg => "a JPEG image".into(),
            Kind::Gif => "a GIF image".into(),
            Kind::Webp => "a WebP image".into(),
            Kind::Pdf => "a PDF document".into(),
            Kind::Heic => "a HEIC photo".into(),
            Kind::Heif => "a HEIF image".into(),
            Kind::Avif => "an AVIF image".into(),
            Kind::Bmp => "a BMP image".into(),
            Kind::Tiff => "a TIFF image".into(),
            Kind::Ico => "an ICO icon".into(),
            Kind::Svg => "an SVG drawing (text, not pixels)".into(),
            Kind::Html => "an HTML page (often an error page saved by a failed download)".into(),
            Kind::Xml => "an XML document".into(),
            Kind::Text => "plain text (often an error message saved under a media name)".into(),
            Kind::Other(m) => format!("a {m} file"),
            Kind::Unknown => "binary data of no known image or PDF type".into(),
        }
    }

    /// Whether we validate the structure of this kind.
    pub(crate) fn is_media(self) -> bool {
        matches!(self, Kind::Png | Kind::Jpeg | Kind::Gif | Kind::Webp | Kind::Pdf)
    }
}

/// Maps a declared mime type to its canonical form: lowercase, parameters
/// dropped, common aliases folded (`image/jpg` → `image/jpeg`).
pub(crate) fn normalize_mime(declared: &str) -> String {
    let base = declared.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match base.as_str() {
        "image/jpg" | "image/pjpeg" => "image/jpeg".into(),
        "image/x-png" => "image/png".into(),
        "application/x-pdf" => "application/pdf".into(),
        "image/heic-sequence" => "image/heic".into(),
        "image/heif-sequence" => "image/heif".into(),
        _ => base,
    }
}

/// Finds the kind of `bytes`.
pub(crate) fn sniff(bytes: &[u8]) -> Kind {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Kind::Png;
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Kind::Jpeg;
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Kind::Gif;
    }
    if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        return Kind::Webp;
    }
    if bytes.starts_with(b"%PDF-") {
        return Kind::Pdf;
    }
    if bytes.len() >= 12 && &bytes[4..8] == b"ftyp" {
        let major = &bytes[8..12];
        let box_len = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        let compat = bytes.get(16..box_len.min(bytes.len()).max(16)).unwrap_or(&[]);
        let has = |brand: &[u8]| major == brand || compat.chunks_exact(4).any(|c| c == brand);
        if has(b"avif") || has(b"avis") {
            return Kind::Avif;
        }
        if [&b"heic"[..], b"heix", b"hevc", b"hevx", b"heim", b"heis"].iter().any(|b| has(b)) {
            return Kind::Heic;
        }
        if has(b"mif1") || has(b"msf1") {
            return Kind::Heif;
        }
    }
    if bytes.starts_with(b"BM") && bytes.len() >= 14 {
        return Kind::Bmp;
    }
    if bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*") {
        return Kind::Tiff;
    }
    if bytes.starts_with(&[0, 0, 1, 0]) && bytes.len() >= 6 {
        return Kind::Ico;
    }
    if let Some(k) = sniff_text(bytes) {
        return k;
    }
    if let Some(t) = infer::get(bytes) {
        // A cut signature `infer` still names (`\x89PNG` alone: a download cut
        // after four bytes) is that kind, cut: its own check says where.
        return match t.mime_type() {
            "image/png" => Kind::Png,
            "image/jpeg" => Kind::Jpeg,
            "image/gif" => Kind::Gif,
            "image/webp" => Kind::Webp,
            "application/pdf" => Kind::Pdf,
            m => Kind::Other(m),
        };
    }
    Kind::Unknown
}

/// HTML / SVG / XML / plain text, judged from the first 4 KiB.
fn sniff_text(bytes: &[u8]) -> Option<Kind> {
    let head = &bytes[..bytes.len().min(4096)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let body = &head[start..];
    let lower: Vec<u8> = body.iter().take(1024).map(u8::to_ascii_lowercase).collect();
    let contains = |needle: &[u8]| lower.windows(needle.len()).any(|w| w == needle);
    if body.first() == Some(&b'<') {
        if contains(b"<svg") {
            return Some(Kind::Svg);
        }
        if lower.starts_with(b"<!doctype html") || contains(b"<html") || contains(b"<head") || contains(b"<body") {
            return Some(Kind::Html);
        }
        if lower.starts_with(b"<?xml") {
            return Some(Kind::Xml);
        }
        return Some(Kind::Html);
    }
    // Text: valid UTF-8 (a multi-byte character cut at the 4 KiB edge is fine)
    // with no control characters besides tab, CR, LF, FF.
    let text_ok = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() == 4096,
    };
    if !head.is_empty()
        && text_ok
        && head.iter().all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r' | 0x0C) || b >= 0x80)
        && head.iter().all(|&b| b != 0x7F)
    {
        return Some(Kind::Text);
    }
    None
}

/// A hint for binary data that is almost a PNG: a damaged signature but an
/// IHDR chunk where it belongs.
pub(crate) fn looks_like_damaged_png(bytes: &[u8]) -> bool {
    bytes.get(12..16) == Some(b"IHDR")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\nrest"), Kind::Png);
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Kind::Jpeg);
        assert_eq!(sniff(b"GIF89a...."), Kind::Gif);
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Kind::Webp);
        assert_eq!(sniff(b"%PDF-1.4\n"), Kind::Pdf);
        assert_eq!(sniff(b"\0\0\0\x18ftypheic\0\0\0\0mif1heic"), Kind::Heic);
        assert_eq!(sniff(b"\0\0\0\x18ftypavif\0\0\0\0mif1avif"), Kind::Avif);
        assert_eq!(sniff(b"\0\0\0\x18ftypmif1\0\0\0\0mif1miaf"), Kind::Heif);
        assert_eq!(sniff(b"BM\x36\0\0\0\0\0\0\0\x36\0\0\0"), Kind::Bmp);
        assert_eq!(sniff(b"II*\0\x08\0\0\0"), Kind::Tiff);
    }

    #[test]
    fn text_formats() {
        assert_eq!(sniff(b"<!DOCTYPE html><html>404</html>"), Kind::Html);
        assert_eq!(sniff(b"\xEF\xBB\xBF  <html>"), Kind::Html);
        assert_eq!(sniff(b"<?xml version=\"1.0\"?><svg xmlns=..."), Kind::Svg);
        assert_eq!(sniff(b"<svg width=\"10\"/>"), Kind::Svg);
        assert_eq!(sniff(b"<?xml version=\"1.0\"?><root/>"), Kind::Xml);
        assert_eq!(sniff(b"Error: file not found\n"), Kind::Text);
        assert_eq!(sniff("Größe: 3 Bytes".as_bytes()), Kind::Text);
        assert_eq!(sniff(&[0x00, 0x01, 0x02, 0x9F]), Kind::Unknown);
        assert_eq!(sniff(b"PK\x03\x04\x14\0\0\0"), Kind::Other("application/zip"));
    }

    #[test]
    fn mime_normalization() {
        assert_eq!(normalize_mime(" Image/JPG "), "image/jpeg");
        assert_eq!(normalize_mime("image/png; charset=binary"), "image/png");
        assert_eq!(normalize_mime("image"), "image");
    }
}
