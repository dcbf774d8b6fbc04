"""Cline CLI (``cline`` on npm) against the loopback provider.

Pointed at it with ``cline auth -p openai -k KEY -m MODEL -b URL/v1`` (an
OpenAI-compatible provider: Chat Completions, streamed). Headless with a
prompt argument and ``--json``; its resume, ``cline --id <task>``, is
interactive only, so it is driven in a pseudo-terminal
(``lib.run_in_terminal``). Tasks: ``~/.cline/data/sessions/<id>/<id>.messages.json``
beside the manifest ``<id>.json``. Every run leaves a background hub
(``cline --cline-hub-daemon --cwd <work>``): each scenario ends the ones its
sandbox started, by pid, and checks none is left.
"""

import functools
import json
import os
import signal
import time

import lib

MODEL = "gpt-4o"
HUB = "--cline-hub-daemon"
# What the request carries that no task message is (preview names them).
NOT_IN_SESSION = ("system prompt", "tool list")


def _ends_its_hubs(fn):
    """Ends the hub processes the scenario's runs left, and checks they are gone."""

    @functools.wraps(fn)
    def run(ctx):
        try:
            fn(ctx)
        finally:
            left = lib.processes_under(ctx.sb.work, HUB)
            for pid in left:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            deadline = time.time() + 10
            while time.time() < deadline and lib.processes_under(ctx.sb.work, HUB):
                time.sleep(0.2)
            for pid in lib.processes_under(ctx.sb.work, HUB):
                os.kill(pid, signal.SIGKILL)
        lib.check(not lib.processes_under(ctx.sb.work, HUB), "no Cline hub of this sandbox is left running")

    return run


def _setup(ctx, name=None, data=None):
    r = ctx.sb.run([ctx.exe, "auth", "-p", "openai", "-k", "fake-key", "-m", MODEL, "-b", ctx.provider.url + "/v1"], timeout=60)
    lib.check(r.code == 0, "cline auth points it at the fake provider", r)
    if name is None:
        return None
    path = ctx.sb.work / name
    path.write_bytes(data)
    ctx.provider.settings.tool = ("read_files", {"files": [{"path": str(path)}]})
    return path


def _sessions(ctx):
    return sorted((ctx.sb.home / ".cline" / "data" / "sessions").glob("*/*.messages.json"))


def _run(ctx, prompt):
    return ctx.sb.run([ctx.exe, "--json", prompt], timeout=90)


def _resume(ctx, task, text="continue"):
    """``cline --id TASK`` in a terminal: types ``text`` once its prompt box
    shows, waits for the provider's answer on screen, then leaves with Ctrl+C."""
    before = len(ctx.provider.model_requests("chat"))

    def answered(screen):
        return len(ctx.provider.model_requests("chat")) > before and ("Done." in screen.split(text)[-1] or "Error" in screen.split(text)[-1])

    steps = [
        (lambda s: "Ask anything" in s, text.encode()),
        (lambda s: text in s, b"\r"),
        (answered, b"\x03"),
    ]
    r = lib.run_in_terminal(ctx.sb, [ctx.exe, "--id", task], steps, timeout=60)
    sent = ctx.provider.model_requests("chat")[before:]
    return r, sent


def _sent_history(request, typed=None):
    """The messages of a request that come from the task: without Cline's
    system message, and without the prompt ``typed`` to resume when the task
    was previewed before it was typed (Cline stores it in the task)."""
    msgs = request["body"]["messages"]
    lib.check(msgs and msgs[0]["role"] == "system", "Cline sends its system prompt first", msgs[:1])
    if typed is None:
        return msgs[1:]
    lib.check(msgs[-1] == {"role": "user", "content": typed}, "the resume's request ends with the typed prompt", msgs[-1:])
    return msgs[1:-1]


def _stuck_for_real(ctx, name, data):
    _setup(ctx, name, data)
    first = _run(ctx, "READ-THE-FILE %s" % name)
    lib.check(first.code != 0, "the first run fails", first)
    log = ctx.provider.model_requests("chat")
    lib.check(log and log[-1]["status"] == 400, "the provider refused the request carrying the image", first)
    sessions = _sessions(ctx)
    lib.check(len(sessions) == 1, "Cline wrote one task", sessions)
    session = sessions[0]
    task = session.parent.name
    again, sent = _resume(ctx, task)
    lib.check(sent and sent[-1]["status"] == 400, "Cline's own resume meets the same 400", again, sent[-1:] if sent else None)
    lib.check("valid image" in again.stdout, "Cline shows the provider's error on resume", again)
    return session, task, sent


