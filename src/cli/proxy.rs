//! `session-doctor proxy`: the loopback pass-through every agent can be pointed at.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::Args;

use crate::exit::Exit;
use crate::proxy::{self, journal, server};
use crate::text::sanitize;

/// Sit between an agent and its provider, on 127.0.0.1, and keep what would
/// get the session stuck out of every request.
///
/// Each request of the four dialects (Anthropic Messages, OpenAI Responses
/// and Chat Completions, Gemini generateContent) has its attachments checked:
/// a broken one goes as the note repair writes, an oversized image is fitted,
/// images past the provider's count become the cap note, under store:false
/// an OpenAI reasoning item the API cannot resolve is dropped, and in a
/// request to a Gemini 3 model a function call of the current turn with no
/// thought signature gets Google's placeholder (skip_thought_signature_validator).
/// On a deterministic rejection that names an attachment, or Gemini's
/// "missing a thought_signature", the proxy cures it and sends the request
/// once more, never twice. A request with nothing to
/// change goes on byte for byte, and every answer (SSE streams included)
/// comes back as the provider sent it. Headers go on untouched; credentials
/// are never logged or written. Each request changed or retried is a line of
/// the journal ($XDG_STATE_HOME/session-doctor/proxy/journal.jsonl, else
/// ~/.local/state/…): --journal prints it. It binds 127.0.0.1 only; there is
/// no option for another address. The first line printed is
/// `listening on http://127.0.0.1:PORT`.
#[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor proxy
  session-doctor proxy --print-env claude-code
  ANTHROPIC_BASE_URL=http://127.0.0.1:8765 claude
  session-doctor proxy --port 0 --upstream http://127.0.0.1:9000
  session-doctor proxy --journal

Exit status:
  0  --print-env or --journal printed
  2  usage error, or the port could not be had")]
pub struct ProxyArgs {
    /// The port on 127.0.0.1 to listen on; 0: any free port (the first line printed names it).
    #[arg(long = "port", value_name = "N", default_value_t = 8765)]
    pub port: u16,
    /// Send every request here (http:// or https://, a path is a prefix);
    /// default: each dialect's own provider (api.anthropic.com, api.openai.com,
    /// generativelanguage.googleapis.com).
    #[arg(long = "upstream", value_name = "URL")]
    pub upstream: Option<String>,
    /// Keep at most N images in one request (default: the provider's own limit).
    #[arg(long = "max-images", value_name = "N", allow_hyphen_values = true, value_parser = super::values::image_count::<usize>)]
    pub max_images: Option<usize>,
    /// Override provider limits from a JSON file, as scan's --rules does.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Print what points AGENT at the proxy on --port, and exit.
    #[arg(long = "print-env", value_name = "AGENT", value_parser = clap::builder::PossibleValuesParser::new(proxy::AGENTS))]
    pub print_env: Option<String>,
    /// Print the journal (what the proxy changed, per request), and exit.
    #[arg(long = "journal", conflicts_with = "print_env")]
    pub journal: bool,
    /// With --journal: the lines as JSON, as written.
    #[arg(long = "json", requires = "journal")]
    pub json: bool,
}

pub fn run(args: &ProxyArgs) -> anyhow::Result<Exit> {
    let mut out = crate::report::stdout::stdout();
    if let Some(agent) = args.print_env.as_deref() {
        let port = if args.port == 0 { 8765 } else { args.port };
        let text =
            proxy::print_env(agent, &format!("http://127.0.0.1:{port}")).context("an agent --print-env knows")?;
        out.write_all(text.as_bytes())?;
        out.flush()?;
        return Ok(Exit::Healthy);
    }
    if args.journal {
        return show_journal(args.json);
    }
    let upstream = match args.upstream.as_deref() {
        Some(u) => Some(upstream(u)?),
        None => None,
    };
    let opts = server::Options {
        port: args.port,
        upstream,
        rules_file: args.rules.clone(),
        max_images: args.max_images,
        journal: journal::default_path(),
    };
    server::run(opts, |port| {
        let mut out = crate::report::stdout::stdout();
        writeln!(out, "listening on http://127.0.0.1:{port}")?;
        out.flush()?;
        Ok(())
    })?;
    Ok(Exit::Healthy)
}

fn upstream(u: &str) -> anyhow::Result<hyper::Uri> {
    let uri: hyper::Uri = u.parse().with_context(|| format!("--upstream {} is not a URL", sanitize(u)))?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.host().is_some() => Ok(uri),
        _ => bail!("--upstream {} is not an http:// or https:// URL with a host", sanitize(u)),
    }
}

fn show_journal(json: bool) -> anyhow::Result<Exit> {
    let path = journal::default_path();
    let lines = journal::read(&path)?;
    let mut out = crate::report::stdout::stdout();
    if lines.is_empty() && !json {
        writeln!(out, "no request changed yet ({})", sanitize(&path.display().to_string()))?;
    }
    for l in &lines {
        if json {
            writeln!(out, "{l}")?;
            continue;
        }
        let s = |k: &str| l.get(k).and_then(serde_json::Value::as_str).unwrap_or_default();
        let n = |k: &str| l.get(k).and_then(serde_json::Value::as_u64);
        let retried = n("first_status").map(|f| format!(" (retried after a {f})")).unwrap_or_default();
        let status = n("status").unwrap_or_default();
        writeln!(
            out,
            "{} {} {} -> {status}{retried}",
            n("at").unwrap_or_default(),
            sanitize(s("method")),
            sanitize(s("path"))
        )?;
        for c in l.get("changes").and_then(serde_json::Value::as_array).into_iter().flatten() {
            let f = |k: &str| sanitize(c.get(k).and_then(serde_json::Value::as_str).unwrap_or_default());
            writeln!(out, "  {} {}: {}", f("what"), f("block"), f("why"))?;
        }
    }
    out.flush()?;
    Ok(Exit::Healthy)
}
