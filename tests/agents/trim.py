#!/usr/bin/env python3
"""Trim a session file an agent wrote into a small test fixture, keeping its exact shape.

    python3 tests/agents/trim.py SESSION > tests/data/agents/<agent>/NAME.jsonl

Every line keeps its keys, their order and its types; only long strings are
cut (to their first 80 characters and ``…``), except ``data:`` URLs and base64
payloads, which are media and stay whole. Sandbox paths (``/tmp/sd-…``) become
``/tmp/sd-fixture``. A JSON-lines file stays one JSON document per line.
"""

import json
import re
import sys

LIMIT = 200


def trim(v):
    if isinstance(v, dict):
        return {k: trim(x) for k, x in v.items()}
    if isinstance(v, list):
        return [trim(x) for x in v]
    if isinstance(v, str):
        v = re.sub(r"/tmp/sd-[a-z_-]+-[a-z0-9_]{8}", "/tmp/sd-fixture", v)
        if len(v) > LIMIT and not v.startswith("data:") and not re.fullmatch(r"[A-Za-z0-9+/=]+", v):
            return v[:80] + "…"
    return v


def main(path):
    for line in open(path, encoding="utf-8"):
        if line.strip():
            sys.stdout.write(json.dumps(trim(json.loads(line)), ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
