//! Where each agent keeps its sessions, and which are the most recent.
//!
//! Pure functions of a home directory and an environment ([`Env`]), so tests point
//! them at a fake home; [`Env::from_process`] is the real one. Nothing here reads a
//! session: `sessions` and `diagnose --latest` decide what to do with what is found.
//!
//! | agent | where (first match of the environment wins) |
//! | --- | --- |
//! | `claude-code` | `$CLAUDE_CONFIG_DIR` (a comma-separated list), else `~/.claude` and `~/.config/claude`: `projects/*/*.jsonl` |
//! | `codex` | `$CODEX_HOME`, else `~/.codex`: `sessions/YYYY/MM/DD/rollout-*.jsonl` (or `.jsonl.zst`, compressed; the plain one when both are there) |
//! | `pi` | `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`: `sessions/*/*.jsonl`; and `$PI_CODING_AGENT_SESSION_DIR/*.jsonl` (flat, every project's) |
//! | `gemini-cli` | `$GEMINI_CLI_HOME`, else `~`: `.gemini/tmp/*/chats/*.jsonl` and legacy `*.json` |
//! | `mux` | `$MUX_ROOT`, else `~/.mux` (and the older `~/.cmux`, the newer `~/.xum`): `sessions/*/chat.jsonl` |
//! | `opencode` | `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`: `opencode*.db`, legacy `storage/session/*/*.json` |
//! | `kilo` | `$XDG_DATA_HOME/kilo`, else `~/.local/share/kilo`: `kilo*.db` and `opencode*.db` (Kilo Code CLI, opencode's fork and format) |
//! | `copilot` | `$COPILOT_HOME`, else `~/.copilot`: `session-state/*/events.jsonl` |
//! | `qwen-code` | `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `~/.qwen`: `projects/*/chats/*.jsonl` |
//! | `cline` | `$CLINE_SESSION_DATA_DIR`, else `$CLINE_DATA_DIR/sessions`, else `$CLINE_DIR` (else `~/.cline`) `/data/sessions`: `*/*.messages.json` (Cline CLI 3) |
//! | `kiro` | `$KIRO_HOME`, else `~/.kiro`: `sessions/cli/<id>.jsonl` beside its `<id>.json` (Kiro CLI; the IDE's `sessions/<hash>/<id>/messages.jsonl` is not listed) |
//!
//! Sources: `../shared/research/formats.md`; Gemini CLI `packages/core/src/utils/paths.ts`
//! (`GEMINI_CLI_HOME`), mux `src/common/constants/paths.ts` (`MUX_ROOT`), pi
//! `getAgentDir` (`PI_CODING_AGENT_DIR`) and `ENV_SESSION_DIR` (`PI_CODING_AGENT_SESSION_DIR`,
//! pi 0.71.0 on, `@mariozechner` and `@earendil-works` alike: the folder `--session-dir`
//! names, where pi writes `<ts>_<id>.jsonl` without a per-project folder); Qwen Code
//! 0.24.4's `Storage.getRuntimeBaseDir` (`QWEN_RUNTIME_DIR`, else `getGlobalQwenDir`:
//! `QWEN_HOME`, else `~/.qwen`) and `getProjectDir` (`projects/<sanitized cwd>`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::model::Format;

/// The agents whose sessions can be found, by their format name.
pub const AGENTS: [&str; 11] =
    ["claude-code", "codex", "pi", "gemini-cli", "mux", "opencode", "kilo", "copilot", "cline", "kiro", "qwen-code"];

/// A home directory and the environment variables that move an agent's store.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub home: PathBuf,
    pub vars: BTreeMap<String, OsString>,
}

/// The environment variables that move an agent's store (see the table above).
pub const VARS: [&str; 14] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "GEMINI_CLI_HOME",
    "MUX_ROOT",
    "XDG_DATA_HOME",
    "COPILOT_HOME",
    "CLINE_SESSION_DATA_DIR",
    "CLINE_DATA_DIR",
    "CLINE_DIR",
    "KIRO_HOME",
    "QWEN_RUNTIME_DIR",
    "QWEN_HOME",
];

impl Env {
    /// The process's own home and environment; `None` without a home directory.
    pub fn from_process() -> Option<Env> {
        let home = std::env::home_dir()?;
        let vars = VARS.into_iter().filter_map(|k| std::env::var_os(k).map(|v| (k.to_string(), v))).collect();
        Some(Env { home, vars })
    }

