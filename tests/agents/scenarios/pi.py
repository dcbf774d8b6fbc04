"""pi (@mariozechner/pi-coding-agent) against the fake provider's Anthropic Messages API.

pi is pointed at the provider by ``~/.pi/agent/models.json``
(``{"providers": {"anthropic": {"baseUrl": URL}}}``; the Anthropic SDK adds
``/v1/messages`` itself), ``ANTHROPIC_API_KEY`` and ``PI_OFFLINE=1``; it runs
headless with ``-p PROMPT`` and resumes with ``--session PATH``. Its read tool
is ``read{path}``. With ``images.autoResize`` on (the default) it decodes an
image before sending it and drops one it cannot decode; with it off it sends
the file's bytes as they are.
"""

import base64
import json
import os
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import lib
import request_diff
from fake import media
from lib import check

MODEL = "claude-sonnet-4-5"
ENV = {"ANTHROPIC_API_KEY": "sk-ant-suite", "PI_OFFLINE": "1"}


def setup(ctx, auto_resize=True):
    agent = ctx.sb.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": ctx.provider.url}}}))
    if not auto_resize:
        (agent / "settings.json").write_text(json.dumps({"images": {"autoResize": False}}))


def sessions(ctx):
    return sorted((ctx.sb.home / ".pi" / "agent" / "sessions").glob("*/*.jsonl"))


def first_run(ctx, prompt):
    r = ctx.sb.run([ctx.exe, "--provider", "anthropic", "--model", MODEL, "-p", prompt], env=ENV)
    found = sessions(ctx)
    check(len(found) == 1, "pi wrote one session file", r, found)
    return r, found[0]


def resume(ctx, session, prompt="continue"):
    return ctx.sb.run([ctx.exe, "--session", session, "-p", prompt], env=ENV)


def resume_printed(ctx, command, prompt="continue"):
    """Runs the resume command `repair` printed, with pi's headless flag."""
    argv = shlex.split(command)
    check(argv[:2] == ["pi", "--session"] and len(argv) == 3, "repair prints `pi --session PATH`", command)
    return ctx.sb.run([ctx.exe, *argv[1:], "-p", prompt], env=ENV)


def last_request(ctx):
    return ctx.provider.model_requests("anthropic")[-1]


def check_preview_is_sent(ctx, previewed, summary, sent):
    """The preview is the request pi sent on resume, less the resume prompt it adds.

    Message by message, with no normalisation: pi's `cache_control` lands on
    the resume prompt, which is not compared. What pi sends besides the
    history (system prompt, tools) must be named by preview as not in the session.
    """
    body = sent["body"]
    diffs = _differences(previewed, sent)
    check(not diffs, "preview equals the messages pi sent (%d difference(s))" % len(diffs), "\n".join(diffs))
    check(previewed.get("model") == body.get("model"), "preview names the model pi sent", previewed.get("model"), body.get("model"))
    absent = summary.get("not_in_session") or []
    for key, what in (("system", "system prompt"), ("tools", "tool list")):
        if body.get(key):
            check(any(what in a for a in absent), "preview names the %s as not in the session" % what, summary)


def _differences(previewed, sent, prompt="continue"):
    """preview's messages against those pi sent, exactly (its resume prompt,
    which carries pi's cache mark, aside)."""
    want = request_diff.resume_tail(sent["body"]["messages"], prompt, request_diff.anthropic)
    return request_diff.items(previewed["messages"], want)


def rescue_resumed(ctx, own, session, kept, copy, prompt="continue"):
    """The copy previewed, then resumed as repair printed it with a 200, and
    the four things of a rescue checked (lib.rescued); the request it sent."""
    previewed, _ = lib.preview(ctx.sb, copy["out"])
    n = len(ctx.provider.model_requests("anthropic"))
    r = resume_printed(ctx, copy["resume"], prompt)
    sent = ctx.provider.model_requests("anthropic")[n:]
    check(r.code == 0 and sent and all(e["status"] == 200 for e in sent), "pi resumes the repaired copy with a 200", r, [e["status"] for e in sent])
    lib.rescued(ctx.sb, own, session, kept, copy["out"], _differences(previewed, sent[0], prompt))
    return sent[0]


def preview_then_resume(ctx, session, fixture=None, prompt="continue"):
    """Previews `session`, resumes it with pi, and checks the preview was the request.

    With ``$SD_FIXTURES`` set, the session as previewed and the messages pi
    sent are written there as ``<fixture>.jsonl`` and ``<fixture>.sent.json``
    (how tests/data/agents/pi/ was made). Returns pi's run.
    """
    before = Path(session).read_bytes()
    previewed, summary = lib.preview(ctx.sb, session)
    n = len(ctx.provider.model_requests("anthropic"))
    r = resume(ctx, session, prompt)
    # The requests of this resume only (a Result carries them for lib.rescued).
    r.requests = ctx.provider.model_requests("anthropic")[n:]
    check(r.requests, "pi's resume sent a request", r)
    sent = r.requests[0]
    check_preview_is_sent(ctx, previewed, summary, sent)
    out = os.environ.get("SD_FIXTURES")
    if out and fixture:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / (fixture + ".jsonl")).write_bytes(before)
        (Path(out) / (fixture + ".sent.json")).write_text(json.dumps({"status": sent["status"], "messages": sent["body"]["messages"]}, indent=1) + "\n")
    return r


