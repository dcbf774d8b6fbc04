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


def compare_preview(ctx, session, request, *flags):
    """preview (with `flags`) against a logged request body, item by item."""
    r = ctx.sb.doctor("preview", session, "--json", *flags)
    lib.check(r.code == 0, "preview runs", r)
    body = json.loads(r.stdout)
    summary = json.loads(r.stderr.strip().splitlines()[-1])
    absent = summary.get("not_in_session") or []
    lib.check(any(INJECTED in a for a in absent), "preview names Codex's injected developer message as not in the session", r)
    sent = request["input"]
    # The injected developer message is the first item Codex sends; no rollout line holds it.
    lib.check(sent and sent[0].get("role") == "developer", "Codex sent a leading developer message", sent[:1])
    diffs = request_diff.items(body["input"], sent[1:])
    lib.check(not diffs, "preview equals the request Codex sent, item by item", *diffs)
    return body


# ------------------------------------------------------------------- scenarios


def scenario_reasoning_replayed_under_store_false(ctx):
    """Codex replays its rs_ reasoning item under store:false; the provider refuses it on every try."""
    p = ctx.provider.settings
    p.emit_reasoning = True
    p.reject_replayed_reasoning = True
    p.tool = ("view_image", {"path": "pic.png"})
    (ctx.sb.work / "pic.png").write_bytes(lib.png())
    env = setup(ctx)

    first = exec_(ctx, env, "READ-THE-FILE pic.png")
    sid = session_id_of(first)
    lib.check(failed_with(ctx, 1, 404), "the first run's second request (replaying rs_) gets a 404", first)
    session = rollout(ctx, sid)
    before = len(ctx.provider.model_requests())
    again = resume(ctx, env, sid)
    lib.check(failed_with(ctx, before, 404), "Codex's own resume fails the same way", again)
    lib.check(again.code != 0 or "404" in again.stderr, "the resume reports the failure", again)

    r, d = lib.diagnose(ctx.sb, session)
    lib.check(d["stuck"] and d["failure"]["class"] == "reasoning_rejected", "diagnose: stuck, reasoning_rejected", r)
    lib.check(any("--drop-reasoning-ids" in n for n in d["next"]), "next commands name --drop-reasoning-ids", r)

    compare_preview(ctx, session, ctx.provider.model_requests("responses")[-1]["body"])
    body = compare_preview_rewritten(ctx, session)
    lib.check(all(not str(i.get("id", "")).startswith("rs_") for i in body["input"] if i.get("type") == "reasoning"), "the preview's reasoning has no rs_ id", body)

    rep = ctx.sb.doctor("repair", session, "--drop-reasoning-ids", "--json")
    lib.check(rep.code == 0, "repair --drop-reasoning-ids writes a copy", rep)
    copy = rep.json()
    new_id = resume_id(copy)
    before = len(ctx.provider.model_requests())
    fixed = resume(ctx, env, new_id)
    lib.check(fixed.code == 0, "`codex exec resume <new id> continue` exits 0", fixed)
    lib.check(failed_with(ctx, before, 200), "the resumed copy gets a 200", fixed)
    r2, d2 = lib.diagnose(ctx.sb, copy["out"])
    lib.check(d2["stuck"] is False, "diagnose on the resumed copy: not stuck", r2)


def compare_preview_rewritten(ctx, session):
    r = ctx.sb.doctor("preview", session, "--drop-reasoning-ids")
    lib.check(r.code == 0, "preview --drop-reasoning-ids runs", r)
    return json.loads(r.stdout)