@_ends_its_hubs
def scenario_cut_png_rescue(ctx):
    """A cut PNG read by read_files: stuck for real → diagnose → exclude →
    preview equals the resume's request → repair → `cline --id` of the copy
    gets a 200 → diagnose on the copy: not stuck; the original untouched."""
    session, task, own = _stuck_for_real(ctx, "pic.png", lib.cut_png())
    failed = own[-1]
    sb = ctx.sb
    before = session.read_bytes()
    manifest = session.parent / ("%s.json" % task)
    manifest_before = manifest.read_bytes()

    # Before any exclusion, preview is the request Cline sent on its resume.
    previewed, summary = lib.preview(sb, session)
    lib.check(summary.get("target") == "openai-chat", "preview speaks Chat Completions, as Cline does", summary)
    diff = lib.message_differences(previewed["messages"], _sent_history(failed))
    lib.check(not diff, "preview equals the request Cline sent, message by message", *diff)
    for key in NOT_IN_SESSION:
        lib.check(any(key in n for n in summary.get("not_in_session", [])), "preview names the %s as not in the session" % key, summary)

    r, d = lib.diagnose(sb, session)
    lib.check(d["stuck"] is True and r.code == 1, "diagnose calls the task stuck", r)
    lib.check(d["failure"]["class"] == "media_rejected", "the failure is media_rejected", r)
    lib.check("valid image" in d["failure"].get("message", json.dumps(d["failure"])), "with the provider's error text", r)
    prime = [s for s in d["suspects"] if s.get("prime")]
    lib.check(len(prime) == 1 and "pic.png" in json.dumps(prime), "pic.png is the one prime suspect", r)
    lib.check(any("exclude" in n for n in d["next"]), "the next commands name exclude", r)
    x = sb.doctor("exclude", session, "--suspects")
    lib.check(x.code == 0, "exclude --suspects lands", x)

    previewed, summary = lib.preview(sb, session)
    blob = json.dumps(previewed)
    lib.check("data:image/png" not in blob, "the excluded image is not in the preview", blob[:1500])
    lib.check(summary["changes"]["excluded"], "preview reports the exclusion", summary)

    rep = sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    lib.check(copy["resume"] == "cline --id %s" % copy["id"], "repair prints Cline's own resume command", copy)
    out = copy["out"]
    lib.check(os.path.dirname(os.path.dirname(out)) == str(session.parent.parent), "the copy is a task folder beside the original", copy)
    lib.check(session.read_bytes() == before and manifest.read_bytes() == manifest_before, "the original task is byte-identical")

    # The copy's resume, as printed: a 200, and the request is the preview of the repaired copy.
    expect, _ = lib.preview(sb, out)
    resumed, sent = _resume(ctx, copy["id"])
    lib.check(sent and sent[-1]["status"] == 200, "the printed resume gets a 200", resumed, sent[-1:] if sent else None)
    lib.check(copy["id"] in resumed.stdout, "Cline resumed the copy, not a new task", resumed)
    diff = lib.message_differences(expect["messages"], _sent_history(sent[-1], "continue"))
    lib.rescued(sb, own, session, before, out, diff)
    lib.check(manifest.read_bytes() == manifest_before, "the original task's manifest is byte-identical")


