//! `session-doctor guard`: the check an agent's hook runs before media enters
//! its history, and `guard install`, which wires that hook in.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

use crate::exit::Exit;
use crate::guard::{self, Decision, install};
use crate::media::rules::Rules;
use crate::text::sanitize;

/// Judge files before an agent reads them into its history.
///
/// A file that does not decode is denied with a reason the model sees; an
/// image over the provider's limits is fitted (downscaled, re-encoded) into a
/// cache folder and handed over instead; anything else passes untouched. Given
/// FILEs, it prints one verdict per file. With --hook claude-code (gemini-cli,
/// cline) it reads that agent's hook event on stdin and answers in its hook
/// protocol (nothing printed: the call goes on as usual). `guard install`
/// adds that hook to the agent's settings, `guard uninstall` takes it out.
#[allow(clippy::doc_markdown, reason = "`--help` text, printed as written (and the man page made from it)")]
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "\
Examples:
  session-doctor guard screenshot.png
  session-doctor guard --provider openai --json shot.png report.pdf
  session-doctor guard install claude-code --dry-run
  session-doctor guard install claude-code
  session-doctor guard install gemini-cli
  session-doctor guard uninstall gemini-cli

Exit status:
  0  every file passes or was fitted; with --hook, always (a guard never stops the agent by failing)
  1  a file would be denied: the provider rejects it
  2  usage error, or a file could not be read

Fitted copies are kept in $XDG_CACHE_HOME/session-doctor/fitted (else ~/.cache/…), named by the
original's sha256."
)]
pub struct GuardArgs {
    #[command(subcommand)]
    pub action: Option<GuardAction>,
    /// Files to judge.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Answer an agent's hook event on stdin, in that agent's protocol.
    #[arg(long = "hook", value_name = "AGENT")]
    pub hook: Option<HookAgent>,
    /// Judge by this provider's limits (default: anthropic, Claude Code's own).
    #[arg(long = "provider", value_name = "PROVIDER", default_value = "anthropic", value_parser = super::values::provider())]
    pub provider: String,
    /// Print JSON: one object per file, {"file","decision","reason","fitted"}.
    #[arg(long = "json")]
    pub json: bool,
    /// Judge each FILE only if AGENT's read tool would send it as an image or
    /// a PDF (what it reads as text, an SVG for Claude Code, passes): pi's and
    /// opencode's guards name themselves so.
    #[arg(long = "for", value_name = "AGENT", conflicts_with = "base64")]
    pub reader: Option<HookAgent>,
    /// Each FILE holds a payload as base64 text, as an agent's tool result
    /// carries it (pi's guard hands it over as it is): decoded strictly, and
    /// denied when it is not base64.
    #[arg(long = "base64")]
    pub base64: bool,
}

