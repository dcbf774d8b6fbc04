"""Codex CLI 0.171.0: the layouts its rollouts take on disk besides a plain append-only file.

* Compressed rollouts. Behind its ``local_thread_store_compression`` feature (under
  development, off by default in 0.171.0; ``codex features list``), Codex's rollout
  compression worker rewrites every rollout under ``sessions/`` and
  ``archived_sessions/`` whose mtime is seven days old as ``rollout-….jsonl.zst``
  (zstd level 3, mtime kept) and deletes the plain file. It reads either form,
  the plain one first, and turns a ``.zst`` back into ``.jsonl`` before it appends.
* Compaction. With a tiny ``model_auto_compact_token_limit`` Codex compacts after
  every turn and writes ``compacted`` lines whose ``replacement_history`` replaces
  what came before. 0.171.0's local compaction (any provider but OpenAI's own)
  keeps the user messages' text only: an image the user attached is not carried over.
  An image inside ``replacement_history`` (the layout of remote compaction and older
  builds) comes from the hand-edited fixture ``compacted-image-carried.jsonl``, which
  the real Codex resumes, sends and gets stuck on.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path

import lib
from scenarios import codex as cx


def _compress_as_codex_does(ctx, env, session):
    """Make the rollout seven days idle and run Codex once with its compression worker on:
    the path of the `.jsonl.zst` it writes in the plain file's place."""
    old = time.time() - 8 * 86400
    os.utime(session, (old, old))
    other = cx.exec_(ctx, env, "hello", "--enable", "local_thread_store_compression")
    lib.check(other.code == 0, "a run with local_thread_store_compression on", other)
    packed = session.with_name(session.name + ".zst")
    deadline = time.time() + 30
    while session.exists() and time.time() < deadline:
        time.sleep(0.1)
    lib.check(packed.is_file() and not session.exists(), "Codex compressed the idle rollout and deleted the plain file", sorted(session.parent.iterdir()))
    lib.check(packed.read_bytes()[:4] == b"\x28\xb5\x2f\xfd", "the .zst is a zstd frame", packed)
    return packed


def scenario_compressed_stuck_rollout_rescued(ctx):
    """A rollout stuck on an image the provider cannot process, then compressed by Codex:
    every command reads the .zst, the overlay sits beside it, the copy is plain and resumes."""
    p = ctx.provider.settings
    bad = lib.png(8, 8, (0, 0, 255))
    (ctx.sb.work / "bad.png").write_bytes(bad)
    p.refuse_image = bad
    p.tool = ("view_image", {"path": "bad.png"})
    env = cx.setup(ctx)
    sid, session, again = cx.stuck_twice(ctx, env, "READ-THE-FILE bad.png", 1, 400, "the request carrying bad.png gets a 400")
    stuck_request = ctx.provider.model_requests("responses")[-1]["body"]
    packed = _compress_as_codex_does(ctx, env, session)
    packed_bytes = packed.read_bytes()
    original = hashlib.sha256(packed_bytes).hexdigest()

    listed = ctx.sb.doctor("sessions", "--json", "--agent", "codex")
    lib.check(listed.code == 0, "sessions runs", listed)
    paths = [s["path"] for s in listed.json()]
    lib.check(str(packed) in paths and str(session) not in paths, "sessions lists the .zst", listed)

    r, d = lib.diagnose(ctx.sb, packed)
    lib.check(d["stuck"] and d["failure"]["class"] == "media_rejected", "diagnose on the .zst: stuck, media_rejected", r)
    lib.check([s.get("name") for s in d["suspects"]] == ["bad.png"], "the one suspect is bad.png", r)
    cx.compare_preview(ctx, packed, stuck_request)
    x = ctx.sb.doctor("exclude", packed, "--suspects")
    lib.check(x.code == 0, "exclude --suspects lands", x)
    lib.check(packed.with_name(packed.name + ".doctor").is_file(), "the overlay sits beside the .zst", sorted(packed.parent.iterdir()))
    rep = ctx.sb.doctor("repair", packed, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    lib.check(copy["out"].endswith(".jsonl") and open(copy["out"], "rb").read(1) == b"{", "the copy is a plain .jsonl", copy)
    lib.check(hashlib.sha256(packed.read_bytes()).hexdigest() == original, "the .zst is untouched", packed)
    before = len(ctx.provider.model_requests())
    fixed = cx.resume(ctx, env, cx.resume_id(copy))
    lib.check(fixed.code == 0 and cx.failed_with(ctx, before, 200), "`codex exec resume <new id> continue` gets a 200", fixed)
    _, diffs = cx.preview_differences(ctx, copy["out"], ctx.provider.model_requests("responses")[before]["body"], reply=1)
    # The .zst is the original: compared by its sha256 above, and byte for byte here.
    lib.rescued(ctx.sb, again.requests, packed, packed_bytes, copy["out"], diffs)


def scenario_plain_and_compressed_listed_once(ctx):
    """Codex resumes a compressed rollout by writing its plain form back; while both exist
    (and after), `sessions` lists the rollout once, by the plain file Codex reads."""
    env = cx.setup(ctx)
    first = cx.exec_(ctx, env, "hello")
    sid = cx.session_id_of(first)
    session = cx.rollout(ctx, sid)
    text = session.read_bytes()
    packed = _compress_as_codex_does(ctx, env, session)
    # Both forms for a moment, as while Codex materializes the .zst.
    plain = session
    plain.write_bytes(text)
    listed = ctx.sb.doctor("sessions", "--json", "--agent", "codex")
    paths = [s["path"] for s in listed.json()]
    lib.check(str(plain) in paths and str(packed) not in paths, "both forms: sessions lists the plain one only", listed)
    plain.unlink()
    again = cx.resume(ctx, env, sid, "more")
    lib.check(again.code == 0 and cx.failed_with(ctx, len(ctx.provider.model_requests()) - 1, 200), "Codex resumes the compressed rollout", again)
    lib.check(plain.is_file() and not packed.exists(), "Codex wrote the plain form back to append and deleted the .zst", sorted(plain.parent.iterdir()))
    listed = ctx.sb.doctor("sessions", "--json", "--agent", "codex")
    mine = [s for s in listed.json() if sid in s["path"]]
    lib.check(len(mine) == 1 and mine[0]["path"] == str(plain), "after the resume: listed once, by the plain file", listed)


def scenario_compaction_drops_attached_image(ctx):
    """After a compaction Codex sends its replacement history, which (local compaction)
    holds no image: preview equals what Codex sent and does not bring the image back."""
    (ctx.sb.work / "pic.png").write_bytes(lib.png())
    env = cx.setup(ctx)
    cfg = ctx.sb.home / ".codex" / "config.toml"
    cfg.write_text("model_auto_compact_token_limit = 50\n" + cfg.read_text())
    first = cx.exec_(ctx, env, "look", "--image=%s" % (ctx.sb.work / "pic.png"))
    lib.check(first.code == 0, "the image is taken", first)
    sid = cx.session_id_of(first)
    again = cx.resume(ctx, env, sid, "continue")
    lib.check(again.code == 0, "the resume answers", again)
    session = cx.rollout(ctx, sid)
    kinds = [json.loads(line)["type"] for line in session.read_text().splitlines()]
    lib.check("compacted" in kinds, "Codex compacted the session", kinds)
    sent = ctx.provider.model_requests("responses")[-1]["body"]
    lib.check("input_image" not in json.dumps(sent["input"]), "after compaction Codex sends no image", sent["input"][1:])
    body = cx.compare_preview(ctx, session, sent, reply=1)
    lib.check("input_image" not in json.dumps(body), "preview sends no image either", body)
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and not d["suspects"], "diagnose: not stuck, no suspect", r)


