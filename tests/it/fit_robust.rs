//! `--fit` and the guard's fit under what issue 37 found: a 16-bit image
//! (item 9), an EXIF orientation (item 14), and the memory a fit takes
//! (item 8), each through the commands a user runs.

use crate::common;

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use common::{b64, wrap};
use serde_json::Value;
use session_doctor::media::{Depth, Facts, Verdict};

/// `guard --json FILE`, fitted copies kept under `cache`.
fn guard_json(cache: &Path, file: &Path) -> (i32, Value, String) {
    let out = common::bin()
        .args(["guard", "--json"])
        .arg(file)
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), v, String::from_utf8_lossy(&out.stderr).into())
}

/// A 16-bit RGBA PNG of `w` × `h`, written row by row (a gradient down the image).
fn png16(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Sixteen);
    enc.set_compression(png::Compression::Fast);
    let mut header = enc.write_header().unwrap();
    let mut rows = header.stream_writer().unwrap();
    for y in 0..h {
        let v = u16::try_from(y * 65535 / h).unwrap().to_be_bytes();
        let px = [v[0], v[1], 0x80, 0x00, 0x12, 0x34, 0xff, 0xff];
        let row: Vec<u8> = std::iter::repeat_n(px, w as usize).flatten().collect();
        rows.write_all(&row).unwrap();
    }
    rows.finish().unwrap();
    header.finish().unwrap();
    out
}

/// An 8-bit RGB PNG of `w` × `h` that compresses well (a screenshot's kind), so
/// its fit stays a PNG under Anthropic's byte limit.
fn png_smooth(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_compression(png::Compression::Fast);
    let mut header = enc.write_header().unwrap();
    let mut rows = header.stream_writer().unwrap();
    for y in 0..h {
        let row: Vec<u8> =
            (0..w).flat_map(|x| [u8::try_from(x / 32).unwrap(), u8::try_from(y / 2).unwrap(), 128]).collect();
        rows.write_all(&row).unwrap();
    }
    rows.finish().unwrap();
    header.finish().unwrap();
    out
}

fn is_valid(bytes: &[u8]) -> Facts {
    let facts = Facts::examine(bytes, None, Depth::Deep);
    assert!(facts.damage.iter().all(|p| p.severity != Verdict::Invalid), "{:?}", facts.damage);
    facts
}

/// 8100 × 3200 px: 104 MB at 4 bytes a pixel (the pre-check's), 207 MB at the
/// 8 bytes a 16-bit RGBA pixel takes whole, past the decoder's limit before:
/// `repair --fit` wrote nothing, the guard denied it. Fitted here to a 400 px
/// side (`--rules`), so a debug build encodes little.
#[test]
fn a_16_bit_image_is_fitted() {
    let dir = tempfile::tempdir().unwrap();
    let text = b64(&png16(8100, 3200));
    let item = wrap::Item { base64: &text, mime: "image/png" };
    let session = common::write(dir.path(), "s.jsonl", &wrap::session("pi", &[item]));
    let rules = common::write(dir.path(), "rules.json", r#"{"max_side_px": 400}"#);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let (s, o, r) = (session.to_str().unwrap(), out.to_str().unwrap(), rules.to_str().unwrap());
    let (r, code) = common::json_of(&["repair", s, "--fit", "--rules", r, "--out", o, "--json"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["changes"]["fitted"].as_array().map(Vec::len), Some(1), "{r}");
    assert!(r["changes"]["not_fitted"].as_array().is_none_or(Vec::is_empty), "{r}");
    let copy = std::fs::read_to_string(r["out"].as_str().unwrap()).unwrap();
    let data = copy.lines().find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        v.pointer("/message/content/0/data").and_then(Value::as_str).map(String::from)
    });
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data.unwrap()).unwrap();
    let facts = is_valid(&bytes);
    assert_eq!((facts.width, facts.height), (Some(400), Some(158)));
}

/// A baseline JPEG of `w` × `h`, its top half white and the rest black, with
/// an EXIF APP1 segment that says `orientation`.
fn jpeg_oriented(w: u16, h: u16, orientation: u16) -> Vec<u8> {
    let pixels: Vec<u8> =
        (0..h).flat_map(|y| std::iter::repeat_n(if y < h / 2 { 255 } else { 0 }, usize::from(w) * 3)).collect();
    let mut exif = b"Exif\0\0II*\0\x08\0\0\0\x01\0".to_vec();
    // One IFD entry: Orientation (0x0112), SHORT, one value; then no next IFD.
    exif.extend_from_slice(&[0x12, 0x01, 3, 0, 1, 0, 0, 0]);
    exif.extend_from_slice(&orientation.to_le_bytes());
    exif.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    let mut out = Vec::new();
    let mut enc = jpeg_encoder::Encoder::new(&mut out, 90);
    enc.add_app_segment(1, exif).unwrap();
    enc.encode(&pixels, w, h, jpeg_encoder::ColorType::Rgb).unwrap();
    out
}

#[test]
fn an_exif_orientation_is_applied_and_the_note_names_the_shown_size() {
    let dir = tempfile::tempdir().unwrap();
    // Stored 300 × 9000, shown 9000 × 300 (6: turned 90° clockwise, the stored top on the right).
    let file = dir.path().join("portrait.jpg");
    std::fs::write(&file, jpeg_oriented(300, 9000, 6)).unwrap();
    let (code, v, err) = guard_json(&dir.path().join("cache"), &file);
    assert_eq!((code, v[0]["decision"].as_str()), (0, Some("fitted")), "{v} {err}");
    let note = v[0]["reason"].as_str().unwrap();
    assert!(note.starts_with("[Image resized from 9000×300 to 8000×266 to fit anthropic's limits."), "{note}");
    let fitted = std::fs::read(v[0]["fitted"].as_str().unwrap()).unwrap();
    let facts = is_valid(&fitted);
    assert_eq!((facts.width, facts.height), (Some(8000), Some(266)), "shown as the photo is");
    let img = image::load_from_memory(&fitted).unwrap().to_luma8();
    let (left, right) = (img.get_pixel(100, 133).0[0], img.get_pixel(7900, 133).0[0]);
    assert!(left < 40 && right > 215, "the stored top belongs on the right: left {left}, right {right}");
}

/// A fit holds a few rows of a PNG, not the image and a resize's buffers:
/// the guard on an 8100 × 4000 PNG peaked at 705 MB before (issue 37, item 8;
/// `bench/fit_memory.sh`), 18 MB since. A band of it (8100 × 500) keeps a
/// debug build quick: 90 MB before.
#[test]
fn fitting_a_large_png_holds_rows_not_the_image() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wide.png");
    std::fs::write(&file, png_smooth(8100, 500)).unwrap();
    let cache = dir.path().join("cache");
    let args = ["guard", "--json", file.to_str().unwrap()];
    let (out, peak_kb) = crate::bounds::peak_rss_kb_with(&args, &[("XDG_CACHE_HOME", cache.as_os_str())]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["decision"], "fitted", "{v}");
    let facts = is_valid(&std::fs::read(v[0]["fitted"].as_str().unwrap()).unwrap());
    assert_eq!((facts.width, facts.height), (Some(8000), Some(493)));
    assert!(peak_kb < 40 * 1024, "the fit peaked at {peak_kb} kB");
}
