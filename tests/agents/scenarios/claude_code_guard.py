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
    n = len(p.model_requests("anthropic"))
    resume = sb.run([ctx.exe, "--resume", session.stem, "-p", "continue", "--output-format", "json"], env=env)
    own = p.model_requests("anthropic")[n:]
    lib.check(resume.code == 0 and own and all(e["status"] == 200 for e in own), "the session goes on: its resume's requests get a 200", resume)


def scenario_guard_grants_no_read_the_user_was_not_asked_for(ctx):
    """An image over the provider's limits, outside the project, in a run that
    allows no tool: Claude Code would ask before reading it (in `-p`, refuse).
    The guard fits it, but its answer changes the input only (no
    `permissionDecision`): the Read is still refused, and no image enters the
    session. With `permissionDecision: "allow"` the hook granted the Read unasked."""
    sb, p = ctx.sb, ctx.provider
    outside = sb.home / "private"
    outside.mkdir(exist_ok=True)
    big = outside / "wide.png"
    big.write_bytes(lib.png(9000, 40))
    p.settings.tool = ("Read", {"file_path": str(big)})
    inst = sb.doctor("guard", "install", "claude-code")
    lib.check(inst.code == 0, "guard install claude-code", inst)
    env = dict(ENV, ANTHROPIC_BASE_URL=p.url)
    run = sb.run([ctx.exe, "-p", "READ-THE-FILE %s please" % big, "--output-format", "json"], env=env)
    reqs = p.model_requests("anthropic")
    lib.check(reqs, "Claude Code sent its requests", run)
    images = [b for r in reqs for m in r["body"].get("messages", []) if isinstance(m.get("content"), list)
              for b in m["content"] if b.get("type") == "tool_result" and "image" in json.dumps(b.get("content"))]
    lib.check(not images, "no image was read: the guard granted nothing", *[json.dumps(b)[:300] for b in images])
    scan = sb.doctor("scan", "--json", _session(sb))
    lib.check(not scan.json()["attachments"], "no attachment entered the session", scan)


def scenario_guard_fits_an_oversized_image_the_user_lets_it_read(ctx):
    """The same image, in the project, with Read allowed: the guard's answer
    (the fitted copy, no permission decided) leaves the Read allowed, every
    request is accepted and the session holds the image within the limits.
    (Claude Code's Read also downscales images itself, so which copy it read
    does not show in the request.)"""
    sb, p = ctx.sb, ctx.provider
    big = sb.work / "wide.png"
    big.write_bytes(lib.png(9000, 40))
    p.settings.tool = ("Read", {"file_path": str(big)})
    inst = sb.doctor("guard", "install", "claude-code")
    lib.check(inst.code == 0, "guard install claude-code", inst)
    env = dict(ENV, ANTHROPIC_BASE_URL=p.url)
    run = sb.run([ctx.exe, "-p", "READ-THE-FILE wide.png please", "--allowedTools", "Read", "--output-format", "json"], env=env)
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = p.model_requests("anthropic")
    lib.check(reqs and all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs if r["status"] != 200])
    scan = sb.doctor("scan", "--json", _session(sb)).json()
    widths = [a["width"] for a in scan["attachments"]]
    lib.check(widths and all(w <= 8000 for w in widths), "the session holds the image fitted, not the 9000 px original", widths)


def scenario_guard_lets_claude_code_read_an_svg_as_the_text_it_is(ctx):
    """Claude Code's Read sends only png, jpg, jpeg, gif and webp as images (and
    pdf as a document): an SVG it reads as text. The guard lets it be; it used
    to deny it as a broken image (issue 36, item 6)."""
    sb, p = ctx.sb, ctx.provider
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\n'
    (sb.work / "logo.svg").write_text(svg)
    p.settings.tool = ("Read", {"file_path": str(sb.work / "logo.svg")})
    inst = sb.doctor("guard", "install", "claude-code")
    lib.check(inst.code == 0, "guard install claude-code", inst)
    env = dict(ENV, ANTHROPIC_BASE_URL=p.url)
    run = sb.run([ctx.exe, "-p", "READ-THE-FILE logo.svg please", "--allowedTools", "Read", "--output-format", "json"], env=env)
    lib.check(run.code == 0, "the run ends well", run)
    reqs = p.model_requests("anthropic")
    results = [json.dumps(b) for r in reqs for m in r["body"].get("messages", []) if isinstance(m.get("content"), list)
               for b in m["content"] if b.get("type") == "tool_result"]
    lib.check(any("<rect" in t for t in results), "the model read the SVG's text", *results)
    lib.check(not any("session-doctor guard" in t for t in results), "the guard denied nothing", *results)
