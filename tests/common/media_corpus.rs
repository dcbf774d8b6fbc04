//! A corpus of small, real media files built in code, valid and deliberately
//! broken, with the verdict `media::inspect` must reach at each depth under
//! the `anthropic` rules (the strictest common target; valid files here are
//! small enough for every provider).
//!
//! Self-contained: only std, the crate, and crates from `[dependencies]` /
//! `[dev-dependencies]` (png, gif, image-webp encoders; jpeg-encoder;
//! crc32fast). Use it from any integration test with
//! `use crate::common::media_corpus;`.

use std::borrow::Cow;

use session_doctor::media::Verdict;

/// One corpus file and what `inspect` must say about it.
pub struct Case {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub declared_mime: &'static str,
    /// Verdict at `Depth::Structural`.
    pub structural: Verdict,
    /// Verdict at `Depth::Deep`.
    pub deep: Verdict,
    /// A problem code that must be among the findings at `Depth::Deep`
    /// (empty: none required).
    pub code: &'static str,
}

fn case(
    name: &'static str,
    bytes: Vec<u8>,
    mime: &'static str,
    structural: Verdict,
    deep: Verdict,
    code: &'static str,
) -> Case {
    Case { name, bytes, declared_mime: mime, structural, deep, code }
}

fn ok(name: &'static str, bytes: Vec<u8>, mime: &'static str) -> Case {
    case(name, bytes, mime, Verdict::Ok, Verdict::Ok, "")
}

fn bad(name: &'static str, bytes: Vec<u8>, mime: &'static str, code: &'static str) -> Case {
    case(name, bytes, mime, Verdict::Invalid, Verdict::Invalid, code)
}

/// Deterministic pseudo-random bytes (no rand crate needed).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { usize::try_from(self.next()).unwrap() % n }
    }
}

/// RGB pixels: a gradient with some noise, so encoders produce real data.
pub fn rgb(w: u32, h: u32) -> Vec<u8> {
    let mut r = Lcg(u64::from(w) * 31 + u64::from(h));
    let mut v = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            let n = (r.next() & 15) as u8;
            let (x, y) = (u8::try_from(x * 255 / w.max(1)).unwrap(), u8::try_from(y * 255 / h.max(1)).unwrap());
            v.extend_from_slice(&[x ^ n, y, 128 ^ n]);
        }
    }
    v
}

// ---------- PNG ----------

pub fn png(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().expect("png header");
        wr.write_image_data(&rgb(w, h)).expect("png data");
        wr.finish().expect("png finish");
    }
    out
}

/// A PNG whose header claims 100000×100000 RGBA pixels (40 GB decoded), with
/// valid CRCs and a few bytes of image data: a decompression bomb by its header.
pub fn png_bomb() -> Vec<u8> {
    let mut ihdr = 100_000u32.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&100_000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut f = b"\x89PNG\r\n\x1a\n".to_vec();
    f.extend(png_chunk(b"IHDR", &ihdr));
    f.extend(png_chunk(b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]));
    f.extend(png_chunk(b"IEND", b""));
    f
}

/// A 1-bit grayscale PNG: cheap to build even at 9000 px wide.
pub fn png_1bit(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::One);
        let mut wr = enc.write_header().expect("png header");
        let row = w.div_ceil(8) as usize;
        wr.write_image_data(&vec![0u8; row * h as usize]).expect("png data");
        wr.finish().expect("png finish");
    }
    out
}

/// An APNG with `frames` frames.
pub fn apng(w: u32, h: u32, frames: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_animated(frames, 0).expect("apng");
        let mut wr = enc.write_header().expect("png header");
        for _ in 0..frames {
            wr.write_image_data(&rgb(w, h)).expect("png frame");
        }
        wr.finish().expect("png finish");
    }
    out
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "called with byte-string literals (`b\"IDAT\"`), which are references"
)]
pub fn png_chunk(ty: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut c = u32::try_from(data.len()).unwrap().to_be_bytes().to_vec();
    c.extend_from_slice(ty);
    c.extend_from_slice(data);
    let crc = crc32fast::hash(&c[4..]);
    c.extend_from_slice(&crc.to_be_bytes());
    c
}

/// Byte offsets of every chunk (start of its length field) and its type.
pub fn png_chunks(b: &[u8]) -> Vec<(usize, [u8; 4], usize)> {
    let mut out = Vec::new();
    let mut pos = 8;
    while pos + 12 <= b.len() {
        let len = u32::from_be_bytes([b[pos], b[pos + 1], b[pos + 2], b[pos + 3]]) as usize;
        let ty = [b[pos + 4], b[pos + 5], b[pos + 6], b[pos + 7]];
        out.push((pos, ty, len));
        pos += 12 + len;
    }
    out
}

