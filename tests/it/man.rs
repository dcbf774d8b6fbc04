//! The man pages in `man/` are generated from the clap definitions, here: one page
//! for the tool and one per subcommand (`session-doctor-scan.1`, showing the command
//! as `session-doctor scan`), for whatever subcommands exist. The test fails when a
//! committed page differs from what the definitions give; `UPDATE_MAN=1 cargo test
//! --test it man::` rewrites them (and removes pages of commands that are gone).
//!
//! `clap_mangen` renders the sections clap knows about; the `after_help` of a command
//! is written as blocks headed `Examples:` or `Exit status:` (lines indented by two
//! spaces), which become the EXAMPLES and EXIT STATUS sections, set without filling
//! so that no path or command is re-wrapped. Hyphenation is off for the same reason.

use std::collections::BTreeMap;
use std::path::Path;

use clap::CommandFactory as _;
use roff::{Roff, roman};
use session_doctor::cli::Cli;

const TOOL: &str = "session-doctor";

/// Every page, by file name, rendered in memory.
fn pages() -> BTreeMap<String, Vec<u8>> {
    // The `help` subcommand is clap's, not ours: it gets no page and no mention.
    let mut top = Cli::command().disable_help_subcommand(true);
    top.build();
    let version = top.get_version().unwrap_or_default().to_string();
    let mut out = BTreeMap::new();
    let mut todo = vec![top.clone()];
    while let Some(cmd) = todo.pop() {
        todo.extend(cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
        let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
        out.insert(format!("{name}.1"), render(&cmd, &name, &version, &top));
    }
    out
}

fn render(cmd: &clap::Command, name: &str, version: &str, top: &clap::Command) -> Vec<u8> {
    let after =
        cmd.get_after_long_help().or(cmd.get_after_help()).map(std::string::ToString::to_string).unwrap_or_default();
    let bare = cmd.clone().after_help(None::<&str>).after_long_help(None::<&str>);
    let man =
        clap_mangen::Man::new(bare).title(name).source(format!("{TOOL} {version}")).manual("session-doctor manual");
    let mut page = Vec::new();
    man.render(&mut page).expect("renders");
    let page = String::from_utf8(page).expect("utf-8");

    // Our sections go before VERSION (only the tool's own page has one).
    let (head, tail) = match page.find(".SH VERSION") {
        Some(i) => page.split_at(i),
        None => (page.as_str(), ""),
    };
    let mut extra = Roff::new();
    // Prose after a headed block is no part of it: it goes under NOTES.
    let mut in_section = false;
    for block in after.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut lines = block.lines();
        let first = lines.next().unwrap_or_default();
        match first.strip_suffix(':') {
            Some(heading) if !heading.starts_with(' ') => {
                in_section = true;
                extra.control("SH", [heading.to_uppercase().as_str()]);
                extra.control("nf", []);
                extra.control("RS", ["4"]);
                for line in lines {
                    extra.text([roman(line.strip_prefix("  ").unwrap_or(line))]);
                }
                extra.control("RE", []);
                extra.control("fi", []);
            }
            _ => {
                if std::mem::take(&mut in_section) {
                    extra.control("SH", ["NOTES"]);
                }
                extra.control("PP", []);
                extra.text([roman(block.replace('\n', " "))]);
            }
        }
    }
    extra.control("SH", ["SEE ALSO"]);
    let see_also: Vec<String> = if name == TOOL {
        top.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| format!("{TOOL}-{}(1)", s.get_name())).collect()
    } else {
        vec![format!("{TOOL}(1)")]
    };
    extra.text([roman(see_also.join(", "))]);
    // `render` starts with the apostrophe preamble, which the page already has.
    let extra = extra.render();
    let extra = extra.lines().skip_while(|l| l.starts_with(".ie ") || l.starts_with(".el ")).collect::<Vec<_>>();

    let mut out = String::new();
    for line in head.lines() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with(".TH ") {
            // No hyphenation, ragged right: paths and commands stay whole.
            out.push_str(".nh\n.ad l\n");
        }
    }
    for line in extra {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(tail);
    out.into_bytes()
}

#[test]
fn man_pages_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let update = std::env::var_os("UPDATE_MAN").is_some();
    let pages = pages();
    let mut stale = Vec::new();
    for (file, rendered) in &pages {
        let path = dir.join(file);
        if std::fs::read(&path).ok().as_ref() != Some(rendered) {
            if update {
                std::fs::write(&path, rendered).expect("write man page");
            } else {
                stale.push(format!("man/{file} differs"));
            }
        }
    }
    for entry in std::fs::read_dir(&dir).expect("man/") {
        let file = entry.expect("entry").file_name().to_string_lossy().into_owned();
        if file.ends_with(".1") && !pages.contains_key(&file) {
            if update {
                std::fs::remove_file(dir.join(&file)).expect("remove stale page");
            } else {
                stale.push(format!("man/{file} names no command"));
            }
        }
    }
    assert!(stale.is_empty(), "{}\nrun `UPDATE_MAN=1 cargo test --test it man::`", stale.join("\n"));
}

#[test]
fn pages_show_commands_as_typed() {
    for (file, page) in pages() {
        let page = String::from_utf8(page).expect("utf-8");
        assert!(!page.contains(".SH EXTRA"), "{file}: examples belong under EXAMPLES");
        assert!(!page.contains("help(1)"), "{file} points to a help page that does not exist");
        if let Some(sub) = file.strip_prefix("session-doctor-").and_then(|f| f.strip_suffix(".1")) {
            // A nested command's page (`guard-install`) shows it as typed: `guard install`.
            let typed = |s: &str| format!(".SH SYNOPSIS\n\\fBsession\\-doctor {}\\fR", s.replace('-', "\\-"));
            let nested = sub.replacen('-', " ", 1);
            assert!(
                page.contains(&typed(sub)) || page.contains(&typed(&nested)),
                "{file} must show `session-doctor {sub}`:\n{page}"
            );
            // Subcommands do not take -V (no propagate_version): their pages must not offer it.
            assert!(!page.contains("\\-\\-version"), "{file} documents --version");
            assert!(page.contains(".SH EXAMPLES"), "{file} has no examples");
            assert!(page.contains(".SH \"EXIT STATUS\""), "{file} has no EXIT STATUS section");
            let status = page.split(".SH \"EXIT STATUS\"").nth(1).and_then(|s| s.split(".SH").next()).unwrap_or("");
            assert!(!status.contains(".PP"), "{file}: a paragraph inside EXIT STATUS");
        }
    }
}
