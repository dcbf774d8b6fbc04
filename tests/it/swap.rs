//! A session that changes under a running `repair` is never copied: the copy
//! is made from the file the plan was made from, or not at all. Driven through
//! the library so the change lands deterministically between the plan and the
//! copy (no sleeps, no races).

use crate::common;
use crate::common::media_corpus;

use std::path::{Path, PathBuf};

use common::{b64, wrap};
use session_doctor::alias::Snapshot;
use session_doctor::reader::{ReadOptions, plan, read_with_plan};
use session_doctor::rewrite::{self, Rewrite, copy};

/// A Claude Code session with two images, `first` then `second` (widths).
fn write_session(path: &Path, first: u32, second: u32) {
    let a = b64(&media_corpus::png(first, 4));
    let b = b64(&media_corpus::png(second, 4));
    let items = [wrap::Item { base64: &a, mime: "image/png" }, wrap::Item { base64: &b, mime: "image/png" }];
    std::fs::write(path, wrap::session("claude-code", &items)).unwrap();
}

/// Plans the exclusion of the first image, then lets `change` touch the file,
/// then copies: what the copy step answers, and what it wrote.
fn repair_after(change: impl FnOnce(&Path)) -> (anyhow::Result<copy::Written>, Vec<PathBuf>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 8, 16);
    let planned = Snapshot::of(&path).unwrap();
    let opts = ReadOptions::default();
    let p = plan(&path, &opts).unwrap();
    let mut session = read_with_plan(&path, &opts, &p, None).unwrap();
    assert_eq!(session.attachments.len(), 2);
    session.attachments[0].excluded = true;
    let rw = Rewrite::plan(&session, &rewrite::RewriteOptions::default(), p.single_document);
    change(&path);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let source = copy::CopySource { path: &path, planned, reads: &[], written_by: session.written_by };
    let r = copy::repair(&source, p.format, p.single_document, &rw, &[], Some(&out));
    let made = std::fs::read_dir(&out).unwrap().flatten().map(|e| e.path()).collect();
    (r, made, dir)
}

#[test]
fn a_session_replaced_after_the_plan_is_not_copied() {
    // The agent (or a sync tool) renames a new version over the session.
    let (r, made, _dir) = repair_after(|path| {
        let other = path.with_file_name("other.jsonl");
        write_session(&other, 16, 8);
        std::fs::rename(&other, path).unwrap();
    });
    let e = format!("{:#}", r.expect_err("the old plan was applied to another file"));
    assert!(e.contains("the session changed while it was read") && e.contains("nothing was written"), "{e}");
    assert!(e.contains("replaced by another file"), "{e}");
    assert!(made.is_empty(), "a copy was written: {made:?}");
}

#[test]
fn a_line_appended_after_the_plan_is_not_copied_torn() {
    let (r, made, _dir) = repair_after(|path| {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"half").unwrap();
    });
    let e = format!("{:#}", r.expect_err("a grown session was copied"));
    assert!(e.contains("grew") && e.contains("nothing was written"), "{e}");
    assert!(made.is_empty(), "a copy was written: {made:?}");
}

#[test]
fn an_unchanged_session_is_copied() {
    let (r, made, _dir) = repair_after(|_| {});
    let w = r.unwrap();
    assert_eq!(made, vec![w.identity.path.clone()]);
    let text = std::fs::read_to_string(&made[0]).unwrap();
    assert_eq!(text.lines().count() as u64, w.lines);
}

/// What reads a session after it was planned (the reader itself, the deep
/// re-check of suspects, a preview, the thumbnails) reads the file the plan
/// opened: a new version renamed over the path lends them none of its bytes.
#[test]
fn a_session_replaced_after_the_plan_is_read_from_the_file_planned() {
    use session_doctor::reader::Source;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 8, 16);
    let opts = ReadOptions::default();
    let p = plan(&path, &opts).unwrap();
    let other = path.with_file_name("other.jsonl");
    write_session(&other, 24, 32);
    std::fs::rename(&other, &path).unwrap();
    let session = read_with_plan(&path, &opts, &p, None).unwrap();
    let widths: Vec<Option<u32>> = session.attachments.iter().map(|a| a.width).collect();
    assert_eq!(widths, vec![Some(8), Some(16)], "read the file renamed over the session");
    // A range read again later is the planned file's too.
    let span = session.attachments[1].span.expect("a span");
    let again = Source::of(&p, &path).read_range(span.offset, span.len).unwrap();
    assert_eq!(again, b64(&media_corpus::png(16, 4)).into_bytes());
}