def check_named(d):
    """The provider's block path leads to the prime suspect (not to a guess)."""
    prime = [x for x in d["suspects"] if x.get("prime")]
    check(prime and prime[0].get("named") is True, "the provider's block path names the prime suspect", d["suspects"], d["notes"])
    check(not any("holds no attachment" in n for n in d["notes"]), "no note says the named block is empty", d["notes"])


def tool_results(session):
    out = []
    for line in Path(session).read_text().splitlines():
        m = json.loads(line).get("message") or {}
        if m.get("role") == "toolResult":
            out.append(m)
    return out


# ------------------------------------------------------------------ scenarios


def scenario_cut_png_auto_resize_refuses(ctx):
    """Default settings: pi decodes the cut PNG itself and sends a note instead."""
    setup(ctx)
    (ctx.sb.work / "shot.png").write_bytes(lib.cut_png())
    ctx.provider.settings.tool = ("read", {"path": "shot.png"})
    r, session = first_run(ctx, "READ-THE-FILE shot.png")
    check(r.code == 0, "pi answers", r)
    results = tool_results(session)
    check(results and "[Image omitted: could not be resized" in results[0]["content"][0]["text"], "pi wrote its own note", results)
    check(all(b["type"] != "image" for m in results for b in m["content"]), "pi kept no image bytes")
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is False and rd.code == 0, "diagnose does not call pi's refusal stuck", rd)
    before = Path(session).read_bytes()
    out = ctx.sb.root / "copy"
    out.mkdir()
    # Nothing to repair: --force writes the copy anyway, to show it keeps pi's note.
    rep = ctx.sb.doctor("repair", session, "--out", out, "--json", "--force")
    check(rep.code == 0, "repair writes a copy", rep)
    copy = Path(rep.json()["out"])
    check("[Image omitted: could not be resized" in copy.read_text(), "the copy keeps pi's note (the refusal is not undone)")
    check(Path(session).read_bytes() == before, "the original session is byte-identical")
    r2 = preview_then_resume(ctx, session, "auto-resize-refused")
    check(r2.code == 0, "pi resumes its own session with a 200", r2)


def scenario_cut_png_stuck_without_auto_resize(ctx):
    """images.autoResize false: pi sends the cut PNG, on every run, until it is excluded."""
    setup(ctx, auto_resize=False)
    (ctx.sb.work / "shot.png").write_bytes(lib.cut_png())
    ctx.provider.settings.tool = ("read", {"path": "shot.png"})
    r, session = first_run(ctx, "READ-THE-FILE shot.png")
    check(r.code != 0 and "Could not process image" in r.stderr, "the first run fails on the image", r)
    r = preview_then_resume(ctx, session, "cut-png-stuck")
    check(r.code != 0 and "Could not process image" in r.stderr, "pi's own resume fails the same way", r)
    own = r.requests
    kept = Path(session).read_bytes()

    d, copy = lib.rescue_steps(ctx.sb, session, "media_rejected", session.parent)
    prime = [s for s in d["suspects"] if s.get("prime")]
    check(len(prime) == 1 and prime[0].get("name") == "shot.png", "the prime suspect is shot.png", d)
    check_named(d)
    rescue_resumed(ctx, own, session, kept, copy)
    r = preview_then_resume(ctx, Path(copy["out"]), "cut-png-repaired")
    check(r.code == 0, "pi resumes the copy again", r)
    rd, d = lib.diagnose(ctx.sb, copy["out"])
    check(d["stuck"] is False, "diagnose on the resumed copy says not stuck", rd)


def scenario_cut_png_after_consecutive_user_turns(ctx):
    """pi keeps consecutive user turns apart: the provider's messages.N counts them one by one."""
    setup(ctx, auto_resize=False)
    (ctx.sb.work / "shot.png").write_bytes(lib.cut_png())
    ctx.provider.settings.tool = ("read", {"path": "shot.png"})
    # The first request fails for another reason (a bad key, fixed since): pi skips its
    # error record, so the next request holds two user turns in a row.
    bad_key = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    ctx.provider.settings.fail_next = [(401, bad_key)]
    r, session = first_run(ctx, "hello")
    check(r.code != 0, "the first run fails on the key", r)
    r = resume(ctx, session, "READ-THE-FILE shot.png")
    check(r.code != 0 and "messages.3.content.0.content.1" in r.stderr, "the image is blamed at messages.3", r)
    r = preview_then_resume(ctx, session, "consecutive-users")
    check(r.code != 0 and "Could not process image" in r.stderr, "pi's own resume fails the same way", r)
    own, kept = r.requests, Path(session).read_bytes()
    d, copy = lib.rescue_steps(ctx.sb, session, "media_rejected", session.parent)
    check_named(d)
    rescue_resumed(ctx, own, session, kept, copy)


