"""opencode's event-sourced (v2) sessions beside its v1 ones in one database.

opencode 1.18.33 writes a v2 session (``session_message`` rows, no ``message``
or ``part`` rows) when driven through the v2 HTTP API of ``opencode serve``
(``POST /api/session``, ``/model``, ``/prompt``); ``opencode run`` writes v1.
It admits a v2 prompt; its v2 loop mostly does not call the provider yet (on
some runs it does, and the cut PNG is refused: stuck for real). The scenario proves session-doctor reads
both kinds from the live database (WAL, opencode running) without leaving a
file beside it, judges the v2 attachment, and says truly what repair can do
(``opencode export`` writes none of a v2 session's messages).
"""

import base64
import json
import socket
import sqlite3
import time
import urllib.error
import urllib.request

import lib
from scenarios import opencode as oc


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(port, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=data, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _rows(db, sql, *args):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def scenario_v2_session_beside_v1(ctx):
    """A v2 session with a cut PNG next to a v1 one: both read, the live database untouched."""
    oc._setup(ctx, "notes.txt", b"hello\n")
    first = oc._opencode(ctx, "run", "Say hi.")
    lib.check(first.code == 0, "opencode run writes a v1 session", first)
    db = oc._db(ctx)
    v1 = _rows(db, "SELECT DISTINCT session_id FROM message")[0][0]
    asked = len(ctx.provider.model_requests("anthropic"))

    port = _free_port()
    serve = lib.spawn(ctx.sb, [ctx.exe, "serve", "--hostname", "127.0.0.1", "--port", str(port)], env=oc.ENV)
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/api/session/active" % port, timeout=2)
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                time.sleep(0.5)
        status, text = _call(port, "POST", "/api/session", {})
        lib.check(status == 200, "the v2 API creates a session", status, text)
        v2 = json.loads(text)["data"]["id"]
        status, text = _call(port, "POST", "/api/session/%s/model" % v2, {"model": {"id": "claude-fake", "providerID": "fake"}})
        lib.check(status == 204, "and sets its model", status, text)
        uri = "data:image/png;base64," + base64.b64encode(lib.cut_png()).decode()
        prompt = {"prompt": {"text": "Look at this picture.", "files": [{"uri": uri, "mime": "image/png", "name": "shot.png"}]}}
        status, text = _call(port, "POST", "/api/session/%s/prompt" % v2, prompt)
        lib.check(status == 200, "and admits a prompt with a cut PNG", status, text)
        for _ in range(60):
            if _rows(db, "SELECT 1 FROM session_message WHERE session_id = ? AND type = 'user'", v2):
                break
            time.sleep(0.5)
        kinds = [r[0] for r in _rows(db, "SELECT type FROM session_message WHERE session_id = ? ORDER BY seq", v2)]
        lib.check("user" in kinds, "opencode wrote the v2 session as session_message rows", kinds)
        lib.check(not _rows(db, "SELECT 1 FROM message WHERE session_id = ?", v2), "and no v1 message rows")
        # opencode 1.18.33's v2 loop mostly leaves the prompt unsent, but on some runs it
        # does send it (seen in CI): then it must carry the cut PNG and be refused, which
        # is the session stuck for real, and everything below holds the same.
        sent = [e for e in ctx.provider.model_requests("anthropic")[asked:] if "Look at this picture." in json.dumps(e.get("body"))]
        lib.check(all(e.get("status") == 400 for e in sent), "a v2 prompt opencode sent was refused for its cut PNG", [e.get("status") for e in sent])

        # opencode is running: its -wal and -shm are there, and stay the only files beside it.
        beside = oc._beside(db)
        r, d = lib.diagnose(ctx.sb, db, "--session", v2)
        lib.check(r.code == 1 and d["stuck"], "diagnose judges the v2 session's cut PNG", r)
        lib.check(d["suspects"] and d["suspects"][0]["name"] == "shot.png", "and names it the suspect", r)
        scan = ctx.sb.doctor("scan", db, "--session", v1, "--json")
        lib.check(scan.code == 0 and json.loads(scan.stdout)["entries"] >= 2, "the v1 session of the same database is read too", scan)
        lib.check(oc._beside(db) == beside, "no file appears beside the live database", beside, oc._beside(db))
    finally:
        serve.terminate()
        serve.wait(timeout=30)

    ex = oc._opencode(ctx, "export", v2)
    lib.check(ex.code == 0, "opencode export runs on the v2 session", ex)
    lib.check(json.loads(ex.stdout[ex.stdout.index("{"):])["messages"] == [], "but writes none of its messages", ex)
    rep = ctx.sb.doctor("repair", db, "--session", v2)
    lib.check(rep.code == 2 and "writes none of its messages" in rep.stderr, "repair says so, and does not send the user to an empty export", rep)
