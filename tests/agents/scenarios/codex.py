"""Codex CLI 0.171.0 against the fake provider (OpenAI Responses over SSE).

Codex is pointed at the provider by ``$CODEX_HOME/config.toml``: a
``model_provider`` whose ``base_url`` is the provider's ``/v1``, ``wire_api =
"responses"`` and ``env_key`` naming the variable that holds a dummy key.
Retries are off (``request_max_retries``/``stream_max_retries = 0``) so that a
failure costs one request, not six with back-off. ``codex exec`` starts a
session; ``codex exec resume ID continue`` resumes one; rollouts are written to
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<uuid>.jsonl``.
"""

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import lib
import request_diff

MODEL = "gpt-5"

# What Codex sends that no rollout line holds: named by preview, skipped by the comparison.
INJECTED = "the leading developer message"


def setup(ctx):
    """config.toml in the sandbox's CODEX_HOME; returns the environment for codex."""
    home = ctx.sb.home / ".codex"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        'model = "%s"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\nbase_url = "%s/v1"\n'
        'wire_api = "responses"\nenv_key = "FAKE_OPENAI_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n' % (MODEL, ctx.provider.url)
    )
    return {"CODEX_HOME": str(home), "FAKE_OPENAI_KEY": "sk-fake"}


def sessions_dir(ctx):
    return ctx.sb.home / ".codex" / "sessions"


def exec_(ctx, env, prompt, *extra):
    return ctx.sb.run([ctx.exe, "exec", "--skip-git-repo-check", *extra, prompt], env=env)


def resume(ctx, env, session_id, prompt="continue"):
    return ctx.sb.run([ctx.exe, "exec", "resume", "--skip-git-repo-check", session_id, prompt], env=env)


def session_id_of(run):
    m = re.search(r"session id: ([0-9a-f-]{36})", run.stderr)
    lib.check(m, "codex printed its session id", run)
    return m.group(1)


def rollout(ctx, session_id):
    found = sorted(sessions_dir(ctx).rglob("rollout-*-%s.jsonl" % session_id))
    lib.check(len(found) == 1, "one rollout for session %s" % session_id, found)
    return found[0]


def resume_id(repair_json):
    """The session id in the resume command repair printed (`codex resume ID`)."""
    cmd = repair_json.get("resume") or ""
    m = re.search(r"codex resume ([0-9a-f-]{36})", cmd)
    lib.check(m, "repair printed a `codex resume ID` command", repair_json)
    return m.group(1)


def failed_with(ctx, since, status):
    """The model requests after index `since` all answered `status` (at least one)."""
    got = [e["status"] for e in ctx.provider.model_requests("responses")[since:]]
    return bool(got) and all(s == status for s in got)


def compare_preview(ctx, session, request, *flags, reply=0):
    """preview (with `flags`) against a logged request body, item by item; the session's
    last `reply` items are the model's answer to that request, not part of it."""
    body, diffs = preview_differences(ctx, session, request, *flags, reply=reply)
    lib.check(not diffs, "preview equals the request Codex sent, item by item", *diffs)
    return body


def preview_differences(ctx, session, request, *flags, reply=0):
    """(preview body, request_diff lines) of `compare_preview`."""
    r = ctx.sb.doctor("preview", session, "--json", *flags)
    lib.check(r.code == 0, "preview runs", r)
    body = json.loads(r.stdout)
    summary = json.loads(r.stderr.strip().splitlines()[-1])
    absent = summary.get("not_in_session") or []
    lib.check(any(INJECTED in a for a in absent), "preview names Codex's injected developer message as not in the session", r)
    sent = request["input"]
    # The injected developer message is the first item Codex sends; no rollout line holds it.
    want = request_diff.leading(sent, "role", "developer", "Codex's injected developer message")
    # The answer Codex appended after the request: items of the model's, none of them the user's.
    answer = body["input"][len(body["input"]) - reply :]
    lib.check(all(i.get("role") != "user" for i in answer), "the last %d previewed items are the model's answer" % reply, answer)
    return body, request_diff.items(body["input"][: len(body["input"]) - reply], want)


def _text(item):
    return " ".join(p.get("text", "") for p in item.get("content") or [] if isinstance(p, dict))


# ------------------------------------------------------------------- scenarios