def scenario_cut_pdf_read_as_text(ctx):
    """pi's read tool attaches images only: a PDF's bytes are never sent as a document."""
    setup(ctx, auto_resize=False)
    (ctx.sb.work / "paper.pdf").write_bytes(lib.cut_pdf())
    ctx.provider.settings.tool = ("read", {"path": "paper.pdf"})
    r, session = first_run(ctx, "READ-THE-FILE paper.pdf")
    check(r.code == 0, "pi answers: the PDF went as text", r)
    sent = json.dumps(ctx.provider.model_requests("anthropic")[-1]["body"]["messages"])
    check('"document"' not in sent and "%PDF-1.4" in sent, "the PDF was read as text, not attached", sent[:2000])
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is False and not d["suspects"], "diagnose: healthy, no attachment to suspect", rd)
    r = preview_then_resume(ctx, session, "cut-pdf-as-text")
    check(r.code == 0, "pi resumes", r)


def scenario_too_many_images(ctx):
    """Three reads of valid images against a provider that takes two per request."""
    setup(ctx, auto_resize=False)
    ctx.provider.settings.max_images = 2
    for name, colour in (("a.png", (255, 0, 0)), ("b.png", (0, 255, 0)), ("c.png", (0, 0, 255))):
        (ctx.sb.work / name).write_bytes(lib.png(8, 8, colour))
    ctx.provider.settings.tool = ("read", {"path": "a.png"})
    r, session = first_run(ctx, "READ-THE-FILE a.png")
    check(r.code == 0, "the first image goes through", r)
    ctx.provider.settings.tool = ("read", {"path": "b.png"})
    r = resume(ctx, session, "READ-THE-FILE b.png")
    check(r.code == 0, "the second image goes through", r)
    ctx.provider.settings.tool = ("read", {"path": "c.png"})
    r = resume(ctx, session, "READ-THE-FILE c.png")
    check(r.code != 0 and "too many images and documents" in r.stderr, "the third image is one too many", r)
    r = preview_then_resume(ctx, session, "too-many-images")
    check(r.code != 0 and "too many images and documents" in r.stderr, "pi's own resume fails the same way", r)
    own, kept = r.requests, Path(session).read_bytes()
    rd, d = lib.diagnose(ctx.sb, session)
    check(any("--max-images 2" in n for n in d["next"]), "diagnose's next commands use --max-images 2 (the limit in the message)", rd)
    capped, _ = lib.preview(ctx.sb, session, "--max-images", "2")
    _, copy = lib.rescue_steps(ctx.sb, session, "image_limit", session.parent, "--max-images", "2")
    of_copy, _ = lib.preview(ctx.sb, copy["out"])
    diffs = request_diff.items(capped["messages"], of_copy["messages"])
    check(not diffs, "preview --max-images 2 of the original is the preview of the copy", *diffs)
    sent = rescue_resumed(ctx, own, session, kept, copy)
    check(len([b for m in sent["body"]["messages"] if isinstance(m["content"], list) for b in m["content"] for b in [b, *(b.get("content") or [] if isinstance(b.get("content"), list) else [])] if b.get("type") == "image"]) == 2, "the copy sends two images")


def scenario_many_image_rule_fitted(ctx):
    """21 screenshots 2100 px wide, read in one turn: past 20 images Anthropic
    takes no side over 2000 px, so the run and pi's own resume are refused;
    `repair --fit` fits every one to 2000 px, keeps all 21, and the copy resumes."""
    setup(ctx, auto_resize=False)
    names = ["shot-%02d.png" % i for i in range(21)]
    for i, name in enumerate(names):
        (ctx.sb.work / name).write_bytes(lib.png(2100, 6, (10 * i, 80, 160)))
    ctx.provider.settings.tool = ("read", {"path": names[0]})
    ctx.provider.settings.more_tools = [("read", {"path": n}) for n in names[1:]]
    r, session = first_run(ctx, "READ-THE-FILE every shot")
    check(r.code != 0 and "many-image requests" in r.stderr, "21 images 2100 px wide are refused in one request", r)
    ctx.provider.settings.tool, ctx.provider.settings.more_tools = None, []
    r = preview_then_resume(ctx, session, "many-image-rule")
    check(r.code != 0 and "many-image requests" in r.stderr, "pi's own resume is refused the same way", r)
    own, kept = r.requests, Path(session).read_bytes()
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is True and rd.code == 1, "diagnose calls the session stuck", rd)
    check(any("--fit" in n for n in d["next"]), "diagnose offers --fit for images that are valid but too wide for 21", rd)
    check(not any("exclude" in n for n in d["next"]), "diagnose leaves no valid screenshot out", rd)
    out = ctx.sb.root / "fitted"
    out.mkdir()
    rep = ctx.sb.doctor("repair", session, "--fit", "--out", out, "--json")
    check(rep.code == 0 and len(rep.json()["changes"]["fitted"]) == 21, "repair --fit fits all 21 screenshots", rep)
    copy = rep.json()
    sent = rescue_resumed(ctx, own, session, kept, copy)
    sides = [media.dimensions(base64.b64decode(b["source"]["data"])) for m in sent["body"]["messages"] if isinstance(m["content"], list) for c in m["content"] for b in (c.get("content") if isinstance(c.get("content"), list) else [c]) if b.get("type") == "image"]
    check(len(sides) == 21 and all(max(s) <= 2000 for s in sides), "the copy sends all 21 images, none wider than 2000 px", sides)


