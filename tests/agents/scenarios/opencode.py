"""opencode (opencode-ai) against the loopback provider.

Pointed at it with a custom provider in the project's ``opencode.json``
(``npm: "@ai-sdk/anthropic"``, which opencode bundles, ``options.baseURL``);
``OPENCODE_DISABLE_MODELS_FETCH`` keeps it from fetching models.dev, and the
sandbox's dead proxy catches anything else (nothing else is tried: it runs
offline). Headless with ``opencode run``; resume with ``opencode run --continue``.
Sessions live in ``$XDG_DATA_HOME/opencode/opencode.db`` (SQLite, WAL).
"""

import json
import sqlite3

import lib
import request_diff

OMITTED = "[1 image omitted: could not be resized below the image size limit.]"
ENV = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
}


def _setup(ctx, name, data, app="opencode"):
    """The fake provider in `<app>.json` (opencode's, or its fork Kilo's, which
    takes the same config), and the file `name` with `data` for the read tool."""
    sb = ctx.sb
    model = {"name": "Claude Fake", "attachment": True, "modalities": {"input": ["text", "image", "pdf"], "output": ["text"]}}
    provider = {"npm": "@ai-sdk/anthropic", "name": "Fake", "options": {"baseURL": ctx.provider.url + "/v1", "apiKey": "fake-key"}, "models": {"claude-fake": model}}
    config = {"provider": {"fake": provider}, "model": "fake/claude-fake", "autoupdate": False, "share": "disabled"}
    if app == "opencode":
        config = {"$schema": "https://opencode.ai/config.json", **config}
    (sb.work / ("%s.json" % app)).write_text(json.dumps(config))
    path = sb.work / name
    path.write_bytes(data)
    ctx.provider.settings.tool = ("read", {"filePath": str(path)})
    return path


def _opencode(ctx, *args):
    return ctx.sb.run([ctx.exe, *args], env=ENV)


def _db(ctx, app="opencode"):
    """`$XDG_DATA_HOME/<app>/<app>.db`: opencode's store, or Kilo's."""
    return ctx.sb.home / ".local" / "share" / app / ("%s.db" % app)


def _beside(db):
    return sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name))


def _session_id(db):
    # opencode leaves its -wal and -shm: a read-only connection reads through them.
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT id FROM session ORDER BY time_updated DESC").fetchone()[0]
    finally:
        con.close()


def scenario_undecodable_image_left_out_by_opencode(ctx):
    """opencode heals a cut PNG itself: session-doctor agrees and does not undo it."""
    _setup(ctx, "shot.png", lib.cut_png())
    first = _opencode(ctx, "run", "READ-THE-FILE shot.png")
    lib.check(first.code == 0, "the first run succeeds", first)
    sent = ctx.provider.model_requests("anthropic")
    lib.check(sent and all(e["status"] == 200 for e in sent), "every request got a 200", sent)
    blob = json.dumps(sent[-1]["body"]["messages"])
    lib.check(OMITTED.replace('"', '\\"') in blob, "opencode sent the omission note in place of the image", blob[:2000])
    lib.check('"type": "image"' not in blob, "and no image", blob[:2000])
    again = _opencode(ctx, "run", "--continue", "continue")
    lib.check(again.code == 0, "its own resume succeeds", again)
    resumed = ctx.provider.model_requests("anthropic")[-1]
    lib.check(resumed["status"] == 200, "the resume got a 200", resumed)

    db = _db(ctx)
    session = _session_id(db)
    files, data = _beside(db), {p: (db.parent / p).read_bytes() for p in _beside(db)}
    r, d = lib.diagnose(ctx.sb, db, "--session", session)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose on opencode.db says healthy", r)
    scan = ctx.sb.doctor("scan", db, "--session", session)
    lib.check(scan.code == 0, "scan reads the live database", scan)
    lib.check(_beside(db) == files, "scan and diagnose leave no file beside the live database", files, _beside(db))
    lib.check((db.parent / "opencode.db").read_bytes() == data["opencode.db"], "nor write the database")

    # The same once opencode has closed it: a WAL database with no -wal/-shm beside it.
    closed = ctx.sb.root / "closed" / "opencode.db"
    closed.parent.mkdir()
    src = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    dst = sqlite3.connect(str(closed))
    src.backup(dst)
    src.close()
    dst.close()
    lib.check(closed.read_bytes()[18:20] == b"\x02\x02" and _beside(closed) == ["opencode.db"], "a closed WAL database", _beside(closed))
    for args in (["scan", closed], ["diagnose", closed, "--session", session]):
        ran = ctx.sb.doctor(*args)
        lib.check(ran.code == 0, "%s reads it" % args[0], ran)
        lib.check(_beside(closed) == ["opencode.db"], "%s leaves no -wal/-shm beside it" % args[0], _beside(closed))

    # repair reads an export, as session-doctor tells the user to make; preview reads either.
    export = ctx.sb.root / "export.json"
    ex = _opencode(ctx, "export", session)
    lib.check(ex.code == 0, "opencode export runs", ex)
    export.write_text(ex.stdout[ex.stdout.index("{"):])
    r, d = lib.diagnose(ctx.sb, export)
    lib.check(d["stuck"] is False and r.code == 0, "diagnose on the export says healthy", r)
    p = ctx.sb.doctor("preview", export, "--json")
    lib.check(p.code == 0, "preview runs", p)
    summary = json.loads(p.stderr.strip().splitlines()[-1])
    lib.check(summary.get("target") == "anthropic", "preview speaks Anthropic Messages, as opencode did", p)
    named = json.dumps(summary.get("not_in_session"))
    for key, words in (("system", "system prompt"), ("tools", "tool definitions")):
        lib.check(key in resumed["body"] and words in named, "preview names the %s opencode sends as not in the session" % words, p)
    previewed = json.loads(p.stdout)["messages"]
    # The export, taken after the resume, also holds the model's answer to the resumed request.
    lib.check(previewed and previewed[-1]["role"] == "assistant", "the export ends with the answer to the resume", previewed[-1:])
    diffs = request_diff.items(previewed[:-1], resumed["body"]["messages"], request_diff.anthropic)
    lib.check(not diffs, "preview equals what opencode sent on resume, block by block", *diffs)
    lib.check(any(OMITTED in json.dumps(t) for t in previewed), "preview keeps the omission note")
    # The live database previews as its export does, and nothing appears beside it.
    before = _beside(db)
    stored = ctx.sb.doctor("preview", db, "--session", session)
    lib.check(stored.code == 0 and stored.stdout == p.stdout, "preview of opencode.db equals preview of its export", stored)
    lib.check(_beside(db) == before, "preview leaves no file beside the live database", before, _beside(db))
    out = ctx.sb.root / "repaired"
    out.mkdir()
    # Nothing to repair: --force writes the copy anyway, to show it keeps the heal.
    rep = ctx.sb.doctor("repair", export, "--out", out, "--json", "--force")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    written = open(rep.json()["out"]).read()
    lib.check(OMITTED in written, "the repaired copy keeps the omission note")


