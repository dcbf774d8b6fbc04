"""Kilo Code CLI (@kilocode/cli, opencode's fork) against the loopback provider.

Pointed at it as opencode is: a custom provider in the project's ``kilo.json``
(``npm: "@ai-sdk/anthropic"``, bundled, ``options.baseURL``), and its
``KILO_DISABLE_*`` switches for what it would fetch; the sandbox's dead proxy
catches anything else. Headless with ``kilo run``; resumed with ``kilo run
--continue`` or ``--session``. Sessions live in ``$XDG_DATA_HOME/kilo/kilo.db``
(SQLite, WAL, opencode's schema); ``kilo export``/``kilo import`` move them.
"""

import json

import lib
import request_diff
from scenarios import opencode as oc
from scenarios.opencode import OMITTED, _beside, _session_id

ENV = {
    "KILO_DISABLE_MODELS_FETCH": "1",
    "KILO_DISABLE_AUTOUPDATE": "1",
    "KILO_DISABLE_LSP_DOWNLOAD": "1",
    "KILO_DISABLE_DEFAULT_PLUGINS": "1",
    "KILO_DISABLE_SHARE": "1",
    "KILO_DISABLE_SESSION_INGEST": "1",
    "KILO_DISABLE_PRESENCE": "1",
    "KILO_DISABLE_CODEBASE_INDEXING": "1",
}


def _setup(ctx, name, data):
    return oc._setup(ctx, name, data, app="kilo")


def _kilo(ctx, *args):
    return ctx.sb.run([ctx.exe, *args], env=ENV)


def _db(ctx):
    return oc._db(ctx, app="kilo")


def _export(ctx, session):
    ex = _kilo(ctx, "export", session)
    lib.check(ex.code == 0 and "{" in ex.stdout, "kilo export %s runs" % session, ex)
    return ex.stdout[ex.stdout.index("{"):]


def _turns(ctx, since=0):
    """The model requests of the conversation (not the title requests, which carry no tools)."""
    return [e for e in ctx.provider.model_requests("anthropic")[since:] if "tools" in e["body"]]


def _listed(ctx):
    s = ctx.sb.doctor("sessions", "--agent", "kilo", "--json")
    lib.check(s.code == 0, "sessions --agent kilo runs", s)
    return s, [(x["agent"], x["path"], x["health"]) for x in s.json()]


