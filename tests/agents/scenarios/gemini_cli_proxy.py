"""Gemini CLI pointed at `session-doctor proxy` (``GOOGLE_GEMINI_BASE_URL``), which forwards to the fake provider.

Gemini CLI's read_file attaches images and PDFs as they are (gemini_cli.py):
a cut PNG or a cut PDF leaves the session stuck when sent direct. Through the
proxy each reaches the provider as the note `repair` writes, a 9000 px
screenshot as it is (Gemini sets no side limit), and 31 images as 30
(``--max-images 30``): the first run gets a 200 on every request and the
session records no rejection. A request with nothing to change reaches the
provider byte for byte.
"""

import json

import lib
import proxied
from scenarios import gemini_cli as gc


def _env(px):
    return {"GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": px.url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}


def _inline(body):
    parts = [p for c in body.get("contents", []) for p in c.get("parts", [])]
    return [p for p in parts for p in [p, *((p.get("functionResponse") or {}).get("parts") or [])] if "inlineData" in p]


def _first_run(ctx, px, prompt):
    run = ctx.sb.run([ctx.exe, "-p", prompt, "--yolo"], env=_env(px))
    lib.check(run.code == 0, "the first run ends well", run)
    reqs = proxied.check_every_request_accepted(ctx, "gemini")
    sessions = gc._sessions(ctx)
    lib.check(sessions, "Gemini CLI wrote a session file")
    r, d = lib.diagnose(ctx.sb, sessions[-1])
    # diagnose may predict a failure from the CLI's own repeated tool results (the
    # history's shape, not the proxy's doing); what must hold is that no
    # rejection by the provider is recorded.
    failure = d.get("failure") or {}
    lib.check(failure.get("source", "predicted") == "predicted", "diagnose: the session records no rejection", r)
    return reqs


def _case(ctx, case, what):
    name, data = proxied.CASES[case]
    gc._setup(ctx, name, data())
    with proxied.Proxied(ctx) as px:
        reqs = _first_run(ctx, px, "READ-THE-FILE %s" % name)
        if what:
            proxied.check_journal(px, what)
    return reqs


def scenario_proxy_cut_png_first_run_gets_200(ctx):
    _case(ctx, "cut_png", "replaced")


def scenario_proxy_cut_pdf_first_run_gets_200(ctx):
    _case(ctx, "cut_pdf", "replaced")


def scenario_proxy_9000px_screenshot_first_run_gets_200(ctx):
    reqs = _case(ctx, "wide_png", None)
    lib.check(any(_inline(r["body"]) for r in reqs), "the screenshot reached the provider")


def scenario_proxy_31_images_against_a_limit_of_30(ctx):
    paths = [ctx.sb.work / ("p%02d.png" % i) for i in range(proxied.MANY)]
    gc._setup(ctx, paths[0].name, lib.png(4, 4, (0, 0, 0)))
    for i, p in enumerate(paths[1:], 1):
        p.write_bytes(lib.png(4, 4, (i * 8, 0, 0)))
    ctx.provider.settings.more_tools = [("read_file", {"file_path": str(p)}) for p in paths[1:]]
    ctx.provider.settings.max_images = proxied.LIMIT
    with proxied.Proxied(ctx, "--max-images", proxied.LIMIT) as px:
        reqs = _first_run(ctx, px, "READ-THE-FILE all of them")
        proxied.check_journal(px, "capped")
    lib.check(max(len(_inline(r["body"])) for r in reqs) == proxied.LIMIT, "the provider received 30 images, not 31", json.dumps([len(_inline(r["body"])) for r in reqs]))


def scenario_proxy_forwards_what_it_need_not_change_byte_for_byte(ctx):
    gc._setup(ctx, "ok.png", lib.png(16, 16))
    with proxied.Proxied(ctx) as px:
        _first_run(ctx, px, "READ-THE-FILE ok.png")
        lib.check(not px.journal(), "nothing to change: nothing journaled", px.journal())
        px.check_untouched_requests_are_byte_identical()
