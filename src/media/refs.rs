//! References without bytes: is a URL, file URI or file id something the
//! provider fetches itself, a local file the agent reads and inlines, or
//! nothing anyone can fetch (an empty string, a redaction placeholder)?

use std::path::PathBuf;

/// What a reference turns out to be.
#[derive(Debug, PartialEq, Eq)]
pub enum Reference {
    /// The provider fetches it (http/https, its own file id, `gs://` for Gemini).
    Fetchable,
    /// A `file://` URI or an absolute path: the bytes are read from the disk.
    Local(PathBuf),
    /// Nothing can fetch it; why.
    Unfetchable(String),
}

/// Providers that read `gs://` URIs (Gemini on Vertex AI, and the Gemini API for
/// files it was given access to).
fn reads_gcs(provider: &str) -> bool {
    matches!(provider, "gemini" | "vertex-gemini" | "generic")
}

/// A provider's file id: OpenAI `file-…`, Anthropic `file_…`, Gemini `files/…`.
fn is_file_id(s: &str) -> bool {
    let id = s.strip_prefix("file-").or_else(|| s.strip_prefix("file_")).or_else(|| s.strip_prefix("files/"));
    id.is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
}

/// Judges one reference under `provider`'s rules.
pub fn classify(url: &str, provider: &str) -> Reference {
    let s = url.trim();
    if s.is_empty() {
        return Reference::Unfetchable(
            "the reference is empty: there are no bytes and no URL to fetch them from".into(),
        );
    }
    let lower = s.get(..s.len().min(8)).unwrap_or("").to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        return Reference::Fetchable;
    }
    if is_file_id(s) {
        return Reference::Fetchable;
    }
    if lower.starts_with("gs://") {
        return if reads_gcs(provider) {
            Reference::Fetchable
        } else {
            Reference::Unfetchable(format!(
                "`{s}` is a Google Cloud Storage URI, which only Gemini reads; {provider} cannot fetch it"
            ))
        };
    }
    if lower.starts_with("file://") {
        let rest = &s[7..];
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        return Reference::Local(PathBuf::from(percent_decoded(rest)));
    }
    let path = std::path::Path::new(s);
    if path.is_absolute() || s.starts_with("~/") {
        let p = match s.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME").map_or_else(|| PathBuf::from(s), |h| PathBuf::from(h).join(rest)),
            None => path.to_path_buf(),
        };
        return Reference::Local(p);
    }
    let shown: String = s.chars().take(60).collect();
    Reference::Unfetchable(format!(
        "`{shown}` is not a URL the provider can fetch (not http(s), a file id or a file that exists here): a placeholder or a redacted value, so the provider will reject it"
    ))
}

fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The most bytes of a local file a session names that are read: past any
/// provider's limit for one attachment, so a larger file is judged by its size.
const MAX_LOCAL: u64 = 64 << 20;

/// The bytes of a local file a session names, when it is a regular file no
/// larger than `MAX_LOCAL` (64 MB): a device (`/dev/zero`), a pipe (which would
/// block the read forever) or a folder is no attachment, and a larger file is
/// not read into memory. `Err` for what the file system refuses (it is gone),
/// `Ok(Err(why))` for a file that is not one the agent can send.
pub fn read_local(path: &std::path::Path) -> std::io::Result<Result<Vec<u8>, String>> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Ok(Err(format!(
            "{} is not a regular file (a device, pipe or folder): no agent sends it as an attachment",
            path.display()
        )));
    }
    if meta.len() > MAX_LOCAL {
        return Ok(Err(format!(
            "{} is {} bytes, past any provider's limit for one attachment (not read)",
            path.display(),
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_LOCAL).read_to_end(&mut bytes)?;
    Ok(Ok(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_provider_fetches() {
        assert_eq!(classify("https://example.com/a.png", "openai"), Reference::Fetchable);
        assert_eq!(classify("file-abc123", "openai"), Reference::Fetchable);
        assert_eq!(classify("file_011CNha8iCJcU1wXNR6q4V8w", "anthropic"), Reference::Fetchable);
        assert_eq!(classify("gs://bucket/a.png", "vertex-gemini"), Reference::Fetchable);
        assert!(matches!(classify("gs://bucket/a.png", "anthropic"), Reference::Unfetchable(_)));
        assert!(matches!(classify("", "openai"), Reference::Unfetchable(_)));
        assert!(matches!(classify("[REDACTED]", "openai"), Reference::Unfetchable(_)));
        assert!(matches!(classify("shot.png", "openai"), Reference::Unfetchable(_)));
        assert_eq!(classify("file:///tmp/a%20b.png", "openai"), Reference::Local(PathBuf::from("/tmp/a b.png")));
        assert_eq!(classify("/tmp/a.png", "openai"), Reference::Local(PathBuf::from("/tmp/a.png")));
    }
}
