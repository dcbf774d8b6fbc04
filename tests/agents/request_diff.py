"""Compare a `preview` with the request an agent logged at the provider, item by item.

Agent-neutral: `items(previewed, sent, normalise)` walks both lists in step
and returns one line per difference (an empty list means equal). `normalise`
is the agent's own view of an item before comparison (identity by default);
JSON objects compare as objects, so key order never counts.
"""

import json


def items(previewed, sent, normalise=None):
    norm = normalise or (lambda item: item)
    out = []
    if len(previewed) != len(sent):
        out.append("preview has %d items, the agent sent %d" % (len(previewed), len(sent)))
    for i, (a, b) in enumerate(zip(previewed, sent)):
        a, b = norm(a), norm(b)
        if a != b:
            out.append("item %d differs: %s" % (i, "; ".join(where(a, b, ""))))
    for i in range(len(sent), len(previewed)):
        out.append("item %d only in the preview: %s" % (i, short(previewed[i])))
    for i in range(len(previewed), len(sent)):
        out.append("item %d only in the request: %s" % (i, short(sent[i])))
    return out


def where(a, b, path):
    """The JSON paths at which a and b differ (first few)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for k in sorted(set(a) | set(b)):
            if k not in a:
                found.append("%s/%s only sent (%s)" % (path, k, short(b[k])))
            elif k not in b:
                found.append("%s/%s only previewed (%s)" % (path, k, short(a[k])))
            elif a[k] != b[k]:
                found.extend(where(a[k], b[k], "%s/%s" % (path, k)))
        return found[:6]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) if x != y for d in where(x, y, "%s/%d" % (path, i))][:6]
    return ["%s: previewed %s, sent %s" % (path or "/", short(a), short(b))]


def short(v, limit=160):
    text = json.dumps(v, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…"
