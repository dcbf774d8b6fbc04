#!/usr/bin/env python3
"""Generate a synthetic Claude-Code-style session JSONL for perf testing.

Usage: gen_session.py OUT.jsonl TARGET_MB [--seed N] [--corrupt 0.05] [--stuck | --mended]

Stdlib only. Each line: {"type":"user"|"assistant","uuid":...,"parentUuid":...,
"sessionId":...,"timestamp":...,"message":{"role":...,"content":[...]}}.
Media: real PNGs (noise images ~ incompressible, and "screenshot-like" images
that deflate 5-20x, so pixel-decode cost is realistic), multi-page PDFs with
a correct xref table, tool_result blocks that carry images. About --corrupt
of media parts are broken: truncated binary (re-encoded, valid base64),
truncated base64 text, or one flipped byte (CRC error). A sidecar
OUT.expected.json records the counts so a checker can be verified.

By default the tool results answer random ids (a history that breaks the
provider's rules everywhere, which `repair` mends call by call). With --stuck
every call is answered by the next line and the session ends as one stuck on
media does: a last image the provider rejects ("Could not process image"),
recorded as Claude Code records an API error.

With --mended the history is one a real interrupted run leaves, and `repair`
rewrites much of it: about a quarter of the records, holding a third of the
bytes. Of about 1,170 records per 300 MB, ~300 are assistant turns whose calls
(~330) got no result (`repair` answers each), ~145 are tool results whose call
is gone, each carrying an image (~100 MB together: `repair` removes them), and
the rest are calls answered by the next line (a screenshot or text), pasted
images and plain text turns. No answer records its usage (as with --stuck),
so no later accepted request vouches for a call left unanswered before it.
"""
import base64, json, os, random, struct, sys, uuid, zlib