def _export(ctx, session):
    ex = _opencode(ctx, "export", session)
    lib.check(ex.code == 0 and "{" in ex.stdout, "opencode export %s runs" % session, ex)
    return ex.stdout[ex.stdout.index("{"):]


def scenario_cut_pdf_rescued(ctx):
    """A cut PDF is sent as a document and refused: stuck for real in opencode.db,
    then rescued through an export, a repaired copy with ids of its own, and
    ``opencode import`` + ``opencode run --session``."""
    _setup(ctx, "doc.pdf", lib.cut_pdf())
    first = _opencode(ctx, "run", "READ-THE-FILE doc.pdf")
    lib.check(first.code != 0, "the first run fails", first)
    last = ctx.provider.model_requests("anthropic")[-1]
    lib.check(last["status"] == 400 and "The PDF specified was not valid" in json.dumps(last["answer"]), "with Anthropic's PDF error", last["answer"])
    n = len(ctx.provider.model_requests("anthropic"))
    again = _opencode(ctx, "run", "--continue", "continue")
    own = ctx.provider.model_requests("anthropic")[n:]
    lib.check(again.code != 0 and own and own[-1]["status"] == 400, "its own resume meets the same 400", again)

    db = _db(ctx)
    session = _session_id(db)
    r, d = lib.diagnose(ctx.sb, db, "--session", session)
    lib.check(d["stuck"] is True and r.code == 1, "diagnose on opencode.db calls it stuck", r)
    lib.check(d["failure"]["class"] == "media_rejected", "media_rejected", r)
    prime = [s for s in d["suspects"] if s.get("prime")]
    lib.check(prime and "doc.pdf" in json.dumps(prime), "the PDF is the prime suspect", r)
    # The whole way out in one go, on the export (an exclusion made on the
    # database would stay beside the database, where the export's repair never reads it).
    f = "%s.json" % session
    want = ["opencode export %s > %s" % (session, f), "session-doctor exclude %s --suspects" % f, "session-doctor repair %s" % f]
    lib.check(d["next"] == want, "the next commands export, exclude and repair on the export", d["next"])

    original = _export(ctx, session)
    export = ctx.sb.root / "export.json"
    export.write_text(original)
    x = ctx.sb.doctor("exclude", export, "--suspects")
    lib.check(x.code == 0, "exclude --suspects lands on the export", x)
    p = ctx.sb.doctor("preview", export)
    lib.check(p.code == 0, "preview runs", p)
    lib.check("[Attachment omitted: " in p.stdout and "application/pdf" in p.stdout, "preview carries the exclusion note", p.stdout[:2000])
    lib.check(json.loads(original)["messages"] and "JVBERi0" not in p.stdout, "and no byte of the PDF", p.stdout[:2000])

    out = ctx.sb.root / "repaired"
    out.mkdir()
    rep = ctx.sb.doctor("repair", export, "--out", out, "--json")
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    new = copy.get("id") or ""
    lib.check(new.startswith("ses_") and new != session, "the copy is a session of its own", copy)
    resume = copy.get("resume") or ""
    lib.check(resume.startswith("opencode import ") and resume.endswith("opencode --session %s" % new), "repair prints how to import and resume it", copy)
    previewed, _ = lib.preview(ctx.sb, copy["out"])
    imp = _opencode(ctx, "import", copy["out"])
    lib.check(imp.code == 0, "opencode imports the copy", imp)
    n = len(ctx.provider.model_requests("anthropic"))
    resumed = _opencode(ctx, "run", "--session", new, "continue")
    lib.check(resumed.code == 0, "opencode run --session <copy> exits 0", resumed)
    sent = [e for e in ctx.provider.model_requests("anthropic")[n:] if "tools" in e["body"]]
    lib.check(sent and sent[0]["status"] == 200, "the provider answered 200", sent)
    body = json.dumps(sent[0]["body"]["messages"])
    lib.check("[Attachment omitted: " in body and "JVBERi0" not in body, "opencode sent the note, not the PDF", body[:2000])
    want = request_diff.resume_tail(sent[0]["body"]["messages"], "continue", request_diff.anthropic)
    diffs = request_diff.items(previewed["messages"], want, request_diff.anthropic)
    # The original lives in opencode.db: its export, byte for byte, stands for it.
    lib.rescued(ctx.sb, own, lambda: _export(ctx, session).encode(), original.encode(), db, diffs, "--session", new)
