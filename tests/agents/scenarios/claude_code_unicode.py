"""Claude Code 2.1.332 and half characters (issue 37 item 4).

A string cut inside an emoji between its two UTF-16 code units is a lone
surrogate, which `JSON.stringify` writes as an escape (`"\\ud83c"`) and
Anthropic's parser refuses ("The request body is not valid JSON: no low
surrogate in string"); the fake provider refuses it the same way. Claude Code
2.1.332 does not get there: the output it keeps of a tool (`toolUseResult.stdout`,
30000 bytes) is cut by bytes and decoded, so an emoji cut there becomes U+FFFD
(the scenario below); the 2 KB preview of a persisted output ends on a whole
character; and every request goes through its own sanitizer (`toWellFormed`:
each lone surrogate becomes U+FFFD; its telemetry event is
`tengu_lone_surrogate_sanitized`), so the fake provider's rule is never met.
Sessions that hold one come from older versions (anthropics/claude-code#1939,
#3277): `tests/it/lone_surrogate.rs` covers what session-doctor does with them.
"""

import json

from lib import check

from . import claude_code as cc


def scenario_a_cut_emoji_is_never_a_lone_surrogate(ctx):
    """An output of emoji only, over the inline limit, so cut where Claude
    Code keeps it: the session holds U+FFFD there and no lone surrogate
    escape, and the strict provider takes every request."""
    (ctx.sb.work / "out.txt").write_text("x" + "\U0001F389" * 40000 + "\n", encoding="utf-8")
    ctx.provider.settings.tool = ("Bash", {"command": "cat out.txt", "description": "Print the output"})
    since = cc._mark(ctx)
    r, res = cc._run(ctx, "READ-THE-FILE out.txt please", tools="Bash")
    check(r.code == 0 and not res.get("is_error"), "the run finishes", r)
    session = cc._session(ctx, res["session_id"])
    text = session.read_text(encoding="utf-8")
    preview = [x for x in text.splitlines() if "<persisted-output>" in x]
    check(preview, "the output is persisted, the transcript keeps its preview", text[-2000:])
    # The output Claude Code keeps for its UI (`toolUseResult.stdout`) is cut
    # by bytes and decoded: the emoji cut in two is U+FFFD, not half of it.
    stdout = json.loads(preview[0]).get("toolUseResult", {}).get("stdout", "")
    check(stdout.endswith("\U0001F389\ufffd"), "the kept output was cut inside an emoji, written as U+FFFD", stdout[-40:])
    check("\\ud8" not in text.lower() and "\\udc" not in text.lower(), "the session holds no surrogate escape", None)
    scan = ctx.sb.doctor("scan", session, "--json").json()
    check(not [f for f in scan["findings"] if f.get("code") == "line.lone_surrogate"], "scan finds no lone surrogate", scan["findings"])
    sent = cc._sent(ctx, since)
    check(sent and all(e["status"] == 200 for e in sent), "the strict provider takes every request (no lone surrogate sent)", [(e["status"], e["answer"]) for e in sent])
