//! Hostile and damaged input: whatever the bytes, the reader answers with
//! findings and keeps going — it never panics, and never writes the file.

use crate::common;
use crate::common::media_corpus;

use std::path::Path;

use common::{b64, sample, scan_json, sha256_file};
use media_corpus::Lcg;
use session_doctor::media::Depth;
use session_doctor::model::Format;
use session_doctor::reader::{ReadOptions, read_session};

fn read(path: &Path, format: Format, depth: Depth) {
    let opts = ReadOptions { format: Some(format), depth, ..ReadOptions::default() };
    // Ok or a clean error: both are answers. A panic fails the test.
    let _ = read_session(path, &opts);
}

#[test]
fn mangled_samples_never_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mangled.jsonl");
    let mut rng = Lcg(42);
    // More rounds when hunting: HOSTILE_ROUNDS=5000 cargo test --release --test it hostile::
    let rounds = std::env::var("HOSTILE_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(40);
    for format in Format::ALL {
        let name = format!("{}.jsonl", format.name());
        let name = if sample(&name).exists() { name } else { format!("{}.json", format.name()) };
        let original = std::fs::read(sample(&name)).expect("sample");
        for round in 0..rounds {
            let mut bytes = original.clone();
            match round % 4 {
                0 => bytes.truncate(rng.below(bytes.len())),
                1 => {
                    for _ in 0..8 {
                        let i = rng.below(bytes.len());
                        bytes[i] ^= 1 << rng.below(8);
                    }
                }
                2 => {
                    let i = rng.below(bytes.len());
                    let junk: Vec<u8> = (0..rng.below(64)).map(|_| (rng.next() & 0xFF) as u8).collect();
                    bytes.splice(i..i, junk);
                }
                _ => {
                    // Swap two lines: parents after children, records out of order.
                    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
                    let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                    lines.swap(a, b);
                    bytes = lines.join(&b'\n');
                }
            }
            std::fs::write(&path, &bytes).expect("write");
            read(&path, format, if round % 8 == 0 { Depth::Deep } else { Depth::Structural });
        }
    }
}

#[test]
fn a_decompression_bomb_in_a_session_is_a_finding_not_an_allocation() {
    // A PNG header claiming 100000×100000 RGBA pixels (40 GB decoded), with a valid CRC.
    let png = media_corpus::png_bomb();
    let text = b64(&png);
    let items = [common::wrap::Item { base64: &text, mime: "image/png" }];
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bomb.jsonl");
    std::fs::write(&path, common::wrap::session("claude-code", &items)).expect("write");
    let before = sha256_file(&path);
    let (doc, _) = scan_json(&path, &["--deep"]);
    assert_eq!(sha256_file(&path), before);
    let a = &doc["attachments"][0];
    assert_eq!((a["width"].as_u64(), a["height"].as_u64()), (Some(100_000), Some(100_000)));
    assert_ne!(a["verdict"], "ok", "{a:#}");
}

#[test]
fn terminal_control_sequences_from_a_session_are_not_printed() {
    // A tool path holding an ANSI escape and a bidi override.
    let text = std::fs::read_to_string(sample("claude-code.jsonl")).expect("sample");
    let evil =
        text.replace("/home/dev/shop/tmp/layout-diagram.png", "/tmp/\\u001b[2J\\u001b]0;pwned\\u0007\\u202eevil.png");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("evil.jsonl");
    std::fs::write(&path, evil).expect("write");
    let out = common::run(&["scan", path.to_str().expect("utf-8")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("evil.png"), "{stdout}");
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}') && !stdout.contains('\u{202e}'), "{stdout:?}");
}

