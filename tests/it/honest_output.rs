//! Issue 18, "Output that misleads or breaks": every line the binary prints is
//! a claim about the file, and every command it suggests must run. One test per
//! case a newcomer found untrue.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{bin, sample};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the binary in `dir` with `stdin` piped in.
fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    use std::io::Write as _;
    let mut child = bin()
        .args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    if let Some(bytes) = stdin {
        child.stdin.take().expect("stdin").write_all(bytes).expect("writes stdin");
    }
    child.wait_with_output().expect("waits")
}

/// The commands under `next:` in a human report.
fn next_commands(report: &str) -> Vec<String> {
    report
        .lines()
        .skip_while(|l| *l != "next:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Runs `command` as a user would paste it: in a POSIX shell, in `dir`, with
/// this build of session-doctor first on the PATH.
fn shell(dir: &Path, command: &str) -> Output {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_session-doctor")).parent().expect("bin dir").to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    Command::new("sh").arg("-c").arg(command).current_dir(dir).env("PATH", path).output().expect("sh runs")
}

// ---- 8. Next commands that cannot run ----------------------------------------

#[test]
fn diagnose_of_stdin_suggests_commands_on_a_saved_file_and_says_how() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = std::fs::read(sample("claude-code.jsonl")).expect("sample");
    let out = run_in(dir.path(), &["diagnose", "-"], Some(&bytes));
    let report = text(&out.stdout);
    let next = next_commands(&report);
    assert!(!next.is_empty(), "{report}");
    assert!(next.iter().all(|c| !c.contains(" - ") && !c.ends_with(" -")), "a command reads stdin again: {next:?}");
    assert!(report.contains("save the same bytes to session.jsonl first"), "{report}");
    // Done as the note says, every next command runs.
    std::fs::write(dir.path().join("session.jsonl"), &bytes).expect("saved");
    for c in &next {
        let ran = shell(dir.path(), c);
        assert_eq!(ran.status.code(), Some(0), "{c}: {}", text(&ran.stderr));
    }
}

#[test]
fn a_next_command_names_the_real_file_even_with_controls_in_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = "it's \u{1b}[31mred.jsonl";
    std::fs::copy(sample("claude-code.jsonl"), dir.path().join(name)).expect("copy");
    let out = run_in(dir.path(), &["diagnose", name], None);
    let report = text(&out.stdout);
    assert!(!report.contains('\u{1b}'), "a raw escape reached the terminal: {report:?}");
    let next = next_commands(&report);
    assert_eq!(next.len(), 2, "{report}");
    for c in &next {
        assert!(!c.contains("\\u{1b}"), "the command names an escaped, other file: {c}");
        let ran = shell(dir.path(), c);
        assert_eq!(ran.status.code(), Some(0), "{c}: {}", text(&ran.stderr));
    }
    // The exclusion landed beside the real file, and the repaired copy exists.
    assert!(dir.path().join(format!("{name}.doctor")).exists());
}

/// A copy of a sample in a fresh folder.
fn copy_of(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::copy(sample(name), &path).expect("copy");
    (dir, path)
}

fn run(args: &[&str]) -> Output {
    common::run(args)
}

// ---- 15. Exit codes -------------------------------------------------------------

