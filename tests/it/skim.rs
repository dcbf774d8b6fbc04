//! A line read skimmed (its long payloads not shown to the JSON parser, read
//! by the media judge straight from the line) gives the session a whole parse
//! gives: on every sample and every session the real agents wrote, skimmed as
//! eagerly as can be, and on lines made to trip it (a payload that is not JSON
//! text, bad base64, long text no medium claims, `data:` URLs, mirrors).

use crate::common;
use crate::common::media_corpus;

use std::path::{Path, PathBuf};

use session_doctor::reader::{self, ReadOptions, Skim};

/// Every string of 16 bytes or more cut to 8 (a `data:` URL's header with
/// it, so such a line is read whole), or to 64 (header kept).
const EAGER: [Skim; 2] = [Skim { line: 0, string: 16, keep: 8 }, Skim { line: 0, string: 16, keep: 64 }];

/// The session read with `skim`, or the error, as text: everything the reader made.
fn read(path: &Path, skim: Skim) -> String {
    let opts = ReadOptions { skim, threads: 1, ..ReadOptions::default() };
    match reader::read_session(path, &opts) {
        Ok(s) => format!("{s:#?}"),
        Err(e) => format!("error: {e:#}"),
    }
}

fn same_skimmed_or_not(path: &Path) {
    let whole = read(path, Skim::off());
    for skim in EAGER.into_iter().chain([Skim::default()]) {
        let skimmed = read(path, skim);
        if skimmed != whole {
            let at = whole.lines().zip(skimmed.lines()).position(|(a, b)| a != b).unwrap_or(0);
            let show = |s: &str| s.lines().skip(at.saturating_sub(3)).take(8).collect::<Vec<_>>().join("\n");
            panic!(
                "{}: read {skim:?} differs from line {at}:\n{}\n--- whole:\n{}",
                path.display(),
                show(&skimmed),
                show(&whole)
            );
        }
    }
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_sample_and_agent_session_reads_the_same_skimmed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(&root.join("samples"), &mut all);
    files(&root.join("tests/data"), &mut all);
    let sessions: Vec<PathBuf> = all
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| ["jsonl", "json", "zst", "db"].contains(&x.to_str().unwrap_or(""))))
        .collect();
    assert!(sessions.len() >= 60, "{} files", sessions.len());
    for path in &sessions {
        same_skimmed_or_not(path);
    }
}

/// A Claude Code user line carrying `data` as an image, and `extra` as
/// members of its message record.
fn claude_line(data: &str, extra: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"u-{n}","parentUuid":null,"sessionId":"s","timestamp":"2026-11-30T10:00:00Z","message":{{"role":"user","content":[{{"type":"text","text":"look"}},{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}]}}{extra}}}"#,
        n = data.len() + extra.len()
    )
}