def scenario_cut_png_attached_rescued(ctx):
    """A cut PNG attached with ``kilo run -f`` is sent and refused, on the run and
    on its own resume: stuck for real in kilo.db. diagnose prints the way out with
    ``kilo``'s commands; export -> exclude -> repair -> ``kilo import`` and
    ``kilo run --session <copy>`` get a 200, sending what preview wrote."""
    _setup(ctx, "shot.png", lib.cut_png())
    first = _kilo(ctx, "run", "-f", "shot.png", "--", "Look at this.")
    lib.check(first.code != 0, "the first run fails", first)
    last = _turns(ctx)[-1]
    lib.check(last["status"] == 400 and "Could not process image" in json.dumps(last["answer"]), "with Anthropic's image error", last["answer"])
    n = len(ctx.provider.model_requests("anthropic"))
    again = _kilo(ctx, "run", "--continue", "continue")
    own = _turns(ctx, n)
    lib.check(again.code != 0 and own and own[-1]["status"] == 400, "its own resume meets the same 400", again, own[-1:])

    db = _db(ctx)
    session = _session_id(db)
    s, listed = _listed(ctx)
    lib.check(listed == [("kilo", str(db), "not_read")], "sessions finds kilo.db as Kilo Code CLI's store", s)
    files = _beside(db)
    r, d = lib.diagnose(ctx.sb, db, "--session", session)
    lib.check(d["stuck"] is True and r.code == 1, "diagnose on kilo.db calls it stuck", r)
    lib.check(d["failure"]["class"] == "media_rejected", "media_rejected", r)
    prime = [x for x in d["suspects"] if x.get("prime")]
    lib.check(prime and prime[0]["name"] == "shot.png", "the PNG is the prime suspect", r)
    f = "%s.json" % session
    want = ["kilo export %s > %s" % (session, f), "session-doctor exclude %s --suspects" % f, "session-doctor repair %s" % f]
    lib.check(d["next"] == want, "the next commands export with kilo, exclude and repair on the export", d["next"])
    lib.check(any("kilo import" in note for note in d["notes"]) and not any("opencode" in note for note in d["notes"]), "its notes name kilo, not opencode", d["notes"])
    refused = ctx.sb.doctor("repair", db, "--session", session)
    lib.check(refused.code != 0 and "kilo export <id>" in refused.stderr, "repair on the store sends the user to kilo export", refused)
    lib.check(_beside(db) == files, "nothing appears beside the live database", files, _beside(db))

    original = _export(ctx, session)
    export = ctx.sb.work / f
    export.write_text(original)
    x = ctx.sb.doctor("exclude", export, "--suspects")
    lib.check(x.code == 0, "exclude --suspects lands on the export", x)
    out = ctx.sb.root / "repaired"
    out.mkdir()
    rep = ctx.sb.doctor("repair", export, "--out", out, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    new = copy.get("id") or ""
    lib.check(new.startswith("ses_") and new != session, "the copy is a session of its own", copy)
    want = "kilo import %s && kilo --session %s" % (copy["out"], new)
    lib.check(copy.get("resume") == want, "repair prints kilo's import and resume", copy)
    previewed, _ = lib.preview(ctx.sb, copy["out"])
    imp = _kilo(ctx, "import", copy["out"])
    lib.check(imp.code == 0, "kilo imports the copy", imp)
    n = len(ctx.provider.model_requests("anthropic"))
    resumed = _kilo(ctx, "run", "--session", new, "continue")
    lib.check(resumed.code == 0, "kilo run --session <copy> exits 0", resumed)
    sent = _turns(ctx, n)
    lib.check(sent and sent[0]["status"] == 200, "the provider answered 200", sent)
    body = json.dumps(sent[0]["body"]["messages"])
    lib.check('"type": "image"' not in body and "[Attachment omitted: " in body, "kilo sent the note, not the PNG", body[:2000])
    want = request_diff.kilo_resume_tail(sent[0]["body"]["messages"], "continue", request_diff.anthropic)
    diffs = request_diff.items(previewed["messages"], want, request_diff.anthropic)
    # The original lives in kilo.db: its export, byte for byte, stands for it.
    lib.rescued(ctx.sb, own, lambda: _export(ctx, session).encode(), original.encode(), db, diffs, "--session", new)


def scenario_undecodable_image_read_left_out_by_kilo(ctx):
    """A cut PNG read by kilo's ``read`` tool is left out by kilo itself (its
    omission note sent instead): never stuck, and session-doctor agrees, lists
    the store as Kilo Code CLI's, leaves no file beside the live database, and
    keeps the heal in a repaired copy of its export."""
    _setup(ctx, "shot.png", lib.cut_png())
    first = _kilo(ctx, "run", "READ-THE-FILE shot.png")
    lib.check(first.code == 0, "the first run succeeds", first)
    sent = ctx.provider.model_requests("anthropic")
    lib.check(sent and all(e["status"] == 200 for e in sent), "every request got a 200", sent)
    blob = json.dumps(_turns(ctx)[-1]["body"]["messages"])
    lib.check(OMITTED.replace('"', '\\"') in blob and '"type": "image"' not in blob, "kilo sent its omission note and no image", blob[:2000])
    n = len(ctx.provider.model_requests("anthropic"))
    again = _kilo(ctx, "run", "--continue", "continue")
    own = _turns(ctx, n)
    lib.check(again.code == 0 and own and all(e["status"] == 200 for e in own), "its own resume gets a 200", again)

    db = _db(ctx)
    session = _session_id(db)
    files, data = _beside(db), db.read_bytes()
    s, listed = _listed(ctx)
    lib.check(listed == [("kilo", str(db), "not_read")], "sessions lists kilo.db as Kilo Code CLI's", s)
    r, d = lib.diagnose(ctx.sb, db, "--session", session)
    lib.check(d["stuck"] is False and r.code == 0 and d["next"] == [], "diagnose on kilo.db: healthy, nothing to do", r)
    scan = ctx.sb.doctor("scan", db, "--session", session)
    lib.check(scan.code == 0, "scan reads the live database", scan)
    # The store's messages name no directory: its session row does, for Kilo's environment block.
    p = ctx.sb.doctor("preview", db, "--session", session, "--json")
    lib.check(p.code == 0, "preview reads the live database", p)
    stored = json.loads(p.stdout)["messages"]
    lib.check(stored and stored[-1]["role"] == "assistant", "the store ends with the answer to the resume", stored[-1:])
    diffs = request_diff.items(stored[:-1], own[0]["body"]["messages"], request_diff.anthropic)
    lib.check(not diffs, "preview of kilo.db equals what kilo sent on resume, block by block", *diffs)
    lib.check(_beside(db) == files and db.read_bytes() == data, "scan, diagnose and preview leave the live database as it was", files, _beside(db))

    export = ctx.sb.root / "export.json"
    export.write_text(_export(ctx, session))
    p = ctx.sb.doctor("preview", export, "--json")
    lib.check(p.code == 0, "preview runs", p)
    previewed = json.loads(p.stdout)["messages"]
    # The export, taken after the resume, also holds the answer to the resumed request.
    lib.check(previewed and previewed[-1]["role"] == "assistant", "the export ends with the answer to the resume", previewed[-1:])
    diffs = request_diff.items(previewed[:-1], own[0]["body"]["messages"], request_diff.anthropic)
    lib.check(not diffs, "preview equals what kilo sent on resume, block by block", *diffs)
    out = ctx.sb.root / "repaired"
    out.mkdir()
    rep = ctx.sb.doctor("repair", export, "--out", out, "--json", "--force")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    lib.check(OMITTED in open(rep.json()["out"]).read(), "the repaired copy keeps kilo's omission note")
    lib.check(rep.json().get("resume", "").startswith("kilo import "), "and says to bring it back with kilo import", rep)
