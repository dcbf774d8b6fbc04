//! The canonical model behind `scan`, as later commands (`diagnose`, `repair`)
//! will use it: entries with acceptance and models, error records the
//! classifier understands, tool calls with their paths, reasoning items.

use crate::common;

use common::sample;
use session_doctor::classify::{Class, Hint, classify};
use session_doctor::model::Format;
use session_doctor::model::{ReasoningKind, Role, Session};
use session_doctor::reader::{ReadOptions, read_session};

fn read(format: Format) -> Session {
    let name = format!("{}.jsonl", format.name());
    let name = if sample(&name).exists() { name } else { format!("{}.json", format.name()) };
    read_session(&sample(&name), &ReadOptions::default()).expect("sample reads")
}

/// Formats whose history file records the failed request (Cline keeps it in
/// `ui_messages.json`, beside the history; Kiro CLI records none).
#[allow(clippy::trivially_copy_pass_by_ref, reason = "a predicate for `Iterator::filter`, which passes a reference")]
fn records_failures(format: &Format) -> bool {
    !matches!(format, Format::Cline | Format::Kiro) && tells_the_story(format)
}

/// Formats whose sample tells the shared story (a tool read a cut PNG, the
/// provider refused it, the session is stuck). Copilot CLI's sample is a real
/// run instead: the CLI sends no tool image to a custom provider and heals a
/// refused attachment itself, so the story cannot happen in its format; nor
/// in Qwen Code's, whose `read_file` never sends an image it cannot decode and
/// which retries a media request refused with a 400 without the media: its
/// sample is a real run stuck on a route that takes no images.
#[allow(clippy::trivially_copy_pass_by_ref, reason = "a predicate for `Iterator::filter`, which passes a reference")]
fn tells_the_story(format: &Format) -> bool {
    !matches!(format, Format::Copilot | Format::QwenCode)
}

#[test]
fn every_sample_ends_in_a_media_rejection_the_classifier_names() {
    for format in Format::ALL.iter().copied().filter(records_failures) {
        let s = read(format);
        let failure =
            s.entries.iter().rev().find_map(|e| e.error.as_deref()).unwrap_or_else(|| panic!("{format:?}: no error"));
        let c = classify(&failure.text, &Hint { status: failure.status, provider: None });
        assert_eq!(c.class, Class::MediaRejected, "{format:?}: {:?} from {:?}", c, failure.text);
        assert_eq!(c.retryable, Some(false));
    }
}

#[test]
fn acceptance_and_models_come_from_the_agents_own_records() {
    for format in Format::ALL.iter().copied().filter(records_failures) {
        let s = read(format);
        let accepted: Vec<_> = s.entries.iter().filter(|e| e.accepted).collect();
        assert!(!accepted.is_empty(), "{format:?}: a model answered before the failure");
        assert!(accepted.iter().all(|e| e.role == Role::Assistant), "{format:?}");
        assert!(s.entries.iter().filter(|e| e.error.is_some()).all(|e| !e.accepted), "{format:?}");
        // The failure comes after the last accepted answer: the attachments after it are suspects.
        let last_ok = s.entries.iter().rposition(|e| e.accepted).expect("accepted");
        let failed = s.entries.iter().rposition(|e| e.error.is_some()).expect("error");
        assert!(failed > last_ok, "{format:?}");
    }
    assert_eq!(
        read(Format::Codex).entries.iter().find(|e| e.accepted).and_then(|e| e.model.as_deref()),
        Some("gpt-5-codex")
    );
    assert_eq!(
        read(Format::ClaudeCode).entries.iter().find(|e| e.accepted).and_then(|e| e.model.as_deref()),
        Some("claude-sonnet-4-5-20250929")
    );
    let mux = read(Format::Mux);
    let first = mux.entries.iter().find(|e| e.accepted).expect("accepted");
    assert_eq!((first.provider.as_deref(), first.model.as_deref()), (Some("anthropic"), Some("claude-sonnet-4-5")));
    assert_eq!(read(Format::Pi).provider.as_deref(), Some("anthropic"));
}

#[test]
fn tool_calls_keep_their_path_argument() {
    for format in Format::ALL.into_iter().filter(tells_the_story) {
        let s = read(format);
        let diagram = s.tool_calls.iter().find(|c| c.path.as_deref() == Some("/home/dev/shop/tmp/layout-diagram.png"));
        assert!(diagram.is_some(), "{format:?}: {:?}", s.tool_calls);
        let a =
            s.attachments.iter().find(|a| a.verdict == session_doctor::media::Verdict::Invalid).expect("the cut PNG");
        if let Some(id) = &a.call_id {
            assert!(s.tool_calls.iter().any(|c| &c.call_id == id), "{format:?}: call {id} is linked");
        }
    }
}

#[test]
fn reasoning_items_are_found_in_every_dialect() {
    let kinds = |f| read(f).reasoning.iter().map(|r| r.kind).collect::<Vec<_>>();
    assert!(kinds(Format::ClaudeCode).contains(&ReasoningKind::AnthropicSignature));
    assert!(kinds(Format::Codex).contains(&ReasoningKind::OpenaiEncrypted));
    assert!(kinds(Format::Pi).contains(&ReasoningKind::AnthropicSignature));
    assert!(kinds(Format::Mux).contains(&ReasoningKind::AnthropicSignature));
    assert!(kinds(Format::Gemini).contains(&ReasoningKind::GeminiSignature));
    let responses = read(Format::OpenaiResponses);
    let r = responses.reasoning.iter().find(|r| r.kind == ReasoningKind::OpenaiEncrypted).expect("reasoning item");
    assert_eq!(r.id.as_deref(), Some("rs_68a1b2c3d4e5f6a7"));
}
