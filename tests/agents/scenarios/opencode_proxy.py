"""opencode pointed at `session-doctor proxy` (its provider's ``options.baseURL``), which forwards to the fake provider.

opencode's read tool sends a PDF as a document as it is: a cut PDF leaves the
session stuck when sent direct (opencode.py); through the proxy it reaches the
provider as the note `repair` writes. opencode decodes and resizes images
itself, so a cut PNG or a 9000 px screenshot may reach the proxy already
handled; 31 images reach the provider as 30 (``--max-images 30``). Each first
run gets a 200 on every request and the session records no rejection; a
request with nothing to change reaches the provider byte for byte.
"""

import lib
import proxied
from scenarios.opencode import _db, _opencode, _session_id, _setup


def _point(ctx, px):
    config = ctx.sb.work / "opencode.json"
    config.write_text(config.read_text().replace(ctx.provider.url, px.url))


def _first_run(ctx, px, prompt):
    _point(ctx, px)
    run = _opencode(ctx, "run", prompt)
    lib.check(run.code == 0, "the first run ends well", run)
    reqs = proxied.check_every_request_accepted(ctx, "anthropic")
    db = _db(ctx)
    r, d = lib.diagnose(ctx.sb, db, "--session", _session_id(db))
    lib.check(d["stuck"] is False and not d.get("failure"), "diagnose: the session records no rejection", r)
    return reqs


def _case(ctx, case, what):
    name, data = proxied.CASES[case]
    _setup(ctx, name, data())
    with proxied.Proxied(ctx) as px:
        reqs = _first_run(ctx, px, "READ-THE-FILE %s" % name)
        if what:
            proxied.check_journal(px, what)
    return reqs


def scenario_proxy_cut_png_first_run_gets_200(ctx):
    _case(ctx, "cut_png", None)


def scenario_proxy_cut_pdf_first_run_gets_200(ctx):
    _case(ctx, "cut_pdf", "replaced")


def scenario_proxy_9000px_screenshot_first_run_gets_200(ctx):
    reqs = _case(ctx, "wide_png", None)
    from fake import media

    dims = {media.dimensions(i) for r in reqs for i in proxied.images(r["body"])}
    lib.check(all(max(d) <= 8000 for d in dims), "no image over 8000 px reached the provider: %s" % dims)


def scenario_proxy_31_images_against_a_limit_of_30(ctx):
    sb, p = ctx.sb, ctx.provider
    paths = [sb.work / ("p%02d.png" % i) for i in range(proxied.MANY)]
    _setup(ctx, paths[0].name, lib.png(4, 4, (0, 0, 0)))
    for i, path in enumerate(paths[1:], 1):
        path.write_bytes(lib.png(4, 4, (i * 8, 0, 0)))
    p.settings.more_tools = [("read", {"filePath": str(x)}) for x in paths[1:]]
    p.settings.max_images = proxied.LIMIT
    with proxied.Proxied(ctx, "--max-images", proxied.LIMIT) as px:
        reqs = _first_run(ctx, px, "READ-THE-FILE all of them")
        proxied.check_journal(px, "capped")
    lib.check(max(len(proxied.images(r["body"])) for r in reqs) == proxied.LIMIT, "the provider received 30 images, not 31")


def scenario_proxy_forwards_what_it_need_not_change_byte_for_byte(ctx):
    _setup(ctx, "ok.png", lib.png(16, 16))
    with proxied.Proxied(ctx) as px:
        _first_run(ctx, px, "READ-THE-FILE ok.png")
        lib.check(not px.journal(), "nothing to change: nothing journaled", px.journal())
        px.check_untouched_requests_are_byte_identical()
