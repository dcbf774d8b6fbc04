"""Gemini CLI with `session-doctor guard install gemini-cli`: never stuck on a broken file.

Without the guard, a `read_file` of a cut PNG puts the image in the session as
`inlineData` and Gemini's 400 comes back on every later request, the CLI's own
resume too (gemini_cli.py). With the guard's `BeforeTool` hook merged into
`~/.gemini/settings.json`, the read is blocked with a reason the model sees,
and an image over the provider's limits is read as a fitted copy kept in the
project's temporary folder (the only place besides the workspace Gemini CLI
reads from).
"""

import base64
import json
import os
import struct
import zlib

import lib
from scenarios import gemini_cli as g

VERTEX_MAX_IMAGE = 7340032  # vertex-gemini's max_image_bytes in src/media/rules.json


def _noise_png(side):
    """An RGB PNG of random pixels: it does not compress, so `side`² × 3 bytes."""
    raw = b"".join(b"\x00" + os.urandom(side * 3) for _ in range(side))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")


def _install(ctx, *extra):
    settings = ctx.sb.home / ".gemini" / "settings.json"
    before = settings.read_bytes()
    inst = ctx.sb.doctor("guard", "install", "gemini-cli", *extra)
    lib.check(inst.code == 0, "guard install gemini-cli", inst)
    once = settings.read_text()
    after = json.loads(once)
    lib.check(after["model"]["name"] == g.MODEL and after["security"]["auth"]["selectedType"] == "gemini-api-key", "the user's settings stay", after)
    lib.check((ctx.sb.home / ".gemini" / "settings.json.session-doctor-backup").read_bytes() == before, "the old settings are kept as the backup")
    again = ctx.sb.doctor("guard", "install", "gemini-cli", *extra)
    lib.check("already installed" in again.stdout and settings.read_text() == once, "a second install changes nothing", again)
    return settings, before


def _parts(reqs):
    return [p for r in reqs for c in r["body"].get("contents", []) for p in c.get("parts") or []]


def scenario_guard_blocks_a_cut_png_so_the_session_never_sticks(ctx):
    sb, p = ctx.sb, ctx.provider
    g._setup(ctx, "cut.png", lib.cut_png())
    settings, before = _install(ctx)
    run = g._gemini(ctx, "-p", "READ-THE-FILE cut.png", "--yolo")
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = p.model_requests("gemini")
    lib.check(reqs and all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs if r["status"] != 200])
    parts = _parts(reqs)
    lib.check(not [x for x in parts if "inlineData" in x], "no image was sent")
    told = [x for x in parts if "functionResponse" in x and "session-doctor guard" in json.dumps(x)]
    lib.check(told, "the model read the guard's reason as the read's result", parts)
    sessions = g._sessions(ctx)
    lib.check(len(sessions) == 1, "the CLI wrote one session file", sessions)
    # Not "not stuck": Gemini CLI 0.61.0 records every tool response twice and
    # sends both on resume, which Gemini refuses (gemini_cli.py's
    # tool_resume_rescued, a `repair` cure); that is the CLI's, with or without
    # the guard. What the guard owes: nothing of the image is in the session.
    r, d = lib.diagnose(sb, sessions[0])
    codes = [f["code"] for f in d["findings"]]
    lib.check(d["attachments"] == 0 and not [c for c in codes if c.split(".")[0] in ("image", "pdf", "media")], "diagnose: no media in the session", r)
    scan = sb.doctor("scan", "--json", sessions[0])
    lib.check(scan.code in (0, 1) and not scan.json()["attachments"], "no attachment entered the session", scan)
    # And out again: the settings are as they were before the install, byte for byte.
    un = sb.doctor("guard", "uninstall", "gemini-cli")
    lib.check(un.code == 0 and settings.read_bytes() == before, "guard uninstall gemini-cli puts the settings back", un, settings.read_text())


def scenario_guard_reads_an_oversized_image_as_a_fitted_copy(ctx):
    """A 7.7 MB PNG against Vertex's 7 MB image cap (`--provider vertex-gemini`):
    the hook answers with the fitted copy in the input (no decision: Gemini CLI's
    policy then decides that read as any other), the CLI sends the copy, every
    request is accepted, and the session holds the copy, never the original."""
    sb, p = ctx.sb, ctx.provider
    big = _noise_png(1600)
    lib.check(len(big) > VERTEX_MAX_IMAGE, "the image is over the cap", len(big))
    g._setup(ctx, "photo.png", big)
    _install(ctx, "--provider", "vertex-gemini")
    run = g._gemini(ctx, "-p", "READ-THE-FILE photo.png", "--yolo")
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = p.model_requests("gemini")
    lib.check(reqs and all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs if r["status"] != 200])
    sent = [x["inlineData"] for x in _parts(reqs) if "inlineData" in x]
    lib.check(sent, "the image was read", [r["body"].get("contents") for r in reqs][-1:])
    sizes = [len(base64.b64decode(x["data"])) for x in sent]
    lib.check(all(s <= VERTEX_MAX_IMAGE for s in sizes), "what was sent fits the cap", sizes)
    fitted = sorted((sb.home / ".gemini" / "tmp").glob("*/session-doctor/fitted/*"))
    lib.check(fitted, "the fitted copy is kept in the project's temporary folder")
    lib.check(oct(fitted[0].stat().st_mode & 0o777) == "0o600" and oct(fitted[0].parent.stat().st_mode & 0o777) == "0o700", "private to the user", fitted)
    lib.check(all(base64.b64decode(x["data"]) == fitted[0].read_bytes() for x in sent), "the CLI sent the fitted copy")
    scan = sb.doctor("scan", "--json", "--provider", "vertex-gemini", g._sessions(ctx)[0])
    atts = scan.json()["attachments"]
    lib.check(atts and all(a.get("bytes", 0) <= VERTEX_MAX_IMAGE for a in atts), "the session holds the copy, within the cap", atts)