def scenario_text_only_route(ctx):
    """A valid image read on a model that takes images, then the session sent on to a
    route that takes none (Copilot's proxy after a switch to Grok answers "image media
    type not supported", microsoft/vscode#263970): every run fails while the history
    holds an image; the `--max-images 0` copy carries a note in its place and resumes."""
    setup(ctx)
    (ctx.sb.work / "shot.png").write_bytes(lib.png(8, 8, (255, 0, 0)))
    ctx.provider.settings.tool = ("read", {"path": "shot.png"})
    r, session = first_run(ctx, "READ-THE-FILE shot.png")
    check(r.code == 0 and last_request(ctx)["status"] == 200, "the model that takes images answers", r)
    ctx.provider.settings.no_images = "copilot"
    r = resume(ctx, session)
    check(r.code != 0 and "image media type not supported" in r.stderr, "the route refuses the valid image", r)
    r = preview_then_resume(ctx, session, "text-only-route")
    check(r.code != 0 and "image media type not supported" in r.stderr, "pi's own resume fails the same way", r)
    own, kept = r.requests, Path(session).read_bytes()
    rd, d = lib.diagnose(ctx.sb, session)
    f = d["failure"] or {}
    check(f.get("class") == "image_limit" and f.get("limit") == 0, "diagnose: a route that takes no images (image_limit, limit 0)", rd)
    check(any(n.endswith("--max-images 0") and "repair" in n for n in d["next"]), "diagnose offers repair --max-images 0", d["next"])
    check(not any("exclude" in n for n in d["next"]), "no exclusion of the valid image is offered", d["next"])
    check(any("takes no images" in n and MODEL in n for n in d["notes"]), "diagnose says which model refused", d["notes"])
    capped, _ = lib.preview(ctx.sb, session, "--max-images", "0")
    check("image" not in json.dumps([b.get("type") for m in capped["messages"] if isinstance(m["content"], list) for b in m["content"]]), "preview --max-images 0 sends no image", capped)
    _, copy = lib.rescue_steps(ctx.sb, session, "image_limit", session.parent, "--max-images", "0")
    of_copy, _ = lib.preview(ctx.sb, copy["out"])
    diffs = request_diff.items(capped["messages"], of_copy["messages"])
    check(not diffs, "preview --max-images 0 of the original is the preview of the copy", *diffs)
    rescue_resumed(ctx, own, session, kept, copy)