    /// A set, non-empty variable.
    fn var(&self, key: &str) -> Option<&OsString> {
        self.vars.get(key).filter(|v| !v.is_empty())
    }

    /// `$key` as a directory (`~/` expanded), else `~/<default>`.
    fn dir(&self, key: &str, default: &str) -> PathBuf {
        self.var(key).map_or_else(|| self.home.join(default), |v| self.expand(Path::new(v)))
    }

    fn expand(&self, p: &Path) -> PathBuf {
        match p.strip_prefix("~") {
            Ok(rest) => self.home.join(rest),
            Err(_) => p.to_path_buf(),
        }
    }
}

/// One session file (or store) found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The agent's format name (one of [`AGENTS`]).
    pub agent: &'static str,
    pub path: PathBuf,
    pub bytes: u64,
    pub modified: SystemTime,
    /// The format `scan` reads it as; `None` for a store it cannot read (opencode's
    /// sqlite database and legacy session folders).
    pub format: Option<Format>,
}

/// An `--agent` value, checked at parse time.
pub fn parse_agent(s: &str) -> Result<&'static str, String> {
    agent_name(s).ok_or_else(|| format!("unknown agent `{s}`; expected one of: {}", AGENTS.join(", ")))
}

/// Resolves an agent name (`claude` and `gemini` are accepted for the longer names).
pub fn agent_name(name: &str) -> Option<&'static str> {
    let name = match name {
        "claude" => "claude-code",
        "gemini" => "gemini-cli",
        other => other,
    };
    AGENTS.into_iter().find(|a| *a == name)
}

/// Kilo Code CLI: an agent of its own, in opencode's format.
const KILO: &str = crate::model::Fork::Kilo.command();

/// The directories searched for `agent`, whether they exist or not (for messages).
pub fn roots(env: &Env, agent: &str) -> Vec<PathBuf> {
    if agent == KILO {
        // `Global.Path.data` of Kilo Code CLI 7.7.7: xdg-basedir's data home, then `kilo`.
        return vec![env.dir("XDG_DATA_HOME", ".local/share").join("kilo")];
    }
    let Some(format) = Format::from_name(agent) else { return Vec::new() };
    match format {
        Format::ClaudeCode => match env.var("CLAUDE_CONFIG_DIR") {
            Some(list) => list
                .to_string_lossy()
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| env.expand(Path::new(d)).join("projects"))
                .collect(),
            None => vec![env.home.join(".claude/projects"), env.home.join(".config/claude/projects")],
        },
        Format::Codex => vec![env.dir("CODEX_HOME", ".codex").join("sessions")],
        Format::Pi => {
            let mut out = vec![env.dir("PI_CODING_AGENT_DIR", ".pi/agent").join("sessions")];
            out.extend(env.var("PI_CODING_AGENT_SESSION_DIR").map(|d| env.expand(Path::new(d))));
            out
        }
        Format::GeminiCli => vec![
            env.var("GEMINI_CLI_HOME")
                .map_or_else(|| env.home.clone(), |h| env.expand(Path::new(h)))
                .join(".gemini/tmp"),
        ],
        Format::Mux => match env.var("MUX_ROOT") {
            Some(root) => vec![env.expand(Path::new(root)).join("sessions")],
            None => [".mux", ".cmux", ".xum"].iter().map(|d| env.home.join(d).join("sessions")).collect(),
        },
        Format::Opencode => vec![env.dir("XDG_DATA_HOME", ".local/share").join("opencode")],
        Format::Copilot => vec![env.dir("COPILOT_HOME", ".copilot").join("session-state")],
        // Cline CLI 3 (`@cline/core`'s own lookup order).
        Format::Cline => vec![match (env.var("CLINE_SESSION_DATA_DIR"), env.var("CLINE_DATA_DIR")) {
            (Some(d), _) => env.expand(Path::new(d)),
            (None, Some(d)) => env.expand(Path::new(d)).join("sessions"),
            (None, None) => env.dir("CLINE_DIR", ".cline").join("data/sessions"),
        }],
        // Kiro CLI: `$KIRO_HOME` (else `~/.kiro`), `sessions/cli/`.
        Format::Kiro => vec![env.dir("KIRO_HOME", ".kiro").join("sessions/cli")],
        Format::QwenCode => vec![
            env.var("QWEN_RUNTIME_DIR")
                .or_else(|| env.var("QWEN_HOME"))
                .map_or_else(|| env.home.join(".qwen"), |d| env.expand(Path::new(d)))
                .join("projects"),
        ],
        // Logged requests have no store of their own.
        Format::OpenaiChat | Format::OpenaiResponses | Format::Anthropic | Format::Gemini => Vec::new(),
    }
}

