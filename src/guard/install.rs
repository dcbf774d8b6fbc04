//! `guard install`: wire the guard into an agent's settings without touching
//! anything else there.
//!
//! The user's settings file is edited in place by byte range (see
//! [`crate::json::splice`]), so their keys, order, numbers and spacing stay
//! as they wrote them; only the guard's own entry is added. Installing twice
//! changes nothing. Before a change the old file is kept beside it as
//! `<file>.session-doctor-backup`, and the new one is written atomically.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use crate::json::splice;

/// What marks the guard's own hook among the user's hooks.
pub const MARK: &str = "guard --hook claude-code";

/// The change `install` would make to one settings file.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub file: PathBuf,
    /// The guard is already there: nothing to change.
    pub already: bool,
    /// What the change adds, for the user to see before it is written.
    pub summary: String,
    /// The whole new text of the file.
    pub text: String,
    /// The backup written beside the file before the change, if it existed.
    pub backup: Option<PathBuf>,
}

/// Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else
/// `~/.claude/settings.json`.
pub fn claude_code_settings() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        let first = dir.to_string_lossy().split(',').next().unwrap_or_default().to_string();
        return Ok(PathBuf::from(first).join("settings.json"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set: pass --settings FILE")?;
    Ok(PathBuf::from(home).join(".claude").join("settings.json"))
}

/// The `PreToolUse` entry that runs `exe guard --hook claude-code` before every `Read`.
pub fn claude_code_entry(exe: &Path, provider: Option<&str>) -> Value {
    let mut command = format!("{} {MARK}", crate::text::shell_quote(&exe.display().to_string()));
    if let Some(p) = provider {
        command.push_str(&format!(" --provider {}", crate::text::shell_quote(p)));
    }
    json!({"matcher": "Read", "hooks": [{"type": "command", "command": command, "timeout": 30}]})
}

/// Plans adding `entry` to the `hooks.PreToolUse` list of the settings in `file`.
pub fn plan_claude_code(file: &Path, entry: &Value) -> anyhow::Result<Plan> {
    plan_hook(file, "PreToolUse", entry, MARK)
}

/// Plans adding `entry` to the `hooks.<event>` list of the JSON settings in
/// `file` (Claude Code's `PreToolUse`, Gemini CLI's `BeforeTool`: both keep
/// `{matcher, hooks: [{type, command, timeout}]}` entries there). An entry
/// whose command holds `mark` is the guard's own.
pub fn plan_hook(file: &Path, event: &str, entry: &Value, mark: &str) -> anyhow::Result<Plan> {
    let old = match read_existing(file)? {
        Some(b) => String::from_utf8(b).with_context(|| format!("{} is not UTF-8 text", file.display()))?,
        None => String::new(),
    };
    let backup = (!old.is_empty()).then(|| backup_path(file));
    let summary = format!("adds to hooks.{event}: {}", serde_json::to_string(&entry)?);
    let plan = |already: bool, text: String| Plan {
        file: file.to_path_buf(),
        already,
        summary: summary.clone(),
        text,
        backup: backup.clone(),
    };
    if old.trim().is_empty() {
        let text = serde_json::to_string_pretty(&json!({"hooks": {event: [entry.clone()]}}))? + "\n";
        return Ok(plan(false, text));
    }
    let parsed: Value = serde_json::from_str(&old)
        .with_context(|| format!("{} is not valid JSON; fix it first, nothing was changed", file.display()))?;
    if !parsed.is_object() {
        bail!("{} does not hold a JSON object; nothing was changed", file.display());
    }
    let pre = parsed.pointer(&format!("/hooks/{event}"));
    let compact = serde_json::to_string(&entry)?;
    let t = old.as_bytes();
    // Ours already: "already installed" only for the very entry this install
    // writes (this binary, this provider, the `Read` matcher). An entry of ours
    // that differs (a binary since moved, another provider, another matcher) is
    // replaced where it stands.
    let list = pre.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if list.contains(entry) {
        return Ok(plan(true, old));
    }
    if let Some(i) = list.iter().position(|e| has_mark(e, mark)) {
        let pointer = format!("/hooks/{event}/{i}");
        let range =
            splice::locate(t, &pointer).with_context(|| format!("{}: cannot find {pointer}", file.display()))?;
        let text = String::from_utf8(splice::apply(t, &[splice::Edit { range, with: compact }]))?;
        serde_json::from_str::<Value>(&text)
            .context("the merged settings would not be valid JSON; nothing was changed")?;
        return Ok(Plan {
            summary: format!("replaces the guard's hook in hooks.{event}: {}", serde_json::to_string(&entry)?),
            ..plan(false, text)
        });
    }
    let list_pointer = format!("/hooks/{event}");
    let (pointer, insert, empty) = match (pre, parsed.get("hooks")) {
        (Some(Value::Array(list)), _) => (list_pointer.as_str(), compact, list.is_empty()),
        (Some(_), _) => bail!("{}: hooks.{event} is not a list; nothing was changed", file.display()),
        (None, Some(Value::Object(hooks))) => ("/hooks", format!("\"{event}\": [{compact}]"), hooks.is_empty()),
        (None, Some(_)) => bail!("{}: hooks is not an object; nothing was changed", file.display()),
        (None, None) => (
            "",
            format!("\"hooks\": {{\"{event}\": [{compact}]}}"),
            parsed.as_object().is_some_and(serde_json::Map::is_empty),
        ),
    };
    let range = splice::locate(t, pointer).with_context(|| format!("{}: cannot find {pointer}", file.display()))?;
    // The value ends with its closing bracket; the entry goes just before it.
    let close = range.end - 1;
    let with = if empty { insert } else { format!(", {insert}") };
    let at = last_content_end(t, range.start, close);
    let text = String::from_utf8(splice::apply(t, &[splice::Edit { range: at..at, with }]))?;
    serde_json::from_str::<Value>(&text).context("the merged settings would not be valid JSON; nothing was changed")?;
    Ok(plan(false, text))
}

/// What marks the guard's own hook among Gemini CLI's hooks.
pub const GEMINI_MARK: &str = "guard --hook gemini-cli";

/// Gemini CLI's user settings: `$GEMINI_CLI_HOME/.gemini/settings.json`, else
/// `~/.gemini/settings.json` (`homedir()` and `Storage.getGlobalSettingsPath`
/// in Gemini CLI 0.61.0).
pub fn gemini_cli_settings() -> anyhow::Result<PathBuf> {
    let home = match std::env::var_os("GEMINI_CLI_HOME").filter(|d| !d.is_empty()) {
        Some(h) => h,
        None => std::env::var_os("HOME").context("HOME is not set: pass --settings FILE")?,
    };
    Ok(PathBuf::from(home).join(".gemini").join("settings.json"))
}

/// The `BeforeTool` entry that runs `exe guard --hook gemini-cli` before every
/// `read_file` (Gemini CLI matches `matcher` as a regular expression on the
/// tool's name, and takes `timeout` in milliseconds: 60 s, its own default, as
/// fitting a large image in a loaded machine can take tens of seconds). The provider is always
/// written: the hook's own default is Anthropic's, and Gemini CLI talks to Gemini.
pub fn gemini_cli_entry(exe: &Path, provider: &str) -> Value {
    let command = format!(
        "{} {GEMINI_MARK} --provider {}",
        crate::text::shell_quote(&exe.display().to_string()),
        crate::text::shell_quote(provider)
    );
    json!({
        "matcher": "^read_file$",
        "hooks": [{"type": "command", "name": "session-doctor-guard", "command": command, "timeout": 60000}]
    })
}

/// Plans adding `entry` to the `hooks.BeforeTool` list of Gemini CLI's settings in `file`.
pub fn plan_gemini_cli(file: &Path, entry: &Value) -> anyhow::Result<Plan> {
    plan_hook(file, "BeforeTool", entry, GEMINI_MARK)
}

/// What marks the guard's own hook file among Cline's hooks.
pub const CLINE_MARK: &str = "guard --hook cline";

/// Cline's global hook: `$CLINE_DIR/hooks/PreToolUse`, else
/// `~/.cline/hooks/PreToolUse` (Cline 3.0.65 runs every executable of that
/// name in its hooks folders before each tool call).
pub fn cline_hook() -> anyhow::Result<PathBuf> {
    let dir = match std::env::var_os("CLINE_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(std::env::var_os("HOME").context("HOME is not set: pass --settings FILE")?).join(".cline")
        }
    };
    Ok(dir.join("hooks").join("PreToolUse"))
}

