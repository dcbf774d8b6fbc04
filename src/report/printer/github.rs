//! `check --output-format github`: one GitHub Actions workflow command per
//! problem (`::error file=…,line=…,title=<code>::<message>`), which GitHub shows
//! as an annotation on the file; warnings as `::warning`. Escaped as the
//! Actions toolkit does: `%`, `\r` and `\n` everywhere, and `:` and `,` in
//! properties too.

use std::io::{self, Write};

use crate::check::CheckReport;
use crate::model::Severity;
use crate::text::sanitize;

use super::Printer;

/// Prints workflow commands, then a plain summary line for the log.
#[derive(Clone, Copy, Debug, Default)]
pub struct Github;

/// A message (the command's data).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A property value (`file=`, `title=`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

impl Printer<CheckReport> for Github {
    fn print(&self, out: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
        for s in &r.sessions {
            for p in &s.problems {
                let command = match p.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Info => "notice",
                };
                let mut props = vec![format!("file={}", escape_property(&sanitize(&s.file)))];
                if let Some(l) = p.line {
                    props.push(format!("line={l}"));
                }
                props.push(format!("title={}", escape_property(&p.code)));
                let message = match &p.reference {
                    Some(r) => format!("{r}: {}", p.message),
                    None => p.message.clone(),
                };
                writeln!(out, "::{command} {}::{}", props.join(","), escape_data(&sanitize(&message)))?;
            }
        }
        let failing = r.sessions.iter().filter(|s| !s.ok).count();
        writeln!(out, "session-doctor check: {} sessions, {failing} failing", r.sessions.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_the_toolkit_does() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
