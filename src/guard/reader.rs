//! Which files each agent's read tool sends as an image or a PDF, and which it
//! reads as text: the guard judges only the first (issue 36, item 6). Denying
//! an SVG as "broken" when Claude Code would have read it as text keeps a good
//! file from the model for nothing.
//!
//! Each rule is the agent's own, read in its source (the versions the
//! round-trip suite pins):
//! - Claude Code 2.1.332 (`Read`): the extension, lower-cased, is `png`,
//!   `jpg`, `jpeg`, `gif` or `webp` (an image) or `pdf`; a file with no
//!   extension is an image when its first bytes are a PNG, JPEG, GIF or WebP
//!   signature. Anything else (`.svg`, `.bmp`, `.tiff`) is read as text.
//! - Cline 3.0.65 (`read_files`): the extension is `.gif`, `.png`, `.jpg`,
//!   `.jpeg` or `.webp`; everything else is read as text.
//! - Gemini CLI 0.61.0 (`read_file`, `detectFileType`): `.svg` is text; an
//!   extension whose media type is `image/*` is an image (so `.bmp` and
//!   `.tiff` are sent as images), `.pdf` a PDF.
//! - pi 0.73.1 (`read`): the first bytes are a JPEG, PNG, GIF or WebP
//!   signature, whatever the name; a PDF is read as text.
//! - opencode 1.18.33 (`read`): the media type of the extension is `image/*`
//!   (not SVG) or `application/pdf`.

use std::io::Read as _;
use std::path::Path;

/// The agent whose read tool is about to read a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    ClaudeCode,
    Cline,
    GeminiCli,
    Pi,
    Opencode,
    /// No agent named: anything named or sniffed as an image or a PDF is judged.
    Any,
}

/// Extensions whose media type is `image/*` in the tables Gemini CLI and
/// opencode look types up in (mime-db), SVG aside.
const IMAGE_EXTENSIONS: &[&str] = &[
    "apng", "avif", "bmp", "gif", "heic", "heif", "ico", "jp2", "jpe", "jpeg", "jpg", "jpm", "jpx", "jxl", "png",
    "psd", "tga", "tif", "tiff", "webp",
];

impl Reader {
    /// Whether this agent's read tool sends the file at `path` as an image or a PDF.
    pub fn sends_as_media(self, path: &Path) -> bool {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
        let ext = ext.as_str();
        match self {
            Reader::ClaudeCode => {
                matches!(ext, "png" | "jpg" | "jpeg" | "gif" | "webp" | "pdf") || (ext.is_empty() && signed(path))
            }
            Reader::Cline => matches!(ext, "png" | "jpg" | "jpeg" | "gif" | "webp"),
            Reader::GeminiCli | Reader::Opencode => ext == "pdf" || IMAGE_EXTENSIONS.contains(&ext),
            Reader::Pi => signed(path),
            Reader::Any => true,
        }
    }
}

/// Whether the file starts with a PNG, JPEG, GIF or WebP signature (the
/// images Claude Code and pi recognize by their bytes).
fn signed(path: &Path) -> bool {
    let mut head = [0u8; 12];
    let n = std::fs::File::open(path).and_then(|f| f.take(12).read(&mut head)).unwrap_or(0);
    let h = &head[..n];
    h.starts_with(b"\x89PNG")
        || h.starts_with(b"\xFF\xD8\xFF")
        || h.starts_with(b"GIF87a")
        || h.starts_with(b"GIF89a")
        || (h.starts_with(b"RIFF") && h.get(8..12) == Some(b"WEBP"))
}
