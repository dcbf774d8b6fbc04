//! `session-doctor classify`: one provider error in, one class out.

use std::io::Read as _;

use anyhow::Context as _;
use clap::Args;

use crate::classify::{Hint, classify};
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// HTTP status, when the error text does not carry it.
    #[arg(long = "status")]
    pub status: Option<u16>,
    /// Provider that returned the error (anthropic, openai, gemini, …).
    #[arg(long = "provider")]
    pub provider: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long = "json")]
    pub json: bool,
    /// The error: a JSON body or the text an agent recorded; `-` or nothing reads stdin.
    pub text: Option<String>,
}

pub fn run(args: &ClassifyArgs) -> anyhow::Result<Exit> {
    let text = match args.text.as_deref() {
        Some(t) if t != "-" => t.to_string(),
        _ => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("reading the error from stdin")?;
            s
        }
    };
    let hint = Hint {
        status: args.status,
        provider: args.provider.clone(),
    };
    let c = classify(&text, &hint);
    println!("{}", serde_json::to_string_pretty(&c)?);
    Ok(Exit::Healthy)
}