/// Plans writing Cline's hook, a shell script that runs `exe guard --hook
/// cline`. A `PreToolUse` hook of the user's own there is never replaced.
pub fn plan_cline(file: &Path, exe: &Path, provider: &str) -> anyhow::Result<Plan> {
    let text = format!(
        "#!/bin/sh\n# The session-doctor guard (`session-doctor guard install cline`): judges every file\n# read_files reads before it enters the session. `session-doctor guard uninstall cline` removes it.\nexec {} {CLINE_MARK} --provider {}\n",
        crate::text::shell_quote(&exe.display().to_string()),
        crate::text::shell_quote(provider)
    );
    if let Some(old) = read_existing(file)?
        && !String::from_utf8_lossy(&old).contains(CLINE_MARK)
    {
        bail!(
            "{} is a PreToolUse hook of your own; session-doctor does not replace it (pass --settings FILE to \
             install the guard in another of Cline's hooks folders)",
            file.display()
        );
    }
    plan_file(file, &text, exe, provider)
}

/// pi's global extension folder: `$PI_CODING_AGENT_DIR/extensions`, else
/// `~/.pi/agent/extensions` (pi loads every `*.ts` there at start).
pub fn pi_extension() -> anyhow::Result<PathBuf> {
    let dir = match std::env::var_os("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(std::env::var_os("HOME").context("HOME is not set: pass --settings FILE")?).join(".pi/agent")
        }
    };
    Ok(dir.join("extensions").join("session-doctor-guard.ts"))
}

