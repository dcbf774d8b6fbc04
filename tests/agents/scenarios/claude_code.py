"""Claude Code 2.1.332 against the fake provider: each scenario a user story end to end.

Claude Code is pointed at the provider with ``ANTHROPIC_BASE_URL``; it posts
streaming requests to ``/v1/messages?beta=true`` and writes its session to
``$HOME/.claude/projects/<cwd with / and _ as ->/<session id>.jsonl``.
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import lib
import request_diff
from lib import check


def _env(ctx):
    return {
        "ANTHROPIC_BASE_URL": ctx.provider.url,
        "ANTHROPIC_API_KEY": "sk-ant-suite",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def _run(ctx, prompt, tools="Read"):
    r = ctx.sb.run([ctx.exe, "-p", prompt, "--allowedTools", tools, "--output-format", "json"], env=_env(ctx))
    return r, _result(r)


def _resume(ctx, sid, prompt="continue"):
    r = ctx.sb.run([ctx.exe, "--resume", sid, "-p", prompt, "--output-format", "json"], env=_env(ctx))
    return r, _result(r)


def _result(r):
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}


def _session(ctx, sid):
    found = list((ctx.sb.home / ".claude" / "projects").glob("*/%s.jsonl" % sid))
    check(len(found) == 1, "the session file of %s is under ~/.claude/projects" % sid, found)
    return found[0]


def _mark(ctx):
    return len(ctx.provider.log)


def _sent(ctx, since):
    """The Anthropic requests logged since `since`."""
    return [e for e in ctx.provider.log[since:] if e.get("api") == "anthropic"]


_normalise = request_diff.claude_code


def _media_blocks(messages):
    """(kind, base64) of every image/document block anywhere in the messages."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            if v.get("type") in ("image", "document") and isinstance(v.get("source"), dict):
                out.append((v["type"], v["source"].get("data")))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(messages)
    return out


def _check_preview_is_sent(ctx, session, sent_body, extra=()):
    """preview of `session` equals the history the agent sent (its new prompt aside)."""
    _, shown = lib.preview_messages(ctx.sb, session, *extra)
    diff = _differences(shown, sent_body)
    check(not diff, "preview is the request Claude Code sends (%d differences)" % len(diff), "\n".join(diff[:6]))


def _differences(shown, sent_body):
    """preview's messages against the history Claude Code sent, less what its resume adds."""
    sent = list(sent_body["messages"])
    # The resume's own prompt is the last user turn: preview shows the history before it.
    last = sent[-1]
    check(last.get("role") == "user", "the resume request ends with the user's prompt", last)
    prompt_only = [b for b in (last["content"] if isinstance(last["content"], list) else [last["content"]])]
    sent = sent[:-1] if len(prompt_only) == 1 else sent[:-1] + [dict(last, content=unmerge(last["content"][:-1]))]
    # A resume of a history that ends on a user turn first writes this synthetic
    # answer into the session, then the prompt: both are the resume's, not the history's.
    if sent and sent[-1].get("role") == "assistant" and _normalise(sent[-1])["content"] == [{"type": "text", "text": "No response requested."}]:
        sent = sent[:-1]
    return request_diff.items(shown, sent, _normalise)


def unmerge(blocks):
    """The history's blocks of a last user message the resume's prompt joined:
    Claude Code ends a text block with `\n` when the next message joins its
    message, so that `\n` is the prompt's, not the history's."""
    blocks = [dict(b) for b in blocks]
    if blocks and blocks[-1].get("type") == "text" and blocks[-1].get("text", "").endswith("\n"):
        blocks[-1]["text"] = blocks[-1]["text"][:-1]
    return blocks


def _stuck_twice(ctx, prompt, tools="Read"):
    """First run and the agent's own resume both fail with a 400: truly stuck."""
    r, res = _run(ctx, prompt, tools)
    check(r.code != 0 and res.get("api_error_status") == 400, "the first run fails with a 400", r)
    sid = res["session_id"]
    since = _mark(ctx)
    r2, res2 = _resume(ctx, sid)
    check(r2.code != 0 and res2.get("api_error_status") == 400, "the agent's own resume fails the same way", r2)
    # The requests of that resume, for lib.rescued.
    ctx.own = _sent(ctx, since)
    return sid


