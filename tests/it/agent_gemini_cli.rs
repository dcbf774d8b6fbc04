//! Gemini CLI 0.61.0 sessions as the real CLI wrote them (tests/data/agents/gemini-cli,
//! see its README): a session stuck on a cut PNG its `read_file` attached, after
//! the CLI's own failed resume, a healthy session resumed after a tool call, and
//! a session refused for its three images, of which the headless CLI recorded nothing,
//! and one whose own resume in a later minute copied every response into each call's result.

use crate::common;

use std::path::{Path, PathBuf};

use common::{json_of, run};
use serde_json::{Value, json};

const STUCK: &str = "session-2026-12-01T08-15-1e60ab7e.jsonl";
const HEALTHY: &str = "session-2026-12-01T08-00-c5d9e38f.jsonl";
const UNRECORDED: &str = "session-2026-12-02T03-04-eafdcb04.jsonl";
const OLD_ID: &str = "1e60ab7e-1f4d-4546-a257-eabf104a80ec";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/gemini-cli").join(name)
}

/// A copy in a chats folder of its own, so overlays and repaired copies land there.
fn chats(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::copy(fixture(name), &path).unwrap();
    (dir, path)
}

#[test]
fn a_cut_png_from_read_file_is_media_rejected_with_the_png_as_prime_suspect() {
    let (_dir, s) = chats(STUCK);
    let (d, code) = json_of(&["diagnose", s.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{d:#}");
    assert_eq!(d["stuck"], json!(true));
    assert_eq!(d["failure"]["class"], json!("media_rejected"), "{d:#}");
    let prime: Vec<&Value> = d["suspects"].as_array().unwrap().iter().filter(|s| s["prime"] == json!(true)).collect();
    assert!(!prime.is_empty(), "{d:#}");
    // Every copy of the image the CLI sends is the tool's PNG: the call record's
    // result and the user records that repeat it.
    for p in &prime {
        assert_eq!(p["name"], json!("/tmp/sd-gemini-cli-8bv6d1a9/work/shot.png"), "{p:#}");
    }
    assert!(d["next"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains(" exclude ")), "{d:#}");
}

#[test]
fn a_resumed_session_that_sends_a_tool_response_twice_is_stuck() {
    // Gemini CLI sends the response of the call's record and of its user record
    // on every resume; Gemini refuses two responses to one call ("the number of
    // function response parts is equal to the number of function call parts",
    // gemini-cli#16212). The 200 this fixture records after its resume came from
    // a fake provider that did not pair Gemini calls: no proof of the contrary.
    let (_dir, s) = chats(HEALTHY);
    let (d, code) = json_of(&["diagnose", s.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (1, &json!(true)), "{d:#}");
    assert_eq!(d["failure"]["class"], json!("history_invalid"), "{d:#}");
    let kinds: Vec<&Value> = d["history"].as_array().unwrap().iter().map(|f| &f["kind"]).collect();
    assert!(kinds.iter().any(|k| k.as_str().unwrap().contains("duplicate")), "{d:#}");
}

#[test]
fn an_unanswered_request_the_headless_cli_recorded_no_failure_of_is_not_called_healthy() {
    // Both runs met the provider's 400 for three images; the CLI wrote no `error`
    // record (those are its interactive UI's), so the file ends on the request.
    let (_dir, s) = chats(UNRECORDED);
    let file = s.to_str().unwrap();
    // What the file can tell: the CLI's resume repeats each of the three responses
    // (its call record's and its user record's), which Gemini refuses
    // (gemini-cli#16212); whether that is all, only the CLI's error can say.
    let (d, code) = json_of(&["diagnose", file, "--json"]);
    assert_eq!((code, &d["stuck"], &d["failure"]["class"]), (1, &json!(true), &json!("history_invalid")), "{d:#}");
    let repeats = d["history"].as_array().unwrap().iter().filter(|h| h["kind"] == json!("duplicate_result")).count();
    assert_eq!(repeats, 3, "{d:#}");
    let next: Vec<&str> = d["next"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(
        next,
        [
            format!("session-doctor repair {file}"),
            format!("session-doctor diagnose {file} --error '<the error the agent printed>'")
        ],
        "{d:#}"
    );
    assert_eq!(d["undetermined"], json!(true), "{d:#}");
    // `check` fails it on the repeats, and still says the file cannot tell the rest.
    let out = run(&["check", file]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("history.duplicate_result") && said.contains("warning[session.undetermined]"), "{out:?}");
    // Given the error the CLI printed, the verdict is the provider's.
    let error = r#"{"error": {"code": 400, "message": "Too many images in request: 3 images provided, but the model supports a maximum of 2 images.", "status": "INVALID_ARGUMENT"}}"#;
    let (d, code) = json_of(&["diagnose", file, "--json", "--error", error]);
    assert_eq!((code, &d["failure"]["class"], &d["failure"]["limit"]), (1, &json!("image_limit"), &json!(2)), "{d:#}");
    assert!(d["next"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("--max-images 2")), "{d:#}");
}

/// One content's parts, as the provider reads them; the session context the
/// CLI writes fresh on each start is not the session's.
fn parts(c: &Value) -> Vec<Value> {
    c["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["text"].as_str().is_some_and(|t| t.starts_with("<session_context>")))
        .cloned()
        .collect()
}

#[test]
fn preview_after_exclude_is_what_the_cli_sent_resuming_the_repaired_copy() {
    let (_dir, s) = chats(STUCK);
    let f = s.to_str().unwrap();
    assert_eq!(run(&["exclude", f, "--suspects"]).status.code(), Some(0));
    let out = run(&["preview", f, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary: Value = serde_json::from_str(String::from_utf8_lossy(&out.stderr).lines().last().unwrap()).unwrap();
    let sent: Value = serde_json::from_str(&std::fs::read_to_string(fixture("resumed-request.json")).unwrap()).unwrap();

    let mut want: Vec<(Value, Vec<Value>)> =
        sent["contents"].as_array().unwrap().iter().map(|c| (c["role"].clone(), parts(c))).collect();
    // The fixture's copy was written by a session-doctor that kept the CLI's repeat
    // of the response (its user record), so the CLI sent it twice, and a fake
    // provider that did not pair Gemini calls took it; Gemini refuses it
    // (gemini-cli#16212). The copy `repair` writes now holds it once (the suite's
    // cut_png_rescued checks that against the CLI): the repeat and its note go here.
    let turn = &mut want[2].1;
    assert_eq!(turn.len(), 4, "{turn:#?}");
    assert_eq!(turn[0], turn[2]);
    turn.truncate(2);
    // What the CLI adds on resume: a placeholder closing the unanswered tool turn, the new prompt.
    assert_eq!(want.pop().unwrap().1, vec![json!({"text": "continue"})]);
    assert_eq!(
        want.pop().unwrap().1,
        vec![json!({"text": "[The previous response was interrupted before it completed.]"})]
    );
    let got: Vec<(Value, Vec<Value>)> =
        got["contents"].as_array().unwrap().iter().map(|c| (c["role"].clone(), parts(c))).collect();
    assert_eq!(got, want);
    // What no session holds is named, not silently missing.
    let named = summary["not_in_session"].to_string();
    for (key, words) in [("systemInstruction", "system instruction"), ("tools", "tool declarations")] {
        assert!(sent["also_sent"].as_array().unwrap().contains(&json!(key)));
        assert!(named.contains(words), "{summary}");
    }
}

/// Every session id the CLI reads from a file (headers and `$set`), in order.
fn ids(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            let id = if v["projectHash"].is_string() { &v["sessionId"] } else { &v["$set"]["sessionId"] };
            id.as_str().map(str::to_string)
        })
        .collect()
}

#[test]
fn a_repaired_copy_names_its_new_id_in_every_header_and_set() {
    let (_dir, s) = chats(STUCK);
    // The CLI started twice in one minute: two headers, and a `$set` from its resume.
    assert_eq!(ids(&s), vec![OLD_ID; 3]);
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let new = r["id"].as_str().unwrap();
    assert_ne!(new, OLD_ID);
    assert_eq!(r["resume"], json!(format!("gemini --resume {new}")));
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    // Beside the original, named as the CLI names sessions (it finds them by the id's first 8).
    assert_eq!(copy.parent(), s.parent());
    let name = copy.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("session-") && name.ends_with(&format!("-{}.jsonl", &new[..8])), "{name}");
    assert_eq!(ids(&copy), vec![new; 3]);
}

#[test]
fn a_repaired_copy_holds_each_response_once_so_its_resume_sends_it_once() {
    let (_dir, s) = chats(HEALTHY);
    let before = std::fs::read(&s).unwrap();
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(std::fs::read(&s).unwrap(), before);
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    let (p, code) = json_of(&["preview", copy.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{p:#}");
    let responses: Vec<&Value> = (p["contents"].as_array().unwrap().iter())
        .flat_map(|c| c["parts"].as_array().unwrap())
        .filter(|p| p.get("functionResponse").is_some())
        .collect();
    assert_eq!(responses.len(), 1, "{p:#}");
    // The checkpoint keeps the result as the CLI wrote it (`<call record id>_response`);
    // the user record that repeats it is gone from it.
    let checkpointed = |path: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(path).unwrap();
        let lines = text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok());
        (lines.filter_map(|v| v["$set"]["messages"].as_array().cloned()).flatten())
            .filter_map(|m| m["id"].as_str().map(str::to_string))
            .collect()
    };
    let repeat = "1b850b65-7d01-4838-b07c-e2088814f8c2".to_string();
    let kept = "f8842140-3780-40bd-a5a9-e2f967a82136_response".to_string();
    assert!(checkpointed(&s).contains(&repeat) && checkpointed(&s).contains(&kept));
    assert!(!checkpointed(&copy).contains(&repeat) && checkpointed(&copy).contains(&kept));
    let (d, code) = json_of(&["diagnose", copy.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    let out = run(&["repair", s.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 repeated tool response"), "{out:?}");
}

/// The codes `scan --json` reports for `file`.
fn codes(file: &Path) -> Vec<String> {
    let (doc, _) = json_of(&["scan", "--json", file.to_str().unwrap()]);
    doc["findings"].as_array().unwrap().iter().filter_map(|f| f["code"].as_str().map(str::to_string)).collect()
}

/// Gemini CLI's startup cleanup deletes a file of its chats folder that holds
/// no message, and every file of the same short id with it: a session with
/// such a file beside it (what `--resume` in a later minute leaves) is lost at
/// Gemini CLI's next start on another session. Seen in the round-trip suite,
/// reproduced with this very file (tests/agents/NOTES-gemini-cli.md).
#[test]
fn a_file_with_no_message_beside_a_session_under_its_short_id_is_told() {
    let (dir, s) = chats(HEALTHY);
    assert!(!codes(&s).contains(&"gemini.cleanup_deletes".to_string()), "nothing beside it yet");
    let header = std::fs::read_to_string(&s).unwrap().lines().next().unwrap().to_string();
    // A file of another id, and one of this id that holds messages: neither is deleted.
    std::fs::write(dir.path().join("session-2026-12-01T08-01-00ff00ff.jsonl"), format!("{header}\n")).unwrap();
    std::fs::copy(&s, dir.path().join("session-2026-12-01T08-02-c5d9e38f.jsonl")).unwrap();
    assert!(!codes(&s).contains(&"gemini.cleanup_deletes".to_string()));
    // The header alone, as the resume in a later minute starts it.
    let empty = "session-2026-12-01T08-01-c5d9e38f.jsonl";
    std::fs::write(dir.path().join(empty), format!("{header}\n")).unwrap();
    let (doc, _) = json_of(&["scan", "--json", s.to_str().unwrap()]);
    let f = doc["findings"].as_array().unwrap().iter().find(|f| f["code"] == "gemini.cleanup_deletes").expect("told");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains(empty) && message.contains("c5d9e38f"), "{message}");
    assert!(!message.contains("08-02"), "the file that holds messages is not named: {message}");
}

/// The stuck session with `lines` appended, as the CLI appends them.
fn appended(lines: &[Value]) -> (tempfile::TempDir, PathBuf) {
    let (dir, s) = chats(STUCK);
    let mut text = std::fs::read_to_string(&s).unwrap();
    for l in lines {
        text.push_str(&format!("{l}\n"));
    }
    std::fs::write(&s, text).unwrap();
    (dir, s)
}

/// The text parts of the previewed request, the session context left out.
fn previewed_texts(s: &Path) -> Vec<String> {
    let out = run(&["preview", s.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    got["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(parts)
        .filter_map(|p| p["text"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_rewind_into_the_checkpoint_a_resume_wrote_drops_what_follows_it() {
    // The CLI checkpoints the whole history (`$set.messages`) on every resume; a
    // `/rewind` after that names a message inside the checkpoint. Rewound to the
    // call that read the cut PNG, nothing sends the PNG any more.
    let (_dir, s) = appended(&[json!({"$rewindTo": "7b9feb63-c5bf-4fab-a4eb-ef2767cfbe6f"})]);
    let (d, code) = json_of(&["diagnose", s.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
    assert_eq!(d["suspects"], json!([]), "{d:#}");
    let (scan, _) = common::scan_json(&s, &[]);
    assert_eq!(scan["attachments"], json!([]), "{scan:#}");
    assert_eq!(previewed_texts(&s), ["READ-THE-FILE shot.png"]);
}

#[test]
fn a_message_rewritten_after_a_checkpoint_replaces_its_copy_there_in_place() {
    // The last copy of an id wins, at the place of the first: the checkpoint's.
    let user = json!({"id": "26d0cabf-473c-4bfc-bd46-c5852248dedd", "timestamp": "2026-12-01T08:16:00.000Z",
        "type": "user", "content": [{"text": "READ NOTHING"}]});
    let (_dir, s) = appended(&[user, json!({"$rewindTo": "8a5b870e-ff2d-404e-b3e2-0c65fcc0a3c1"})]);
    let texts = previewed_texts(&s);
    assert_eq!(texts.first().map(String::as_str), Some("READ NOTHING"), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("READ-THE-FILE")), "{texts:?}");
    // The checkpoint's call and its response stay after it; the rewound user record goes.
    let (d, _) = json_of(&["diagnose", s.to_str().unwrap(), "--json"]);
    assert_eq!(d["stuck"], json!(true), "{d:#}");
}

#[test]
fn a_rewind_to_an_id_the_history_does_not_hold_empties_it_as_the_cli_does() {
    let (_dir, s) = appended(&[json!({"$rewindTo": "no-such-message"})]);
    let (scan, _) = common::scan_json(&s, &[]);
    assert_eq!(scan["attachments"], json!([]), "{scan:#}");
    assert_eq!(previewed_texts(&s), Vec::<String>::new());
}

#[test]
fn a_repaired_copy_holds_no_copy_of_an_excluded_image_not_even_in_superseded_records() {
    // The CLI re-writes a record in full on each change and checkpoints the
    // history on each resume: besides the checkpoint the provider sees, the PNG
    // sits on three lines it no longer does.
    let (dir, s) = chats(STUCK);
    let f = s.to_str().unwrap();
    let png = "iVBORw0KGgo";
    let holding = |p: &Path| std::fs::read_to_string(p).unwrap().lines().filter(|l| l.contains(png)).count();
    assert_eq!(holding(&s), 4);
    let out = run(&["scan", f]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("L16.1 copies: lines 7, 8, 13 hold its bytes again"),
        "{out:?}"
    );
    assert_eq!(run(&["exclude", f, "--suspects"]).status.code(), Some(0));
    let out = run(&["repair", f]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let copy = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl") && p != &s)
        .unwrap();
    assert_eq!(holding(&copy), 0, "{}", std::fs::read_to_string(&copy).unwrap());
    // Still JSON on every line, and the copy's history is the original's without the PNG.
    for l in std::fs::read_to_string(&copy).unwrap().lines() {
        serde_json::from_str::<Value>(l).unwrap();
    }
    let (d, code) = json_of(&["diagnose", copy.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
}

/// Gemini 3's "Function call is missing a `thought_signature`" (the fake
/// provider's wording, cases.tsv) wants a signature added, not reasoning
/// removed: before, diagnose prescribed `--strip-reasoning=gemini`, which
/// cannot add one. Now no rewrite is offered, and the note says what gets past
/// it: `session-doctor proxy` puts Google's placeholder on such calls, and
/// Gemini checks the current turn only.
#[test]
fn a_missing_thought_signature_is_not_sent_to_strip_reasoning() {
    let (_dir, s) = chats(UNRECORDED);
    let error = "[API Error: Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:read_file` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.]";
    let (d, code) = json_of(&["diagnose", s.to_str().unwrap(), "--json", "--error", error]);
    assert_eq!((code, &d["failure"]["class"]), (1, &json!("reasoning_rejected")), "{d:#}");
    assert!(!d["next"].to_string().contains("reasoning"), "{d:#}");
    let notes = d["notes"].to_string();
    assert!(notes.contains("skip_thought_signature_validator") && notes.contains("current turn"), "{notes}");
    assert!(notes.contains("`session-doctor proxy` gives such calls"), "{notes}");
}

/// Issue 36, item 9: a copy `repair` just wrote ends, as its original did, in a
/// request with no answer, and Gemini CLI records no failure of a headless run;
/// diagnose called it "not known to be stuck … give it with --error". Nothing
/// has been sent from a fresh copy: its verdict is what its history says. Once
/// the CLI appends to it (a resume), the caution is back.
#[test]
fn a_fresh_repaired_copy_is_judged_by_its_history() {
    let (dir, path) = chats("session-2026-12-01T08-15-1e60ab7e.jsonl");
    let (rep, code) = json_of(&["repair", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{rep:#}");
    let copy = PathBuf::from(rep["out"].as_str().unwrap());
    let name = copy.file_name().unwrap().to_str().unwrap().to_string();
    let out = run(&["diagnose", copy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let want = format!(
        "{name}: gemini-cli (detected), judged by gemini rules\n\
         healthy: no failure recorded, and nothing the next request carries fails the structural check (--deep decodes every image in full)\n\
         \n\
         note      repair wrote this copy and nothing was added to it since: its last request has not been sent yet\n"
    );
    let text = String::from_utf8(out.stdout).unwrap().replace(&format!("{}/", dir.path().display()), "");
    assert_eq!(text, want);
    // The CLI resumes it: a new user record follows, and nothing says how that request went.
    let mut text = std::fs::read_to_string(&copy).unwrap();
    text.push_str(
        &json!({"id":"r1","timestamp":"2026-12-01T09:00:00.000Z","type":"user","content":[{"text":"continue"}]})
            .to_string(),
    );
    text.push('\n');
    std::fs::write(&copy, text).unwrap();
    let (d, code) = json_of(&["diagnose", copy.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    assert!(d["verdict"].as_str().unwrap().starts_with("not known to be stuck"), "{d:#}");
}

/// Three parallel `read_file` calls of PNGs, then the CLI's own failed resume in a
/// later minute than the session began: its checkpoint (lines 11 and 14) holds all
/// three responses and images in each call's result, and the CLI sends them all.
const LATE_RESUME: &str = "session-2026-12-06T21-26-c396110e.jsonl";

/// The `functionResponse` ids of each call's result in the last checkpoint of `path`.
fn checkpointed_results(path: &Path) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let last = (text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()))
        .filter_map(|v| v["$set"]["messages"].as_array().cloned())
        .next_back()
        .unwrap();
    (last.iter().flat_map(|m| m["toolCalls"].as_array().cloned().unwrap_or_default()))
        .map(|c| {
            let ids = (c["result"].as_array().unwrap().iter())
                .filter_map(|p| p["functionResponse"]["id"].as_str().map(str::to_string))
                .collect();
            (c["id"].as_str().unwrap().to_string(), ids)
        })
        .collect()
}

#[test]
fn a_copy_of_a_late_resume_gives_each_call_its_own_response_and_keeps_max_images() {
    let (_dir, s) = chats(LATE_RESUME);
    assert!(checkpointed_results(&s).iter().all(|(_, ids)| ids.len() == 3));
    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--max-images", "2", "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let copy = PathBuf::from(r["out"].as_str().unwrap());
    for (call, ids) in checkpointed_results(&copy) {
        assert_eq!(ids, vec![call]);
    }
    let (p, code) = json_of(&["preview", copy.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{p:#}");
    let sent: Vec<Value> = p["contents"].as_array().unwrap().iter().flat_map(parts).collect();
    let count = |key: &str| sent.iter().filter(|p| p.get(key).is_some()).count();
    // One response per call, as Gemini takes it, and the two images --max-images keeps.
    assert_eq!((count("functionCall"), count("functionResponse"), count("inlineData")), (3, 3, 2), "{p:#}");
    let (d, code) = json_of(&["diagnose", copy.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["stuck"]), (0, &json!(false)), "{d:#}");
}

/// The late resume's checkpoint holds all three responses in each of the three
/// calls' results, then two `user` messages that repeat them (its
/// `<id>_response` and the one the run wrote), and the calls again as
/// `functionCall` parts of the model's content: the CLI's next resume sends 3
/// calls and 15 responses (the round trip's `too_many_images` counts them in
/// the request it sent). diagnose counted 3 repeats (and 6 calls), and
/// `--fit-context` counted the copies as sent, though the copy it writes holds
/// none: the original's estimate is now its copy's.
#[test]
fn a_late_resume_is_counted_as_the_cli_sends_it() {
    let (_dir, s) = chats(LATE_RESUME);
    let (d, code) = json_of(&["diagnose", s.to_str().unwrap(), "--json"]);
    assert_eq!((code, &d["failure"]["class"]), (1, &json!("history_invalid")), "{d:#}");
    let repeats = d["history"].as_array().unwrap().iter().filter(|h| h["kind"] == "duplicate_result").count();
    assert_eq!(repeats, 15 - 3, "{d:#}");
    assert_eq!(
        d["verdict"],
        "stuck: the history breaks the provider's rules: 12 results past the one each call takes; every retry sends it again",
        "{d:#}"
    );

    let (r, code) = json_of(&["repair", s.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    // The trim's estimate of `file` (previewed with `more` options) before it trims.
    let estimate = |file: &str, more: &[&str]| {
        let mut args = vec!["preview", file, "--json", "--fit-context", "--context-tokens", "1000000"];
        args.extend_from_slice(more);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let summary: Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stderr).lines().last().unwrap()).unwrap();
        summary["changes"]["context"]["before"].as_u64().unwrap()
    };
    assert_eq!(estimate(s.to_str().unwrap(), &[]), estimate(r["out"].as_str().unwrap(), &[]));

    // Capped to 2 images, the original never estimates below its copy: the cap's
    // note is text the copy sends (it estimated 371 against the copy's 394).
    let capped = s.parent().unwrap().join("capped");
    std::fs::create_dir(&capped).unwrap();
    let (r, code) =
        json_of(&["repair", s.to_str().unwrap(), "--max-images", "2", "--out", capped.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{r:#}");
    let (original, copy) =
        (estimate(s.to_str().unwrap(), &["--max-images", "2"]), estimate(r["out"].as_str().unwrap(), &[]));
    assert!(original >= copy && original <= copy + copy / 20, "original {original}, copy {copy}");

    // The 12 repeats answer 3 calls: each call is named once.
    let (_dir, s) = chats(LATE_RESUME);
    let out = String::from_utf8_lossy(&run(&["repair", s.to_str().unwrap()]).stdout).into_owned();
    let line = out.lines().find(|l| l.contains("repeated tool responses")).unwrap_or_default();
    assert!(line.contains("12 repeated tool responses (of 3 calls: "), "{out}");
    let named = line.matches("read_file__read_file_").count();
    assert_eq!(named, 3, "{line}");
}
