"""Qwen Code (@qwen-code/qwen-code) against the loopback provider.

Pointed at it on its default path, OpenAI-compatible Chat Completions:
``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL``. Headless with
``-p PROMPT --yolo``; resumed with ``--resume <id>``; its managed auto-memory
(``memory.enableManagedAutoMemory``) off in ``~/.qwen/settings.json``. Sessions:
``~/.qwen/projects/<cwd, each non-alphanumeric as ->/chats/<id>.jsonl``.

What it does with media (0.24.4, seen on the wire and read in its source):
its ``read_file`` re-renders every PNG, JPEG and WebP it reads (an "Image
overview" JPEG) and leaves out one it cannot decode, so a cut image never
reaches the provider; and a 400 to a request that carries media is sent once
more with each image and document as a text placeholder, recording neither.
It is stuck for real on media only where the refusal is not a 400: an
OpenRouter route with no endpoint that takes images answers 404.
"""

import json

import lib
import request_diff

VISION = "qwen3-vl-plus"  # image and video, by Qwen Code's own table
PDF_MODEL = "claude-sonnet-4-5"  # image and PDF


def _env(ctx, model):
    return {
        "OPENAI_API_KEY": "fake-key",
        "OPENAI_BASE_URL": ctx.provider.url + "/v1",
        "OPENAI_MODEL": model,
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
    }


def _qwen(ctx, model, *args):
    # After a turn of a resumed session, its managed auto-memory sends the history
    # once more (a subagent's request): off, so each run's requests are its own.
    settings = ctx.sb.home / ".qwen" / "settings.json"
    if not settings.exists():
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"memory": {"enableManagedAutoMemory": False}}))
    return ctx.sb.run([ctx.exe, *args, "--yolo"], env=_env(ctx, model))


def _sessions(ctx):
    return sorted((ctx.sb.home / ".qwen" / "projects").glob("*/chats/*.jsonl"))


def _requests(ctx):
    return ctx.provider.model_requests("chat")


def _read(ctx, name, data):
    path = ctx.sb.work / name
    path.write_bytes(data)
    ctx.provider.settings.tool = ("read_file", {"file_path": str(path)})
    return path


def _differences(previewed, sent):
    """preview's messages against those Qwen Code sent, less what its resume adds."""
    want = request_diff.qwen_code_resume(sent["body"]["messages"], "continue")
    return request_diff.items(previewed["messages"], want, request_diff.chat)


def _names_what_it_adds(summary, sent):
    for key in ("system prompt", "tool list", "startup context"):
        lib.check(any(key in n for n in summary.get("not_in_session", [])), "preview names the %s as not in the session" % key, summary)
    lib.check(sent["body"]["messages"][0]["role"] == "system" and "tools" in sent["body"], "Qwen Code sends a system prompt and tools", list(sent["body"]))


def _has(request, kind):
    return any(isinstance(p, dict) and p.get("type") == kind for m in request["body"]["messages"] for p in (m.get("content") if isinstance(m.get("content"), list) else []))


def _resume_copy(ctx, model, copy):
    lib.check(copy["resume"] == "qwen --resume %s" % copy["id"], "repair prints Qwen Code's resume command", copy)
    n = len(_requests(ctx))
    resumed = _qwen(ctx, model, "-p", "continue", "--resume", copy["id"])
    log = _requests(ctx)[n:]
    lib.check(resumed.code == 0, "Qwen Code resumes the repaired copy", resumed)
    return log


