"""Codex pointed at `session-doctor proxy` (its provider's ``base_url``), which forwards to the fake provider.

Codex decodes what ``view_image`` and ``--image`` attach and sends its own
note for a file it cannot decode (codex.py), and its view_image attaches
images only: the proxy's part is the image count. 31 images attached where
the provider takes 30 reach it as 30 (``--max-images 30``) and the first run
gets a 200 on every request; the cut PNG and the 9000 px screenshot get a 200
on the first run too, and the session records no rejection. A request with
nothing to change reaches the provider byte for byte.
"""

import lib
import proxied
from fake import media
from scenarios import codex as cx


def _setup(ctx, px):
    env = cx.setup(ctx)
    config = ctx.sb.home / ".codex" / "config.toml"
    config.write_text(config.read_text().replace(ctx.provider.url, px.url))
    return env


def _first_run(ctx, px, prompt, *extra):
    env = _setup(ctx, px)
    run = cx.exec_(ctx, env, prompt, *extra)
    lib.check(run.code == 0, "the first run ends well", run)
    reqs = proxied.check_every_request_accepted(ctx, "responses")
    r, d = lib.diagnose(ctx.sb, cx.rollout(ctx, cx.session_id_of(run)))
    lib.check(d["stuck"] is False and not d.get("failure"), "diagnose: the session records no rejection", r)
    return reqs


def _case(ctx, case):
    name, data = proxied.CASES[case]
    (ctx.sb.work / name).write_bytes(data())
    ctx.provider.settings.tool = ("view_image", {"path": name})
    with proxied.Proxied(ctx) as px:
        return _first_run(ctx, px, "READ-THE-FILE %s" % name)


def scenario_proxy_cut_png_first_run_gets_200(ctx):
    reqs = _case(ctx, "cut_png")
    lib.check(all(media.problem(i) is None for r in reqs for i in proxied.images(r["body"])), "no broken image reached the provider")


def scenario_proxy_9000px_screenshot_first_run_gets_200(ctx):
    _case(ctx, "wide_png")


def scenario_proxy_31_images_against_a_limit_of_30(ctx):
    sb, p = ctx.sb, ctx.provider
    paths = [sb.work / ("p%02d.png" % i) for i in range(proxied.MANY)]
    for i, path in enumerate(paths):
        path.write_bytes(lib.png(4, 4, (i * 8, 0, 0)))
    p.settings.max_images = proxied.LIMIT
    with proxied.Proxied(ctx, "--max-images", proxied.LIMIT) as px:
        reqs = _first_run(ctx, px, "look at them", *["--image=%s" % x for x in paths])
        proxied.check_journal(px, "capped")
    lib.check(max(len(proxied.images(r["body"])) for r in reqs) == proxied.LIMIT, "the provider received 30 images, not 31")


def scenario_proxy_forwards_what_it_need_not_change_byte_for_byte(ctx):
    (ctx.sb.work / "ok.png").write_bytes(lib.png(16, 16))
    ctx.provider.settings.tool = ("view_image", {"path": "ok.png"})
    with proxied.Proxied(ctx) as px:
        _first_run(ctx, px, "READ-THE-FILE ok.png")
        lib.check(not px.journal(), "nothing to change: nothing journaled", px.journal())
        px.check_untouched_requests_are_byte_identical()
