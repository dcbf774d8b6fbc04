"""opencode with `session-doctor guard install opencode`: a cut PDF is never read.

Without the guard, a cut PDF read by opencode's `read` tool is sent as a
document, refused on the run and on its resume: stuck (see opencode.py). With
the guard's plugin in `~/.config/opencode/plugins/` the read is refused before
it runs, the model sees why, every request gets a 200, and the session holds
no byte of the PDF.
"""

import json

import lib
from scenarios.opencode import _db, _opencode, _session_id, _setup


def scenario_guard_refuses_a_cut_pdf_so_the_session_never_sticks(ctx):
    sb, p = ctx.sb, ctx.provider
    _setup(ctx, "doc.pdf", lib.cut_pdf())
    inst = sb.doctor("guard", "install", "opencode")
    plugin = sb.home / ".config" / "opencode" / "plugins" / "session-doctor-guard.js"
    lib.check(inst.code == 0 and plugin.exists(), "guard install opencode", inst)
    run = _opencode(ctx, "run", "READ-THE-FILE doc.pdf")
    lib.check(run.code == 0, "the guarded run ends well", run)
    reqs = p.model_requests("anthropic")
    lib.check(reqs and all(r["status"] == 200 for r in reqs), "every request is accepted", *[r["answer"] for r in reqs if r["status"] != 200])
    sent = json.dumps([r["body"].get("messages") for r in reqs])
    lib.check("session-doctor guard" in sent, "the model saw the guard's reason in the read's result")
    lib.check("JVBERi0" not in sent, "no request carried the PDF")
    db = _db(ctx)
    r, d = lib.diagnose(sb, db, "--session", _session_id(db))
    lib.check(d["stuck"] is False and r.code == 0, "diagnose: not stuck", r)
    n = len(p.model_requests("anthropic"))
    again = _opencode(ctx, "run", "--continue", "continue")
    own = p.model_requests("anthropic")[n:]
    lib.check(again.code == 0 and own and all(e["status"] == 200 for e in own), "the session goes on: its resume's requests get a 200", again)
