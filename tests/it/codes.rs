//! Problem codes are data (`src/codes.rs`): every code literal in `src/` is
//! registered, every registered code is used, and the table of codes in
//! `docs/codes.md` is generated from the registry. `UPDATE_CODES=1 cargo test
//! --test it codes::` rewrites the table between its markers.

use std::path::{Path, PathBuf};

use session_doctor::codes::{self, CODES};

const BEGIN: &str = "<!-- codes:begin (generated: UPDATE_CODES=1 cargo test --test it codes::) -->\n";
const END: &str = "<!-- codes:end -->";

/// Dotted literals in `src/` that are not problem codes: event names, model ids.
const NOT_CODES: &[&str] = &[
    "response.failed",
    "response.completed",
    "attachments.excluded",
    "attachments.included",
    "attachments.inc",
    // The overlay's context-fit events (src/overlay.rs).
    "context.fitted",
    "context.unfitted",
    "anthropic.claude",
    // JSON paths providers name in their errors (classify's term families).
    "thinking.type",
    "function.name",
    "content.type",
    // Codex's content item kinds (src/formats/codex/mod.rs, `starts_turn`).
    "images.preparation_error",
    "images.unsupported",
    "audio.unsupported",
    // Qwen Code's telemetry event member (src/formats/qwen_code/).
    "event.name",
    // GitHub Copilot CLI's event types (src/formats/copilot/).
    "assistant.message",
    "session.binary_asset",
    "session.compaction_complete",
    "session.context_cleared",
    "session.error",
    "session.model_change",
    "session.resume",
    "session.start",
    "session.usage_record",
    "session.warning",
    "tool.execution_complete",
    "user.message",
];

/// The last part of a dotted literal that makes it a file or host name.
const NAME_ENDINGS: &[&str] =
    &["json", "jsonl", "png", "pdf", "doctor", "cpp", "com", "dev", "ai", "db", "html", "google"];

/// `"family.name"` string literals (lower-case words joined by dots).
fn dotted_literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in text.split('"').skip(1).step_by(2) {
        let parts: Vec<&str> = piece.split('.').collect();
        let word = |w: &&str| {
            w.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        };
        if (2..=3).contains(&parts.len()) && parts.iter().all(word) && !NAME_ENDINGS.contains(parts.last().unwrap()) {
            out.push(piece.to_string());
        }
    }
    out
}

fn used_codes() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = crate::common::rust_files(&root.join("src"));
    let mut out = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("codes.rs")) {
        let text = std::fs::read_to_string(f).expect("read");
        for lit in dotted_literals(&text) {
            if !NOT_CODES.contains(&lit.as_str()) {
                out.push((lit, f.strip_prefix(root).unwrap().to_path_buf()));
            }
        }
    }
    out
}

/// A literal names a registered code, or a pattern family (`session.stuck` + `.<class>`).
fn registered(lit: &str) -> bool {
    codes::lookup(lit).is_some() || CODES.iter().any(|c| c.code == format!("{lit}.<class>"))
}

#[test]
fn every_code_used_in_src_is_registered() {
    let used = used_codes();
    for known in ["png.truncated", "line.invalid_json", "history.parent_cycle", "request.too_many_images"] {
        assert!(used.iter().any(|(c, _)| c == known), "the scan of src/ misses {known}");
    }
    let missing: Vec<String> =
        used.iter().filter(|(c, _)| !registered(c)).map(|(c, f)| format!("{c} ({})", f.display())).collect();
    assert!(
        missing.is_empty(),
        "codes used in src/ but not registered in src/codes.rs (or, if not a code, listed in NOT_CODES here):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_registered_code_is_used() {
    let used = used_codes();
    let unused: Vec<&str> = CODES
        .iter()
        .map(|c| c.code.strip_suffix(".<class>").unwrap_or(c.code))
        .filter(|c| !used.iter().any(|(u, _)| u == c))
        .collect();
    assert!(unused.is_empty(), "registered but never used in src/: {unused:?}");
}

#[test]
fn docs_table_of_codes_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/codes.md");
    let doc = std::fs::read_to_string(&path).expect("docs/codes.md");
    let start = doc.find(BEGIN).expect("docs/codes.md has the codes:begin marker") + BEGIN.len();
    let end = doc[start..].find(END).expect("docs/codes.md has the codes:end marker") + start;
    let table = codes::markdown_table();
    if doc[start..end] != table {
        if std::env::var_os("UPDATE_CODES").is_some() {
            let updated = format!("{}{table}{}", &doc[..start], &doc[end..]);
            std::fs::write(&path, updated).expect("write docs/codes.md");
        } else {
            panic!("the table of codes in docs/codes.md is stale: run `UPDATE_CODES=1 cargo test --test it codes::`");
        }
    }
}
