//! `check --output-format junit`: one `<testsuite>` with one `<testcase>` per
//! session and one `<failure>` per problem of severity error; warnings and
//! allowed problems go to the testcase's `<system-out>`. Every value is
//! XML-escaped, and characters XML 1.0 cannot hold at all become U+FFFD.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::check::{CheckReport, Problem};
use crate::model::Severity;

use super::Printer;

/// Prints a JUnit XML report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Junit;

/// `s` as XML character data or an attribute value.
pub fn escape(s: &str) -> String {
    crate::text::markup_escape(s)
}

fn located(p: &Problem) -> String {
    let mut at = Vec::new();
    if let Some(l) = p.line {
        at.push(format!("line {l}"));
    }
    if let Some(r) = &p.reference {
        at.push(r.clone());
    }
    if at.is_empty() { p.message.clone() } else { format!("{}: {}", at.join(", "), p.message) }
}

impl Printer<CheckReport> for Junit {
    fn print(&self, out: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
        let tests = r.sessions.len();
        let failures = r.sessions.iter().filter(|s| !s.ok).count();
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(x, "<testsuites name=\"session-doctor check\" tests=\"{tests}\" failures=\"{failures}\">");
        let _ = writeln!(
            x,
            "  <testsuite name=\"session-doctor check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">"
        );
        for s in &r.sessions {
            let format = s.format.unwrap_or("unreadable");
            let _ = write!(
                x,
                "    <testcase name=\"{}\" classname=\"session-doctor.{}\" file=\"{}\"",
                escape(&s.name()),
                escape(format),
                escape(&s.file)
            );
            let (errors, other): (Vec<&Problem>, Vec<&Problem>) =
                s.problems.iter().partition(|p| p.severity == Severity::Error);
            if errors.is_empty() && other.is_empty() && s.allowed.is_empty() {
                x.push_str("/>\n");
                continue;
            }
            x.push_str(">\n");
            for p in errors {
                let _ = writeln!(
                    x,
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>",
                    escape(&p.code),
                    escape(&format!("{}: {}", p.code, p.message)),
                    escape(&located(p))
                );
            }
            let notes: Vec<String> = other
                .iter()
                .map(|p| format!("{}[{}] {}", p.severity, p.code, located(p)))
                .chain(s.allowed.iter().map(|p| format!("allowed[{}] {}", p.code, located(p))))
                .collect();
            if !notes.is_empty() {
                let _ = writeln!(x, "      <system-out>{}</system-out>", escape(&notes.join("\n")));
            }
            x.push_str("    </testcase>\n");
        }
        x.push_str("  </testsuite>\n</testsuites>\n");
        out.write_all(x.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup_quotes_and_controls() {
        assert_eq!(escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
        assert_eq!(escape("a\nb\u{1b}c"), "a&#10;b\u{fffd}c");
    }
}
