"""Cline with `session-doctor guard install cline`: never stuck on a broken file.

Without the guard, `read_files` of a cut PNG puts the image in the task and
the provider's 400 comes back on every request, Cline's own resume too
(cline.py's cut_png_rescue). Cline's `PreToolUse` hook cannot refuse one call
(its `cancel` ends the whole run), but its `overrideInput` replaces the input:
the guard's hook (`~/.cline/hooks/PreToolUse`) swaps a broken file for a note
holding the reason, and an oversized image for its fitted copy.
"""

import json

import lib
from scenarios import cline as c


def _install(ctx, *extra):
    inst = ctx.sb.doctor("guard", "install", "cline", *extra)
    lib.check(inst.code == 0, "guard install cline", inst)
    hook = ctx.sb.home / ".cline" / "hooks" / "PreToolUse"
    lib.check(hook.stat().st_mode & 0o111, "the hook is executable", oct(hook.stat().st_mode))
    again = ctx.sb.doctor("guard", "install", "cline", *extra)
    lib.check("already installed" in again.stdout, "a second install changes nothing", again)
    return hook


def _bodies(reqs):
    return [json.dumps(r["body"]["messages"]) for r in reqs]


@c._ends_its_hubs
def scenario_guard_reads_a_note_in_a_cut_pngs_place(ctx):
    sb, p = ctx.sb, ctx.provider
    c._setup(ctx, "pic.png", lib.cut_png())
    hook = _install(ctx)
    run = c._run(ctx, "READ-THE-FILE pic.png")
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = p.model_requests("chat")
    lib.check(reqs and all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs if r["status"] != 200])
    lib.check(not [b for b in _bodies(reqs) if "image_url" in b], "no image was sent")
    lib.check([b for b in _bodies(reqs) if "session-doctor guard" in b and "was not read" in b], "the model read the guard's reason as the read's result")
    sessions = c._sessions(ctx)
    lib.check(len(sessions) == 1, "Cline wrote one task", sessions)
    r, d = lib.diagnose(sb, sessions[0])
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: not stuck", r)
    scan = sb.doctor("scan", "--json", sessions[0])
    lib.check(scan.code == 0 and not scan.json()["attachments"], "no attachment entered the session", scan)
    un = sb.doctor("guard", "uninstall", "cline")
    lib.check(un.code == 0 and not hook.exists(), "guard uninstall cline removes the hook", un)


@c._ends_its_hubs
def scenario_guard_fits_an_oversized_image(ctx):
    """A 9000 px screenshot against Anthropic's 8000 px (`--provider anthropic`):
    Cline reads the fitted copy, every request is accepted, and the task holds
    the copy, never the original."""
    sb, p = ctx.sb, ctx.provider
    c._setup(ctx, "wide.png", lib.png(9000, 40))
    _install(ctx, "--provider", "anthropic")
    run = c._run(ctx, "READ-THE-FILE wide.png")
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = p.model_requests("chat")
    lib.check(reqs and all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs if r["status"] != 200])
    lib.check([b for b in _bodies(reqs) if "image_url" in b], "the image was sent", _bodies(reqs)[-1][-500:])
    scan = sb.doctor("scan", "--json", c._sessions(ctx)[0]).json()
    widths = [a["width"] for a in scan["attachments"]]
    lib.check(widths and all(w <= 8000 for w in widths), "the task holds the image fitted, not the 9000 px original", widths)