def _rescue(ctx, sid, expect_class, repair_extra=()):
    """diagnose → exclude → repair → preview of the copy → resume the copy: 200."""
    session = _session(ctx, sid)
    kept = session.read_bytes()
    d, copy = lib.rescue_steps(ctx.sb, session, expect_class, session.parent, *repair_extra)
    check(copy["resume"].startswith("claude --resume "), "repair prints Claude Code's resume command", copy)
    new_id = copy["resume"].split()[-1]
    _, shown = lib.preview_messages(ctx.sb, copy["out"])
    since = _mark(ctx)
    r, res = _resume(ctx, new_id)
    check(r.code == 0 and not res.get("is_error"), "claude --resume <new id> -p continue succeeds", r)
    sent = _sent(ctx, since)
    check(sent and sent[0]["status"] == 200, "the resumed copy's first request gets a 200", sent[:1])
    lib.rescued(ctx.sb, ctx.own, session, kept, copy["out"], _differences(shown, sent[0]["body"]))
    return session, copy, sent[0]["body"]


def _write(ctx, name, data):
    path = ctx.sb.work / name
    path.write_bytes(data)
    return path


# ------------------------------------------------------------------ scenarios


def _gateway_rescue(ctx, name, data, what):
    """A broken file read by Read behind a LiteLLM-style gateway: Claude Code does not
    know the wording, so it is stuck; the whole rescue works."""
    f = _write(ctx, name, data)
    ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
    ctx.provider.settings.gateway = "litellm"
    sid = _stuck_twice(ctx, "READ-THE-FILE %s please" % name)
    session, copy, body = _rescue(ctx, sid, "media_rejected")
    check(not _media_blocks(body["messages"]), "the resumed copy sends no %s" % what, body["messages"])
    _check_preview_is_sent(ctx, session, body)
    _check_no_bytes(copy["out"], data)


def scenario_cut_png_behind_gateway(ctx):
    """A cut PNG behind the gateway: stuck, and rescued."""
    _gateway_rescue(ctx, "cut.png", lib.cut_png(), "image")


def scenario_cut_pdf_behind_gateway(ctx):
    """A cut PDF behind the gateway: stuck, and rescued the same way."""
    _gateway_rescue(ctx, "cut.pdf", lib.cut_pdf(), "document")


def _check_no_bytes(path, data):
    import base64

    text = Path(path).read_text()
    check(base64.b64encode(data).decode()[:40] not in text, "no record of the repaired copy holds the excluded bytes", path)


def _heals(ctx, name, data, kind):
    """Anthropic's own wording: Claude Code heals itself; session-doctor keeps the heal."""
    f = _write(ctx, name, data)
    ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
    r, res = _run(ctx, "READ-THE-FILE %s please" % name)
    check(r.code == 0 and not res.get("is_error"), "Claude Code heals the rejection itself and finishes", r)
    session = _session(ctx, res["session_id"])
    lines = [json.loads(x) for x in session.read_text().splitlines()]
    heal = [x for x in lines if x.get("apiError") == "media_removed"]
    check(heal and heal[0].get("healsDistinctCarrier") is True, "the session records the heal", heal)
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is False and rd.code == 0, "diagnose: a healed failure is not stuck", rd)
    check(d["failure"] and d["failure"]["class"] == "media_rejected", "the class comes from the provider's reply in errorDetails", rd)
    _, shown = lib.preview_messages(ctx.sb, session)
    check(not _media_blocks(shown), "preview shows the healed form, without the %s" % kind, shown)
    rep = ctx.sb.doctor("repair", session, "--out", session.parent, "--json")
    check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    since = _mark(ctx)
    r2, res2 = _resume(ctx, copy["resume"].split()[-1])
    check(r2.code == 0 and not res2.get("is_error"), "the repaired copy resumes", r2)
    sent = _sent(ctx, since)
    check(sent and all(e["status"] == 200 for e in sent), "every request of the resumed copy gets a 200 (no second heal)", [(e["status"], e["answer"]) for e in sent])
    check(not _media_blocks(sent[0]["body"]["messages"]), "the %s does not come back" % kind, sent[0]["body"]["messages"])
    _check_preview_is_sent(ctx, session, sent[0]["body"])