/// opencode's global plugin folder: `$XDG_CONFIG_HOME/opencode/plugins`, else
/// `~/.config/opencode/plugins` (opencode loads every plugin file there at start).
pub fn opencode_plugin() -> anyhow::Result<PathBuf> {
    let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            PathBuf::from(std::env::var_os("HOME").context("HOME is not set: pass --settings FILE")?).join(".config")
        }
    };
    Ok(config.join("opencode").join("plugins").join("session-doctor-guard.js"))
}

/// The pi extension and the opencode plugin, as `integrations/` holds them.
pub const PI_EXTENSION: &str = include_str!("../../integrations/pi/session-doctor-guard.ts");
pub const OPENCODE_PLUGIN: &str = include_str!("../../integrations/opencode/session-doctor-guard.js");

/// Plans writing an agent's guard file (`source`, with this binary's path and
/// the provider filled in) at `file`. The same content already there is
/// "already installed"; other content is backed up before it is replaced.
pub fn plan_file(file: &Path, source: &str, exe: &Path, provider: &str) -> anyhow::Result<Plan> {
    let text = source
        .replace("__SESSION_DOCTOR__", &js_string(&exe.display().to_string()))
        .replace("__PROVIDER__", &js_string(provider));
    let old = read_existing(file)?;
    let already = old.as_deref() == Some(text.as_bytes());
    let backup = old.filter(|_| !already).map(|_| backup_path(file));
    let summary = format!(
        "writes the guard ({} lines) that runs `{} guard` before every read",
        text.lines().count(),
        exe.display()
    );
    Ok(Plan { file: file.to_path_buf(), already, summary, text, backup })
}

