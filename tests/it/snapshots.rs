//! Each command's human output on every sample, compared whole with a committed
//! transcript in `tests/snapshots/` (a `contains` check lets an untrue line
//! through; a diff does not). Each sample is rescued as a user would: scan,
//! diagnose, exclude the suspects, diagnose again, preview, repair, check the
//! copy — on a copy in a fresh folder, stdout and stderr both shown. New session
//! ids and the times in copies' names are shown as `<uuid>` and `<time>`.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test --test it snapshots::` rewrites the transcripts;
//! review the diff like code.

use crate::common;

use std::path::Path;

/// Every sample session, by file name.
fn samples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"))
        .expect("samples/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| (common::has_extension(n, "jsonl") || common::has_extension(n, "json")) && n != "expected.json")
        .collect();
    names.sort();
    names
}

/// `text` with new session ids and the times of copies' names made stable.
fn normalize(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let hex_run = |i: usize, len: usize| i + len <= c.len() && c[i..i + len].iter().all(char::is_ascii_hexdigit);
    let digits = |i: usize, len: usize| i + len <= c.len() && c[i..i + len].iter().all(char::is_ascii_digit);
    let at = |i: usize, ch: char| c.get(i) == Some(&ch);
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        // 8-4-4-4-12 hex: a UUID.
        let mut j = i;
        let uuid = [8, 4, 4, 4, 12].into_iter().enumerate().all(|(n, len)| {
            let ok = hex_run(j, len) && (n == 4 || at(j + len, '-'));
            j += len + usize::from(n < 4);
            ok
        });
        if uuid {
            out.push_str("<uuid>");
            i = j;
            continue;
        }
        // YYYY-MM-DDTHH-MM[-SS[-mmmZ]]: the time in a copy's name (Codex, pi, Gemini CLI).
        if digits(i, 4)
            && at(i + 4, '-')
            && digits(i + 5, 2)
            && at(i + 7, '-')
            && digits(i + 8, 2)
            && at(i + 10, 'T')
            && digits(i + 11, 2)
            && at(i + 13, '-')
            && digits(i + 14, 2)
        {
            let mut j = i + 16;
            // -SS, only when it is not the start of a longer run (a UUID, Gemini's id8).
            let alnum = |k: usize| c.get(k).is_some_and(char::is_ascii_alphanumeric);
            if at(j, '-') && digits(j + 1, 2) && !alnum(j + 3) {
                j += 3;
                if at(j, '-') && digits(j + 1, 3) && at(j + 4, 'Z') {
                    j += 5;
                }
            }
            out.push_str("<time>");
            i = j;
            // Gemini CLI: `session-<time>-<8 hex>`.
            if at(j, '-') && hex_run(j + 1, 8) && !alnum(j + 9) && !at(j + 9, '-') {
                out.push_str("-<id8>");
                i = j + 9;
            }
            continue;
        }
        // YYYY/MM/DD: the day folder Codex files a rollout under.
        if digits(i, 4) && at(i + 4, '/') && digits(i + 5, 2) && at(i + 7, '/') && digits(i + 8, 2) {
            out.push_str("<day>");
            i += 10;
            continue;
        }
        out.push(c[i]);
        i += 1;
    }
    out
}

fn transcript(sample: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(sample);
    std::fs::copy(common::sample(sample), &path).expect("copy");
    // An old file: no "changed in the last few seconds" warning.
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600);
    std::fs::File::options().write(true).open(&path).and_then(|f| f.set_modified(old)).expect("mtime");
    let steps: Vec<Vec<&str>> = vec![
        vec!["scan", sample],
        vec!["diagnose", sample],
        vec!["exclude", sample, "--suspects"],
        vec!["diagnose", sample],
        vec!["preview", sample, "--out", "request.json"],
        vec!["repair", sample, "--out", "rescued"],
    ];
    std::fs::create_dir(dir.path().join("rescued")).expect("mkdir");
    let mut out = String::new();
    let mut say = |args: &[&str]| {
        let o = common::bin()
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            // Where Codex keeps rollouts, the same on every machine.
            .env("CODEX_HOME", "/nonexistent/codex-home")
            .output()
            .expect("runs");
        out.push_str(&format!("$ session-doctor {}\n", args.join(" ")));
        out.push_str(&String::from_utf8_lossy(&o.stdout));
        for line in String::from_utf8_lossy(&o.stderr).lines() {
            out.push_str(&format!("[stderr] {line}\n"));
        }
        out.push_str(&format!("[exit {}]\n\n", o.status.code().unwrap_or(-1)));
    };
    for s in &steps {
        say(s);
    }
    // The repaired copy, judged as CI would.
    let copies: Vec<String> = std::fs::read_dir(dir.path().join("rescued"))
        .expect("rescued/")
        .map(|e| format!("rescued/{}", e.expect("entry").file_name().to_string_lossy()))
        .collect();
    for c in &copies {
        say(&["check", c]);
    }
    normalize(&out)
}

#[test]
fn every_command_on_every_sample_prints_its_snapshot() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    if update {
        std::fs::create_dir_all(&dir).expect("tests/snapshots");
    }
    let mut stale = Vec::new();
    for sample in samples() {
        let got = transcript(&sample);
        let file = dir.join(format!("{sample}.txt"));
        let want = std::fs::read_to_string(&file).unwrap_or_default();
        if want != got {
            if update {
                std::fs::write(&file, &got).expect("write snapshot");
            } else {
                let first = want.lines().zip(got.lines()).position(|(a, b)| a != b).unwrap_or(0);
                let near = |t: &str| t.lines().skip(first.saturating_sub(2)).take(6).collect::<Vec<_>>().join("\n");
                stale.push(format!(
                    "{sample}: first difference at line {}\n--- snapshot\n{}\n--- binary\n{}",
                    first + 1,
                    near(&want),
                    near(&got)
                ));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nrun `UPDATE_SNAPSHOTS=1 cargo test --test it snapshots::` and review the diff",
        stale.join("\n\n")
    );
}

#[test]
fn ids_and_times_of_copies_are_normalized() {
    assert_eq!(
        normalize("wrote rollout-2026-12-01T07-51-01-01a23095-ed24-73ed-a932-c915384e108b.jsonl"),
        "wrote rollout-<time>-<uuid>.jsonl"
    );
    assert_eq!(normalize("session-2026-12-01T07-57-27744fe7.jsonl"), "session-<time>-<id8>.jsonl");
    assert_eq!(normalize("2026-12-01T07-57-46-000Z_17a71385-bd71-4dd1-b330-0366adf5a4cb.jsonl"), "<time>_<uuid>.jsonl");
    assert_eq!(normalize("L7.1 120×80 at line 10"), "L7.1 120×80 at line 10");
    assert_eq!(normalize("sessions/2026/12/01 first"), "sessions/<day> first");
}
