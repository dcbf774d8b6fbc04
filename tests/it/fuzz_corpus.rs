//! The fuzz targets (`fuzz/src/targets.rs`) in `cargo test`: every committed
//! corpus file under `fuzz/corpus/<target>/` (seeds, inputs libFuzzer found
//! interesting, and every crash found, as a regression) runs through the same
//! function the fuzzer calls, plus a quick pass of random mutations of it.
//!
//! Seeds are written by `SEED=1 cargo test --test it fuzz_corpus::write_seeds -- --ignored`.

use crate::common;
use crate::common::{media_corpus, wrap};
#[path = "../../fuzz/src/targets.rs"]
#[allow(clippy::pedantic, reason = "fuzz/'s code: a crate of its own, linted as that crate is")]
mod targets;

use std::path::{Path, PathBuf};

use media_corpus::Lcg;

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join("corpus").join(target)
}

fn files(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(corpus_dir(target))
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        // A file a running fuzzer just replaced is skipped, not an error.
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .collect();
    v.sort();
    v
}

fn target(name: &str) -> fn(&[u8]) {
    targets::TARGETS.iter().find(|(n, _)| *n == name).expect("a target").1
}

/// Replays the corpus, then `mutations` random mutations of its files
/// (bit flips, cuts, inserted junk, splices of two files): a quick,
/// coverage-free property-test pass, deterministic per seed.
fn replay(name: &str, mutations: usize) {
    let f = target(name);
    let corpus = files(name);
    assert!(!corpus.is_empty(), "fuzz/corpus/{name} is empty");
    for (p, bytes) in &corpus {
        let r = std::panic::catch_unwind(|| f(bytes));
        assert!(r.is_ok(), "{name}: {} fails", p.display());
    }
    let mut rng = Lcg(0x5eed ^ name.len() as u64);
    for round in 0..mutations {
        let mut b = corpus[rng.below(corpus.len())].1.clone();
        mutate(&mut b, &mut rng, &corpus);
        let r = std::panic::catch_unwind(|| f(&b));
        if r.is_err() {
            let keep = std::env::temp_dir().join(format!("fuzz-{name}-{round}"));
            std::fs::write(&keep, &b).expect("keep the input");
            panic!("{name}: mutation {round} fails; input kept in {}", keep.display());
        }
    }
}

