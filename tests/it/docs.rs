//! The documentation holds together: every relative link in `README.md`,
//! `CONTRIBUTING.md` and `docs/*.md` names a file that exists (and, with an
//! `#anchor`, a heading in it), the README links every page of the manual, and
//! the table of formats in `docs/formats.md` has one row for each `--format` the
//! code knows (`Format::ALL`). That table is written by hand: its columns (where
//! each agent keeps its files, what is read, how it was checked) are held by no
//! table in the code, only its first column is.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use session_doctor::model::Format;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The documents, relative to the repository.
fn documents() -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("README.md"), PathBuf::from("CONTRIBUTING.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| p.strip_prefix(root()).expect("under the root").to_path_buf())
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// The lines of a document outside fenced code blocks, with their numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((n + 1, line));
        }
    }
    out
}

/// The targets of a line's Markdown links (`[text](target)`), code spans left out.
fn link_targets(line: &str) -> Vec<String> {
    let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
    let mut out = Vec::new();
    let mut rest = plain.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// The anchors GitHub gives a document's headings: lower case, punctuation
/// dropped but for `-` and `_`, spaces as `-`.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter_map(|(_, l)| l.strip_prefix('#'))
        .map(|h| {
            h.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

#[test]
fn every_relative_link_names_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(root().join(&file)).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let dir = file.parent().unwrap_or(Path::new(""));
        for (n, line) in prose(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let linked = if path.is_empty() { file.clone() } else { dir.join(path) };
                let Ok(linked_text) = std::fs::read(root().join(&linked)) else {
                    broken.push(format!("{}:{n}: {target}: no file {}", file.display(), linked.display()));
                    continue;
                };
                if !anchor.is_empty() && !anchors(&String::from_utf8_lossy(&linked_text)).contains(anchor) {
                    broken.push(format!(
                        "{}:{n}: {target}: no heading #{anchor} in {}",
                        file.display(),
                        linked.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_links_every_page_of_the_manual() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let linked: BTreeSet<String> = prose(&readme)
        .into_iter()
        .flat_map(|(_, l)| link_targets(l))
        .map(|t| t.split('#').next().unwrap_or_default().to_string())
        .collect();
    let missing: Vec<String> =
        documents().into_iter().skip(1).map(|p| p.display().to_string()).filter(|p| !linked.contains(p)).collect();
    assert!(missing.is_empty(), "pages the README does not link: {missing:?}");
}

#[test]
fn the_table_of_formats_has_a_row_for_every_format() {
    let doc = std::fs::read_to_string(root().join("docs/formats.md")).expect("docs/formats.md");
    let rows: Vec<&str> = doc
        .lines()
        .skip_while(|l| !l.starts_with("| `--format` |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_start_matches("| `").split('`').next().unwrap_or_default())
        .collect();
    let mut listed = rows.clone();
    listed.sort_unstable();
    listed.dedup();
    assert_eq!(listed.len(), rows.len(), "docs/formats.md lists a format twice: {rows:?}");
    let mut known: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    known.sort_unstable();
    assert_eq!(listed, known, "docs/formats.md's table of formats and Format::ALL (src/formats/mod.rs) differ");
}
