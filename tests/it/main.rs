//! The integration tests, one binary (`cargo test --test it`): the crate is linked
//! once, not once per file. Each file here is a module, one area each; run one area
//! with its module path as the filter, e.g. `cargo test --test it readme::` (a filter
//! is a substring: `html::` runs `check_html::` too, `layouts::` the agents' layouts).
//! A new file must be declared below: `every_test_file_is_a_module` fails otherwise.

// Shared helpers (run the binary, session wrappers, the media corpus, page checks);
// `tests/common/`, where the fuzz crate also finds `wrap.rs`.
#[path = "../common/mod.rs"]
mod common;

// `crate::wrap`, as `fuzz/src/targets.rs` names it (the fuzz crate has it at its root).
use common::wrap;

// What an adversary's review found untrue in verdicts and advice, on Claude Code sessions.
mod adversary;
// Claude Code sessions the real agent wrote: verdicts and the request `preview` makes.
mod agent_claude_code;
// Claude Code's newer layouts: persisted tool results, subagents, forks.
mod agent_claude_code_layouts;
// Cline CLI tasks the real CLI wrote: stuck on a cut PNG, killed mid-tool and resumed.
mod agent_cline;
// Codex CLI rollouts the real agent wrote: failed turns, what it sends, where it resumes.
mod agent_codex;
// Codex rollouts compressed to `.jsonl.zst`, and `compacted` lines that carry an image.
mod agent_codex_layouts;
// Kiro CLI sessions built to its documented layout (not on npm, not driven): images as byte lists.
mod agent_kiro;
// GitHub Copilot CLI sessions the real CLI wrote: a cut PNG attached, a `view` not sent.
mod agent_copilot;
mod agent_qwen_code;
// Gemini CLI sessions the real CLI wrote: stuck, resumed, refused for its images.
mod agent_gemini_cli;
// opencode's database as the real agent wrote it: healthy, read without a file beside it.
mod agent_kilo;
mod agent_opencode;
// pi sessions against the requests the real pi sent from them.
mod agent_pi;
// Every format: an attachment's block path in the previewed request names it back.
mod blocks_roundtrip;
// Bounds on every command: huge lines, deep nesting, many lines, decode limits.
mod bounds;
// `check` end to end over a folder: output forms, `--allow`, `--max-images`, the walk.
mod check;
// `check --output-format html`: one self-contained page for a folder.
mod check_html;
// `classify` over real provider error texts, and its invariants.
mod classify;
// The CLI definition: clap's consistency checks and the process-level contract.
mod cli;
// The problem-code registry: every code used and registered, docs/codes.md's table current.
mod codes;
// Crash-safe writes: a killed write leaves the old file or the new one, never a part.
mod crash;
// `diagnose` and `exclude` end to end, in each format's real shape.
mod diagnose;
// The manual in `docs/`: every link resolves, every page is reachable from the README.
mod docs;
// `--fit`: an oversized image fitted, not dropped.
mod fit;
// `--fit` and the guard's fit on a 16-bit image, an EXIF orientation, and the memory a fit takes.
mod fit_robust;
// The same media in every format: every payload found, in order, with its origin.
mod formats;
// The fuzz targets over every committed corpus file, plus random mutations.
mod fuzz_corpus;
// `guard`: deny, fit or pass a file, in the CLI's form and Claude Code's hook protocol.
mod guard;
// `guard install`/`uninstall` for Gemini CLI (and the agents issue 40 adds).
mod guard_agents;
// `guard`: an image judged as one of the many the session already holds.
mod guard_many;
// `guard`: only what each agent's read tool sends as an image or a PDF is judged.
mod guard_types;
// The history's structure: tool calls without results and results without calls.
mod history;
// Every printed line true of the file, every suggested command runnable.
mod honest_output;
// Hostile and damaged input: findings, never a panic, never a write.
mod hostile;
// `diagnose --html`: self-contained, escaped, thumbnails, every suspect named.
mod html;
// The layers of `src/`: no module imports one above it.
mod layers;
// Layouts the agents really write, in the project's own fixtures.
mod layouts;
// A lone surrogate escape in a tool output: Anthropic's refusal classified, the line named, the cure.
mod lone_surrogate;
// The man pages in `man/` are what the clap definitions give (`UPDATE_MAN=1` rewrites).
mod man;
// `media::inspect` over the media corpus: verdicts at each depth, no panic or hang.
mod media;
// Memory per line of a session read (Linux: the kernel's high-water mark).
#[cfg(target_os = "linux")]
mod memory_per_line;
// The canonical model behind `scan`: entries, error records, tool calls, reasoning.
mod model;
// opencode's event-sourced (v2) sessions beside v1 ones in one database.
mod opencode_v2;
// No output flag makes a command write over what it reads.
mod outputs;
// pi compactions that carry `retainedTail`: the copies are what is sent.
mod pi_retained_tail;
// pi's SQLite session store, read read-only.
mod pi_store;
// `preview` shows the reasoning each agent replays, as its provider receives it.
mod preview_reasoning;
// `proxy`: the loopback pass-through against a loopback upstream.
mod proxy;
// The README's console examples, run against this build (`UPDATE_README=1` rewrites).
mod readme;
// Real session files other projects keep as fixtures (ignored: not in this repository).
mod real_sessions;
// `preview` and `repair` end to end, in each format's real shape.
mod rewrite;
// Damaged lines salvaged: a record split by a raw newline rejoined, glued records split.
mod salvage;
// Every command on every sample and damaged copies: documented exit codes, no writes.
mod robust;
// `check --output-format sarif` against the SARIF 2.1.0 schema; gitlab; `check --json`.
mod sarif;
// `scan` end to end: every format's sample, damaged files, refs, visibility rules.
mod scan;
// Every `--json` output on every sample against `session-doctor schema <command>`.
mod schemas;
// shared/seeds/000 word for word on an opencode session.
mod seeds;
// `sessions` and `discover` under a fake home.
mod sessions;
// A skimmed read gives the session a whole parse gives.
mod skim;
// Each command's human output on every sample against `tests/snapshots/` (`UPDATE_SNAPSHOTS=1`).
mod snapshots;
// A session that changes under a running `repair` is never copied.
mod swap;
// The binary on a pseudo-terminal (Linux): widths, colour, escapes.
#[cfg(target_os = "linux")]
mod tty;
// `--fit-context`: a session over its window trimmed, on a real Claude Code session.
mod trim;
// Validation through `scan` in every format: the media corpus and bad base64.
mod validation;
// Verdicts that hold: each case where a command said something untrue, pinned.
mod verdicts;

/// With `autotests = false`, a test file cargo would have found on its own is
/// compiled only when it is declared here: every `.rs` file in `tests/it/` must be
/// a `mod` of this file, and none may sit in `tests/` itself.
#[test]
fn every_test_file_is_a_module() {
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(tests.join("it/main.rs")).expect("tests/it/main.rs");
    let declared: Vec<&str> = main.lines().filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';')).collect();
    let rs_files = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "rs"))
            .map(|p| p.file_stem().expect("a name").to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let forgotten: Vec<String> = rs_files(&tests.join("it"))
        .into_iter()
        .filter(|n| n != "main" && !declared.contains(&n.as_str()))
        .map(|n| format!("tests/it/{n}.rs is not declared in tests/it/main.rs: add `mod {n};`"))
        .chain(rs_files(&tests).into_iter().map(|n| {
            format!("tests/{n}.rs is never compiled (autotests = false): move it to tests/it/ and add `mod {n};`")
        }))
        .collect();
    assert!(forgotten.is_empty(), "{}", forgotten.join("\n"));
}