def scenario_own_wording_image_heals(ctx):
    _heals(ctx, "cut.png", lib.cut_png(), "image")


def scenario_own_wording_pdf_heals(ctx):
    _heals(ctx, "cut.pdf", lib.cut_pdf(), "document")


def scenario_too_many_images(ctx):
    """Three valid images read at once where the provider takes two: image_limit."""
    paths = [_write(ctx, "p%d.png" % i, lib.png(4, 4, (i * 60, 0, 0))) for i in range(3)]
    ctx.provider.settings.tool = ("Read", {"file_path": str(paths[0])})
    ctx.provider.settings.more_tools = [("Read", {"file_path": str(p)}) for p in paths[1:]]
    ctx.provider.settings.max_images = 2
    sid = _stuck_twice(ctx, "READ-THE-FILE p0.png p1.png p2.png please")
    session = _session(ctx, sid)
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is True and d["failure"]["class"] == "image_limit", "diagnose: stuck on image_limit", rd)
    check(any("--max-images" in n for n in d["next"]), "next names repair --max-images", rd)
    session, copy, body = _rescue(ctx, sid, "image_limit", ("--max-images", "2"))
    check(len(_media_blocks(body["messages"])) == 2, "two images are sent", body["messages"])
    _check_preview_is_sent(ctx, session, body, ("--max-images", "2"))


def scenario_killed_mid_tool(ctx):
    """A Bash call killed with SIGKILL while it runs: Claude Code mends the
    unanswered call on resume, so diagnose calls the session healthy, with a
    note; preview shows what the resume then sends."""
    session = kill_mid_tool(ctx)
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is False and rd.code == 0, "diagnose: the agent mends an unanswered call itself, so not stuck", rd)
    check(any("call" in n for n in d.get("notes", [])), "diagnose notes the unanswered call", rd)
    kept = session.read_bytes()
    since = _mark(ctx)
    r, res = _resume(ctx, session.stem)
    check(r.code == 0 and not res.get("is_error"), "Claude Code resumes the killed run", r)
    sent = _sent(ctx, since)
    check(sent and sent[0]["status"] == 200, "the resume's request gets a 200", sent[:1])
    before = session.with_name("before-resume.jsonl")
    before.write_bytes(kept)
    _check_preview_is_sent(ctx, before, sent[0]["body"])