def compact_rpc(ctx, session):
    """pi's own `/compact`, headless: `pi --mode rpc` told `{"type": "compact"}` on
    stdin (`/compact` is its interactive mode's: `-p /compact` would be sent as a
    prompt). Returns pi's response to it.
    stdin is closed only after the response: pi shuts down at once on its end."""
    argv = [str(ctx.exe), "--mode", "rpc", "--session", str(session)]
    # stderr to a file: a pipe nobody reads could fill and stall pi.
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(argv, cwd=str(ctx.sb.work), env=dict(ctx.sb.env, **ENV), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
    # A pi that never answers is killed, which ends the read below.
    timer = threading.Timer(lib.AGENT_TIMEOUT, proc.kill)
    timer.start()
    try:
        proc.stdin.write(json.dumps({"id": "c1", "type": "compact"}) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("type") == "response" and event.get("id") == "c1":
                return event
        raise lib.Failed("pi ended (or was killed after %ss) without answering the compact command\n%s" % (lib.AGENT_TIMEOUT, _tail(err)))
    finally:
        timer.cancel()
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err.close()


def _tail(f):
    f.seek(0)
    return f.read()[-2000:]


def scenario_text_only_route_compacted_away(ctx):
    """A valid PNG read on a route that takes no images (OpenRouter's 404 "No
    endpoints found that support image input"): the run and pi's own resume fail,
    and diagnose says stuck. Then pi's own `/compact` (keepRecentTokens 1): its
    summary request serialises the history as text, so it gets a 200, and the
    image lies before `firstKeptEntryId`, while the refusal of the resume is kept.
    The last recorded failure is still the route's refusal, but the next request
    carries no image: diagnose says not stuck and offers no `--max-images 0`
    (before, it said stuck and offered it, and that repair refused), and pi's own
    resume gets a 200, as previewed."""
    setup(ctx)
    agent = ctx.sb.home / ".pi" / "agent"
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    (ctx.sb.work / "shot.png").write_bytes(lib.png(8, 8, (255, 0, 0)))
    ctx.provider.settings.tool = ("read", {"path": "shot.png"})
    ctx.provider.settings.no_images = "openrouter"
    r, session = first_run(ctx, "READ-THE-FILE shot.png")
    ctx.provider.settings.tool = None
    sent = ctx.provider.model_requests("anthropic")
    check(r.code != 0 and [e["status"] for e in sent] == [200, 404], "the tool call, then a 404 for the request with the image", r, [e["status"] for e in sent])
    n = len(sent)
    r = resume(ctx, session)
    own = ctx.provider.model_requests("anthropic")[n:]
    check(r.code != 0 and own and all(e["status"] == 404 for e in own), "pi's own resume is refused the same way", r, [e["status"] for e in own])
    rd, d = lib.diagnose(ctx.sb, session)
    f = d["failure"] or {}
    check(rd.code == 1 and d["stuck"] is True and f.get("class") == "image_limit" and f.get("limit") == 0, "diagnose: stuck, a route that takes no images", rd)
    n = len(ctx.provider.model_requests("anthropic"))
    answer = compact_rpc(ctx, session)
    check(answer.get("success") is True, "pi compacts the session", answer)
    summaries = ctx.provider.model_requests("anthropic")[n:]
    check(summaries and all(e["status"] == 200 for e in summaries), "its summary requests get a 200: they carry no image", [e["status"] for e in summaries])
    records = [json.loads(l) for l in session.read_text().splitlines() if l.strip()]
    check(records[-1]["type"] == "compaction", "pi appended a compaction entry", records[-1])
    ids = [e.get("id") for e in records]
    kept = ids.index(records[-1]["firstKeptEntryId"])
    image = next(i for i, e in enumerate(records) if e.get("message", {}).get("role") == "toolResult")
    failed = [i for i, e in enumerate(records) if e.get("message", {}).get("stopReason") == "error"]
    check(image < kept <= failed[-1], "the image lies before the kept entries, the last refusal among them", image, kept, failed)
    rd, d = lib.diagnose(ctx.sb, session)
    f = d["failure"] or {}
    check(f.get("class") == "image_limit" and f.get("limit") == 0, "the recorded failure is still the route's refusal", rd)
    check(rd.code == 0 and d["stuck"] is False, "diagnose: not stuck", rd)
    check(d["verdict"] == "not stuck: the model or route takes no images, and the next request carries none", "diagnose says why", d["verdict"])
    check(not any("--max-images" in c for c in d["next"]), "no --max-images 0 is offered", d["next"])
    r = preview_then_resume(ctx, session)
    check(r.code == 0 and all(e["status"] == 200 for e in r.requests), "pi's own resume gets a 200: not stuck, truly", r, [e["status"] for e in r.requests])
    check("image" not in json.dumps([b.get("type") for m in r.requests[0]["body"]["messages"] if isinstance(m["content"], list) for b in m["content"]]), "and sends no image", r.requests[0]["body"]["messages"])


def scenario_damaged_lines_salvaged(ctx):
    """A session whose prompt record is split by a raw newline inside its text and
    whose first two records after the header are glued on one line (`}{`): pi
    skips both lines and loses the prompt; the repaired copy rejoins and splits
    them, and pi's resume of it sends the prompt, with a 200."""
    setup(ctx)
    r, session = first_run(ctx, "remember PELICAN for later")
    check(r.code == 0, "pi answers", r)
    lines = Path(session).read_text().splitlines()
    at = next(i for i, l in enumerate(lines) if "remember PELICAN" in l)
    check(at >= 3, "the prompt comes after the header and two records", lines)
    lines[at] = lines[at].replace("remember PELICAN", "remember\nPELICAN", 1)
    lines[1] += lines.pop(2)
    Path(session).write_text("\n".join(lines) + "\n")
    rd, d = lib.diagnose(ctx.sb, session)
    notes = " ".join(d["notes"])
    check("line 2: 2 records glued on one line" in notes and "repair rejoins it" in notes, "diagnose says what repair salvages, with the lines", d["notes"])
    before = Path(session).read_bytes()
    out = ctx.sb.root / "copy"
    out.mkdir()
    rep = ctx.sb.doctor("repair", session, "--out", out, "--json")
    check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    check(len(copy.get("salvaged", [])) == 2 and not copy["dropped"], "repair salvaged both, left nothing out", copy)
    check(Path(session).read_bytes() == before, "the original session is byte-identical")
    r = resume(ctx, session)
    check("PELICAN" not in json.dumps(last_request(ctx)["body"]["messages"]), "pi's own resume of the damaged session loses the prompt", last_request(ctx)["body"]["messages"])
    previewed, _ = lib.preview(ctx.sb, copy["out"])
    r = resume_printed(ctx, copy["resume"])
    sent = last_request(ctx)
    check(r.code == 0 and sent["status"] == 200, "pi resumes the salvaged copy with a 200", r)
    check("remember\\nPELICAN" in json.dumps(sent["body"]["messages"][0]), "what pi sends holds the rejoined prompt", sent["body"]["messages"][:1])
    diffs = _differences(previewed, sent)
    check(not diffs, "preview of the copy equals what pi sent", "\n".join(diffs))


def killed_mid_tool(ctx):
    """Runs pi until its bash call is under way, SIGKILLs it; the session."""
    proc = lib.spawn(ctx.sb, [ctx.exe, "--provider", "anthropic", "--model", MODEL, "-p", "READ-THE-FILE and wait"], env=ENV)
    deadline = time.time() + lib.AGENT_TIMEOUT
    session = None
    while time.time() < deadline and proc.poll() is None:
        found = sessions(ctx)
        if found and '"toolCall"' in found[0].read_text():
            session = found[0]
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    check(session is not None, "pi wrote the tool call before it was killed")
    check(not tool_results(session), "the call has no result in the session")
    return session


def scenario_killed_mid_tool(ctx):
    """SIGKILL while a bash call runs: pi answers the orphaned call itself on resume."""
    setup(ctx)
    ctx.provider.settings.tool = ("bash", {"command": "sleep 60"})
    session = killed_mid_tool(ctx)
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is False and rd.code == 0, "diagnose: pi mends the orphaned call itself, not stuck", rd)
    check(any("call" in n for n in d.get("notes", [])), "diagnose notes the unanswered call", rd)
    r = preview_then_resume(ctx, session, "killed-mid-tool")
    check(r.code == 0 and last_request(ctx)["status"] == 200, "pi resumes with a 200", r)


def scenario_killed_mid_tool_then_a_user_turn(ctx):
    """The orphaned call followed by a user turn (a resume refused for a bad key):
    pi still answers the call itself, so the history is not broken."""
    setup(ctx)
    ctx.provider.settings.tool = ("bash", {"command": "sleep 60"})
    session = killed_mid_tool(ctx)
    bad_key = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    ctx.provider.settings.fail_next = [(401, bad_key)]
    r = resume(ctx, session)
    check(r.code != 0 and "invalid x-api-key" in r.stderr, "the resume is refused for the key", r)
    sent = last_request(ctx)["body"]["messages"]
    check(any(b.get("content") == "No result provided" for m in sent if isinstance(m["content"], list) for b in m["content"]), "pi answered the call itself", sent)
    rd, d = lib.diagnose(ctx.sb, session)
    check(not d["history"], "diagnose reports no broken history: pi pairs the call itself", rd)
    check(d["failure"] is None or d["failure"]["class"] != "history_invalid", "the failure is not called history_invalid", rd)
    r = preview_then_resume(ctx, session, "killed-then-user-turn")
    check(r.code == 0 and last_request(ctx)["status"] == 200, "pi resumes with a 200 once the key is right", r)


def setup_openai(ctx):
    agent = ctx.sb.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"openai": {"baseUrl": ctx.provider.url + "/v1"}}}))
    # pi sends `store: false` and replays each reasoning item whole, `rs_` id included.
    ctx.provider.settings.emit_reasoning = True
    ctx.provider.settings.reject_replayed_reasoning = True


