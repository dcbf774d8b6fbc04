"""GitHub Copilot CLI (@github/copilot) against the loopback provider.

Pointed at it in custom-provider (BYOK) mode: ``COPILOT_OFFLINE=true``,
``COPILOT_PROVIDER_BASE_URL``, ``COPILOT_PROVIDER_TYPE=anthropic``,
``COPILOT_PROVIDER_API_KEY``. Headless with ``-p PROMPT --allow-all-tools``;
resumed with ``--resume=<id>``. Sessions:
``$COPILOT_HOME/session-state/<id>/events.jsonl`` (default ``~/.copilot``).
The npm package is a launcher for a native binary that unpacks its bundle
(~235 MB) under ``$XDG_CACHE_HOME/copilot`` on first start: the suite points
that at one folder in the agents cache, not at each sandbox.
"""

import json
import os
import signal
import time
from pathlib import Path

import lib
import request_diff

MODEL = "claude-sonnet-4.5"
# The text the CLI sends in place of images after a provider refused them.
OMITTED = "<image attachment omitted from this request because the model rejected image input>"


def _env(ctx):
    return {
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": ctx.provider.url + "/",
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": "fake-key",
        "XDG_CACHE_HOME": str(lib.cache_dir() / "copilot-unpacked"),
    }


def _copilot(ctx, *args):
    return ctx.sb.run([ctx.exe, *args, "--allow-all-tools", "--model", MODEL], env=_env(ctx))


def _state(ctx):
    return ctx.sb.home / ".copilot" / "session-state"


def _sessions(ctx):
    return sorted(p for p in _state(ctx).glob("*/events.jsonl"))


def _events(path):
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def _requests(ctx):
    return ctx.provider.model_requests("anthropic")


def _has_image(request):
    return '"type": "image"' in json.dumps(request["body"])


def _differences(previewed, sent):
    """preview's messages against those the CLI sent, less the prompt its resume adds."""
    want = request_diff.resume_tail(sent["body"]["messages"], request_diff.copilot_prompt("continue"), request_diff.anthropic)
    return request_diff.items(previewed["messages"], want, request_diff.anthropic)


def _preview_matches(previewed, sent):
    """preview's messages (taken before the resume) equal those of the request the
    CLI sent on resume, but for the new prompt it ends with."""
    body, summary = previewed
    diffs = _differences(body, sent)
    lib.check(not diffs, "preview equals what the CLI sent, message by message", "\n".join(diffs))
    for key in ("system prompt", "tool list"):
        lib.check(any(key in n for n in summary.get("not_in_session", [])), "preview names the %s as not in the session" % key, summary)
    lib.check("system" in sent["body"] and "tools" in sent["body"], "the CLI sends a system prompt and tools", list(sent["body"]))


def _attach_cut_png(ctx):
    """A prompt with a cut PNG attached: the provider refuses it, the CLI retries without."""
    (ctx.sb.work / "cut.png").write_bytes(lib.cut_png())
    first = _copilot(ctx, "-p", "hello", "--attachment", "cut.png")
    lib.check(first.code == 0, "the CLI answers the prompt", first)
    log = _requests(ctx)
    lib.check([r["status"] for r in log] == [400, 200], "a 400 for the request with the image, then a 200", [r["status"] for r in log])
    lib.check(_has_image(log[0]) and not _has_image(log[1]), "the retry leaves the image out", log[1]["body"]["messages"][0])
    lib.check(OMITTED in json.dumps(log[1]["body"]), "with the CLI's own placeholder", log[1]["body"]["messages"][0])
    sessions = _sessions(ctx)
    lib.check(len(sessions) == 1, "the CLI wrote one session", sessions)
    return sessions[0]


