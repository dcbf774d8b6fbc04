"""Copilot CLI pointed at `session-doctor proxy` (``COPILOT_PROVIDER_BASE_URL``), which forwards to the fake provider.

In custom-provider mode the CLI sends a file given with ``--attachment`` as it
is (copilot.py): a cut PDF leaves the session stuck, a cut PNG is refused
once. Through the proxy the broken files reach the provider as the note
`repair` writes, a 9000 px screenshot within 8000 px (the CLI downscales it
itself), and 31 images as 30
(``--max-images 30``): each first run gets a 200 on every request and the
session records no rejection. A request with nothing to change reaches the
provider byte for byte.
"""

import lib
import proxied
from fake import media
from scenarios import copilot as cp


def _first_run(ctx, px, *args):
    env = dict(cp._env(ctx), COPILOT_PROVIDER_BASE_URL=px.url + "/")
    run = ctx.sb.run([ctx.exe, "-p", "hello", *args, "--allow-all-tools", "--model", cp.MODEL], env=env)
    lib.check(run.code == 0, "the first run ends well", run)
    reqs = proxied.check_every_request_accepted(ctx, "anthropic")
    sessions = cp._sessions(ctx)
    lib.check(len(sessions) == 1, "the CLI wrote one session", sessions)
    r, d = lib.diagnose(ctx.sb, sessions[0])
    lib.check(d["stuck"] is False and not d.get("failure"), "diagnose: the session records no rejection", r)
    return reqs


def _case(ctx, case, what):
    name, data = proxied.CASES[case]
    (ctx.sb.work / name).write_bytes(data())
    with proxied.Proxied(ctx) as px:
        reqs = _first_run(ctx, px, "--attachment", name)
        if what:
            proxied.check_journal(px, what)
    return reqs


def scenario_proxy_cut_png_first_run_gets_200(ctx):
    reqs = _case(ctx, "cut_png", "replaced")
    lib.check(all(media.problem(i) is None for r in reqs for i in proxied.images(r["body"])), "no broken image reached the provider")


def scenario_proxy_cut_pdf_first_run_gets_200(ctx):
    _case(ctx, "cut_pdf", "replaced")


def scenario_proxy_9000px_screenshot_first_run_gets_200(ctx):
    """The CLI downscales an attached image itself: the proxy may have nothing to fit."""
    reqs = _case(ctx, "wide_png", None)
    dims = {media.dimensions(i) for r in reqs for i in proxied.images(r["body"])}
    lib.check(dims and all(max(d) <= 8000 for d in dims), "the screenshot reached the provider within 8000 px: %s" % dims)


def scenario_proxy_31_images_against_a_limit_of_30(ctx):
    names = ["p%02d.png" % i for i in range(proxied.MANY)]
    for i, n in enumerate(names):
        (ctx.sb.work / n).write_bytes(lib.png(4, 4, (i * 8, 0, 0)))
    ctx.provider.settings.max_images = proxied.LIMIT
    with proxied.Proxied(ctx, "--max-images", proxied.LIMIT) as px:
        reqs = _first_run(ctx, px, *[a for n in names for a in ("--attachment", n)])
        proxied.check_journal(px, "capped")
    lib.check(max(len(proxied.images(r["body"])) for r in reqs) == proxied.LIMIT, "the provider received 30 images, not 31")


def scenario_proxy_forwards_what_it_need_not_change_byte_for_byte(ctx):
    (ctx.sb.work / "ok.png").write_bytes(lib.png(16, 16))
    with proxied.Proxied(ctx) as px:
        _first_run(ctx, px, "--attachment", "ok.png")
        lib.check(not px.journal(), "nothing to change: nothing journaled", px.journal())
        px.check_untouched_requests_are_byte_identical()