#[derive(Debug, Subcommand)]
pub enum GuardAction {
    /// Wire the guard into an agent: Claude Code's and Gemini CLI's settings, Cline's hooks, pi's extensions, opencode's plugins.
    Install(InstallArgs),
    /// Take the guard's hook out of an agent's settings (Claude Code, Gemini CLI, Cline).
    Uninstall(UninstallArgs),
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor guard uninstall gemini-cli --dry-run
  session-doctor guard uninstall claude-code

Exit status:
  0  removed, or not installed (nothing changed)
  2  the settings file is not valid JSON, or could not be written

Only the guard's own entries go (those that run `guard --hook AGENT`); the rest of the file stays
as written. The old file is kept as FILE.session-doctor-backup.")]
pub struct UninstallArgs {
    /// The agent to unguard.
    #[arg(value_name = "AGENT")]
    pub agent: HookAgent,
    /// Show the change and write nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// The settings file to change (default: the agent's user settings, as for install).
    #[arg(long = "settings", value_name = "FILE")]
    pub settings: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  session-doctor guard install claude-code --dry-run
  session-doctor guard install claude-code --settings .claude/settings.local.json
  session-doctor guard install pi
  session-doctor guard install opencode
  session-doctor guard install gemini-cli

Exit status:
  0  installed, or already installed (nothing changed)
  2  the settings file is not valid JSON, or could not be written

Claude Code gets a PreToolUse hook that runs `session-doctor guard --hook claude-code` before
every Read (merged into its settings); Gemini CLI a BeforeTool hook that runs
`session-doctor guard --hook gemini-cli --provider gemini` before every read_file (merged into
~/.gemini/settings.json); Cline a PreToolUse hook (~/.cline/hooks/PreToolUse) that runs
`session-doctor guard --hook cline` before every read_files. pi gets an extension and opencode a plugin (from the
repository's integrations/) that run `session-doctor guard` before every read and, for pi, on
images in any tool's result. A file that was there before is kept as FILE.session-doctor-backup.")]
pub struct InstallArgs {
    /// The agent to guard.
    #[arg(value_name = "AGENT")]
    pub agent: HookAgent,
    /// Show the change and write nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// The file to change (default: Claude Code's ~/.claude/settings.json,
    /// Gemini CLI's ~/.gemini/settings.json, Cline's ~/.cline/hooks/PreToolUse, pi's
    /// ~/.pi/agent/extensions/session-doctor-guard.ts, opencode's
    /// ~/.config/opencode/plugins/session-doctor-guard.js).
    #[arg(long = "settings", value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// The provider whose limits the hook judges by (default: anthropic; for Gemini CLI, gemini).
    #[arg(long = "provider", value_name = "PROVIDER", value_parser = super::values::provider())]
    pub provider: Option<String>,
}

/// The agents whose hook protocol the guard speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HookAgent {
    #[value(name = "claude-code")]
    ClaudeCode,
    Pi,
    Opencode,
    #[value(name = "gemini-cli")]
    GeminiCli,
    Cline,
}

impl HookAgent {
    /// The rule by which this agent's read tool tells media from text.
    fn reader(self) -> guard::reader::Reader {
        use guard::reader::Reader;
        match self {
            HookAgent::ClaudeCode => Reader::ClaudeCode,
            HookAgent::Pi => Reader::Pi,
            HookAgent::Opencode => Reader::Opencode,
            HookAgent::GeminiCli => Reader::GeminiCli,
            HookAgent::Cline => Reader::Cline,
        }
    }
}

/// Answers one hook event of `agent` (Claude Code's or Gemini CLI's) on stdin.
/// It fails open, as `--help` promises: an event it cannot read (not UTF-8,
/// not JSON) or rules it cannot load are said on stderr and the tool call goes
/// on unguarded; exit 2 would block the agent's Read.
fn answer_hook(agent: HookAgent, provider: &str) {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().take(1 << 20).read_to_end(&mut input) {
        eprintln!("session-doctor guard: cannot read the hook event ({e}); the tool call goes on unguarded");
        return;
    }
    let Ok(event) = serde_json::from_slice::<Value>(&input) else {
        eprintln!("session-doctor guard: the hook event on stdin is not JSON; the tool call goes on unguarded");
        return;
    };
    let rules = match rules_for(provider) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "session-doctor guard: {}; the tool call goes on unguarded",
                crate::text::sanitize(&format!("{e:#}"))
            );
            return;
        }
    };
    let answer = match agent {
        HookAgent::GeminiCli => guard::gemini_cli::answer(&event, &rules, &guard::cache_dir()),
        HookAgent::Cline => guard::cline::answer(&event, &rules, &guard::cache_dir()),
        _ => guard::claude_code::answer(&event, &rules, &guard::cache_dir()),
    };
    if let Some(answer) = answer {
        println!("{answer}");
    }
}

pub fn run(args: &GuardArgs) -> anyhow::Result<Exit> {
    match &args.action {
        Some(GuardAction::Install(i)) => return run_install(i),
        Some(GuardAction::Uninstall(u)) => return run_uninstall(u),
        None => {}
    }
    if let Some(agent @ (HookAgent::ClaudeCode | HookAgent::GeminiCli | HookAgent::Cline)) = args.hook {
        answer_hook(agent, &args.provider);
        return Ok(Exit::Healthy);
    }
    let rules = rules_for(&args.provider)?;
    let cache = guard::cache_dir();
    if args.files.is_empty() {
        bail!("nothing to judge: name FILEs, or use --hook AGENT (see --help)");
    }
    let mut exit = Exit::Healthy;
    let mut rows = Vec::new();
    for file in &args.files {
        let read_as_text = args.reader.is_some_and(|a| !a.reader().sends_as_media(file));
        let decision = if read_as_text {
            Decision::NotMedia
        } else if args.base64 {
            guard::judge_base64_file(file, &rules, &cache)?
        } else {
            guard::judge_file(file, &rules, &cache)?
        };
        let name = file.display().to_string();
        let (word, reason, fitted) = match &decision {
            Decision::NotMedia if read_as_text => {
                let agent = args.reader.and_then(|a| a.to_possible_value()).map(|v| v.get_name().to_string());
                ("pass", format!("{} reads it as text, not as an image or a PDF", agent.unwrap_or_default()), None)
            }
            Decision::NotMedia => ("pass", "not an image or PDF".to_string(), None),
            Decision::Pass => ("pass", format!("valid, within {}'s limits", rules.provider), None),
            Decision::Fitted { path, note } => ("fitted", note.clone(), Some(path.display().to_string())),
            Decision::Deny { reason } => {
                exit = Exit::Problems;
                ("deny", reason.clone(), None)
            }
        };
        if args.json {
            rows.push(json!({"file": name, "decision": word, "reason": reason, "fitted": fitted}));
        } else {
            let to = fitted.map(|f| format!(" → {}", sanitize(&f))).unwrap_or_default();
            println!("{word:<6}  {}{to}  {}", sanitize(&name), sanitize(&reason));
        }
    }
    if args.json {
        // A file's name is untrusted: on a terminal its controls go out escaped.
        let mut rows = Value::Array(rows);
        crate::report::printer::json::version_value(&mut rows);
        writeln!(crate::report::stdout::stdout(), "{}", serde_json::to_string_pretty(&rows)?)?;
    }
    Ok(exit)
}

