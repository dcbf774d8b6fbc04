"""Claude Code 2.1.332's newer layouts, driven against the fake provider.

- **Forks.** `claude --resume ID --fork-session` writes a new session file that
  holds a full copy of the parent's records (new `sessionId`, the parent's id in
  `requestSessionId`): no pointer, nothing hydrated from the parent. A fork
  *subagent* (`Agent` with `subagent_type: "fork"`) is the one that points: its
  transcript `<session>/subagents/agent-<id>.jsonl` starts with a
  `fork-context-ref` record (`parentSessionId`, `parentLastUuid`).
- **Persisted tool results.** A text result over the tool's limit is written to
  `<session>/tool-results/<name>.txt` and the transcript (and every request)
  carries a `<persisted-output>` reference with a 2 KB preview instead.
- **Subagents.** `<session>/subagents/agent-<id>.jsonl` (`isSidechain: true`,
  `agentId`) and a `.meta.json` beside it; a subagent's requests are its own.
"""

import json

import lib
from lib import check

from . import claude_code as cc


def _fork(ctx, sid, prompt="continue"):
    argv = [ctx.exe, "--resume", sid, "--fork-session", "-p", prompt, "--output-format", "json"]
    r = ctx.sb.run(argv, env=cc._env(ctx))
    return r, cc._result(r)


def scenario_fork_of_a_stuck_session_is_rescued(ctx):
    """A fork of a stuck session is stuck the same way (it carries the parent's
    history); the fork is diagnosed, repaired and resumed with a 200."""
    f = cc._write(ctx, "cut.png", lib.cut_png())
    ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
    ctx.provider.settings.gateway = "litellm"
    parent = cc._stuck_twice(ctx, "READ-THE-FILE cut.png please")
    since = cc._mark(ctx)
    r, res = _fork(ctx, parent)
    # The fork's own run is the agent's resume of the session rescued here.
    ctx.own = cc._sent(ctx, since)
    fork = res.get("session_id")
    check(r.code != 0 and res.get("api_error_status") == 400 and fork and fork != parent, "the fork fails with a 400 too, under a new id", r)
    session = cc._session(ctx, fork)
    records = [json.loads(x) for x in session.read_text().splitlines()]
    check(any(x.get("requestSessionId") == parent for x in records), "the fork's copied records name the parent in requestSessionId", session)
    check(not any(x.get("type") == "fork-context-ref" for x in records), "a --fork-session fork is a full copy, not a pointer", session)
    session, copy, body = cc._rescue(ctx, fork, "media_rejected")
    check(not cc._media_blocks(body["messages"]), "the resumed copy of the fork sends no image", body["messages"])
    cc._check_preview_is_sent(ctx, session, body)
    cc._check_no_bytes(copy["out"], lib.cut_png())


def _persisted(ctx):
    """A Bash result over the limit: the session keeps a <persisted-output> reference."""
    (ctx.sb.work / "big.txt").write_text("".join("line %06d of a big file\n" % i for i in range(4000)))
    ctx.provider.settings.tool = ("Bash", {"command": "cat big.txt", "description": "Print the big file"})
    r, res = cc._run(ctx, "READ-THE-FILE big.txt please", tools="Bash")
    check(r.code == 0 and not res.get("is_error"), "the run finishes", r)
    session = cc._session(ctx, res["session_id"])
    saved = list((session.parent / session.stem / "tool-results").glob("*.txt"))
    check(len(saved) == 1, "the full output is saved under <session>/tool-results/", saved)
    return session, saved[0]


def scenario_persisted_result_is_previewed_as_sent_and_repaired(ctx):
    """The agent sends the reference and its preview, not the saved file: preview
    says the same; a missing saved file is a finding; the repaired copy resumes."""
    session, saved = _persisted(ctx)
    before = session.read_bytes()
    since = cc._mark(ctx)
    r, res = cc._resume(ctx, session.stem)
    check(r.code == 0, "the agent's own resume succeeds", r)
    body = cc._sent(ctx, since)[0]["body"]
    # preview is of the session the resume read, not of what the resume appended.
    session.write_bytes(before)
    check("<persisted-output>" in json.dumps(body) and "line 003999" not in json.dumps(body), "the request carries the reference and its preview, not the whole output", body["messages"][-3:])
    cc._check_preview_is_sent(ctx, session, body)
    rs = ctx.sb.doctor("scan", session, "--json")
    findings = rs.json()["findings"]
    check(not [x for x in findings if "tool-results" in x["message"]], "scan: a saved output that is there is no finding", rs)
    keep = saved.read_bytes()
    saved.unlink()
    rs = ctx.sb.doctor("scan", session, "--json")
    found = [x for x in rs.json()["findings"] if str(saved) in x["message"]]
    check(found and found[0]["line"] > 0, "scan: the missing saved output is a finding with its line", rs)
    saved.write_bytes(keep)
    # Nothing needs repairing: --force writes the copy anyway, as a user moving the session would.
    copy = ctx.sb.doctor("repair", session, "--out", session.parent, "--force", "--json").json()
    new_id = copy["resume"].split()[-1]
    since = cc._mark(ctx)
    r, res = cc._resume(ctx, new_id)
    check(r.code == 0 and not res.get("is_error"), "the repaired copy resumes", r)
    sent = cc._sent(ctx, since)
    check(sent and sent[0]["status"] == 200 and str(saved) in json.dumps(sent[0]["body"]), "its first request gets a 200 and still names the saved output", sent[:1])


