"""Why there is no `guard install codex` (Codex 0.171.0): what a guard would see, and what it would add.

Codex runs `PreToolUse` hooks (`~/.codex/hooks.json` or `[[hooks.PreToolUse]]` in
config.toml; a new hook runs only once the user trusts it, or under
`--dangerously-bypass-hook-trust`), and such a hook sees `view_image` with its
`path`, so a guard could judge the file first. It would have nothing to keep
out: Codex decodes every image `view_image` reads and answers the call itself
with its refusal when that fails (a PNG cut inside IDAT: codex.py's
cut_png_refused_by_view_image; a bad checksum, no IEND: here), and it resizes
what is over its limits before sending. What does strand a Codex session is a
valid image the provider refuses anyway (codex.py's valid_png_* scenarios):
not a file a guard can call broken, and repair's (or the proxy's) to answer.
"""

import json
import struct

import lib
from scenarios import codex as c


def _bad_crc():
    b = bytearray(lib.png(8, 8))
    i = b.find(b"IDAT")
    n = struct.unpack(">I", b[i - 4:i])[0]
    b[i + 4 + n] ^= 0xFF  # the chunk's stored checksum
    return bytes(b)


def _no_iend():
    return lib.png(8, 8)[:-12]


def scenario_pre_tool_use_hook_sees_view_image(ctx):
    ctx.provider.settings.tool = ("view_image", {"path": "pic.png"})
    (ctx.sb.work / "pic.png").write_bytes(lib.png(8, 8))
    env = c.setup(ctx)
    log = ctx.sb.home / "hook.log"
    hook = ctx.sb.home / "hook.sh"
    hook.write_text("#!/bin/sh\ncat >> '%s'\necho >> '%s'\n" % (log, log))
    hook.chmod(0o755)
    entry = {"matcher": ".*", "hooks": [{"type": "command", "command": str(hook)}]}
    (ctx.sb.home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    untrusted = c.exec_(ctx, env, "READ-THE-FILE pic.png")
    lib.check(untrusted.code == 0 and not log.exists(), "an untrusted hook does not run", untrusted)
    run = c.exec_(ctx, env, "READ-THE-FILE pic.png", "--dangerously-bypass-hook-trust")
    lib.check(run.code == 0 and log.exists(), "the trusted hook ran", run)
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    seen = [(e["hook_event_name"], e["tool_name"], e["tool_input"]) for e in events]
    lib.check(("PreToolUse", "view_image", {"path": "pic.png"}) in seen, "PreToolUse sees view_image and its path", seen)


def scenario_broken_pngs_never_leave_codex_unguarded(ctx):
    env = c.setup(ctx)
    for name, data in (("crc.png", _bad_crc()), ("no-iend.png", _no_iend())):
        (ctx.sb.work / name).write_bytes(data)
        guard = ctx.sb.doctor("guard", "--provider", "openai", ctx.sb.work / name)
        lib.check(guard.code == 1 and "deny" in guard.stdout, "%s is broken (session-doctor guard denies it)" % name, guard)
        ctx.provider.settings.tool = ("view_image", {"path": name})
        before = len(ctx.provider.model_requests("responses"))
        run = c.exec_(ctx, env, "READ-THE-FILE %s" % name)
        reqs = ctx.provider.model_requests("responses")[before:]
        lib.check(run.code == 0 and reqs and all(r["status"] == 200 for r in reqs), "%s: every request is accepted" % name, run)
        lib.check(not [r for r in reqs if "data:image" in json.dumps(r["body"])], "%s: Codex sent no image (it refused the file itself)" % name)
