//! Provider media rules as data: accepted formats, byte and pixel limits,
//! counts per request.
//!
//! Limits change (several did during 2025–2026), so they live in a data file,
//! `rules.json`, compiled in with `include_str!`, one row per provider with the
//! documentation it came from (`source`) and when it was read (`verified_on`).
//! Users can override any field from their own JSON file
//! ([`Rules::with_overrides_from`]) without waiting for a release.

use std::path::Path;

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};

use super::{Defect, Verdict};

/// The most a `--rules` file holds: far past any real one.
const MAX_RULES_FILE: u64 = 1 << 20;

const BUILTIN_JSON: &str = include_str!("rules.json");

/// How a provider measures the per-image byte limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// The decoded file size.
    #[default]
    Raw,
    /// The length of the base64 text (Anthropic: 5 MB of base64 ≈ 3.75 MB raw).
    Base64,
}

/// The stricter pixel limit some providers apply once a request carries many
/// images (Anthropic: more than 20 images → no side over 2000 px).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManyImages {
    /// The rule applies when a request holds more than this many images.
    pub above_images: u32,
    /// Largest side allowed then.
    pub max_side_px: u32,
}

/// The limits one provider applies to media in a request. `None` means no
/// documented limit. Field names are those of `rules.json` and of a user's
/// override file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// Provider name, e.g. `anthropic`.
    pub provider: String,
    /// Other names the provider is known by (`claude`, `google`, …).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Mime types the provider accepts (images and `application/pdf`).
    pub formats: Vec<String>,
    /// Types only some providers accept: a warning rather than a rejection
    /// (used by the generic profile for HEIC/HEIF).
    #[serde(default)]
    pub some_providers_only: Vec<String>,
    /// Whether animated (multi-frame) GIFs are accepted.
    pub animated_gif: bool,
    /// Whether a declared media type that disagrees with the bytes is rejected
    /// (Anthropic: "Image does not match the provided media type").
    pub strict_media_type: bool,
    /// Largest image, in bytes, measured as [`Rules::image_bytes_on`] says.
    pub max_image_bytes: Option<u64>,
    /// Whether [`Rules::max_image_bytes`] counts raw or base64 bytes.
    #[serde(default)]
    pub image_bytes_on: Measure,
    /// Largest width or height of one image.
    pub max_side_px: Option<u32>,
    /// Largest width × height of one image.
    pub max_pixels: Option<u64>,
    /// The stricter side limit for requests with many images.
    pub many_images: Option<ManyImages>,
    /// Most images one request may carry.
    pub max_images_per_request: Option<u32>,
    /// Whether PDF pages count toward [`Rules::max_images_per_request`]
    /// (Anthropic: "0 document pages + 103 images > 100").
    #[serde(default)]
    pub pdf_pages_count_as_images: bool,
    /// Most PDF pages one request may carry.
    pub max_pdf_pages_per_request: Option<u32>,
    /// Largest single PDF, raw bytes.
    pub max_pdf_bytes: Option<u64>,
    /// Largest request body, bytes.
    pub max_request_bytes: Option<u64>,
    /// Where the numbers come from (documentation URLs, quoted errors).
    pub source: String,
    /// When the source was read (ISO date, possibly just year-month).
    pub verified_on: String,
    /// Caveats for the user.
    #[serde(default)]
    pub notes: Option<String>,
}

#[derive(Deserialize)]
struct Table {
    providers: Vec<Rules>,
}

/// The built-in table, parsed once. The JSON is compiled in and covered by
/// tests, so a failure here is a build defect; we degrade to an empty table
/// rather than panic.
fn table() -> &'static [Rules] {
    static TABLE: std::sync::OnceLock<Vec<Rules>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| serde_json::from_str::<Table>(BUILTIN_JSON).map(|t| t.providers).unwrap_or_default())
}

fn find(name: &str) -> Option<Rules> {
    let name = name.trim().to_ascii_lowercase();
    table().iter().find(|r| r.provider == name || r.aliases.contains(&name)).cloned()
}

impl Rules {
    /// Rules when no provider is known: only checks every provider agrees on
    /// (well-formed JPEG, PNG, GIF, WebP or PDF; no size or count limits).
    pub fn generic() -> Rules {
        find("generic").unwrap_or_else(|| Rules {
            provider: "generic".into(),
            aliases: Vec::new(),
            formats: ["image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf"]
                .map(String::from)
                .to_vec(),
            some_providers_only: vec!["image/heic".into(), "image/heif".into()],
            animated_gif: true,
            strict_media_type: false,
            max_image_bytes: None,
            image_bytes_on: Measure::Raw,
            max_side_px: None,
            max_pixels: None,
            many_images: None,
            max_images_per_request: None,
            pdf_pages_count_as_images: false,
            max_pdf_pages_per_request: None,
            max_pdf_bytes: None,
            max_request_bytes: None,
            source: String::new(),
            verified_on: String::new(),
            notes: None,
        })
    }

