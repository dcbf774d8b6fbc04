#!/usr/bin/env python3
"""Write the Claude Code fixtures of tests/data/agents/claude-code/ by driving
the real agent (the version pinned in lib.AGENTS) against the fake provider.

    python3 tests/agents/capture_claude_code.py [OUT_DIR]

Each fixture is a session file exactly as the agent wrote it, trimmed only in
what is neither history nor sent (the system prompt and tool list it snapshots
in `prompt_snapshot` and `api-request-shape`) and in long attachment texts,
which are cut the same way in the `.sent.json` beside it: the `messages` the
agent sent when it resumed session-doctor's repaired copy, without the
resume's own prompt. Needs a built session-doctor (as the suite does).
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lib  # noqa: E402
from fake.provider import Provider  # noqa: E402
from scenarios import claude_code as cc  # noqa: E402

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else lib.ROOT / "tests" / "data" / "agents" / "claude-code")
LONG = 400


def cut(s):
    return s if len(s) <= LONG else s[:250] + "[…cut for the fixture…]" + s[-100:]


def trim_line(d, cuts):
    """Shorten what no request carries, and long rendered texts (noted in `cuts`)."""
    t = d.get("type")
    if t == "api-request-shape":
        d["shape"] = {k: [] for k in d.get("shape", {})}
    if t == "api-request-blob":
        for b in (d.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and isinstance(b.get("text"), str):
                b["text"] = cut(b["text"])
    if t == "attachment":
        a = d["attachment"]
        for k in ("systemPrompt", "tools"):
            if k in a:
                a[k] = []
        if isinstance(a.get("content"), str):
            a["content"] = cut(a["content"])
        for k in ("addedLines",):
            if isinstance(a.get(k), list):
                a[k] = [cut(x) for x in a[k]]
        for r in d.get("rendered") or []:
            if isinstance(r.get("content"), str) and len(r["content"]) > LONG:
                new = cut(r["content"])
                cuts.append((r["content"], new))
                r["content"] = new
    return d


def unwrap(t):
    t = t.strip()
    if t.startswith("<system-reminder>\n") and t.endswith("\n</system-reminder>"):
        return t[len("<system-reminder>\n") : -len("\n</system-reminder>")]
    return t


def save(name, session, sent=None):
    cuts = []
    lines = [json.dumps(trim_line(json.loads(x), cuts), ensure_ascii=False, separators=(",", ":")) for x in session.read_text().splitlines()]
    (OUT / (name + ".jsonl")).write_text("\n".join(lines) + "\n")
    if sent is not None:
        text = json.dumps(sent, ensure_ascii=False)
        for old, new in cuts:
            for a, b in ((old, new), (unwrap(old), unwrap(new))):
                text = text.replace(json.dumps(a, ensure_ascii=False)[1:-1], json.dumps(b, ensure_ascii=False)[1:-1])
        (OUT / (name + ".sent.json")).write_text(json.dumps(json.loads(text), ensure_ascii=False, indent=1) + "\n")
    print("wrote", name, file=sys.stderr)


def history_sent(body):
    """The messages of a resume's first request, without the resume's own prompt."""
    sent = list(body["messages"])
    last = sent[-1]
    if isinstance(last["content"], list) and len(last["content"]) > 1:
        sent[-1] = dict(last, content=cc.unmerge(last["content"][:-1]))
    else:
        sent = sent[:-1]
    if sent and sent[-1]["role"] == "assistant" and cc._normalise(sent[-1])["content"] == [{"type": "text", "text": "No response requested."}]:
        sent = sent[:-1]
    return sent


class Ctx:
    def __init__(self, exe, sb, provider):
        self.exe, self.sb, self.provider = exe, sb, provider


def drive(name, fn):
    exe = lib.install("claude-code")
    with Provider() as p, lib.Sandbox("capture") as sb:
        fn(Ctx(exe, sb, p), name)


def gateway_png(ctx, name):
    f = cc._write(ctx, "cut.png", lib.cut_png())
    ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
    ctx.provider.settings.gateway = "litellm"
    sid = cc._stuck_twice(ctx, "READ-THE-FILE cut.png please")
    session = cc._session(ctx, sid)
    keep = session.read_bytes()
    ctx.sb.doctor("exclude", session, "--suspects")
    copy = ctx.sb.doctor("repair", session, "--out", session.parent, "--json").json()
    since = cc._mark(ctx)
    cc._resume(ctx, copy["id"])
    session.write_bytes(keep)
    save(name, session, history_sent(cc._sent(ctx, since)[0]["body"]))


def heal(kind):
    def go(ctx, name):
        data, fname = (lib.cut_png(), "cut.png") if kind == "image" else (lib.cut_pdf(), "cut.pdf")
        f = cc._write(ctx, fname, data)
        ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
        r, res = cc._run(ctx, "READ-THE-FILE %s please" % fname)
        session = cc._session(ctx, res["session_id"])
        keep = session.read_bytes()
        copy = ctx.sb.doctor("repair", session, "--out", session.parent, "--json").json()
        since = cc._mark(ctx)
        cc._resume(ctx, copy["id"])
        session.write_bytes(keep)
        save(name, session, history_sent(cc._sent(ctx, since)[0]["body"]))

    return go


def parallel_images(ctx, name):
    paths = [cc._write(ctx, "p%d.png" % i, lib.png(4, 4, (i * 60, 0, 0))) for i in range(3)]
    ctx.provider.settings.tool = ("Read", {"file_path": str(paths[0])})
    ctx.provider.settings.more_tools = [("Read", {"file_path": str(p)}) for p in paths[1:]]
    ctx.provider.settings.max_images = 2
    sid = cc._stuck_twice(ctx, "READ-THE-FILE p0.png p1.png p2.png please")
    session = cc._session(ctx, sid)
    keep = session.read_bytes()
    copy = ctx.sb.doctor("repair", session, "--out", session.parent, "--max-images", "2", "--json").json()
    since = cc._mark(ctx)
    cc._resume(ctx, copy["id"])
    session.write_bytes(keep)
    save(name, session, history_sent(cc._sent(ctx, since)[0]["body"]))


def killed(ctx, name):
    session = cc.kill_mid_tool(ctx)
    keep = session.read_bytes()
    since = cc._mark(ctx)
    cc._resume(ctx, session.stem)
    session.write_bytes(keep)
    save(name, session, history_sent(cc._sent(ctx, since)[0]["body"]))


# ------------------------------------------------- the newer layouts (issue 21)


def save_tree(name, project, files):
    """Copies `files` (paths under the project folder) into OUT/layouts/<name>/,
    keeping their places (the layouts are told apart by where files sit), each
    .jsonl trimmed as save() trims."""
    for f in files:
        rel = f.relative_to(project)
        dest = OUT / "layouts" / name / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if f.suffix == ".jsonl":
            lines = []
            for x in f.read_text().splitlines():
                d = trim_line(json.loads(x), [])
                r = d.get("toolUseResult")
                if isinstance(r, dict) and isinstance(r.get("stdout"), str) and r.get("persistedOutputPath"):
                    r["stdout"] = cut(r["stdout"])  # the UI's copy: never sent
                lines.append(json.dumps(d, ensure_ascii=False, separators=(",", ":")))
            dest.write_text("\n".join(lines) + "\n")
        else:
            dest.write_bytes(f.read_bytes())
    print("wrote layouts/%s" % name, file=sys.stderr)


def persisted(ctx, name):
    # Just over Bash's 30000 characters: the smallest output the agent saves to a file.
    (ctx.sb.work / "big.txt").write_text("".join("line %06d of a big file\n" % i for i in range(1250)))
    ctx.provider.settings.tool = ("Bash", {"command": "cat big.txt", "description": "Print the big file"})
    r, res = cc._run(ctx, "READ-THE-FILE big.txt please", tools="Bash")
    session = cc._session(ctx, res["session_id"])
    saved = sorted((session.parent / session.stem).rglob("*.txt"))
    save_tree(name, session.parent, [session] + saved)


def subagent(ctx, name):
    f = cc._write(ctx, "cut.png", lib.cut_png())
    p = ctx.provider.settings
    p.gateway = "litellm"
    p.tool = ("Agent", {"description": "look at it", "prompt": "LOOK-AT %s please" % f, "subagent_type": "general-purpose", "run_in_background": False})
    p.triggers = [("LOOK-AT", ("Read", {"file_path": str(f)}))]
    r, res = cc._run(ctx, "READ-THE-FILE spawn an agent", tools="Agent,Read")
    session = cc._session(ctx, res["session_id"])
    save_tree(name, session.parent, [session] + sorted((session.parent / session.stem / "subagents").iterdir()))


def fork_subagent(ctx, name):
    """A lenient provider takes a cut PNG the parent read; then a fork subagent
    starts from that history (its requests carry the PNG again)."""
    f = cc._write(ctx, "cut.png", lib.cut_png())
    p = ctx.provider.settings
    p.check_media = False
    p.tool = ("Read", {"file_path": str(f)})
    r, res = cc._run(ctx, "READ-THE-FILE cut.png please")
    sid = res["session_id"]
    p.tool = ("Agent", {"description": "fork it", "prompt": "carry on as a fork", "subagent_type": "fork", "run_in_background": False})
    cc._resume(ctx, sid, "READ-THE-FILE fork now")
    session = cc._session(ctx, sid)
    save_tree(name, session.parent, [session] + sorted((session.parent / session.stem / "subagents").iterdir()))


def fork_session(ctx, name):
    """`claude --resume ID --fork-session` of a stuck session: the fork is a full copy."""
    f = cc._write(ctx, "cut.png", lib.cut_png())
    ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
    ctx.provider.settings.gateway = "litellm"
    parent = cc._stuck_twice(ctx, "READ-THE-FILE cut.png please")
    r = ctx.sb.run([ctx.exe, "--resume", parent, "--fork-session", "-p", "continue", "--output-format", "json"], env=cc._env(ctx))
    fork = cc._result(r)["session_id"]
    save_tree(name, cc._session(ctx, parent).parent, [cc._session(ctx, parent), cc._session(ctx, fork)])


def model_family(model):
    """The gateway-png story on `model`: the first run (400), then the agent's
    own resume; the fixture is the session as it was when that resume sent its
    first request, and `.sent.json` that whole request's messages."""

    def go(ctx, name):
        from scenarios import claude_code_models as ccm

        f = cc._write(ctx, "cut.png", lib.cut_png())
        ctx.provider.settings.tool = ("Read", {"file_path": str(f)})
        ctx.provider.settings.gateway = "litellm"
        sid = ccm._run(ctx, model, "READ-THE-FILE cut.png please")[1]["session_id"]
        since = cc._mark(ctx)
        ccm._resume(ctx, model, sid)
        upto = ccm._upto_prompt(cc._session(ctx, sid), "continue", ctx.sb.work / "upto.jsonl")
        save(name, upto, cc._sent(ctx, since)[0]["body"]["messages"])

    return go


def layouts(only=""):
    for name, fn in (("persisted-output", persisted), ("subagent", subagent), ("fork-subagent", fork_subagent), ("fork-session", fork_session)):
        if only in name:
            drive(name, fn)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    if os.environ.get("SD_CAPTURE") == "layouts":
        layouts(os.environ.get("SD_CAPTURE_ONLY", ""))
        sys.exit(0)
    if os.environ.get("SD_CAPTURE") == "models":
        drive("model-system-turns", model_family("claude-opus-5-5"))
        drive("model-no-system-turns", model_family("claude-sonnet-4-5"))
        sys.exit(0)
    drive("gateway-png", gateway_png)
    drive("heal-image", heal("image"))
    drive("heal-pdf", heal("document"))
    drive("parallel-images", parallel_images)
    drive("killed-mid-tool", killed)
