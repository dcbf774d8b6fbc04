//! The only place that asks about the terminal: is stdout one, how wide is it,
//! may we colour. Decided once per process from `--color` and the environment,
//! then handed to every printer as a [`Term`] value.

use std::io::IsTerminal as _;
use std::sync::OnceLock;

use anstyle::{AnsiColor, Style};

/// `--color`: when to colour human output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    // On a terminal, unless NO_COLOR is set (CLICOLOR_FORCE forces it). Plain `//`
    // comments: doc comments would list every value at length in --help.
    #[default]
    Auto,
    Always,
    Never,
}

/// How human output should look where it is going.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// Emit ANSI colour sequences.
    pub color: bool,
    /// The width to fit tables into: `Some` on a terminal, `None` (never truncate) elsewhere.
    pub width: Option<usize>,
}

/// Columns assumed when stdout is a terminal that reports no size.
pub const FALLBACK_WIDTH: usize = 80;

impl Term {
    /// Plain output for a pipe or file: no colour, no truncation.
    pub const PLAIN: Term = Term { color: false, width: None };

    /// Decides from the real stdout and environment.
    pub fn detect(choice: ColorChoice) -> Term {
        let stdout = std::io::stdout();
        let tty = stdout.is_terminal();
        let width = tty.then(|| {
            terminal_size::terminal_size_of(&stdout)
                .map(|(w, _)| usize::from(w.0))
                .filter(|&w| w > 0)
                .unwrap_or(FALLBACK_WIDTH)
        });
        Term { color: color_wanted(choice, tty, |k| std::env::var_os(k)), width }
    }

    /// `text` in `style` when colouring, else `text` unchanged.
    pub fn paint(&self, style: Style, text: &str) -> String {
        if self.color && style != Style::new() { format!("{style}{text}{style:#}") } else { text.to_string() }
    }
}

/// The colour decision, without touching the process: `env` looks a variable up.
///
/// `never`/`always` win; under `auto` a non-empty `NO_COLOR` disables colour, then a
/// non-empty `CLICOLOR_FORCE` (other than `0`) enables it, then `CLICOLOR=0` or
/// `TERM=dumb` disable it, and otherwise colour follows whether stdout is a terminal.
pub fn color_wanted(choice: ColorChoice, tty: bool, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    match choice {
        ColorChoice::Never => false,
        ColorChoice::Always => true,
        ColorChoice::Auto => {
            if set("NO_COLOR").is_some() {
                false
            } else if set("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
                true
            } else if set("CLICOLOR").is_some_and(|v| v == "0") || set("TERM").is_some_and(|v| v == "dumb") {
                false
            } else {
                tty
            }
        }
    }
}

static CURRENT: OnceLock<Term> = OnceLock::new();

/// Records the process's decision; the first call wins (the CLI makes it once).
pub fn init(choice: ColorChoice) -> Term {
    *CURRENT.get_or_init(|| Term::detect(choice))
}

/// The decision made by [`init`], or plain output when nothing was decided (library use).
pub fn current() -> Term {
    CURRENT.get().copied().unwrap_or(Term::PLAIN)
}

/// Styles shared by every printer.
pub mod styles {
    use super::{AnsiColor, Style};

    pub const INVALID: Style = AnsiColor::Red.on_default().bold();
    pub const WARN: Style = AnsiColor::Yellow.on_default();
    pub const OK: Style = AnsiColor::Green.on_default();
    pub const HEADER: Style = Style::new().bold();
    pub const DIM: Style = Style::new().dimmed();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn auto_follows_the_terminal_and_the_environment() {
        assert!(color_wanted(ColorChoice::Auto, true, env(&[])));
        assert!(!color_wanted(ColorChoice::Auto, false, env(&[])));
        assert!(!color_wanted(ColorChoice::Auto, true, env(&[("NO_COLOR", "1")])));
        // An empty NO_COLOR is no request.
        assert!(color_wanted(ColorChoice::Auto, true, env(&[("NO_COLOR", "")])));
        assert!(color_wanted(ColorChoice::Auto, false, env(&[("CLICOLOR_FORCE", "1")])));
        assert!(!color_wanted(ColorChoice::Auto, false, env(&[("CLICOLOR_FORCE", "0")])));
        assert!(!color_wanted(ColorChoice::Auto, true, env(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")])));
        assert!(!color_wanted(ColorChoice::Auto, true, env(&[("TERM", "dumb")])));
    }

    #[test]
    fn explicit_choices_win() {
        assert!(color_wanted(ColorChoice::Always, false, env(&[("NO_COLOR", "1")])));
        assert!(!color_wanted(ColorChoice::Never, true, env(&[("CLICOLOR_FORCE", "1")])));
    }

    #[test]
    fn paint_only_when_colouring() {
        let on = Term { color: true, width: None };
        assert_eq!(on.paint(styles::OK, "ok"), "\u{1b}[32mok\u{1b}[0m");
        assert_eq!(Term::PLAIN.paint(styles::OK, "ok"), "ok");
    }
}
