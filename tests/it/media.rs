//! Integration tests of `media::inspect` over a corpus of real files built in
//! code (`tests/common/media_corpus.rs)`: every valid file is ok, every broken
//! one invalid at `Deep`, the structural default catches all but the
//! corrupt-deflate kind, provider rules make the difference they should, and
//! no input — hostile PDFs, random truncations and bit flips — panics or hangs.

use crate::common::media_corpus;

use media_corpus::{Case, Lcg, corpus};
use session_doctor::media::{self, Depth, Inspection, Payload, Rules, Verdict};

fn anthropic() -> Rules {
    Rules::builtin("anthropic").expect("anthropic rules")
}

fn run(c: &Case, depth: Depth, rules: &Rules) -> Inspection {
    let p = Payload { bytes: &c.bytes, declared_mime: Some(c.declared_mime), encoded_len: None, name: Some(c.name) };
    media::inspect(&p, depth, rules)
}

#[test]
fn corpus_verdicts_at_both_depths() {
    let rules = anthropic();
    let mut failures = Vec::new();
    for c in corpus() {
        for (depth, want) in [(Depth::Structural, c.structural), (Depth::Deep, c.deep)] {
            let ins = run(&c, depth, &rules);
            if ins.verdict() != want {
                failures.push(format!(
                    "{} at {depth:?}: want {want:?}, got {:?}: {:?}",
                    c.name,
                    ins.verdict(),
                    ins.problems
                ));
            }
            if depth == Depth::Deep && !c.code.is_empty() && !ins.problems.iter().any(|p| p.code == c.code) {
                failures.push(format!("{} at Deep: no {} among {:?}", c.name, c.code, ins.problems));
            }
            for p in &ins.problems {
                assert!(!p.message.is_empty() && !p.code.is_empty(), "{}: empty problem", c.name);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn broken_is_invalid_at_deep_and_structural_misses_only_deflate() {
    let rules = anthropic();
    for c in corpus() {
        let deep = run(&c, Depth::Deep, &rules).verdict();
        let structural = run(&c, Depth::Structural, &rules).verdict();
        if c.deep == Verdict::Invalid {
            assert_eq!(deep, Verdict::Invalid, "{}", c.name);
        }
        if structural != deep {
            assert!(
                c.name.contains("deflate") || c.name.contains("flate-stream"),
                "{}: structural {structural:?} but deep {deep:?}",
                c.name
            );
        }
    }
}

#[test]
fn dimensions_frames_and_pages_are_reported() {
    let rules = Rules::generic();
    let get = |name: &str| corpus().into_iter().find(|c| c.name == name).expect(name);
    let ins = run(&get("png"), Depth::Deep, &rules);
    assert_eq!((ins.width, ins.height, ins.frames), (Some(32), Some(24), Some(1)));
    assert_eq!(ins.mime_detected.as_deref(), Some("image/png"));
    let ins = run(&get("apng-3-frames"), Depth::Deep, &rules);
    assert_eq!(ins.frames, Some(3));
    let ins = run(&get("jpeg"), Depth::Deep, &rules);
    assert_eq!((ins.width, ins.height), (Some(40), Some(30)));
    let ins = run(&get("gif-animated"), Depth::Deep, &rules);
    assert_eq!((ins.width, ins.height, ins.frames), (Some(16), Some(12), Some(3)));
    let ins = run(&get("webp"), Depth::Deep, &rules);
    assert_eq!((ins.width, ins.height), (Some(20), Some(10)));
    let ins = run(&get("pdf-3-pages"), Depth::Deep, &rules);
    assert_eq!(ins.pages, Some(3));
}

#[test]
fn messages_name_the_numbers() {
    let rules = anthropic();
    let get = |name: &str| corpus().into_iter().find(|c| c.name == name).expect(name);
    let c = get("png-truncated-half");
    let ins = run(&c, Depth::Structural, &rules);
    let m = &ins.problems[0].message;
    assert!(m.contains(&format!("after {} ", c.bytes.len())) && m.contains("IEND") && m.contains("cut short"), "{m}");
    let ins = run(&get("jpeg-declared-png"), Depth::Structural, &rules);
    let m = &ins.problems.iter().find(|p| p.code == "mime.mismatch").expect("mismatch").message;
    assert!(m.contains("image/png") && m.contains("JPEG") && m.contains("anthropic"), "{m}");
}

#[test]
fn mismatch_is_invalid_for_anthropic_and_a_warning_elsewhere() {
    let c = corpus().into_iter().find(|c| c.name == "jpeg-declared-png").expect("case");
    assert_eq!(run(&c, Depth::Structural, &anthropic()).verdict(), Verdict::Invalid);
    for p in ["openai", "gemini", "generic"] {
        let ins = run(&c, Depth::Structural, &Rules::builtin(p).expect(p));
        assert_eq!(ins.verdict(), Verdict::Warn, "{p}: {:?}", ins.problems);
        assert!(ins.problems[0].message.contains("relabel"), "{p}");
    }
}

#[test]
fn provider_rules_size_and_pixels() {
    let a = anthropic();
    let o = Rules::builtin("openai").expect("openai");
    // A valid 6 MB PNG (a big private ancillary chunk): over 5 MB of base64.
    let big = media_corpus::png_insert_before_iend(
        media_corpus::png(16, 16),
        &media_corpus::png_chunk(b"prVt", &vec![7u8; 6_000_000]),
    );
    let p = Payload { bytes: &big, declared_mime: Some("image/png"), encoded_len: None, name: Some("big.png") };
    let ins = media::inspect(&p, Depth::Structural, &a);
    assert_eq!(ins.verdict(), Verdict::Invalid);
    let m = &ins.problems.iter().find(|p| p.code == "image.too_large").expect("too large").message;
    assert!(m.contains("as base64") && m.contains("5242880"), "{m}");
    assert_eq!(media::inspect(&p, Depth::Deep, &o).verdict(), Verdict::Ok);
    // The limit counts the base64 text as it sits in the session.
    let small = media_corpus::png(8, 8);
    let p = Payload { bytes: &small, declared_mime: Some("image/png"), encoded_len: Some(6_000_000), name: None };
    assert_eq!(media::inspect(&p, Depth::Structural, &a).verdict(), Verdict::Invalid);
    // Bedrock counts raw bytes: 3.75 MB.
    let p = Payload { bytes: &big, declared_mime: Some("image/png"), encoded_len: None, name: None };
    assert_eq!(
        media::inspect(&p, Depth::Structural, &Rules::builtin("bedrock").expect("bedrock")).verdict(),
        Verdict::Invalid
    );

    // 9000 px wide.
    let wide = media_corpus::png_1bit(9000, 700);
    let p = Payload { bytes: &wide, declared_mime: Some("image/png"), encoded_len: None, name: None };
    let ins = media::inspect(&p, Depth::Deep, &a);
    let m = &ins.problems.iter().find(|p| p.code == "image.too_many_pixels").expect("pixels").message;
    assert_eq!(m, "the image is 9000×700 px; anthropic rejects a side over 8000 px");
    assert_eq!(media::inspect(&p, Depth::Deep, &o).verdict(), Verdict::Ok);
    assert_eq!(media::inspect(&p, Depth::Deep, &Rules::generic()).verdict(), Verdict::Ok);
}

#[test]
fn formats_per_provider() {
    let get = |name: &str| corpus().into_iter().find(|c| c.name == name).expect(name);
    let anim = get("gif-animated");
    assert_eq!(run(&anim, Depth::Structural, &anthropic()).verdict(), Verdict::Ok);
    for p in ["openai", "mistral"] {
        let ins = run(&anim, Depth::Structural, &Rules::builtin(p).expect(p));
        assert!(ins.problems.iter().any(|x| x.code == "gif.animated"), "{p}: {:?}", ins.problems);
    }
    assert_eq!(
        run(&get("gif-static"), Depth::Structural, &Rules::builtin("openai").expect("o")).verdict(),
        Verdict::Ok
    );
    // xAI: JPEG and PNG only.
    let x = Rules::builtin("xai").expect("xai");
    assert_eq!(run(&get("webp"), Depth::Structural, &x).verdict(), Verdict::Invalid);
    assert_eq!(run(&get("jpeg"), Depth::Structural, &x).verdict(), Verdict::Ok);
    // HEIC: Gemini takes it, Anthropic does not, generic warns.
    let heic = Payload {
        bytes: b"\0\0\0\x18ftypheic\0\0\0\0mif1heic",
        declared_mime: Some("image/heic"),
        ..Default::default()
    };
    assert_eq!(media::inspect(&heic, Depth::Deep, &Rules::builtin("gemini").expect("g")).verdict(), Verdict::Ok);
    assert_eq!(media::inspect(&heic, Depth::Deep, &anthropic()).verdict(), Verdict::Invalid);
    assert_eq!(media::inspect(&heic, Depth::Deep, &Rules::generic()).verdict(), Verdict::Warn);
    // Mistral chat takes no PDFs.
    assert_eq!(
        run(&get("pdf-1-page"), Depth::Structural, &Rules::builtin("mistral").expect("m")).verdict(),
        Verdict::Invalid
    );
}

#[test]
fn decompression_bomb_is_judged_from_the_header() {
    let f = media_corpus::png_bomb();
    let p = Payload { bytes: &f, declared_mime: Some("image/png"), ..Default::default() };
    let ins = media::inspect(&p, Depth::Deep, &Rules::generic());
    assert_eq!((ins.width, ins.height), (Some(100_000), Some(100_000)));
    // Far too little data for the claimed size: invalid under every provider's rules,
    // found without allocating the claimed pixels.
    assert!(ins.problems.iter().any(|p| p.code == "png.data_missing"), "{:?}", ins.problems);
    assert!(ins.problems.iter().any(|p| p.code == "image.huge"), "{:?}", ins.problems);
    assert_eq!(ins.verdict(), Verdict::Invalid);
    assert_eq!(media::inspect(&p, Depth::Deep, &anthropic()).verdict(), Verdict::Invalid);
}

#[test]
fn hostile_pdfs_end_in_a_finding() {
    for (name, bytes) in [
        ("self-loop", media_corpus::pdf_page_loop()),
        ("cycle", media_corpus::pdf_page_cycle()),
        ("xref 2^31", media_corpus::pdf_huge_xref()),
        ("size 2^31", media_corpus::pdf_huge_size()),
        ("length past eof", media_corpus::pdf_long_stream()),
    ] {
        for depth in [Depth::Structural, Depth::Deep] {
            let p = Payload { bytes: &bytes, declared_mime: Some("application/pdf"), ..Default::default() };
            let ins = media::inspect(&p, depth, &Rules::generic());
            assert_eq!(ins.verdict(), Verdict::Invalid, "{name}: {:?}", ins.problems);
        }
    }
}

#[test]
fn bad_base64_names_the_problem() {
    let mut out = Vec::new();
    for (name, text, needle) in media_corpus::bad_base64() {
        let e = media::decode_base64(text.as_bytes(), &mut out).expect_err(name);
        assert_eq!(e.severity, Verdict::Invalid);
        assert!(e.message.contains(needle), "{name}: {}", e.message);
    }
    let want = media_corpus::png(8, 8);
    for (name, text) in media_corpus::odd_base64() {
        let w = media::decode_base64_checked(text.as_bytes(), &mut out).expect(name);
        assert_eq!(out, want, "{name}");
        let nonstandard = text.contains(['-', '_', '\n']) || !text.len().is_multiple_of(4);
        assert_eq!(w.is_some(), nonstandard, "{name}");
    }
}

#[test]
fn truncations_and_bit_flips_never_panic() {
    let rules = anthropic();
    let mut rng = Lcg(0x5eed);
    for c in corpus() {
        let n = c.bytes.len();
        if n == 0 {
            continue;
        }
        let mut variants: Vec<Vec<u8>> = Vec::new();
        let step = (n / 48).max(1);
        for cut in (0..n).step_by(step) {
            variants.push(c.bytes[..cut].to_vec());
        }
        for _ in 0..48 {
            let mut b = c.bytes.clone();
            for _ in 0..=rng.below(3) {
                let i = rng.below(n);
                b[i] ^= 1 << rng.below(8);
            }
            variants.push(b);
        }
        for v in &variants {
            for depth in [Depth::Structural, Depth::Deep] {
                let p = Payload { bytes: v, declared_mime: Some(c.declared_mime), encoded_len: None, name: None };
                let _ = media::inspect(&p, depth, &rules);
            }
        }
    }
}