def scenario_image_route_404_is_stuck_and_rescued(ctx):
    """A valid PNG read by read_file, on a route with no endpoint that takes images
    (OpenRouter's 404): Qwen Code retries only a 400 without media, so its run and its
    own resume fail alike, recorded as `ui_telemetry` api_error. diagnose: stuck,
    image_limit; `repair --max-images 0` (its next command) gives a copy, beside the
    original under a new id, that resumes with a 200 and no image, sent as previewed."""
    _read(ctx, "shot.png", lib.png())
    ctx.provider.settings.no_images = "openrouter"
    first = _qwen(ctx, VISION, "-p", "READ-THE-FILE shot.png")
    lib.check(first.code != 0, "the first run fails", first)
    log = _requests(ctx)
    lib.check([r["status"] for r in log] == [200, 404], "the tool call, then a 404 for the request with the image", [r["status"] for r in log])
    lib.check(_has(log[-1], "image_url"), "the refused request carried the image", log[-1]["body"]["messages"][-1])
    sessions = _sessions(ctx)
    lib.check(len(sessions) == 1, "Qwen Code wrote one session", sessions)
    session = sessions[0]
    lib.check("qwen-code.api_error" in session.read_text(), "the failure is recorded as a ui_telemetry api_error")
    previewed, summary = lib.preview(ctx.sb, session)
    n = len(log)
    again = _qwen(ctx, VISION, "-p", "continue", "--resume", session.stem)
    own = _requests(ctx)[n:]
    lib.check(again.code != 0 and own and all(r["status"] == 404 for r in own), "its own resume is refused the same way: stuck for real", again, [r["status"] for r in own])
    # preview of the stuck session is the request its own resume sent, less that resume's prompt.
    _names_what_it_adds(summary, own[-1])
    diffs = _differences(previewed, own[-1])
    lib.check(not diffs, "preview of the stuck session equals what its own resume sent", "\n".join(diffs))
    before = session.read_bytes()
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(r.code == 1 and d["stuck"] is True, "diagnose: stuck", r)
    lib.check(d["failure"]["class"] == "image_limit" and d["failure"]["status"] == 404, "the route takes no images (404)", d["failure"])
    lib.check(any("--max-images 0" in c for c in d["next"]), "the next command caps the images at 0", d["next"])
    rep = ctx.sb.doctor("repair", session, "--max-images", "0", "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    lib.check(copy["out"] == str(session.parent / ("%s.jsonl" % copy["id"])), "the copy sits beside the original, named by its new id", copy)
    lib.check(all(json.loads(l)["sessionId"] == copy["id"] for l in open(copy["out"]) if l.strip()), "every record of the copy names the new session")
    of_copy, _ = lib.preview(ctx.sb, copy["out"])
    log = _resume_copy(ctx, VISION, copy)
    lib.check([q["status"] for q in log] == [200], "the copy resumes with one request, a 200", [q["status"] for q in log])
    lib.check(not _has(log[0], "image_url"), "the copy sends no image", log[0]["body"]["messages"][-3:])
    lib.rescued(ctx.sb, own, session, before, copy["out"], _differences(of_copy, log[0]))


def scenario_cut_pdf_retried_without_media_then_excluded(ctx):
    """A cut PDF read by read_file on a model that takes PDFs: the provider refuses it
    with a 400, and Qwen Code sends the request again with the PDF as a placeholder,
    on its run and on its own resume, recording neither. diagnose: not stuck, and it
    says the answer may be to that retry; scan names the PDF. exclude (the overlay)
    + repair: the copy resumes with one request, a 200, the note in the PDF's place,
    sent as previewed."""
    _read(ctx, "doc.pdf", lib.cut_pdf())
    first = _qwen(ctx, PDF_MODEL, "-p", "READ-THE-FILE doc.pdf")
    lib.check(first.code == 0, "the run answers", first)
    log = _requests(ctx)
    lib.check([r["status"] for r in log] == [200, 400, 200], "the tool call, a 400 for the PDF, and the retry's 200", [r["status"] for r in log])
    lib.check(_has(log[1], "file") and not _has(log[2], "file"), "the retry leaves the PDF out", log[2]["body"]["messages"][-1])
    session = _sessions(ctx)[0]
    lib.check("api_error" not in session.read_text(), "and records neither the refusal nor the retry")
    n = len(log)
    again = _qwen(ctx, PDF_MODEL, "-p", "continue", "--resume", session.stem)
    own = _requests(ctx)[n:]
    lib.check(again.code == 0 and [r["status"] for r in own] == [400, 200], "its own resume sends the PDF again, meets the 400 and retries", [r["status"] for r in own])
    scan = ctx.sb.doctor("scan", session, "--json")
    atts = scan.json()["attachments"]
    lib.check(len(atts) == 1 and atts[0]["verdict"] == "invalid" and atts[0]["mime_declared"] == "application/pdf", "scan names the cut PDF invalid", scan)
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(r.code == 0 and d["stuck"] is False, "diagnose: not stuck", r)
    lib.check("may be to a retry without it" in d["verdict"] and "accepted it" not in d["verdict"], "and it does not claim the model took the PDF", d["verdict"])
    before = session.read_bytes()
    x = ctx.sb.doctor("exclude", session, "--ref", atts[0]["ref"])
    lib.check(x.code == 0, "exclude lands", x)
    lib.check(session.read_bytes() == before, "exclude writes the overlay beside the session, not the session")
    rep = ctx.sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    of_copy, summary = lib.preview(ctx.sb, copy["out"])
    lib.check("Attachment omitted" in json.dumps(of_copy), "the copy's preview carries the note", of_copy["messages"][-1])
    log = _resume_copy(ctx, PDF_MODEL, copy)
    lib.check([q["status"] for q in log] == [200], "one request, a 200: no refusal to retry from", [q["status"] for q in log])
    lib.check(not _has(log[0], "file") and "Attachment omitted" in json.dumps(log[0]["body"]), "the copy sends the note, not the PDF", log[0]["body"]["messages"][-2:])
    _names_what_it_adds(summary, log[0])
    diffs = _differences(of_copy, log[0])
    lib.check(not diffs, "preview of the copy equals what Qwen Code sent for it", "\n".join(diffs))
    lib.check(session.read_bytes() == before, "the original session is byte-identical")
    r2, d2 = lib.diagnose(ctx.sb, copy["out"])
    lib.check(d2["stuck"] is False and r2.code == 0, "diagnose on the copy: not stuck", r2)


def scenario_cut_png_is_never_sent(ctx):
    """A cut PNG read by read_file: Qwen Code cannot decode it to render its overview,
    so it sends a notice instead of the bytes (two 200s, no image). The session holds
    no image: scan lists none, diagnose says healthy, and preview equals the request
    of its resume."""
    _read(ctx, "cut.png", lib.cut_png())
    first = _qwen(ctx, VISION, "-p", "READ-THE-FILE cut.png")
    log = _requests(ctx)
    lib.check(first.code == 0 and [r["status"] for r in log] == [200, 200], "two 200s", first, [r["status"] for r in log])
    lib.check(not any(_has(r, "image_url") for r in log), "no image was sent", log[-1]["body"]["messages"][-1])
    session = _sessions(ctx)[0]
    lib.check("could not be decoded" in session.read_text(), "the tool result says it left the image out")
    scan = ctx.sb.doctor("scan", session, "--json")
    lib.check(scan.code == 0 and scan.json()["attachments"] == [], "scan: no attachment", scan)
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(r.code == 0 and d["stuck"] is False and not d.get("suspects"), "diagnose: healthy, no suspect", r)
    previewed, summary = lib.preview(ctx.sb, session)
    n = len(_requests(ctx))
    again = _qwen(ctx, VISION, "-p", "continue", "--resume", session.stem)
    sent = _requests(ctx)[n:]
    lib.check(again.code == 0 and [q["status"] for q in sent] == [200], "its resume gets a 200", again)
    _names_what_it_adds(summary, sent[0])
    diffs = _differences(previewed, sent[0])
    lib.check(not diffs, "preview equals what Qwen Code sent on resume", "\n".join(diffs))


def scenario_compacted_history_keeps_the_image_and_is_rescued(ctx):
    """A long file read, then a PNG, then Qwen Code's own `/compress`: its
    `chat_compression` record's `compressedHistory` replaces the history and keeps
    the image as a "visual snapshot". On a route that takes no images (404) the
    compacted session is stuck for real (its resume fails); preview, which starts
    at the compaction, is what that resume sent; `repair --max-images 0` gives a
    copy that resumes with a 200, as previewed."""
    big = ctx.sb.work / "big.txt"
    big.write_text("".join("line %d of a long file with words in it\n" % i for i in range(1500)))
    _read(ctx, "shot.png", lib.png())
    ctx.provider.settings.triggers = [("READ-BIG", ("read_file", {"file_path": str(big)}))]
    # Qwen Code compacts only when the usage it was told says the summary is smaller.
    ctx.provider.settings.counted_usage = True
    first = _qwen(ctx, VISION, "-p", "READ-BIG big.txt")
    lib.check(first.code == 0, "the first run answers", first)
    session = _sessions(ctx)[0]
    for prompt in ("READ-THE-FILE shot.png", "/compress"):
        r = _qwen(ctx, VISION, "-p", prompt, "--resume", session.stem)
        lib.check(r.code == 0 or prompt == "/compress", "%s runs" % prompt, r)
    records = [json.loads(l) for l in session.read_text().splitlines() if l.strip()]
    compacted = [r for r in records if r.get("subtype") == "chat_compression"]
    lib.check(len(compacted) == 1, "Qwen Code wrote one chat_compression record", [r.get("subtype") for r in records])
    kept = json.dumps(compacted[0]["systemPayload"]["compressedHistory"])
    lib.check('"inlineData"' in kept, "its compressedHistory keeps the image", kept[:1500])
    scan = ctx.sb.doctor("scan", session, "--json")
    atts = scan.json()["attachments"]
    lib.check(len(atts) == 1 and atts[0]["line"] == records.index(compacted[0]) + 1, "scan lists the image once, in the compaction's line", scan)
    ctx.provider.settings.no_images = "openrouter"
    previewed, _ = lib.preview(ctx.sb, session)
    n = len(_requests(ctx))
    again = _qwen(ctx, VISION, "-p", "continue", "--resume", session.stem)
    own = _requests(ctx)[n:]
    lib.check(again.code != 0 and own and all(r["status"] == 404 for r in own), "its resume on the route is refused: stuck for real", again, [r["status"] for r in own])
    diffs = _differences(previewed, own[-1])
    lib.check(not diffs, "preview of the compacted session equals what its resume sent", "\n".join(diffs))
    before = session.read_bytes()
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(r.code == 1 and d["stuck"] is True and d["failure"]["class"] == "image_limit", "diagnose: stuck, the route takes no images", r)
    rep = ctx.sb.doctor("repair", session, "--max-images", "0", "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    of_copy, _ = lib.preview(ctx.sb, copy["out"])
    log = _resume_copy(ctx, VISION, copy)
    lib.check([q["status"] for q in log] == [200], "the copy resumes with one request, a 200", [q["status"] for q in log])
    lib.check(not _has(log[0], "image_url"), "the copy sends no image", log[0]["body"]["messages"][1:3])
    lib.rescued(ctx.sb, own, session, before, copy["out"], _differences(of_copy, log[0]))
