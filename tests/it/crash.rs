//! Crash-safe writes: `atomic::write` does what its documentation says, and a
//! process killed at any point while writing the overlay or a repaired copy
//! leaves the old file or the complete new one, never a part of it; whatever
//! temporary file a kill leaves behind is hidden and never looks like a session.

use crate::common;
use crate::common::media_corpus;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{b64, bin, wrap};
use media_corpus::Lcg;
use session_doctor::atomic::{self, Existing};
use session_doctor::overlay::Overlay;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// `.<target>.sd-tmp.<pid>.<random>`, as `atomic::write` names them.
fn is_temp(n: &str) -> bool {
    n.starts_with('.') && (n.contains(".sd-tmp.") || common::has_extension(n, "tmp"))
}

#[test]
fn the_temporary_file_is_in_the_target_folder_and_gone_after() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.json");
    atomic::write(&target, Existing::Replace, &[], |w| {
        let during = names(dir.path());
        assert!(during.len() == 1 && is_temp(&during[0]), "the bytes go to a hidden temporary file first: {during:?}");
        w.write_all(b"new")?;
        Ok(())
    })
    .unwrap();
    assert_eq!(names(dir.path()), vec!["out.json"]);
    assert_eq!(std::fs::read(&target).unwrap(), b"new");
}

#[test]
fn a_failed_fill_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.json");
    std::fs::write(&target, b"old").unwrap();
    let r = atomic::write(&target, Existing::Replace, &[], |w| {
        w.write_all(b"half")?;
        anyhow::bail!("the writer failed")
    });
    assert!(r.is_err());
    assert_eq!(std::fs::read(&target).unwrap(), b"old");
    assert_eq!(names(dir.path()), vec!["out.json"]);
}

#[test]
fn keep_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("copy.jsonl");
    std::fs::write(&target, b"old").unwrap();
    let r = atomic::write(&target, Existing::Keep, &[], |w| Ok(w.write_all(b"new")?));
    assert!(r.is_err(), "an existing file is refused");
    assert_eq!(std::fs::read(&target).unwrap(), b"old");
    assert_eq!(names(dir.path()), vec!["copy.jsonl"], "no temporary left");
    // A dangling symlink is something that exists too: not followed, not replaced.
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
    assert!(atomic::write(&link, Existing::Keep, &[], |w| Ok(w.write_all(b"new")?)).is_err());
    assert!(!dir.path().join("nowhere").exists(), "the link was followed");
}

#[test]
fn a_symlink_at_the_target_is_replaced_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, b"precious").unwrap();
    let target = dir.path().join("preview.json");
    std::os::unix::fs::symlink(&elsewhere, &target).unwrap();
    atomic::write(&target, Existing::Replace, &[], |w| Ok(w.write_all(b"new")?)).unwrap();
    assert_eq!(std::fs::read(&elsewhere).unwrap(), b"precious", "the write went through the link");
    assert!(!std::fs::symlink_metadata(&target).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"new");
}

/// A session with `n` attachments of `size` bytes each (Codex, tool results).
fn session(dir: &Path, n: usize, size: usize) -> std::path::PathBuf {
    let mut rng = Lcg(7);
    let blobs: Vec<String> = (0..n)
        .map(|i| {
            let mut png = media_corpus::png(4 + u32::try_from(i).unwrap(), 4);
            png.extend((0..size).map(|_| (rng.next() & 0xFF) as u8));
            b64(&png)
        })
        .collect();
    let items: Vec<wrap::Item<'_>> = blobs.iter().map(|b| wrap::Item { base64: b, mime: "image/png" }).collect();
    let file = dir.join("s.jsonl");
    std::fs::write(&file, wrap::session("codex", &items)).unwrap();
    file
}

/// Spawns `args`, kills it after `delay`, and waits for it.
fn killed(args: &[&str], delay: Duration) {
    let mut child =
        bin().args(args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    std::thread::sleep(delay);
    let _ = child.kill();
    let _ = child.wait();
}

fn timed(args: &[&str]) -> Duration {
    let t = Instant::now();
    let out = bin().args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    t.elapsed()
}

#[test]
fn a_killed_exclude_leaves_the_old_overlay_or_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path(), 4, 64);
    let f = file.to_str().unwrap();
    let overlay = dir.path().join("s.jsonl.doctor");
    // A large old overlay (many events) makes the write itself take a while.
    let ev = r#"{"event":"attachments.included","at":"2026-01-01T00:00:00Z","attachments":[{"ref":"L9.9","sha256":"00"}],"reason":"padding padding padding padding padding padding padding padding"}"#;
    let old: String = std::iter::repeat_n(format!("{ev}\n"), 5_000).collect();
    std::fs::write(&overlay, &old).unwrap();
    let refs = ["L3.1", "L5.1", "L7.1", "L9.1"];
    let full = timed(&["exclude", f, "--ref", "L3.1"]);
    std::fs::write(&overlay, &old).unwrap();
    let mut rng = Lcg(13);
    let mut landed = 0;
    for i in 0..50 {
        let before = std::fs::read(&overlay).unwrap();
        let r = refs[i % refs.len()];
        let undo = i / refs.len() % 2 == 1;
        let mut args = vec!["exclude", f, "--ref", r];
        if undo {
            args.push("--undo");
        }
        #[allow(clippy::cast_precision_loss, reason = "below 1200: exact")]
        let delay = full.mul_f64(rng.below(1200) as f64 / 1000.0);
        killed(&args, delay);
        let after = std::fs::read(&overlay).unwrap();
        if after != before {
            // The complete new overlay: the old bytes and one whole event line.
            assert!(after.starts_with(&before), "round {i}: the old events were changed");
            let added = &after[before.len()..];
            assert!(added.ends_with(b"\n") && memchr::memchr_iter(b'\n', added).count() == 1, "round {i}: torn");
            serde_json::from_slice::<serde_json::Value>(added).expect("a whole event");
            landed += 1;
        }
        let o = Overlay::load(&overlay).unwrap();
        assert!(o.skipped.is_empty(), "round {i}: a line that is not an event: {:?}", o.skipped);
        for n in names(dir.path()) {
            assert!(["s.jsonl", "s.jsonl.doctor", "s.jsonl.doctor.lock"].contains(&n.as_str()) || is_temp(&n), "{n}");
        }
    }
    // Not a property, a sanity check that the kills were spread out: some landed, some did not.
    eprintln!("{landed} of 50 killed excludes landed");
}