OPENAI = {"OPENAI_API_KEY": "sk-suite", "PI_OFFLINE": "1"}


def replayed_reasoning_session(ctx):
    r = ctx.sb.run([ctx.exe, "--provider", "openai", "--model", "gpt-5-mini", "-p", "hello"], env=OPENAI)
    check(r.code == 0, "the first run gets a 200 (its reasoning is new)", r)
    session = sessions(ctx)[0]
    check("rs_" in session.read_text(), "pi kept the reasoning item, rs_ id included, in thinkingSignature")
    r = ctx.sb.run([ctx.exe, "--session", session, "-p", "continue"], env=OPENAI)
    check(r.code != 0 and "not found" in r.stderr, "pi's resume replays the rs_ id: 404", r)
    return session


def scenario_replayed_reasoning_openai(ctx):
    """pi on the Responses API: the replayed rs_ id is refused under store:false on every resume."""
    setup_openai(ctx)
    session = replayed_reasoning_session(ctx)
    n = len(ctx.provider.model_requests("responses"))
    r = ctx.sb.run([ctx.exe, "--session", session, "-p", "continue"], env=OPENAI)
    own = ctx.provider.model_requests("responses")[n:]
    check(r.code != 0 and "not found" in r.stderr, "and again: stuck", r)
    kept = session.read_bytes()
    rd, d = lib.diagnose(ctx.sb, session)
    check(any("--drop-reasoning-ids" in n for n in d["next"]), "diagnose points at --drop-reasoning-ids", rd)
    d, copy = lib.rescue_steps(ctx.sb, session, "reasoning_rejected", session.parent, "--drop-reasoning-ids")
    check(copy["changes"]["reasoning_ids_dropped"] >= 1 and "rs_" not in Path(copy["out"]).read_text(), "the copy holds no rs_ id", copy)
    previewed, _ = lib.preview(ctx.sb, copy["out"])
    n = len(ctx.provider.model_requests("responses"))
    r = ctx.sb.run([ctx.exe, *shlex.split(copy["resume"])[1:], "-p", "continue"], env=OPENAI)
    sent = ctx.provider.model_requests("responses")[n:]
    check(r.code == 0 and sent and all(e["status"] == 200 for e in sent), "pi resumes the copy with a 200", r)
    # pi's system prompt is its first input item (a developer message); the resume prompt its last.
    want = request_diff.leading(sent[0]["body"]["input"], "role", "developer", "pi's system prompt")
    want = request_diff.resume_tail(want, "continue", request_diff.responses_as_message)
    lib.rescued(ctx.sb, own, session, kept, copy["out"], request_diff.items(previewed["input"], want))


def scenario_preview_openai_responses(ctx):
    """preview of a pi session on the Responses API is the input pi sends."""
    setup_openai(ctx)
    ctx.provider.settings.reject_replayed_reasoning = False
    r = ctx.sb.run([ctx.exe, "--provider", "openai", "--model", "gpt-5-mini", "-p", "hello"], env=OPENAI)
    check(r.code == 0, "pi answers", r)
    session = sessions(ctx)[0]
    before = session.read_bytes()
    previewed, summary = lib.preview(ctx.sb, session)
    r = ctx.sb.run([ctx.exe, "--session", session, "-p", "continue"], env=OPENAI)
    check(r.code == 0, "pi resumes", r)
    sent = ctx.provider.model_requests("responses")[-1]["body"]
    # pi's system prompt is its first input item (a developer message); the resume prompt its last.
    check(sent["input"][0].get("role") == "developer", "pi's first input item is its system prompt", sent["input"][0])
    want = request_diff.leading(sent["input"], "role", "developer", "pi's system prompt")
    diffs = request_diff.items(previewed["input"], request_diff.resume_tail(want, "continue", request_diff.responses_as_message))
    check(not diffs, "preview equals the input pi sent (%d difference(s))" % len(diffs), "\n".join(diffs))
    check(any("system prompt" in a for a in summary.get("not_in_session") or []), "preview names the system prompt as not in the session", summary)
    out = os.environ.get("SD_FIXTURES")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "responses-reasoning.jsonl").write_bytes(before)
        (Path(out) / "responses-reasoning.sent.json").write_text(json.dumps({"status": 200, "input": sent["input"][1:]}, indent=1) + "\n")


