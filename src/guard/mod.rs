//! The guard: judge a file *before* an agent reads it into its history.
//!
//! A session gets stuck because bytes a provider rejects entered the
//! append-only history; after that, every request carries them. The guard is
//! the check an agent's hook runs first: a file that does not decode is denied
//! with a reason the model sees (so it can tell the user), an image over the
//! provider's limits is handed over as a fitted copy (see [`crate::fit`]), and
//! everything else passes untouched. Each agent's hook protocol lives in its
//! own file ([`claude_code`], [`gemini_cli`], [`cline`]); [`install`] wires the hook into
//! the agent's settings, [`uninstall`] takes it out.

pub mod claude_code;
pub mod cline;
pub mod gemini_cli;
pub mod install;
pub mod reader;
pub mod transcript;
pub mod uninstall;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use sha2::Digest as _;

use crate::fit::{self, Limits, Outcome};
use crate::media::rules::Rules;
use crate::media::{Depth, Facts, Verdict};

/// Files larger than this are let through unjudged: reading a gigabyte into a
/// hook would stall the agent, and no provider takes such an attachment inline
/// anyway (the agent's own size check answers it).
const MAX_GUARDED: u64 = 256 << 20;

/// What the guard decided about one file.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Not an image or PDF, or too large to judge: the agent goes on as usual.
    NotMedia,
    /// Valid media within the provider's limits.
    Pass,
    /// Oversized but valid: this fitted copy goes to the agent instead.
    Fitted { path: PathBuf, note: String },
    /// The provider would refuse it on every request: keep it out, and why.
    Deny { reason: String },
}

/// The tool call a hook event is about, for the agents whose event is
/// `{tool_name, tool_input: {file_path, …}, cwd}` (Claude Code's `PreToolUse`,
/// Gemini CLI's `BeforeTool`): the tool's input and the file it reads, a
/// relative path taken from `cwd`. `None` for a tool not in `tools`, or an
/// event without a file: the guard stays silent.
pub fn hooked_file<'e>(event: &'e serde_json::Value, tools: &[&str]) -> Option<(&'e serde_json::Value, PathBuf)> {
    let tool = event.get("tool_name")?.as_str()?;
    if !tools.contains(&tool) {
        return None;
    }
    let input = event.get("tool_input")?;
    let file = input.get("file_path")?.as_str()?;
    Some((input, resolve(file, event.get("cwd").and_then(serde_json::Value::as_str))))
}

/// A path as an agent's tool call names it: agents pass absolute paths, a
/// relative one is taken from `cwd` (the event's, or Cline's first workspace root).
pub fn resolve(file: &str, cwd: Option<&str>) -> PathBuf {
    let p = Path::new(file);
    match cwd {
        Some(dir) if p.is_relative() => Path::new(dir).join(p),
        _ => p.to_path_buf(),
    }
}

/// The media types guessed from a file name, as agents do before reading.
fn mime_by_name(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        _ => return None,
    })
}

/// Judges the file at `path` under `rules`; fitted copies go to `cache`.
pub fn judge_file(path: &Path, rules: &Rules, cache: &Path) -> anyhow::Result<Decision> {
    judge_file_excusing(path, rules, cache, &[])
}

/// [`judge_file`], problems with the codes `excused` not held against the file:
/// what the agent's tool does not send (Claude Code's Read of a PDF's `pages`
/// sends those pages, not the whole file's count or size).
pub fn judge_file_excusing(path: &Path, rules: &Rules, cache: &Path, excused: &[&str]) -> anyhow::Result<Decision> {
    judge_file_among(path, rules, cache, excused, 1)
}

/// [`judge_file_excusing`] for an image that will be one of `images` in the
/// request (the session's own and this one): above a provider's many-image
/// threshold its stricter side limit holds (see [`transcript`]).
pub fn judge_file_among(
    path: &Path,
    rules: &Rules,
    cache: &Path,
    excused: &[&str],
    images: usize,
) -> anyhow::Result<Decision> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() || meta.len() > MAX_GUARDED {
        return Ok(Decision::NotMedia);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_GUARDED).read_to_end(&mut bytes))
        .with_context(|| format!("reading {}", path.display()))?;
    judge_bytes_among(&bytes, path, rules, cache, excused, images)
}

