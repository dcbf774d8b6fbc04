//! `session-doctor sessions`: the recent sessions in each agent's standard
//! location, newest first, each judged as `diagnose` and `scan` judge it.

use std::io::Write as _;

use anyhow::bail;
use clap::Args;

use crate::discover::{self, AGENTS, Env};
use crate::exit::Exit;
use crate::reader::ReadOptions;
use crate::report::sessions::{Health, Listed};
use crate::report::{self, ScanReport};

/// List recent sessions of Claude Code, Codex, pi, Gemini CLI, mux, opencode, Kilo Code CLI, Copilot CLI, Cline, Qwen Code and Kiro CLI.
///
/// Looks where each agent keeps its sessions (honouring CLAUDE_CONFIG_DIR,
/// CODEX_HOME, PI_CODING_AGENT_DIR, GEMINI_CLI_HOME, MUX_ROOT, XDG_DATA_HOME,
/// COPILOT_HOME, CLINE_SESSION_DATA_DIR, CLINE_DATA_DIR or CLINE_DIR, and
/// QWEN_RUNTIME_DIR or QWEN_HOME),
/// newest first by modification time, and judges each listed session as
/// `diagnose` and `scan` do: stuck (a failure every retry meets again, as
/// `diagnose` says), problems (not stuck, but an invalid attachment, a provider
/// limit broken or a line skipped), ok, or unreadable. opencode and Kilo Code
/// CLI (agent `kilo`) keep their sessions in one database each, listed whole
/// and not judged here ("not read"): `scan` and `diagnose` read it, its
/// newest session or the one --session names.
#[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor sessions
  session-doctor sessions --agent codex --limit 3
  session-doctor sessions --json --limit 50

Exit status:
  0  the sessions were listed (even with problems, or none)
  2  usage error")]
pub struct SessionsArgs {
    /// Only this agent's sessions (claude and gemini are short for claude-code and gemini-cli).
    #[arg(long = "agent", value_name = "AGENT", value_parser = super::values::agent())]
    pub agent: Option<&'static str>,
    /// How many sessions to list (the newest); at least 1.
    #[arg(long = "limit", short = 'n', value_name = "N", default_value_t = 10, value_parser = at_least_one)]
    pub limit: usize,
    /// Print JSON: an array of {"agent","format","path","bytes","modified","health"}.
    #[arg(long = "json")]
    pub json: bool,
}

/// `--limit 0` would list nothing and then say no session was found.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 lists no session: give 1 or more".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

pub fn run(args: &SessionsArgs) -> anyhow::Result<Exit> {
    let Some(env) = Env::from_process() else { bail!("no home directory: cannot tell where agents keep sessions") };
    let term = report::term::current();
    let found = discover::find(&env, args.agent);
    let listed: Vec<Listed> =
        found.into_iter().take(args.limit).map(|f| Listed { health: health(&f), found: f }).collect();
    let mut out = crate::report::stdout::stdout();
    if args.json {
        crate::report::printer::Json.print_each(&mut out, &listed.iter().map(Listed::json).collect::<Vec<_>>())?;
    } else if listed.is_empty() {
        let agents: Vec<&str> = args.agent.map_or(AGENTS.to_vec(), |a| vec![a]);
        writeln!(out, "No sessions found. Looked in:")?;
        for root in agents.iter().flat_map(|a| discover::roots(&env, a)) {
            writeln!(out, "  {}", crate::text::sanitize(&report::sessions::tilde(&root, &env.home)))?;
        }
    } else {
        report::sessions::write(&mut out, &listed, &env.home, &term)?;
    }
    out.flush()?;
    Ok(Exit::Healthy)
}

/// `diagnose`'s verdict of one session, then `scan`'s: from one read.
fn health(f: &discover::Found) -> Health {
    let Some(format) = f.format else { return Health::NotRead };
    let opts = ReadOptions { format: Some(format), ..ReadOptions::default() };
    let Ok((session, plan)) = report::progress::read(&f.path, &opts) else { return Health::Unreadable };
    let asked = crate::diagnose::Asked::default();
    let diagnosed = crate::diagnose::diagnose_read(
        &f.path,
        session,
        &plan,
        &asked,
        &crate::diagnose::DiagnoseOptions::default(),
        &crate::diagnose::Deepened::default(),
    );
    match diagnosed {
        Ok((d, _)) if d.stuck => Health::Stuck,
        Ok((_, session)) => {
            if ScanReport::new(session, &plan).has_problems() {
                Health::Problems
            } else {
                Health::Ok
            }
        }
        Err(_) => Health::Unreadable,
    }
}