fn run_install(args: &InstallArgs) -> anyhow::Result<Exit> {
    let default = if args.agent == HookAgent::GeminiCli { "gemini" } else { "anthropic" };
    let provider = args.provider.as_deref().unwrap_or(default);
    rules_for(provider)?;
    let exe = std::env::current_exe().context("finding session-doctor's own path for the hook command")?;
    let plan = match args.agent {
        HookAgent::ClaudeCode => {
            let file = args.settings.clone().map_or_else(install::claude_code_settings, Ok)?;
            install::plan_claude_code(&file, &install::claude_code_entry(&exe, args.provider.as_deref()))?
        }
        HookAgent::Pi => {
            let file = args.settings.clone().map_or_else(install::pi_extension, Ok)?;
            install::plan_file(&file, install::PI_EXTENSION, &exe, provider)?
        }
        HookAgent::Opencode => {
            let file = args.settings.clone().map_or_else(install::opencode_plugin, Ok)?;
            install::plan_file(&file, install::OPENCODE_PLUGIN, &exe, provider)?
        }
        HookAgent::GeminiCli => {
            let file = args.settings.clone().map_or_else(install::gemini_cli_settings, Ok)?;
            install::plan_gemini_cli(&file, &install::gemini_cli_entry(&exe, provider))?
        }
        HookAgent::Cline => {
            let file = args.settings.clone().map_or_else(install::cline_hook, Ok)?;
            let plan = install::plan_cline(&file, &exe, provider)?;
            if plan.already {
                println!("the guard is already installed in {}; nothing to change", crate::text::sanitize_path(&file));
                return Ok(Exit::Healthy);
            }
            let exit = write_plan(&plan, args.dry_run)?;
            if !args.dry_run {
                // Cline runs the hook as a program.
                install::make_executable(&file)?;
            }
            return Ok(exit);
        }
    };
    if plan.already {
        let shown = crate::text::sanitize_path(&plan.file);
        println!("the guard is already installed in {shown}; nothing to change");
        return Ok(Exit::Healthy);
    }
    write_plan(&plan, args.dry_run)
}

fn run_uninstall(args: &UninstallArgs) -> anyhow::Result<Exit> {
    let (file, event, mark) = match args.agent {
        HookAgent::ClaudeCode => {
            (args.settings.clone().map_or_else(install::claude_code_settings, Ok)?, "PreToolUse", install::MARK)
        }
        HookAgent::GeminiCli => {
            (args.settings.clone().map_or_else(install::gemini_cli_settings, Ok)?, "BeforeTool", install::GEMINI_MARK)
        }
        HookAgent::Cline => {
            let file = args.settings.clone().map_or_else(install::cline_hook, Ok)?;
            let shown = crate::text::sanitize_path(&file);
            if !install::remove_own_file(&file, install::CLINE_MARK, args.dry_run)? {
                println!("the guard is not installed in {shown}; nothing to change");
            } else if args.dry_run {
                println!("{shown}: removes the guard's hook\n(--dry-run: nothing written)");
            } else {
                eprintln!("kept the old file as {shown}.session-doctor-backup");
                eprintln!("removed {shown}");
            }
            return Ok(Exit::Healthy);
        }
        HookAgent::Pi | HookAgent::Opencode => {
            let file = match args.settings.clone() {
                Some(f) => f,
                None if args.agent == HookAgent::Pi => install::pi_extension()?,
                None => install::opencode_plugin()?,
            };
            bail!(
                "the guard for this agent is a file of its own: remove {} to take it out",
                crate::text::sanitize_path(&file)
            );
        }
    };
    let plan = guard::uninstall::plan_unhook(&file, event, mark)?;
    if plan.already {
        println!("the guard is not installed in {}; nothing to change", crate::text::sanitize_path(&plan.file));
        return Ok(Exit::Healthy);
    }
    write_plan(&plan, args.dry_run)
}

/// Shows a plan and, unless `dry_run`, writes it (the backup first).
fn write_plan(plan: &install::Plan, dry_run: bool) -> anyhow::Result<Exit> {
    let shown = crate::text::sanitize_path(&plan.file);
    println!("{shown}: {}", sanitize(&plan.summary));
    if dry_run {
        println!("(--dry-run: nothing written)");
        return Ok(Exit::Healthy);
    }
    install::apply(plan)?;
    if let Some(b) = &plan.backup {
        eprintln!("kept the old file as {}", crate::text::sanitize_path(b));
    }
    eprintln!("wrote {shown}");
    Ok(Exit::Healthy)
}

fn rules_for(provider: &str) -> anyhow::Result<Rules> {
    let name = crate::provider::canonical(provider).unwrap_or(provider);
    Rules::builtin(name)
        .with_context(|| format!("unknown provider {}: see `session-doctor scan --help`", sanitize(provider)))
}