def stuck_on_replayed_reasoning(ctx):
    """A session stuck for real on its replayed rs_ item: (env, session id, rollout)."""
    p = ctx.provider.settings
    p.emit_reasoning = True
    p.reject_replayed_reasoning = True
    p.tool = ("view_image", {"path": "pic.png"})
    (ctx.sb.work / "pic.png").write_bytes(lib.png())
    env = setup(ctx)

    sid, session, again = stuck_twice(ctx, env, "READ-THE-FILE pic.png", 1, 404, "the first run's second request (replaying rs_) gets a 404")
    lib.check(again.code != 0 or "404" in again.stderr, "the resume reports the failure", again)
    ctx.own = again.requests
    return env, sid, session


def stuck_twice(ctx, env, prompt, at, status, what):
    """The first run fails with `status` from request `at` on, and so does Codex's own
    resume: (session id, rollout, the resume's result)."""
    first = exec_(ctx, env, prompt)
    sid = session_id_of(first)
    lib.check(failed_with(ctx, at, status), what, first)
    session = rollout(ctx, sid)
    before = len(ctx.provider.model_requests("responses"))
    again = resume(ctx, env, sid)
    lib.check(failed_with(ctx, before, status), "Codex's own resume fails the same way", again)
    again.requests = ctx.provider.model_requests("responses")[before:]
    return sid, session, again


def scenario_reasoning_replayed_under_store_false(ctx):
    """Codex replays its rs_ reasoning item under store:false; the provider refuses it on every try."""
    env, sid, session = stuck_on_replayed_reasoning(ctx)

    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] and d["failure"]["class"] == "reasoning_rejected", "diagnose: stuck, reasoning_rejected", r)
    lib.check(any("--drop-reasoning-ids" in n for n in d["next"]), "next commands name --drop-reasoning-ids", r)

    compare_preview(ctx, session, ctx.provider.model_requests("responses")[-1]["body"])
    body = compare_preview_rewritten(ctx, session)
    lib.check(all(not str(i.get("id", "")).startswith("rs_") for i in body["input"] if i.get("type") == "reasoning"), "the preview's reasoning has no rs_ id", body)

    kept = session.read_bytes()
    rep = ctx.sb.doctor("repair", session, "--drop-reasoning-ids", "--json")
    lib.check(rep.code == 0, "repair --drop-reasoning-ids writes a copy", rep)
    copy = rep.json()
    new_id = resume_id(copy)
    before = len(ctx.provider.model_requests("responses"))
    fixed = resume(ctx, env, new_id)
    lib.check(fixed.code == 0, "`codex exec resume <new id> continue` exits 0", fixed)
    lib.check(failed_with(ctx, before, 200), "the resumed copy gets a 200", fixed)
    # The answer Codex appended to the copy: a reasoning item and the text.
    _, diffs = preview_differences(ctx, copy["out"], ctx.provider.model_requests("responses")[before]["body"], reply=2)
    lib.rescued(ctx.sb, ctx.own, session, kept, copy["out"], diffs)


def compare_preview_rewritten(ctx, session):
    r = ctx.sb.doctor("preview", session, "--drop-reasoning-ids")
    lib.check(r.code == 0, "preview --drop-reasoning-ids runs", r)
    return json.loads(r.stdout)


