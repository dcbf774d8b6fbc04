//! `diagnose --html`: one self-contained page that shows the session, with
//! thumbnails of what is to blame.
//!
//! The page loads nothing: styles are inline, thumbnails are `data:` URLs, there
//! is no script, and a Content-Security-Policy forbids any other load should a
//! browser find one. Everything that comes from the session (names, paths,
//! errors, tool output, first bytes) is untrusted: control characters are made
//! visible first (as the terminal printers do), then the text is HTML-escaped.

pub mod thumb;

use std::collections::HashMap;
use std::io::{self, Write};

use crate::check::{CheckReport, Checked};
use crate::diagnose::{Diagnosis, FailureSource};
use crate::media::Verdict;
use crate::model::{Attachment, Entry, Origin, Role, Severity};

use super::scan::{dims, verdict};
use super::table;
use thumb::Preview;

/// Most bytes of previews (thumbnails, text) one page carries: past it, cards
/// say the preview was left out, so a session with many images stays small.
pub const PREVIEW_BUDGET: usize = 2_400_000;

/// Where the page gets an attachment's bytes (read back from the session file).
pub type Payloads<'a> = &'a dyn Fn(&Attachment) -> Result<Vec<u8>, String>;

/// Text made safe for HTML text and quoted attribute values: terminal
/// controls sanitized first, then markup escaped.
pub fn esc(s: &str) -> String {
    crate::text::markup_escape(&crate::text::sanitize_keeping_lines(s))
}

/// Writes the page for `d`. `detected`: the format was detected, not given.
pub fn write(out: &mut dyn Write, d: &Diagnosis, detected: bool, payloads: Payloads<'_>) -> io::Result<()> {
    let state = if d.stuck { "stuck" } else { "healthy" };
    head(out, &format!("{state}: {}", esc(&file_name(&d.file))))?;
    writeln!(out, "<body class=\"{state}\">")?;
    let mut budget = Budget::new();
    let part = Part::new(d, String::new(), 1);
    header(out, &part, detected)?;
    writeln!(out, "<main>")?;
    sections(out, &part, payloads, &mut budget)?;
    writeln!(out, "</main>")?;
    footer(out, "the session file was only read")
}

/// One session of `check`'s page: its result, and its diagnosis when it could be read.
pub struct CheckSession<'a> {
    pub checked: &'a Checked,
    pub diagnosed: Option<Diagnosed<'a>>,
}

/// A session's diagnosis, whether its format was detected, and where its bytes are.
pub struct Diagnosed<'a> {
    pub diagnosis: &'a Diagnosis,
    pub detected: bool,
    pub payloads: Payloads<'a>,
}