fn mutate(b: &mut Vec<u8>, rng: &mut Lcg, corpus: &[(PathBuf, Vec<u8>)]) {
    for _ in 0..=rng.below(4) {
        let len = b.len();
        match rng.below(6) {
            0 if len > 0 => {
                let i = rng.below(len);
                b[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => b.truncate(rng.below(len)),
            2 => {
                let i = rng.below(len + 1);
                let junk: Vec<u8> = (0..rng.below(16)).map(|_| (rng.next() & 0xFF) as u8).collect();
                b.splice(i..i, junk);
            }
            3 if len > 1 => {
                let (i, j) = (rng.below(len), rng.below(len));
                let (i, j) = (i.min(j), i.max(j));
                b.drain(i..j);
            }
            4 => {
                let other = &corpus[rng.below(corpus.len())].1;
                let at = rng.below(len + 1);
                let from = rng.below(other.len() + 1);
                b.truncate(at);
                b.extend_from_slice(&other[from..]);
            }
            _ if len > 0 => {
                let i = rng.below(len);
                b[i] = [0, 0xff, b'"', b'{', b'}', b'[', b']', b'\\', b'\n', b','][rng.below(10)];
            }
            _ => {}
        }
    }
}

#[test]
fn reader() {
    replay("reader", 150);
}

#[test]
fn media() {
    replay("media", 300);
}

#[test]
fn payload() {
    replay("payload", 300);
}

#[test]
fn classify() {
    replay("classify", 300);
}

#[test]
fn overlay() {
    replay("overlay", 150);
}

#[test]
fn splice() {
    replay("splice", 300);
}

#[test]
fn rewrite() {
    replay("rewrite", 60);
}

/// Writes the seed corpora from the samples and the test media corpus.
#[test]
#[ignore = "writes fuzz/corpus: run with SEED=1 when the seeds change"]
fn write_seeds() {
    use session_doctor::model::Format;
    if std::env::var_os("SEED").is_none() {
        return;
    }
    let put = |t: &str, name: &str, bytes: &[u8]| {
        let d = corpus_dir(t);
        std::fs::create_dir_all(&d).expect("corpus dir");
        std::fs::write(d.join(format!("seed-{name}")), bytes).expect("seed");
    };
    let mut samples: Vec<(String, Vec<u8>)> = Vec::new();
    for e in std::fs::read_dir(common::sample("")).expect("samples").flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if (common::has_extension(&n, "jsonl") || n == "cline.json") && !n.starts_with("expected") {
            samples.push((n, std::fs::read(e.path()).expect("sample")));
        }
    }
    samples.sort();
    // reader: each sample under its own format, auto, and deep.
    for (n, bytes) in &samples {
        let stem = n.split('.').next().unwrap_or_default();
        let i = u8::try_from(Format::ALL.iter().position(|f| f.name() == stem).unwrap_or(Format::ALL.len())).unwrap();
        let json = if common::has_extension(n, "json") { 0x10 } else { 0 };
        put("reader", stem, &[&[i | json][..], bytes].concat());
        put(
            "reader",
            &format!("{stem}-auto-deep"),
            &[&[u8::try_from(Format::ALL.len()).unwrap() | json | 0x80][..], bytes].concat(),
        );
    }
    // media: every case of the media corpus, its signature forced by the selector.
    for c in media_corpus::corpus() {
        let kind = match c.declared_mime.split(';').next().unwrap_or_default() {
            "image/png" => 1,
            "image/jpeg" => 2,
            "image/gif" => 3,
            "image/webp" => 4,
            "application/pdf" => 5,
            _ => 0,
        };
        if c.bytes.len() < 64 << 10 {
            put("media", c.name, &[&[kind + 6 * kind][..], &c.bytes].concat());
        }
    }
    // payload: good, odd and bad base64, data URLs.
    for (n, s, _) in media_corpus::bad_base64() {
        put("payload", n, s.as_bytes());
    }
    for (n, s) in media_corpus::odd_base64() {
        put("payload", n, s.as_bytes());
        put("payload", &format!("{n}-data-url"), format!("data:image/png;base64,{s}").as_bytes());
    }
    put("payload", "plain-data-url", b"data:text/plain,hello%20world");
    put("payload", "empty-data-url", b"data:,");
    // classify: the classifier's own case table.
    let cases = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/classify/cases.tsv"))
        .expect("cases");
    for (i, line) in cases.lines().filter(|l| !l.starts_with('#')).enumerate().step_by(4) {
        let cols: Vec<&str> = line.splitn(7, '\t').collect();
        let status: u8 = match cols[1] {
            "400" => 1,
            "413" => 2,
            "429" => 3,
            "500" => 4,
            "529" => 5,
            "401" => 6,
            "404" => 7,
            _ => 0,
        };
        put("classify", &format!("case-{i}"), &[&[status][..], cols[6].as_bytes()].concat());
    }
    // overlay: a real event log, one with a torn line, one without a final newline.
    let ev = r#"{"event":"attachments.excluded","at":"2026-11-30T04:45:30Z","attachments":[{"ref":"L3.1","sha256":"ab","mime":"image/png","name":"a.png"}],"reason":"x"}"#;
    let inc =
        r#"{"event":"attachments.included","at":"2026-11-30T04:46:30Z","attachments":[{"ref":"L3.1","sha256":"ab"}]}"#;
    put("overlay", "two-events", format!("{ev}\n{inc}\n").as_bytes());
    put("overlay", "torn", format!("{ev}\n{{\"event\":\"attachments.inc").as_bytes());
    put("overlay", "no-final-newline", ev.as_bytes());
    // splice: one line of each sample, and small documents with a pointer.
    for (n, bytes) in &samples {
        let line = bytes.split(|b| *b == b'\n').find(|l| l.len() > 100 && l.len() < 2000).unwrap_or(bytes);
        put("splice", n, line);
    }
    put(
        "splice",
        "escaped-keys",
        br#"/a~1b/0
{"a/b":[1,{"~":2}],"c":"\"x\\"}"#,
    );
    put("splice", "spaces", b" { \"a\" : [ 1 , 2 , 3 ] , \"b\" : { } } ");
    // rewrite: each format around one of each kind of media.
    let items: Vec<(u8, Vec<u8>)> = vec![
        (0, media_corpus::png(8, 6)),
        (1, media_corpus::jpeg(8, 8)),
        (2, media_corpus::gif(4, 4, 2)),
        (3, media_corpus::webp(4, 4)),
        (4, media_corpus::pdf(1)),
    ];
    for f in 0..u8::try_from(wrap::FORMATS.len()).unwrap() {
        for (opt, mask) in [(0u8, 0b10u8), (2, 0b101), (8 | 16, 0)] {
            let mut b = vec![f, opt, mask];
            for (m, bytes) in &items {
                b.push(*m);
                b.extend_from_slice(&u16::try_from(bytes.len()).unwrap().to_le_bytes());
                b.extend_from_slice(bytes);
            }
            put("rewrite", &format!("{}-{opt}-{mask}", wrap::FORMATS[f as usize]), &b);
        }
    }
}

/// Found by the `classify` target: a multibyte character 40 bytes before
/// "N > M" made the limit extraction slice inside it and panic.
#[test]
fn regression_classify_multibyte_before_a_comparison() {
    use session_doctor::classify::{Class, Hint, classify};
    let text = format!("prompt is too long: {} > 30", "€".repeat(20));
    let c = classify(&text, &Hint::default());
    assert_eq!(c.class, Class::ContextOverflow);
    let c = classify(&format!("prompt is too long: 31 {} > 30", "é".repeat(15)), &Hint::default());
    assert_eq!(c.limit, Some(30));
}
