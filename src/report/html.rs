//! `diagnose --html`: one self-contained page that shows the session, with
//! thumbnails of what is to blame.
//!
//! The page loads nothing: styles are inline, thumbnails are `data:` URLs, there
//! is no script, and a Content-Security-Policy forbids any other load should a
//! browser find one. Everything that comes from the session (names, paths,
//! errors, tool output, first bytes) is untrusted: control characters are made
//! visible first (as the terminal printers do), then the text is HTML-escaped.

pub mod thumb;

use std::io::{self, Write};

use crate::diagnose::{Diagnosis, Source, Suspect};
use crate::media::Verdict;
use crate::model::{Attachment, Entry, Origin, Role, Severity};

use super::scan::{dims, verdict};
use super::{sanitize, table};
use thumb::Preview;

/// Most bytes of previews (thumbnails, text) one page carries: past it, cards
/// say the preview was left out, so a session with many images stays small.
pub const PREVIEW_BUDGET: usize = 2_400_000;

/// Where the page gets an attachment's bytes (read back from the session file).
pub type Payloads<'a> = &'a dyn Fn(&Attachment) -> Result<Vec<u8>, String>;

/// Text made safe for HTML text and quoted attribute values: terminal
/// controls sanitized first, then markup escaped.
pub fn esc(s: &str) -> String {
    crate::report::markup_escape(&sanitize(s))
}

/// The agent that writes a session format, for the header.
fn agent(format: &str) -> &'static str {
    match format {
        "claude-code" => "Claude Code",
        "codex" => "OpenAI Codex CLI",
        "pi" => "pi",
        "gemini-cli" => "Gemini CLI",
        "mux" => "mux",
        "opencode" => "opencode",
        _ => "none (a provider request body)",
    }
}

