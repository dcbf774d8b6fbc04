"""Claude Code pointed at `session-doctor proxy` (``ANTHROPIC_BASE_URL``), which forwards to the fake provider.

No guard: Claude Code's Read sends what it read. Through the proxy a cut PNG
and a cut PDF reach the provider as the note `repair` writes, a 9000 px
screenshot within Anthropic's 8000 px side, and 31 images as 30 (``--max-images
30``, the provider's limit here; Claude Code's Read downscales the screenshot
itself, so that one may reach the proxy already fitted): the first run gets a 200 on every request
and the session records no rejection. A request with nothing to change
reaches the provider byte for byte.
"""

import lib
import proxied
from fake import media

ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-suite",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
}


def _session(sb):
    found = sorted((sb.home / ".claude" / "projects").glob("*/*.jsonl"))
    lib.check(found, "Claude Code wrote a session file")
    return found[-1]


def _run(ctx, px, prompt):
    env = dict(ENV, ANTHROPIC_BASE_URL=px.url)
    return ctx.sb.run([ctx.exe, "-p", prompt, "--allowedTools", "Read", "--output-format", "json"], env=env)


def _not_stuck(ctx, run):
    lib.check(run.code == 0 and '"is_error":false' in run.stdout.replace(" ", ""), "the first run ends well", run)
    reqs = proxied.check_every_request_accepted(ctx, "anthropic")
    r, d = lib.diagnose(ctx.sb, _session(ctx.sb))
    lib.check(d["stuck"] is False and not d.get("failure"), "diagnose: the session records no rejection", r)
    return reqs


def _case(ctx, case, what):
    name, data = proxied.CASES[case]
    (ctx.sb.work / name).write_bytes(data())
    ctx.provider.settings.tool = ("Read", {"file_path": str(ctx.sb.work / name)})
    with proxied.Proxied(ctx) as px:
        reqs = _not_stuck(ctx, _run(ctx, px, "READ-THE-FILE %s please" % name))
        if what:
            proxied.check_journal(px, what)
    return reqs


def scenario_proxy_cut_png_first_run_gets_200(ctx):
    reqs = _case(ctx, "cut_png", "replaced")
    lib.check(all(media.problem(i) is None for r in reqs for i in proxied.images(r["body"])), "no broken image reached the provider")


def scenario_proxy_cut_pdf_first_run_gets_200(ctx):
    _case(ctx, "cut_pdf", "replaced")


def scenario_proxy_9000px_screenshot_first_run_gets_200(ctx):
    """Claude Code's Read downscales an image itself: the proxy may have nothing to fit."""
    reqs = _case(ctx, "wide_png", None)
    dims = {media.dimensions(i) for r in reqs for i in proxied.images(r["body"])}
    lib.check(dims and all(max(d) <= 8000 for d in dims), "the screenshot reached the provider within 8000 px: %s" % dims)


def scenario_proxy_31_images_against_a_limit_of_30(ctx):
    sb, p = ctx.sb, ctx.provider
    paths = [sb.work / ("p%02d.png" % i) for i in range(proxied.MANY)]
    for i, path in enumerate(paths):
        path.write_bytes(lib.png(4, 4, (i * 8, 0, 0)))
    p.settings.tool = ("Read", {"file_path": str(paths[0])})
    p.settings.more_tools = [("Read", {"file_path": str(x)}) for x in paths[1:]]
    p.settings.max_images = proxied.LIMIT
    with proxied.Proxied(ctx, "--max-images", proxied.LIMIT) as px:
        reqs = _not_stuck(ctx, _run(ctx, px, "READ-THE-FILE all of them please"))
        proxied.check_journal(px, "capped")
    lib.check(max(len(proxied.images(r["body"])) for r in reqs) == proxied.LIMIT, "the provider received 30 images, not 31")


def scenario_proxy_forwards_what_it_need_not_change_byte_for_byte(ctx):
    (ctx.sb.work / "ok.png").write_bytes(lib.png(16, 16))
    ctx.provider.settings.tool = ("Read", {"file_path": str(ctx.sb.work / "ok.png")})
    with proxied.Proxied(ctx) as px:
        _not_stuck(ctx, _run(ctx, px, "READ-THE-FILE ok.png please"))
        lib.check(not px.journal(), "nothing to change: nothing journaled", px.journal())
        px.check_untouched_requests_are_byte_identical()
