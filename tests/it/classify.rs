//! Table-driven tests of `classify` over real provider error texts
//! (`tests/data/classify/cases.tsv`: every row names the public source it was seen in),
//! plus the invariants: deterministic classes never retry, huge inputs stay cheap and
//! right, and `classify --json` prints the DESIGN.md keys.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::process::{Command, Stdio};

use std::collections::{BTreeMap, BTreeSet as Set};

use session_doctor::classify::{Class, Hint, classify, judge};

const CASES: &str = include_str!("../data/classify/cases.tsv");

struct Case<'a> {
    line: usize,
    class: Class,
    status: Option<u16>,
    provider: &'a str,
    limit: Option<u64>,
    block: Option<&'a str>,
    source: &'a str,
    text: &'a str,
}

fn dash(s: &str) -> Option<&str> {
    (s != "-").then_some(s)
}

fn cases() -> Vec<Case<'static>> {
    parse(CASES)
}

/// Parses rows of the cases.tsv format (also a batch file, for `batch_hit_rate`).
fn parse(table: &str) -> Vec<Case<'_>> {
    table
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.splitn(7, '\t').collect();
            assert_eq!(f.len(), 7, "cases.tsv line {}: expected 7 tab-separated fields", i + 1);
            Case {
                line: i + 1,
                class: Class::from_name(f[0]).unwrap_or_else(|| panic!("line {}: unknown class {}", i + 1, f[0])),
                status: dash(f[1]).map(|s| s.parse().expect("status")),
                provider: f[2],
                limit: dash(f[3]).map(|s| s.parse().expect("limit")),
                block: dash(f[4]),
                source: f[5],
                text: f[6],
            }
        })
        .collect()
}

fn run(case: &Case) -> session_doctor::classify::Classification {
    let hint = Hint { status: case.status, provider: case.provider.strip_prefix('~').map(str::to_string) };
    classify(case.text, &hint)
}

