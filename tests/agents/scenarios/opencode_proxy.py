"""opencode pointed at `session-doctor proxy` (its provider's ``options.baseURL``), which forwards to the fake provider.

opencode's read tool sends a PDF as a document as it is: a cut PDF leaves the
session stuck when sent direct (opencode.py); through the proxy it reaches the
provider as the note `repair` writes. opencode decodes and resizes images
itself, so a cut PNG or a 9000 px screenshot may reach the proxy already
handled; 31 images reach the provider as 30 (``--max-images 30``). Each first
run gets a 200 on every request and the session records no rejection; a
request with nothing to change reaches the provider byte for byte.
"""

import json

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


def scenario_proxy_signs_an_unsigned_gemini_3_call(ctx):
    """opencode on gemini-3-pro-preview (``npm: "@ai-sdk/google"``, which it
    bundles) behind a gateway that drops thought signatures (the fake's
    ``drop_signatures``): it keeps the call it was answered with unsigned and
    sends it so in the turn's next step, and Gemini 3 refuses it ("Function
    call is missing a thought_signature", position 2): the run fails. (Its
    bundled AI SDK holds the placeholder, but sends it for none of these
    calls.) Its resume with a new prompt starts a new turn, in which the old
    call is not checked: a 200. The same run through the proxy: the call reaches the provider
    with Google's placeholder, every request gets a 200, the journal says
    `signed`."""
    sb = ctx.sb
    model = {"name": "Gemini 3 Fake", "attachment": False, "modalities": {"input": ["text"], "output": ["text"]}}
    provider = {"npm": "@ai-sdk/google", "name": "Fake", "options": {"baseURL": ctx.provider.url + "/v1beta", "apiKey": "fake-key"}, "models": {"gemini-3-pro-preview": model}}
    config = {"$schema": "https://opencode.ai/config.json", "provider": {"fake": provider}, "model": "fake/gemini-3-pro-preview", "small_model": "fake/gemini-3-pro-preview", "autoupdate": False, "share": "disabled"}
    (sb.work / "opencode.json").write_text(json.dumps(config))
    (sb.work / "notes.txt").write_text("hello notes\n")
    ctx.provider.settings.tool = ("read", {"filePath": str(sb.work / "notes.txt")})
    ctx.provider.settings.drop_signatures = True

    def steps(sent):
        return [e for e in sent if any("functionResponse" in p for c in e["body"]["contents"] for p in c["parts"])]

    direct = _opencode(ctx, "run", "READ-THE-FILE notes.txt")
    refused = steps(ctx.provider.model_requests("gemini"))
    lib.check(refused, "direct: the turn's next step is sent", [(e["path"], e["status"]) for e in ctx.provider.model_requests("gemini")])
    calls = [p for c in refused[0]["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    lib.check(calls and not any("thoughtSignature" in p or "thought_signature" in p for p in calls), "opencode sends the call unsigned, with no placeholder", calls)
    message = json.dumps(refused[0]["answer"])
    lib.check(refused[0]["status"] == 400 and "Function call is missing a thought_signature" in message and "position 2" in message, "direct: Gemini 3 refuses it", refused[0]["answer"])
    lib.check(direct.code != 0, "direct: opencode's run fails on it", direct)
    # Its next prompt starts a new turn: the unsigned call is sent again, and not checked.
    n = len(ctx.provider.model_requests("gemini"))
    resumed = _opencode(ctx, "run", "--continue", "continue")
    later = [e for e in ctx.provider.model_requests("gemini")[n:] if e["body"].get("tools")]
    old = [p for e in later[:1] for c in e["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    lib.check(resumed.code == 0 and later and all(e["status"] == 200 for e in later) and old and "thoughtSignature" not in old[0], "direct: its resume, a new turn, sends the call unsigned and gets a 200", resumed, [(e["status"], e["answer"]) for e in later])
    n = len(ctx.provider.model_requests("gemini"))
    with proxied.Proxied(ctx) as px:
        _point(ctx, px)
        again = _opencode(ctx, "run", "READ-THE-FILE notes.txt")
        journal = px.journal()
    reqs = ctx.provider.model_requests("gemini")[n:]
    lib.check(again.code == 0 and steps(reqs) and all(e["status"] == 200 for e in reqs), "through the proxy: every request gets a 200", again, [(e["status"], e["answer"]) for e in reqs])
    part = next(p for c in steps(reqs)[0]["body"]["contents"] for p in c["parts"] if "functionCall" in p)
    lib.check(part.get("thoughtSignature") == "skip_thought_signature_validator", "the provider received the call with Google's placeholder", part)
    signed = [c for line in journal for c in line["changes"] if c["what"] == "signed"]
    lib.check(signed and all(c["block"] == "contents[1].parts[0]" for c in signed), "the journal says the proxy signed that call", journal)
