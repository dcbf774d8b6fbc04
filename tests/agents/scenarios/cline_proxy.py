"""Cline pointed at `session-doctor proxy` (``cline auth … -b URL/v1``), which forwards to the fake provider.

Cline's read_files sends an image it read as it is, over Chat Completions: a
cut PNG leaves the task stuck when sent direct (cline.py). Through the proxy it
reaches the provider as the note `repair` writes, a cut PDF as Cline sends it
(no file part), a 9000 px screenshot as it is (OpenAI sets no side limit), and 31 images read at once as 30
(``--max-images 30``): each first run gets a 200 on every request and the task
records no rejection. A request with nothing to change reaches the provider
byte for byte.
"""

import json

import lib
import proxied
from fake import media
from scenarios import cline as cl


def _first_run(ctx, px, files):
    r = ctx.sb.run([ctx.exe, "auth", "-p", "openai", "-k", "fake-key", "-m", cl.MODEL, "-b", px.url + "/v1"], timeout=60)
    lib.check(r.code == 0, "cline auth points it at the proxy", r)
    ctx.provider.settings.tool = ("read_files", {"files": [{"path": str(ctx.sb.work / f)} for f in files]})
    run = cl._run(ctx, "READ-THE-FILE %s" % " ".join(files))
    lib.check(run.code == 0, "the first run ends well", run)
    reqs = proxied.check_every_request_accepted(ctx, "chat")
    sessions = cl._sessions(ctx)
    lib.check(sessions, "Cline wrote a task")
    rd, d = lib.diagnose(ctx.sb, sessions[-1])
    lib.check(d["stuck"] is False and not d.get("failure"), "diagnose: the task records no rejection", rd)
    return reqs


def _case(ctx, case, what):
    name, data = proxied.CASES[case]
    (ctx.sb.work / name).write_bytes(data())
    with proxied.Proxied(ctx) as px:
        reqs = _first_run(ctx, px, [name])
        if what:
            proxied.check_journal(px, what)
    return reqs


@cl._ends_its_hubs
def scenario_proxy_cut_png_first_run_gets_200(ctx):
    reqs = _case(ctx, "cut_png", "replaced")
    lib.check(all(media.problem(i) is None for r in reqs for i in proxied.images(r["body"])), "no broken image reached the provider")


@cl._ends_its_hubs
def scenario_proxy_cut_pdf_first_run_gets_200(ctx):
    """Cline's read_files sends no file part for a PDF: nothing for the proxy to replace."""
    reqs = _case(ctx, "cut_pdf", None)
    sent = json.dumps([r["body"] for r in reqs])
    lib.check('"file_data"' not in sent, "Cline sends no file part for a PDF", sent[:3000])


@cl._ends_its_hubs
def scenario_proxy_9000px_screenshot_first_run_gets_200(ctx):
    _case(ctx, "wide_png", None)


@cl._ends_its_hubs
def scenario_proxy_31_images_against_a_limit_of_30(ctx):
    names = ["p%02d.png" % i for i in range(proxied.MANY)]
    for i, n in enumerate(names):
        (ctx.sb.work / n).write_bytes(lib.png(4, 4, (i * 8, 0, 0)))
    ctx.provider.settings.max_images = proxied.LIMIT
    with proxied.Proxied(ctx, "--max-images", proxied.LIMIT) as px:
        reqs = _first_run(ctx, px, names)
        proxied.check_journal(px, "capped")
    lib.check(max(len(proxied.images(r["body"])) for r in reqs) == proxied.LIMIT, "the provider received 30 images, not 31")


@cl._ends_its_hubs
def scenario_proxy_forwards_what_it_need_not_change_byte_for_byte(ctx):
    (ctx.sb.work / "ok.png").write_bytes(lib.png(16, 16))
    with proxied.Proxied(ctx) as px:
        _first_run(ctx, px, ["ok.png"])
        lib.check(not px.journal(), "nothing to change: nothing journaled", px.journal())
        px.check_untouched_requests_are_byte_identical()
