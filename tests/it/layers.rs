//! The house's layers: no module of `src/` imports one above it.
//!
//! Each top-level module (`src/<name>.rs` or `src/<name>/`) has a layer in
//! [`LAYERS`], bottom first. A module may use any module of a lower layer and
//! none of its own layer or above, so the modules can never form a cycle and a
//! type lives in the lowest module that uses it. Every `crate::…` path in code
//! counts (a `use`, a path in an expression, a doc link in a ground layer);
//! comments in layers above the ground are free to name what they like.

use std::path::Path;

/// The layers, bottom first; a module of `src/` not named here fails the test,
/// so a new module is given its place when it is added.
const LAYERS: &[&[&str]] = &[
    // Leaves: text, time, JSON, the provider vocabulary, panic containment, exit codes.
    &["json", "text", "clock", "provider", "contain", "exit", "file"],
    // Facts about bytes and provider errors.
    &["media", "classify"],
    // The canonical session, and fitting an image (media only).
    &["model", "fit"],
    // What a provider receives; the problem codes; files a command reads.
    &["request", "codes", "alias"],
    // One adapter per agent; crash-safe writes.
    &["formats", "atomic"],
    // The history's structure; where sessions live; the overlay.
    &["history", "discover", "overlay"],
    &["reader"],
    &["rewrite"],
    &["preview"],
    &["diagnose"],
    &["check", "guard", "repair"],
    &["report"],
    // The loopback proxy: a job of its own over the media checks, fit, the
    // request readers, the classifier and the notes repair writes.
    &["proxy"],
    &["cli"],
];

/// The ground layers: no line of theirs, comment or doc link included, names a
/// module above the ground (what the README's `grep` holds them to).
const GROUND: usize = 3;

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The top-level module a file of `src/` belongs to (`None` for the crate roots).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("under src/");
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The modules a line names with `crate::<module>`, and the group members of
/// `use crate::{a, b::c}`.
fn named(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `session_doctor::crate::` cannot occur; `mycrate::` is another word
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for member in group[..end].split(',') {
                let m = member.trim().split("::").next().unwrap_or_default();
                if !m.is_empty() {
                    out.push(m.to_string());
                }
            }
            continue;
        }
        let ident: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !ident.is_empty() {
            out.push(ident);
        }
    }
    out
}

fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with("//")
}

#[test]
fn no_module_imports_one_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = crate::common::rust_files(&src);
    let mut faults = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else { continue };
        let rel = file.strip_prefix(src.parent().unwrap()).unwrap().display().to_string();
        let Some(own) = layer(&module) else {
            faults.push(format!("{rel}: module `{module}` has no layer in tests/layers.rs's LAYERS: give it one"));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("read a source file");
        for (n, line) in text.lines().enumerate() {
            if is_comment(line) && own >= GROUND {
                continue;
            }
            for used in named(line) {
                if used == module || matches!(used.as_str(), "self" | "super") {
                    continue;
                }
                match layer(&used) {
                    Some(l) if l < own => {}
                    Some(l) => faults.push(format!(
                        "{rel}:{}: `{module}` (layer {own}) names `crate::{used}` (layer {l}), which is not below it",
                        n + 1
                    )),
                    None => {} // a macro or item of the crate root
                }
            }
        }
    }
    assert!(faults.is_empty(), "{} imports break the layers:\n{}", faults.len(), faults.join("\n"));
}

#[test]
fn every_layer_names_a_module_that_exists() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for module in LAYERS.iter().flat_map(|l| l.iter()) {
        let exists = src.join(format!("{module}.rs")).is_file() || src.join(module).join("mod.rs").is_file();
        assert!(exists, "LAYERS names `{module}`, which is no module of src/");
    }
}

#[test]
fn a_line_names_what_it_imports() {
    assert_eq!(named("use crate::model::{Format, Session};"), ["model"]);
    assert_eq!(named("use crate::{json, text::sanitize};"), ["json", "text"]);
    assert_eq!(named("    let x = crate::text::sanitize(&crate::media::refs::read(p));"), ["text", "media"]);
    assert!(named("use session_doctor::model;").is_empty());
}
