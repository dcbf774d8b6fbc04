//! The console examples of the documentation, run against this build: every
//! `` ```console `` block of `README.md`, `CONTRIBUTING.md` and every `docs/*.md` is a
//! transcript (`$ command` lines, each followed by the stdout it prints), run in
//! a fresh folder holding a copy of `samples/` and the `recordings/` tree of
//! [`RECORDINGS`] (what `docs/check.md` checks), with `/tmp` standing for another
//! fresh folder, and `HOME` a third one holding the sessions of [`HOME_SESSIONS`]
//! (what `docs/sessions.md` lists; its path printed as `/home/dev`). A block that
//! cannot be reproduced so (a terminal's width) says so in an HTML comment just before it:
//! `<!-- readme-test: skip (why) -->`. Session ids are compared as `<uuid>` (a
//! repair makes a new one every time), RFC 3339 times as `<time>` (a file's
//! modification time is the test's).
//!
//! `UPDATE_README=1 cargo test --test it readme::` writes what the binary printed
//! into the blocks, each in the file it came from; the test then passes and
//! `git diff` shows the change.

use std::path::{Path, PathBuf};
use std::process::Command;

const SKIP: &str = "<!-- readme-test: skip";

/// The `recordings/` tree `docs/check.md`'s examples check, as a team keeps one:
/// a healthy Codex rollout, two stuck sessions and a note that is no session.
const RECORDINGS: &[(&str, &str)] = &[
    ("recordings/evals/codex-ok.jsonl", "tests/data/agents/codex/view-image-refused.jsonl"),
    ("recordings/evals/pi-resize.jsonl", "samples/pi.jsonl"),
    ("recordings/support-1042.jsonl", "samples/claude-code.jsonl"),
    ("recordings/README.md", "tests/data/agents/codex/README.md"),
];

/// The sessions in the home folder `docs/sessions.md`'s examples list: where
/// each agent keeps one, the sample it holds, and how many seconds ago it was
/// last written (in the middle of the minute, hour or day `sessions` prints).
const HOME_SESSIONS: &[(&str, &str, u64)] = &[
    (
        ".claude/projects/-home-dev-shop/1f0e2d3c-4b5a-4978-8899-aabbccddeeff.jsonl",
        "samples/claude-code.jsonl",
        4 * 60 + 30,
    ),
    (
        ".codex/sessions/2026/08/11/rollout-2026-08-11T09-12-40-0198a3f2-7c1d-7e55-b0a4-3c2e1f0d9e8a.jsonl",
        "samples/codex.jsonl",
        3 * 3600 + 1800,
    ),
    (
        ".pi/agent/sessions/--home-dev-shop--/2026-08-10T16-02-11-204Z_5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a.jsonl",
        "samples/pi.jsonl",
        36 * 3600,
    ),
    (".mux/sessions/7c1d0e55/chat.jsonl", "samples/mux.jsonl", 60 * 3600),
];

/// What may point the examples elsewhere than `HOME`, unset for them so that
/// only [`HOME_SESSIONS`] is listed: every variable that moves an agent's
/// store (`discover::VARS`, so a new one is unset too) and the XDG config home.
fn session_vars() -> impl Iterator<Item = &'static str> {
    session_doctor::discover::VARS.into_iter().chain(["XDG_CONFIG_HOME"])
}

/// A fresh home folder holding [`HOME_SESSIONS`], each modified its seconds ago.
fn home(root: &Path) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("home dir");
    let now = std::time::SystemTime::now();
    for (to, from, ago) in HOME_SESSIONS {
        let to = home.path().join(to);
        std::fs::create_dir_all(to.parent().expect("a folder")).expect("session folder");
        std::fs::copy(root.join(from), &to).unwrap_or_else(|e| panic!("copy {from}: {e}"));
        let file = std::fs::File::options().write(true).open(&to).expect("open the copy");
        file.set_modified(now - std::time::Duration::from_secs(*ago)).expect("set its modification time");
    }
    home
}

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

/// `text` with every UUID (8-4-4-4-12 hex digits) spelled `<uuid>` and every
/// RFC 3339 UTC time (`2026-11-30T01:53:59Z`) `<time>`.
fn normalize(text: &str) -> String {
    let text = uuids(text);
    let c: Vec<char> = text.chars().collect();
    let shape = "dddd-dd-ddTdd:dd:ddZ";
    let time_at = |i: usize| {
        (i + shape.len() <= c.len()
            && shape.chars().zip(&c[i..]).all(|(s, x)| if s == 'd' { x.is_ascii_digit() } else { s == *x }))
        .then_some(i + shape.len())
    };
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        if let Some(end) = time_at(i) {
            out.push_str("<time>");
            i = end;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// `text` with every UUID (8-4-4-4-12 hex digits) spelled `<uuid>`.
fn uuids(text: &str) -> String {
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
    for (to, from) in RECORDINGS {
        let to = work.path().join(to);
        std::fs::create_dir_all(to.parent().expect("a folder")).expect("recordings/");
        std::fs::copy(root.join(from), &to).unwrap_or_else(|e| panic!("copy {from}: {e}"));
    }
    let mut script = String::new();
    for c in commands {
        let c = c.replace("/tmp", &tmp.path().display().to_string());
        // The separator must not reset `$?` for an `echo $?` that follows.
        script.push_str(&format!("{c}\n__rc=$?; printf '{SEP}'; (exit $__rc)\n"));
    }
    let bin_dir: PathBuf = Path::new(env!("CARGO_BIN_EXE_session-doctor")).parent().expect("bin dir").into();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let home = home(root);
    let mut sh = Command::new("sh");
    for var in session_vars() {
        sh.env_remove(var);
    }
    let out = sh
        .arg("-c")
        .arg(&script)
        .current_dir(work.path())
        .env("PATH", path)
        .env("HOME", home.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let (home, tmp) = (home.path().display().to_string(), tmp.path().display().to_string());
    stdout.split(SEP).take(commands.len()).map(|s| s.replace(&home, "/home/dev").replace(&tmp, "/tmp")).collect()
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
    assert_eq!(normalize(r#""modified": "2026-11-30T01:53:59Z","#), r#""modified": "<time>","#);
    assert_eq!(normalize("2026-11-30 01:53"), "2026-11-30 01:53");
}