/// Writes the page for `d`. `detected`: the format was detected, not given.
pub fn write(out: &mut dyn Write, d: &Diagnosis, detected: bool, payloads: Payloads<'_>) -> io::Result<()> {
    let state = if d.stuck { "stuck" } else { "healthy" };
    writeln!(out, "<!DOCTYPE html>")?;
    writeln!(out, "<html lang=\"en\"><head><meta charset=\"utf-8\">")?;
    writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">"
    )?;
    writeln!(out, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")?;
    writeln!(out, "<meta name=\"generator\" content=\"session-doctor {}\">", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "<title>{state}: {} — session-doctor</title>", esc(&file_name(&d.file)))?;
    writeln!(out, "<style>{CSS}</style></head>")?;
    writeln!(out, "<body class=\"{state}\">")?;
    header(out, d, detected)?;
    writeln!(out, "<main>")?;
    failure(out, d)?;
    next(out, d)?;
    suspects(out, d)?;
    remarks(out, d)?;
    timeline(out, d, payloads)?;
    writeln!(out, "</main>")?;
    writeln!(
        out,
        "<footer>Written by session-doctor {} · the session file was only read · this page loads nothing from the network</footer>",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(out, "</body></html>")
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path).file_name().map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn header(out: &mut dyn Write, d: &Diagnosis, detected: bool) -> io::Result<()> {
    let (badge, class) = if d.stuck { ("STUCK", "bad") } else { ("NOT STUCK", "good") };
    writeln!(out, "<header id=\"summary\">")?;
    writeln!(
        out,
        "<h1><span class=\"state {class}\">{badge}</span> <span class=\"verdict\">{}</span></h1>",
        esc(&d.verdict)
    )?;
    writeln!(out, "<dl class=\"facts\">")?;
    row(out, "file", &format!("<code>{}</code>", esc(&d.file)))?;
    let how = if detected { "detected" } else { "given" };
    row(out, "format", &format!("{} ({how})", esc(d.format)))?;
    row(out, "agent", agent(d.format))?;
    let model = d.model.as_deref().map_or("unknown".into(), esc);
    row(out, "provider / model", &format!("{} / {model}", esc(&d.provider)))?;
    row(out, "history", &format!("{} lines, {} entries, {} attachments", d.lines, d.entries, d.attachments))?;
    writeln!(out, "</dl></header>")
}

fn row(out: &mut dyn Write, name: &str, html: &str) -> io::Result<()> {
    writeln!(out, "<dt>{name}</dt><dd>{html}</dd>")
}

fn failure(out: &mut dyn Write, d: &Diagnosis) -> io::Result<()> {
    let Some(f) = &d.failure else {
        return writeln!(out, "<section id=\"failure\"><h2>Failure</h2><p>None recorded.</p></section>");
    };
    let c = &f.classification;
    writeln!(out, "<section id=\"failure\"><h2>Failure</h2><dl class=\"facts\">")?;
    let retry = match c.retryable {
        Some(true) => "<span class=\"tag good\">retryable</span> a retry can work",
        Some(false) => "<span class=\"tag bad\">not retryable</span> every retry fails the same way",
        None => "<span class=\"tag\">unknown</span>",
    };
    row(out, "class", &format!("<code class=\"class\">{}</code> {retry}", esc(&c.class.to_string())))?;
    let whence = match (f.source, f.line) {
        (Source::Recorded, Some(l)) => format!("recorded at <a href=\"#line-{l}\">line {l}</a>"),
        (Source::Recorded, None) => "recorded".into(),
        (Source::Given, _) => "given on the command line".into(),
        (Source::Predicted, _) => "predicted: no error is recorded, the history alone says so".into(),
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

fn next(out: &mut dyn Write, d: &Diagnosis) -> io::Result<()> {
    if d.next.is_empty() {
        return Ok(());
    }
    writeln!(out, "<section id=\"next\"><h2>Next</h2><ol class=\"commands\">")?;
    for c in &d.next {
        writeln!(out, "<li><code>{}</code></li>", esc(c))?;
    }
    writeln!(out, "</ol></section>")
}

fn suspects(out: &mut dyn Write, d: &Diagnosis) -> io::Result<()> {
    if d.suspects.is_empty() {
        return Ok(());
    }
    let n = d.suspects.len();
    writeln!(out, "<section id=\"suspects\"><h2>{n} suspect{}</h2><ul class=\"suspects\">", plural(n))?;
    for s in &d.suspects {
        let a = &s.attachment;
        let (class, mark) = if s.prime { ("suspect prime", "prime suspect") } else { ("suspect", "suspect") };
        writeln!(
            out,
            "<li class=\"{class}\"><span class=\"badge {}\">{mark}</span> <a class=\"ref\" href=\"#{}\">{}</a> <span class=\"name\">{}</span> <span class=\"v {}\">{}</span><br><span class=\"why\">{}</span></li>",
            if s.prime { "prime" } else { "suspect" },
            anchor(&a.reference),
            esc(&a.reference),
            esc(&display_name(a)),
            verdict_class(a.verdict),
            verdict(a.verdict),
            esc(&s.why),
        )?;
    }
    writeln!(out, "</ul></section>")
}

fn remarks(out: &mut dyn Write, d: &Diagnosis) -> io::Result<()> {
    let damaged: Vec<_> = d.findings.iter().filter(|f| f.severity >= Severity::Warning).collect();
    if d.excluded.is_empty() && d.limits.is_empty() && d.notes.is_empty() && damaged.is_empty() {
        return Ok(());
    }
    writeln!(out, "<section id=\"notes\"><h2>Notes</h2><ul class=\"notes\">")?;
    if !d.excluded.is_empty() {
        let refs: Vec<String> =
            d.excluded.iter().map(|r| format!("<a class=\"ref\" href=\"#{}\">{}</a>", anchor(r), esc(r))).collect();
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
/// sha256 (sessions re-send the same image often: it is decoded once).
struct Budget {
    left: usize,
    seen: std::collections::HashMap<String, Preview>,
}

/// One row of the timeline: a run of plain entries is folded into one.
enum Row {
    Entry(usize),
    Run(Vec<usize>),
}

fn timeline(out: &mut dyn Write, d: &Diagnosis, payloads: Payloads<'_>) -> io::Result<()> {
    let h = &d.timeline;
    let last_accepted = h.entries.iter().rposition(|e| e.accepted);
    let boundary = d.boundary.as_ref().map(|b| b.line);
    let mut by_entry: Vec<Vec<&Attachment>> = vec![Vec::new(); h.entries.len()];
    for a in &h.attachments {
        if let Some(v) = by_entry.get_mut(a.entry) {
            v.push(a);
        }
    }
    let failure_line = d.failure.as_ref().and_then(|f| f.line);
    let plain = |i: usize, e: &Entry| {
        by_entry[i].is_empty() && e.error.is_none() && Some(e.line) != boundary && Some(e.line) != failure_line
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

    writeln!(out, "<section id=\"timeline\"><h2>History as the provider sees it</h2>")?;
    if h.entries.is_empty() {
        writeln!(out, "<p>No provider-visible entries.</p>")?;
    }
    writeln!(out, "<ol class=\"timeline\">")?;
    let mut budget = Budget { left: PREVIEW_BUDGET, seen: std::collections::HashMap::new() };
    let suspect = |a: &Attachment| d.suspects.iter().find(|s| s.attachment.reference == a.reference);
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
    for r in rows {
        match r {
            Row::Run(run) if run.len() <= 2 => {
                for i in run {
                    entry_row(out, &h.entries[i], status(i), &[], &suspect, payloads, &mut budget)?;
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
            Row::Entry(i) => {
                let e = &h.entries[i];
                entry_row(out, e, status(i), &by_entry[i], &suspect, payloads, &mut budget)?;
                if Some(e.line) == boundary {
                    let model = d.boundary.as_ref().and_then(|b| b.model.as_deref()).or(d.model.as_deref());
                    writeln!(
                        out,
                        "<li class=\"boundary\" id=\"boundary\"><span>acceptance boundary: {} accepted everything above (line {}); below, it has not</span></li>",
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

fn entry_row<'d>(
    out: &mut dyn Write,
    e: &Entry,
    (st, cls): (&str, &str),
    atts: &[&Attachment],
    suspect: &dyn Fn(&Attachment) -> Option<&'d Suspect>,
    payloads: Payloads<'_>,
    budget: &mut Budget,
) -> io::Result<()> {
    let r = role(e.role);
    let failed = if e.error.is_some() { " failed" } else { "" };
    writeln!(out, "<li class=\"entry role-{r}{failed}\" id=\"line-{}\"><div class=\"row\">", e.line)?;
    write!(out, "<span class=\"lines\">line {}</span> <span class=\"role\">{r}</span>", e.line)?;
    if let Some(m) = &e.model {
        write!(out, " <span class=\"model\">{}</span>", esc(m))?;
    }
    writeln!(out, " <span class=\"tag {cls}\">{st}</span></div>")?;
    if let Some(err) = &e.error {
        let status = err.status.map_or(String::new(), |s| format!("HTTP {s}: "));
        writeln!(out, "<pre class=\"message\">{status}{}</pre>", esc(&clip(&err.text, 2000)))?;
    }
    if !atts.is_empty() {
        writeln!(out, "<div class=\"cards\">")?;
        for a in atts {
            card(out, a, suspect(a), payloads, budget)?;
        }
        writeln!(out, "</div>")?;
    }
    writeln!(out, "</li>")
}

fn card(
    out: &mut dyn Write,
    a: &Attachment,
    s: Option<&Suspect>,
    payloads: Payloads<'_>,
    budget: &mut Budget,
) -> io::Result<()> {
    let mut classes = vec!["card".to_string(), format!("v-{}", verdict_class(a.verdict))];
    if let Some(s) = s {
        classes.push("suspect".into());
        if s.prime {
            classes.push("prime".into());
        }
    }
    if a.excluded {
        classes.push("excluded".into());
    }
    writeln!(out, "<article class=\"{}\" id=\"{}\">", classes.join(" "), anchor(&a.reference))?;
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
        if s.prime {
            write!(out, "<span class=\"badge prime\">prime suspect</span>")?;
        } else {
            write!(out, "<span class=\"badge suspect\">suspect</span>")?;
        }
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
header#summary { padding:20px 32px 14px; background:var(--card); border-bottom:1px solid var(--line); border-top:6px solid var(--good); }
body.stuck header#summary { border-top-color:var(--bad); }
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
footer { padding:10px 32px 24px; color:var(--muted); font-size:12px; }
@media print { body { background:#fff; } section, article.card { break-inside:avoid; } }
"#;
