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


def _setup(ctx, store):
    sb = ctx.sb
    model = {"name": "GPT Fake", "reasoning": True, "attachment": False, "modalities": {"input": ["text"], "output": ["text"]}}
    if store is not None:
        model["options"] = {"store": store}
    provider = {"npm": "@ai-sdk/openai", "name": "Fake", "options": {"baseURL": ctx.provider.url + "/v1", "apiKey": "fake-key"}, "models": {"gpt-5-fake": model}}
    config = {"$schema": "https://opencode.ai/config.json", "provider": {"fake": provider}, "model": "fake/gpt-5-fake", "autoupdate": False, "share": "disabled"}
    (sb.work / "opencode.json").write_text(json.dumps(config))
    ctx.provider.settings.emit_reasoning = True


def _requests(ctx, since=0):
    """The model requests sent since ``since`` (the title requests have no tools)."""
    return [e for e in ctx.provider.model_requests("responses")[since:] if e["body"].get("tools")]


def _reasoning(items):
    return [i for i in items if i.get("type") in ("reasoning", "item_reference")]


def scenario_explore(ctx):
    _setup(ctx, True)
    first = _opencode(ctx, "run", "Say hi.")
    lib.check(first.code == 0, "the first run succeeds", first)
    again = _opencode(ctx, "run", "--continue", "continue")
    lib.check(again.code == 0, "the resume succeeds", again)
    sent = _requests(ctx)
    print(json.dumps([e["body"]["input"] for e in sent], indent=1)[:6000])
    session = _session_id(_db(ctx))
    print(_export(ctx, session)[:6000])
    lib.check(False, "explore")
