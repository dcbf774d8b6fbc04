"""opencode on the OpenAI Responses API with replayed reasoning (shared/seeds/004).

A custom provider with ``npm: "@ai-sdk/openai"`` (which opencode bundles) points
opencode at the loopback provider's ``/v1/responses``. The provider answers with
a reasoning item (an ``rs_`` id and encrypted content); opencode keeps both in
the reasoning part's ``metadata.openai``. What opencode sends of it on the next
request depends on ``store``: opencode sets ``store: false`` for ``@ai-sdk/openai``
and then takes every ``itemId`` out itself (``ProviderTransform.message``), so
the reasoning goes as its encrypted content alone; a model configured with
``store: true`` keeps the ids, and the AI SDK sends each as an ``item_reference``
the provider's store must hold.
"""

import json

import lib
from scenarios.opencode import ENV, _db, _export, _opencode, _session_id


def _setup(ctx, store, reasoning=True):
    sb = ctx.sb
    model = {"name": "GPT Fake", "reasoning": reasoning, "attachment": False, "modalities": {"input": ["text"], "output": ["text"]}}
    if store is not None:
        model["options"] = {"store": store}
    provider = {"npm": "@ai-sdk/openai", "name": "Fake", "options": {"baseURL": ctx.provider.url + "/v1", "apiKey": "fake-key"}, "models": {"gpt-5-fake": model}}
    config = {"$schema": "https://opencode.ai/config.json", "provider": {"fake": provider}, "model": "fake/gpt-5-fake", "autoupdate": False, "share": "disabled"}
    (sb.work / "opencode.json").write_text(json.dumps(config))
    ctx.provider.settings.emit_reasoning = reasoning


def _requests(ctx, since=0):
    """The model requests sent since ``since`` (the title requests have no tools)."""
    return [e for e in ctx.provider.model_requests("responses")[since:] if e["body"].get("tools")]


def _reasoning(items):
    return [i for i in items if i.get("type") in ("reasoning", "item_reference")]


def _responses_items(items):
    """Responses input items as comparable values (the SDK leaves ``type`` off a message)."""
    out = []
    for item in items:
        item = dict(item)
        if "role" in item:
            item.setdefault("type", "message")
            content = item["content"] if isinstance(item["content"], list) else [{"type": "input_text", "text": item["content"]}]
            item["content"] = [{k: v for k, v in c.items() if k != "annotations"} for c in content]
        out.append(item)
    return out


def _stuck(ctx, store, break_it, answer, reasoning=True):
    """A first turn (that reasons, unless ``reasoning`` is false), then ``break_it``;
    opencode's resume and a second resume meet ``answer``. Returns (session id, export
    text, last request)."""
    _setup(ctx, store, reasoning)
    first = _opencode(ctx, "run", "Say hi.")
    lib.check(first.code == 0 and _requests(ctx)[-1]["status"] == 200, "the first run succeeds", first)
    break_it()
    for what in ("opencode's resume", "and the next"):
        n = len(ctx.provider.model_requests("responses"))
        again = _opencode(ctx, "run", "--continue", "continue")
        sent = _requests(ctx, n)
        lib.check(sent and sent[-1]["status"] == 400 and answer in json.dumps(sent[-1]["answer"]), "%s meets the 400 %r" % (what, answer), again, sent[-1:] and sent[-1]["answer"])
    session = _session_id(_db(ctx))
    export = ctx.sb.root / "export.json"
    export.write_text(_export(ctx, session))
    return session, export, sent[-1]