/// The most a settings or guard file holds: far past any real one.
const MAX_SETTINGS: u64 = 4 << 20;

/// The file an install changes, as it is now (`None`: there is none). Bounded
/// and typed: a link to `/dev/zero` or a FIFO in its place is refused, not
/// read for ever, under `--dry-run` too.
pub(super) fn read_existing(file: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    match crate::file::read_bounded(file, MAX_SETTINGS) {
        Ok(b) => Ok(Some(b)),
        Err(crate::file::Refused::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::Error::new(e).context(format!("{} is not read; nothing was changed", file.display()))),
    }
}

/// `s` as the inside of a JavaScript string literal.
fn js_string(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_string()
}

/// Writes a plan: the backup first, then the new file, atomically.
pub fn apply(plan: &Plan) -> anyhow::Result<()> {
    if plan.already {
        return Ok(());
    }
    if let Some(parent) = plan.file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    // A link to the file (settings kept in a dotfiles repository, linked in by
    // stow or chezmoi) stays a link: the write goes to the file it points to.
    let target = match std::fs::symlink_metadata(&plan.file) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(&plan.file)
            .with_context(|| format!("{} is a link to no file", plan.file.display()))?,
        _ => plan.file.clone(),
    };
    // Claude Code keeps API keys in its settings: the rewrite and the backup keep
    // the file's own mode (a private 0600 file stays 0600, a read-only one read-only),
    // never the umask's wider one.
    let mode = crate::atomic::mode_of(&target);
    let owner = owner_of(&target);
    if let Some(backup) = &plan.backup {
        // A new file in the backup's place (temp + rename), never a write through
        // whatever a link at that name points to.
        let old = read_existing(&plan.file)?.unwrap_or_default();
        crate::atomic::write_with_mode(backup, crate::atomic::Existing::Replace, mode, &[], |w| Ok(w.write_all(&old)?))
            .with_context(|| format!("backing up {} to {}", plan.file.display(), backup.display()))?;
        keep_owner(backup, owner)?;
    }
    // The settings are replaced on purpose: they are not an input the write must spare.
    crate::atomic::write_with_mode(&target, crate::atomic::Existing::Replace, mode, &[], |w| {
        Ok(w.write_all(plan.text.as_bytes())?)
    })?;
    keep_owner(&target, owner)
}

/// Makes a guard file an agent runs as a program (Cline's hook) executable
/// when it is not: `0o755` less what the umask takes. A file that already ran
/// keeps its mode.
pub fn make_executable(file: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = crate::atomic::mode_of(file).unwrap_or(0o644);
    if mode & 0o100 == 0 {
        let add = (mode & 0o444) >> 2;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode | 0o100 | add))
            .with_context(|| format!("making {} executable", file.display()))?;
    }
    Ok(())
}

/// Removes a guard file of the guard's own (one that holds `mark`), keeping
/// it first as the backup. `Ok(false)`: there is none of ours, nothing changed.
pub fn remove_own_file(file: &Path, mark: &str, dry_run: bool) -> anyhow::Result<bool> {
    let Some(old) = read_existing(file)? else { return Ok(false) };
    if !String::from_utf8_lossy(&old).contains(mark) {
        return Ok(false);
    }
    if dry_run {
        return Ok(true);
    }
    let backup = backup_path(file);
    let mode = crate::atomic::mode_of(file);
    crate::atomic::write_with_mode(&backup, crate::atomic::Existing::Replace, mode, &[], |w| Ok(w.write_all(&old)?))
        .with_context(|| format!("backing up {} to {}", file.display(), backup.display()))?;
    std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
    Ok(true)
}

/// The owner and group of `path`, where it exists.
fn owner_of(path: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| (m.uid(), m.gid()))
}