#[test]
fn lines_made_to_trip_a_skim_read_as_a_whole_parse_reads_them() {
    let png = media_corpus::png(400, 200);
    // A byte of its image data flipped: its chunk's CRC no longer matches.
    let mut broken = png.clone();
    broken[png.len() / 2] ^= 0xff;
    let (png, broken) = (common::b64(&png), common::b64(&broken));
    let long_text = "word ".repeat(40_000);
    // A Codex session: its meta line, then a user message with an image.
    let codex_image = format!(
        r#"{{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{{"id":"0199a0b0-0000-7000-8000-000000000001","cwd":"/w","originator":"codex_exec","cli_version":"0.171.0"}}}}
{{"timestamp":"2026-11-30T10:00:01Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_image","image_url":"data:image/png;base64,{png}"}},{{"type":"input_text","text":"{long_text}"}}]}}}}"#
    );
    let cases: Vec<(&str, String)> = vec![
        ("a valid PNG", claude_line(&png, "")),
        ("a broken PNG", claude_line(&broken, "")),
        // A raw tab inside the payload: not JSON, whichever way it is read.
        ("a tab in the payload", claude_line(&format!("{}\t{}", &png[..1000], &png[1000..]), "")),
        ("a non-ASCII byte in the payload", claude_line(&format!("{}é{}", &png[..1000], &png[1000..]), "")),
        ("bad base64", claude_line(&format!("{}!{}", &png[..1000], &png[1000..]), "")),
        ("URL-safe base64", claude_line(&png.replace('+', "-").replace('/', "_"), "")),
        ("a long text beside it", claude_line(&png, &format!(r#","note":"{long_text}""#))),
        ("the same bytes twice", claude_line(&png, &format!(r#","toolUseResult":{{"file":{{"base64":"{png}"}}}}"#))),
        ("a payload cut short", {
            let line = claude_line(&png, "");
            line[..line.len() - 200].to_string()
        }),
        ("an escaped payload", claude_line(&png.replace('/', "\\/"), "")),
        // The UI's copy of a tool's image, not the same bytes, a raw tab in it: never decoded, still checked.
        ("a broken copy for the UI", {
            let copy = format!("{}\t{}", &png[..1000], &png[1001..]);
            format!(
                r#"{{"type":"user","uuid":"u-r","parentUuid":null,"sessionId":"s","timestamp":"2026-11-30T10:00:00Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{png}"}}}}]}}]}},"toolUseResult":{{"type":"image","file":{{"base64":"{copy}","type":"image/png"}}}}}}"#
            )
        }),
        ("a data URL", codex_image.clone()),
        (
            "a data URL with a long header",
            codex_image.replace("data:image/png;", &format!("data:image/png;{};", "x=y;".repeat(100))),
        ),
        ("a data URL not in base64", codex_image.replace(";base64,", ",").replace(&png, &"%41".repeat(30_000))),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, line) in &cases {
        // The default skim takes these lines too (each is over 128 KiB, its payload over 64 KiB).
        assert!(line.lines().last().unwrap().len() > Skim::default().line, "{name}: {} bytes", line.len());
        let around = if line.starts_with(r#"{"type":"user""#) {
            vec![claude_line(&png, ""), line.clone(), claude_line(&png, "")]
        } else {
            vec![line.clone(), line.lines().last().unwrap().to_string()]
        };
        for lines in [vec![line.clone()], around] {
            let path = dir.path().join(format!("{}.jsonl", name.replace(' ', "-")));
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            same_skimmed_or_not(&path);
        }
    }
}

/// Which agent wrote a file is told from its lines skimmed: one that is not
/// JSON only inside its payload still tells, and the reader says what is
/// wrong with it (read whole, it made the file unrecognisable).
#[test]
fn a_line_broken_only_inside_its_payload_still_tells_the_agent() {
    let png = common::b64(&media_corpus::png(400, 200));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, claude_line(&format!("{}\t{}", &png[..1000], &png[1000..]), "") + "\n").unwrap();
    let s = reader::read_session(&path, &ReadOptions::default()).unwrap();
    assert_eq!(s.format, session_doctor::model::Format::ClaudeCode);
    let f = s.findings.iter().find(|f| f.code == Some("line.invalid_json")).expect("the line is named");
    assert_eq!(f.line, 1);
    assert!(f.message.contains("control character"), "{}", f.message);
    // A byte that is not UTF-8 in the payload: read with it replaced, as a whole parse reads it.
    let line = claude_line(&png, "");
    let at = line.find(&png).unwrap() + 1000;
    let bytes = [&line.as_bytes()[..at], b"\xff", &line.as_bytes()[at..], b"\n"].concat();
    std::fs::write(&path, bytes).unwrap();
    let s = reader::read_session(&path, &ReadOptions::default()).unwrap();
    assert_eq!(s.format, session_doctor::model::Format::ClaudeCode);
    assert!(s.findings.iter().any(|f| f.code == Some("line.invalid_utf8") && f.line == 1), "{:?}", s.findings);
    same_skimmed_or_not(&path);
}