def _compacted_fixture(ctx):
    """The compacted rollout with an image in its replacement history (the layout Codex's
    remote compaction and older builds write), put in the sandbox's sessions folder:
    (its path, its session id, the PNG it carries)."""
    fixture = Path(__file__).resolve().parents[2] / "data/agents/codex/compacted-image-carried.jsonl"
    text = fixture.read_text()
    sid = json.loads(text.splitlines()[0])["payload"]["id"]
    png = base64.b64decode(re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", text).group(1))
    day = cx.sessions_dir(ctx) / "2026" / "12" / "01"
    day.mkdir(parents=True)
    session = day / ("rollout-2026-12-01T10-31-29-%s.jsonl" % sid)
    shutil.copy(fixture, session)
    return session, sid, png


def scenario_compacted_image_sent_as_previewed_and_rescued(ctx):
    """Codex resumes a rollout whose last compaction carries an image: it sends that
    replacement history (the image once) as preview shows it. A provider that refuses
    the image gets it stuck for real; the rescue leaves it out and the copy resumes with a 200."""
    env = cx.setup(ctx)
    session, sid, png = _compacted_fixture(ctx)
    ctx.provider.settings.refuse_image = png
    before = len(ctx.provider.model_requests())
    first = cx.resume(ctx, env, sid)
    lib.check(cx.failed_with(ctx, before, 400), "Codex's resume sends the carried image and gets a 400", first)
    request = ctx.provider.model_requests("responses")[-1]["body"]
    sent = request["input"]
    lib.check(json.dumps(sent).count("input_image") == 1, "Codex sent the image once: the last compaction's copy", sent[1:])
    # The rollout now holds what the resume added after the replacement history (its own
    # developer and context messages, the prompt): its preview is the whole request.
    cx.compare_preview(ctx, session, request)
    before = len(ctx.provider.model_requests())
    again = cx.resume(ctx, env, sid)
    lib.check(cx.failed_with(ctx, before, 400), "and so does its next resume", again)
    own = ctx.provider.model_requests("responses")[before:]
    kept = session.read_bytes()

    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] and d["failure"]["class"] == "media_rejected", "diagnose: stuck, media_rejected", r)
    refs = [s["ref"] for s in d["suspects"]]
    lib.check(refs == ["L40.1"], "the one suspect is the image the last compaction carries (line 40)", r)
    x = ctx.sb.doctor("exclude", session, "--suspects")
    lib.check(x.code == 0, "exclude --suspects lands", x)
    rep = ctx.sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    before = len(ctx.provider.model_requests())
    fixed = cx.resume(ctx, env, cx.resume_id(copy))
    lib.check(fixed.code == 0 and cx.failed_with(ctx, before, 200), "`codex exec resume <new id> continue` gets a 200", fixed)
    sent = ctx.provider.model_requests("responses")[before]["body"]["input"]
    lib.check("input_image" not in json.dumps(sent), "the copy's resume sends no image", sent[1:])
    _, diffs = cx.preview_differences(ctx, copy["out"], ctx.provider.model_requests("responses")[before]["body"], reply=1)
    lib.rescued(ctx.sb, own, session, kept, copy["out"], diffs)