#[test]
fn real_error_texts_classify_as_expected() {
    let cases = cases();
    assert!(cases.len() >= 120, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let c = run(case);
        let want_provider = match case.provider {
            "-" => None,
            p => Some(p.trim_start_matches('~')),
        };
        let got = (c.class, c.limit, c.block.as_deref(), c.provider.as_deref());
        let want = (case.class, case.limit, case.block, want_provider);
        if got != want {
            failures.push(format!(
                "line {}: got {:?}, want {:?}\n  text: {}\n  source: {}",
                case.line, got, want, case.text, case.source
            ));
        }
        assert!(!case.source.trim().is_empty(), "line {}: every case names its source", case.line);
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// How well the rules generalise to a batch of new cases before they join the table:
/// `CLASSIFY_BATCH=path cargo test --test it classify::batch_hit_rate -- --ignored --nocapture`.
/// The rates are recorded in `tests/data/classify/HITRATE.md`.
#[test]
#[ignore = "a tool for adding cases: needs CLASSIFY_BATCH"]
fn batch_hit_rate() {
    let Ok(path) = std::env::var("CLASSIFY_BATCH") else { return };
    let text = std::fs::read_to_string(&path).expect("batch file");
    let batch = parse(&text);
    let mut hits = 0;
    for case in &batch {
        let c = run(case);
        if std::env::var_os("CLASSIFY_FILL").is_some() {
            // The row as cases.tsv wants it: the class is the harvester's judgement, the
            // provider/limit/block columns what the classifier extracts (checked by eye).
            let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            let status = case.status.map_or("-".into(), |s| s.to_string());
            println!(
                "FILL\t{}\t{status}\t{}\t{}\t{}\t{}\t{}",
                case.class,
                opt(c.provider.clone()),
                opt(c.limit.map(|l| l.to_string())),
                opt(c.block.clone()),
                case.source,
                case.text
            );
        }
        if c.class == case.class {
            hits += 1;
        } else {
            // The miss that matters most: a deterministic failure called retryable.
            let worst = case.class.retryable() == Some(false) && c.retryable == Some(true);
            let mark = if worst { " (CALLED RETRYABLE)" } else { "" };
            println!("miss line {}: got {}, want {}{mark}: {}", case.line, c.class, case.class, case.text);
        }
    }
    println!("HITRATE {path}: {hits}/{} classes right", batch.len());
}

/// The place a case was harvested from: `owner/repo` for a GitHub URL, the host for another
/// URL, else the first word (`research/…` notes, `brief …` examples).
fn source_of(source: &str) -> String {
    if let Some(i) = source.find("github.com/") {
        let rest = source[i + "github.com/".len()..].split_whitespace().next().unwrap_or_default();
        return rest.split('/').take(2).collect::<Vec<_>>().join("/");
    }
    if let Some(i) = source.find("://") {
        return source[i + 3..].split('/').next().unwrap_or_default().to_string();
    }
    let first = source.split_whitespace().next().unwrap_or_default();
    first.split('/').take(2).collect::<Vec<_>>().join("/")
}

/// Leave-one-source-out, for a rule-based classifier (tests/data/classify/HITRATE.md):
/// a signal (phrase, family, code, status) that names the right class for cases of one
/// source only exists, as far as the corpus can tell, because of that source. For each
/// source, every such signal is disabled and the source's cases are classified again; the
/// score is the share still right. A source that passes only through its own literals
/// scores low.
#[test]
fn leave_one_source_out() {
    let cases = cases();
    let mut deciders: BTreeMap<String, Set<String>> = BTreeMap::new();
    for case in &cases {
        let hint = Hint { status: case.status, provider: case.provider.strip_prefix('~').map(str::to_string) };
        for (id, class) in judge(case.text, &hint, &|_| false).candidates {
            if class == case.class {
                deciders.entry(id).or_default().insert(source_of(case.source));
            }
        }
    }
    let mut by_source: BTreeMap<String, Vec<&Case>> = BTreeMap::new();
    for case in &cases {
        by_source.entry(source_of(case.source)).or_default().push(case);
    }
    let (mut hits, mut total, mut worst) = (0usize, 0usize, Vec::new());
    for (source, own) in &by_source {
        let only_here = |id: &str| deciders.get(id).is_some_and(|s| s.len() == 1 && s.contains(source));
        let right = own
            .iter()
            .filter(|case| {
                let hint = Hint { status: case.status, provider: case.provider.strip_prefix('~').map(str::to_string) };
                let got = judge(case.text, &hint, &only_here).classification.class;
                if got != case.class && std::env::var_os("LOSO_MISSES").is_some() {
                    println!("LOSO miss line {} ({source}): got {got}, want {}: {}", case.line, case.class, case.text);
                }
                got == case.class
            })
            .count();
        if right < own.len() {
            worst.push(format!("{source}: {right}/{}", own.len()));
        }
        hits += right;
        total += own.len();
    }
    #[allow(clippy::cast_precision_loss, reason = "counts of samples, exact in f64")]
    let score = hits as f64 / total as f64;
    println!("LOSO: {hits}/{total} = {:.1} % over {} sources", score * 100.0, by_source.len());
    println!("sources below 100 %: {}", worst.join("; "));
    assert!(by_source.len() >= 25, "only {} sources", by_source.len());
    assert!(score >= 0.90, "leave-one-source-out {:.1} % < 90 %: {}", score * 100.0, worst.join("; "));
}

#[test]
fn every_class_is_covered() {
    let covered: BTreeSet<&str> = cases().iter().map(|c| c.class.as_str()).collect();
    let all: BTreeSet<&str> = Class::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(covered, all);
}

/// The failure this tool exists to end: a deterministic failure called retryable, so that an
/// agent (or its user) waits and resends the same request forever. Judged on the class each
/// row *expects*, so it holds whatever else a row gets wrong; and on the rows' own retry
/// verdicts, which follow the class alone.
#[test]
fn deterministic_failures_are_never_retryable() {
    let called_retryable: Vec<String> = cases()
        .iter()
        .filter(|case| case.class.retryable() == Some(false))
        .filter_map(|case| {
            let c = run(case);
            (c.retryable == Some(true))
                .then(|| format!("line {}: {} called {}: {}", case.line, case.class, c.class, case.text))
        })
        .collect();
    assert!(called_retryable.is_empty(), "deterministic failures called retryable:\n{}", called_retryable.join("\n"));
    for case in cases() {
        let c = run(&case);
        assert_eq!(c.retryable, c.class.retryable(), "line {}", case.line);
        let transient = matches!(
            c.class,
            Class::RateLimit | Class::Overloaded | Class::ServerError | Class::Timeout | Class::Network
        );
        match c.class {
            Class::Unknown => assert_eq!(c.retryable, None, "line {}", case.line),
            _ => assert_eq!(c.retryable, Some(transient), "line {}", case.line),
        }
    }
}

#[test]
fn multi_megabyte_inputs_classify_without_blowup() {
    let error = r#"API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.3.content.1.image.source.base64: image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes"}}"#;
    let noise = "iVBORw0KGgoAAAANSUhEUgAA".repeat(200_000); // ~4.8 MB of base64
    for text in [format!("{error}\n{noise}"), format!("{noise}\n{error}")] {
        let c = classify(&text, &Hint::default());
        assert_eq!(c.class, Class::MediaRejected);
        assert_eq!(c.retryable, Some(false));
        assert!(c.message.as_deref().is_some_and(|m| m.len() <= 8 * 1024));
    }
    // The body itself is huge: a request echoed into the error, the reason at the end.
    let echoed = format!(
        r#"API Error: 413 {{"type":"error","error":{{"type":"request_too_large","message":"Request exceeds the maximum size","request":"{noise}"}}}}"#
    );
    assert_eq!(classify(&echoed, &Hint::default()).class, Class::PayloadTooLarge);
    // Hostile nesting and brace storms.
    let deep = "[".repeat(3_000_000);
    assert_eq!(classify(&deep, &Hint::default()).class, Class::Unknown);
    let braces = "{\"error\":".repeat(500_000);
    assert_eq!(classify(&braces, &Hint::default()).class, Class::Unknown);
    let storm = "{'a': ".repeat(1_000_000);
    assert_eq!(classify(&storm, &Hint { status: Some(429), provider: None }).class, Class::RateLimit);
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_session-doctor"))
}

#[test]
fn cli_json_has_the_design_keys() {
    let out = bin()
        .args(["classify", "--json", "--status", "400"])
        .arg(r#"{"type":"error","error":{"type":"invalid_request_error","message":"Too many images in request: 31 > 30"}}"#)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let keys: BTreeSet<&str> = v.as_object().expect("object").keys().map(String::as_str).collect();
    let design: BTreeSet<&str> =
        ["class", "retryable", "provider", "status", "code", "type", "message", "limit", "block"].into();
    // DESIGN.md's keys, plus `schema_version`, `remedy`, `call_ids` and the reset (more fields
    // are allowed, none renamed); `signal` and `why` only with --explain.
    let added = ["schema_version", "remedy", "call_ids", "resets_at", "resets_in"];
    assert_eq!(keys, design.iter().copied().chain(added).collect());
    assert_eq!(v["schema_version"], 1);
    assert!(v["resets_at"].is_null() && v["resets_in"].is_null());
    assert_eq!(v["call_ids"], serde_json::json!([]));
    assert_eq!(v["class"], "image_limit");
    assert_eq!(v["retryable"], false);
    assert_eq!(v["limit"], 30);
    assert_eq!(v["status"], 400);
    assert_eq!(v["type"], "invalid_request_error");
    assert!(v["code"].is_null() && v["block"].is_null());
}

#[test]
fn cli_explain_names_the_deciding_signals() {
    let text = r#"API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.54: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01Abc. Each `tool_use` block must have a corresponding `tool_result` block in the next message."}}"#;
    let out = bin().args(["classify", "--json", "--explain", text]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["class"], "history_invalid");
    assert_eq!(v["call_ids"], serde_json::json!(["toolu_01Abc"]));
    assert_eq!(v["block"], "messages.54");
    let why: Vec<&str> = v["why"].as_array().expect("why").iter().filter_map(|w| w.as_str()).collect();
    assert!(why[0].starts_with("status 400 (explicit"), "{why:?}");
    assert!(why.iter().any(|w| w.contains("deterministic phrase") && w.contains("ids were found without")), "{why:?}");
    let human = bin().args(["classify", "--explain", text]).output().expect("runs");
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(human.contains("why ") && human.contains("call ids   toolu_01Abc"), "{human}");
    let plain = bin().args(["classify", "--json", text]).output().expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&plain.stdout).expect("JSON");
    assert!(v.get("why").is_none());
}

#[test]
fn cli_reads_stdin_and_sanitizes_human_output() {
    let mut child = bin().args(["classify", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawns");
    child.stdin.take().expect("stdin").write_all(b"Could not process image \x1b[2J\x1b]0;owned\x07").expect("writes");
    let out = child.wait_with_output().expect("waits");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("class") && text.contains("media_rejected"), "{text}");
    assert!(text.contains("remedy"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text}");
}

#[test]
fn cli_exit_codes() {
    let unknown = bin().args(["classify", "Something went wrong."]).output().expect("runs");
    assert_eq!(unknown.status.code(), Some(0));
    let empty = bin().args(["classify", "-"]).stdin(Stdio::null()).output().expect("runs");
    assert_eq!(empty.status.code(), Some(2));
    let bad = bin().args(["classify", "--status", "abc", "x"]).output().expect("runs");
    assert_eq!(bad.status.code(), Some(2));
}