@_ends_its_hubs
def scenario_killed_mid_tool(ctx):
    """The run is killed while its tool runs (a shell command that sleeps):
    diagnose says not stuck, and Cline's resume gets a 200."""
    _setup(ctx)
    ctx.provider.settings.tool = ("run_commands", {"commands": ["sleep 30"]})
    proc = lib.spawn(ctx.sb, [ctx.exe, "--json", "READ-THE-FILE now"])
    deadline = time.time() + 60
    started = False
    while time.time() < deadline and not started:
        sessions = _sessions(ctx)
        started = bool(sessions) and "tool_use" in sessions[0].read_text(errors="replace")
        time.sleep(0.3)
    lib.check(started, "the task recorded the tool call")
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    session = _sessions(ctx)[0]
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose says the killed task is not stuck", r)
    lib.check(any("interrupted before a result" in n for n in d.get("notes", [])), "with a note that Cline answers the call itself", r)
    previewed, _ = lib.preview(ctx.sb, session)
    resumed, sent = _resume(ctx, session.parent.name)
    lib.check(sent and sent[-1]["status"] == 200, "Cline's resume gets a 200", resumed, sent[-1:] if sent else None)
    history = _sent_history(sent[-1], "continue")
    lib.check(any(m["role"] == "tool" and "interrupted" in m["content"] for m in history), "Cline answered the killed call itself", history)
    diff = lib.message_differences(previewed["messages"], history)
    lib.check(not diff, "preview (Cline's own answer included) equals what Cline sent", *diff)
    r2, d2 = lib.diagnose(ctx.sb, session)
    lib.check(d2["stuck"] is False, "diagnose after the resume: not stuck", r2)


@_ends_its_hubs
def scenario_heals_oversized_image(ctx):
    """An image over Cline's own 6 MiB limit: Cline sends a placeholder in its
    place (never the bytes), so the provider answers 200; session-doctor must
    not call the task stuck, and preview shows the placeholder too."""
    big = lib.png(16, 16)
    big = big[:-12] + b"\x00" * (6_400_000) + big[-12:]
    _setup(ctx, "big.png", big)
    first = _run(ctx, "READ-THE-FILE big.png")
    log = ctx.provider.model_requests("chat")
    lib.check(log and all(e["status"] == 200 for e in log), "the provider answers every request", first, [e["status"] for e in log])
    lib.check("media omitted" in json.dumps(log[-1]["body"]["messages"]), "Cline sent its placeholder in place of the image", log[-1]["body"]["messages"][-2:])
    session = _sessions(ctx)[0]
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose does not call the healed task stuck", r)
    lib.check(not d["accepted_invalid"] and d["attachments"] == 0, "nor counts an image Cline never sends (nor says the model accepted it)", r)
    previewed, _ = lib.preview(ctx.sb, session)
    sent = log[-1]["body"]["messages"][1:]
    lib.check(previewed["messages"][-1] == {"role": "assistant", "content": "Done."}, "the task ends with the model's answer", previewed["messages"][-1:])
    diff = lib.message_differences(previewed["messages"][:-1], sent)
    lib.check(not diff, "preview equals what Cline sent before that answer", *diff)