#[test]
fn utf16_text_is_refused_with_the_way_out() {
    let text = std::fs::read_to_string(sample("pi.jsonl")).expect("sample");
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("powershell.jsonl");
    std::fs::write(&path, bytes).expect("write");
    let out = common::run(&["scan", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("UTF-16"));
}

#[test]
fn compressed_sessions_are_refused_with_the_way_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl.gz");
    // A gzip member header (magic, deflate, no flags) and a little data.
    std::fs::write(&path, b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x4b\x4c\x4a\x06\x00").expect("write");
    let out = common::run(&["scan", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("compressed"));
}

/// Output lines that a hostile string forged: a line starting with `FORGED`,
/// or with `ok` and naming the forged file.
fn forged_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.trim_start().starts_with("FORGED") || l.starts_with("ok    FORGED"))
        .map(String::from)
        .collect()
}

#[test]
fn newlines_in_untrusted_strings_never_forge_output_lines() {
    let dir = tempfile::tempdir().unwrap();
    // A file name that reads as an `ok` row of `check` once its newline prints.
    let file = dir.path().join("x\nok    FORGED.jsonl (claude-code)");
    // A tool name and a file path that would start rows of their own in `scan`'s table.
    let text = std::fs::read_to_string(sample("claude-code.jsonl"))
        .unwrap()
        .replace(r#""name":"Read""#, r#""name":"Read\nFORGED tool""#)
        .replace("/home/dev/shop/docs/spec.pdf", r"spec.pdf\nFORGED L9.9 ok\r\u2028FORGED");
    std::fs::write(&file, text).unwrap();
    let f = file.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let html = dir.path().join("page.html");
    for args in [
        vec!["scan", f],
        vec!["diagnose", f],
        vec!["check", d],
        vec!["check", "--output-format", "github", d],
        vec!["exclude", f, "--ref", "L5.1"],
        vec!["repair", f, "--out", d],
        vec!["preview", f, "--out", html.to_str().unwrap()],
    ] {
        let out = common::bin().args(&args).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!stderr.contains("unexpected argument"), "{args:?}: {stderr}");
        let forged = [forged_lines(&stdout), forged_lines(&stderr)].concat();
        assert!(forged.is_empty(), "{args:?} printed forged lines {forged:?}:\n{stdout}\n{stderr}");
        assert!(!stdout.contains('\u{2028}') && !stderr.contains('\u{2028}'), "{args:?}: a raw line separator");
    }
}

/// Runs `args` with a deadline (a FIFO must not make it hang): exit code and stderr.
fn bounded(args: &[&str]) -> (Option<i32>, String) {
    let mut child = common::bin()
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Not a timing threshold: a guard against hanging the suite forever.
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    panic!("{args:?} hung");
}