def png_chunk(tag, data):
    c = struct.pack(">I", len(data)) + tag + data
    return c + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def make_png(rng, target_bytes):
    """RGB 8-bit PNG of roughly target_bytes encoded size."""
    kind = rng.choice(["noise", "screen"])
    if kind == "noise":
        # incompressible: encoded ~= raw
        px = max(16, target_bytes // 3)
        w = rng.randint(256, 1600)
        h = max(1, px // w)
        row = w * 3
        raw = bytearray()
        rnd = os.urandom(row * h)
        for y in range(h):
            raw.append(0)
            raw += rnd[y * row:(y + 1) * row]
        comp = zlib.compress(bytes(raw), 1)
    else:
        # screenshot-like: flat areas + noisy bands; deflates ~5-20x
        w = rng.choice([800, 1024, 1280, 1440, 1920])
        row = w * 3
        lines = []
        noise_row_bytes = os.urandom(row * 64)
        est, h = 0, 0
        while est < target_bytes and h < 4000:
            if rng.random() < 0.15:
                off = rng.randint(0, 63) * row
                lines.append(b"\x00" + noise_row_bytes[off:off + row])
                est += row
            else:
                col = bytes([rng.randint(0, 255)] * 3)
                lines.append(b"\x00" + col * w)
                est += 40
            h += 1
        comp = zlib.compress(b"".join(lines), 6)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    # split IDAT into 64 KiB chunks like most encoders
    idats = b"".join(png_chunk(b"IDAT", comp[i:i + 65536]) for i in range(0, len(comp), 65536))
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + idats + png_chunk(b"IEND", b"")


def make_pdf(rng, target_bytes):
    """Multi-page PDF with one FlateDecode'd (random) stream per page and a valid xref."""
    npages = rng.randint(1, 8)
    per_page = max(1000, target_bytes // npages)
    objs = []  # (num, bytes)
    # 1 catalog, 2 pages, 3 font, then page/content pairs
    kids = []
    num = 4
    page_objs = []
    for p in range(npages):
        page_num, cont_num = num, num + 1
        num += 2
        kids.append(page_num)
        text = b"BT /F1 12 Tf 72 720 Td (Page %d of synthetic document) Tj ET\n" % (p + 1)
        junk = os.urandom(per_page)  # incompressible payload -> realistic size
        stream = zlib.compress(text + b"% " + base64.b16encode(junk[:64]) + b"\n", 6) + junk
        page_objs.append((page_num, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                          b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % cont_num))
        page_objs.append((cont_num, b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"))
    objs.append((1, b"<< /Type /Catalog /Pages 2 0 R >>"))
    objs.append((2, b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids) + b"] /Count %d >>" % npages))
    objs.append((3, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"))
    objs += page_objs
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for n, body in objs:
        offsets[n] = len(out)
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (num)
    for n in range(1, num):
        out += b"%010d 00000 n \n" % offsets[n]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (num, xref)
    return bytes(out)


def corrupt(rng, blob):
    mode = rng.choice(["trunc_bin", "trunc_b64", "flip"])
    if mode == "trunc_bin":
        return mode, base64.b64encode(blob[: rng.randint(len(blob) // 4, len(blob) - 16)]).decode()
    if mode == "trunc_b64":
        s = base64.b64encode(blob).decode()
        cut = rng.randint(len(s) // 4, len(s) - 8)
        if cut % 4 == 0:
            cut -= 1  # make it an invalid length
        return mode, s[:cut]
    b = bytearray(blob)
    i = rng.randint(len(b) // 2, len(b) - 20)  # inside data, not the magic
    b[i] ^= 0x5A
    return mode, base64.b64encode(bytes(b)).decode()


WORDS = ("the function returns a value when the file is read and the test passes "
         "error handling config parse stream buffer line json image base64 decode "
         "validate session agent tool result user assistant").split()


def text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def main():
    out = sys.argv[1]
    target = int(float(sys.argv[2]) * 1e6)
    seed = 1
    corrupt_rate = 0.05
    a = sys.argv[3:]
    if "--seed" in a:
        seed = int(a[a.index("--seed") + 1])
    if "--corrupt" in a:
        corrupt_rate = float(a[a.index("--corrupt") + 1])
    stuck = "--stuck" in a
    mended = "--mended" in a
    if stuck and mended:
        sys.exit("gen_session.py: --stuck and --mended are two different sessions")
    rng = random.Random(seed)
    # pools of distinct media (re-used, since a checker has no cache it does not matter)
    pngs = []
    for i in range(48):
        # log-uniform 50 KB .. 2 MB
        sz = int(50e3 * (40 ** rng.random()))
        pngs.append(make_png(rng, sz))
    pdfs = [make_pdf(rng, int(100e3 * (10 ** rng.random()))) for _ in range(6)]
    png_b64 = [base64.b64encode(p).decode() for p in pngs]
    pdf_b64 = [base64.b64encode(p).decode() for p in pdfs]
    exp = {"lines": 0, "media": 0, "png": 0, "pdf": 0, "corrupt": 0, "corrupt_modes": {}}
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    parent = None
    written = 0

    def media(kind):
        exp["media"] += 1
        exp[kind] += 1
        idx = rng.randrange(len(pngs) if kind == "png" else len(pdfs))
        if rng.random() < corrupt_rate:
            mode, data = corrupt(rng, (pngs if kind == "png" else pdfs)[idx])
            exp["corrupt"] += 1
            key = kind + ":" + mode
            exp["corrupt_modes"][key] = exp["corrupt_modes"].get(key, 0) + 1
        elif kind == "png":
            # Every use gets unique bytes (a tEXt chunk after IHDR), as in a real
            # session, so a checker that caches repeated payloads gains nothing here.
            uniq = png_chunk(b"tEXt", b"use\x00%d" % exp["media"])
            data = base64.b64encode(pngs[idx][:33] + uniq + pngs[idx][33:]).decode()
        else:
            data = pdf_b64[idx]
        if kind == "png":
            return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
        return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}}

    pending = None  # --stuck: the call the next line answers

    def record(role, content, n, u, extra=None):
        nonlocal parent
        rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/u/proj",
               "sessionId": sid, "version": "1.0.0", "type": role, "uuid": u,
               "timestamp": "2025-01-01T00:00:%02d.000Z" % (n % 60)}
        rec.update(extra or {})
        rec["message"] = {"role": role, "content": content}
        if stuck and role == "assistant":
            # The model that answered: what bounds the suspects to the last request.
            error = "isApiErrorMessage" in rec
            rec["message"] = {"model": "<synthetic>" if error else "claude-sonnet-4-5-20250929", **rec["message"],
                              "stop_reason": "stop_sequence" if error else "end_turn",
                              "usage": {"input_tokens": 0 if error else 1200, "output_tokens": 0 if error else 80}}
        parent = u
        return json.dumps(rec, separators=(",", ":")) + "\n"

    def call():
        return {"type": "tool_use", "id": "toolu_%08x" % rng.getrandbits(32), "name": "Read",
                "input": {"file_path": "/src/%s.rs" % rng.choice(WORDS)}}

    def turn():
        """--mended: the records of one turn, as (role, content)."""
        r = rng.random()
        say = [{"type": "text", "text": text(rng, rng.randint(5, 200))}]
        if r < 0.35:  # calls the run was killed in: no result ever follows
            return [("assistant", say + [call() for _ in range(1 if rng.random() < 0.92 else 2)])]
        if r < 0.485:  # a result whose call is gone, with the screenshot it took
            result = {"type": "tool_result", "tool_use_id": "toolu_%08x" % rng.getrandbits(32),
                      "content": [{"type": "text", "text": "Screenshot taken"}, media("png")]}
            return [("user", [result])]
        if r < 0.72:  # a call answered by the next line
            c = call()
            body = ([{"type": "text", "text": "Screenshot taken"}, media("png")] if rng.random() < 0.6
                    else [{"type": "text", "text": text(rng, rng.randint(20, 400))}])
            return [("assistant", say + [c]), ("user", [{"type": "tool_result", "tool_use_id": c["id"], "content": body}])]
        if r < 0.83:  # the user pastes image(s)
            return [("user", [{"type": "text", "text": text(rng, 10)}] + [media("png") for _ in range(rng.randint(1, 2))])]
        role = rng.choice(["user", "assistant"])
        return [(role, [{"type": "text", "text": text(rng, rng.randint(3, 200))}])]

    with open(out, "w") as f:
        n = 0
        while mended and written < target:
            for role, content in turn():
                n += 1
                line = record(role, content, n, str(uuid.UUID(int=rng.getrandbits(128))))
                f.write(line)
                written += len(line)
        while written < target:
            n += 1
            u = str(uuid.UUID(int=rng.getrandbits(128)))
            r = rng.random()
            if stuck and pending:
                r = 0.9
            elif stuck and 0.85 <= r < 0.97:
                r = 0.8  # a result only ever answers a call
            if r < 0.45:  # assistant text + tool_use
                role, typ = "assistant", "assistant"
                content = [{"type": "text", "text": text(rng, rng.randint(5, 200))}]
                if rng.random() < 0.6:
                    pending = "toolu_%08x" % rng.getrandbits(32)
                    content.append({"type": "tool_use", "id": pending, "name": "Read",
                                    "input": {"file_path": "/src/%s.rs" % rng.choice(WORDS)}})
            elif r < 0.70:  # user text
                role, typ = "user", "user"
                content = [{"type": "text", "text": text(rng, rng.randint(3, 80))}]
            elif r < 0.85:  # user pasted image(s)
                role, typ = "user", "user"
                content = [{"type": "text", "text": text(rng, 10)}] + [media("png") for _ in range(rng.randint(1, 2))]
            elif r < 0.97:  # tool_result carrying an image (screenshot tool)
                role, typ = "user", "user"
                answers = pending or "toolu_%08x" % rng.getrandbits(32)
                pending = None
                content = [{"type": "tool_result", "tool_use_id": answers,
                            "content": [{"type": "text", "text": "Screenshot taken"}, media("png")]}]
            else:  # PDF document
                role, typ = "user", "user"
                content = [media("pdf"), {"type": "text", "text": "summarise this pdf"}]
            line = record(typ, content, n, u)
            f.write(line)
            written += len(line)
        if stuck:
            # The user's last image, which the provider rejects, and the error.
            n += 2
            corrupt_rate = 1.0
            image = [{"type": "text", "text": "what is wrong here?"}, media("png")]
            f.write(record("user", image, n - 1, str(uuid.UUID(int=rng.getrandbits(128)))))
            body = {"type": "error", "error": {"type": "invalid_request_error", "message": "Could not process image"},
                    "request_id": "req_011CVHx8n1Dq2"}
            error = [{"type": "text", "text": "API Error: 400 " + json.dumps(body, separators=(",", ":"))}]
            extra = {"isApiErrorMessage": True, "apiErrorStatus": 400, "error": "invalid_request"}
            f.write(record("assistant", error, n, str(uuid.UUID(int=rng.getrandbits(128))), extra))
        exp["lines"] = n
    with open(out + ".expected.json", "w") as f:
        json.dump(exp, f, indent=1)
    print(json.dumps(exp))


if __name__ == "__main__":
    main()