@_ends_its_hubs
def scenario_unsigned_gemini_3_call_signed_by_the_ai_sdk(ctx):
    """Cline on gemini-3-pro-preview (``cline auth -p gemini``; the base URL
    set in its providers.json, as ``auth -b`` takes one for OpenAI providers
    only) behind a gateway that drops thought signatures (the fake's
    ``drop_signatures``): the AI SDK it bundles (``@ai-sdk/google`` 4.0.129)
    sends the unsigned call in the turn's next step with Google's placeholder
    and warns so; Gemini 3 takes it and the run completes. opencode and pi,
    sent the same answer, are refused (their proxy scenarios)."""
    (ctx.sb.work / "notes.txt").write_text("hello notes\n")
    ctx.provider.settings.tool = ("read_files", {"files": [{"path": str(ctx.sb.work / "notes.txt")}]})
    ctx.provider.settings.drop_signatures = True
    r = ctx.sb.run([ctx.exe, "auth", "-p", "gemini", "-k", "fake-key", "-m", "gemini-3-pro-preview"], timeout=60)
    lib.check(r.code == 0, "cline auth sets the gemini provider", r)
    providers = ctx.sb.home / ".cline" / "data" / "settings" / "providers.json"
    conf = json.loads(providers.read_text())
    conf["providers"]["gemini"]["settings"]["baseUrl"] = ctx.provider.url + "/v1beta"
    providers.write_text(json.dumps(conf))
    run = _run(ctx, "READ-THE-FILE notes.txt")
    sent = ctx.provider.model_requests("gemini")
    steps = [e for e in sent if any("functionResponse" in p for c in e["body"]["contents"] for p in c["parts"])]
    lib.check(run.code == 0 and steps and all(e["status"] == 200 for e in sent), "the run completes on gemini-3 with every request a 200", run, [(e["path"], e["status"]) for e in sent])
    calls = [p for c in steps[0]["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    lib.check(calls and calls[0].get("thoughtSignature") == "skip_thought_signature_validator", "the AI SDK sends the unsigned call with Google's placeholder", calls)


@_ends_its_hubs
def scenario_context_overflow_trimmed(ctx):
    """A read_files output takes the task over the window (the fake's
    `context_tokens`): the request carrying it gets Chat Completions' "This
    model's maximum context length is N tokens. However, your messages resulted
    in X tokens"; Cline compacts and retries once by itself (its compaction
    keeps the recent read) and is refused again, and so is its own resume.
    diagnose says context_overflow and offers --fit-context; the task is one
    JSON document: the copy has the note in place of the read's text and
    leaves out Cline's display-only failure messages, and `cline --id <copy>`
    gets a 200, sending what preview of the copy shows."""
    from fake.provider import tokens_of

    _setup(ctx, "big.txt", (("%s\n" % ("z" * 59)) * 1500).encode())
    first = _run(ctx, "say hello")
    lib.check(first.code == 0, "a first run measures the request without history", first)
    base = max(tokens_of(e["body"]) for e in ctx.provider.model_requests("chat"))
    window = base + 1000
    ctx.provider.settings.context_tokens = window
    for old in _sessions(ctx):
        for f in old.parent.iterdir():
            f.unlink()
        old.parent.rmdir()
    n = len(ctx.provider.model_requests("chat"))
    run = _run(ctx, "READ-THE-FILE big.txt")
    refused = [e for e in ctx.provider.model_requests("chat")[n:] if e["status"] == 400]
    overflow = "maximum context length is %d tokens" % window
    lib.check(run.code != 0 and len(refused) >= 2 and all(overflow in json.dumps(e["answer"]) for e in refused), "the run and Cline's own compact-and-retry are refused as over the window", run.code, [(e["status"], tokens_of(e["body"])) for e in ctx.provider.model_requests("chat")[n:]])
    session = _sessions(ctx)[0]
    task = session.parent.name
    again, sent = _resume(ctx, task)
    lib.check(sent and sent[-1]["status"] == 400 and overflow in json.dumps(sent[-1]["answer"]), "Cline's own resume is refused for the same window", again, [(e["status"], tokens_of(e["body"])) for e in sent])
    before = session.read_bytes()
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is True and r.code == 1 and d["failure"]["class"] == "context_overflow", "diagnose: stuck on context_overflow", r)
    lib.check(any(n.startswith("session-doctor repair ") and n.endswith("--fit-context") for n in d["next"]), "next names repair --fit-context", d["next"])
    rep = ctx.sb.doctor("repair", session, "--fit-context", "--json")
    lib.check(rep.code == 0, "repair --fit-context writes a copy", rep)
    copy = rep.json()
    print("    context estimate:", json.dumps(copy["changes"]["context"]))
    lib.check(copy["changes"]["elided"] and copy["changes"]["context"]["window_from"] == "error", "the copy elides the read, by the window the recorded error states", copy["changes"])
    lib.check(copy["changes"]["failures_dropped"], "and leaves out the display-only failure messages", copy["changes"])
    lib.check(session.read_bytes() == before, "the original task is byte-identical")
    expect, _ = lib.preview(ctx.sb, copy["out"])
    resumed, sent = _resume(ctx, copy["id"])
    lib.check(sent and sent[0]["status"] == 200 and all(e["status"] == 200 for e in sent), "`cline --id <copy>` gets a 200", resumed, [(e["status"], tokens_of(e["body"])) for e in sent])
    lib.check(copy["id"] in resumed.stdout, "Cline resumed the copy, not a new task", resumed)
    history = _sent_history(sent[0], "continue")
    lib.check(any(m["role"] == "tool" and "Tool output omitted to fit the context window" in json.dumps(m) for m in history), "the copy sends the note in place of the read", history)
    diff = lib.message_differences(expect["messages"], history)
    lib.check(not diff, "preview of the copy equals what Cline sent for it", *diff)
    r2, d2 = lib.diagnose(ctx.sb, copy["out"])
    lib.check(d2["stuck"] is False, "diagnose on the resumed copy says not stuck", r2)
