//! Output of `sessions`: a table of recent sessions, or their JSON.

use std::io::{self, Write};
use std::path::Path;
use std::time::SystemTime;

use serde::Serialize;

use crate::clock::{ago, rfc3339};
use crate::discover::Found;

use super::table::{Cell, Keep, Table};
use super::term::{Term, styles};
use crate::text::sanitize;
use crate::text::units::size;

/// What `diagnose` and `scan` make of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    /// Not stuck; every attachment fine, no limit broken, no line skipped.
    Ok,
    /// What `diagnose` exits 1 for: a failure that every retry meets again.
    Stuck,
    /// Not stuck, but what `scan` exits 1 for.
    Problems,
    /// `scan` could not read it (exit 2).
    Unreadable,
    /// A store `scan` does not read (opencode's database).
    NotRead,
}

impl Health {
    /// Every health, for the JSON Schema of `sessions --json`.
    pub const ALL: [Health; 5] = [Health::Ok, Health::Stuck, Health::Problems, Health::Unreadable, Health::NotRead];

    pub fn as_str(self) -> &'static str {
        match self {
            Health::Ok => "ok",
            Health::Stuck => "stuck",
            Health::Problems => "problems",
            Health::Unreadable => "unreadable",
            Health::NotRead => "not read",
        }
    }
}

/// One row: a session found on disk and its health.
#[derive(Clone, Debug)]
pub struct Listed {
    pub found: Found,
    pub health: Health,
}

/// `sessions --json`: one object per session.
#[derive(Serialize)]
pub struct ListedJson {
    pub agent: &'static str,
    /// The `--format` that reads it; null for a store that is not read.
    pub format: Option<&'static str>,
    pub path: String,
    pub bytes: u64,
    /// Last modification, RFC 3339 UTC.
    pub modified: String,
    pub health: Health,
}

impl Listed {
    pub fn json(&self) -> ListedJson {
        let f = &self.found;
        ListedJson {
            agent: f.agent,
            format: f.format.map(crate::model::Format::name),
            path: f.path.display().to_string(),
            bytes: f.bytes,
            modified: rfc3339(f.modified),
            health: self.health,
        }
    }
}

/// `/home/me/.codex/x` → `~/.codex/x`.
pub fn tilde(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if !home.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

pub fn write(out: &mut impl Write, listed: &[Listed], home: &Path, term: &Term) -> io::Result<()> {
    let now = SystemTime::now();
    let mut t = Table::new(&["agent", "last activity", "size", "health", "path"])
        .right("size")
        .shrink("agent", Keep::Start, 5)
        .shrink("path", Keep::End, 12)
        .own_line("path");
    for l in listed {
        let style = match l.health {
            Health::Ok => styles::OK,
            Health::Stuck | Health::Problems => styles::INVALID,
            Health::Unreadable => styles::WARN,
            Health::NotRead => styles::DIM,
        };
        t.row([
            Cell::from(l.found.agent),
            ago(l.found.modified, now).into(),
            size(l.found.bytes).into(),
            Cell::styled(l.health.as_str(), style),
            sanitize(&tilde(&l.found.path, home)).into(),
        ]);
    }
    out.write_all(t.render(term).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    fn listed(agent: &'static str, path: &str, bytes: u64, health: Health) -> Listed {
        // Six and a half minutes: "6 min ago" however long the test takes to reach `write`.
        let modified = SystemTime::now() - Duration::from_secs(390);
        Listed { found: Found { agent, path: PathBuf::from(path), bytes, modified, format: None }, health }
    }

    /// Issue 36, item 12: at 60 columns the path was cut to 13 characters
    /// (`…1f0e2d3c.jsonl`) while every other column kept its width; it goes
    /// on a line of its own instead, whole.
    #[test]
    fn at_sixty_columns_the_path_gets_a_line_of_its_own() {
        let rows = [
            listed("claude-code", "/home/dev/.claude/projects/-home-dev-shop/1f0e2d3c.jsonl", 48_213, Health::Stuck),
            listed(
                "codex",
                "/home/dev/.codex/sessions/2026/08/01/rollout-2026-08-01T10-00-00-1f0e.jsonl",
                912,
                Health::Ok,
            ),
        ];
        let mut out = Vec::new();
        write(&mut out, &rows, Path::new("/home/dev"), &Term { color: false, width: Some(60) }).unwrap();
        let want = "\
agent        last activity     size  health
  path
claude-code  6 min ago      48.2 kB  stuck
  ~/.claude/projects/-home-dev-shop/1f0e2d3c.jsonl
codex        6 min ago        912 B  ok
  …essions/2026/08/01/rollout-2026-08-01T10-00-00-1f0e.jsonl
";
        assert_eq!(String::from_utf8(out).unwrap(), want);
        // At 100 columns the path fits in its column, as before.
        let mut out = Vec::new();
        write(&mut out, &rows[..1], Path::new("/home/dev"), &Term { color: false, width: Some(100) }).unwrap();
        let want = "\
agent        last activity     size  health  path
claude-code  6 min ago      48.2 kB  stuck   ~/.claude/projects/-home-dev-shop/1f0e2d3c.jsonl
";
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
}