def scenario_broken_image_in_a_subagent_leaves_the_parent_unstuck(ctx):
    """A subagent reads a cut PNG behind the gateway: only the subagent's
    requests carry it; the parent gets the failure as the Agent result and goes
    on. diagnose: the parent healthy; the subagent's file read as Claude Code,
    its failure found, and no `claude --resume` offered for it."""
    f = cc._write(ctx, "cut.png", lib.cut_png())
    p = ctx.provider.settings
    p.gateway = "litellm"
    p.tool = ("Agent", {"description": "look at it", "prompt": "LOOK-AT %s please" % f, "subagent_type": "general-purpose", "run_in_background": False})
    p.triggers = [("LOOK-AT", ("Read", {"file_path": str(f)}))]
    since = cc._mark(ctx)
    r, res = cc._run(ctx, "READ-THE-FILE spawn an agent", tools="Agent,Read")
    check(r.code == 0 and not res.get("is_error"), "the parent run finishes", r)
    sent = cc._sent(ctx, since)
    with_image = [e for e in sent if cc._media_blocks(e["body"]["messages"])]
    check(with_image and all(e["status"] == 400 for e in with_image), "the subagent's requests carry the image and fail", [e["status"] for e in sent])
    check(all("LOOK-AT" in json.dumps(e["body"]["messages"][:3]) for e in with_image), "only the subagent's requests carry it", len(with_image))
    parent = cc._session(ctx, res["session_id"])
    since = cc._mark(ctx)
    r2, _ = cc._resume(ctx, parent.stem)
    check(r2.code == 0 and cc._sent(ctx, since)[0]["status"] == 200, "the parent's own resume gets a 200: it is not stuck", r2)
    rd, d = lib.diagnose(ctx.sb, parent)
    check(d["stuck"] is False, "diagnose: the parent is not stuck", rd)
    subs = list((parent.parent / parent.stem / "subagents").glob("agent-*.jsonl"))
    check(len(subs) == 1, "the subagent's transcript is under <session>/subagents/", subs)
    rd, d = lib.diagnose(ctx.sb, subs[0])
    check(d["format"] == "claude-code" and d["failure"] and d["failure"]["class"] == "media_rejected", "diagnose reads the subagent's file as Claude Code and finds its failure", rd)
    check(not any("repair" in n for n in d["next"]), "diagnose offers no repair to resume a subagent's transcript", rd)
    ls = ctx.sb.doctor("sessions", "--agent", "claude-code", "--json")
    listed = json.dumps(ls.json())
    check(parent.name in listed and "subagents" not in listed, "sessions lists the parent, never the subagent's file", ls)
    rr = ctx.sb.doctor("repair", subs[0], "--out", ctx.sb.root)
    check("claude --resume" not in rr.stdout, "repair of a subagent's file prints no claude --resume (the agent resumes no subagent file)", rr)


def scenario_fork_subagent_carries_its_parents_broken_image(ctx):
    """A lenient provider took a cut PNG; a fork subagent started later sends it
    again in every request (the fork's file only points at the parent): scan of
    the fork's file finds it, naming the parent's ref."""
    f = cc._write(ctx, "cut.png", lib.cut_png())
    p = ctx.provider.settings
    p.check_media = False
    p.tool = ("Read", {"file_path": str(f)})
    r, res = cc._run(ctx, "READ-THE-FILE cut.png please")
    check(r.code == 0, "the lenient provider takes the cut PNG", r)
    sid = res["session_id"]
    p.tool = ("Agent", {"description": "fork it", "prompt": "carry on as a fork", "subagent_type": "fork", "run_in_background": False})
    since = cc._mark(ctx)
    r, _ = cc._resume(ctx, sid, "READ-THE-FILE fork now")
    check(r.code == 0, "the fork runs", r)
    parent = cc._session(ctx, sid)
    forks = list((parent.parent / parent.stem / "subagents").glob("agent-*.jsonl"))
    check(len(forks) == 1 and forks[0].read_text().startswith('{"type":"fork-context-ref"'), "the fork's transcript starts with a fork-context-ref", forks)
    fork_requests = [e for e in cc._sent(ctx, since) if "carry on as a fork" in json.dumps(e["body"]["messages"][-2:])]
    check(fork_requests and all(cc._media_blocks(e["body"]["messages"]) for e in fork_requests), "the fork's requests carry the parent's PNG", len(fork_requests))
    rs = ctx.sb.doctor("scan", forks[0], "--json")
    found = [x for x in rs.json()["findings"] if x.get("code") == "subagent.fork_media"]
    check(found and rs.code == 1, "scan of the fork finds the parent's broken image", rs)