/// Writes `check`'s page: a summary table of `sessions` (one row each, linking
/// to its section), then one section per session made of the diagnose page's
/// parts. Every id of session `n` (from 1) starts with `s<n>-`, so ids stay
/// unique across the page and a section's links stay inside it; thumbnails of
/// all the sessions share one [`PREVIEW_BUDGET`].
pub fn write_check(out: &mut dyn Write, report: &CheckReport, sessions: &[CheckSession<'_>]) -> io::Result<()> {
    let failing = sessions.iter().filter(|s| !s.checked.ok).count();
    let state = if report.ok { "healthy" } else { "stuck" };
    let title =
        format!("session-doctor check: {} session{}, {failing} failing", sessions.len(), plural(sessions.len()));
    head(out, &title)?;
    writeln!(out, "<body class=\"check {state}\">")?;
    writeln!(out, "<header class=\"top\" id=\"top\">")?;
    let (badge, class) = if report.ok { ("OK", "good") } else { ("FAILING", "bad") };
    writeln!(out, "<h1><span class=\"state {class}\">{badge}</span> {title}</h1>")?;
    writeln!(
        out,
        "<table class=\"sessions\" id=\"sessions\"><thead><tr><th>#</th><th>file</th><th>format</th><th>check</th><th>session</th><th>problems</th></tr></thead><tbody>"
    )?;
    for (i, s) in sessions.iter().enumerate() {
        let c = s.checked;
        let n = i + 1;
        let check = if c.ok { "<span class=\"tag good\">ok</span>" } else { "<span class=\"tag bad\">fail</span>" };
        let session = match &s.diagnosed {
            Some(d) if d.diagnosis.stuck => "<span class=\"tag bad\">stuck</span>",
            Some(_) => "<span class=\"tag good\">not stuck</span>",
            None => "<span class=\"tag bad\">unreadable</span>",
        };
        let mut problems = c.problems.len().to_string();
        if !c.allowed.is_empty() {
            problems.push_str(&format!(" <span class=\"muted\">(+{} allowed)</span>", c.allowed.len()));
        }
        writeln!(
            out,
            "<tr class=\"{}\"><td>{n}</td><td><a href=\"#s{n}\"><code>{}</code></a></td><td>{}</td><td>{check}</td><td>{session}</td><td class=\"count\">{problems}</td></tr>",
            if c.ok { "ok" } else { "fail" },
            esc(&c.file),
            esc(c.format.unwrap_or("unreadable")),
        )?;
    }
    writeln!(out, "</tbody></table>")?;
    if !report.skipped.is_empty() {
        writeln!(
            out,
            "<details class=\"skipped\"><summary>{} file{} skipped</summary><ul>",
            report.skipped.len(),
            plural(report.skipped.len())
        )?;
        for s in &report.skipped {
            writeln!(out, "<li><code>{}</code>: {}</li>", esc(&s.file), esc(&s.reason))?;
        }
        writeln!(out, "</ul></details>")?;
    }
    writeln!(out, "</header>")?;
    writeln!(out, "<main>")?;
    let mut budget = Budget::new();
    for (i, s) in sessions.iter().enumerate() {
        let n = i + 1;
        let prefix = format!("s{n}-");
        match &s.diagnosed {
            Some(dd) => {
                let d = dd.diagnosis;
                let part = Part::new(d, prefix, 2);
                writeln!(out, "<div class=\"session {}\" id=\"s{n}\">", if d.stuck { "stuck" } else { "healthy" })?;
                header(out, &part, dd.detected)?;
                problems(out, s.checked, Some(&part), &part.id("problems"))?;
                sections(out, &part, dd.payloads, &mut budget)?;
            }
            None => {
                writeln!(out, "<div class=\"session stuck\" id=\"s{n}\">")?;
                writeln!(out, "<header class=\"summary\" id=\"{prefix}summary\">")?;
                writeln!(out, "<h2><span class=\"state bad\">UNREADABLE</span></h2>")?;
                writeln!(out, "<dl class=\"facts\">")?;
                row(out, "file", &format!("<code>{}</code>", esc(&s.checked.file)))?;
                writeln!(out, "</dl></header>")?;
                problems(out, s.checked, None, &format!("{prefix}problems"))?;
            }
        }
        writeln!(out, "<p class=\"back\"><a href=\"#top\">↑ all sessions</a></p></div>")?;
    }
    writeln!(out, "</main>")?;
    footer(out, "the session files were only read")
}

/// `<!DOCTYPE>` to `</head>`: the policy that forbids any load, and the styles.
fn head(out: &mut dyn Write, title: &str) -> io::Result<()> {
    writeln!(out, "<!DOCTYPE html>")?;
    writeln!(out, "<html lang=\"en\"><head><meta charset=\"utf-8\">")?;
    writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">"
    )?;
    writeln!(out, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")?;
    writeln!(out, "<meta name=\"generator\" content=\"session-doctor {}\">", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "<title>{title} — session-doctor</title>")?;
    writeln!(out, "<style>{CSS}</style></head>")
}

/// `read`: what the footer says of the session files, e.g. "the session file was only read".
fn footer(out: &mut dyn Write, read: &str) -> io::Result<()> {
    writeln!(
        out,
        "<footer>Written by session-doctor {} · {read} · this page loads nothing from the network</footer>",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(out, "</body></html>")
}

/// The parts under a session's header, in order.
fn sections(out: &mut dyn Write, part: &Part<'_>, payloads: Payloads<'_>, budget: &mut Budget) -> io::Result<()> {
    failure(out, part)?;
    next(out, part)?;
    suspects(out, part)?;
    remarks(out, part)?;
    timeline(out, part, payloads, budget)
}

/// One session's part of a page: where its ids go and how its timeline is laid
/// out. The layout is decided before anything is written, so a link is only
/// written to an id the page has. On the diagnose page the ids are bare
/// (`line-3`, `att-L3.1`); on check's they carry the session's prefix (`s2-`).
struct Part<'d> {
    d: &'d Diagnosis,
    prefix: String,
    /// The level of the session's heading (1 alone on a page, 2 under check's summary).
    level: u8,
    rows: Vec<Row>,
    /// Attachments (indexes into the timeline's) by entry.
    by_entry: Vec<Vec<usize>>,
    /// The entry that carries the id of each line shown (the first of that line).
    lines: HashMap<u64, usize>,
    /// The attachment that carries each card id (the first with that anchor).
    cards: HashMap<String, usize>,
    /// The entry the acceptance boundary is drawn under.
    boundary: Option<usize>,
}

/// One row of the timeline: a run of plain entries is folded into one.
enum Row {
    Entry(usize),
    Run(Vec<usize>),
}

impl<'d> Part<'d> {
    fn new(d: &'d Diagnosis, prefix: String, level: u8) -> Part<'d> {
        let h = &d.timeline;
        let boundary_line = d.boundary.as_ref().map(|b| b.line);
        let mut by_entry: Vec<Vec<usize>> = vec![Vec::new(); h.entries.len()];
        for (k, a) in h.attachments.iter().enumerate() {
            if let Some(v) = by_entry.get_mut(a.entry) {
                v.push(k);
            }
        }
        let failure_line = d.failure.as_ref().and_then(|f| f.line);
        let plain = |i: usize, e: &Entry| {
            by_entry[i].is_empty() && e.error.is_none() && Some(e.line) != boundary_line && Some(e.line) != failure_line
        };
        let mut rows: Vec<Row> = Vec::new();
        for (i, e) in h.entries.iter().enumerate() {
            if plain(i, e) {
                if let Some(Row::Run(run)) = rows.last_mut() {
                    run.push(i);
                    continue;
                }
                rows.push(Row::Run(vec![i]));
            } else {
                rows.push(Row::Entry(i));
            }
        }
        let mut lines = HashMap::new();
        let mut cards = HashMap::new();
        let mut boundary = None;
        for r in &rows {
            let shown: &[usize] = match r {
                Row::Entry(i) => std::slice::from_ref(i),
                Row::Run(run) if run.len() <= 2 => run,
                Row::Run(_) => &[],
            };
            for &i in shown {
                lines.entry(h.entries[i].line).or_insert(i);
                for &k in &by_entry[i] {
                    cards.entry(anchor(&h.attachments[k].reference)).or_insert(k);
                }
                if matches!(r, Row::Entry(_)) && Some(h.entries[i].line) == boundary_line {
                    boundary = Some(i);
                }
            }
        }
        Part { d, prefix, level, rows, by_entry, lines, cards, boundary }
    }

    /// The page id of `name` in this part.
    fn id(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// A link to the row of `line`, when the timeline shows that line.
    fn line_link(&self, line: u64, text: &str) -> String {
        match self.lines.get(&line) {
            Some(_) => format!("<a href=\"#{}\">{text}</a>", self.id(&format!("line-{line}"))),
            None => text.to_string(),
        }
    }

    /// A link to the card of `reference` (escaped), when the timeline shows it.
    fn ref_link(&self, reference: &str) -> String {
        let a = anchor(reference);
        match self.cards.get(&a) {
            Some(_) => format!("<a class=\"ref\" href=\"#{}\">{}</a>", self.id(&a), esc(reference)),
            None => format!("<span class=\"ref\">{}</span>", esc(reference)),
        }
    }
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path).file_name().map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn header(out: &mut dyn Write, part: &Part<'_>, detected: bool) -> io::Result<()> {
    let d = part.d;
    let (badge, class) = if d.stuck { ("STUCK", "bad") } else { ("NOT STUCK", "good") };
    let h = part.level;
    writeln!(out, "<header class=\"summary\" id=\"{}\">", part.id("summary"))?;
    writeln!(
        out,
        "<h{h}><span class=\"state {class}\">{badge}</span> <span class=\"verdict\">{}</span></h{h}>",
        esc(&d.verdict)
    )?;
    writeln!(out, "<dl class=\"facts\">")?;
    row(out, "file", &format!("<code>{}</code>", esc(&d.file)))?;
    let how = if detected { "detected" } else { "given" };
    row(out, "format", &format!("{} ({how})", d.format))?;
    row(out, "agent", d.format.agent(d.written_by))?;
    let model = d.model.as_deref().map_or("unknown".into(), esc);
    row(out, "provider / model", &format!("{} / {model}", esc(&d.provider)))?;
    row(out, "history", &format!("{} lines, {} entries, {} attachments", d.lines, d.entries, d.attachments))?;
    writeln!(out, "</dl></header>")
}

fn row(out: &mut dyn Write, name: &str, html: &str) -> io::Result<()> {
    writeln!(out, "<dt>{name}</dt><dd>{html}</dd>")
}

/// `check`'s coded problems of one session (and those `--allow` accepts).
fn problems(out: &mut dyn Write, c: &Checked, part: Option<&Part<'_>>, id: &str) -> io::Result<()> {
    writeln!(out, "<section id=\"{id}\" class=\"check\"><h2>Check</h2>")?;
    if c.problems.is_empty() && c.allowed.is_empty() {
        writeln!(
            out,
            "<p><span class=\"tag good\">ok</span> no problem: every request would be accepted.</p></section>"
        )?;
        return Ok(());
    }
    writeln!(out, "<ul class=\"problems\">")?;
    let all = c.problems.iter().map(|p| (p, false)).chain(c.allowed.iter().map(|p| (p, true)));
    for (p, allowed) in all {
        let (class, label) = match (allowed, p.severity) {
            (true, _) => ("allowed", "allowed"),
            (false, Severity::Error) => ("invalid", "error"),
            (false, Severity::Warning) => ("warn", "warning"),
            (false, Severity::Info) => ("info", "info"),
        };
        let mut at = Vec::new();
        if let Some(l) = p.line {
            let text = format!("line {l}");
            at.push(part.map_or(text.clone(), |part| part.line_link(l, &text)));
        }
        if let Some(r) = &p.reference {
            at.push(part.map_or_else(|| format!("<span class=\"ref\">{}</span>", esc(r)), |part| part.ref_link(r)));
        }
        let at = if at.is_empty() { String::new() } else { format!(" {}:", at.join(", ")) };
        writeln!(
            out,
            "<li class=\"{class}\"><span class=\"v {class}\">{label}</span> <code>{}</code>{at} {}</li>",
            esc(&p.code),
            esc(&p.message)
        )?;
    }
    writeln!(out, "</ul></section>")
}

fn failure(out: &mut dyn Write, part: &Part<'_>) -> io::Result<()> {
    let d = part.d;
    let id = part.id("failure");
    let Some(f) = &d.failure else {
        return writeln!(out, "<section id=\"{id}\"><h2>Failure</h2><p>None recorded.</p></section>");
    };
    let c = &f.classification;
    writeln!(out, "<section id=\"{id}\"><h2>Failure</h2><dl class=\"facts\">")?;
    let retry = match c.retryable {
        Some(true) => "<span class=\"tag good\">retryable</span> a retry can work",
        Some(false) => "<span class=\"tag bad\">not retryable</span> every retry fails the same way",
        None => "<span class=\"tag\">unknown</span>",
    };
    row(out, "class", &format!("<code class=\"class\">{}</code> {retry}", esc(&c.class.to_string())))?;
    let whence = match (f.source, f.line) {
        (FailureSource::Recorded, Some(l)) => format!("recorded at {}", part.line_link(l, &format!("line {l}"))),
        (FailureSource::Recorded, None) => "recorded".into(),
        (FailureSource::Given, _) => "given on the command line".into(),
        (FailureSource::Predicted, _) => "predicted: no blocking error is recorded, the history alone says so".into(),
    };
    row(out, "source", &whence)?;
    if f.recovered {
        row(out, "since", "a later request was accepted: the session got past it")?;
    }
    let mut who = Vec::new();
    if let Some(p) = &c.provider {
        who.push(esc(p));
    }
    if let Some(s) = c.status {
        who.push(format!("HTTP {s}"));
    }
    if let Some(code) = &c.code {
        who.push(format!("code <code>{}</code>", esc(code)));
    }
    if !who.is_empty() {
        row(out, "provider", &who.join(", "))?;
    }
    if let Some(m) = &c.message {
        row(out, "message", &format!("<pre class=\"message\">{}</pre>", esc(m)))?;
    }
    if let Some(b) = &c.block {
        row(out, "block", &format!("<code>{}</code>", esc(b)))?;
    }
    writeln!(out, "</dl></section>")
}

fn next(out: &mut dyn Write, part: &Part<'_>) -> io::Result<()> {
    let d = part.d;
    if d.next.is_empty() {
        return Ok(());
    }
    writeln!(out, "<section id=\"{}\"><h2>Next</h2><ol class=\"commands\">", part.id("next"))?;
    for c in &d.next {
        writeln!(out, "<li><code>{}</code></li>", esc(c))?;
    }
    writeln!(out, "</ol></section>")
}

fn suspects(out: &mut dyn Write, part: &Part<'_>) -> io::Result<()> {
    let d = part.d;
    if d.suspects.is_empty() {
        return Ok(());
    }
    let n = d.suspects.len();
    // With no failure they are no suspects yet: what the model has not accepted (as the text says).
    let heading = if d.failure.is_some() {
        format!("{n} suspect{}", plural(n))
    } else {
        format!("{n} attachment{} the model has not accepted yet (the suspects, should it fail)", plural(n))
    };
    writeln!(out, "<section id=\"{}\"><h2>{heading}</h2><ul class=\"suspects\">", part.id("suspects"))?;
    for s in &d.suspects {
        let a = &s.attachment;
        let (badge, mark) = badge(d, s);
        writeln!(
            out,
            "<li class=\"{}\"><span class=\"badge {badge}\">{mark}</span> {} <span class=\"name\">{}</span> <span class=\"v {}\">{}</span><br><span class=\"why\">{}</span></li>",
            if badge == "suspect" { "suspect".to_string() } else { format!("suspect {badge}") },
            part.ref_link(&a.reference),
            esc(&display_name(a)),
            verdict_class(a.verdict),
            verdict(a.verdict),
            esc(&s.why),
        )?;
    }
    writeln!(out, "</ul></section>")
}

/// The badge of a suspect (its class and words): with no failure recorded, an
/// attachment the model has not accepted is pending, not suspected of anything;
/// bytes that fail validation are the prime suspect either way.
fn badge(d: &Diagnosis, s: &crate::diagnose::Suspect) -> (&'static str, &'static str) {
    match (s.prime, d.failure.is_some()) {
        (true, _) => ("prime", "prime suspect"),
        (false, true) => ("suspect", "suspect"),
        (false, false) => ("pending", "pending"),
    }
}

fn remarks(out: &mut dyn Write, part: &Part<'_>) -> io::Result<()> {
    let d = part.d;
    let damaged: Vec<_> = d.findings.iter().filter(|f| f.severity >= Severity::Warning).collect();
    if d.excluded.is_empty() && d.limits.is_empty() && d.notes.is_empty() && damaged.is_empty() {
        return Ok(());
    }
    writeln!(out, "<section id=\"{}\"><h2>Notes</h2><ul class=\"notes\">", part.id("notes"))?;
    if !d.excluded.is_empty() {
        let refs: Vec<String> = d.excluded.iter().map(|r| part.ref_link(r)).collect();
        writeln!(out, "<li>excluded by the overlay: {}</li>", refs.join(", "))?;
    }
    for p in &d.limits {
        writeln!(
            out,
            "<li><span class=\"v {}\">{}</span> request: {}</li>",
            verdict_class(p.severity),
            verdict(p.severity),
            esc(&p.message)
        )?;
    }
    for n in &d.notes {
        writeln!(out, "<li>{}</li>", esc(n))?;
    }
    for f in damaged {
        writeln!(out, "<li>{} at line {}: {}</li>", f.severity, f.line, esc(&f.message))?;
    }
    writeln!(out, "</ul></section>")
}

/// What previews may still add to the page, and the previews made so far by
/// sha256 (sessions re-send the same image often: it is decoded once). One
/// budget serves a whole page, however many sessions it shows.
struct Budget {
    left: usize,
    seen: HashMap<String, Preview>,
}

impl Budget {
    fn new() -> Budget {
        Budget { left: PREVIEW_BUDGET, seen: HashMap::new() }
    }
}

fn timeline(out: &mut dyn Write, part: &Part<'_>, payloads: Payloads<'_>, budget: &mut Budget) -> io::Result<()> {
    let d = part.d;
    let h = &d.timeline;
    let last_accepted = h.entries.iter().rposition(|e| e.accepted);
    writeln!(out, "<section id=\"{}\"><h2>History as the provider sees it</h2>", part.id("timeline"))?;
    if h.entries.is_empty() {
        writeln!(out, "<p>No provider-visible entries.</p>")?;
    }
    writeln!(out, "<ol class=\"timeline\">")?;
    let status = |idx: usize| -> (&'static str, &'static str) {
        let e = &h.entries[idx];
        if e.error.is_some() {
            ("failed", "bad")
        } else if e.accepted {
            ("answered", "good")
        } else if last_accepted.is_some_and(|a| idx < a) {
            ("accepted", "good")
        } else {
            ("not accepted yet", "warn")
        }
    };
    for r in &part.rows {
        match r {
            Row::Run(run) if run.len() <= 2 => {
                for &i in run {
                    entry_row(out, part, i, status(i), payloads, budget)?;
                }
            }
            Row::Run(run) => {
                let last_i = run[run.len() - 1];
                let (first, last) = (h.entries[run[0]].line, h.entries[last_i].line);
                let mut counts: Vec<(Role, usize)> = Vec::new();
                for e in run.iter().map(|&i| &h.entries[i]) {
                    match counts.iter_mut().find(|(r, _)| *r == e.role) {
                        Some((_, n)) => *n += 1,
                        None => counts.push((e.role, 1)),
                    }
                }
                let what: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {}", role(*r))).collect();
                let (st, cls) = status(last_i);
                writeln!(
                    out,
                    "<li class=\"entry run\"><div class=\"row\"><span class=\"lines\">lines {first}–{last}</span> <span class=\"role\">{} entries without attachments</span> <span class=\"muted\">{}</span> <span class=\"tag {cls}\">{st}</span></div></li>",
                    run.len(),
                    what.join(", ")
                )?;
            }
            &Row::Entry(i) => {
                let e = &h.entries[i];
                entry_row(out, part, i, status(i), payloads, budget)?;
                if part.boundary == Some(i) {
                    let model = d.boundary.as_ref().and_then(|b| b.model.as_deref()).or(d.model.as_deref());
                    writeln!(
                        out,
                        "<li class=\"boundary\" id=\"{}\"><span>acceptance boundary: {} accepted everything above (line {}); below, it has not</span></li>",
                        part.id("boundary"),
                        model.map_or("the model".into(), esc),
                        e.line
                    )?;
                }
            }
        }
    }
    writeln!(out, "</ol></section>")
}

fn role(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::System => "system",
    }
}

fn entry_row(
    out: &mut dyn Write,
    part: &Part<'_>,
    i: usize,
    (st, cls): (&str, &str),
    payloads: Payloads<'_>,
    budget: &mut Budget,
) -> io::Result<()> {
    let h = &part.d.timeline;
    let e = &h.entries[i];
    let r = role(e.role);
    let failed = if e.error.is_some() { " failed" } else { "" };
    // Entries that share a line: the first carries the line's id.
    let id = if part.lines.get(&e.line) == Some(&i) {
        format!(" id=\"{}\"", part.id(&format!("line-{}", e.line)))
    } else {
        String::new()
    };
    writeln!(out, "<li class=\"entry role-{r}{failed}\"{id}><div class=\"row\">")?;
    write!(out, "<span class=\"lines\">line {}</span> <span class=\"role\">{r}</span>", e.line)?;
    if let Some(m) = &e.model {
        write!(out, " <span class=\"model\">{}</span>", esc(m))?;
    }
    writeln!(out, " <span class=\"tag {cls}\">{st}</span></div>")?;
    if let Some(err) = &e.error {
        let status = err.status.map_or(String::new(), |s| format!("HTTP {s}: "));
        writeln!(out, "<pre class=\"message\">{status}{}</pre>", esc(&clip(&err.text, 2000)))?;
    }
    let atts = &part.by_entry[i];
    if !atts.is_empty() {
        writeln!(out, "<div class=\"cards\">")?;
        for &k in atts {
            card(out, part, k, payloads, budget)?;
        }
        writeln!(out, "</div>")?;
    }
    writeln!(out, "</li>")
}

fn card(out: &mut dyn Write, part: &Part<'_>, k: usize, payloads: Payloads<'_>, budget: &mut Budget) -> io::Result<()> {
    let a = &part.d.timeline.attachments[k];
    let s = part.d.suspects.iter().find(|s| s.attachment.reference == a.reference);
    let mut classes = vec!["card".to_string(), format!("v-{}", verdict_class(a.verdict))];
    if let Some(s) = s {
        match badge(part.d, s).0 {
            "pending" => classes.push("pending".into()),
            b => {
                classes.push("suspect".into());
                if b == "prime" {
                    classes.push("prime".into());
                }
            }
        }
    }
    if a.excluded {
        classes.push("excluded".into());
    }
    let name = anchor(&a.reference);
    let id = if part.cards.get(&name) == Some(&k) { format!(" id=\"{}\"", part.id(&name)) } else { String::new() };
    writeln!(out, "<article class=\"{}\"{id}>", classes.join(" "))?;
    let left_out = || Preview::None { why: "preview left out to keep the page small".into() };
    let cached = a.sha256.as_ref().and_then(|h| budget.seen.get(h)).cloned();
    let preview = match cached {
        Some(p) => p,
        None if budget.left == 0 => left_out(),
        None => {
            let p = match payloads(a) {
                Ok(bytes) => thumb::preview(a, &bytes),
                Err(why) => Preview::None { why },
            };
            if let Some(h) = &a.sha256 {
                budget.seen.insert(h.clone(), p.clone());
            }
            p
        }
    };
    let preview = if preview.weight() > budget.left {
        budget.left = 0;
        left_out()
    } else {
        budget.left -= preview.weight();
        preview
    };
    write_preview(out, &preview, a)?;
    writeln!(out, "<div class=\"meta\">")?;
    write!(out, "<div class=\"badges\">")?;
    if let Some(s) = s {
        let (badge, mark) = badge(part.d, s);
        write!(out, "<span class=\"badge {badge}\">{mark}</span>")?;
    }
    if a.excluded {
        write!(out, "<span class=\"badge excluded\">excluded</span>")?;
    }
    writeln!(out, "<span class=\"v {}\">{}</span></div>", verdict_class(a.verdict), verdict(a.verdict))?;
    writeln!(out, "<h3 class=\"ref\">{}</h3>", esc(&a.reference))?;
    writeln!(out, "<dl>")?;
    row(out, "name", &format!("<span class=\"name\">{}</span>", esc(&display_name(a))))?;
    let origin = match a.origin {
        Origin::User => "user".to_string(),
        Origin::Assistant => "assistant".to_string(),
        Origin::ToolResult => {
            let mut s = format!("tool result of {}", a.tool.as_deref().map_or("a tool".into(), esc));
            if let Some(c) = &a.call_id {
                s.push_str(&format!(" (<code>{}</code>)", esc(c)));
            }
            s
        }
    };
    row(out, "origin", &format!("{origin}, line {}", a.line))?;
    let declared = a.mime_declared.as_deref().map_or("—".into(), esc);
    let detected = a.mime_detected.as_deref().map_or("unknown".into(), esc);
    let ty = match (&a.mime_declared, &a.mime_detected) {
        (Some(x), Some(y)) if x == y => declared,
        (None, Some(_)) => format!("{detected} (not declared)"),
        _ => format!("<span class=\"mime mismatch\">declared {declared}, bytes are {detected}</span>"),
    };
    row(out, "type", &ty)?;
    row(out, "size", &a.bytes.map_or("—".into(), table::size))?;
    let dm = dims(a);
    if dm != "-" {
        row(out, "dimensions", &dm)?;
    }
    if let Some(sha) = &a.sha256 {
        row(out, "sha256", &format!("<code>{}</code>", esc(&sha[..sha.len().min(16)])))?;
    }
    writeln!(out, "</dl>")?;
    if !a.problems.is_empty() {
        writeln!(out, "<ul class=\"problems\">")?;
        for p in &a.problems {
            writeln!(
                out,
                "<li class=\"{}\"><code>{}</code> {}</li>",
                verdict_class(p.severity),
                esc(p.code),
                esc(&p.message)
            )?;
        }
        writeln!(out, "</ul>")?;
    }
    if let Some(s) = s.filter(|s| !a.problems.iter().any(|p| p.message == s.why)) {
        writeln!(out, "<p class=\"why\">{}</p>", esc(&s.why))?;
    }
    writeln!(out, "</div></article>")
}

fn write_preview(out: &mut dyn Write, p: &Preview, a: &Attachment) -> io::Result<()> {
    match p {
        Preview::Image { data_url, width, height, broken } => {
            let cls = if broken.is_some() { "thumb broken" } else { "thumb" };
            writeln!(out, "<figure class=\"{cls}\">")?;
            writeln!(
                out,
                "<img src=\"{}\" width=\"{width}\" height=\"{height}\" alt=\"thumbnail of {}\">",
                esc(data_url),
                esc(&a.reference)
            )?;
            if let Some(why) = broken {
                writeln!(out, "<figcaption><span class=\"badge broken\">broken</span> {}</figcaption>", esc(why))?;
            }
            writeln!(out, "</figure>")
        }
        Preview::Pdf { pages, text } => {
            writeln!(
                out,
                "<figure class=\"thumb doc\"><div class=\"pdf\">PDF · {pages} page{}</div>",
                plural(*pages as usize)
            )?;
            if text.is_empty() {
                writeln!(out, "<p class=\"muted\">no text on page 1</p>")?;
            } else {
                writeln!(out, "<blockquote>{}</blockquote>", esc(text))?;
            }
            writeln!(out, "</figure>")
        }
        Preview::Bytes { kind, head } => writeln!(
            out,
            "<figure class=\"thumb bytes\"><div class=\"kind\">{}</div><pre>{}</pre><figcaption>first bytes</figcaption></figure>",
            esc(kind),
            esc(head)
        ),
        Preview::None { why } => {
            let label = match a.mime_detected.as_deref() {
                Some("application/pdf") if why.starts_with("does not open") => "PDF · broken",
                Some(m) if m.starts_with("image/") => "image · no preview",
                _ => "no preview",
            };
            writeln!(out, "<figure class=\"thumb none\"><div class=\"kind\">{label}</div><p>{}</p></figure>", esc(why))
        }
    }
}

/// A ref as an element id (refs are `L<line>.<n>`; anything else is escaped).
fn anchor(reference: &str) -> String {
    let safe: String =
        reference.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect();
    format!("att-{safe}")
}

fn display_name(a: &Attachment) -> String {
    a.name.clone().or_else(|| a.url.clone()).unwrap_or_else(|| "(unnamed)".into())
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "ok",
        Verdict::Warn => "warn",
        Verdict::Invalid => "invalid",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max).collect();
    t.push('…');
    t
}

const CSS: &str = r#"
:root { --fg:#1d232b; --muted:#5f6b7a; --line:#d5dbe3; --bg:#f5f7fa; --card:#fff;
  --bad:#b42318; --bad-bg:#fdecea; --good:#067647; --good-bg:#e7f6ec; --warn:#935f00; --warn-bg:#fff4d6; --accent:#3b5bdb; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color:var(--fg); background:var(--bg); }
header.summary, header.top { padding:20px 32px 14px; background:var(--card); border-bottom:1px solid var(--line); border-top:6px solid var(--good); }
.stuck > header.summary, .stuck > header.top { border-top-color:var(--bad); }
h1 { font-size:22px; margin:0 0 10px; line-height:1.35; font-weight:600; }
h2 { font-size:17px; margin:0 0 10px; }
h3 { margin:0; font-size:15px; }
main { padding:0 32px 32px; max-width:1200px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 18px; margin-top:18px; }
.state { display:inline-block; padding:2px 10px; border-radius:6px; font-size:15px; letter-spacing:.06em; vertical-align:3px; color:#fff; }
.state.bad { background:var(--bad); } .state.good { background:var(--good); }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:4px 18px; margin:0; }
dl.facts dt { color:var(--muted); }
dl.facts dd { margin:0; min-width:0; overflow-wrap:anywhere; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size:13px; }
pre { white-space:pre-wrap; overflow-wrap:anywhere; margin:0; }
pre.message { background:var(--bad-bg); border-left:3px solid var(--bad); padding:6px 10px; border-radius:4px; max-height:16em; overflow:auto; }
ol.commands { margin:0; padding-left:22px; }
ol.commands code { display:block; background:#1d232b; color:#e8edf3; padding:6px 10px; border-radius:5px; margin:3px 0; overflow-wrap:anywhere; white-space:pre-wrap; }
ul.suspects, ul.notes { margin:0; padding-left:0; list-style:none; }
ul.suspects li { padding:6px 0; border-bottom:1px solid var(--line); }
ul.suspects li:last-child { border-bottom:0; }
ul.notes li { padding:2px 0; }
a { color:var(--accent); }
a.ref, h3.ref { font-family: ui-monospace, Menlo, Consolas, monospace; font-weight:600; }
.why, .muted { color:var(--muted); }
.badge, .tag, .v { display:inline-block; font-size:12px; font-weight:600; padding:1px 8px; border-radius:10px; margin-right:4px; border:1px solid transparent; white-space:nowrap; }
.badge.prime { background:var(--bad); color:#fff; }
.badge.suspect { background:var(--warn-bg); color:var(--warn); border-color:#f0c36d; }
.badge.pending { background:#e7f0fb; color:#0b5394; border-color:#9fc1ea; }
.badge.excluded { background:#e9ecef; color:#495057; border-color:#adb5bd; }
.badge.broken { background:var(--bad-bg); color:var(--bad); border-color:#f5b5ae; }
.v.ok, .tag.good { background:var(--good-bg); color:var(--good); }
.v.warn, .tag.warn { background:var(--warn-bg); color:var(--warn); }
.v.invalid, .tag.bad { background:var(--bad-bg); color:var(--bad); }
ol.timeline { list-style:none; margin:0; padding:0; }
li.entry { border-left:3px solid var(--line); padding:6px 0 6px 14px; margin-left:4px; }
li.entry.failed { border-left-color:var(--bad); }
li.entry.role-assistant .role { color:#5b21b6; }
li.entry.role-tool .role, li.entry.role-user .role { color:#0b5394; }
.row .lines { display:inline-block; min-width:72px; color:var(--muted); font-size:13px; }
.row .role { font-weight:600; margin-right:6px; }
.row .model { font-family: ui-monospace, Menlo, Consolas, monospace; font-size:13px; color:var(--muted); margin-right:6px; }
li.run { color:var(--muted); }
li.run .role { font-weight:400; }
li.boundary { margin:10px 0; text-align:center; border-top:2px dashed var(--accent); line-height:0; }
li.boundary span { background:var(--card); color:var(--accent); font-weight:600; font-size:13px; padding:0 10px; position:relative; top:0; line-height:1.4; display:inline-block; transform:translateY(-50%); }
.cards { display:flex; flex-wrap:wrap; gap:12px; margin:8px 0 4px; }
article.card { display:flex; gap:12px; width:520px; max-width:100%; background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px; }
article.card.suspect { border-color:#f0c36d; box-shadow:0 0 0 1px #f0c36d; }
article.card.pending { border-color:#9fc1ea; }
article.card.prime { border-color:var(--bad); box-shadow:0 0 0 2px var(--bad); }
article.card.excluded { opacity:.6; }
article.card dl { display:grid; grid-template-columns:max-content 1fr; gap:0 10px; margin:6px 0; font-size:13px; }
article.card dt { color:var(--muted); }
article.card dd { margin:0; min-width:0; overflow-wrap:anywhere; }
.meta { min-width:0; flex:1; }
.badges { margin-bottom:4px; }
.mime.mismatch { color:var(--bad); font-weight:600; }
ul.problems { margin:4px 0; padding-left:18px; font-size:13px; }
ul.problems li.invalid { color:var(--bad); } ul.problems li.warn { color:var(--warn); }
ul.problems code { color:var(--fg); background:#eef1f5; padding:0 4px; border-radius:3px; }
p.why { font-size:13px; margin:4px 0 0; }
figure.thumb { margin:0; flex:0 0 200px; width:200px; min-height:120px; display:flex; flex-direction:column; align-items:center; justify-content:center; gap:4px;
  background:repeating-conic-gradient(#eceff3 0% 25%, #fff 0% 50%) 50% / 16px 16px; border:1px solid var(--line); border-radius:6px; padding:6px; overflow:hidden; }
figure.thumb img { max-width:100%; height:auto; image-rendering:auto; }
figure.thumb.broken { border:2px dashed var(--bad); }
figure.thumb figcaption { font-size:12px; color:var(--fg); background:rgba(255,255,255,.85); padding:2px 4px; border-radius:4px; }
figure.doc, figure.bytes, figure.none { background:#fafbfc; align-items:stretch; justify-content:flex-start; }
.pdf, .kind { font-weight:600; font-size:13px; }
figure.doc blockquote { margin:0; font-size:12px; color:var(--fg); max-height:9em; overflow:hidden; font-family:Georgia, serif; }
figure.bytes pre { font-size:11px; max-height:10em; overflow:hidden; color:#333; }
figure.none p { margin:0; font-size:12px; color:var(--bad); overflow-wrap:anywhere; }
table.sessions { border-collapse:collapse; margin:6px 0 4px; font-size:14px; }
table.sessions th { text-align:left; color:var(--muted); font-weight:600; border-bottom:2px solid var(--line); padding:4px 14px 4px 0; }
table.sessions td { border-bottom:1px solid var(--line); padding:4px 14px 4px 0; overflow-wrap:anywhere; }
table.sessions td.count { text-align:right; }
details.skipped { margin-top:8px; color:var(--muted); font-size:13px; }
div.session { margin-top:28px; }
div.session > header.summary { border:1px solid var(--line); border-top-width:6px; border-radius:8px; padding:14px 18px 10px; }
div.session.healthy > header.summary { border-top-color:var(--good); }
div.session.stuck > header.summary { border-top-color:var(--bad); }
div.session > header.summary h2 { font-size:19px; }
section.check ul.problems { padding-left:0; list-style:none; font-size:14px; }
section.check ul.problems li { padding:3px 0; }
.v.allowed { background:#e9ecef; color:#495057; }
p.back { margin:8px 0 0; font-size:13px; }
footer { padding:10px 32px 24px; color:var(--muted); font-size:12px; }
@media print { body { background:#fff; } section, article.card { break-inside:avoid; } }
"#;