def scenario_context_overflow_trimmed(ctx):
    """A read of 40 kB takes the history over the window (the fake's
    `context_tokens`): the request carrying it gets Anthropic's "prompt is too
    long: X tokens > N maximum"; pi's own resume fails too, and so does its own
    compaction on overflow (the output is in the recent tail it keeps, so the
    summary holds nothing and the retry is refused). diagnose says
    context_overflow and offers --fit-context; the trimmed copy resumes with a
    200, the note in place of the output, as previewed."""
    setup(ctx)
    r, hello = first_run(ctx, "hello")
    check(r.code == 0, "a first run measures the request without history", r)
    from fake.provider import tokens_of

    base = max(tokens_of(e["body"]) for e in ctx.provider.model_requests("anthropic"))
    ctx.provider.settings.context_tokens = base + 3000
    hello.unlink()
    (ctx.sb.work / "big.txt").write_text(("%s\n" % ("z" * 49)) * 800)
    ctx.provider.settings.tool = ("read", {"path": "big.txt"})
    since = len(ctx.provider.model_requests())
    r, session = first_run(ctx, "READ-THE-FILE big.txt")
    ctx.provider.settings.tool = None
    got = ctx.provider.model_requests("anthropic")[since:]
    check(got and got[-1]["status"] == 400 and "prompt is too long" in json.dumps(got[-1]["answer"]), "the request carrying the output is refused as over the window", [(e["status"], e["answer"]) for e in got], r)
    before = len(ctx.provider.model_requests("anthropic"))
    r2 = resume(ctx, session)
    own = ctx.provider.model_requests("anthropic")[before:]
    summaries = [e for e in own if "context summarization assistant" in json.dumps(e["body"].get("system"))]
    turns = [e for e in own if e not in summaries]
    check(turns and all(e["status"] == 400 for e in turns), "pi's own resume is refused the same way", [(e["status"], json.dumps(e["answer"])[:200]) for e in own], r2)
    # pi 0.73.1 compacts on overflow, but the bulk is in the recent tail it keeps: the retry is
    # refused too. pi 1.6.0 writes a `context_edit` leaving its failed reply out and asks for no
    # summary (nothing before the tail to summarise): it stays stuck all the same.
    if ctx.agent == "pi":
        check(summaries, "pi's own compaction runs", [(e["status"], json.dumps(e["answer"])[:120]) for e in own])
    check(turns[-1] is own[-1], "pi's own recovery does not help: its last request is refused", [(e["status"], json.dumps(e["answer"])[:120]) for e in own])
    kept = Path(session).read_bytes()
    _, copy = lib.rescue_steps(ctx.sb, session, "context_overflow", session.parent, "--fit-context")
    check(copy["changes"]["elided"], "the copy elides the output", copy["changes"])
    print("    context estimate:", json.dumps(copy["changes"]["context"]))
    sent = rescue_resumed(ctx, own, session, kept, copy)
    check("Tool output omitted to fit the context window" in json.dumps(sent["body"]["messages"]), "the copy sends the note in place of the output")