def kill_mid_tool(ctx):
    """Drives a run into a Bash call and kills it there; returns the session file."""
    # Claude Code refuses a bare `sleep N` itself; a script that waits is a real, running tool.
    _write(ctx, "wait.sh", b"sleep 60\n")
    ctx.provider.settings.tool = ("Bash", {"command": "bash wait.sh", "description": "wait"})
    argv = [str(ctx.exe), "-p", "READ-THE-FILE nothing, just run wait.sh", "--allowedTools", "Bash", "--output-format", "json"]
    proc = subprocess.Popen(argv, cwd=str(ctx.sb.work), env=dict(ctx.sb.env, **_env(ctx)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
    session = None
    deadline = time.time() + 60
    while time.time() < deadline and session is None:
        time.sleep(0.2)
        for p in (ctx.sb.home / ".claude" / "projects").glob("*/*.jsonl"):
            if '"name":"Bash"' in p.read_text():
                session = p
    time.sleep(1.5)  # the tool runs: wait.sh sleeps
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    check(session is not None, "the run reached the Bash call before it was killed")
    lines = [json.loads(x) for x in session.read_text().splitlines() if x.strip()]
    results = [b for x in lines if x.get("type") == "user" for b in (x["message"]["content"] if isinstance(x["message"]["content"], list) else []) if b.get("type") == "tool_result"]
    check(not results, "the call was killed before its result was written", results)
    ctx.provider.settings.tool = None
    return session


def scenario_replayed_thinking_after_a_key_change(ctx):
    """The provider signs the thinking it emits; after its key changes it refuses
    replayed blocks ("Invalid `signature` in `thinking` block"). Claude Code heals
    that itself (it retries without its thinking, recording no error): diagnose
    must not call it stuck; `repair --strip-reasoning` writes a copy whose very
    first request gets a 200, and preview --strip-reasoning is that request."""
    f = _write(ctx, "ok.png", lib.png())
    ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
    ctx.provider.settings.thinking_key = "key-1"
    r, res = _run(ctx, "READ-THE-FILE ok.png please")
    check(r.code == 0 and not res.get("is_error"), "the first run succeeds with signed thinking", r)
    sid = res["session_id"]
    session = _session(ctx, sid)
    check('"type":"thinking"' in session.read_text(), "the session keeps the thinking blocks")
    ctx.provider.settings.thinking_key = "key-2"
    since = _mark(ctx)
    r2, res2 = _resume(ctx, sid)
    sent = _sent(ctx, since)
    check(sent and sent[0]["status"] == 400 and "Invalid `signature`" in json.dumps(sent[0]["answer"]), "after the key change the replayed thinking is refused", [e["answer"] for e in sent][:1])
    check(r2.code == 0 and not res2.get("is_error"), "Claude Code heals it itself: it retries without the thinking and finishes", r2)
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is False and rd.code == 0, "diagnose: a session the agent heals is not stuck", rd)
    rep = ctx.sb.doctor("repair", session, "--out", session.parent, "--strip-reasoning", "--json")
    check(rep.code == 0, "repair --strip-reasoning writes a copy", rep)
    since = _mark(ctx)
    r4, res4 = _resume(ctx, rep.json()["resume"].split()[-1])
    check(r4.code == 0 and not res4.get("is_error"), "the stripped copy resumes", r4)
    sent = _sent(ctx, since)
    check(sent and sent[0]["status"] == 200, "its very first request gets a 200", sent[:1])
    _check_preview_is_sent(ctx, session, sent[0]["body"], ("--strip-reasoning",))


def scenario_redacted_thinking_replayed_as_issued(ctx):
    """The provider answers with a redacted_thinking block (opaque data only it
    can decrypt): Claude Code keeps it and replays it unmodified, so its tool
    result and its resume get 200s, and preview is that resumed request, the
    block byte for byte. Once the provider can no longer decrypt it (another
    organisation's key: "Invalid `data` in `redacted_thinking` block"), Claude
    Code heals itself (it drops its thinking and retries): not stuck, and
    `repair --strip-reasoning` gives a copy whose first request gets a 200."""
    f = _write(ctx, "ok.png", lib.png())
    ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
    ctx.provider.settings.redacted_thinking = True
    r, res = _run(ctx, "READ-THE-FILE ok.png please")
    sent = _sent(ctx, 0)
    check(r.code == 0 and not res.get("is_error") and all(e["status"] == 200 for e in sent), "the run replays the redacted block with its tool result and gets 200s", r, [e["status"] for e in sent])
    check(any(b.get("type") == "redacted_thinking" for m in sent[-1]["body"]["messages"] for b in m["content"] if isinstance(m["content"], list) and isinstance(b, dict)), "the redacted block was replayed", sent[-1]["body"]["messages"])
    sid = res["session_id"]
    session = _session(ctx, sid)
    check('"type":"redacted_thinking"' in session.read_text(), "the session keeps the redacted_thinking blocks")
    before = ctx.sb.work / "before-resume.jsonl"
    before.write_bytes(session.read_bytes())
    since = _mark(ctx)
    r2, res2 = _resume(ctx, sid)
    sent = _sent(ctx, since)
    check(r2.code == 0 and sent and sent[0]["status"] == 200, "its resume replays them and gets a 200", r2, [e["status"] for e in sent])
    _check_preview_is_sent(ctx, before, sent[0]["body"])
    ctx.provider.new_org()
    since = _mark(ctx)
    r3, res3 = _resume(ctx, sid)
    sent = _sent(ctx, since)
    check(sent and sent[0]["status"] == 400 and "Invalid `data` in `redacted_thinking` block" in json.dumps(sent[0]["answer"]), "another organisation cannot decrypt the replayed blocks", [e["answer"] for e in sent][:1])
    check(r3.code == 0 and not res3.get("is_error"), "Claude Code heals it itself and finishes", r3)
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is False and rd.code == 0, "diagnose: a session the agent heals is not stuck", rd)
    rep = ctx.sb.doctor("repair", session, "--out", session.parent, "--strip-reasoning", "--json")
    check(rep.code == 0, "repair --strip-reasoning writes a copy", rep)
    ctx.provider.new_org()
    since = _mark(ctx)
    r4, res4 = _resume(ctx, rep.json()["resume"].split()[-1])
    sent = _sent(ctx, since)
    check(r4.code == 0 and sent and sent[0]["status"] == 200, "the stripped copy's very first request gets a 200", r4, sent[:1])
    _check_preview_is_sent(ctx, session, sent[0]["body"], ("--strip-reasoning",))


