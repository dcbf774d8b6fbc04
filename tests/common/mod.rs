//! Shared helpers for the integration tests: run the binary, hash files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

pub mod wrap;

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_session-doctor"))
}

pub fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

/// Runs `scan --json` on one file and parses the document.
pub fn scan_json(file: &Path, extra: &[&str]) -> (serde_json::Value, i32) {
    let mut args = vec!["scan", "--json"];
    args.extend_from_slice(extra);
    let path = file.to_str().expect("utf-8 path");
    args.push(path);
    let out = run(&args);
    let code = out.status.code().expect("exited");
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("scan --json printed no JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr))
    });
    (v, code)
}

pub fn sha256_file(p: &Path) -> String {
    let bytes = std::fs::read(p).expect("readable");
    format!("{:x}", Sha256::digest(&bytes))
}

pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
