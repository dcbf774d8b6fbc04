//! Memory follows the longest line, not the number of lines (issue 20, item 5):
//! what a session of many short lines costs per line, measured as the peak
//! resident memory of reading it. Linux only (the kernel's high-water mark,
//! reset through `/proc/self/clear_refs`); memory, not time, so no threshold
//! depends on the machine's speed. Each measure is taken in a child process
//! that runs that one test alone: a fresh heap, no other test's threads.

use std::io::Write as _;

use session_doctor::reader::{ReadOptions, read_session};

/// Lines of the larger session read (the smaller has a quarter): enough that
/// resident memory's steps (a 2 MB huge page where the kernel gives them
/// unasked) move the cost per line little, few enough for a debug build.
const LINES: usize = 400_000;

/// The most one more short line may cost: its entry (56 bytes) and its byte
/// range (24 bytes) stay in the session; what assembling the history needs on
/// the way is the rest (docs/performance.md, "Memory per line"). It was 311 bytes before
/// (issue 20, item 5), about 125 since.
const MAX_BYTES_PER_LINE: usize = 170;

/// The same for lines of tool calls and their results, which hold more: the
/// call, its id, name, path argument and time, kept in the session and paired
/// by the history checks. It was 1,020 bytes before, about 580 since.
const MAX_BYTES_PER_TOOL_LINE: usize = 700;

fn kib(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field} in status"));
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("a number of kB")
}

/// A Claude Code session of `n` small user and assistant lines, each the parent
/// of the next, as `bench/memory.sh` writes it; with `tools`, each assistant
/// line calls a tool and the user line after it holds the result.
fn write_session(path: &std::path::Path, n: usize, tools: bool) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let sid = "0b4d6c8e-1111-4222-8333-944455556666";
    let mut parent = "null".to_string();
    for i in 0..n {
        let uuid = format!("00000000-0000-4000-8000-{:012}", i + 1);
        let head = format!(
            r#"{{"parentUuid":{parent},"isSidechain":false,"userType":"external","cwd":"/home/u/p","sessionId":"{sid}","version":"2.1.332","uuid":"{uuid}","timestamp":"2026-11-30T10:00:00.000Z""#
        );
        let call = format!("toolu_01{:022}", i / 2);
        if tools && i % 2 == 0 {
            writeln!(
                f,
                r#"{head},"type":"assistant","message":{{"id":"msg_{i}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"{call}","name":"Read","input":{{"file_path":"/home/u/p/src/f{i}.rs"}}}}],"stop_reason":"tool_use","usage":{{"input_tokens":10,"output_tokens":5}}}}}}"#
            )
        } else if tools {
            writeln!(
                f,
                r#"{head},"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{call}","content":"file text {i}"}}]}}}}"#
            )
        } else if i % 2 == 0 {
            writeln!(f, r#"{head},"type":"user","message":{{"role":"user","content":"please go on with step {i}"}}}}"#)
        } else {
            writeln!(
                f,
                r#"{head},"type":"assistant","message":{{"id":"msg_{i}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"Done, step {i}."}}],"stop_reason":"end_turn","usage":{{"input_tokens":10,"output_tokens":5}}}}}}"#
            )
        }
        .unwrap();
        parent = format!("\"{uuid}\"");
    }
    f.flush().unwrap();
}

/// Runs in a child process of this test (a fresh heap): reads the session at
/// `$MEMORY_PER_LINE_FILE` and prints how far the peak RSS rose meanwhile.
fn measure_in_this_process(path: &str) {
    let opts = ReadOptions { threads: 2, ..ReadOptions::default() };
    // Resets the high-water mark to what is resident now (Linux 4.0 and later).
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak RSS");
    let base = kib("VmRSS:");
    let session = read_session(std::path::Path::new(path), &opts).unwrap();
    let peak = kib("VmHWM:");
    println!("entries={} records={} rise_kb={}", session.entries.len(), session.records.len(), peak - base);
}

/// The peak RSS that reading a session of `n` lines adds, in bytes, read by a
/// fresh process running `test` again.
fn rise(dir: &std::path::Path, n: usize, tools: bool, test: &str) -> usize {
    let path = dir.join(format!("{n}.jsonl"));
    write_session(&path, n, tools);
    // The test's name in the one test binary: its path below the crate root.
    let name = format!("{}::{test}", module_path!().split_once("::").map_or(module_path!(), |(_, m)| m));
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name, "--nocapture", "--include-ignored"])
        .env("MEMORY_PER_LINE_FILE", &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the measuring run failed: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    let line = stdout.lines().find(|l| l.starts_with("entries=")).unwrap_or_else(|| panic!("no measure in {stdout}"));
    let field = |k: &str| -> usize {
        let v = line.split_whitespace().find_map(|f| f.strip_prefix(k)).unwrap_or_else(|| panic!("no {k} in {line}"));
        v.parse().unwrap()
    };
    assert_eq!(field("entries="), n, "every line is an entry of the history");
    assert_eq!(field("records="), n);
    field("rise_kb=") * 1024
}

/// The cost of one more line: the rise between two sizes of the same session,
/// so what does not grow with the lines (line buffers, thread stacks) cancels.
fn per_line(tools: bool, test: &str) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let (small, large) = (LINES / 4, LINES);
    let (a, b) = (rise(dir.path(), small, tools, test), rise(dir.path(), large, tools, test));
    let per_line = b.saturating_sub(a) / (large - small);
    eprintln!("{test}: {small} lines {} kB more, {large}: {} kB more; {per_line} bytes a line", a >> 10, b >> 10);
    per_line
}

#[test]
fn reading_many_short_lines_costs_little_per_line() {
    if let Ok(path) = std::env::var("MEMORY_PER_LINE_FILE") {
        return measure_in_this_process(&path);
    }
    let n = per_line(false, "reading_many_short_lines_costs_little_per_line");
    assert!(n <= MAX_BYTES_PER_LINE, "{n} bytes a line: more than {MAX_BYTES_PER_LINE}");
}

#[test]
#[ignore = "reads 500,000 lines of tool calls: 250 MB and 10 s in a debug build"]
fn reading_many_tool_calls_costs_little_per_line() {
    if let Ok(path) = std::env::var("MEMORY_PER_LINE_FILE") {
        return measure_in_this_process(&path);
    }
    let n = per_line(true, "reading_many_tool_calls_costs_little_per_line");
    assert!(n <= MAX_BYTES_PER_TOOL_LINE, "{n} bytes a line: more than {MAX_BYTES_PER_TOOL_LINE}");
}
