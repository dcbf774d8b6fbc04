//! `session-doctor classify`: one provider error in, one class out.
//!
//! The error text is untrusted: everything taken from it goes through
//! [`crate::text::sanitize`] before it reaches a terminal.

use std::io::IsTerminal as _;
use std::io::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};

use clap::Args;

use crate::classify::text::read_capped;
use crate::classify::{Classification, Hint, Judgement, judge};
use crate::exit::Exit;
use crate::report::table::wrap;
use crate::text::sanitize;

/// Classify one provider error (a JSON body, or the text an agent recorded).
///
/// Prints the failure class, whether retrying can help, the remedy, and what the
/// error names (provider, status, code, type, a limit such as the 30 of
/// "31 > 30", the request block it points at), as aligned `key  value` lines.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor classify 'Could not process image'
  session-doctor classify --status 429 'Rate limit reached for requests'
  session-doctor classify --json 'Too many images in request: 31 > 30'
  session-doctor classify error.json
  pbpaste | session-doctor classify --provider anthropic -

Exit status:
  0  the error was classified (even as `unknown`)
  2  usage error, or the input could not be read

--json prints {\"class\",\"retryable\",\"provider\",\"status\",\"code\",\"type\",\"message\",\"limit\",\"block\",\"remedy\",\"call_ids\",\"resets_at\",\"resets_in\"};
absent values are null; call_ids is always an array (the tool call ids the provider names).
resets_at and resets_in say when a quota or rate limit lifts, quoted as the text gives it
(\"9am (America/Chicago)\", \"1.98s\"; a Unix time is given in UTC, RFC 3339).
With --explain, --json adds \"signal\" (the id of the winning signal) and \"why\": the
decision trail as an array of strings — the status judged by and where it came from, the
signal that decided (a structured code, a phrase, a term family, the status), then the
signals of other classes it beat. The trail's wording is for people and may change.

provider is one of the names --provider lists, or null.")]
pub struct ClassifyArgs {
    /// HTTP status, when the error text does not carry it.
    #[arg(long = "status", value_parser = clap::value_parser!(u16).range(100..=599))]
    pub status: Option<u16>,
    /// Provider that returned the error (a name below, or an alias such as
    /// claude, google, azure, aws, vertex_ai); detected when absent.
    #[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
    #[arg(long = "provider", value_name = "PROVIDER", value_parser = super::values::error_provider())]
    pub provider: Option<String>,
    /// Print JSON instead of aligned lines.
    #[arg(long = "json")]
    pub json: bool,
    /// Also print what decided: the status used and where it came from, the winning signal
    /// (a structured code, a phrase, a term family, the status) and the signals it beat.
    #[arg(long = "explain")]
    pub explain: bool,
    /// The error: a JSON body or the text an agent recorded. When it names an
    /// existing file, that file's content is read; `-` or nothing reads stdin.
    #[arg(value_name = "TEXT|FILE|-")]
    pub text: Option<String>,
}

/// Reads the error, classifies it, prints the verdict.
pub fn run(args: &ClassifyArgs) -> anyhow::Result<Exit> {
    let text = match args.text.as_deref() {
        Some(t) if t != "-" && Path::new(t).is_file() => {
            let file = crate::file::open_regular(Path::new(t)).with_context(|| format!("reading {}", sanitize(t)))?;
            read_capped(file).with_context(|| format!("reading {}", sanitize(t)))?
        }
        Some(t) if t != "-" => t.to_string(),
        _ => {
            let stdin = std::io::stdin();
            if args.text.is_none() && stdin.is_terminal() {
                bail!("no error given: pass it as an argument, or pipe it on stdin (`-`)");
            }
            read_capped(stdin.lock()).context("reading the error from stdin")?
        }
    };
    if text.trim().is_empty() {
        bail!("the error text is empty");
    }
    let hint = Hint { status: args.status, provider: args.provider.clone() };
    let j = judge(&text, &hint, &|_| false);
    if args.json {
        let resets = j.resets.as_ref();
        let out = Json {
            c: &j.classification,
            resets_at: resets.and_then(|r| r.at.as_deref()),
            resets_in: resets.and_then(|r| r.within.as_deref()),
            signal: args.explain.then_some(j.signal.as_deref()),
            why: args.explain.then_some(j.classification.why.as_slice()),
        };
        let text = serde_json::to_string_pretty(&crate::report::printer::json::versioned(&out))?;
        // A closed pipe (`| head`) is an error `main` ends quietly on; `println!` panicked.
        writeln!(crate::report::stdout::stdout(), "{text}")?;
    } else {
        write!(crate::report::stdout::stdout(), "{}", human(&j, args.explain, crate::report::term::current().width))?;
    }
    Ok(Exit::Healthy)
}

/// `--json`: the classification's keys in their order, the reset, then (with `--explain`)
/// the winning signal and the trail.
#[derive(serde::Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    c: &'a Classification,
    resets_at: Option<&'a str>,
    resets_in: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[allow(clippy::option_option, reason = "absent without --explain, null when no signal decided")]
    signal: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<&'a [String]>,
}

/// Aligned `key  value` lines; absent values are left out, the message comes last.
/// On a terminal (`width`) long values wrap at spaces under the value column.
fn human(j: &Judgement, explain: bool, width: Option<usize>) -> String {
    let c = &j.classification;
    let resets = j.resets.as_ref().map(|r| {
        let at = r.at.as_deref().map(|a| format!("at {a}"));
        let within = r.within.as_deref().map(|w| format!("in {w}"));
        [at, within].into_iter().flatten().collect::<Vec<_>>().join(", ")
    });
    let retry = match c.retryable {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let mut rows: Vec<(&str, String)> = vec![
        ("class", c.class.as_str().to_string()),
        ("retryable", retry.to_string()),
        ("remedy", c.remedy.to_string()),
    ];
    let optional = [
        ("provider", c.provider.clone()),
        ("status", c.status.map(|s| s.to_string())),
        ("code", c.code.clone()),
        ("type", c.kind.clone()),
        ("limit", c.limit.map(|l| l.to_string())),
        ("block", c.block.clone()),
        ("call ids", (!c.call_ids.is_empty()).then(|| crate::text::units::first_few(&c.call_ids))),
        ("resets", resets),
        ("message", c.message.clone()),
    ];
    rows.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
    if explain {
        rows.extend(c.why.iter().map(|w| ("why", w.clone())));
    }
    let key = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in rows {
        // Continuation lines (of a multi-line message, or wrapped) line up under the value column.
        let v = sanitize(&v);
        let mut first = format!("{k:key$}  ");
        for line in v.split('\n') {
            out.push_str(&wrap(&first, line, width, key + 2));
            out.push('\n');
            first = " ".repeat(key + 2);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_output_is_sanitized_and_aligned() {
        let c = judge("Could not process image \u{1b}[31mred", &Hint { status: Some(400), provider: None }, &|_| false);
        let out = human(&c, false, None);
        assert!(out.starts_with("class      media_rejected\n"), "{out}");
        assert!(out.contains("retryable  no\n"));
        assert!(!out.contains('\u{1b}'));
        assert!(out.contains("\\u{1b}[31m"));
        assert!(!out.contains("why"));
        let out = human(&c, true, None);
        assert!(out.contains("why        decided by the media phrase \"could not process image\""), "{out}");
        assert!(out.contains("why        over the status (a definite client error) → invalid_request"), "{out}");
    }
}
