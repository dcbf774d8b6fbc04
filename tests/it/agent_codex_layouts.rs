//! Codex CLI 0.171.0's rollouts in the layouts besides a plain file (see
//! `tests/data/agents/codex/README.md`): a rollout its compression worker turned
//! into `rollout-….jsonl.zst`, and `compacted` lines whose `replacement_history`
//! carries an image over.

use crate::common;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use common::{diagnose, run, scan_json, sha256_file};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/codex").join(name)
}

/// The fixture copied into `dir` as `name` (nothing is ever written beside the original).
fn copy_as(fixture_name: &str, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(fixture(fixture_name), &to).unwrap();
    to
}

/// The text of the compressed fixture, decompressed here on its own.
fn unzstd(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(std::fs::File::open(path).unwrap()).unwrap().read_to_end(&mut out).unwrap();
    out
}

const ZST: &str = "image-refused-compressed.jsonl.zst";
const ROLLOUT: &str = "rollout-2026-12-01T10-35-42-01a2312c-b2e9-7a22-bef2-cc5dbc7d28a5.jsonl";

fn stdout_json(args: &[&str]) -> Value {
    let out = run(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn a_compressed_rollout_reads_as_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let zst = copy_as(ZST, dir.path(), &format!("{ROLLOUT}.zst"));
    let plain = dir.path().join("plain").join(ROLLOUT);
    std::fs::create_dir_all(plain.parent().unwrap()).unwrap();
    std::fs::write(&plain, unzstd(&zst)).unwrap();
    let (packed, code) = scan_json(&zst, &[]);
    assert_eq!(code, 0, "{packed:#}");
    let (text, _) = scan_json(&plain, &[]);
    assert_eq!(packed["format"], "codex", "{packed:#}");
    assert_eq!(packed["file"], zst.display().to_string(), "reports name the .zst, not a temporary file");
    for k in ["lines", "entries", "attachments", "provider"] {
        assert_eq!(packed[k], text[k], "{k}");
    }
    let names: Vec<&str> =
        packed["attachments"].as_array().unwrap().iter().filter_map(|a| a["name"].as_str()).collect();
    assert_eq!(names, ["bad.png"], "{packed:#}");
}

#[test]
fn diagnose_reads_the_compressed_rollout_and_its_deep_checks_and_thumbnails_read_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let zst = copy_as(ZST, dir.path(), &format!("{ROLLOUT}.zst"));
    let page = dir.path().join("report.html");
    let (d, code) = diagnose(&zst, &["--html", page.to_str().unwrap()]);
    assert_eq!((code, d["stuck"].as_bool()), (1, Some(true)), "{d:#}");
    assert_eq!(d["failure"]["class"], "media_rejected", "{d:#}");
    let suspects = d["suspects"].as_array().unwrap();
    assert_eq!(suspects.len(), 1, "{d:#}");
    assert_eq!(suspects[0]["name"], "bad.png");
    // The suspect was deep-checked from its bytes (a span in the decompressed text).
    assert!(suspects[0]["why"].as_str().unwrap_or_default().contains("valid"), "{d:#}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("cannot read the session again"), "a thumbnail failed to read the text");
    assert!(html.contains("data:image/png;base64,"), "the page holds the suspect's thumbnail");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(next.iter().any(|n| n.contains(".jsonl.zst")), "the next commands name the .zst: {next:?}");
}

#[test]
fn exclude_preview_and_repair_work_on_the_zst_and_the_copy_is_plain_with_a_new_id() {
    let dir = tempfile::tempdir().unwrap();
    let zst = copy_as(ZST, &dir.path().join("sessions/2026/12/01"), &format!("{ROLLOUT}.zst"));
    let before = sha256_file(&zst);
    let f = zst.to_str().unwrap();
    let out = run(&["exclude", f, "--suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(PathBuf::from(format!("{f}.doctor")).is_file(), "the overlay sits beside the .zst");
    let body = stdout_json(&["preview", f]);
    let text = body.to_string();
    assert!(!text.contains("input_image"), "the excluded image is not sent: {text}");
    assert!(text.contains("Attachment omitted"), "its placeholder is: {text}");
    let rep = stdout_json(&["repair", f, "--json"]);
    let copy = PathBuf::from(rep["out"].as_str().unwrap());
    assert_eq!(copy.parent(), zst.parent(), "the copy is beside the original, where Codex resumes from");
    assert!(copy.extension().is_some_and(|e| e == "jsonl"), "{}", copy.display());
    let first = std::fs::read(&copy).unwrap();
    assert_eq!(first.first(), Some(&b'{'), "the copy is plain text");
    let id = rep["id"].as_str().unwrap();
    assert!(!ROLLOUT.contains(id) && String::from_utf8_lossy(&first).contains(id), "the copy is a new session");
    assert_eq!(sha256_file(&zst), before, "the .zst is never written");
    let (d, code) = diagnose(&copy, &[]);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
}

#[test]
fn a_cut_zst_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fixture(ZST)).unwrap();
    let cut = dir.path().join("rollout-cut.jsonl.zst");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = run(&["scan", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rollout-cut.jsonl.zst") && err.contains("zstd"), "{err}");
    assert!(!err.contains("session-doctor-zst-"), "the temporary file is not named: {err}");
}

#[test]
fn sessions_lists_a_rollout_once_by_its_plain_file_when_both_exist() {
    use session_doctor::discover::{Env, find};
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join(".codex/sessions/2026/12/01");
    let zst = copy_as(ZST, &day, &format!("{ROLLOUT}.zst"));
    let env = Env { home: home.path().to_path_buf(), ..Env::default() };
    let listed = |env: &Env| find(env, Some("codex")).into_iter().map(|f| f.path).collect::<Vec<_>>();
    assert_eq!(listed(&env), vec![zst.clone()], "a compressed rollout is a session");
    std::fs::write(day.join(ROLLOUT), unzstd(&zst)).unwrap();
    assert_eq!(listed(&env), vec![day.join(ROLLOUT)], "both forms: the plain one, which Codex reads and appends to");
}

// ---------------------------------------------------------------- compaction

const COMPACTED: &str = "compacted-image-carried.jsonl";

/// The fixture with its image's bytes replaced by `png` (base64) on every line.
fn with_image(dir: &Path, png: &[u8]) -> PathBuf {
    let text = std::fs::read_to_string(fixture(COMPACTED)).unwrap();
    let original = original_png();
    let b64 = |b: &[u8]| common::b64(b);
    common::write(dir, COMPACTED, &text.replace(&b64(&original), &b64(png)))
}

/// The PNG Codex attached, as written in the fixture.
fn original_png() -> Vec<u8> {
    use base64::Engine as _;
    let text = std::fs::read_to_string(fixture(COMPACTED)).unwrap();
    let start = text.find("data:image/png;base64,").unwrap() + "data:image/png;base64,".len();
    let end = start + text[start..].find('"').unwrap();
    base64::engine::general_purpose::STANDARD.decode(&text[start..end]).unwrap()
}

#[test]
fn an_image_a_compaction_carries_over_is_counted_once_where_codex_sends_it() {
    // Lines 8 (the user's message), 21 and 40 (two compactions) hold the image;
    // only the last compaction's replacement history is sent.
    let (doc, _) = scan_json(&fixture(COMPACTED), &[]);
    let a = doc["attachments"].as_array().unwrap();
    let refs: Vec<&str> = a.iter().filter_map(|a| a["ref"].as_str()).collect();
    assert_eq!(refs, ["L40.1"], "{doc:#}");
    assert_eq!(a[0]["origin"], "user");
}

#[test]
fn a_broken_image_in_the_replacement_history_is_judged_and_the_prime_suspect() {
    let dir = tempfile::tempdir().unwrap();
    let png = original_png();
    let cut = with_image(dir.path(), &png[..png.len() / 2]);
    let (doc, code) = scan_json(&cut, &[]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["attachments"][0]["verdict"], "invalid", "{doc:#}");
    let (d, code) = diagnose(&cut, &[]);
    assert_eq!((code, d["stuck"].as_bool()), (1, Some(true)), "{d:#}");
    let prime = common::prime_refs(&d);
    assert_eq!(prime, ["L40.1"], "{d:#}");
    // gpt-5 answered the turns the compactions replaced: it did accept requests in this session.
    let notes = d["notes"].to_string();
    assert!(notes.contains("compaction") && !notes.contains("never accepted"), "{notes}");
}

#[test]
fn preview_sends_the_replacement_history_and_an_excluded_image_stays_out_of_preview_and_copy() {
    let dir = tempfile::tempdir().unwrap();
    let f = copy_as(COMPACTED, dir.path(), COMPACTED);
    let s = f.to_str().unwrap();
    let body = stdout_json(&["preview", s]);
    let input = body["input"].as_array().unwrap();
    // What Codex sends after its last compaction: that line's replacement history, then the turn after it.
    let lines: Vec<Value> =
        std::fs::read_to_string(&f).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = lines.iter().rposition(|v| v["type"] == "compacted").unwrap();
    let mut want: Vec<Value> = lines[last]["payload"]["replacement_history"].as_array().unwrap().clone();
    want.extend(lines[last..].iter().filter(|v| v["type"] == "response_item").map(|v| v["payload"].clone()));
    for w in &mut want {
        w.as_object_mut().unwrap().remove("internal_chat_message_metadata_passthrough");
    }
    assert_eq!(input, &want);
    assert_eq!(body.to_string().matches("input_image").count(), 1, "the image once, as Codex sends it");

    let out = run(&["exclude", s, "--ref", "L40.1"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let body = stdout_json(&["preview", s]);
    assert!(!body.to_string().contains("input_image"), "excluded: not sent");
    let rep = stdout_json(&["repair", s, "--json"]);
    let copy = std::fs::read_to_string(rep["out"].as_str().unwrap()).unwrap();
    let compactions: Vec<Value> =
        copy.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|v| v["type"] == "compacted").collect();
    let last = compactions.last().unwrap().to_string();
    assert!(!last.contains("data:image") && last.contains("Attachment omitted"), "{last}");
    let (d, code) = diagnose(Path::new(rep["out"].as_str().unwrap()), &[]);
    assert_eq!((code, d["stuck"].as_bool()), (0, Some(false)), "{d:#}");
}

#[test]
fn the_copy_of_any_compressed_session_is_named_as_plain_text() {
    // The copy is plain JSON Lines whatever the format: never a `.zst` name over plain text.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(common::sample("openai-responses.jsonl")).unwrap();
    let packed = dir.path().join("requests.jsonl.zst");
    std::fs::write(&packed, zstd::encode_all(&text[..], 3).unwrap()).unwrap();
    let rep = stdout_json(&["repair", packed.to_str().unwrap(), "--json", "--force"]);
    let out = PathBuf::from(rep["out"].as_str().unwrap());
    assert_eq!(out, dir.path().join("requests.repaired.jsonl"));
    let copy = std::fs::read_to_string(&out).expect("the copy is text");
    assert!(copy.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()), "the copy is plain JSON Lines");
}

#[test]
fn the_same_image_carried_138_times_is_138_images_of_the_request() {
    // Issue 24948's rollout: one image 138 times in one replacement history. Codex sends
    // every copy, so each counts against the provider's image limit; one decision excludes all.
    let dir = tempfile::tempdir().unwrap();
    let mut lines: Vec<Value> = std::fs::read_to_string(fixture(COMPACTED))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.iter().rposition(|v| v["type"] == "compacted").unwrap();
    let history = lines[last]["payload"]["replacement_history"].as_array_mut().unwrap();
    let at = history.iter().position(|it| it.to_string().contains("input_image")).unwrap();
    let copy = history[at].clone();
    history.splice(at..at, std::iter::repeat_n(copy, 137));
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    let f = common::write(dir.path(), COMPACTED, &text);
    let (doc, _) = scan_json(&f, &["--provider", "anthropic"]);
    assert_eq!(doc["attachments"].as_array().unwrap().len(), 138, "{}", doc["findings"]);
    let s = f.to_str().unwrap();
    let out = run(&["exclude", s, "--suspects"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let body = stdout_json(&["preview", s]);
    assert!(!body.to_string().contains("input_image"), "all 138 left out");
    let rep = stdout_json(&["repair", s, "--json"]);
    let copy = std::fs::read_to_string(rep["out"].as_str().unwrap()).unwrap();
    assert!(!copy.lines().nth(last).unwrap().contains("data:image"), "the copy's compaction carries no image");
}
