"""pi with `session-doctor guard install pi`: a broken file is kept out, an oversized one fitted.

With `images.autoResize: false` pi sends what its read tool read, as it is: a
cut PNG leaves the session stuck, a 9000 px screenshot is refused by Anthropic's
8000 px side limit on every request (see pi.py). With the guard's extension
installed the cut PNG is never read, the screenshot reaches the provider as a
fitted copy and is accepted, and the session holds nothing a provider rejects.
"""

import base64
import json

import lib
import request_diff
from fake import media

ENV = {"ANTHROPIC_API_KEY": "sk-ant-test", "PI_OFFLINE": "1"}
MODEL = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]


def _setup(ctx, file, data):
    sb, p = ctx.sb, ctx.provider
    (sb.work / file).write_bytes(data)
    p.settings.tool = ("read", {"path": file})
    agent = sb.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": p.url}}}))
    (agent / "settings.json").write_text(json.dumps({"images": {"autoResize": False}}))
    inst = sb.doctor("guard", "install", "pi")
    lib.check(inst.code == 0 and (agent / "extensions" / "session-doctor-guard.ts").exists(), "guard install pi", inst)


def _run(ctx, prompt):
    return ctx.sb.run([ctx.exe, *MODEL, "-p", prompt], env=ENV)


def _session(sb):
    found = sorted((sb.home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
    lib.check(found, "pi wrote a session file")
    return found[-1]


def _images(requests):
    out = []
    for r in requests:
        for m in r["body"].get("messages", []):
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                for c in b.get("content") if isinstance(b.get("content"), list) else [b]:
                    if c.get("type") == "image":
                        out.append((r["status"], base64.b64decode(c["source"]["data"])))
    return out


def scenario_guard_keeps_a_cut_png_out(ctx):
    _setup(ctx, "cut.png", lib.cut_png())
    run = _run(ctx, "READ-THE-FILE cut.png")
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = ctx.provider.model_requests("anthropic")
    lib.check(all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs])
    lib.check(not _images(reqs), "no request carried the cut PNG")
    r, d = lib.diagnose(ctx.sb, _session(ctx.sb))
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: not stuck", r)


def scenario_guard_fits_an_oversized_screenshot(ctx):
    _setup(ctx, "wide.png", lib.png(9000, 40))
    run = _run(ctx, "READ-THE-FILE wide.png")
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = ctx.provider.model_requests("anthropic")
    lib.check(all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs])
    sent = _images(reqs)
    lib.check(sent, "the screenshot reached the provider")
    dims = {media.dimensions(data) for _, data in sent}
    lib.check(dims == {(8000, 35)}, "it arrived fitted to 8000 px, aspect kept: %s" % dims)
    lib.check(all(media.problem(data) is None for _, data in sent), "the fitted bytes pass the strict provider check")
    r, d = lib.diagnose(ctx.sb, _session(ctx.sb))
    lib.check(d["stuck"] is False, "diagnose: not stuck", r)


def scenario_unguarded_oversized_screenshot_is_refused_on_every_request(ctx):
    """The control for the fit scenario: without the guard the same screenshot sticks."""
    _setup(ctx, "wide.png", lib.png(9000, 40))
    (ctx.sb.home / ".pi" / "agent" / "extensions" / "session-doctor-guard.ts").unlink()
    run = _run(ctx, "READ-THE-FILE wide.png")
    lib.check(run.code != 0, "the unguarded run fails", run)
    n = len(ctx.provider.model_requests("anthropic"))
    resume = ctx.sb.run([ctx.exe, *MODEL, "--session", str(_session(ctx.sb)), "-p", "continue"], env=ENV)
    lib.check(resume.code != 0, "and so does its resume", resume)
    own = ctx.provider.model_requests("anthropic")[n:]
    lib.check(own, "its resume sent a request", resume)
    last = own[-1]
    lib.check(last["status"] == 400 and "exceed max allowed size" in json.dumps(last["answer"]), "Anthropic's side limit refused it", last["answer"])


def scenario_repair_fit_resumes_a_session_stuck_on_an_oversized_screenshot(ctx):
    """No guard: the session sticks on the 9000 px screenshot; `repair --fit` gets it going, image and all."""
    sb, p = ctx.sb, ctx.provider
    _setup(ctx, "wide.png", lib.png(9000, 40))
    (sb.home / ".pi" / "agent" / "extensions" / "session-doctor-guard.ts").unlink()
    run = _run(ctx, "READ-THE-FILE wide.png")
    lib.check(run.code != 0, "the unguarded run fails", run)
    session = _session(sb)
    n = len(p.model_requests("anthropic"))
    own_run = sb.run([ctx.exe, *MODEL, "--session", str(session), "-p", "continue"], env=ENV)
    own = p.model_requests("anthropic")[n:]
    lib.check(own_run.code != 0, "pi's own resume fails too", own_run)
    kept = session.read_bytes()
    r, d = lib.diagnose(sb, session)
    lib.check(d["stuck"] is True and d["failure"]["class"] == "media_rejected", "diagnose: stuck on a media rejection", r)
    lib.check(any("--fit" in n for n in d["next"]), "diagnose offers --fit for a valid but oversized image", r)
    out = sb.root / "repaired"
    out.mkdir()
    rep = sb.doctor("repair", session, "--fit", "--out", out, "--json")
    lib.check(rep.code == 0 and rep.json()["changes"]["fitted"], "repair --fit fitted the screenshot", rep)
    copy = rep.json()["out"]
    previewed, _ = lib.preview(sb, copy)
    before = len(p.model_requests("anthropic"))
    resume = sb.run([ctx.exe, *MODEL, "--session", copy, "-p", "continue"], env=ENV)
    reqs = p.model_requests("anthropic")[before:]
    lib.check(resume.code == 0 and reqs and all(x["status"] == 200 for x in reqs), "the repaired copy resumes with a 200", resume, *[x["answer"] for x in reqs])
    dims = {media.dimensions(data) for _, data in _images(reqs)}
    lib.check(dims == {(8000, 35)}, "the model sees the fitted screenshot: %s" % dims)
    want = request_diff.resume_tail(reqs[0]["body"]["messages"], "continue", request_diff.anthropic)
    lib.rescued(sb, own, session, kept, copy, request_diff.items(previewed["messages"], want))