def scenario_cut_png_attachment_heals_itself(ctx):
    """The CLI is never stuck on a refused attachment: it retries without images, on
    its first run and on its own resume (where it sends the image again). diagnose
    agrees (not stuck) and still names the broken file; exclude + repair stop the
    wasted 400: the repaired copy resumes with one request, a 200, and no image."""
    session = _attach_cut_png(ctx)
    sid = session.parent.name
    previewed = lib.preview(ctx.sb, session)
    again = _copilot(ctx, "-p", "continue", "--resume=" + sid)
    lib.check(again.code == 0, "the CLI's own resume answers", again)
    log = _requests(ctx)
    lib.check([r["status"] for r in log[2:]] == [400, 200], "the resume sends the image again, meets the 400 and retries", [r["status"] for r in log])
    _preview_matches(previewed, log[2])

    scan = ctx.sb.doctor("scan", session, "--json")
    atts = scan.json()["attachments"]
    lib.check(len(atts) == 1 and atts[0]["verdict"] == "invalid", "scan names the cut PNG invalid", scan)
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: the CLI healed it itself, not stuck", r)

    before = session.read_bytes()
    x = ctx.sb.doctor("exclude", session, "--ref", atts[0]["ref"])
    lib.check(x.code == 0, "exclude lands", x)
    rep = ctx.sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    lib.check(session.read_bytes() == before, "the original session is byte-identical")
    lib.check(copy["resume"] == "copilot --resume=%s" % copy["id"], "repair prints the CLI's own resume command", copy)
    lib.check(os.path.dirname(os.path.dirname(copy["out"])) == str(_state(ctx)), "the copy is a session folder beside the original", copy)
    n = len(_requests(ctx))
    resumed = _copilot(ctx, "-p", "continue", "--resume=" + copy["id"])
    lib.check(resumed.code == 0, "the CLI resumes the repaired copy", resumed)
    log = _requests(ctx)[n:]
    lib.check([r["status"] for r in log] == [200], "one request, a 200: no refusal to retry from", [r["status"] for r in log])
    lib.check(not _has_image(log[0]) and "Attachment omitted" in json.dumps(log[0]["body"]), "the copy sends the note, not the image", log[0]["body"]["messages"][0])
    r2, d2 = lib.diagnose(ctx.sb, copy["out"])
    lib.check(d2["stuck"] is False, "diagnose on the copy: not stuck", r2)


def scenario_cut_pdf_attachment_is_stuck_and_rescued(ctx):
    """A cut PDF attached: the provider refuses it, and the CLI, which heals a refused
    image, sends the document again on every request (its first run and its own
    resume fail the same way). diagnose: stuck, the PDF the prime suspect; preview is
    what the CLI sends; exclude + repair, and the copy resumes with a 200 and no document."""
    (ctx.sb.work / "doc.pdf").write_bytes(lib.cut_pdf())
    first = _copilot(ctx, "-p", "hello", "--attachment", "doc.pdf")
    sessions = _sessions(ctx)
    lib.check(len(sessions) == 1, "the CLI wrote one session", sessions, first)
    session = sessions[0]
    log = _requests(ctx)
    lib.check(log and all(r["status"] == 400 for r in log), "every request of the first run is refused", [r["status"] for r in log])
    previewed = lib.preview(ctx.sb, session)
    n = len(log)
    _copilot(ctx, "-p", "continue", "--resume=" + session.parent.name)
    log = _requests(ctx)
    own = log[n:]
    lib.check(own and all(r["status"] == 400 for r in own), "its own resume is refused the same way: stuck for real", [r["status"] for r in log])
    _preview_matches(previewed, log[n])
    r, d = lib.diagnose(ctx.sb, session)
    primes = [s for s in d["suspects"] if s["prime"]]
    lib.check(r.code == 1 and d["stuck"] is True, "diagnose: stuck", r)
    lib.check(len(primes) == 1 and primes[0]["mime_declared"] == "application/pdf", "the cut PDF is the prime suspect", d["suspects"])
    x = ctx.sb.doctor("exclude", session, "--ref", primes[0]["ref"])
    lib.check(x.code == 0, "exclude lands", x)
    before = session.read_bytes()
    rep = ctx.sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    of_copy, _ = lib.preview(ctx.sb, copy["out"])
    n = len(_requests(ctx))
    resumed = _copilot(ctx, "-p", "continue", "--resume=" + copy["id"])
    log = _requests(ctx)[n:]
    lib.check(resumed.code == 0 and [q["status"] for q in log] == [200], "the repaired copy resumes with one request, a 200", resumed, [q["status"] for q in log])
    lib.check('"document"' not in json.dumps(log[0]["body"]["messages"]), "the copy sends no document", log[0]["body"]["messages"][0])
    # The session file is the original: the overlay beside it is exclude's, the file itself is never written.
    lib.rescued(ctx.sb, own, session, before, copy["out"], _differences(of_copy, log[0]))