/// Issue 36, item 5: a healthy session whose last request awaits its answer
/// (a pasted screenshot, nothing failed) has nothing to blame; `--suspects`
/// excluded the screenshot.
#[test]
fn exclude_suspects_on_a_healthy_session_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mux = std::fs::read_to_string(sample("mux.jsonl")).expect("sample");
    let path = common::write(dir.path(), "chat.jsonl", &format!("{}\n", mux.lines().next().expect("a line")));
    let (d, code) = common::diagnose(&path, &[]);
    assert_eq!((code, d["stuck"].clone()), (0, serde_json::json!(false)), "{d:#}");
    let out = run(&["exclude", path.to_str().expect("utf-8"), "--suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("nothing to change: diagnose blames nothing"), "{}", text(&out.stdout));
    assert!(!path.with_extension("jsonl.doctor").exists(), "nothing written");
}

#[test]
fn exclude_suspects_once_every_suspect_is_excluded_changes_nothing_and_exits_0() {
    let (_dir, path) = copy_of("claude-code.jsonl");
    let p = path.to_str().expect("utf-8");
    assert_eq!(run(&["exclude", p, "--ref", "L7.1"]).status.code(), Some(0));
    let (d, code) = common::diagnose(&path, &[]);
    common::stuck_until_repaired(&d, code).expect("only the repaired copy is left to resume");
    let overlay = std::fs::read(path.with_extension("jsonl.doctor")).expect("overlay");
    let out = run(&["exclude", p, "--suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("nothing to change: diagnose blames nothing"), "{}", text(&out.stdout));
    assert_eq!(std::fs::read(path.with_extension("jsonl.doctor")).expect("overlay"), overlay, "nothing written");
}

// ---- 21. Error wording ------------------------------------------------------------

#[test]
fn undo_of_what_was_never_excluded_says_so() {
    let (_dir, path) = copy_of("claude-code.jsonl");
    let out = run(&["exclude", path.to_str().expect("utf-8"), "--ref", "L7.1", "--undo"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "nothing to change: L7.1 not excluded\n");
}

#[test]
fn an_unnamed_attachment_is_not_called_dash_in_prose() {
    let (_dir, path) = copy_of("claude-code.jsonl");
    let out = run(&["exclude", path.to_str().expect("utf-8"), "--ref", "L2.1"]);
    let first = text(&out.stdout).lines().next().unwrap_or_default().to_string();
    assert_eq!(first, "excluded L2.1 (image/png)");
}

// ---- 23. --json answers JSON even on an error -------------------------------------

#[test]
fn json_answers_json_on_an_error_in_every_command() {
    let (dir, path) = copy_of("claude-code.jsonl");
    let p = path.to_str().expect("utf-8");
    let missing = dir.path().join("missing.jsonl");
    let m = missing.to_str().expect("utf-8");
    let cases: Vec<Vec<&str>> = vec![
        vec!["scan", "--json", m],
        vec!["diagnose", "--json", m],
        vec!["exclude", "--json", p, "--ref", "L99.1"],
        vec!["exclude", "--json", m, "--ref", "L1.1"],
        vec!["preview", "--json", m],
        vec!["repair", "--json", m],
        vec!["check", "--output-format", "json", m],
    ];
    for args in cases {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {:?}", text(&out.stdout)));
        let error = v.get("error").or_else(|| v["sessions"][0]["problems"][0].get("message"));
        assert!(error.and_then(|e| e.as_str()).is_some_and(|e| !e.is_empty()), "{args:?}: {v}");
    }
}

// ---- 19. Flags ----------------------------------------------------------------------

#[test]
fn agent_without_latest_is_refused_not_ignored() {
    let out = run(&["diagnose", "--agent", "codex", sample("claude-code.jsonl").to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("--agent"), "{}", text(&out.stderr));
}

#[test]
fn check_takes_max_images_0_as_preview_and_repair_do() {
    let s = sample("claude-code.jsonl");
    let s = s.to_str().expect("utf-8");
    for args in [vec!["preview", "--max-images", "0", s], vec!["check", "--max-images", "0", s]] {
        let out = run(&args);
        assert_ne!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
    }
    let out = run(&["check", "--max-images", "0", s]);
    assert!(text(&out.stdout).contains("request.over_max_images"), "{}", text(&out.stdout));
    // One image is one ("carries 1 images" before).
    let out = run(&["check", "--max-images", "0", sample("copilot.jsonl").to_str().expect("utf-8")]);
    assert!(
        text(&out.stdout)
            .contains("error[request.over_max_images]: the next request carries 1 image; --max-images allows 0\n"),
        "{}",
        text(&out.stdout)
    );
}

// ---- 18. Help that contradicts the binary ---------------------------------------------

#[test]
fn bash_completion_offers_the_values_of_vocabulary_flags_not_file_names() {
    let script = text(&run(&["completions", "bash"]).stdout);
    for flag in ["--format", "--provider", "--target", "--agent"] {
        let cases: Vec<&str> =
            script.split(&format!("{flag})")).skip(1).map(|c| c.lines().nth(1).unwrap_or_default()).collect();
        assert!(!cases.is_empty(), "{flag} is never completed");
        for c in cases {
            assert!(c.contains("compgen -W"), "{flag} completes file names: {c}");
        }
    }
}

/// What bash offers for the words typed so far (`words`, the last one being
/// completed), with the script `completions bash` prints sourced.
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let (cur, prev) = (words[words.len() - 1], words[words.len() - 2]);
    let body = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\n_session__doctor session-doctor '{cur}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.len() - 1
    );
    let out = Command::new("bash").args(["--norc", "--noprofile", "-c", &body]).output().expect("bash runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// Issue 36, item 14: after a subcommand bash completed nothing (the script set
/// `cmd` to a name none of its case arms had).
#[test]
fn bash_completes_after_a_subcommand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("session-doctor.bash");
    std::fs::write(&script, run(&["completions", "bash"]).stdout).expect("write");
    let subs = bash_completes(&script, &["session-doctor", "di"]);
    assert_eq!(subs, ["diagnose"], "the subcommand itself");
    let flags = bash_completes(&script, &["session-doctor", "check", "--output-f"]);
    assert_eq!(flags, ["--output-format"], "a subcommand's flag");
    let values = bash_completes(&script, &["session-doctor", "check", "--output-format", "j"]);
    assert_eq!(values, ["json", "junit"], "a flag's values");
    let nested = bash_completes(&script, &["session-doctor", "guard", "install", "--dry"]);
    assert_eq!(nested, ["--dry-run"], "a nested subcommand's flag");
}

/// Issue 36, item 15: `guard install --help` printed its examples and exit
/// status twice (a nested subcommand kept clap's own template).
#[test]
fn help_prints_examples_and_exit_status_once() {
    use clap::CommandFactory as _;
    let mut todo = vec![(Vec::<String>::new(), session_doctor::cli::Cli::command())];
    while let Some((path, cmd)) = todo.pop() {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            todo.push((p, sub.clone()));
        }
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = text(&run(&args).stdout);
        for heading in ["Examples:", "Exit status:"] {
            assert!(help.matches(heading).count() <= 1, "{args:?} prints {heading} twice:\n{help}");
        }
    }
}

#[test]
fn provider_help_and_provider_error_list_the_same_providers() {
    let help = text(&run(&["scan", "--help"]).stdout);
    let listed = help
        .split("--provider <PROVIDER>")
        .nth(1)
        .and_then(|h| h.split("[possible values: ").nth(1))
        .and_then(|h| h.split(']').next())
        .expect("--provider lists its values")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let out = run(&["scan", "--provider", "bogus", sample("pi.jsonl").to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let named = err.split("expected one of: ").nth(1).expect("the error lists providers").trim().replace(',', "");
    assert_eq!(listed.replace(',', ""), named);
    assert_eq!(named.split(' ').count(), session_doctor::provider::NAMES.len() + 1, "generic and the vocabulary");
}

#[test]
fn sessions_help_does_not_say_opencodes_database_is_unread() {
    let help = text(&run(&["sessions", "--help"]).stdout).replace('\n', " ");
    assert!(!help.contains("database that is not read"), "{help}");
    // scan reads it: an opencode.db is a session path scan takes.
    assert!(text(&run(&["scan", "--help"]).stdout).contains("opencode.db"));
}

// ---- 20. repair with nothing to repair; where Codex looks --------------------------------

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).expect("dir").map(|e| e.expect("entry").file_name().to_string_lossy().into()).collect();
    names.sort();
    names
}

#[test]
fn repair_with_nothing_to_change_writes_nothing_and_says_so() {
    // Cline records no failure; its broken PNG is a prime suspect repair would leave
    // out, unless --keep-suspects: then nothing would change.
    let (dir, path) = copy_of("cline.json");
    let p = path.to_str().expect("utf-8");
    let out = run(&["repair", p, "--keep-suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("nothing to repair: "), "{}", text(&out.stdout));
    assert_eq!(listing(dir.path()), ["cline.json"], "nothing written");
    // Asked for, the copy is written; asked again, the error names the way out.
    // (That copy keeps the broken PNG, so repair says it is still stuck: exit 1.)
    assert_eq!(run(&["repair", p, "--keep-suspects", "--force"]).status.code(), Some(1));
    let again = run(&["repair", p, "--force"]);
    assert_eq!(again.status.code(), Some(2));
    let err = text(&again.stderr);
    assert!(err.contains("already exists") && err.contains("--out"), "{err}");
    assert!(!err.contains("os error"), "{err}");
}

#[test]
fn a_codex_copy_outside_codex_home_says_codex_will_not_find_it() {
    let (dir, path) = copy_of("codex.jsonl");
    let home = tempfile::tempdir().expect("codex home");
    let out_dir = dir.path().join("rescued");
    std::fs::create_dir(&out_dir).expect("mkdir");
    let out = bin()
        .args(["repair", path.to_str().expect("utf-8"), "--out", out_dir.to_str().expect("utf-8")])
        .env("CODEX_HOME", home.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let sessions = home.path().join("sessions");
    assert!(report.contains("Codex resumes a session only from its sessions folder"), "{report}");
    // Written where Codex looks, no such warning.
    let day = sessions.join("2026/01/01");
    std::fs::create_dir_all(&day).expect("mkdir");
    let out = bin()
        .args(["repair", path.to_str().expect("utf-8"), "--out", day.to_str().expect("utf-8")])
        .env("CODEX_HOME", home.path())
        .output()
        .expect("runs");
    assert!(!text(&out.stdout).contains("only from its sessions folder"), "{}", text(&out.stdout));
}

// ---- 22. File modes ------------------------------------------------------------------------

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
}

/// What a new file gets under the process's umask, as the shell would create it.
#[cfg(unix)]
fn umask_mode(dir: &Path) -> u32 {
    let probe = dir.join("probe");
    std::fs::write(&probe, b"").expect("probe");
    let m = mode(&probe);
    std::fs::remove_file(&probe).expect("rm probe");
    m
}

#[cfg(unix)]
#[test]
fn written_files_get_the_usual_mode_and_a_repaired_copy_its_originals() {
    use std::os::unix::fs::PermissionsExt as _;
    let (dir, path) = copy_of("claude-code.jsonl");
    let d = dir.path();
    let usual = umask_mode(d);
    let p = path.to_str().expect("utf-8");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    assert_eq!(run(&["exclude", p, "--ref", "L7.1"]).status.code(), Some(0));
    assert_eq!(mode(&d.join("claude-code.jsonl.doctor")), usual, "the overlay");
    let page = d.join("page.html");
    run(&["diagnose", p, "--html", page.to_str().expect("utf-8")]);
    assert_eq!(mode(&page), usual, "the HTML page");
    let request = d.join("request.json");
    assert_eq!(run(&["preview", p, "--out", request.to_str().expect("utf-8")]).status.code(), Some(0));
    assert_eq!(mode(&request), usual, "the previewed request");
    let out = run(&["repair", "--json", p]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(mode(Path::new(v["out"].as_str().expect("out"))), 0o640, "the copy takes the original's mode");
}

// ---- 24. Numbers past f64 ----------------------------------------------------------------

#[test]
fn a_record_holding_1e400_is_read_and_repair_keeps_it_as_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let original = std::fs::read_to_string(sample("claude-code.jsonl")).expect("sample");
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    let third = lines[2].strip_suffix('}').expect("an object").to_string();
    lines[2] = format!("{third},\"costUSD\":1e400}}");
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    let p = path.to_str().expect("utf-8");
    let (doc, _) = common::scan_json(&path, &[]);
    assert!(doc["findings"].as_array().expect("findings").iter().all(|f| f["line"] != 3), "{}", doc["findings"]);
    assert_eq!(run(&["exclude", p, "--ref", "L7.1"]).status.code(), Some(0));
    let out = run(&["repair", "--json", p]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(!v["dropped"].as_array().expect("dropped").contains(&3.into()), "{v}");
    let copy = std::fs::read_to_string(dir.path().join(v["out"].as_str().expect("out"))).expect("copy");
    assert!(copy.contains("\"costUSD\":1e400}"), "the number as written");
}

// ---- 16. Counts ---------------------------------------------------------------------------

#[test]
fn preview_counts_every_item_it_writes() {
    for name in ["claude-code.jsonl", "codex.jsonl", "gemini-cli.jsonl", "cline.json"] {
        let out = run(&["preview", "--json", sample(name).to_str().expect("utf-8")]);
        let request: serde_json::Value = serde_json::from_slice(&out.stdout).expect("request");
        let written = ["messages", "input", "contents"].iter().find_map(|k| request[k].as_array()).map_or(0, Vec::len);
        let summary: serde_json::Value = serde_json::from_slice(&out.stderr).expect("summary");
        assert_eq!(summary["items"], written, "{name}");
    }
}

#[test]
fn repair_counts_the_lines_of_the_copy_it_wrote() {
    // A pretty-printed one-document session: the note in place of a media block
    // takes fewer lines than the block did.
    let dir = tempfile::tempdir().expect("tempdir");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sample("cline.json")).expect("sample")).expect("json");
    let path = dir.path().join("pretty.json");
    std::fs::write(&path, serde_json::to_string_pretty(&v).expect("pretty")).expect("write");
    let p = path.to_str().expect("utf-8");
    let (doc, _) = common::scan_json(&path, &[]);
    let invalid = doc["attachments"]
        .as_array()
        .expect("attachments")
        .iter()
        .find(|a| a["verdict"] == "invalid")
        .expect("an invalid attachment")["ref"]
        .as_str()
        .expect("ref")
        .to_string();
    assert_eq!(run(&["exclude", p, "--ref", &invalid]).status.code(), Some(0));
    let out = run(&["repair", "--json", p]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let copy = std::fs::read_to_string(dir.path().join(r["out"].as_str().expect("out"))).expect("copy");
    assert_eq!(r["lines"], copy.lines().count(), "the copy's lines");
}

// ---- 17. Notes that do not apply ------------------------------------------------------------

fn diagnose_text(path: &Path, extra: &[&str]) -> String {
    let mut args = vec!["diagnose", path.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    text(&run(&args).stdout)
}

/// A Claude Code session of plain text turns, `n` user lines each naming itself
/// as its parent (a parent cycle per line), then an answer.
fn cycles(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let id = format!("u{i}");
        out.push_str(
            &serde_json::json!({"parentUuid": id, "isSidechain": false, "type": "user", "uuid": id,
            "sessionId": "s", "message": {"role": "user", "content": format!("turn {i}")}})
            .to_string(),
        );
        out.push('\n');
    }
    out
}

#[test]
fn no_suspect_note_without_suspects() {
    // Not stuck once the broken PNG is excluded: nothing is a suspect, and no note says where suspects are.
    let (_dir, path) = copy_of("claude-code.jsonl");
    assert_eq!(run(&["exclude", path.to_str().expect("utf-8"), "--ref", "L7.1"]).status.code(), Some(0));
    let report = diagnose_text(&path, &[]);
    assert!(!report.contains("suspects are the attachments"), "{report}");
    // A rate limit on a session without attachments: nothing is "every attachment".
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("plain.jsonl");
    std::fs::write(
        &plain,
        cycles(0)
            + &serde_json::json!({"parentUuid": null, "isSidechain": false, "type": "user",
        "uuid": "a", "sessionId": "s", "message": {"role": "user", "content": "hello"}})
            .to_string()
            + "\n",
    )
    .expect("write");
    let report = diagnose_text(&plain, &["--error", "Rate limit reached for requests"]);
    assert!(!report.contains("every attachment is a suspect"), "{report}");
}

#[test]
fn a_model_is_not_shown_under_the_provider_label() {
    let report = diagnose_text(&sample("claude-code.jsonl"), &["--error", "Could not process image"]);
    assert!(!report.lines().any(|l| l.starts_with("provider  model")), "{report}");
    assert!(report.lines().any(|l| l.starts_with("model     claude-sonnet-4-5")), "{report}");
}

#[test]
fn parent_cycles_are_not_damaged_lines_and_check_says_them_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cycles.jsonl");
    std::fs::write(&path, cycles(24)).expect("write");
    let report = diagnose_text(&path, &[]);
    assert!(!report.contains("damaged line"), "{report}");
    assert!(report.contains("24 lines: the records' parent links form a cycle"), "{report}");
    let out = run(&["check", "--output-format", "json", path.to_str().expect("utf-8")]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let problems = v["sessions"][0]["problems"].as_array().expect("problems").clone();
    let cycle: Vec<_> = problems.iter().filter(|p| p["code"] == "history.parent_cycle").collect();
    assert_eq!(cycle.len(), 1, "{problems:#?}");
    assert!(cycle[0]["message"].as_str().is_some_and(|m| m.contains("24 lines like it")), "{}", cycle[0]);
}

// ---- 21. Error wording (continued) ------------------------------------------------------------

fn stderr_of(args: &[&str]) -> String {
    text(&run(args).stderr)
}

#[test]
fn a_missing_output_folder_is_named_not_the_hidden_temporary_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("gone/request.json");
    let err =
        stderr_of(&["preview", sample("pi.jsonl").to_str().expect("utf-8"), "--out", target.to_str().expect("utf-8")]);
    assert!(err.contains(&format!("cannot write {}", target.display())) && err.contains("there is no folder"), "{err}");
    assert!(!err.contains(".session-doctor-"), "{err}");
}

#[test]
fn detection_errors_are_worded_for_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let one = dir.path().join("one.jsonl");
    std::fs::write(&one, b"{\"hello\":1}\n").expect("write");
    let err = stderr_of(&["scan", one.to_str().expect("utf-8")]);
    assert!(err.contains("looked at its first line)") && !err.contains("first 1 lines"), "{err}");
    let err = stderr_of(&["scan", "--format", "opencode", sample("codex.jsonl").to_str().expect("utf-8")]);
    assert!(err.contains("is an opencode record") && !err.contains("a opencode"), "{err}");
    // The gzip hint names the file itself.
    let gz = dir.path().join("my session.jsonl.gz");
    std::fs::write(&gz, b"\x1f\x8b\x08\x00\x00\x00\x00\x00").expect("write");
    let err = stderr_of(&["scan", gz.to_str().expect("utf-8")]);
    assert!(err.contains(&format!("zcat '{}'", gz.display())) && !err.contains("zcat FILE"), "{err}");
    // A binary file is called binary.
    let bin_file = dir.path().join("blob.jsonl");
    std::fs::write(&bin_file, b"\x00\x01\x02\x03binary\xff\n").expect("write");
    let err = stderr_of(&["scan", bin_file.to_str().expect("utf-8")]);
    assert!(err.contains("is a binary file"), "{err}");
}

#[test]
fn check_notes_a_skipped_file_with_its_subject() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("events.jsonl"), b"\x1F\x8B\x08\x00compressed").expect("write");
    std::fs::copy(sample("pi.jsonl"), dir.path().join("pi.jsonl")).expect("copy");
    let err = stderr_of(&["check", dir.path().to_str().expect("utf-8")]);
    assert!(err.contains("events.jsonl: it is compressed (gzip)"), "{err}");
}

#[test]
fn scan_ref_lists_nearby_refs_as_exclude_does() {
    let s = sample("claude-code.jsonl");
    let err = stderr_of(&["scan", "--ref", "L6.1", s.to_str().expect("utf-8")]);
    assert!(err.contains("L6.1 names no attachment; nearby: L5.1, L7.1"), "{err}");
}

#[test]
fn diagnose_latest_with_nothing_found_says_where_it_looked() {
    let home = tempfile::tempdir().expect("home");
    let out = bin()
        .args(["diagnose", "--latest", "--agent", "codex"])
        .env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("looked in {}", home.path().join(".codex/sessions").display())), "{err}");
}