    /// Built-in rules for a provider name or alias, through the one provider
    /// vocabulary ([`crate::provider`]). Providers without a row of their own
    /// get the row of the service they front (`azure-openai` → openai's limits)
    /// or, where those limits are not visible here (OpenRouter, LiteLLM and
    /// self-hosted servers route to models we cannot see), the generic profile
    /// under their own name. `generic` is accepted too.
    pub fn builtin(provider: &str) -> Option<Rules> {
        let name = provider.trim().to_ascii_lowercase();
        if name == "generic" {
            return Some(Rules::generic());
        }
        let p = crate::provider::canonical(&name)?;
        let row = match p {
            "azure-openai" => "openai",
            other => other,
        };
        let rules = find(row).unwrap_or_else(Rules::generic);
        Some(Rules { provider: p.to_string(), ..rules })
    }

    /// Every name `--provider` accepts: `generic` and the provider vocabulary.
    pub fn names() -> Vec<&'static str> {
        std::iter::once("generic").chain(crate::provider::NAMES).collect()
    }

    /// Applies a user's override file on top of these rules.
    ///
    /// The file is one JSON object with the same fields as a row of the
    /// built-in table; every field is optional and replaces the built-in
    /// value, `null` removes a limit. Unknown fields are an error (so a typo
    /// does not silently do nothing). Example:
    ///
    /// ```json
    /// { "max_image_bytes": 3932160, "image_bytes_on": "raw",
    ///   "max_images_per_request": 20, "verified_on": "2026-12-01",
    ///   "source": "our gateway's docs" }
    /// ```
    ///
    /// Fields: `formats` (mime list), `some_providers_only`, `animated_gif`,
    /// `strict_media_type`, `max_image_bytes`, `image_bytes_on`
    /// (`"raw"`|`"base64"`), `max_side_px`, `max_pixels`, `many_images`
    /// (`{"above_images": 20, "max_side_px": 2000}`), `max_images_per_request`,
    /// `pdf_pages_count_as_images`, `max_pdf_pages_per_request`,
    /// `max_pdf_bytes`, `max_request_bytes`, `source`, `verified_on`, `notes`,
    /// `provider`, `aliases`.
    pub fn with_overrides_from(self, path: &Path) -> anyhow::Result<Rules> {
        // A rules file is a few hundred bytes: a device or a FIFO in its place is refused.
        let bytes = crate::file::read_bounded(path, MAX_RULES_FILE)
            .with_context(|| format!("cannot read the rules override file {}", path.display()))?;
        let text = String::from_utf8(bytes)
            .with_context(|| format!("the rules override file {} is not UTF-8 text", path.display()))?;
        self.with_overrides_json(&text).with_context(|| format!("in the rules override file {}", path.display()))
    }

    /// [`Rules::with_overrides_from`] on JSON text.
    pub fn with_overrides_json(self, text: &str) -> anyhow::Result<Rules> {
        let over: serde_json::Value = serde_json::from_str(text).context("not valid JSON")?;
        let serde_json::Value::Object(over) = over else {
            bail!("expected a JSON object with rule fields, e.g. {{\"max_images_per_request\": 20}}");
        };
        let mut base = serde_json::to_value(&self).context("cannot serialize the base rules")?;
        if let serde_json::Value::Object(map) = &mut base {
            for (k, v) in over {
                if k.starts_with('_') {
                    continue; // comments
                }
                map.insert(k, v);
            }
        }
        serde_json::from_value(base).context("a field has the wrong name or type")
    }

    /// Whether this profile accepts the given (normalized) mime type.
    pub(crate) fn accepts(&self, mime: &str) -> bool {
        self.formats.iter().any(|f| f.eq_ignore_ascii_case(mime))
    }

    /// Whether only some providers accept the type (generic profile: warn).
    pub(crate) fn some_accept(&self, mime: &str) -> bool {
        self.some_providers_only.iter().any(|f| f.eq_ignore_ascii_case(mime))
    }
}

/// What one request carries, summed over its attachments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RequestStats {
    /// Images in the request (including those inside tool results).
    pub images: u32,
    /// PDF pages in the request, summed over documents.
    pub pdf_pages: u32,
    /// Largest side among the images, px.
    pub max_image_side: u32,
    /// Total bytes of media as sent (base64 length where the provider counts it).
    pub media_bytes: u64,
}

fn invalid(code: &'static str, message: String) -> Defect {
    Defect { severity: Verdict::Invalid, code, message }
}

