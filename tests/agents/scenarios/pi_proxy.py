"""pi pointed at `session-doctor proxy` (its models file's ``baseUrl``), which forwards to the fake provider.

With ``images.autoResize: false`` pi sends what its read tool read, as it is
(see pi.py): a cut PNG and a 9000 px screenshot each leave a session stuck
when sent direct (a PDF pi reads as text). Through the proxy the broken files reach the provider
as the note `repair` writes, the screenshot fitted to 8000 px, and 31 images
as 30 (``--max-images 30``): the first run gets a 200 on every request and the
session records no rejection. A request with nothing to change reaches the
provider byte for byte.
"""

import json

import lib
import proxied
from fake import media

ENV = {"ANTHROPIC_API_KEY": "sk-ant-suite", "PI_OFFLINE": "1"}
MODEL = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]


def _setup(ctx, px):
    agent = ctx.sb.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": px.url}}}))
    (agent / "settings.json").write_text(json.dumps({"images": {"autoResize": False}}))


def _session(sb):
    found = sorted((sb.home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
    lib.check(found, "pi wrote a session file")
    return found[-1]


def _first_run(ctx, px, prompt):
    _setup(ctx, px)
    run = ctx.sb.run([ctx.exe, *MODEL, "-p", prompt], env=ENV)
    lib.check(run.code == 0, "the first run ends well", run)
    reqs = proxied.check_every_request_accepted(ctx, "anthropic")
    r, d = lib.diagnose(ctx.sb, _session(ctx.sb))
    lib.check(d["stuck"] is False and not d.get("failure"), "diagnose: the session records no rejection", r)
    return reqs


def _case(ctx, case, what):
    name, data = proxied.CASES[case]
    (ctx.sb.work / name).write_bytes(data())
    ctx.provider.settings.tool = ("read", {"path": name})
    with proxied.Proxied(ctx) as px:
        reqs = _first_run(ctx, px, "READ-THE-FILE %s" % name)
        if what:
            proxied.check_journal(px, what)
    return reqs


def scenario_proxy_cut_png_first_run_gets_200(ctx):
    reqs = _case(ctx, "cut_png", "replaced")
    lib.check(all(media.problem(i) is None for r in reqs for i in proxied.images(r["body"])), "no broken image reached the provider")


def scenario_proxy_cut_pdf_first_run_gets_200(ctx):
    """pi's read tool attaches images only (a PDF goes as text, pi.py): nothing for the proxy to replace."""
    _case(ctx, "cut_pdf", None)


def scenario_proxy_9000px_screenshot_first_run_gets_200(ctx):
    reqs = _case(ctx, "wide_png", "fitted")
    dims = {media.dimensions(i) for r in reqs for i in proxied.images(r["body"])}
    lib.check(dims == {(8000, 35)}, "the screenshot reached the provider fitted to 8000 px, aspect kept: %s" % dims)


def scenario_proxy_31_images_against_a_limit_of_30(ctx):
    sb, p = ctx.sb, ctx.provider
    names = ["p%02d.png" % i for i in range(proxied.MANY)]
    for i, n in enumerate(names):
        (sb.work / n).write_bytes(lib.png(4, 4, (i * 8, 0, 0)))
    p.settings.tool = ("read", {"path": names[0]})
    p.settings.more_tools = [("read", {"path": n}) for n in names[1:]]
    p.settings.max_images = proxied.LIMIT
    with proxied.Proxied(ctx, "--max-images", proxied.LIMIT) as px:
        reqs = _first_run(ctx, px, "READ-THE-FILE all of them")
        proxied.check_journal(px, "capped")
    lib.check(max(len(proxied.images(r["body"])) for r in reqs) == proxied.LIMIT, "the provider received 30 images, not 31")


def scenario_proxy_forwards_what_it_need_not_change_byte_for_byte(ctx):
    (ctx.sb.work / "ok.png").write_bytes(lib.png(16, 16))
    ctx.provider.settings.tool = ("read", {"path": "ok.png"})
    with proxied.Proxied(ctx) as px:
        _first_run(ctx, px, "READ-THE-FILE ok.png")
        lib.check(not px.journal(), "nothing to change: nothing journaled", px.journal())
        px.check_untouched_requests_are_byte_identical()