// ---- 14. Prose fitted to the terminal; examples whole ------------------------------------------

#[test]
fn help_keeps_every_example_on_one_line_at_any_width() {
    use clap::CommandFactory as _;
    let top = session_doctor::cli::Cli::command();
    let mut commands: Vec<(Vec<String>, clap::Command)> = vec![(vec![], top.clone())];
    commands.extend(top.get_subcommands().map(|s| (vec![s.get_name().to_string()], s.clone())));
    for (path, cmd) in commands {
        let after = cmd.get_after_help().map(std::string::ToString::to_string).unwrap_or_default();
        // Every line of the Examples block.
        let examples: Vec<&str> =
            after.split("\n\n").filter(|b| b.starts_with("Examples:")).flat_map(|b| b.lines().skip(1)).collect();
        assert!(!examples.is_empty(), "{path:?} has no examples");
        for columns in ["40", "80"] {
            for flag in ["--help", "-h"] {
                let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
                args.push(flag);
                let out = bin().args(&args).env("COLUMNS", columns).output().expect("runs");
                assert_eq!(out.status.code(), Some(0));
                let help = text(&out.stdout);
                for e in &examples {
                    assert!(help.lines().any(|l| l == *e), "{args:?} at {columns} columns breaks {e:?}:\n{help}");
                }
                assert!(help.contains("Exit status:"), "{args:?}");
            }
        }
    }
    // Bare `session-doctor`: the help on stderr, examples included, exit 2.
    let out = bin().output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("Examples:\n  session-doctor scan samples/claude-code.jsonl\n"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_long_list_of_ids_says_its_count_and_the_first_few() {
    let dir = tempfile::tempdir().expect("tempdir");
    let user = serde_json::json!({"parentUuid": null, "isSidechain": false, "type": "user", "uuid": "u1", "sessionId": "s",
        "message": {"role": "user", "content": "run them"}});
    let calls: Vec<serde_json::Value> = (0..12)
        .map(|i| serde_json::json!({"type": "tool_use", "id": format!("toolu_{i:02}"), "name": "Bash", "input": {"command": "true"}}))
        .collect();
    let assistant = serde_json::json!({"parentUuid": "u1", "isSidechain": false, "type": "assistant", "uuid": "a1", "sessionId": "s",
        "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": calls}});
    let next = serde_json::json!({"parentUuid": "a1", "isSidechain": false, "type": "user", "uuid": "u2", "sessionId": "s",
        "message": {"role": "user", "content": "and then?"}});
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, format!("{user}\n{assistant}\n{next}\n")).expect("write");
    let out = run(&["repair", path.to_str().expect("utf-8")]);
    let report = text(&out.stdout);
    let answered =
        report.lines().find(|l| l.trim_start().starts_with("answered")).unwrap_or_else(|| panic!("{report}"));
    assert!(
        answered.contains("12 interrupted tool calls (toolu_00, toolu_01, toolu_02, toolu_03, toolu_04 and 7 more)"),
        "{answered}"
    );
}

