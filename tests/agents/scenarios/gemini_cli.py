"""Gemini CLI (@google/gemini-cli) against the loopback provider.

Pointed at it with ``GEMINI_API_KEY`` + ``GOOGLE_GEMINI_BASE_URL`` and
``security.auth.selectedType: "gemini-api-key"`` in ``~/.gemini/settings.json``;
``model.name`` pins one model, so the CLI's router (a JSON-schema
``generateContent`` call to a lite model before every turn) stays out of it.
Headless with ``-p``; ``GEMINI_CLI_TRUST_WORKSPACE`` stands in for the trust
dialog. Sessions: ``~/.gemini/tmp/<project>/chats/session-<ts>-<id8>.jsonl``.
"""

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import lib
import request_diff

MODEL = "gemini-2.5-flash"
# What Gemini CLI adds to every request that no session file holds.
NOT_IN_SESSION = ("systemInstruction", "tools", "generationConfig")


def _setup(ctx, name, data):
    sb = ctx.sb
    (sb.home / ".gemini").mkdir(exist_ok=True)
    # Gemini CLI's session cleanup (on by default) runs at every start, unawaited:
    # it deletes a file it cannot read as a session, and with it every file of the
    # same short id. `--resume` in a later minute than the session's first line
    # starts an empty file beside it with that id (session-<minute>-<id8>), so a
    # start after that (the copy's resume) could delete the stuck original itself,
    # racing the run's exit: off, so the scenarios see what session-doctor does.
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"name": MODEL},
        "general": {"sessionRetention": {"enabled": False}},
    }
    (sb.home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    path = sb.work / name
    path.write_bytes(data)
    ctx.provider.settings.tool = ("read_file", {"file_path": str(path)})
    return path


def _env(ctx):
    return {"GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": ctx.provider.url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}


def _gemini(ctx, *args, cwd=None):
    return ctx.sb.run([ctx.exe, *args], env=_env(ctx), cwd=cwd)


def _chats(ctx):
    return sorted((ctx.sb.home / ".gemini" / "tmp").glob("*/chats"))


def _sessions(ctx):
    return sorted(p for d in _chats(ctx) for p in d.glob("session-*.jsonl"))


def _session_of(path):
    """The session id the CLI itself reads from a file: the last header or `$set` that names one."""
    sid = None
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        if isinstance(rec.get("$set"), dict) and "sessionId" in rec["$set"]:
            sid = rec["$set"]["sessionId"]
        elif "sessionId" in rec and "projectHash" in rec:
            sid = rec["sessionId"]
    return sid


def _begun_a_minute_earlier(session):
    """The session file renamed as if its run had begun a minute earlier (its
    name's minute, and its `startTime`), so the CLI's own resume that follows
    runs in a later minute than the session began, as a user's nearly always
    does: its fresh start then names a file of its own beside the session (in
    the same minute it would append to the session), and the resume's
    checkpoint copies the whole response turn into each call's result
    (`updateMessagesFromHistory`). Returns the new path."""
    m = re.fullmatch(r"session-(\d{4}-\d\d-\d\dT\d\d-\d\d)-(\w+\.jsonl)", session.name)
    lib.check(m is not None, "the session file is named as the CLI names it", session.name)
    when = datetime.strptime(m.group(1), "%Y-%m-%dT%H-%M") - timedelta(minutes=1)
    lines = session.read_text().splitlines(keepends=True)
    head = json.loads(lines[0])
    start = datetime.strptime(head["startTime"], "%Y-%m-%dT%H:%M:%S.%fZ") - timedelta(minutes=1)
    head["startTime"] = start.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (start.microsecond // 1000)
    moved = session.with_name("session-%s-%s" % (when.strftime("%Y-%m-%dT%H-%M"), m.group(2)))
    moved.write_text(json.dumps(head, separators=(",", ":")) + "\n" + "".join(lines[1:]))
    session.unlink()
    return moved


def _copied_turns(session):
    """Whether a checkpoint of `session` holds, in a call's result, another call's response."""
    for line in session.read_text().splitlines():
        rec = json.loads(line) if line.strip() else {}
        for m in (rec.get("$set") or {}).get("messages") or []:
            for c in m.get("toolCalls") or []:
                ids = [p["functionResponse"].get("id") for p in c.get("result") or [] if isinstance(p, dict) and "functionResponse" in p]
                if any(i != c.get("id") for i in ids):
                    return True
    return False


def _stuck_for_real(ctx, name, data):
    """The first run and the CLI's own resume both meet the provider's 400:
    (the session file, its id, the requests of the CLI's own resume)."""
    _setup(ctx, name, data)
    first = _gemini(ctx, "-p", "READ-THE-FILE %s" % name, "--yolo")
    lib.check(first.code != 0, "the first run fails", first)
    log = ctx.provider.model_requests("gemini")
    lib.check(log and log[-1]["status"] == 400, "the provider refused the request carrying the image", first)
    lib.check("Unable to process input image" in json.dumps(log[-1]["answer"]), "with Gemini's image error", log[-1]["answer"])
    sessions = _sessions(ctx)
    lib.check(len(sessions) == 1, "the CLI wrote one session file", sessions)
    session = _begun_a_minute_earlier(sessions[0])
    n = len(ctx.provider.model_requests("gemini"))
    again = _gemini(ctx, "--resume", "latest", "-p", "continue")
    lib.check(again.code != 0, "the CLI's own resume fails too", again)
    own = ctx.provider.model_requests("gemini")[n:]
    # (Its resume also sends the tool's response twice, which the provider refuses first.)
    lib.check(own and own[-1]["status"] == 400, "the resume meets a 400", [e["answer"] for e in own])
    # The resume appended to the session's file, and started an empty one beside it.
    return session, _session_of(session), own


def _differences(previewed, sent):
    """preview's contents against the request the CLI sent, part by part and
    byte for byte, but for what the CLI adds on resume (request_diff's Gemini
    artefacts: its closing placeholder, the new prompt, its fresh session context)."""
    want = request_diff.gemini_history(request_diff.gemini_resume(sent["body"]["contents"], "continue"))
    got = request_diff.gemini_history(previewed["contents"])
    return request_diff.items(got, want)


def _preview_matches(ctx, previewed, sent):
    diffs = _differences(previewed, sent)
    lib.check(not diffs, "preview equals what the CLI sent, part by part", "\n".join(diffs))
    for key in NOT_IN_SESSION:
        lib.check(key in sent["body"], "the CLI sends %s" % key, list(sent["body"]))


def _rescue(ctx, name, data, exclusion_note):
    session, old_id, own = _stuck_for_real(ctx, name, data)
    sb = ctx.sb
    before = session.read_bytes()
    r, d = lib.diagnose(sb, session)
    lib.check(d["stuck"] is True and r.code == 1, "diagnose calls the session stuck", r)
    lib.check(d["failure"]["class"] == "media_rejected", "the failure is media_rejected", r)
    prime = [s for s in d["suspects"] if s.get("prime")]
    lib.check(prime and name in json.dumps(prime), "the %s is the prime suspect" % name, r)
    lib.check(any("exclude" in n for n in d["next"]), "the next commands name exclude", r)
    x = sb.doctor("exclude", session, "--suspects")
    lib.check(x.code == 0, "exclude --suspects lands", x)

    p = sb.doctor("preview", session, "--json")
    lib.check(p.code == 0, "preview runs", p)
    blob = json.dumps(json.loads(p.stdout))
    lib.check(exclusion_note in blob, "preview carries the exclusion note", blob[:2000])
    lib.check(data not in blob.encode() and lib_b64(data) not in blob, "preview holds no copy of the broken bytes", blob[:2000])
    summary = json.loads(p.stderr.strip().splitlines()[-1])
    for key in ("system instruction", "tool declarations"):
        lib.check(any(key in n for n in summary.get("not_in_session", [])), "preview names the %s as not in the session" % key, p)

    # The CLI finds sessions in its chats folder: the copy goes beside the original.
    rep = sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    new_id = copy.get("id")
    resume = copy.get("resume") or ""
    lib.check(resume.startswith("gemini --resume "), "repair prints the CLI's resume command", copy)
    target = Path(copy["out"])
    lib.check(target.parent == session.parent and target.name.startswith("session-"), "the copy sits in the chats folder, named as the CLI names sessions", copy)
    lib.check(_session_of(target) not in (None, old_id), "every id in the copy is the new one", _session_of(target), old_id)
    lib.check(_session_of(target) == resume.split()[-1], "the resume command names the copy's id", resume, _session_of(target))
    previewed, _ = lib.preview(sb, target)
    # A fresh copy: nothing sent from it yet, so no unrecorded failure can hide in it.
    r1, d1 = lib.diagnose(sb, target)
    lib.check(d1["stuck"] is False and r1.code == 0 and d1["verdict"].startswith("healthy"), "diagnose on the fresh copy says healthy", r1)
    n = len(ctx.provider.model_requests("gemini"))
    again = ctx.sb.run([ctx.exe, *resume.split()[1:], "-p", "continue"], env=_env(ctx))
    lib.check(again.code == 0, "the resume command repair printed exits 0", again)
    sent = ctx.provider.model_requests("gemini")[n:]
    lib.check(sent and all(e["status"] == 200 for e in sent), "the provider answered 200", sent)
    _preview_matches(ctx, previewed, sent[0])
    lib.rescued(sb, own, session, before, target, _differences(previewed, sent[0]))
    return new_id


def _estimated_as_its_copy(ctx, session):
    """--fit-context estimates what the copy sends (one response per call, no
    copied or repeated one, nor their images): the original estimates as a
    plain repaired copy does (no cap: a cap's note is no part of it)."""
    whole = ctx.sb.work / "uncapped"
    whole.mkdir()
    rep = ctx.sb.doctor("repair", session, "--out", whole, "--json")
    lib.check(rep.code == 0, "repair writes an uncapped copy", rep)
    window = ["--fit-context", "--context-tokens", "1000000"]
    est = lib.preview(ctx.sb, session, *window)[1]["changes"]["context"]
    est_copy = lib.preview(ctx.sb, rep.json()["out"], *window)[1]["changes"]["context"]
    lib.check(est["before"] == est_copy["before"], "the estimate of the original is that of its copy", est, est_copy)


def lib_b64(data):
    import base64

    return base64.b64encode(data).decode()


def scenario_cut_png_rescued(ctx):
    """A cut PNG read by read_file: stuck for real, then rescued end to end."""
    _rescue(ctx, "shot.png", lib.cut_png(), "[Attachment omitted: ")


def scenario_cut_jpeg_rescued(ctx):
    """The same with a JPEG cut short: Gemini CLI attaches it as image/jpeg."""
    _rescue(ctx, "photo.jpg", lib.cut_jpeg(), "[Attachment omitted: ")


def scenario_tool_resume_rescued(ctx):
    """A text file read, then resumed: the CLI sends the one function response
    twice on resume and Gemini refuses it (gemini-cli#16212); diagnose says so,
    and the repaired copy, holding the response once, resumes with a 200."""
    _setup(ctx, "notes.txt", b"hello notes\n")
    first = _gemini(ctx, "-p", "READ-THE-FILE notes.txt", "--yolo")
    lib.check(first.code == 0, "the first run succeeds", first)
    session = _begun_a_minute_earlier(_sessions(ctx)[0])
    n = len(ctx.provider.model_requests("gemini"))
    again = _gemini(ctx, "--resume", "latest", "-p", "continue")
    lib.check(again.code != 0, "the CLI's own resume fails", again)
    own = ctx.provider.model_requests("gemini")[n:]
    lib.check(own, "the CLI's own resume sent a request", again)
    sent = own[-1]
    responses = [p for c in sent["body"]["contents"] for p in c["parts"] if "functionResponse" in p]
    lib.check(len(responses) == 2, "the resume sends the one function response twice", responses)
    lib.check(sent["status"] == 400 and "number of function response parts" in json.dumps(sent["answer"]), "and Gemini's 400 answers it", sent["answer"])
    before = session.read_bytes()
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is True and r.code == 1, "diagnose calls the session stuck", r)
    lib.check(d["failure"]["class"] == "history_invalid", "for its history", r)
    lib.check(any(h["kind"] == "duplicate_result" for h in d["history"]), "a second response to one call", r)
    rep = ctx.sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    previewed, _ = lib.preview(ctx.sb, copy["out"])
    resume = copy.get("resume") or ""
    n = len(ctx.provider.model_requests("gemini"))
    again = ctx.sb.run([ctx.exe, *resume.split()[1:], "-p", "continue"], env=_env(ctx))
    lib.check(again.code == 0, "the resume command repair printed exits 0", again)
    sent = ctx.provider.model_requests("gemini")[n:]
    lib.check(sent and all(e["status"] == 200 for e in sent), "the provider answered 200", sent)
    responses = [p for c in sent[0]["body"]["contents"] for p in c["parts"] if "functionResponse" in p]
    lib.check(len(responses) == 1, "the copy's resume sends the response once", responses)
    _preview_matches(ctx, previewed, sent[0])
    _estimated_as_its_copy(ctx, session)
    lib.rescued(ctx.sb, own, session, before, copy["out"], _differences(previewed, sent[0]))


def scenario_model_switch_to_gemini_3(ctx):
    """A tool call recorded on gemini-2.5-flash (Gemini gives it no thought
    signature, and the CLI records none), then the model switched to a Gemini 3
    one, which refuses a call without a signature in the current turn ("Function
    call is missing a thought_signature"). The CLI cannot be driven into that
    refusal by a resume: the new prompt starts a new turn, Gemini checks only the
    current one, and the CLI puts Google's placeholder on the current turn's
    unsigned calls itself. Once its repeated response is repaired, the copy
    resumes on gemini-3 with a 200, the old call sent unsigned."""
    _setup(ctx, "notes.txt", b"hello notes\n")
    first = _gemini(ctx, "-p", "READ-THE-FILE notes.txt", "--yolo")
    lib.check(first.code == 0, "the first run on gemini-2.5-flash succeeds", first)
    session = _sessions(ctx)[0]
    lib.check("thoughtSignature" not in session.read_text(), "the session records no signature")
    settings = ctx.sb.home / ".gemini" / "settings.json"
    s = json.loads(settings.read_text())
    s["model"]["name"] = "gemini-3-pro-preview"
    settings.write_text(json.dumps(s))
    rep = ctx.sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy without the repeated response", rep)
    copy = rep.json()
    n = len(ctx.provider.model_requests("gemini"))
    again = ctx.sb.run([ctx.exe, *copy["resume"].split()[1:], "-p", "continue"], env=_env(ctx))
    sent = ctx.provider.model_requests("gemini")[n:]
    lib.check(again.code == 0 and sent and all(e["status"] == 200 for e in sent), "the copy resumes on gemini-3 with a 200", again, sent)
    lib.check("gemini-3" in sent[0]["path"], "the request went to the Gemini 3 model", sent[0].get("path"))
    calls = [p for c in sent[0]["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    lib.check(calls and not any(p.get("thoughtSignature") for p in calls), "the old call is sent unsigned: it is not in the current turn", calls)
    r, d = lib.diagnose(ctx.sb, Path(copy["out"]))
    lib.check(d["stuck"] is False, "diagnose on the resumed copy says not stuck", r)


def scenario_unsigned_gemini_3_call_signed_by_the_cli(ctx):
    """gemini-3-pro-preview behind a gateway that drops thought signatures (the
    fake's ``drop_signatures``): the CLI is answered with an unsigned call, and
    in the turn's next step sends it with Google's placeholder
    (`skip_thought_signature_validator`, its `ensureActiveLoopHasThoughtSignatures`):
    Gemini 3 takes it, the run succeeds, and diagnose blames no signature. pi, sent
    the same answer, is refused (pi_proxy.py); the CLI needs no proxy."""
    _setup(ctx, "notes.txt", b"hello notes\n")
    settings = ctx.sb.home / ".gemini" / "settings.json"
    s = json.loads(settings.read_text())
    s["model"]["name"] = "gemini-3-pro-preview"
    settings.write_text(json.dumps(s))
    ctx.provider.settings.drop_signatures = True
    run = _gemini(ctx, "-p", "READ-THE-FILE notes.txt", "--yolo")
    sent = ctx.provider.model_requests("gemini")
    steps = [e for e in sent if any("functionResponse" in p for c in e["body"]["contents"] for p in c["parts"])]
    lib.check(run.code == 0 and steps and all(e["status"] == 200 for e in sent), "the run succeeds on gemini-3 with every request a 200", run, [(e["path"], e["status"]) for e in sent])
    lib.check(all("gemini-3" in e["path"] for e in steps), "the turn's next step went to the Gemini 3 model", [e["path"] for e in steps])
    calls = [p for c in steps[0]["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    lib.check(calls and calls[0].get("thoughtSignature") == "skip_thought_signature_validator", "the CLI sends the unsigned call with Google's placeholder", calls)
    r, d = lib.diagnose(ctx.sb, _sessions(ctx)[0])
    # What it predicts for a resume is the response the CLI sends twice (see NOTES), not a signature.
    failure = d.get("failure") or {}
    lib.check(failure.get("class") != "reasoning_rejected" and "thought_signature" not in json.dumps(d), "diagnose blames no signature", r)


def scenario_context_overflow_trimmed(ctx):
    """A read_file output that takes the history over the window (the fake's
    `context_tokens`): the request carrying it gets Gemini's INVALID_ARGUMENT
    "The input token count (X) exceeds the maximum number of tokens allowed
    (N)", and so does the CLI's own resume. The CLI records no failure in a
    headless run: diagnose, given that error, says context_overflow and offers
    --fit-context with the window the error states (--context-tokens N: repair
    cannot read an error the session does not hold). The trimmed copy (its
    repeated response left out too) resumes with a 200, the note in place of
    the output, as preview --fit-context shows."""
    from fake.provider import tokens_of

    _setup(ctx, "big.txt", (("%s\n" % ("z" * 59)) * 1500).encode())
    first = _gemini(ctx, "-p", "hello")
    lib.check(first.code == 0, "a first run measures the request without history", first)
    base = max(tokens_of(e["body"]) for e in ctx.provider.model_requests("gemini"))
    window = base + 8000
    ctx.provider.settings.context_tokens = window
    for old in _sessions(ctx):
        old.unlink()
    run = _gemini(ctx, "-p", "READ-THE-FILE big.txt", "--yolo")
    log = ctx.provider.model_requests("gemini")
    overflow = "exceeds the maximum number of tokens allowed (%d)" % window
    lib.check(run.code != 0 and log[-1]["status"] == 400 and overflow in json.dumps(log[-1]["answer"]), "the request carrying the output is refused as over the window", run, log[-1]["answer"])
    session = _begun_a_minute_earlier(_sessions(ctx)[0])
    again = _gemini(ctx, "--resume", "latest", "-p", "continue")
    log = ctx.provider.model_requests("gemini")
    lib.check(again.code != 0 and log[-1]["status"] == 400 and overflow in json.dumps(log[-1]["answer"]), "the CLI's own resume is refused for the same window", again, log[-1]["answer"])
    error = json.dumps(log[-1]["answer"])
    before = session.read_bytes()
    r, d = lib.diagnose(ctx.sb, session, "--error", error)
    lib.check(d["stuck"] is True and r.code == 1 and d["failure"]["class"] == "context_overflow", "diagnose given the CLI's error: stuck on context_overflow", r)
    flag = "--fit-context --context-tokens %d" % window
    lib.check(any(n.endswith(flag) and n.startswith("session-doctor repair ") for n in d["next"]), "next names repair %s" % flag, d["next"])
    lib.check(not any("--max-images" in n for n in d["next"]), "no --max-images 0: there is no image", d["next"])
    previewed, summary = lib.preview(ctx.sb, session, "--fit-context", "--context-tokens", str(window))
    rep = ctx.sb.doctor("repair", session, "--fit-context", "--context-tokens", str(window), "--json")
    lib.check(rep.code == 0, "repair --fit-context writes a copy", rep)
    copy = rep.json()
    print("    context estimate:", json.dumps(copy["changes"]["context"]))
    lib.check([e["kind"] for e in copy["changes"]["elided"]] == ["tool_output"], "the copy elides the one bulky output", copy["changes"])
    lib.check(copy["changes"]["context"]["after"] <= copy["changes"]["context"]["budget"], "its estimate fits the budget", copy["changes"]["context"])
    lib.check(session.read_bytes() == before, "the original session is byte-identical")
    n = len(ctx.provider.model_requests("gemini"))
    resumed = ctx.sb.run([ctx.exe, *copy["resume"].split()[1:], "-p", "continue"], env=_env(ctx))
    sent = ctx.provider.model_requests("gemini")[n:]
    lib.check(resumed.code == 0 and sent and all(e["status"] == 200 for e in sent), "the trimmed copy resumes with a 200", resumed, [(e["status"], e["answer"]) for e in sent][:1])
    responses = [p["functionResponse"] for c in sent[0]["body"]["contents"] for p in c["parts"] if "functionResponse" in p]
    lib.check(len(responses) == 1 and responses[0]["response"]["output"].startswith("[Tool output omitted to fit the context window: the output of read_file was "), "the copy sends the note in place of the output, once", responses)
    lib.check(tokens_of(sent[0]["body"]) <= window, "the request is within the window (%d <= %d)" % (tokens_of(sent[0]["body"]), window))
    _preview_matches(ctx, previewed, sent[0])
    lib.check(session.read_bytes() == before, "the resume wrote the copy, not the original")
    r2, d2 = lib.diagnose(ctx.sb, Path(copy["out"]))
    lib.check(d2["stuck"] is False, "diagnose on the resumed copy says not stuck", r2)


def scenario_killed_mid_tool(ctx):
    """A run killed (CLI and tool, SIGKILL) while its shell tool runs: the session
    holds no dangling call the CLI would send, its resume sends no trace of the
    call and gets a 200, and diagnose says healthy before and after."""
    import os
    import signal
    import subprocess
    import time

    _setup(ctx, "unused.txt", b"")
    ctx.provider.settings.tool = ("run_shell_command", {"command": "sleep 97", "description": "wait"})
    env = dict(ctx.sb.env, **_env(ctx))
    proc = subprocess.Popen([str(ctx.exe), "-p", "READ-THE-FILE now", "--yolo"], cwd=str(ctx.sb.work), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    running = False

    def tool_pids():
        # The CLI detaches its shell commands into a session of their own: find this
        # sandbox's command by its text and its working folder.
        found = subprocess.run(["pgrep", "-f", "sleep 97"], capture_output=True, text=True)
        mine = []
        for pid in (int(p) for p in found.stdout.split()):
            try:
                if os.readlink("/proc/%d/cwd" % pid) == str(ctx.sb.work):
                    mine.append(pid)
            except OSError:
                pass
        return mine

    try:
        for _ in range(lib.AGENT_TIMEOUT):
            if tool_pids():
                running = True
                break
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    finally:
        # Every process this run started, by id: first the CLI (it relaunches itself as a
        # child, so its whole process group, which it leads), then its tool.
        tools = tool_pids()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in tools:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
    lib.check(running, "the shell tool was running when the CLI was killed")
    session = _sessions(ctx)[0]
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose on the killed session says healthy", r)
    n = len(ctx.provider.model_requests("gemini"))
    again = _gemini(ctx, "--resume", "latest", "-p", "continue")
    lib.check(again.code == 0, "the CLI's resume succeeds", again)
    own = ctx.provider.model_requests("gemini")[n:]
    lib.check(own and own[0]["status"] == 200, "with a 200", [e["status"] for e in own])
    sent = own[0]
    calls = [p for c in sent["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    lib.check(not calls, "the resume sends no trace of the killed call", calls)
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose after the resume says healthy", r)


def scenario_too_many_images(ctx):
    """Three valid images read in one turn where the provider takes two: the CLI
    is stuck for real (its resume sends the same three) but records no failure,
    so diagnose given the CLI's error says image_limit with the limit from the
    message (and without it, does not call the session healthy), and the copy `repair
    --max-images 2` writes resumes with a 200 carrying two images, as its
    preview shows."""
    paths = [ctx.sb.work / ("p%d.png" % i) for i in range(3)]
    _setup(ctx, paths[0].name, lib.png(4, 4, (255, 0, 0)))
    for i, p in enumerate(paths[1:], 1):
        p.write_bytes(lib.png(4, 4, (0, i * 100, 0)))
    ctx.provider.settings.more_tools = [("read_file", {"file_path": str(p)}) for p in paths[1:]]
    ctx.provider.settings.max_images = 2
    first = _gemini(ctx, "-p", "READ-THE-FILE p0.png p1.png p2.png", "--yolo")
    lib.check(first.code != 0, "the first run fails", first)
    log = ctx.provider.model_requests("gemini")
    lib.check(log[-1]["status"] == 400 and "Too many images" in json.dumps(log[-1]["answer"]), "the provider refused three images", log[-1])
    session = _begun_a_minute_earlier(_sessions(ctx)[0])
    n = len(ctx.provider.model_requests("gemini"))
    again = _gemini(ctx, "--resume", "latest", "-p", "continue")
    own = ctx.provider.model_requests("gemini")[n:]
    lib.check(again.code != 0 and own and own[-1]["status"] == 400, "the CLI's own resume meets the same 400", again)
    lib.check(_copied_turns(session), "the resume's checkpoint holds every response in each call's result", session.read_text()[-2000:])
    # diagnose counts the responses the CLI sends when it resumes this file
    # (the copies in each call's result and the user message repeating them
    # alike), as the CLI's next resume then sends them.
    r, d = lib.diagnose(ctx.sb, session)
    repeats = [h for h in d["history"] if h["kind"] == "duplicate_result"]
    n = len(ctx.provider.model_requests("gemini"))
    _gemini(ctx, "--resume", _session_of(session), "-p", "continue")
    resent = ctx.provider.model_requests("gemini")[n:]
    lib.check(resent, "the CLI resumes the file again", resent)
    parts = [p for c in resent[0]["body"]["contents"] for p in c["parts"]]
    extra = sum("functionResponse" in p for p in parts) - sum("functionCall" in p for p in parts)
    lib.check(extra > 3 and len(repeats) == extra, "diagnose counted the %d responses past one per call the CLI then sent" % extra, len(repeats), d["verdict"])
    before = session.read_bytes()
    # A headless run records no failure (its `error` records are the interactive
    # UI's): the file alone cannot say the session is stuck, nor may it say healthy.
    r, d = lib.diagnose(ctx.sb, session)
    # What it can tell: the CLI's resume repeats each response (Gemini refuses that).
    lib.check(d["stuck"] is True and d["failure"]["class"] == "history_invalid", "diagnose without the error: stuck on the repeated responses", r)
    lib.check(any("--error" in n for n in d["next"]), "the next command gives the agent's error to diagnose", r)
    r, d = lib.diagnose(ctx.sb, session, "--error", json.dumps(log[-1]["answer"]))
    lib.check(d["stuck"] is True and r.code == 1 and d["failure"]["class"] == "image_limit", "diagnose: stuck on image_limit", r)
    lib.check(any("--max-images 2" in n for n in d["next"]), "the next commands name --max-images 2 (the limit in the message)", r)
    capped, _ = lib.preview(ctx.sb, session, "--max-images", "2")
    rep = ctx.sb.doctor("repair", session, "--max-images", "2", "--json")
    lib.check(rep.code == 0, "repair --max-images 2 writes a copy", rep)
    copy = rep.json()
    previewed, _ = lib.preview(ctx.sb, copy["out"])
    lib.check(request_diff.items(previewed["contents"], capped["contents"]) == [], "preview --max-images 2 of the original is the copy's preview", *request_diff.items(previewed["contents"], capped["contents"]))
    n = len(ctx.provider.model_requests("gemini"))
    resumed = ctx.sb.run([ctx.exe, *copy["resume"].split()[1:], "-p", "continue"], env=_env(ctx))
    lib.check(resumed.code == 0, "the resume command repair printed exits 0", resumed)
    sent = ctx.provider.model_requests("gemini")[n:]
    lib.check(sent and all(e["status"] == 200 for e in sent), "the provider answered 200", sent)
    inline = [p for c in sent[0]["body"]["contents"] for p in c["parts"] for p in [p, *((p.get("functionResponse") or {}).get("parts") or [])] if "inlineData" in p]
    lib.check(len(inline) == 2, "the copy's request carries two images", len(inline))
    _preview_matches(ctx, previewed, sent[0])
    _estimated_as_its_copy(ctx, session)
    lib.rescued(ctx.sb, own, session, before, copy["out"], _differences(previewed, sent[0]))
