//! `session-doctor schema <COMMAND>`: the JSON Schema of a command's `--json`
//! output, on stdout.

use clap::Args;

use crate::exit::Exit;
use crate::report::schema;

/// Print the JSON Schema (draft 2020-12) of a command's `--json` output.
///
/// Every `--json` output carries `schema_version`; it is raised only when a
/// field is renamed, removed or changes type (with a major version of
/// session-doctor). New fields may appear within a version.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor schema check > check.schema.json
  session-doctor schema scan | jq '.anyOf[0].required'

Exit status:
  0  the schema was printed
  2  usage error (a command without --json)")]
pub struct SchemaArgs {
    /// The command: scan, diagnose, exclude, preview, repair, check, classify, sessions or guard.
    #[arg(value_name = "COMMAND", value_parser = clap::builder::PossibleValuesParser::new(schema::COMMANDS))]
    pub command: String,
}

pub fn run(args: &SchemaArgs) -> anyhow::Result<Exit> {
    let Some(s) = schema::of(&args.command) else { anyhow::bail!("{} has no --json output", args.command) };
    let mut out = crate::report::stdout::stdout();
    serde_json::to_writer_pretty(&mut out, &s)?;
    std::io::Write::write_all(&mut out, b"\n")?;
    std::io::Write::flush(&mut out)?;
    Ok(Exit::Healthy)
}
