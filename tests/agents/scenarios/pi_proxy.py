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


def scenario_proxy_signs_an_unsigned_gemini_3_call(ctx):
    """pi on gemini-3-pro-preview behind a gateway that drops thought signatures
    (the fake's ``drop_signatures``): pi keeps the call it was answered with
    unsigned and sends it so in the turn's next step (it adds no placeholder:
    ``resolveThoughtSignature`` in pi-ai's google-shared.js keeps a base64
    signature of the same model only), and Gemini 3 refuses it, "Function
    call is missing a thought_signature", position 2: the run fails, and
    diagnose names the proxy (no --strip-reasoning, which cannot add one). Its
    resume with a new prompt starts a new turn, in which the old call is not
    checked: a 200. The same
    run through the proxy: the proxy gives that call Google's placeholder,
    every request gets a 200, and the journal says `signed`."""
    (ctx.sb.work / "notes.txt").write_text("hello notes\n")
    ctx.provider.settings.tool = ("read", {"path": "notes.txt"})
    ctx.provider.settings.drop_signatures = True
    env = dict(ENV, GEMINI_API_KEY="fake-key")
    model = ["--provider", "google", "--model", "gemini-3-pro-preview"]
    agent = ctx.sb.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = agent / "models.json"
    models.write_text(json.dumps({"providers": {"google": {"baseUrl": ctx.provider.url + "/v1beta"}}}))
    direct = ctx.sb.run([ctx.exe, *model, "-p", "READ-THE-FILE notes.txt"], env=env)
    sent = ctx.provider.model_requests("gemini")
    lib.check(len(sent) == 2 and sent[0]["status"] == 200, "direct: the call is answered, the turn's next step is sent", [(e["path"], e["status"]) for e in sent])
    calls = [p for c in sent[1]["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    lib.check(calls and not any("thoughtSignature" in p or "thought_signature" in p for p in calls), "pi sends the call unsigned, with no placeholder", calls)
    message = json.dumps(sent[1]["answer"])
    lib.check(sent[1]["status"] == 400 and "Function call is missing a thought_signature" in message and "position 2" in message, "direct: Gemini 3 refuses the unsigned call of the current turn", sent[1]["answer"])
    lib.check(direct.code != 0 or "thought_signature" in direct.out + direct.err, "direct: pi's run fails on it", direct)
    first = _session(ctx.sb)
    r, d = lib.diagnose(ctx.sb, first)
    lib.check(d["stuck"] is True and (d.get("failure") or {}).get("class") == "reasoning_rejected", "diagnose: the refusal, reasoning_rejected", r)
    lib.check("strip-reasoning" not in json.dumps(d.get("next")) and "`session-doctor proxy` gives such calls" in json.dumps(d.get("notes")), "diagnose offers no --strip-reasoning and names the proxy", r)
    # Its next prompt starts a new turn: the unsigned call is sent again, and not checked.
    resumed = ctx.sb.run([ctx.exe, "--session", first, *model, "-p", "continue"], env=env)
    later = ctx.provider.model_requests("gemini")[len(sent):]
    old = [p for e in later[:1] for c in e["body"]["contents"] for p in c["parts"] if "functionCall" in p]
    lib.check(resumed.code == 0 and later and all(e["status"] == 200 for e in later) and old and "thoughtSignature" not in old[0], "direct: its resume, a new turn, sends the call unsigned and gets a 200", resumed, [(e["status"], e["answer"]) for e in later])
    n = len(ctx.provider.model_requests("gemini"))
    with proxied.Proxied(ctx) as px:
        models.write_text(json.dumps({"providers": {"google": {"baseUrl": px.url + "/v1beta"}}}))
        again = ctx.sb.run([ctx.exe, *model, "-p", "READ-THE-FILE notes.txt"], env=env)
        journal = px.journal()
    reqs = ctx.provider.model_requests("gemini")[n:]
    lib.check(again.code == 0 and len(reqs) == 2 and all(e["status"] == 200 for e in reqs), "through the proxy: both steps get a 200", again, [(e["status"], e["answer"]) for e in reqs])
    part = next(p for c in reqs[1]["body"]["contents"] for p in c["parts"] if "functionCall" in p)
    lib.check(part.get("thoughtSignature") == "skip_thought_signature_validator", "the provider received the call with Google's placeholder", part)
    signed = [c for line in journal for c in line["changes"] if c["what"] == "signed"]
    lib.check(len(signed) == 1 and signed[0]["block"] == "contents[1].parts[0]", "the journal says the proxy signed that call", journal)