def scenario_view_tool_image_is_not_sent(ctx):
    """The model views a cut PNG: in custom-provider mode the CLI keeps the image in a
    `session.binary_asset` but sends only the tool's text, so the provider never sees
    it; session-doctor counts no attachment in the request and blames nothing."""
    (ctx.sb.work / "cut.png").write_bytes(lib.cut_png())
    ctx.provider.settings.tool = ("view", {"path": str(ctx.sb.work / "cut.png")})
    first = _copilot(ctx, "-p", "READ-THE-FILE cut.png")
    lib.check(first.code == 0, "the CLI answers", first)
    log = _requests(ctx)
    lib.check([r["status"] for r in log] == [200, 200] and not any(_has_image(r) for r in log), "two 200s, no image sent", [r["status"] for r in log])
    session = _sessions(ctx)[0]
    events = _events(session)
    lib.check(any(e["type"] == "session.binary_asset" for e in events), "the CLI stored the image as a binary asset", [e["type"] for e in events])
    scan = ctx.sb.doctor("scan", session, "--json")
    lib.check(scan.code == 0 and scan.json()["attachments"] == [], "scan: nothing the provider sees is media", scan)
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0 and not d.get("suspects"), "diagnose: healthy, no suspect", r)
    previewed = lib.preview(ctx.sb, session)
    n = len(_requests(ctx))
    again = _copilot(ctx, "-p", "continue", "--resume=" + session.parent.name)
    lib.check(again.code == 0 and _requests(ctx)[n]["status"] == 200, "the CLI's resume gets a 200", again)
    _preview_matches(previewed, _requests(ctx)[n])


def _kill_strays(ctx):
    """The CLI runs its shell commands in a session of their own, which outlives a
    SIGKILL of the CLI's group: end those left running in this sandbox, by pid."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            continue
        if cwd == str(ctx.sb.root) or cwd.startswith(str(ctx.sb.root) + "/"):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


def _killed(ctx):
    """Runs the CLI until its bash call is under way, SIGKILLs it; the session."""
    proc = lib.spawn(ctx.sb, [ctx.exe, "-p", "READ-THE-FILE and wait", "--allow-all-tools", "--model", MODEL], env=_env(ctx))
    deadline = time.time() + lib.AGENT_TIMEOUT
    session = None
    while time.time() < deadline and proc.poll() is None:
        found = _sessions(ctx)
        if found and '"tool.execution_start"' in found[0].read_text():
            session = found[0]
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    _kill_strays(ctx)
    lib.check(session is not None, "the CLI started the bash call before it was killed")
    events = _events(session)
    lib.check(not any(e["type"] == "tool.execution_complete" for e in events), "the call has no result in the session", [e["type"] for e in events])
    return session


def scenario_killed_mid_tool(ctx):
    """SIGKILL while a bash call runs: the call has no result in the events. diagnose
    says not stuck; the CLI's own resume gets a 200 (what it sends for the call is checked)."""
    ctx.provider.settings.tool = ("bash", {"command": "sleep 30", "description": "wait"})
    session = _killed(ctx)
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: not stuck", r)
    previewed = lib.preview(ctx.sb, session)
    n = len(_requests(ctx))
    again = _copilot(ctx, "-p", "continue", "--resume=" + session.parent.name)
    log = _requests(ctx)[n:]
    lib.check(again.code == 0 and log and log[0]["status"] == 200, "the CLI's own resume gets a 200", again, [r["status"] for r in log])
    sent = json.dumps(log[0]["body"]["messages"])
    lib.check("Tool execution was interrupted" in sent, "the CLI answers the orphaned call itself", log[0]["body"]["messages"])
    _preview_matches(previewed, log[0])