/// Judges a file that holds a payload as base64 text, as an agent's tool
/// result carries it, decoded as strictly as session-doctor reads a session:
/// text a lenient decoder would take (Node's `Buffer.from(…, "base64")` stops
/// at the first `=`, so two payloads glued together pass as the first) is
/// denied when it is not base64.
pub fn judge_base64_file(path: &Path, rules: &Rules, cache: &Path) -> anyhow::Result<Decision> {
    let text = crate::file::read_bounded(path, MAX_GUARDED).with_context(|| format!("reading {}", path.display()))?;
    let mut bytes = Vec::new();
    if let Err(p) = crate::media::decode_base64_checked(&text, &mut bytes) {
        let reason = deny_reason(&path.display().to_string(), &p.message, &rules.provider);
        return Ok(Decision::Deny { reason });
    }
    judge_bytes(&bytes, path, rules, cache, &[])
}

/// [`judge_file_excusing`] on bytes already read.
pub fn judge_bytes(
    bytes: &[u8],
    path: &Path,
    rules: &Rules,
    cache: &Path,
    excused: &[&str],
) -> anyhow::Result<Decision> {
    judge_bytes_among(bytes, path, rules, cache, excused, 1)
}

/// [`judge_bytes`] for one of `images` images in the request.
pub fn judge_bytes_among(
    bytes: &[u8],
    path: &Path,
    rules: &Rules,
    cache: &Path,
    excused: &[&str],
    images: usize,
) -> anyhow::Result<Decision> {
    let facts = Facts::examine(bytes, None, Depth::Deep);
    let declared = mime_by_name(path);
    let sniffed = facts.mime_detected();
    let media = |m: Option<&str>| m.is_some_and(|m| m.starts_with("image/") || m == "application/pdf");
    if !media(declared) && !media(sniffed) {
        return Ok(Decision::NotMedia);
    }
    let name = path.display().to_string();
    let mut ins = facts.judge(declared, Some(&name), rules);
    ins.problems.retain(|p| !excused.contains(&p.code));
    if let Some(p) = many_images_problem(&ins, rules, images) {
        ins.problems.push(p);
    }
    let invalid: Vec<_> = ins.problems.iter().filter(|p| p.severity == Verdict::Invalid).collect();
    if invalid.is_empty() {
        return Ok(Decision::Pass);
    }
    let shape = fit::Shape { size: (ins.width, ins.height), mime: ins.mime_detected.as_deref() };
    if !fit::only_fittable(&ins.problems, shape) {
        let mut why: Vec<&str> = invalid.iter().map(|p| p.message.as_str()).collect();
        // Over the limits only, and too large to decode: why it was not fitted either.
        let unfit = fit::unfittable(&ins.problems, shape, None).map(|u| format!("it could not be fitted: {u}"));
        why.extend(unfit.as_deref());
        // Over a limit is not broken: a PDF past the page cap is whole, and can be read by pages.
        let broken = invalid.iter().any(|p| !OVER_A_LIMIT.contains(&p.code));
        // Nor is a type the provider does not take (a BMP Gemini CLI sends as an image).
        let foreign = invalid.iter().all(|p| p.code == "type.unsupported");
        let reason = if foreign {
            unsupported_reason(&name, &why.join("; "), &rules.provider)
        } else if broken {
            deny_reason(&name, &why.join("; "), &rules.provider)
        } else {
            over_limit_reason(&name, &why.join("; "), &rules.provider)
        };
        return Ok(Decision::Deny { reason });
    }
    match fit::fit(bytes, &Limits::of(rules, images)) {
        Outcome::Fits => Ok(Decision::Pass),
        // Only over limits, and not fitted: too large, not broken.
        Outcome::Refused(why) => Ok(Decision::Deny { reason: over_limit_reason(&name, &why, &rules.provider) }),
        Outcome::Fitted(f) => {
            let digest = sha2::Sha256::digest(bytes);
            let stem: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
            let out = cache.join(format!("{stem}-{}x{}.{}", f.to.0, f.to.1, f.extension()));
            private_dir(cache)?;
            let reads = [crate::alias::Input::new("the file judged", path)];
            // A fitted copy of a private image is private too: 0600 in a 0700 folder.
            let (replace, mode) = (crate::atomic::Existing::Replace, Some(0o600));
            crate::atomic::write_with_mode(&out, replace, mode, &reads, |w| Ok(w.write_all(&f.bytes)?))?;
            Ok(Decision::Fitted { note: f.note(Some(&name)), path: out })
        }
    }
}

