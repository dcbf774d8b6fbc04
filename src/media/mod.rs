//! Byte-level validation of embedded media (images, PDFs).
//!
//! CONTRACT used by the reader (`scan`) — keep these signatures:
//! - [`decode_base64`]: decode an attachment's base64 text into `out`.
//! - [`inspect`]: judge decoded bytes against a provider's rules.
//! - [`Verdict`], [`Problem`], [`Inspection`], [`Depth`], [`rules::Rules`].

pub mod rules;

use serde::Serialize;

/// How well an attachment will fare with the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    Warn,
    Invalid,
}

/// One thing wrong with an attachment, in words a user can act on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub severity: Verdict,
    /// Stable machine code, e.g. `base64.invalid`, `png.truncated`.
    pub code: &'static str,
    pub message: String,
}

/// What validation learned about one payload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inspection {
    pub mime_detected: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub pages: Option<u32>,
    pub frames: Option<u32>,
    pub problems: Vec<Problem>,
}

impl Inspection {
    /// The worst severity among the problems.
    pub fn verdict(&self) -> Verdict {
        self.problems
            .iter()
            .map(|p| p.severity)
            .max()
            .unwrap_or(Verdict::Ok)
    }
}

/// Structural checks run at near disk speed; deep checks decode everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Depth {
    #[default]
    Structural,
    Deep,
}

/// Decodes base64 (standard or URL-safe, padding optional) into `out`
/// (cleared first). On failure returns a problem that says which byte is bad.
pub fn decode_base64(text: &str, out: &mut Vec<u8>) -> Result<(), Problem> {
    use base64::Engine as _;
    out.clear();
    base64::engine::general_purpose::STANDARD
        .decode_vec(text.trim_end(), out)
        .map_err(|e| Problem {
            severity: Verdict::Invalid,
            code: "base64.invalid",
            message: format!("the base64 payload does not decode: {e}"),
        })
}

/// Judges decoded bytes. `declared` is the mime type the session claims.
pub fn inspect(
    bytes: &[u8],
    declared: Option<&str>,
    _depth: Depth,
    _rules: &rules::Rules,
) -> Inspection {
    let mut ins = Inspection {
        mime_detected: infer::get(bytes).map(|t| t.mime_type().to_string()),
        ..Inspection::default()
    };
    if bytes.is_empty() {
        ins.problems.push(Problem {
            severity: Verdict::Invalid,
            code: "payload.empty",
            message: "the attachment is empty".into(),
        });
    }
    let _ = declared;
    ins
}
