//! `session-doctor classify`: one provider error in, one class out.
//!
//! The error text is untrusted: everything taken from it goes through
//! [`crate::report::sanitize`] before it reaches a terminal.

use std::io::{IsTerminal as _, Read as _};
use std::path::Path;

use anyhow::{Context as _, bail};
use clap::Args;

use crate::classify::{Classification, Hint, classify};
use crate::exit::Exit;
use crate::report::sanitize;
use crate::report::table::wrap;

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

--json prints {\"class\",\"retryable\",\"provider\",\"status\",\"code\",\"type\",\"message\",\"limit\",\"block\",\"remedy\",\"call_ids\"};
absent values are null; call_ids is always an array (the tool call ids the provider names).
With --explain, --json adds \"why\": the decision trail as an array of strings (the status
judged by and where it came from, then the rule table and the phrase or code that decided).
The trail's wording is for people and may change; the other keys are stable.

provider is one of anthropic, bedrock, vertex-anthropic, openai, azure-openai, gemini,
vertex-gemini, openrouter, litellm, mistral, xai, groq, deepseek, ollama, vllm, llamacpp,
lmstudio; --provider accepts these and common aliases (claude, google, azure, aws, vertex_ai).")]
pub struct ClassifyArgs {
    /// HTTP status, when the error text does not carry it.
    #[arg(long = "status", value_parser = clap::value_parser!(u16).range(100..=599))]
    pub status: Option<u16>,
    /// Provider that returned the error (anthropic, openai, gemini, …); detected when absent.
    #[arg(long = "provider", value_parser = crate::provider::parse_flag)]
    pub provider: Option<String>,
    /// Print JSON instead of aligned lines.
    #[arg(long = "json")]
    pub json: bool,
    /// Also print the signals that decided: the status used and where it came from, and
    /// the rule table and phrase or code that matched.
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
            let bytes = std::fs::read(t).with_context(|| format!("reading {}", sanitize(t)))?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Some(t) if t != "-" => t.to_string(),
        _ => {
            let mut stdin = std::io::stdin();
            if args.text.is_none() && stdin.is_terminal() {
                bail!("no error given: pass it as an argument, or pipe it on stdin (`-`)");
            }
            let mut bytes = Vec::new();
            stdin.read_to_end(&mut bytes).context("reading the error from stdin")?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    if text.trim().is_empty() {
        bail!("the error text is empty");
    }
    let hint = Hint { status: args.status, provider: args.provider.clone() };
    let c = classify(&text, &hint);
    if args.json {
        let out = if args.explain {
            serde_json::to_string_pretty(&Explained { c: &c, why: &c.why })?
        } else {
            serde_json::to_string_pretty(&c)?
        };
        println!("{out}");
    } else {
        print!("{}", human(&c, args.explain, crate::report::term::current().width));
    }
    Ok(Exit::Healthy)
}

/// `--json --explain`: the classification's keys in their order, then `why`.
#[derive(serde::Serialize)]
struct Explained<'a> {
    #[serde(flatten)]
    c: &'a Classification,
    why: &'a [String],
}

/// Aligned `key  value` lines; absent values are left out, the message comes last.
/// On a terminal (`width`) long values wrap at spaces under the value column.
fn human(c: &Classification, explain: bool, width: Option<usize>) -> String {
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
        ("call ids", (!c.call_ids.is_empty()).then(|| c.call_ids.join(", "))),
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
        let c = classify("Could not process image \u{1b}[31mred", &Hint { status: Some(400), provider: None });
        let out = human(&c, false, None);
        assert!(out.starts_with("class      media_rejected\n"), "{out}");
        assert!(out.contains("retryable  no\n"));
        assert!(!out.contains('\u{1b}'));
        assert!(out.contains("\\u{1b}[31m"));
        assert!(!out.contains("why"));
        let out = human(&c, true, None);
        assert!(
            out.contains("why        deterministic")
                || out.contains("why        media phrase \"could not process image\""),
            "{out}"
        );
    }
}