/// Usage errors that taught the wrong thing: clap's "use '-- -1'" tip for a
/// negative count, `exclude FILE` with no word of `--suspects`, `--allow
/// session.stuck.*` with no code to use instead, and `diagnose --agent codex
/// FILE` answered with the `--latest` usage.
#[test]
fn usage_errors_say_what_to_type() {
    let mux = sample("mux.jsonl");
    let mux = mux.to_str().expect("utf-8");
    let stderr = |args: &[&str]| {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        text(&out.stderr)
    };
    for sub in ["preview", "repair", "check"] {
        let e = stderr(&[sub, "--max-images", "-1", mux]);
        assert!(
            e.contains("invalid value '-1' for '--max-images <N>': `-1` is not a number of images: give 0 or more (0 drops every image)"),
            "{sub}: {e}"
        );
        assert!(!e.contains("-- -1"), "{e}");
    }
    assert!(stderr(&["exclude", mux]).contains("<--ref <REF>|--suspects|--fit-context>"));
    let e = stderr(&["check", "--allow", "session.stuck.*", mux]);
    assert!(e.contains("; one --allow each of: session.stuck.media_rejected, session.stuck.image_limit,"), "{e}");
    assert!(stderr(&["check", "--allow", "png.*", mux]).contains("png.truncated"));
    assert_eq!(
        stderr(&["diagnose", "--agent", "codex", mux]),
        "session-doctor: --agent codex chooses whose newest session --latest reads; FILE is read in the format it is \
         detected as (--format reads it as another)\n"
    );
}