def scenario_provider_switch_mid_session(ctx):
    """Turn 1 on Anthropic, then `--provider openai` reads a cut PNG: stuck on the
    Responses API, and pi's own resume stays there (it resumes on the model of the
    last assistant message, and a `--provider` switch writes no `model_change`).
    The repaired copy has lost the failed replies that named openai, but its last
    answer is still gpt-5-mini's: its preview is a Responses request, judged by
    OpenAI's rules, and is what pi sends from it (a 200)."""
    setup(ctx, auto_resize=False)
    agent = ctx.sb.home / ".pi" / "agent"
    providers = {"anthropic": {"baseUrl": ctx.provider.url}, "openai": {"baseUrl": ctx.provider.url + "/v1"}}
    (agent / "models.json").write_text(json.dumps({"providers": providers}))
    env = dict(ENV, **OPENAI)
    r = ctx.sb.run([ctx.exe, "--provider", "anthropic", "--model", MODEL, "-p", "hello"], env=env)
    check(r.code == 0 and last_request(ctx)["status"] == 200, "turn 1 on Anthropic gets a 200", r)
    session = sessions(ctx)[0]
    (ctx.sb.work / "shot.png").write_bytes(lib.cut_png())
    ctx.provider.settings.tool = ("read", {"path": "shot.png"})
    r = ctx.sb.run([ctx.exe, "--session", session, "--provider", "openai", "--model", "gpt-5-mini", "-p", "READ-THE-FILE shot.png"], env=env)
    ctx.provider.settings.tool = None
    responses = lambda: ctx.provider.model_requests("responses")
    check(r.code != 0 and responses() and responses()[-1]["status"] == 400, "the cut PNG is refused on the Responses API", r)
    changes = [json.loads(l) for l in session.read_text().splitlines() if '"model_change"' in l]
    check(all(c.get("provider") == "anthropic" for c in changes), "pi wrote no model_change for the switch", changes)
    # With both keys set: without OPENAI_API_KEY pi cannot restore gpt-5-mini and falls back to its default.
    r = ctx.sb.run([ctx.exe, "--session", session, "-p", "continue"], env=env)
    check(r.code != 0 and responses()[-1]["status"] == 400, "pi's own resume stays on openai and is refused", r, ctx.provider.model_requests()[-1]["path"])
    original = session.read_bytes()
    rd, d = lib.diagnose(ctx.sb, session)
    check(d.get("provider") == "openai", "diagnose of the original judges by openai", rd)
    d, copy = lib.rescue_steps(ctx.sb, session, "media_rejected", session.parent)
    out = Path(copy["out"])
    rd, d2 = lib.diagnose(ctx.sb, out)
    check((d2.get("provider"), d2.get("model")) == ("openai", "gpt-5-mini"), "diagnose of the copy judges by openai, gpt-5-mini", rd)
    previewed, summary = lib.preview(ctx.sb, out)
    check("input" in previewed and previewed.get("model") == "gpt-5-mini", "the copy is previewed as a Responses request to gpt-5-mini", previewed.get("model"), list(previewed))
    before = len(ctx.provider.model_requests())
    argv = shlex.split(copy["resume"])
    r = ctx.sb.run([ctx.exe, *argv[1:], "-p", "continue"], env=env)
    sent = ctx.provider.model_requests()[before:]
    check(r.code == 0 and sent and sent[-1]["path"].startswith("/v1/responses") and sent[-1]["status"] == 200, "pi resumes the copy on openai with a 200", r, [(e["path"], e["status"]) for e in sent])
    body = sent[-1]["body"]
    check(body.get("model") == "gpt-5-mini", "pi sent the copy to gpt-5-mini", body.get("model"))
    diffs = lib.message_differences(previewed["input"], body["input"][1:-1])
    check(not diffs, "preview of the copy equals the input pi sent (%d difference(s))" % len(diffs), "\n".join(diffs))
    fixtures = os.environ.get("SD_FIXTURES")
    if fixtures:
        Path(fixtures).mkdir(parents=True, exist_ok=True)
        (Path(fixtures) / "provider-switch.jsonl").write_bytes(original)
        (Path(fixtures) / "provider-switch-repaired.sent.json").write_text(json.dumps({"status": 200, "model": body["model"], "input": body["input"][1:]}, indent=1) + "\n")


def scenario_switch_to_gemini_3_between_prompts(ctx):
    """A read call made on Anthropic, then the session continued on
    gemini-3-pro-preview (`--provider google --model ...`): pi sends the old
    call without a thought signature (it keeps one only from the same model,
    and adds no placeholder), and Gemini 3, which validates the current turn
    only, takes it: the new prompt starts a new turn. So a switch between
    prompts cannot strand a pi session on "Function call is missing a
    thought_signature" (a run's model is fixed when it starts: no switch lands
    inside a turn, but for an auto-retry's continue after a switch during its
    backoff, which a next prompt ends). diagnose: not stuck."""
    agent = ctx.sb.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    providers = {"anthropic": {"baseUrl": ctx.provider.url}, "google": {"baseUrl": ctx.provider.url + "/v1beta"}}
    (agent / "models.json").write_text(json.dumps({"providers": providers}))
    (ctx.sb.work / "notes.txt").write_text("hello notes\n")
    ctx.provider.settings.tool = ("read", {"path": "notes.txt"})
    r, session = first_run(ctx, "READ-THE-FILE notes.txt")
    check(r.code == 0, "the first run on Anthropic reads the file", r)
    check("thoughtSignature" not in session.read_text(), "the Anthropic call carries no thought signature")
    env = dict(ENV, GEMINI_API_KEY="fake-key")
    n = len(ctx.provider.model_requests("gemini"))
    r2 = ctx.sb.run([ctx.exe, "--session", session, "--provider", "google", "--model", "gemini-3-pro-preview", "-p", "continue"], env=env)
    sent = ctx.provider.model_requests("gemini")[n:]
    check(sent and "gemini-3-pro-preview" in sent[0]["path"], "the resume went to gemini-3-pro-preview", [e.get("path") for e in sent])
    calls = [p for c in sent[0]["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    check(calls and not any(p.get("thoughtSignature") or p.get("thought_signature") for p in calls), "pi sends the Anthropic call unsigned, with no placeholder", calls)
    last = sent[0]["body"]["contents"][-1]
    check(last["role"] == "user" and any(p.get("text") == "continue" for p in last["parts"]), "the new prompt ends the request: a new turn", last)
    check(r2.code == 0 and all(e["status"] == 200 for e in sent), "Gemini 3 takes it: the unsigned call is not in the current turn", r2, [(e["status"], e["answer"]) for e in sent][:1])
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is False, "diagnose: not stuck", rd)
