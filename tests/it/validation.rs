//! Validation through `scan`, in every session format: the media corpus (valid
//! and deliberately broken PNG, JPEG, GIF, WebP and PDF files) and bad base64,
//! embedded in each format's native shape, get the verdicts the corpus expects
//! at both depths; provider rules change verdicts the way they should.

use crate::common;
use crate::common::media_corpus;

use common::wrap::{FORMATS, Item, session};
use common::{b64, scan_json};
use media_corpus::{Case, Lcg, bad_base64, corpus};
use serde_json::Value;
use session_doctor::media::Verdict;

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "ok",
        Verdict::Warn => "warn",
        Verdict::Invalid => "invalid",
    }
}

/// Writes one session holding every payload and scans it.
fn scan_all(format: &str, items: &[Item<'_>], extra: &[&str]) -> (Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(format!("{format}.jsonl"));
    std::fs::write(&path, session(format, items)).expect("write");
    let mut args = vec!["--provider", "anthropic"];
    args.extend_from_slice(extra);
    (scan_json(&path, &args).0, dir)
}

#[test]
fn corpus_verdicts_in_every_format_at_both_depths() {
    // A valid PNG first: the wrappers make the first payload the user's.
    let cases: Vec<Case> = corpus();
    let bad = bad_base64();
    let texts: Vec<String> = cases.iter().map(|c| b64(&c.bytes)).collect();
    let mut items: Vec<Item<'_>> =
        cases.iter().zip(&texts).map(|(c, t)| Item { base64: t, mime: c.declared_mime }).collect();
    items.extend(bad.iter().map(|(_, text, _)| Item { base64: text, mime: "image/png" }));
    let mut failures = Vec::new();
    for format in FORMATS {
        for deep in [false, true] {
            let (doc, _dir) = scan_all(format, &items, if deep { &["--deep"] } else { &[] });
            let got = doc["attachments"].as_array().expect("attachments");
            if got.len() != items.len() {
                failures.push(format!("{format}: {} attachments, want {}", got.len(), items.len()));
                continue;
            }
            for (i, a) in got.iter().enumerate() {
                let (name, want) = match cases.get(i) {
                    Some(c) => (c.name, if deep { c.deep } else { c.structural }),
                    None => (bad[i - cases.len()].0, Verdict::Invalid),
                };
                if a["verdict"] != verdict_name(want) {
                    failures.push(format!(
                        "{format} {name} (deep={deep}): want {}, got {} {}",
                        verdict_name(want),
                        a["verdict"],
                        a["problems"]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn structural_depth_misses_only_corrupt_compressed_data() {
    use session_doctor::media::Depth;
    // What each depth actually says, not what the corpus expects.
    let rules = session_doctor::media::Rules::builtin("anthropic").expect("rules");
    let verdict = |c: &Case, depth| {
        let p = session_doctor::media::Payload {
            bytes: &c.bytes,
            declared_mime: Some(c.declared_mime),
            encoded_len: None,
            name: None,
        };
        session_doctor::media::inspect(&p, depth, &rules).verdict()
    };
    let cases = corpus();
    let missed: Vec<&str> =
        cases.iter().filter(|c| verdict(c, Depth::Structural) != verdict(c, Depth::Deep)).map(|c| c.name).collect();
    assert!(!missed.is_empty(), "deep decoding catches something the structural walk cannot");
    for name in &missed {
        assert!(name.contains("flate"), "the structural walk should catch {name}");
    }
}

/// A PNG of `w`×`h` noise: incompressible, so its size is about w·h·3 bytes.
fn noise_png(w: u32, h: u32) -> Vec<u8> {
    let mut rng = Lcg(7);
    let pixels: Vec<u8> = (0..w as usize * h as usize * 3).map(|_| (rng.next() & 0xFF) as u8).collect();
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().expect("header");
    w.write_image_data(&pixels).expect("pixels");
    w.finish().expect("finish");
    out
}

#[test]
fn provider_rules_decide_size_and_pixel_limits() {
    let big = noise_png(1450, 1450); // ~6.3 MB: over Anthropic's 5 MB (counted on base64)
    assert!(big.len() > 6_000_000, "{}", big.len());
    let wide = media_corpus::png(9000, 4); // a side over Anthropic's 8000 px
    let small = media_corpus::png(8, 8);
    let texts = [b64(&small), b64(&big), b64(&wide)];
    let items: Vec<Item<'_>> = texts.iter().map(|t| Item { base64: t, mime: "image/png" }).collect();
    for format in ["claude-code", "openai-responses"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, session(format, &items)).expect("write");
        let (anthropic, code) = scan_json(&path, &["--provider", "anthropic"]);
        let v: Vec<&Value> = anthropic["attachments"].as_array().expect("a").iter().map(|a| &a["verdict"]).collect();
        assert_eq!(v, ["ok", "invalid", "invalid"], "{format} under anthropic: {anthropic:#}");
        assert_eq!(code, 1);
        let (openai, code) = scan_json(&path, &["--provider", "openai"]);
        let v: Vec<&Value> = openai["attachments"].as_array().expect("a").iter().map(|a| &a["verdict"]).collect();
        assert_eq!(v, ["ok", "ok", "ok"], "{format} under openai: {openai:#}");
        assert_eq!(code, 0);
        assert_eq!(openai["provider"], "openai");
        let wide = &openai["attachments"][2];
        assert_eq!((wide["width"].as_u64(), wide["height"].as_u64()), (Some(9000), Some(4)));
    }
}

#[test]
fn a_model_selects_its_providers_rules() {
    let sample = common::sample("claude-code.jsonl");
    assert_eq!(scan_json(&sample, &["--model", "gpt-5"]).0["provider"], "openai");
    assert_eq!(scan_json(&sample, &["--model", "gemini-2.5-pro"]).0["provider"], "gemini");
    assert_eq!(scan_json(&sample, &["--model", "gpt-5", "--provider", "groq"]).0["provider"], "groq");
    let out = common::run(&["scan", "--model", "no-such-model", sample.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_provider_in_use_at_the_end_of_the_session_sets_the_rules() {
    // pi switched from Anthropic to OpenAI: the next request goes to OpenAI.
    let mut text = std::fs::read_to_string(common::sample("pi.jsonl")).expect("sample");
    text.push_str(
        "{\"type\":\"model_change\",\"id\":\"a1b2c3ff\",\"parentId\":\"a1b2c305\",\"timestamp\":\"t\",\"provider\":\"openai\",\"modelId\":\"gpt-5\"}\n",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("switched.jsonl");
    std::fs::write(&path, text).expect("write");
    assert_eq!(scan_json(&common::sample("pi.jsonl"), &[]).0["provider"], "anthropic");
    assert_eq!(scan_json(&path, &[]).0["provider"], "openai");
}

#[test]
fn the_session_provider_is_the_default_rule_set() {
    let (doc, _) = scan_json(&common::sample("codex.jsonl"), &[]);
    assert_eq!(doc["provider"], "openai");
    let (doc, _) = scan_json(&common::sample("claude-code.jsonl"), &[]);
    assert_eq!(doc["provider"], "anthropic");
    let (doc, _) = scan_json(&common::sample("mux.jsonl"), &[]);
    assert_eq!(doc["provider"], "anthropic", "mux names provider:model");
}

#[test]
fn too_many_images_is_a_request_limit() {
    let png = b64(&media_corpus::png(4, 4));
    let items: Vec<Item<'_>> = (0..101).map(|_| Item { base64: &png, mime: "image/png" }).collect();
    let (doc, _dir) = scan_all("anthropic", &items, &[]);
    let limits = doc["limits"].as_array().expect("limits");
    assert!(limits.iter().any(|l| l["code"] == "request.too_many_images"), "{limits:?}");
    let (doc, _dir) = scan_all("anthropic", &items[..5], &[]);
    assert!(doc["limits"].as_array().expect("limits").is_empty());
}

#[test]
fn a_user_rules_file_overrides_the_provider_and_typos_are_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("rules.json");
    std::fs::write(&rules, r#"{"max_image_bytes": 500, "verified_on": "2026-11-29"}"#).expect("write");
    let sample = common::sample("pi.jsonl");
    let (doc, code) = scan_json(&sample, &["--rules", rules.to_str().expect("utf-8")]);
    assert_eq!(code, 1);
    assert_eq!(doc["attachments"][0]["verdict"], "invalid", "801-byte base64 over a 500-byte cap");
    std::fs::write(&rules, r#"{"max_image_byte": 500}"#).expect("write");
    let out = common::run(&["scan", "--rules", rules.to_str().expect("utf-8"), sample.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_image_byte"));
    let out = common::run(&["scan", "--provider", "nope", sample.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("anthropic"), "lists the known providers");
}
