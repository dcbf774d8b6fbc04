//! `--ref` as `scan` and `exclude` take it, and what to say when one names nothing.

use crate::model::{Attachment, Ref};

pub fn parse_ref(s: &str) -> Result<Ref, String> {
    Ref::parse(s).map_err(|e| e.to_string())
}

/// The refs a user probably meant: those on the nearest lines.
pub fn nearby(attachments: &[Attachment], q: &Ref) -> String {
    let line = match q {
        Ref::At { line, .. } => *line,
        Ref::Sha256(_) => 0,
    };
    let mut refs: Vec<(u64, &str)> =
        attachments.iter().map(|a| (a.line.abs_diff(line), a.reference.as_str())).collect();
    refs.sort_unstable();
    let shown: Vec<&str> = refs.iter().take(6).map(|(_, r)| *r).collect();
    if shown.is_empty() {
        "; the session holds no attachment".into()
    } else {
        format!("; nearby: {}", shown.join(", "))
    }
}
