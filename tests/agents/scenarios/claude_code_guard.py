"""Claude Code with `session-doctor guard install claude-code`: never stuck on a broken file.

Behind a gateway whose wording Claude Code does not know, a Read of a cut PNG
leaves the session stuck (see claude_code.py). With the guard's PreToolUse hook
installed the Read is denied with a reason the model sees, the request after it
is accepted, and the session holds no bytes a provider rejects.
"""

import json

import lib

ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-test",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
}


def _session(sb):
    found = sorted((sb.home / ".claude" / "projects").glob("*/*.jsonl"))
    lib.check(found, "Claude Code wrote a session file")
    return found[-1]


def scenario_guard_denies_a_cut_png_so_the_session_never_sticks(ctx):
    sb, p = ctx.sb, ctx.provider
    (sb.work / "cut.png").write_bytes(lib.cut_png())
    p.settings.gateway = "litellm"
    p.settings.tool = ("Read", {"file_path": str(sb.work / "cut.png")})
    inst = sb.doctor("guard", "install", "claude-code")
    lib.check(inst.code == 0, "guard install claude-code", inst)
    again = sb.doctor("guard", "install", "claude-code")
    lib.check("already installed" in again.stdout, "a second install changes nothing", again)
    env = dict(ENV, ANTHROPIC_BASE_URL=p.url)
    run = sb.run([ctx.exe, "-p", "READ-THE-FILE cut.png please", "--allowedTools", "Read", "--output-format", "json"], env=env)
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = p.model_requests("anthropic")
    lib.check(reqs and all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs if r["status"] != 200])
    denied = [b for r in reqs for m in r["body"].get("messages", []) if isinstance(m.get("content"), list) for b in m["content"] if b.get("type") == "tool_result" and "session-doctor guard" in json.dumps(b)]
    lib.check(denied, "the model saw the guard's reason in the Read's result")
    session = _session(sb)
    r, d = lib.diagnose(sb, session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: not stuck", r)
    scan = sb.doctor("scan", "--json", session)
    lib.check(scan.code == 0 and not scan.json()["attachments"], "no attachment entered the session", scan)
    resume = sb.run([ctx.exe, "--resume", session.stem, "-p", "continue", "--output-format", "json"], env=env)
    lib.check(resume.code == 0 and p.model_requests("anthropic")[-1]["status"] == 200, "the session goes on", resume)
