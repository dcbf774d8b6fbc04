"""Claude Code's request per model family (issue 39).

Claude Code 2.1.332 sends its `renderedRole: "system"` attachments as
`role: "system"` messages inside `messages` only on a model that takes
mid-conversation system turns (claude-opus-4-8 and later, and models it does
not know); on an older one (claude-sonnet-4-5 here) the same attachments are
`<system-reminder>` text of the user turn. Each scenario drives the same
rescue on both families and compares preview with every request the agent
sent, failing on any difference.
"""

import json
from pathlib import Path

import lib
from lib import check
from scenarios.claude_code import _check_no_bytes, _env, _mark, _media_blocks, _normalise, _result, _sent, _session, unmerge

# The default model (takes system turns) and one of the family before it.
MODELS = ("claude-opus-5-5", "claude-sonnet-4-5")


def _run(ctx, model, prompt):
    r = ctx.sb.run([ctx.exe, "--model", model, "-p", prompt, "--allowedTools", "Read", "--output-format", "json"], env=_env(ctx))
    return r, _result(r)


def _resume(ctx, model, sid, prompt="continue"):
    r = ctx.sb.run([ctx.exe, "--model", model, "--resume", sid, "-p", prompt, "--output-format", "json"], env=_env(ctx))
    return r, _result(r)


def _upto_prompt(session, prompt, out):
    """Writes to `out` the session as it was when the agent sent the request
    for `prompt`: every line before the first assistant line after the
    prompt's own user line (the attachments the agent wrote with it included)."""
    lines = Path(session).read_bytes().splitlines(keepends=True)
    at = max(i for i, l in enumerate(lines) if _prompt_of(l) == prompt)
    end = next((i for i in range(at + 1, len(lines)) if json.loads(lines[i]).get("type") == "assistant"), len(lines))
    out.write_bytes(b"".join(lines[:end]))
    return out


def _prompt_of(line):
    v = json.loads(line)
    if v.get("type") != "user":
        return None
    c = v.get("message", {}).get("content")
    return c if isinstance(c, str) else None


def _resume_matches(ctx, model, session, sid, what, prompt="continue"):
    """Resumes `sid` on `model`: preview of the session as it was when the
    agent sent its first request is that whole request. Returns (run, result, requests)."""
    since = _mark(ctx)
    r, res = _resume(ctx, model, sid, prompt)
    sent = _sent(ctx, since)
    check(sent, "the resume sent a request", r)
    body = sent[0]["body"]
    check(body.get("model") == model, "the request went to %s" % model, body.get("model"))
    upto = _upto_prompt(session, prompt, ctx.sb.work / ("upto-%d.jsonl" % since))
    _, shown = lib.preview_messages(ctx.sb, upto)
    diff = lib.message_differences(shown, body["messages"], _normalise)
    check(not diff, "on %s, preview of %s is the request Claude Code sends (%d differences)" % (model, what, len(diff)), "\n".join(diff[:8]))
    return r, res, sent


def _one_model(ctx, model, name, data):
    """A cut file read behind a gateway on `model`: stuck; preview of the stuck
    session = its own resume's request; rescued; preview of the copy = the
    copy's resume request; two turns later preview = sent again."""
    f = ctx.sb.work / name
    f.write_bytes(data)
    ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
    ctx.provider.settings.gateway = "litellm"
    r, res = _run(ctx, model, "READ-THE-FILE %s please" % name)
    check(r.code != 0 and res.get("api_error_status") == 400, "on %s the first run fails with a 400" % model, r)
    sid = res["session_id"]
    session = _session(ctx, sid)
    r, res, _ = _resume_matches(ctx, model, session, sid, "the stuck session")
    check(r.code != 0 and res.get("api_error_status") == 400, "on %s the agent's own resume fails the same way" % model, r)
    d, copy = lib.rescue_steps(ctx.sb, session, "media_rejected", session.parent)
    new_id = copy["resume"].split()[-1]
    r, res, sent = _resume_matches(ctx, model, copy["out"], new_id, "the repaired copy")
    check(r.code == 0 and not res.get("is_error"), "on %s claude --resume <copy> -p continue succeeds" % model, r)
    check(sent[0]["status"] == 200, "the copy's first request gets a 200", sent[:1])
    check(not _media_blocks(sent[0]["body"]["messages"]), "the copy sends no broken file", sent[0]["body"]["messages"])
    _check_no_bytes(copy["out"], data)
    # Two more turns on the copy: reminders, answers and prompts pile up.
    for prompt in ("and now?", "once more"):
        r, _, _ = _resume_matches(ctx, model, copy["out"], new_id, "the copy before %r" % prompt, prompt)
        check(r.code == 0, "on %s the copy resumes again" % model, r)


def _both(ctx, name, data):
    for model in MODELS:
        _one_model(ctx, model, "%s-%s" % (model, name), data)


def scenario_cut_png_on_two_model_families(ctx):
    _both(ctx, "cut.png", lib.cut_png())


def scenario_cut_pdf_on_two_model_families(ctx):
    _both(ctx, "cut.pdf", lib.cut_pdf())