/// Every session of `agent` (or of every agent), newest first.
pub fn find(env: &Env, agent: Option<&str>) -> Vec<Found> {
    let mut found = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for name in AGENTS.into_iter().filter(|a| agent.is_none_or(|want| agent_name(want) == Some(a))) {
        for root in roots(env, name) {
            for (path, format) in files(name, &root) {
                // ~/.cmux is often a symlink to ~/.mux: list each file once.
                let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
                if !seen.insert(key) {
                    continue;
                }
                let Ok(meta) = std::fs::metadata(&path) else { continue };
                let mut modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if format.is_none() {
                    // A sqlite store is written through its write-ahead log.
                    let wal = PathBuf::from(format!("{}-wal", path.display()));
                    if let Ok(t) = std::fs::metadata(wal).and_then(|m| m.modified()) {
                        modified = modified.max(t);
                    }
                }
                found.push(Found { agent: name, path, bytes: meta.len(), modified, format });
            }
        }
    }
    found.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.path.cmp(&b.path)));
    found
}

/// The newest session `scan` can read, of `agent` or of any agent, in `env`.
pub fn latest_in(env: &Env, agent: Option<&str>) -> Option<PathBuf> {
    find(env, agent).into_iter().find(|f| f.format.is_some()).map(|f| f.path)
}

/// The newest readable session of `agent` (or of any agent) under the user's home:
/// what `diagnose --latest` reads.
pub fn latest_session(agent: Option<&str>) -> Option<PathBuf> {
    latest_in(&Env::from_process()?, agent)
}

/// The session files of one agent under one root.
#[allow(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "each agent writes and lists its sessions by exactly these names: a `.JSONL` is not one it resumes"
)]
fn files(agent: &str, root: &Path) -> Vec<(PathBuf, Option<Format>)> {
    if agent == KILO {
        // kilo.db, kilo-<channel>.db, or the opencode-<channel>.db Kilo Code CLI 7.7.7 opens when
        // no kilo-<channel>.db is there (it keeps no session outside its database).
        let db = |n: &str| (n.starts_with("kilo") || n.starts_with("opencode")) && n.ends_with(".db");
        return plain_files(root, db).into_iter().map(|p| (p, None)).collect();
    }
    let Some(format) = Format::from_name(agent) else { return Vec::new() };
    let with = |paths: Vec<PathBuf>| paths.into_iter().map(|p| (p, Some(format))).collect::<Vec<_>>();
    match format {
        // <project>/<session>.jsonl; subagent transcripts sit one level deeper (or, from older
        // builds, beside the session as agent-<id>.jsonl) and are not sessions.
        Format::ClaudeCode => with(
            dirs(root)
                .iter()
                .flat_map(|d| plain_files(d, |n| n.ends_with(".jsonl")))
                .filter(|p| crate::formats::claude_code::subagent::of(p).is_none())
                .collect(),
        ),
        Format::Codex => {
            let days = dirs(root).iter().flat_map(|y| dirs(y)).flat_map(|m| dirs(&m)).collect::<Vec<_>>();
            with(
                days.iter()
                    .flat_map(|d| {
                        plain_files(d, |n| {
                            n.starts_with("rollout-") && (n.ends_with(".jsonl") || n.ends_with(".jsonl.zst"))
                        })
                    })
                    .filter(|p| !hidden_by_plain(p))
                    .collect(),
            )
        }
        // `--<cwd>--/<session>.jsonl`, or flat in a `--session-dir` (pi lists `*.jsonl` of the folder it writes to).
        Format::Pi => with(
            dirs(root)
                .iter()
                .chain([root.to_path_buf()].iter())
                .flat_map(|d| plain_files(d, |n| n.ends_with(".jsonl")))
                .collect(),
        ),
        Format::GeminiCli => with(
            dirs(root)
                .iter()
                .flat_map(|p| plain_files(&p.join("chats"), |n| n.ends_with(".jsonl") || n.ends_with(".json")))
                .collect(),
        ),
        Format::Mux => with(dirs(root).iter().map(|d| d.join("chat.jsonl")).filter(|p| p.is_file()).collect()),
        // <sanitized cwd>/chats/<session id>.jsonl.
        Format::QwenCode => {
            with(dirs(root).iter().flat_map(|p| plain_files(&p.join("chats"), |n| n.ends_with(".jsonl"))).collect())
        }
        // <session id>/events.jsonl; `.session-operation-locks` holds no events file.
        Format::Copilot => with(dirs(root).iter().map(|d| d.join("events.jsonl")).filter(|p| p.is_file()).collect()),
        // <id>/<id>.messages.json beside its manifest <id>.json.
        Format::Cline => {
            with(dirs(root).iter().flat_map(|d| plain_files(d, |n| n.ends_with(".messages.json"))).collect())
        }
        Format::Opencode => {
            let db = |n: &str| n.starts_with("opencode") && n.ends_with(".db");
            let mut out: Vec<_> = plain_files(root, db).into_iter().map(|p| (p, None)).collect();
            let legacy = root.join("storage/session");
            out.extend(dirs(&legacy).iter().flat_map(|d| plain_files(d, |n| n.ends_with(".json"))).map(|p| (p, None)));
            out
        }
        // <id>.jsonl beside its metadata <id>.json: a transcript without one
        // is no session Kiro CLI lists.
        Format::Kiro => with(
            plain_files(root, |n| n.ends_with(".jsonl"))
                .into_iter()
                .filter(|p| p.with_extension("json").is_file())
                .collect(),
        ),
        Format::OpenaiChat | Format::OpenaiResponses | Format::Anthropic | Format::Gemini => Vec::new(),
    }
}