#[test]
fn an_overlay_or_lock_that_is_a_link_or_a_special_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.jsonl");
    std::fs::copy(sample("claude-code.jsonl"), &s).unwrap();
    let f = s.to_str().unwrap();
    let overlay = dir.path().join("s.jsonl.doctor");
    let lock = dir.path().join("s.jsonl.doctor.lock");
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "not an overlay\n").unwrap();

    // A symlinked overlay: never read through, never copied into a new overlay.
    std::os::unix::fs::symlink(&secret, &overlay).unwrap();
    for args in [vec!["scan", f], vec!["exclude", f, "--ref", "L7.1"]] {
        let (code, err) = bounded(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("is a symbolic link"), "{args:?}: {err}");
    }
    assert!(std::fs::symlink_metadata(&overlay).unwrap().file_type().is_symlink(), "the link was replaced");
    std::fs::remove_file(&overlay).unwrap();

    // A symlinked lock: `exclude` creates nothing where it points.
    let target = dir.path().join("created-by-the-lock");
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    let (code, err) = bounded(&["exclude", f, "--ref", "L7.1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("overlay lock") && err.contains("symbolic link"), "{err}");
    assert!(!target.exists(), "the lock's link was followed");
    std::fs::remove_file(&lock).unwrap();

    // Special files: a device read forever, a FIFO that blocks.
    let fifo = dir.path().join("fifo.doctor");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for special in [Path::new("/dev/zero"), fifo.as_path()] {
        let (code, err) = bounded(&["scan", f, "--overlay", special.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{special:?}: {err}");
        assert!(err.contains("is not a regular file"), "{special:?}: {err}");
    }

    // An overlay over the cap.
    let big = dir.path().join("big.doctor");
    std::fs::File::create(&big).unwrap().set_len(session_doctor::overlay::MAX_BYTES + 1).unwrap();
    let (code, err) = bounded(&["scan", f, "--overlay", big.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("larger than 16 MiB"), "{err}");
    assert_eq!(std::fs::read(&secret).unwrap(), b"not an overlay\n");
}

/// A session naming a device, a pipe or a folder as a local attachment: none
/// is read (`/dev/zero` grew memory without end, a pipe blocked `check` for
/// ever); each is an invalid attachment that says why, and the run ends.
#[cfg(unix)]
#[test]
fn a_device_pipe_or_folder_named_as_an_attachment_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for target in ["/dev/zero", fifo.to_str().unwrap(), dir.path().to_str().unwrap()] {
        let line = serde_json::json!({"model":"gpt-4o","messages":[{"role":"user","content":[
            {"type":"image_url","image_url":{"url":target}}]}]});
        let file = dir.path().join("s.jsonl");
        std::fs::write(&file, format!("{line}\n")).unwrap();
        let (v, code) = scan_json(&file, &[]);
        assert_eq!(code, 1, "{target}: {v:#}");
        let problems = v["attachments"][0]["problems"].to_string();
        assert!(problems.contains("reference.unreadable"), "{target}: {v:#}");
    }
}

/// Side inputs are bounded: `--error-file` and `--rules` naming a device or a
/// FIFO are refused (`/dev/zero` grew memory to the limit), and `classify -`
/// reads a large stdin as its head and tail without holding all of it.
#[cfg(unix)]
#[test]
fn side_inputs_are_bounded_and_typed() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let sample = common::sample("claude-code.jsonl");
    let f = sample.to_str().unwrap();
    for special in ["/dev/zero", fifo.to_str().unwrap()] {
        let (code, err) = bounded(&["diagnose", f, "--error-file", special]);
        assert_eq!(code, Some(2), "--error-file {special}: {err}");
        assert!(err.contains("not a regular file"), "--error-file {special}: {err}");
        let (code, err) = bounded(&["scan", f, "--rules", special]);
        assert_eq!(code, Some(2), "--rules {special}: {err}");
        assert!(err.contains("not a regular file"), "--rules {special}: {err}");
    }
    // Over the whole-input size: the status word at the head and the reason at the
    // tail are both seen, as the README says.
    let body = format!("HTTP 400 {} Too many images in request: 31 > 30", "x".repeat(2 << 20));
    let mut child = common::bin()
        .args(["classify", "--json", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), body.as_bytes()).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["class"], "image_limit", "{v:#}");
    assert_eq!(v["limit"], 30, "{v:#}");
}

/// A lone surrogate escape (`"\ud83c"`: what `JSON.stringify` writes of a tool
/// output cut inside an emoji) is valid JSON to JavaScript and to RFC 8259's
/// grammar, and Claude Code reads it: the record is read, not skipped as "not
/// valid JSON" (and then dropped by `repair`, its call answered as interrupted).
#[test]
fn a_lone_surrogate_escape_keeps_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::sample("claude-code.jsonl")).unwrap();
    let cut: String = text
        .lines()
        .map(|l| l.replacen(r#""type":"text","text":""#, r#""type":"text","text":"cut \ud83c "#, 1) + "\n")
        .collect();
    assert!(cut.matches(r"\ud83c").count() >= 2, "the fixture holds lone surrogates");
    let f = dir.path().join("s.jsonl");
    std::fs::write(&f, &cut).unwrap();
    let (whole, _) = scan_json(&common::sample("claude-code.jsonl"), &[]);
    let (v, _) = scan_json(&f, &[]);
    assert_eq!(v["entries"], whole["entries"], "every record read: {:#}", v["findings"]);
    assert_eq!(v["attachments"].as_array().unwrap().len(), whole["attachments"].as_array().unwrap().len());
    let errors: Vec<&serde_json::Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").collect();
    assert!(errors.is_empty(), "{errors:#?}");
}