def _rescued(ctx, export, flag, cls):
    """diagnose names ``flag``, repair with it, preview of the copy = what opencode sends
    resuming it, and that resume gets a 200. Returns the request sent."""
    r, d = lib.diagnose(ctx.sb, export)
    lib.check(d["stuck"] is True and r.code == 1 and d["failure"]["class"] == cls, "diagnose: stuck, %s" % cls, r)
    lib.check(any(flag in n for n in d["next"]), "the next command names %s" % flag, r)
    out = ctx.sb.root / "repaired"
    out.mkdir()
    rep = ctx.sb.doctor("repair", export, "--out", out, "--json", flag)
    lib.check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    r, d = lib.diagnose(ctx.sb, copy["out"])
    lib.check(d["stuck"] is False, "diagnose on the copy: not stuck", r)
    p = ctx.sb.doctor("preview", copy["out"])
    lib.check(p.code == 0, "preview of the copy runs", p)
    previewed = json.loads(p.stdout)["input"]
    imp = _opencode(ctx, "import", copy["out"])
    lib.check(imp.code == 0, "opencode imports the copy", imp)
    n = len(ctx.provider.model_requests("responses"))
    resumed = _opencode(ctx, "run", "--session", copy["id"], "continue")
    sent = _requests(ctx, n)
    lib.check(resumed.code == 0 and sent and sent[0]["status"] == 200, "opencode resumes the copy with a 200", resumed, sent[:1] and sent[0]["answer"])
    body = sent[0]["body"]
    # The request holds the system prompt first and the resume's own prompt last.
    want = _responses_items([i for i in body["input"] if i.get("role") != "developer"][:-1])
    lib.check(_responses_items(previewed) == want, "preview of the copy = what opencode sent resuming it", previewed, want)
    return body


def scenario_stale_reasoning_reference_dropped(ctx):
    """store: true, then a route switch: the item_reference of the reasoning is stale.
    (opencode's default store: false never sends an item id: it takes them out itself.)"""
    _, export, last = _stuck(ctx, True, ctx.provider.forget, "Item with id 'rs_")
    refs = [i["id"] for i in last["body"]["input"] if i.get("type") == "item_reference"]
    lib.check(refs and refs[0].startswith("rs_"), "opencode sent the reasoning by reference", refs)
    lib.check(any(r.startswith("msg_") for r in refs), "and the reply's text too", refs)
    body = _rescued(ctx, export, "--drop-reasoning-ids", "reasoning_rejected")
    sent = json.dumps(body["input"])
    lib.check('"rs_' not in sent and _reasoning(body["input"]), "the reasoning went without its rs_ id", sent[:3000])
    lib.check("item_reference" not in sent, "and nothing went by reference", sent[:3000])


def scenario_stale_reply_reference_dropped(ctx):
    """store: true without reasoning, then a route switch: the reply's own msg_ item
    reference is stale ("Item with id 'msg_…' not found."). Issue 38 round 4: that was
    classified invalid_request (only an rs_ id counted), so diagnose named no cure."""
    _, export, last = _stuck(ctx, True, ctx.provider.forget, "Item with id 'msg_", reasoning=False)
    refs = [i["id"] for i in last["body"]["input"] if i.get("type") == "item_reference"]
    lib.check(refs and all(r.startswith("msg_") for r in refs), "opencode sent the reply by reference, no reasoning", refs)
    body = _rescued(ctx, export, "--drop-reasoning-ids", "reasoning_rejected")
    lib.check("item_reference" not in json.dumps(body["input"]), "nothing went by reference", body["input"])


def scenario_unverified_encrypted_reasoning_stripped(ctx):
    """opencode's default store: false; another organisation's key: the blob cannot be verified."""
    ctx.provider.settings.verify_encrypted = True
    _, export, last = _stuck(ctx, None, ctx.provider.new_org, "could not be verified")
    lib.check(_reasoning(last["body"]["input"]), "opencode replayed its encrypted reasoning", last["body"]["input"])
    p = ctx.sb.doctor("preview", export)
    lib.check(p.code == 0, "preview of the stuck session runs", p)
    sent = [i for i in last["body"]["input"] if i.get("role") != "developer"][:-1]
    lib.check(_reasoning(json.loads(p.stdout)["input"]) == _reasoning(sent), "preview shows the reasoning opencode sent", p.stdout[:3000], sent)
    body = _rescued(ctx, export, "--strip-reasoning=openai", "reasoning_rejected")
    lib.check(not _reasoning(body["input"]), "the copy sends no reasoning", body["input"])