/// A Codex `rollout-….jsonl.zst` whose plain `.jsonl` exists beside it: Codex
/// reads the plain one (the live one, which it appends to; the pair exists
/// while Codex turns one form into the other), so the session is listed once, by it.
fn hidden_by_plain(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    name.strip_suffix(".zst").is_some_and(|plain| path.with_file_name(plain).is_file())
}

/// The sub-directories of `dir` (none when it cannot be read).
fn dirs(dir: &Path) -> Vec<PathBuf> {
    entries(dir).into_iter().filter(|p| p.is_dir()).collect()
}

/// The files in `dir` whose name passes `keep`.
fn plain_files(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let named = |p: &PathBuf| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep);
    entries(dir).into_iter().filter(|p| named(p) && p.is_file()).collect()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names_and_aliases() {
        assert_eq!(agent_name("claude"), Some("claude-code"));
        assert_eq!(agent_name("codex"), Some("codex"));
        assert_eq!(agent_name("cursor"), None);
        for a in AGENTS.into_iter().filter(|a| !["opencode", "kilo"].contains(a)) {
            assert!(Format::from_name(a).is_some(), "{a} is a format");
        }
    }

    #[test]
    fn environment_moves_the_roots() {
        let mut env = Env { home: PathBuf::from("/h"), vars: BTreeMap::new() };
        assert_eq!(roots(&env, "codex"), [PathBuf::from("/h/.codex/sessions")]);
        env.vars.insert("CODEX_HOME".into(), "~/alt".into());
        env.vars.insert("CLAUDE_CONFIG_DIR".into(), "/a, /b".into());
        env.vars.insert("GEMINI_CLI_HOME".into(), "/g".into());
        assert_eq!(roots(&env, "codex"), [PathBuf::from("/h/alt/sessions")]);
        assert_eq!(roots(&env, "claude-code"), [PathBuf::from("/a/projects"), PathBuf::from("/b/projects")]);
        assert_eq!(roots(&env, "gemini-cli"), [PathBuf::from("/g/.gemini/tmp")]);
        env.vars.insert("PI_CODING_AGENT_SESSION_DIR".into(), "~/pi-sessions".into());
        assert_eq!(roots(&env, "pi"), [PathBuf::from("/h/.pi/agent/sessions"), PathBuf::from("/h/pi-sessions")]);
        assert_eq!(roots(&env, "copilot"), [PathBuf::from("/h/.copilot/session-state")]);
        env.vars.insert("COPILOT_HOME".into(), "/c".into());
        assert_eq!(roots(&env, "copilot"), [PathBuf::from("/c/session-state")]);
    }

    #[test]
    fn a_pi_session_dir_holds_its_sessions_flat() {
        let home = tempfile::tempdir().unwrap();
        let flat = home.path().join("pi-sessions");
        std::fs::create_dir_all(&flat).unwrap();
        let file = flat.join("2026-12-01T09-00-00-000Z_019a3c2e-7f10-7b2c-9d41-5e0c8a1f2b33.jsonl");
        std::fs::write(&file, b"{}\n").unwrap();
        let mut env = Env { home: home.path().to_path_buf(), vars: BTreeMap::new() };
        assert!(find(&env, Some("pi")).is_empty());
        env.vars.insert("PI_CODING_AGENT_SESSION_DIR".into(), flat.clone().into());
        let found: Vec<PathBuf> = find(&env, Some("pi")).into_iter().map(|f| f.path).collect();
        assert_eq!(found, [file]);
    }

    #[test]
    fn kilo_keeps_its_stores_in_its_own_data_folder() {
        let home = tempfile::tempdir().unwrap();
        let mut env = Env { home: home.path().to_path_buf(), vars: BTreeMap::new() };
        assert_eq!(roots(&env, "kilo"), [home.path().join(".local/share/kilo")]);
        let data = home.path().join("data");
        env.vars.insert("XDG_DATA_HOME".into(), data.clone().into());
        assert_eq!(roots(&env, "kilo"), [data.join("kilo")]);
        std::fs::create_dir_all(data.join("kilo")).unwrap();
        std::fs::create_dir_all(data.join("opencode")).unwrap();
        // Its channels' stores, and the opencode-<channel>.db it falls back to; never opencode's own folder.
        for name in
            ["kilo/kilo.db", "kilo/kilo-beta.db", "kilo/opencode-dev.db", "kilo/kilo.db-wal", "opencode/opencode.db"]
        {
            std::fs::write(data.join(name), b"SQLite format 3\0").unwrap();
        }
        let mut found: Vec<PathBuf> = find(&env, Some("kilo")).into_iter().map(|f| f.path).collect();
        found.sort();
        let want: Vec<PathBuf> =
            ["kilo-beta.db", "kilo.db", "opencode-dev.db"].iter().map(|n| data.join("kilo").join(n)).collect();
        assert_eq!(found, want);
        assert!(find(&env, Some("kilo")).iter().all(|f| f.agent == "kilo" && f.format.is_none()));
        let opencode: Vec<PathBuf> = find(&env, Some("opencode")).into_iter().map(|f| f.path).collect();
        assert_eq!(opencode, [data.join("opencode/opencode.db")]);
    }

    #[test]
    fn cline_keeps_its_tasks_where_its_core_looks() {
        let mut env = Env { home: PathBuf::from("/h"), vars: BTreeMap::new() };
        assert_eq!(roots(&env, "cline"), [PathBuf::from("/h/.cline/data/sessions")]);
        env.vars.insert("CLINE_DIR".into(), "/c".into());
        assert_eq!(roots(&env, "cline"), [PathBuf::from("/c/data/sessions")]);
        env.vars.insert("CLINE_DATA_DIR".into(), "/d".into());
        assert_eq!(roots(&env, "cline"), [PathBuf::from("/d/sessions")]);
        env.vars.insert("CLINE_SESSION_DATA_DIR".into(), "/s".into());
        assert_eq!(roots(&env, "cline"), [PathBuf::from("/s")]);
    }

    #[test]
    fn kiro_lists_a_transcript_beside_its_metadata() {
        let home = tempfile::tempdir().unwrap();
        let cli = home.path().join(".kiro/sessions/cli");
        std::fs::create_dir_all(&cli).unwrap();
        let session = cli.join("d2db899b-7e34-4f60-be19-750e06623c82.jsonl");
        std::fs::write(&session, b"{}\n").unwrap();
        std::fs::write(session.with_extension("json"), b"{}").unwrap();
        // No metadata beside it: not a session Kiro lists.
        std::fs::write(cli.join("stray.jsonl"), b"{}\n").unwrap();
        let mut env = Env { home: home.path().to_path_buf(), vars: BTreeMap::new() };
        let found: Vec<PathBuf> = find(&env, Some("kiro")).into_iter().map(|f| f.path).collect();
        assert_eq!(found, [session]);
        env.vars.insert("KIRO_HOME".into(), "/k".into());
        assert_eq!(roots(&env, "kiro"), [PathBuf::from("/k/sessions/cli")]);
    }
}
