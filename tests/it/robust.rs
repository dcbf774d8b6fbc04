//! Every command on every sample and on damaged copies of them: no panic, no
//! signal, only the documented exit codes; `diagnose --json` answers with JSON
//! on a damaged session; nothing is written into the session's folder unless
//! asked, and the originals keep their bytes.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{bin, sample, sha256_file};

/// The samples that are sessions.
fn samples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(sample(""))
        .expect("samples")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.ends_with(".jsonl") || n == "cline.json"
        })
        .collect();
    v.sort();
    v
}

/// What a damaged copy looks like, by name.
fn damage(kind: &str, b: &[u8]) -> Vec<u8> {
    let lines: Vec<&[u8]> = b.split_inclusive(|c| *c == b'\n').collect();
    match kind {
        // The last line cut in the middle, as a crash mid-append leaves it.
        "cut" => {
            let last = lines.last().expect("a line").len();
            b[..b.len() - last / 2 - 1].to_vec()
        }
        // A line in the middle that is not JSON.
        "invalid-json" => {
            let mut v: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
            let mid = v.len() / 2;
            v.insert(mid, b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\"\n".to_vec());
            v.concat()
        }
        // Bytes that are not UTF-8 inside a line (in a string and between tokens).
        "invalid-utf8" => {
            let mut v = b.to_vec();
            let at = v.iter().position(|c| *c == b'"').map_or(0, |i| i + 1);
            v.splice(at..at, [0xff, 0xfe, 0xc3]);
            let mid = v.len() / 2;
            v.splice(mid..mid, [0x80, 0xff]);
            v
        }
        "bom" => [&b"\xEF\xBB\xBF"[..], b].concat(),
        "crlf" => {
            let mut v = Vec::with_capacity(b.len() + lines.len());
            for l in lines {
                match l.strip_suffix(b"\n") {
                    Some(body) => {
                        v.extend_from_slice(body);
                        v.extend_from_slice(b"\r\n");
                    }
                    None => v.extend_from_slice(l),
                }
            }
            v
        }
        _ => b.to_vec(),
    }
}

/// Fails unless the command ended by itself with 0, 1 or 2 and did not panic.
fn judge(what: &str, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(
        matches!(code, Some(0..=2)),
        "{what}: ended with {:?} (a signal or a panic); stderr:\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{what}: a panic was reported; stderr:\n{stderr}");
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Runs every command on `file`; what they write goes to `scratch`.
/// Returns the parsed `diagnose --json`.
fn every_command(file: &Path, scratch: &Path, what: &str) -> serde_json::Value {
    let f = file.to_str().unwrap();
    let overlay = scratch.join("overlay.doctor");
    let ov = overlay.to_str().unwrap();
    let html = scratch.join("page.html");
    let preview = scratch.join("preview.json");
    let repaired = scratch.join("repaired");
    std::fs::create_dir_all(&repaired).unwrap();
    let run = |args: &[&str]| {
        let out = bin().args(args).env("NO_COLOR", "1").output().expect("the binary runs");
        judge(&format!("{what}: {}", args.join(" ")), &out);
        out
    };
    run(&["scan", f]);
    run(&["scan", "--deep", "--json", f]);
    let d = run(&["diagnose", "--json", "--overlay", ov, f]);
    let diagnosed: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap_or_else(|e| {
        panic!("{what}: diagnose --json printed no JSON ({e}); stderr:\n{}", String::from_utf8_lossy(&d.stderr))
    });
    run(&["diagnose", "--overlay", ov, "--html", html.to_str().unwrap(), f]);
    run(&["exclude", "--overlay", ov, "--suspects", f]);
    run(&["exclude", "--overlay", ov, "--ref", "L1.1", f]);
    run(&["preview", "--overlay", ov, "--max-images", "1", "--out", preview.to_str().unwrap(), f]);
    run(&["repair", "--overlay", ov, "--strip-reasoning", "--out", repaired.to_str().unwrap(), f]);
    run(&["check", "--output-format", "json", f]);
    diagnosed
}

#[test]
fn every_command_on_every_sample_leaves_it_as_it_was() {
    let samples = samples();
    let before: Vec<String> = samples.iter().map(|p| sha256_file(p)).collect();
    let listed = listing(&sample(""));
    std::thread::scope(|s| {
        for chunk in samples.chunks(samples.len().div_ceil(2)) {
            s.spawn(move || {
                for p in chunk {
                    let scratch = tempfile::tempdir().unwrap();
                    every_command(p, scratch.path(), &p.display().to_string());
                }
            });
        }
    });
    let after: Vec<String> = samples.iter().map(|p| sha256_file(p)).collect();
    assert_eq!(before, after, "a sample's bytes changed");
    assert_eq!(listed, listing(&sample("")), "a file appeared in samples/");
}

#[test]
fn every_command_on_damaged_copies_answers() {
    let kinds = ["cut", "invalid-json", "invalid-utf8", "bom", "crlf"];
    let samples = samples();
    let jobs: Vec<(PathBuf, &str)> = samples.iter().flat_map(|p| kinds.iter().map(move |k| (p.clone(), *k))).collect();
    std::thread::scope(|s| {
        for chunk in jobs.chunks(jobs.len().div_ceil(2)) {
            s.spawn(move || {
                for (p, kind) in chunk {
                    let dir = tempfile::tempdir().unwrap();
                    let file = dir.path().join(p.file_name().unwrap());
                    std::fs::write(&file, damage(kind, &std::fs::read(p).unwrap())).unwrap();
                    let hash = sha256_file(&file);
                    let scratch = dir.path().join("scratch");
                    std::fs::create_dir(&scratch).unwrap();
                    let what = format!("{} ({kind})", p.file_name().unwrap().to_string_lossy());
                    let d = every_command(&file, &scratch, &what);
                    assert!(d.is_object() && d.get("stuck").is_some(), "{what}: diagnose --json answered {d}");
                    assert_eq!(hash, sha256_file(&file), "{what}: the damaged session was written");
                    let stray: Vec<String> = listing(dir.path())
                        .into_iter()
                        .filter(|n| n.contains(".sd-tmp.") || common::has_extension(n, "tmp"))
                        .collect();
                    assert!(stray.is_empty(), "{what}: temporary files left: {stray:?}");
                }
            });
        }
    });
}