/// An image within every limit of its own that a request of `images` images
/// refuses: the provider's many-image side limit (Anthropic: over 20 images,
/// no side over 2000 px).
fn many_images_problem(ins: &crate::media::Inspection, rules: &Rules, images: usize) -> Option<crate::media::Defect> {
    let many = rules.many_images?;
    let side = ins.width?.max(ins.height?);
    let image = ins.mime_detected.as_deref().is_some_and(|m| m.starts_with("image/"));
    (image && images > many.above_images as usize && side > many.max_side_px).then(|| crate::media::Defect {
        severity: Verdict::Invalid,
        code: "image.too_large",
        message: format!(
            "it would be one of {images} images in the request, and with more than {} images {} rejects any side \
             over {} px (this one is {side} px)",
            many.above_images, rules.provider, many.max_side_px
        ),
    })
}

/// Problems of a whole file that is over a provider's limit, not damaged.
const OVER_A_LIMIT: &[&str] = &["image.too_large", "image.too_many_pixels", "pdf.too_large", "pdf.too_many_pages"];

fn over_limit_reason(name: &str, why: &str, provider: &str) -> String {
    format!(
        "session-doctor guard: {name} was not read whole: {why}. {provider} rejects a file that large, and once it \
         is in the session every later request fails the same way. The file is not broken, only too large: read \
         part of it (a PDF by its `pages`, a few at a time), or ask the user for a smaller copy."
    )
}

fn unsupported_reason(name: &str, why: &str, provider: &str) -> String {
    format!(
        "session-doctor guard: {name} was not read: {why}. {provider} rejects such a file, and once it is in the \
         session every later request fails the same way. The file is not broken: {provider} does not take its type. \
         Convert it to PNG or JPEG first, or ask the user for a copy in one of those."
    )
}

fn deny_reason(name: &str, why: &str, provider: &str) -> String {
    format!(
        "session-doctor guard: {name} was not read: {why}. {provider} rejects such a file, and once it is in the \
         session every later request fails the same way. Tell the user the file is broken and ask for a good copy."
    )
}

/// Where fitted copies are kept: `$XDG_CACHE_HOME/session-doctor/fitted`
/// (else `~/.cache/…`). They are named by the original's sha256, so fitting
/// the same file twice reuses the name.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
    match base {
        Some(b) => b.join("session-doctor").join("fitted"),
        // No home: a folder of this user's own in the shared temporary folder,
        // which [`private_dir`] refuses if another user made it first.
        None => {
            std::env::temp_dir().join(format!("session-doctor-{}", rustix::process::geteuid().as_raw())).join("fitted")
        }
    }
}

/// Makes `dir` (and the folder it is in) a folder only this user can enter:
/// created 0700, or refused when it is not this user's, or is a link. A
/// folder of ours that others could read is closed to them.
pub fn private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let me = rustix::process::geteuid().as_raw();
    for d in [Some(dir), dir.parent()].into_iter().flatten() {
        let meta = std::fs::symlink_metadata(d).with_context(|| format!("reading {}", d.display()))?;
        if !meta.is_dir() || meta.uid() != me {
            anyhow::bail!(
                "{} is not a folder of this user's own (a link, or another user's): no fitted copy is kept there",
                d.display()
            );
        }
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("closing {} to other users", d.display()))?;
        }
    }
    Ok(())
}