#[test]
fn a_killed_repair_leaves_no_copy_or_a_complete_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path(), 6, 256 << 10);
    let f = file.to_str().unwrap();
    let reference = dir.path().join("reference");
    std::fs::create_dir(&reference).unwrap();
    let full = timed(&["repair", f, "--force", "--out", reference.to_str().unwrap()]);
    let made = names(&reference);
    assert_eq!(made.len(), 1, "{made:?}");
    let want = std::fs::read(reference.join(&made[0])).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = out.to_str().unwrap();
    let mut rng = Lcg(99);
    let (mut complete, mut left) = (0, 0);
    for i in 0..50 {
        #[allow(clippy::cast_precision_loss, reason = "below 1200: exact")]
        let delay = full.mul_f64(rng.below(1200) as f64 / 1000.0);
        killed(&["repair", f, "--force", "--out", o], delay);
        for n in names(&out) {
            if is_temp(&n) {
                left += 1;
                continue;
            }
            assert!(common::has_extension(&n, "jsonl"), "round {i}: {n}");
            let got = std::fs::read(out.join(&n)).unwrap();
            // Same shape as the reference copy; only the fresh session id differs.
            assert_eq!(got.len(), want.len(), "round {i}: {n} is not complete");
            assert_eq!(memchr::memchr_iter(b'\n', &got).count(), memchr::memchr_iter(b'\n', &want).count());
            std::fs::remove_file(out.join(&n)).unwrap();
            complete += 1;
        }
    }
    eprintln!("{complete} of 50 killed repairs completed, {left} temporary files seen after a kill");
    // The next write into that folder removes what the killed ones left (a run
    // with nothing to repair writes nothing: --force, as the killed ones).
    let last = bin().args(["repair", f, "--force", "--out", o]).output().unwrap();
    assert!(last.status.success(), "{}", String::from_utf8_lossy(&last.stderr));
    let stray: Vec<String> = names(&out).into_iter().filter(|n| is_temp(n)).collect();
    assert!(stray.is_empty(), "temporary files of killed runs were not removed: {stray:?}");
}

#[test]
fn the_next_write_removes_what_a_killed_run_left_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path(), 1, 1 << 10);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // A process that is gone; a session-doctor that runs (waiting on its stdin);
    // a process of another name that runs (two runs under different names, a
    // link `sd` to the binary, must not delete each other's files); and a pid
    // that now names a process started at another time (a killed run's pid, reused).
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let mut running = bin().args(["scan", "-"]).stdin(std::process::Stdio::piped()).spawn().unwrap();
    let mut other = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let tag = |pid: u32| match start_time(pid) {
        Some(s) => format!("{pid}_{s}"),
        None => pid.to_string(),
    };
    let stale = out.join(format!(".s.jsonl.sd-tmp.{dead}.Ab3xYz"));
    let live = out.join(format!(".s.jsonl.sd-tmp.{}.Ab3xYz", tag(running.id())));
    let other_name = out.join(format!(".s.jsonl.sd-tmp.{}.Ab3xYz", tag(other.id())));
    let me = std::process::id();
    let reused = out.join(format!(".s.jsonl.sd-tmp.{me}_{}.Ab3xYz", start_time(me).unwrap_or(0) + 1));
    let theirs = out.join(".notes.sd-tmp.x");
    for p in [&stale, &live, &other_name, &reused, &theirs] {
        std::fs::write(p, b"half a copy").unwrap();
    }
    // --force: the session needs no repair, and only a write cleans up.
    let r = bin().args(["repair", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--force"]).output().unwrap();
    drop(running.stdin.take());
    let _ = running.wait();
    let _ = other.kill();
    let _ = other.wait();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(!stale.exists(), "a killed run's temporary file was left");
    assert!(live.exists(), "a running session-doctor's temporary file was removed");
    assert!(other_name.exists(), "a live run under another program name lost its temporary file");
    if cfg!(target_os = "linux") {
        assert!(!reused.exists(), "a killed run's file was kept because its pid now names another process");
    }
    assert!(theirs.exists(), "a file that is not session-doctor's was removed");
}

/// When process `pid` started (`/proc/<pid>/stat`, field 22), as the run tags
/// of temporary files name it.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}