def scenario_killed_mid_tool_repaired_copy_resumes(ctx):
    """The killed session repaired (the orphaned call answered in the CLI's own
    event and words): the copy resumes with a 200 and sends what preview showed."""
    ctx.provider.settings.tool = ("bash", {"command": "sleep 30", "description": "wait"})
    session = _killed(ctx)
    previewed = lib.preview(ctx.sb, session)
    rep = ctx.sb.doctor("repair", session, "--json", "--force")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    lib.check(copy["changes"]["calls_answered"], "repair answers the orphaned call", copy)
    n = len(_requests(ctx))
    resumed = _copilot(ctx, "-p", "continue", "--resume=" + copy["id"])
    log = _requests(ctx)[n:]
    lib.check(resumed.code == 0 and log and log[0]["status"] == 200, "the CLI resumes the repaired copy with a 200", resumed, [r["status"] for r in log])
    events = _events(Path(copy["out"]))
    answers = [e for e in events if e["type"] == "tool.execution_complete"]
    lib.check(len(answers) == 1, "the CLI adds no second answer to the call repair answered", [e["type"] for e in events])
    _preview_matches(previewed, log[0])


def scenario_openai_compatible_provider_preview_matches(ctx):
    """With COPILOT_PROVIDER_TYPE=openai the CLI speaks Chat Completions: preview of
    a session with a tool call writes that dialect and equals the resumed request
    (the system message aside, which the session does not hold)."""
    (ctx.sb.work / "pic.png").write_bytes(lib.png())
    ctx.provider.settings.tool = ("view", {"path": str(ctx.sb.work / "pic.png")})
    env = dict(_env(ctx), COPILOT_PROVIDER_TYPE="openai", COPILOT_PROVIDER_BASE_URL=ctx.provider.url + "/v1")
    run = lambda *a: ctx.sb.run([ctx.exe, *a, "--allow-all-tools", "--model", "gpt-4.1"], env=env)
    first = run("-p", "READ-THE-FILE pic.png")
    lib.check(first.code == 0, "the CLI answers", first)
    chat = ctx.provider.model_requests("chat")
    lib.check(len(chat) == 2 and all(r["status"] == 200 for r in chat), "two Chat Completions requests, both 200", [r.get("path") for r in ctx.provider.log])
    session = _sessions(ctx)[0]
    body, summary = lib.preview(ctx.sb, session)
    lib.check("messages" in body and summary.get("target") == "openai-chat", "preview writes Chat Completions", summary)
    again = run("-p", "continue", "--resume=" + session.parent.name)
    sent = ctx.provider.model_requests("chat")[2]
    lib.check(again.code == 0 and sent["status"] == 200, "the CLI's resume gets a 200", again)
    # The CLI's system prompt leads every request (preview names it as not in the session).
    want = request_diff.leading(sent["body"]["messages"], "role", "system", "the CLI's system prompt")
    lib.check(not any(m["role"] == "system" for m in body["messages"]), "preview holds no system message: the session has none", body["messages"])
    want = request_diff.resume_tail(want, request_diff.copilot_prompt("continue"), request_diff.chat)
    diffs = request_diff.items(body["messages"], want, request_diff.chat)
    lib.check(not diffs, "preview equals what the CLI sent, message by message", "\n".join(diffs))
