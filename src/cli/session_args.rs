//! Arguments every session-reading command shares.

use std::path::PathBuf;

use clap::Args;

use crate::formats::Format;
use crate::media::Depth;
use crate::reader::Options;

/// `--format`: `auto` (`None`) or one format.
#[derive(Clone, Copy, Debug)]
pub struct FormatChoice(pub Option<Format>);

fn parse_format(s: &str) -> Result<FormatChoice, String> {
    if s == "auto" {
        return Ok(FormatChoice(None));
    }
    Format::from_name(s).map(|f| FormatChoice(Some(f))).ok_or_else(|| {
        format!("unknown format `{s}`; expected auto or one of: {}", Format::ALL.map(Format::name).join(", "))
    })
}

fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1 (leave -j out for one thread per core)".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Debug, Args, Clone)]
pub struct ReadArgs {
    /// Session format: auto (detect from the content) or claude-code, codex, pi,
    /// gemini-cli, mux, opencode, openai-chat, openai-responses, anthropic, gemini.
    #[arg(long = "format", value_name = "FORMAT", default_value = "auto", value_parser = parse_format)]
    pub format: FormatChoice,

    /// Judge media by this provider's rules (anthropic, bedrock, vertex-anthropic,
    /// openai, gemini, mistral, xai, groq). Default: the session's own provider.
    #[arg(long = "provider", value_name = "PROVIDER")]
    pub provider: Option<String>,

    /// Decode every payload fully (PNG pixels, JPEG scans, every PDF object),
    /// not just its structure. Slower; catches corrupt compressed data.
    #[arg(long = "deep")]
    pub deep: bool,

    /// Judge media for this model: its provider's rules (claude-* → anthropic,
    /// gpt-*/o3 → openai, gemini-* → gemini, …). --provider wins over it.
    #[arg(long = "model", value_name = "MODEL")]
    pub model: Option<String>,

    /// A JSON file overriding fields of the provider's rules, e.g.
    /// {"max_image_bytes": 3932160, "max_images_per_request": 20}; null removes a limit.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Option<PathBuf>,

    /// Worker threads reading the file, at least 1 (default: one per core).
    #[arg(long = "threads", short = 'j', value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
}

impl ReadArgs {
    pub fn options(&self) -> Options {
        Options {
            format: self.format.0,
            depth: if self.deep { Depth::Deep } else { Depth::Structural },
            provider: self.provider.clone(),
            model: self.model.clone(),
            rules_file: self.rules.clone(),
            threads: self.threads.unwrap_or(0),
        }
    }
}

/// One or more session files.
#[derive(Debug, Args, Clone)]
pub struct Files {
    /// Session files (JSON Lines, or one JSON document); `-` reads one from stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}
