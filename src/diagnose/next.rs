//! The exact commands that get the user going again, per failure class.

use crate::classify::Class;
use crate::media::rules::Rules;

use super::limits::Remedy;
use super::{DiagnoseOptions, Failure, Suspect};

use crate::text::shell_quote;

/// One next command: `session-doctor SUB FILE`, then the read arguments that
/// make it read the session the way this one did (`read_args`, from
/// `ReadArgs::repeat`), then `args`. Every command that suggests another builds it here.
pub fn command(file_arg: &str, read_args: &str, sub: &str, args: &str) -> String {
    let mut c = format!("session-doctor {sub} {}", shell_quote(file_arg));
    for part in [read_args, args] {
        if !part.is_empty() {
            c.push(' ');
            c.push_str(part);
        }
    }
    c
}

/// Whether the remedy of `class` is to leave its prime suspects out (what
/// [`commands`] names `exclude` for): not a count over the request
/// (`image_limit`, whose remedy is a cap, even where the provider's message
/// names the message that holds every image), nor reasoning or structure.
pub fn excludes_suspects(class: Class) -> bool {
    matches!(
        class,
        Class::MediaRejected | Class::PayloadTooLarge | Class::ContextOverflow | Class::InvalidRequest | Class::Unknown
    )
}

/// What the next request carries, as far as the next commands depend on it.
#[derive(Clone, Debug)]
pub struct NextRequest {
    /// The remedy of the request-level limit that explains the failure
    /// ([`super::limits`]), or the cap an `image_limit` states.
    pub remedy: Option<Remedy>,
    /// It holds an image: `--max-images 0` changes something.
    pub images: bool,
    /// A line of the session holds a lone surrogate escape: `repair` replaces it.
    pub lone_surrogates: bool,
    /// `preview` models the agent's request and `--fit` rewrites its media
    /// ([`crate::formats::Behaviour::previews`]): else neither is offered.
    pub previews: bool,
}