/// Recomputes the CRC of the chunk starting at `pos`.
pub fn fix_crc(b: &mut [u8], pos: usize) {
    let len = u32::from_be_bytes([b[pos], b[pos + 1], b[pos + 2], b[pos + 3]]) as usize;
    let crc = crc32fast::hash(&b[pos + 4..pos + 8 + len]);
    b[pos + 8 + len..pos + 12 + len].copy_from_slice(&crc.to_be_bytes());
}

/// Inserts `chunk` right before IEND.
pub fn png_insert_before_iend(mut b: Vec<u8>, chunk: &[u8]) -> Vec<u8> {
    let iend = b.len() - 12;
    b.splice(iend..iend, chunk.iter().copied());
    b
}

fn first_idat(b: &[u8]) -> (usize, usize) {
    png_chunks(b).into_iter().find(|c| &c.1 == b"IDAT").map(|(p, _, l)| (p, l)).expect("IDAT")
}

/// Deflate data made invalid (a block of reserved type 11) with the CRC
/// recomputed: only a full decode can see it.
pub fn png_corrupt_deflate() -> Vec<u8> {
    let mut b = png(32, 24);
    let (pos, _) = first_idat(&b);
    b[pos + 8 + 2] |= 0x06; // first deflate block header: BTYPE = 11 (reserved)
    fix_crc(&mut b, pos);
    b
}

/// The zlib stream cut in half inside IDAT, CRC recomputed: "not enough
/// image data", visible to a full decode only.
pub fn png_short_deflate() -> Vec<u8> {
    let b = png(32, 24);
    let (pos, len) = first_idat(&b);
    let keep = len / 2;
    let mut out = b[..pos].to_vec();
    out.extend(png_chunk(b"IDAT", &b[pos + 8..pos + 8 + keep]));
    out.extend(png_chunk(b"IEND", b""));
    out
}

// ---------- JPEG ----------

pub fn jpeg(w: u16, h: u16) -> Vec<u8> {
    let mut out = Vec::new();
    jpeg_encoder::Encoder::new(&mut out, 85)
        .encode(&rgb(u32::from(w), u32::from(h)), w, h, jpeg_encoder::ColorType::Rgb)
        .expect("jpeg");
    out
}

fn jpeg_sof_pos(b: &[u8]) -> usize {
    (2..b.len() - 1).find(|&i| b[i] == 0xFF && (b[i + 1] == 0xC0 || b[i + 1] == 0xC2)).expect("SOF")
}

// ---------- GIF ----------

pub fn gif(w: u16, h: u16, frames: u16) -> Vec<u8> {
    let palette: Vec<u8> = (0..=255u8).flat_map(|i| [i, 255 - i, i / 2]).collect();
    let mut out = Vec::new();
    {
        let mut enc = gif::Encoder::new(&mut out, w, h, &palette).expect("gif");
        if frames > 1 {
            enc.set_repeat(gif::Repeat::Infinite).expect("gif repeat");
        }
        for f in 0..frames {
            let idx: Vec<u8> =
                (0..u32::from(w) * u32::from(h)).map(|i| ((i + u32::from(f) * 40) & 0xFF) as u8).collect();
            let frame = gif::Frame { width: w, height: h, buffer: Cow::Owned(idx), delay: 10, ..Default::default() };
            enc.write_frame(&frame).expect("gif frame");
        }
    }
    out
}

// ---------- WebP ----------

pub fn webp(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    image_webp::WebPEncoder::new(&mut out).encode(&rgb(w, h), w, h, image_webp::ColorType::Rgb8).expect("webp");
    out
}

// ---------- PDF ----------

/// Builds a PDF from numbered object bodies, with a correct xref table and
/// `trailer_extra` added to the trailer dictionary.
pub fn pdf_from(objs: &[(u32, Vec<u8>)], trailer_extra: &str) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let max = objs.iter().map(|o| o.0).max().unwrap_or(0);
    let mut offsets = vec![None; max as usize + 1];
    for (n, body) in objs {
        offsets[*n as usize] = Some(out.len());
        out.extend_from_slice(format!("{n} 0 obj\n").as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", max + 1).as_bytes());
    for off in offsets.iter().skip(1) {
        match off {
            Some(o) => out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes()),
            None => out.extend_from_slice(b"0000000000 65535 f \n"),
        }
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R {trailer_extra} >>\nstartxref\n{xref}\n%%EOF\n", max + 1).as_bytes(),
    );
    out
}