def start(ctx, env, prompt):
    """`codex exec PROMPT` in the background, in its own process group."""
    full = dict(ctx.sb.env, **env)
    argv = [str(ctx.exe), "exec", "--skip-git-repo-check", prompt]
    return subprocess.Popen(argv, cwd=str(ctx.sb.work), env=full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def wait_for_line(ctx, predicate, bound=60):
    """The rollout and line index of the first rollout line `predicate` accepts, polled up to `bound` seconds."""
    deadline = time.time() + bound
    while time.time() < deadline:
        for path in sessions_dir(ctx).rglob("rollout-*.jsonl"):
            for line in path.read_text(errors="replace").splitlines():
                try:
                    if predicate(json.loads(line)):
                        return path
                except ValueError:
                    pass
        time.sleep(0.1)
    return None


def scenario_killed_mid_tool(ctx):
    """A run killed while its shell call sleeps: Codex answers the orphaned call itself on resume."""
    ctx.provider.settings.tool = ("exec_command", {"cmd": "sleep 60", "yield_time_ms": 30000})
    env = setup(ctx)
    proc = start(ctx, env, "READ-THE-FILE and wait")
    try:
        session = wait_for_line(ctx, lambda v: v.get("type") == "response_item" and v["payload"].get("type") == "function_call")
        lib.check(session, "Codex wrote the shell call before running it")
        time.sleep(1)  # let the shell start, so the kill lands mid-tool
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    lines = [json.loads(x) for x in session.read_text().splitlines() if x.strip()]
    outputs = [x for x in lines if x.get("type") == "response_item" and x["payload"].get("type") == "function_call_output"]
    lib.check(not outputs, "the kill left the call without its output", session.read_text()[-2000:])

    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: not stuck (Codex answers the call on resume)", r)
    notes = " ".join(d.get("notes") or [])
    lib.check("aborted" in notes, "diagnose notes that Codex answers the call with \"aborted\"", r)
    lib.check(not d.get("history"), "diagnose lists no structural problem", r)
    x = ctx.sb.doctor("preview", session)
    lib.check(x.code == 0, "preview runs", x)
    previewed = json.loads(x.stdout)["input"]

    sid = re.search(r"([0-9a-f-]{36})\.jsonl$", session.name).group(1)
    before = len(ctx.provider.model_requests())
    again = resume(ctx, env, sid)
    lib.check(again.code == 0 and failed_with(ctx, before, 200), "Codex's own resume gets a 200", again)
    sent = ctx.provider.model_requests("responses")[before]["body"]["input"]
    lib.check(_text(sent[-1]) == "continue", "the resume request ends with the resume prompt", sent[-1:])
    diffs = request_diff.items(previewed, sent[1:-1], normalise=request_diff.codex_aborted)
    lib.check(not diffs, "the preview before the resume equals what Codex sent (the resume prompt aside)", *diffs)
    r2, d2 = lib.diagnose(ctx.sb, session)
    lib.check(d2["stuck"] is False, "diagnose after Codex's resume: not stuck", r2)


def _lines(path):
    return [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]


def _write_lines(path, lines):
    Path(path).write_text("".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n" for v in lines))


def _item(v, ty, role=None):
    p = v.get("payload") or {}
    return v.get("type") == "response_item" and p.get("type") == ty and (role is None or p.get("role") == role)


def scenario_orphan_output_after_a_turn_without_call(ctx):
    """Issue 18 item 12, for Codex: an output without its call right after an assistant turn
    that made no call. Codex drops such an output itself before it sends: not stuck, and
    preview leaves it out as Codex does."""
    ctx.provider.settings.tool = ("view_image", {"path": "pic.png"})
    (ctx.sb.work / "pic.png").write_bytes(lib.png())
    env = setup(ctx)
    first = exec_(ctx, env, "hello")
    lib.check(first.code == 0, "the first turn answers", first)
    sid = session_id_of(first)
    second = resume(ctx, env, sid, "READ-THE-FILE pic.png")
    lib.check(second.code == 0, "the second turn calls view_image and answers", second)
    session = rollout(ctx, sid)
    lines = _lines(session)
    # Cut the second turn's prompt and call: its output now follows the first turn's answer.
    prompt = max(i for i, v in enumerate(lines) if _item(v, "message", "user"))
    call = next(i for i, v in enumerate(lines) if _item(v, "function_call"))
    lib.check(_item(lines[prompt - 1 - next(k for k, v in enumerate(reversed(lines[:prompt])) if v.get("type") == "response_item")], "message", "assistant"), "the turn before is an answer without a call", lines[:prompt])
    broken = ctx.sb.root / "orphan" / session.name
    broken.parent.mkdir()
    _write_lines(broken, [v for i, v in enumerate(lines) if i not in (prompt, call)])

    r, d = lib.diagnose(ctx.sb, broken)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: not stuck (Codex leaves the orphan out)", r)
    lib.check("leaves it out" in " ".join(d.get("notes") or []), "diagnose notes that Codex leaves the output out", r)
    x = ctx.sb.doctor("preview", broken)
    lib.check(x.code == 0, "preview runs", x)
    previewed = json.loads(x.stdout)["input"]
    lib.check(not any(i.get("type") == "function_call_output" for i in previewed), "the preview leaves the orphan out", previewed)

    # Codex itself, resuming the cut rollout from its sessions folder.
    shutil_target = session.parent / broken.name.replace(sid, "00000000-0000-4000-8000-000000000012")
    lines2 = _lines(broken)
    for v in lines2:
        if v.get("type") == "session_meta":
            v["payload"]["id"] = v["payload"]["session_id"] = "00000000-0000-4000-8000-000000000012"
    _write_lines(shutil_target, lines2)
    before = len(ctx.provider.model_requests())
    again = resume(ctx, env, "00000000-0000-4000-8000-000000000012")
    lib.check(again.code == 0 and failed_with(ctx, before, 200), "Codex resumes the cut rollout with a 200", again)
    sent = ctx.provider.model_requests("responses")[before]["body"]["input"]
    diffs = request_diff.items(previewed, sent[1:-1])
    lib.check(not diffs, "the preview equals what Codex sent (the resume prompt aside)", *diffs)


def _refused(ctx, env, run, refusal):
    """What holds when Codex refused an undecodable image itself: the request carried its
    refusal text and no image, got a 200, and session-doctor neither calls the session stuck
    nor brings the image back."""
    lib.check(run.code == 0, "Codex answers", run)
    reqs = ctx.provider.model_requests("responses")
    lib.check(reqs and all(e["status"] == 200 for e in reqs), "every request got a 200", run)
    sent = reqs[-1]["body"]["input"]
    lib.check(refusal in json.dumps(sent), "Codex sent its own refusal text", sent[-2:])
    lib.check("input_image" not in json.dumps(sent), "Codex sent no image", sent[-2:])
    session = rollout(ctx, session_id_of(run))
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: not stuck", r)
    lib.check(not d["suspects"], "diagnose names no suspect (the session holds no image)", r)
    compare_preview(ctx, session, {"input": sent}, reply=1)
    out = ctx.sb.root / "copy"
    out.mkdir()
    # Nothing to repair: --force writes the copy anyway, to show it keeps the refusal.
    rep = ctx.sb.doctor("repair", session, "--out", out, "--json", "--force")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    text = Path(rep.json()["out"]).read_text()
    lib.check(refusal in text and "data:image" not in text, "the copy keeps Codex's refusal and holds no image", rep)


def scenario_cut_png_refused_by_view_image(ctx):
    """view_image of a cut PNG: Codex answers the call with its own refusal; not stuck."""
    ctx.provider.settings.tool = ("view_image", {"path": "cut.png"})
    (ctx.sb.work / "cut.png").write_bytes(lib.cut_png())
    env = setup(ctx)
    run = exec_(ctx, env, "READ-THE-FILE cut.png")
    _refused(ctx, env, run, "unable to process image: invalid or unsupported image data")


def scenario_cut_png_refused_as_attachment(ctx):
    """`codex exec --image cut.png`: Codex sends a note in the image's place; not stuck."""
    (ctx.sb.work / "cut.png").write_bytes(lib.cut_png())
    env = setup(ctx)
    run = exec_(ctx, env, "look", "--image=%s" % (ctx.sb.work / "cut.png"))
    _refused(ctx, env, run, "image content omitted because it could not be processed")


def scenario_valid_png_over_the_image_limit(ctx):
    """A valid PNG by view_image that the provider refuses anyway (too many images for one
    request): stuck for real; the rescue drops the image and Codex's resume gets a 200."""
    p = ctx.provider.settings
    p.tool = ("view_image", {"path": "pic.png"})
    p.max_images = 0
    (ctx.sb.work / "pic.png").write_bytes(lib.png())
    env = setup(ctx)
    _, session, again = stuck_twice(ctx, env, "READ-THE-FILE pic.png", 1, 400, "the request carrying the image gets a 400")
    kept = session.read_bytes()

    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is True and r.code == 1 and d["failure"]["class"] == "image_limit", "diagnose: stuck, image_limit", r)
    lib.check(any(n.startswith("session-doctor repair") and n.endswith("--max-images 0") for n in d["next"]), "next names repair --max-images 0", r)
    compare_preview(ctx, session, ctx.provider.model_requests("responses")[-1]["body"])
    rep = ctx.sb.doctor("repair", session, "--max-images", "0", "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    before = len(ctx.provider.model_requests("responses"))
    fixed = resume(ctx, env, resume_id(copy))
    lib.check(fixed.code == 0 and failed_with(ctx, before, 200), "`codex exec resume <new id> continue` gets a 200", fixed)
    _, diffs = preview_differences(ctx, copy["out"], ctx.provider.model_requests("responses")[before]["body"], reply=1)
    lib.rescued(ctx.sb, again.requests, session, kept, copy["out"], diffs)


def scenario_repair_out_dir_outside_sessions(ctx):
    """`repair --out DIR`: Codex resumes only from its sessions folder, so repair says so and
    its resume command moves the copy there; that command, run as printed, gets a 200."""
    env, sid, session = stuck_on_replayed_reasoning(ctx)
    out = ctx.sb.root / "elsewhere"
    out.mkdir()
    rep = ctx.sb.doctor("repair", session, "--drop-reasoning-ids", "--out", out, "--json")
    lib.check(rep.code == 0, "repair writes the copy into DIR", rep)
    copy = rep.json()
    lib.check(Path(copy["out"]).parent == out, "the copy is where --out asked", copy)
    new_id = resume_id(copy)
    lost = resume(ctx, env, new_id)
    lib.check(lost.code != 0 and "no rollout found" in lost.stderr, "Codex does not find a rollout outside its sessions folder", lost)
    lib.check("sessions folder" in (copy.get("resume_note") or ""), "repair says the copy must move into Codex's sessions folder", copy)
    text = ctx.sb.doctor("repair", session, "--drop-reasoning-ids", "--out", out)
    lib.check("sessions folder" in text.stdout, "repair's text report says so too", text)
    move = copy["resume"].split(" && ")[0]
    lib.check(move.startswith("mv "), "the resume command moves the copy first", copy)
    kept = session.read_bytes()
    moved = ctx.sb.run(["sh", "-c", move])
    lib.check(moved.code == 0, "the move runs", moved)
    target = Path(shlex.split(move)[-1])
    target = target / Path(copy["out"]).name if target.is_dir() else target
    lib.check(target.is_file() and not Path(copy["out"]).exists(), "the copy moved to %s" % target, move)
    before = len(ctx.provider.model_requests())
    fixed = resume(ctx, env, new_id)
    lib.check(fixed.code == 0 and failed_with(ctx, before, 200), "after the move, Codex's resume gets a 200", fixed)
    _, diffs = preview_differences(ctx, target, ctx.provider.model_requests("responses")[before]["body"], reply=2)
    lib.rescued(ctx.sb, ctx.own, session, kept, target, diffs)


def scenario_valid_png_the_provider_cannot_process(ctx):
    """A valid PNG by view_image that this provider cannot process (its own invalid-image
    400 with the block path `input[N].output[0].image_url`), after an earlier image it took:
    diagnose must map the path through Codex's numbering (its injected developer message
    first) to the second PNG, and the rescue must land."""
    p = ctx.provider.settings
    (ctx.sb.work / "ok.png").write_bytes(lib.png(4, 4, (0, 255, 0)))
    bad = lib.png(8, 8, (0, 0, 255))
    (ctx.sb.work / "bad.png").write_bytes(bad)
    p.refuse_image = bad
    env = setup(ctx)
    p.tool = ("view_image", {"path": "ok.png"})
    first = exec_(ctx, env, "READ-THE-FILE ok.png")
    lib.check(first.code == 0, "the first image is taken", first)
    sid = session_id_of(first)
    p.tool = ("view_image", {"path": "bad.png"})
    before = len(ctx.provider.model_requests())
    second = resume(ctx, env, sid, "READ-THE-FILE bad.png")
    lib.check(failed_with(ctx, before + 1, 400), "the request carrying bad.png gets a 400", second)
    session = rollout(ctx, sid)
    before = len(ctx.provider.model_requests())
    again = resume(ctx, env, sid)
    lib.check(failed_with(ctx, before, 400), "Codex's own resume fails the same way", again)
    own = ctx.provider.model_requests("responses")[before:]
    kept = session.read_bytes()
    answer = ctx.provider.log[-1]["answer"]
    block = answer["error"]["param"]

    # Codex records only its paraphrase ("Invalid image in your last message…", "bad_request"):
    # the only suspect is the image the model has not accepted yet.
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] and d["failure"]["class"] == "media_rejected", "diagnose: stuck, media_rejected", r)
    lib.check([s.get("name") for s in d["suspects"]] == ["bad.png"], "the one suspect is bad.png", r)
    # Given the provider's own reply, the blamed block maps through Codex's numbering
    # (its injected developer message is input[0]) to bad.png.
    r1, d1 = lib.diagnose(ctx.sb, session, "--error", json.dumps(answer))
    prime = [s.get("name") for s in d1["suspects"] if s.get("prime")]
    lib.check(block.startswith(d1["failure"]["block"] or "-") and prime == ["bad.png"], "%s names bad.png as the prime suspect" % block, r1)
    compare_preview(ctx, session, ctx.provider.model_requests("responses")[-1]["body"])
    x = ctx.sb.doctor("exclude", session, "--suspects")
    lib.check(x.code == 0, "exclude --suspects lands", x)
    rep = ctx.sb.doctor("repair", session, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    before = len(ctx.provider.model_requests())
    fixed = resume(ctx, env, resume_id(copy))
    lib.check(fixed.code == 0 and failed_with(ctx, before, 200), "`codex exec resume <new id> continue` gets a 200", fixed)
    _, diffs = preview_differences(ctx, copy["out"], ctx.provider.model_requests("responses")[before]["body"], reply=1)
    lib.rescued(ctx.sb, own, session, kept, copy["out"], diffs)



def scenario_context_overflow_trimmed(ctx):
    """A shell output that takes the history over the window (the fake's
    `context_tokens`): the request carrying it gets the Responses API's
    `context_length_exceeded` and the run ends ("Codex ran out of room in the
    model's context window"). Codex marks its window full in the rollout's
    last token count, so its own resume compacts first (its summary request,
    without tools and instructions, fits here) and gets a 200: diagnose says
    context_overflow but not stuck ("Codex compacts it on resume"), with no
    next command, and the resume checked last proves it. `repair
    --fit-context` still gives a copy that keeps the history (that body states
    no count, so the window is given, `--context-tokens`): it resumes with a
    200, the note in place of the output, as previewed."""
    env = setup(ctx)
    first = exec_(ctx, env, "hello")
    lib.check(first.code == 0, "a first run measures the request without history", first)
    from fake.provider import tokens_of

    base = max(tokens_of(e["body"]) for e in ctx.provider.model_requests("responses"))
    window = base + 1500
    ctx.provider.settings.context_tokens = window
    (ctx.sb.work / "big.txt").write_text(("%s\n" % ("z" * 59)) * 4000)
    ctx.provider.settings.tool = ("exec_command", {"cmd": "cat big.txt", "yield_time_ms": 10000})
    since = len(ctx.provider.model_requests())
    run = exec_(ctx, env, "READ-THE-FILE big.txt")
    ctx.provider.settings.tool = None
    sid = session_id_of(run)
    got = ctx.provider.model_requests("responses")[since:]
    lib.check(got and got[-1]["status"] == 400 and "context_length_exceeded" in json.dumps(got[-1]["answer"]), "the request carrying the output is refused as over the window", [(e["status"], e["answer"]) for e in got])
    lib.check("ran out of room in the model's context window" in run.stderr, "Codex stops: out of room", run)
    session = rollout(ctx, sid)
    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] is False and r.code == 0 and d["failure"]["class"] == "context_overflow", "diagnose: context_overflow, not stuck", r)
    lib.check(d["verdict"].startswith("not stuck: Codex compacts it on resume") and d["next"] == [], "diagnose: Codex compacts it on resume, nothing to run", r)
    kept = session.read_bytes()
    rep = ctx.sb.doctor("repair", session, "--out", session.parent, "--json", "--fit-context", "--context-tokens", str(window))
    lib.check(rep.code == 0, "repair --fit-context writes a copy", rep)
    copy = rep.json()
    r2, d2 = lib.diagnose(ctx.sb, copy["out"])
    lib.check(d2["stuck"] is False, "diagnose on the copy says not stuck", r2)
    lib.check(copy["changes"]["elided"], "the copy elides the output", copy["changes"])
    print("    context estimate:", json.dumps(copy["changes"]["context"]))
    before = len(ctx.provider.model_requests())
    fixed = resume(ctx, env, resume_id(copy))
    lib.check(fixed.code == 0 and failed_with(ctx, before, 200), "`codex exec resume <new id> continue` gets a 200", fixed)
    sent = ctx.provider.model_requests("responses")[before]["body"]
    lib.check("Tool output omitted to fit the context window" in json.dumps(sent["input"]), "the copy sends the note in place of the output")
    lib.check(session.read_bytes() == kept, "the original rollout is byte-identical")
    before = len(ctx.provider.model_requests())
    own = resume(ctx, env, sid)
    lib.check(own.code == 0 and "context compacted" in own.stderr and failed_with(ctx, before, 200), "Codex's own resume compacts first and gets a 200 (0.171's local compaction)", own)