/// What to run next, in order; empty when nothing needs doing (or nothing
/// session-doctor does can help: credentials, billing, waiting). A session
/// read from a store (`opts.store`) is never sent to `preview` or `repair`,
/// which read and copy files and refuse stores: its next step is an export,
/// which diagnose's note names. `request.images` is whether the next request holds
/// an image: `--max-images 0` is offered only where it changes something.
pub fn commands(
    failure: Option<&Failure>,
    stuck: bool,
    suspects: &[Suspect],
    excluded: &[String],
    rules: &Rules,
    request: &NextRequest,
    opts: &DiagnoseOptions,
) -> Vec<String> {
    let NextRequest { remedy, images, lone_surrogates, previews } = request;
    let (images, lone_surrogates, previews) = (*images, *lone_surrogates, *previews);
    // A store with an export: every command reads the export (the one an
    // exclusion must land beside, since repair reads that file's overlay).
    let export = opts.export.as_ref().filter(|_| stuck && failure.is_some());
    let file = export.map_or_else(|| opts.file_arg.clone(), |e| export_file(&e.session));
    let read_args = export.map_or(opts.read_args.as_str(), |e| e.read_args.as_str());
    let cmd = |sub: &str, args: &str| {
        let reads_the_file = matches!(sub, "preview" | "repair");
        let modelled = previews || sub != "preview";
        (modelled && (export.is_some() || !(opts.store && reads_the_file)))
            .then(|| command(&file, read_args, sub, args))
    };
    let Some(f) = failure.filter(|_| stuck) else {
        // Not stuck, but exclusions were made: the repaired copy is what to resume.
        return if excluded.is_empty() { Vec::new() } else { cmd("repair", "").into_iter().collect() };
    };
    let c = &f.classification;
    let primes: Vec<&str> = suspects.iter().filter(|s| s.prime).map(|s| s.attachment.reference.as_str()).collect();
    // The export's refs are its own lines, not the store's: it names its suspects itself.
    let exclude = || {
        if primes.is_empty() || export.is_some() {
            cmd("exclude", "--suspects")
        } else {
            let refs: Vec<String> = primes.iter().map(|r| format!("--ref {r}")).collect();
            cmd("exclude", &refs.join(" "))
        }
    };
    // A limit on every side of the request (Anthropic's past 20 images):
    // fitting them keeps every image.
    let side = match remedy {
        Some(Remedy::Fit(side)) => Some(*side),
        _ => None,
    };
    // Every prime suspect is valid but over a size limit: a fitted copy keeps the image.
    let fittable = previews
        && ((side.is_some() && primes.is_empty())
            || (!primes.is_empty()
                && suspects.iter().filter(|s| s.prime).all(|s| {
                    crate::fit::fits_to(&s.attachment.problems, crate::diagnose::fit_shape(&s.attachment), side)
                })));
    let out: Vec<Option<String>> = match c.class {
        Class::MediaRejected if fittable => vec![cmd("preview", "--fit"), cmd("repair", "--fit")],
        Class::MediaRejected => vec![exclude(), cmd("repair", "")],
        Class::ImageLimit => match remedy {
            Some(Remedy::Cap(n)) => {
                let args = format!("--max-images {n}");
                vec![cmd("preview", &args), cmd("repair", &args)]
            }
            // The export's refs are its own lines, not the store's.
            Some(Remedy::Exclude(refs)) if !refs.is_empty() && export.is_none() => {
                let refs: Vec<String> = refs.iter().map(|r| format!("--ref {r}")).collect();
                vec![cmd("exclude", &refs.join(" ")), cmd("repair", "")]
            }
            _ => Vec::new(),
        },
        Class::ReasoningRejected => {
            let text = c.message.as_deref().unwrap_or("").to_ascii_lowercase();
            // The provider that refused it verifies its own family's reasoning
            // only: that is what goes; another provider's stays (seed 004).
            let own = (f.source != super::FailureSource::Predicted)
                .then(|| super::provider_family(&rules.provider))
                .flatten();
            // Gemini 3's "Function call is missing a thought_signature": a
            // signature to add, not one to remove; stripping cannot help
            // (the note of `super::signature` says what does).
            if super::signature::missing(&text) {
                return Vec::new();
            }
            let flag = match own {
                _ if text.contains("not found") => "--drop-reasoning-ids".to_string(),
                Some(family) => format!("--strip-reasoning={family}"),
                None => "--strip-reasoning".to_string(),
            };
            vec![cmd("preview", &flag), cmd("repair", &flag)]
        }
        Class::PayloadTooLarge | Class::ContextOverflow if !suspects.is_empty() => vec![exclude(), cmd("repair", "")],
        // Too many tokens: the bulkiest tool outputs (and images) become notes until it fits.
        Class::ContextOverflow => {
            // A window stated by an error the session does not record (`--error`)
            // reaches preview and repair only as --context-tokens.
            let given = (f.source == super::FailureSource::Given)
                .then(|| c.message.as_deref().and_then(crate::rewrite::trim::stated))
                .flatten();
            let args = given.map_or_else(
                || "--fit-context".to_string(),
                |(_, max)| format!("--fit-context --context-tokens {max}"),
            );
            vec![cmd("preview", &args), cmd("repair", &args)]
        }
        Class::PayloadTooLarge if images => vec![cmd("preview", "--max-images 0"), cmd("repair", "--max-images 0")],
        Class::InvalidRequest | Class::Unknown if !primes.is_empty() => vec![exclude(), cmd("repair", "")],
        // A lone surrogate no line holds is in what the agent adds: no copy changes it.
        Class::HistoryInvalid if super::unicode::refused(f) && !lone_surrogates => Vec::new(),
        Class::HistoryInvalid => vec![cmd("repair", "")],
        _ => Vec::new(),
    };
    let mut out: Vec<String> = out.into_iter().flatten().collect();
    out.dedup();
    if let Some(e) = export.filter(|_| !out.is_empty()) {
        out.insert(0, format!("{} export {} > {}", e.cli, shell_quote(&e.session), shell_quote(&file)));
    }
    out
}

/// The file the next commands export a stored session to: `<id>.json` in the
/// current folder, or `session.json` for an id that is no plain name.
pub fn export_file(session: &str) -> String {
    let plain = !session.is_empty() && session.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain { format!("{session}.json") } else { "session.json".into() }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/tmp/a-b_c.jsonl"), "/tmp/a-b_c.jsonl");
        assert_eq!(shell_quote("my session.jsonl"), "'my session.jsonl'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        // A newline cannot make the command two lines (text::shell's tests read the name back in sh).
        let q = shell_quote("a\nb's\u{2028}.jsonl");
        assert!(!q.contains('\n') && !q.contains('\u{2028}'), "{q}");
    }
}