/// Gives `path` back to `owner` when the install ran as another user (root
/// installing into a user's settings): the rewrite is the owner's file still.
fn keep_owner(path: &Path, owner: Option<(u32, u32)>) -> anyhow::Result<()> {
    match (owner, owner_of(path)) {
        (Some(o), Some(now)) if o != now => std::os::unix::fs::chown(path, Some(o.0), Some(o.1))
            .with_context(|| format!("cannot give {} back to its owner", path.display())),
        _ => Ok(()),
    }
}

pub(super) fn has_mark(entry: &Value, mark: &str) -> bool {
    entry.get("hooks").and_then(Value::as_array).is_some_and(|hooks| {
        hooks.iter().any(|h| h.get("command").and_then(Value::as_str).is_some_and(|c| c.contains(mark)))
    })
}

pub(super) fn backup_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".session-doctor-backup");
    file.with_file_name(name)
}

/// Where the last member of the container `t[start..=close]` ends (before any
/// trailing white space), so an insertion keeps the closing bracket's line.
fn last_content_end(t: &[u8], start: usize, close: usize) -> usize {
    let mut i = close;
    while i > start + 1 && matches!(t[i - 1], b' ' | b'\t' | b'\n' | b'\r') {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Value {
        claude_code_entry(Path::new("/opt/sd/session-doctor"), None)
    }

    fn mode(p: &Path) -> u32 {
        crate::atomic::mode_of(p).unwrap()
    }

    #[test]
    fn a_private_or_read_only_settings_file_keeps_its_mode_and_so_does_its_backup() {
        use std::os::unix::fs::PermissionsExt as _;
        for m in [0o600, 0o444, 0o640] {
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("settings.json");
            std::fs::write(&f, r#"{"env": {"ANTHROPIC_API_KEY": "sk-secret"}}"#).unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(m)).unwrap();
            let plan = plan_claude_code(&f, &entry()).unwrap();
            apply(&plan).unwrap();
            assert!(std::fs::read_to_string(&f).unwrap().contains(MARK), "{m:o}: the hook is in");
            assert_eq!(mode(&f), m, "the settings keep {m:o}");
            assert_eq!(mode(plan.backup.as_deref().unwrap()), m, "the backup keeps {m:o}");
        }
    }

    #[test]
    fn a_linked_private_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles-settings.json");
        std::fs::write(&real, "{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        apply(&plan_claude_code(&link, &entry()).unwrap()).unwrap();
        assert_eq!(mode(&real), 0o600);
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_device_or_fifo_in_the_settings_place_is_refused_even_in_a_dry_run() {
        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("settings.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = plan_claude_code(&zero, &entry()).unwrap_err();
        assert!(format!("{e:#}").contains("not a regular file"), "{e:#}");
        let fifo = dir.path().join("fifo.json");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(plan_claude_code(&fifo, &entry()).is_err(), "a FIFO is refused, not waited on");
        assert!(plan_file(&fifo, PI_EXTENSION, Path::new("/opt/sd"), "anthropic").is_err());
    }

    #[test]
    fn a_stale_guard_entry_is_replaced_not_called_installed() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("settings.json");
        let gone = claude_code_entry(Path::new("/old/place/session-doctor"), None);
        let other_provider = claude_code_entry(Path::new("/opt/sd/session-doctor"), Some("bedrock"));
        let mut other_matcher = entry();
        other_matcher["matcher"] = json!("Bash");
        for stale in [gone, other_provider, other_matcher] {
            let text = format!(r#"{{"hooks": {{"PreToolUse": [{{"matcher": "Bash", "hooks": []}}, {stale}]}}}}"#);
            std::fs::write(&f, &text).unwrap();
            let plan = plan_claude_code(&f, &entry()).unwrap();
            assert!(!plan.already, "{stale}: not 'already installed'");
            let v: Value = serde_json::from_str(&plan.text).unwrap();
            let list = v["hooks"]["PreToolUse"].as_array().unwrap();
            assert_eq!(list.len(), 2, "replaced where it stood: {}", plan.text);
            assert_eq!(list[1], entry(), "{}", plan.text);
            assert_eq!(list[0]["matcher"], "Bash", "the user's own entry stays");
        }
    }

    fn plan_on(text: &str) -> Plan {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("settings.json");
        std::fs::write(&f, text).unwrap();
        plan_claude_code(&f, &entry()).unwrap()
    }

    #[test]
    fn the_users_other_hooks_and_keys_stay_as_written() {
        let old = "{\n  \"model\": \"opus\",\n  \"n\": 1.50,\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"my-check\"}]}\n    ],\n    \"Stop\": []\n  }\n}\n";
        let p = plan_on(old);
        assert!(!p.already);
        assert!(p.summary.contains("guard --hook claude-code"), "{}", p.summary);
        assert!(p.text.starts_with("{\n  \"model\": \"opus\",\n  \"n\": 1.50,"), "{}", p.text);
        let v: Value = serde_json::from_str(&p.text).unwrap();
        let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "my-check");
        assert_eq!(pre[1], entry());
        assert_eq!(v["hooks"]["Stop"], json!([]));
    }

    #[test]
    fn a_linked_settings_file_stays_a_link_and_its_target_gets_the_hook() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles-settings.json");
        std::fs::write(&real, r#"{"model": "opus"}"#).unwrap();
        let f = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &f).unwrap();
        apply(&plan_claude_code(&f, &entry()).unwrap()).unwrap();
        assert!(std::fs::symlink_metadata(&f).unwrap().file_type().is_symlink(), "the link was replaced");
        let text = std::fs::read_to_string(&real).unwrap();
        assert!(text.contains("\"model\": \"opus\"") && text.contains("session-doctor"), "{text}");
    }

    #[test]
    fn installing_twice_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("settings.json");
        std::fs::write(&f, "{\"theme\": \"dark\"}").unwrap();
        let first = plan_claude_code(&f, &entry()).unwrap();
        apply(&first).unwrap();
        let after_first = std::fs::read_to_string(&f).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("settings.json.session-doctor-backup")).unwrap(),
            "{\"theme\": \"dark\"}"
        );
        let second = plan_claude_code(&f, &entry()).unwrap();
        assert!(second.already);
        apply(&second).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), after_first);
    }

    #[test]
    fn missing_or_empty_settings_get_a_fresh_file_and_no_hooks_key_gets_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan_claude_code(&dir.path().join("none.json"), &entry()).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&p.text).unwrap()["hooks"]["PreToolUse"][0], entry());
        assert!(p.backup.is_none());
        for old in ["{}", "{\"hooks\": {}}", "{\"a\": [1, 2]}"] {
            let v: Value = serde_json::from_str(&plan_on(old).text).unwrap();
            assert_eq!(v["hooks"]["PreToolUse"][0], entry(), "{old}");
        }
    }

    #[test]
    fn a_guard_file_is_filled_in_written_once_and_a_different_one_backed_up() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("ext").join("session-doctor-guard.ts");
        let exe = Path::new("/opt/a \"b\"/session-doctor");
        let p = plan_file(&f, PI_EXTENSION, exe, "anthropic").unwrap();
        assert!(!p.already && p.backup.is_none());
        assert!(p.text.contains(r#""/opt/a \"b\"/session-doctor""#), "the path is a valid JS string");
        assert!(!p.text.contains("__SESSION_DOCTOR__") && !p.text.contains("__PROVIDER__"));
        apply(&p).unwrap();
        assert!(plan_file(&f, PI_EXTENSION, exe, "anthropic").unwrap().already);
        let other = plan_file(&f, PI_EXTENSION, exe, "openai").unwrap();
        assert!(!other.already && other.backup.is_some());
    }

    #[test]
    fn broken_settings_are_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("settings.json");
        std::fs::write(&f, "{ \"hooks\": ").unwrap();
        let err = plan_claude_code(&f, &entry()).unwrap_err();
        assert!(format!("{err:#}").contains("not valid JSON"));
    }
}
