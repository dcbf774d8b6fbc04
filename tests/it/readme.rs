//! The console examples of the documentation, run against this build: every
//! `` ```console `` block of `README.md`, `CONTRIBUTING.md` and every `docs/*.md` is a
//! transcript (`$ command` lines, each followed by the stdout it prints), run in
//! a fresh folder holding a copy of `samples/`, with `/tmp` standing for another
//! fresh folder. A block the samples cannot reproduce (a home directory's
//! sessions, a `recordings/` tree) says so in an HTML comment just before it:
//! `<!-- readme-test: skip (why) -->`. Session ids are compared as `<uuid>` (a
//! repair makes a new one every time).
//!
//! `UPDATE_README=1 cargo test --test it readme::` writes what the binary printed
//! into the blocks, each in the file it came from; the test then passes and
//! `git diff` shows the change.

use std::path::{Path, PathBuf};
use std::process::Command;

const SKIP: &str = "<!-- readme-test: skip";

/// One console block: where its body starts in its file, the line of its
/// opening fence, and its text.
struct Block {
    body: std::ops::Range<usize>,
    line: usize,
    text: String,
    skip: bool,
}

fn blocks(file: &str, doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = doc[at..].find("```console\n") {
        let start = at + i + "```console\n".len();
        let line = doc[..at + i].matches('\n').count() + 1;
        let close = doc[start..]
            .find("```\n")
            .unwrap_or_else(|| panic!("{file}: the console block at line {line} is not closed"));
        let end = start + close;
        let before = doc[..at + i].trim_end();
        let last = before.lines().last().unwrap_or_default();
        out.push(Block { body: start..end, line, text: doc[start..end].to_string(), skip: last.starts_with(SKIP) });
        at = end + 4;
    }
    out
}

/// The files whose console blocks are run, relative to the repository: the
/// README, CONTRIBUTING.md when there is one, and every `docs/*.md` in name order.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(root).expect("under the root").to_path_buf())
        .collect();
    docs.sort();
    let mut out = vec![PathBuf::from("README.md")];
    if root.join("CONTRIBUTING.md").exists() {
        out.push(PathBuf::from("CONTRIBUTING.md"));
    }
    out.extend(docs);
    out
}

/// The commands of a block and the output the file shows for each.
fn transcript(block: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.push((cmd.to_string(), String::new()));
        } else if let Some((_, said)) = out.last_mut() {
            said.push_str(line);
            said.push('\n');
        }
    }
    out
}

/// `text` with every UUID (8-4-4-4-12 hex digits) spelled `<uuid>`.
fn normalize(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let uuid_at = |i: usize| {
        let mut j = i;
        for (n, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
            if !(j + len <= c.len() && c[j..j + len].iter().all(char::is_ascii_hexdigit)) {
                return None;
            }
            j += len;
            if n < 4 {
                if c.get(j) != Some(&'-') {
                    return None;
                }
                j += 1;
            }
        }
        Some(j)
    };
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        if let Some(end) = uuid_at(i) {
            out.push_str("<uuid>");
            i = end;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Runs the block's commands in one POSIX shell (so `cd` and `echo $?` work),
/// in a fresh folder with `samples/`, `/tmp` replaced by a fresh folder; returns
/// each command's stdout.
fn run(commands: &[String]) -> Vec<String> {
    const SEP: &str = "\u{1e}";
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().expect("work dir");
    let tmp = tempfile::tempdir().expect("tmp dir");
    let samples = work.path().join("samples");
    std::fs::create_dir(&samples).expect("samples/");
    for e in std::fs::read_dir(root.join("samples")).expect("samples") {
        let p = e.expect("entry").path();
        std::fs::copy(&p, samples.join(p.file_name().expect("name"))).expect("copy sample");
    }
    let mut script = String::new();
    for c in commands {
        let c = c.replace("/tmp", &tmp.path().display().to_string());
        // The separator must not reset `$?` for an `echo $?` that follows.
        script.push_str(&format!("{c}\n__rc=$?; printf '{SEP}'; (exit $__rc)\n"));
    }
    let bin_dir: PathBuf = Path::new(env!("CARGO_BIN_EXE_session-doctor")).parent().expect("bin dir").into();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(work.path())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .expect("sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout.split(SEP).take(commands.len()).map(|s| s.replace(&tmp.path().display().to_string(), "/tmp")).collect()
}

#[test]
fn the_console_examples_of_the_docs_are_what_the_binary_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("UPDATE_README").is_some();
    let mut checked = 0;
    let mut stale = Vec::new();
    for file in documents(root) {
        let path = root.join(&file);
        let name = file.display().to_string();
        let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rewritten = doc.clone();
        let found = blocks(&name, &doc);
        let count = found.len();
        // From the end, so that earlier ranges stay where they are when rewriting.
        for (n, block) in found.into_iter().enumerate().rev() {
            if block.skip {
                continue;
            }
            checked += 1;
            let steps = transcript(&block.text);
            let commands: Vec<String> = steps.iter().map(|(c, _)| c.clone()).collect();
            let got = run(&commands);
            let mut body = String::new();
            for ((cmd, want), got) in steps.iter().zip(&got) {
                let (want_n, got_n) = (normalize(want.trim_end()), normalize(got.trim_end()));
                if want_n != got_n {
                    let at = format!("{name}, console block {} of {count} (line {})", n + 1, block.line);
                    stale.push(format!("{at}:\n$ {cmd}\n--- {name}\n{want_n}\n--- binary\n{got_n}\n"));
                }
                body.push_str(&format!("$ {cmd}\n"));
                if !got.trim_end().is_empty() {
                    body.push_str(got.trim_end());
                    body.push('\n');
                }
                // A blank line between one command's output and the next command, as written.
                if want.ends_with("\n\n") {
                    body.push('\n');
                }
            }
            rewritten.replace_range(block.body.clone(), &body);
        }
        if update && rewritten != doc {
            std::fs::write(&path, rewritten).unwrap_or_else(|e| panic!("write {name}: {e}"));
        }
    }
    assert!(checked >= 4, "only {checked} console blocks checked");
    if update {
        return;
    }
    assert!(stale.is_empty(), "{}\nrun `UPDATE_README=1 cargo test --test it readme::`", stale.join("\n"));
}

#[test]
fn uuids_are_normalized_and_the_rest_kept() {
    assert_eq!(normalize("claude --resume fb7c93c3-a895-4c97-9e91-700ba26fcdfd."), "claude --resume <uuid>.");
    assert_eq!(normalize("120×80 L7.1 abc-def"), "120×80 L7.1 abc-def");
}
