//! Issue 36, item 6: the guard judges only what the agent's read tool would
//! send as an image or a PDF, by the agent's own rule (`src/guard/reader.rs`).
//! Before, an SVG, a BMP or a TIFF was denied for every agent with "Tell the
//! user the file is broken", though Claude Code, Cline and pi read them as
//! text; where the agent does send one (Gemini CLI, opencode: a BMP by its
//! extension), the denial says the file is not broken.

use crate::common;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

const SVG: &str =
    r#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>"#;

/// A 2×2 24-bit BMP.
fn bmp() -> Vec<u8> {
    let pixels: Vec<u8> = [[0u8, 0, 255, 0, 0, 255, 0, 0]; 2].concat();
    let mut b = b"BM".to_vec();
    b.extend(u32::try_from(54 + pixels.len()).unwrap().to_le_bytes());
    b.extend([0, 0, 0, 0]);
    b.extend(54u32.to_le_bytes());
    for v in [40u32, 2, 2] {
        b.extend(v.to_le_bytes());
    }
    b.extend(1u16.to_le_bytes());
    b.extend(24u16.to_le_bytes());
    b.extend([0u8; 24]);
    b.extend(&pixels);
    b
}

/// A little-endian TIFF header with an empty directory.
const TIFF: &[u8] = b"II*\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00";

/// A folder with a drawing, a bitmap and a TIFF, by their usual names.
fn work() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("logo.svg"), SVG).unwrap();
    std::fs::write(dir.path().join("shot.bmp"), bmp()).unwrap();
    std::fs::write(dir.path().join("scan.tiff"), TIFF).unwrap();
    dir
}

fn guard(dir: &Path, args: &[&str], stdin: &str) -> (i32, String) {
    let mut child = common::bin()
        .arg("guard")
        .args(args)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into())
}

const NAMES: [&str; 3] = ["logo.svg", "shot.bmp", "scan.tiff"];

#[test]
fn claude_code_reads_svg_bmp_and_tiff_as_text_so_the_hook_stays_silent() {
    let w = work();
    for name in NAMES {
        let event = json!({"session_id": "s", "cwd": w.path(), "hook_event_name": "PreToolUse",
                           "tool_name": "Read", "tool_input": {"file_path": name}});
        let (code, out) = guard(w.path(), &["--hook", "claude-code"], &event.to_string());
        assert_eq!((code, out.as_str()), (0, ""), "{name}");
    }
}

#[test]
fn cline_reads_svg_bmp_and_tiff_as_text_so_the_hook_changes_nothing() {
    let w = work();
    let files: Vec<Value> = NAMES.iter().map(|n| json!({"path": n})).collect();
    let event = json!({"hookName": "tool_call", "workspaceRoots": [w.path()],
                       "tool_call": {"id": "c", "name": "read_files", "input": {"files": files}}});
    let (code, out) = guard(w.path(), &["--hook", "cline"], &event.to_string());
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn gemini_cli_reads_svg_as_text_and_sends_bmp_and_tiff_which_gemini_refuses_as_not_broken() {
    let w = work();
    let event = |name: &str| {
        json!({"session_id": "s", "cwd": w.path(), "hook_event_name": "BeforeTool", "tool_name": "read_file",
               "tool_input": {"file_path": name}})
        .to_string()
    };
    let hook = ["--hook", "gemini-cli", "--provider", "gemini"];
    assert_eq!(guard(w.path(), &hook, &event("logo.svg")), (0, String::new()));
    let (_, out) = guard(w.path(), &hook, &event("shot.bmp"));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"], "deny", "{v}");
    let want = format!(
        "session-doctor guard: {} was not read: \"{}\" is a BMP image; no provider accepts it as an image or a PDF. \
         gemini rejects such a file, and once it is in the session every later request fails the same way. The file \
         is not broken: gemini does not take its type. Convert it to PNG or JPEG first, or ask the user for a copy in \
         one of those.",
        w.path().join("shot.bmp").display(),
        w.path().join("shot.bmp").display(),
    );
    assert_eq!(v["reason"], want.as_str());
}

#[test]
fn pi_and_opencode_guards_judge_by_their_agents_rule() {
    let w = work();
    let path = |n: &str| w.path().join(n).to_str().unwrap().to_string();
    let (svg, bmp) = (path("logo.svg"), path("shot.bmp"));
    // pi sends an image by its first bytes: JPEG, PNG, GIF or WebP only.
    let (code, out) = guard(w.path(), &["--json", "--for", "pi", &svg, &bmp], "");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, 0, "{v}");
    for row in v.as_array().unwrap() {
        assert_eq!(row["decision"], "pass");
        assert_eq!(row["reason"], "pi reads it as text, not as an image or a PDF");
    }
    // opencode reads an SVG as text, and sends a BMP by its extension.
    let (code, out) = guard(w.path(), &["--json", "--for", "opencode", &svg, &bmp], "");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, 1, "{v}");
    assert_eq!((v[0]["decision"].as_str(), v[1]["decision"].as_str()), (Some("pass"), Some("deny")));
    assert!(v[1]["reason"].as_str().unwrap().contains("The file is not broken"), "{v}");
    // The extensions the integrations install name their agent.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations");
    let pi = std::fs::read_to_string(root.join("pi/session-doctor-guard.ts")).unwrap();
    assert!(pi.contains(r#"["--for", "pi"]"#), "pi's guard names pi");
    let oc = std::fs::read_to_string(root.join("opencode/session-doctor-guard.js")).unwrap();
    assert!(oc.contains(r#""--for", "opencode""#), "opencode's guard names opencode");
}