/// A valid PDF with `pages` pages of text.
pub fn pdf(pages: u32) -> Vec<u8> {
    let mut objs = vec![(1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec())];
    let kids: Vec<String> = (0..pages).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objs.push((2, format!("<< /Type /Pages /Kids [{}] /Count {pages} >>", kids.join(" ")).into_bytes()));
    objs.push((3, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec()));
    for i in 0..pages {
        let (p, c) = (4 + 2 * i, 5 + 2 * i);
        objs.push((
            p,
            format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {c} 0 R >>")
                .into_bytes(),
        ));
        let text = format!("BT /F1 12 Tf 72 720 Td (Page {}) Tj ET", i + 1);
        objs.push((c, format!("<< /Length {} >>\nstream\n{text}\nendstream", text.len()).into_bytes()));
    }
    pdf_from(&objs, "")
}

fn pdf_zero_pages() -> Vec<u8> {
    pdf_from(
        &[(1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()), (2, b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec())],
        "",
    )
}

/// Page tree whose node lists itself as a kid.
pub fn pdf_page_loop() -> Vec<u8> {
    pdf_from(
        &[
            (1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()),
            (2, b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1 >>".to_vec()),
            (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>".to_vec()),
        ],
        "",
    )
}

/// Two page-tree nodes that point at each other.
pub fn pdf_page_cycle() -> Vec<u8> {
    pdf_from(
        &[
            (1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()),
            (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec()),
            (3, b"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>".to_vec()),
        ],
        "",
    )
}

/// An xref table that claims 2^31 objects.
pub fn pdf_huge_xref() -> Vec<u8> {
    let good = pdf(1);
    let i = find(&good, b"xref\n0 ");
    let j = i + find(&good[i..], b"\n0000000000");
    let mut out = good[..i].to_vec();
    out.extend_from_slice(b"xref\n0 2147483648");
    out.extend_from_slice(&good[j..]);
    // startxref still points at "xref".
    out
}

/// A trailer claiming 2^31 objects, table otherwise fine.
pub fn pdf_huge_size() -> Vec<u8> {
    let good = pdf(1);
    let k = find(&good, b"/Size ");
    let end = k + 6 + find(&good[k + 6..], b" ");
    let mut out = good[..k].to_vec();
    out.extend_from_slice(b"/Size 2147483648");
    out.extend_from_slice(&good[end..]);
    out
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).expect("needle")
}

/// A content stream whose /Length runs past the end of the file.
pub fn pdf_long_stream() -> Vec<u8> {
    let mut objs = vec![
        (1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()),
        (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec()),
        (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] /Contents 4 0 R >>".to_vec()),
    ];
    objs.push((4, b"<< /Length 999999999 >>\nstream\nBT ET\nendstream".to_vec()));
    pdf_from(&objs, "")
}

pub fn pdf_encrypted() -> Vec<u8> {
    let mut objs = vec![
        (1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()),
        (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec()),
        (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>".to_vec()),
    ];
    objs.push((
        4,
        b"<< /Filter /Standard /V 1 /R 2 /O (0123456789abcdef0123456789abcdef) /U (0123456789abcdef0123456789abcdef) /P -4 >>"
            .to_vec(),
    ));
    pdf_from(&objs, "/Encrypt 4 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]")
}

/// A `FlateDecode` stream whose data is not deflate: strict loading keeps it
/// (streams are decoded lazily), a deep check decompresses it.
pub fn pdf_bad_flate() -> Vec<u8> {
    let junk = b"this is not zlib data at all";
    let mut body = format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", junk.len()).into_bytes();
    body.extend_from_slice(junk);
    body.extend_from_slice(b"\nendstream");
    pdf_from(
        &[
            (1, b"<< /Type /Catalog /Pages 2 0 R >>".to_vec()),
            (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec()),
            (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] /Contents 4 0 R >>".to_vec()),
            (4, body),
        ],
        "",
    )
}

fn cut(b: &[u8], n: usize) -> Vec<u8> {
    b[..n.min(b.len())].to_vec()
}

/// Every corpus case. Expectations hold for `Rules::builtin("anthropic")`.
pub fn corpus() -> Vec<Case> {
    use Verdict::*;
    let png = png(32, 24);
    let jpg = jpeg(40, 30);
    let gif1 = gif(16, 12, 1);
    let gif3 = gif(16, 12, 3);
    let webp = webp(20, 10);
    let pdf1 = pdf(1);
    let pdf3 = pdf(3);

    let mut v = vec![
        ok("png", png.clone(), "image/png"),
        ok("apng-3-frames", apng(8, 8, 3), "image/png"),
        ok("jpeg", jpg.clone(), "image/jpeg"),
        ok("jpeg-declared-jpg-params", jpg.clone(), "image/jpeg; charset=binary"),
        ok("gif-static", gif1.clone(), "image/gif"),
        ok("gif-animated", gif3.clone(), "image/gif"),
        ok("webp", webp.clone(), "image/webp"),
        ok("pdf-1-page", pdf1.clone(), "application/pdf"),
        ok("pdf-3-pages", pdf3.clone(), "application/pdf"),
    ];

    // PNG
    let n = png.len();
    v.push(bad("png-truncated-half", cut(&png, n / 2), "image/png", "png.truncated"));
    v.push(bad("png-truncated-after-ihdr", cut(&png, 33), "image/png", "png.no_data"));
    v.push(bad("png-truncated-in-signature-area", cut(&png, 12), "image/png", "png.truncated"));
    v.push(bad("png-missing-iend", cut(&png, n - 12), "image/png", "png.truncated"));
    v.push(bad("png-missing-last-byte", cut(&png, n - 1), "image/png", "png.truncated"));
    let mut flipped_crc = png.clone();
    flipped_crc[29 + 3] ^= 0x01; // last byte of IHDR's CRC
    v.push(bad("png-flipped-crc", flipped_crc, "image/png", "png.crc"));
    let mut flipped_data = png.clone();
    let (ipos, ilen) = first_idat(&png);
    flipped_data[ipos + 8 + ilen / 2] ^= 0x5A;
    v.push(bad("png-flipped-idat-byte", flipped_data, "image/png", "png.crc"));
    v.push(case("png-corrupt-deflate-good-crc", png_corrupt_deflate(), "image/png", Ok, Invalid, "png.decode"));
    v.push(case("png-short-deflate-good-crc", png_short_deflate(), "image/png", Ok, Invalid, "png.decode"));
    let mut zero_w = png.clone();
    zero_w[16..20].copy_from_slice(&0u32.to_be_bytes());
    fix_crc(&mut zero_w, 8);
    v.push(bad("png-zero-width", zero_w, "image/png", "png.bad_header"));
    let mut bad_depth = png.clone();
    bad_depth[24] = 3; // bit depth 3 with RGB
    fix_crc(&mut bad_depth, 8);
    v.push(bad("png-bad-bit-depth", bad_depth, "image/png", "png.bad_header"));
    let mut zeroed_magic = png.clone();
    zeroed_magic[..8].fill(0);
    v.push(bad("png-zeroed-signature", zeroed_magic, "image/png", "type.unknown"));
    let mut trailing = png.clone();
    trailing.extend_from_slice(b"garbage after the end");
    v.push(case("png-trailing-garbage", trailing, "image/png", Warn, Warn, "png.trailing_data"));

    // JPEG
    let n = jpg.len();
    v.push(bad("jpeg-truncated-half", cut(&jpg, n / 2), "image/jpeg", "jpeg.truncated"));
    v.push(bad("jpeg-truncated-headers", cut(&jpg, 30), "image/jpeg", "jpeg.truncated"));
    v.push(bad("jpeg-missing-eoi", cut(&jpg, n - 2), "image/jpeg", "jpeg.truncated"));
    let mut zero_w = jpg.clone();
    let s = jpeg_sof_pos(&jpg);
    zero_w[s + 7..s + 9].copy_from_slice(&[0, 0]);
    v.push(bad("jpeg-zero-width", zero_w, "image/jpeg", "jpeg.bad_header"));
    v.push(bad("jpeg-declared-png", jpg.clone(), "image/png", "mime.mismatch"));

    // GIF
    let n = gif3.len();
    v.push(bad("gif-missing-trailer", cut(&gif3, n - 1), "image/gif", "gif.truncated"));
    v.push(bad("gif-truncated-half", cut(&gif3, n / 2), "image/gif", "gif.truncated"));
    let mut zero = gif1.clone();
    zero[6..8].copy_from_slice(&[0, 0]);
    v.push(bad("gif-zero-width", zero, "image/gif", "gif.bad_header"));
    let mut no_frames = gif1[..13 + 768].to_vec();
    no_frames.push(0x3B);
    v.push(bad("gif-no-frames", no_frames, "image/gif", "gif.no_frames"));

    // WebP
    let n = webp.len();
    v.push(bad("webp-truncated-half", cut(&webp, n / 2), "image/webp", "webp.truncated"));
    v.push(bad("webp-truncated-header", cut(&webp, 14), "image/webp", "webp.truncated"));
    v.push(bad("webp-declared-jpeg", webp.clone(), "image/jpeg", "mime.mismatch"));

    // PDF
    let n = pdf3.len();
    v.push(bad("pdf-truncated-half", cut(&pdf3, n / 2), "application/pdf", "pdf.truncated"));
    v.push(bad("pdf-truncated-90pct", cut(&pdf3, n * 9 / 10), "application/pdf", "pdf.truncated"));
    v.push(bad("pdf-missing-eof", cut(&pdf3, n - 6), "application/pdf", "pdf.truncated"));
    v.push(bad("pdf-zero-pages", pdf_zero_pages(), "application/pdf", "pdf.no_pages"));
    v.push(bad("pdf-not-really", b"%PDF-1.4 not really a pdf".to_vec(), "application/pdf", "pdf.truncated"));
    v.push(bad("pdf-encrypted", pdf_encrypted(), "application/pdf", "pdf.encrypted"));
    v.push(bad("pdf-page-tree-self-loop", pdf_page_loop(), "application/pdf", "pdf.page_tree"));
    v.push(bad("pdf-page-tree-cycle", pdf_page_cycle(), "application/pdf", "pdf.page_tree"));
    v.push(bad("pdf-xref-2^31-objects", pdf_huge_xref(), "application/pdf", "pdf.bad_xref"));
    v.push(bad("pdf-trailer-size-2^31", pdf_huge_size(), "application/pdf", "pdf.bad_xref"));
    v.push(bad("pdf-stream-length-past-eof", pdf_long_stream(), "application/pdf", ""));
    v.push(case("pdf-bad-flate-stream", pdf_bad_flate(), "application/pdf", Ok, Invalid, "pdf.stream"));
    let sx = find(&pdf1, b"startxref\n") + 10;
    let mut moved = pdf1[..sx].to_vec();
    moved.extend_from_slice(b"17\n%%EOF\n"); // the middle of "1 0 obj"
    v.push(bad("pdf-startxref-wrong", moved, "application/pdf", "pdf.bad_xref"));

    // Not media at all
    let html = b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body>Not Found</body></html>\n";
    v.push(bad("html-as-png", html.to_vec(), "image/png", "type.unsupported"));
    v.push(bad("html-as-pdf", html.to_vec(), "application/pdf", "type.unsupported"));
    v.push(bad(
        "text-as-jpeg",
        b"Error: ENOENT: no such file or directory, open 'shot.png'\n".to_vec(),
        "image/jpeg",
        "type.unsupported",
    ));
    v.push(bad(
        "svg-as-png",
        b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><rect width=\"10\" height=\"10\"/></svg>".to_vec(),
        "image/png",
        "type.unsupported",
    ));
    v.push(bad(
        "heic-as-jpeg",
        b"\0\0\0\x18ftypheic\0\0\0\0mif1heic\0\0\0\0meta".to_vec(),
        "image/jpeg",
        "type.unsupported",
    ));
    v.push(bad(
        "bmp",
        b"BM\x3a\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\x18\0".to_vec(),
        "image/bmp",
        "type.unsupported",
    ));
    v.push(bad("empty", Vec::new(), "image/png", "payload.empty"));
    v
}

/// Base64 strings that must be rejected, each with what the message must say.
pub fn bad_base64() -> Vec<(&'static str, String, &'static str)> {
    use base64::Engine as _;
    let good = base64::engine::general_purpose::STANDARD.encode(png(8, 8));
    let mut hash = good.clone();
    hash.replace_range(20..21, "#");
    let body = good.trim_end_matches('=');
    let cut = body[..=((body.len() - 2) / 4 * 4)].to_string();
    vec![
        ("bad-char", hash, "byte 20"),
        ("data-url-prefix", format!("data:image/png;base64,{good}"), "data URL prefix"),
        ("glued-payloads", format!("aGVsbG8={good}"), "padding"),
        ("cut-to-bad-length", cut, "length"),
        ("non-ascii", format!("{}é{}", &good[..8], &good[8..]), "byte 8"),
    ]
}

/// Base64 text that decodes with a warning (non-standard but readable).
pub fn odd_base64() -> Vec<(&'static str, String)> {
    use base64::Engine as _;
    let bytes = png(8, 8);
    let std = base64::engine::general_purpose::STANDARD.encode(&bytes);
    vec![
        ("url-safe", base64::engine::general_purpose::URL_SAFE.encode(&bytes)),
        ("no-padding", base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes)),
        (
            "line-breaks",
            std.as_bytes().chunks(76).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join("\n"),
        ),
    ]
}