/// Limits that depend on the whole request rather than one file: images per
/// request, PDF pages per request, the many-image pixel rule, request size.
pub fn request_problems(stats: &RequestStats, rules: &Rules) -> Vec<Defect> {
    let mut out = Vec::new();
    let p = &rules.provider;
    if let Some(cap) = rules.max_images_per_request {
        if rules.pdf_pages_count_as_images {
            let media = u64::from(stats.images) + u64::from(stats.pdf_pages);
            if media > u64::from(cap) {
                out.push(invalid(
                    "request.too_many_images",
                    format!(
                        "the request carries {} document pages + {} images = {media} media; {p} accepts at most {cap} per request",
                        stats.pdf_pages, stats.images
                    ),
                ));
            }
        } else if stats.images > cap {
            out.push(invalid(
                "request.too_many_images",
                format!(
                    "the request carries {}; {p} accepts at most {cap} per request",
                    crate::text::units::count(u64::from(stats.images), "image", "images")
                ),
            ));
        }
    }
    if let Some(cap) = rules.max_pdf_pages_per_request
        && stats.pdf_pages > cap
    {
        out.push(invalid(
            "request.too_many_pdf_pages",
            format!("the request carries {} PDF pages; {p} accepts at most {cap} per request", stats.pdf_pages),
        ));
    }
    if let Some(many) = rules.many_images
        && stats.images > many.above_images
        && stats.max_image_side > many.max_side_px
    {
        out.push(invalid(
            "request.many_images_pixels",
            format!(
                "the request carries {} images and the largest side is {} px; with more than {} images {p} rejects any side over {} px",
                stats.images, stats.max_image_side, many.above_images, many.max_side_px
            ),
        ));
    }
    if let Some(cap) = rules.max_request_bytes {
        if stats.media_bytes > cap {
            out.push(invalid(
                "request.too_large",
                format!(
                    "the media in the request alone take {} bytes; {p} accepts at most {cap} bytes per request",
                    stats.media_bytes
                ),
            ));
        } else if stats.media_bytes > cap / 10 * 9 {
            out.push(Defect {
                severity: Verdict::Warn,
                code: "request.near_size_limit",
                message: format!(
                    "the media in the request take {} bytes, over 90% of {p}'s {cap}-byte request limit; the text may push it over",
                    stats.media_bytes
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_parses_and_every_name_resolves() {
        assert!(table().len() >= 9, "rules.json must parse");
        for n in Rules::names() {
            let r = Rules::builtin(n).unwrap_or_else(|| panic!("no rules for {n}"));
            assert_eq!(r.provider, n);
            assert!(!r.source.is_empty() && !r.verified_on.is_empty(), "{n} lacks source/verified_on");
        }
        assert_eq!(Rules::builtin("Claude").map(|r| r.provider), Some("anthropic".into()));
        assert_eq!(Rules::builtin("google").map(|r| r.provider), Some("gemini".into()));
        assert_eq!(Rules::builtin("azure").map(|r| r.provider), Some("azure-openai".into()));
        assert_eq!(
            Rules::builtin("azure").map(|r| r.max_images_per_request),
            Rules::builtin("openai").map(|r| r.max_images_per_request)
        );
        assert!(Rules::builtin("nope").is_none());
    }

    #[test]
    fn overrides_replace_fields_and_reject_typos() {
        let r = Rules::builtin("anthropic").unwrap();
        let o = r.clone().with_overrides_json(r#"{"max_images_per_request": 20, "max_side_px": null}"#).unwrap();
        assert_eq!(o.max_images_per_request, Some(20));
        assert_eq!(o.max_side_px, None);
        assert_eq!(o.max_image_bytes, r.max_image_bytes);
        assert!(r.clone().with_overrides_json(r#"{"max_image_byte": 1}"#).is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.json");
        let text = r#"{"_why": "our gateway", "image_bytes_on": "raw", "max_image_bytes": 1000}"#;
        std::fs::write(&path, text).unwrap();
        let f = r.clone().with_overrides_from(&path).unwrap();
        assert_eq!((f.image_bytes_on, f.max_image_bytes), (Measure::Raw, Some(1000)));
        let err = r.clone().with_overrides_from(&dir.path().join("missing.json")).unwrap_err();
        assert!(format!("{err:#}").contains("missing.json"));
        assert!(r.with_overrides_json("[1]").is_err());
    }

    #[test]
    fn request_limits() {
        let a = Rules::builtin("anthropic").unwrap();
        let s = RequestStats { images: 103, pdf_pages: 0, max_image_side: 1000, media_bytes: 0 };
        let p = request_problems(&s, &a);
        assert!(p.iter().any(|p| p.code == "request.too_many_images" && p.message.contains("103")));
        let s = RequestStats { images: 21, pdf_pages: 0, max_image_side: 2001, media_bytes: 0 };
        assert!(request_problems(&s, &a).iter().any(|p| p.code == "request.many_images_pixels"));
        let s = RequestStats { images: 20, pdf_pages: 0, max_image_side: 2001, media_bytes: 0 };
        assert!(request_problems(&s, &a).is_empty());
        let s = RequestStats { images: 50, pdf_pages: 60, max_image_side: 100, media_bytes: 0 };
        assert_eq!(request_problems(&s, &a).len(), 1);
        let o = Rules::builtin("openai").unwrap();
        let s = RequestStats { images: 103, pdf_pages: 0, max_image_side: 7000, media_bytes: 40_000_000 };
        assert!(request_problems(&s, &o).is_empty());
        assert!(request_problems(&s, &Rules::generic()).is_empty());
    }
}