def scenario_context_overflow_trimmed(ctx):
    """Three reads of 60 kB each push the history over the window (the fake's
    `context_tokens`): the next request gets Anthropic's "prompt is too long:
    X tokens > N maximum", and so do the agent's own resume and its own
    `/compact`. diagnose says context_overflow and offers --fit-context (no
    --max-images 0: there is no image); repair --fit-context elides the bulkiest
    outputs, and the copy resumes with a 200, sending what preview shows."""
    # The window: what Claude Code sends with no history, and room for one read.
    r, res = _run(ctx, "hello")
    check(r.code == 0, "a first run measures the request without history", r)
    base = max(fake_tokens(e["body"]) for e in _sent(ctx, 0))
    ctx.provider.settings.context_tokens = base + 20000
    line = ("%s\n" % ("z" * 49)).encode()
    paths = [_write(ctx, "%s.txt" % n, line * 1200) for n in "abc"]
    ctx.provider.settings.tool = ("Read", {"file_path": str(paths[0])})
    ctx.provider.settings.more_tools = [("Read", {"file_path": str(p)}) for p in paths[1:]]
    since = _mark(ctx)
    sid = _stuck_twice(ctx, "READ-THE-FILE a.txt b.txt c.txt please")
    ctx.provider.settings.tool, ctx.provider.settings.more_tools = None, []
    answers = [e for e in _sent(ctx, since) if e["status"] == 400]
    check(answers and all("prompt is too long" in json.dumps(e["answer"]) for e in answers), "the provider refuses the history as over the window", [e["answer"] for e in answers][:1])
    # Claude Code's own compaction sends the same history: it fails too.
    since = _mark(ctx)
    r3, res3 = _resume(ctx, sid, "/compact")
    compacts = _sent(ctx, since)
    check(compacts and all(e["status"] == 400 for e in compacts), "Claude Code's own /compact is refused for the same window", [(e["status"], e["answer"]) for e in compacts][:2])
    session = _session(ctx, sid)
    rd, d = lib.diagnose(ctx.sb, session)
    check(d["stuck"] is True and d["failure"]["class"] == "context_overflow", "diagnose: stuck on context_overflow", rd)
    check(any("--fit-context" in n for n in d["next"]), "next names --fit-context", d["next"])
    check(not any("--max-images 0" in n for n in d["next"]), "next offers no --max-images 0 for a session without an image", d["next"])
    session, copy, body = _rescue(ctx, sid, "context_overflow", ("--fit-context",))
    check(copy["changes"]["elided"], "the copy elides tool outputs", copy["changes"])
    print("    context estimate:", json.dumps(copy["changes"]["context"]))
    check("Tool output omitted to fit the context window" in json.dumps(body["messages"]), "the copy sends the notes in place of the outputs")
    _check_preview_is_sent(ctx, session, body, ("--fit-context",))


def fake_tokens(body):
    from fake.provider import tokens_of

    return tokens_of(body)
