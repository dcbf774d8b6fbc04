"""Compare a `preview` with the request an agent logged at the provider, item by item.

Agent-neutral: `items(previewed, sent, normalise)` walks both lists in step
and returns one line per difference (an empty list means equal). JSON objects
compare as objects, so key order never counts.

This file is the one place that says what a comparison forgives. Everything
else — every byte of every image and document, every signature, every nested
part — is compared as sent. Two kinds of thing are forgiven, each below with
its reason:

* **Wire spellings** (`anthropic`, `chat`): two spellings the provider reads
  as one, applied to both sides alike.
* **Resume artefacts** (`resume_tail`, `leading`, the Gemini and Codex ones):
  what an agent adds to the history when it resumes, which no session holds
  before the resume. Each is cut from the sent side only where it is, and only
  after checking that it is exactly that artefact; never a prefix comparison.
"""

import json
import re

# ------------------------------------------------------------------ wire spellings


def anthropic(message):
    """Anthropic Messages: a message as the provider reads it.

    * a string `content` is one text block (the API documents the shorthand);
    * `cache_control` marks are caching hints, not history (agents move them to
      the newest turn on every request);
    * a `tool_result`'s `is_error: false` is its default (Claude Code writes it
      on Bash results, not on Read results);
    * a `tool_result`'s string `content` is one text block (the same shorthand).
    """

    def block(b):
        if isinstance(b, dict):
            b = {k: block(v) for k, v in b.items() if k != "cache_control" and not (k == "is_error" and v is False)}
            if b.get("type") == "tool_result" and isinstance(b.get("content"), str):
                b["content"] = [{"type": "text", "text": b["content"]}]
        elif isinstance(b, list):
            b = [block(x) for x in b]
        return b

    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return dict({k: v for k, v in message.items() if k not in ("content",)}, content=block(content))


def claude_code(message):
    """`anthropic`, and without the `output_config` (its effort setting) Claude
    Code puts on the messages it replays: a request parameter of the turn it
    sends, not history (NOTES-claude-code.md)."""
    return {k: v for k, v in anthropic(message).items() if k != "output_config"}


def chat(message):
    """Chat Completions: a message as the provider reads it.

    * a string `content` is one text part; a `null`, empty string or empty list
      is no content (the API takes each for an assistant turn that only calls);
    * `tool_calls[].function.arguments` is JSON text: compared as the JSON it
      holds (agents re-serialize it with their own spacing);
    * an empty `tool_calls` list is none.
    """
    out = {k: v for k, v in message.items() if k not in ("content", "tool_calls")}
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}] if content else []
    if content:
        out["content"] = content
    calls = []
    for c in message.get("tool_calls") or []:
        c = dict(c)
        fn = dict(c.get("function") or {})
        fn["arguments"] = json.loads(fn.get("arguments") or "{}")
        c["function"] = fn
        calls.append(c)
    if calls:
        out["tool_calls"] = calls
    return out


# ---------------------------------------------------------------- resume artefacts


def leading(sent, key, value, what):
    """`sent` without its first item, which must have `key` == `value`: the
    system or developer message an agent puts first on every request (its
    system prompt, Codex's injected instructions), which no session holds and
    `preview` names in `not_in_session`. Only the first: a later one is history."""
    if not sent or sent[0].get(key) != value:
        raise AssertionError("the request does not start with %s: %s" % (what, short(sent[:1])))
    return sent[1:]


def resume_tail(sent, prompt, spell):
    """`sent` without the prompt the resume typed: its last user message, whose
    content spelled by `spell` must be exactly one text block `prompt`, or —
    for an agent that joins a new prompt to a user message nothing answered
    (opencode, Copilot CLI; Anthropic takes consecutive user turns joined or
    not) — that message's last block, when it is that text block."""
    if not sent:
        raise AssertionError("the request holds no message")
    last = spell(sent[-1])
    block = (last.get("content") or [None])[-1]
    if isinstance(prompt, re.Pattern):
        typed = isinstance(block, dict) and block.get("type") == "text" and prompt.fullmatch(block.get("text", "")) and set(block) == {"type", "text"}
    else:
        typed = block == {"type": "text", "text": prompt}
    if last.get("role") != "user" or not typed:
        raise AssertionError("the request does not end with the resume's prompt %r: %s" % (prompt, short(sent[-1])))
    if len(last["content"]) == 1:
        return sent[:-1]
    return sent[:-1] + [dict(last, content=last["content"][:-1])]


def responses_as_message(item):
    """A Responses API message item spelled as a Messages one (`input_text`
    parts as text blocks), for `resume_tail` to find the typed prompt."""
    content = item.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    blocks = [dict(b, type="text") if isinstance(b, dict) and b.get("type") == "input_text" else b for b in content or []]
    return {"role": item.get("role"), "content": blocks}


def copilot_prompt(text):
    """Copilot CLI stamps every prompt it sends with the time of sending
    (`<current_datetime>…</current_datetime>` and a blank line before it): the
    prompt `text` as its resume sends it."""
    return re.compile(r"<current_datetime>[^<]*</current_datetime>\n\n" + re.escape(text))


# Gemini CLI writes a fresh `<session_context>` text (date, folders) at every
# start as the first user turn's first part; the session keeps the one of its
# own start. The placeholder turn it adds after a history that ends in a tool
# response (closeUnansweredToolResponseTurn) before the new prompt.
GEMINI_SESSION_CONTEXT = "<session_context>"
GEMINI_INTERRUPTED = "[The previous response was interrupted before it completed.]"


def gemini_history(contents):
    """Gemini contents without the `<session_context>` part each start writes
    anew (a content it alone filled is dropped with it, not any other)."""
    out = []
    for c in contents:
        parts = c.get("parts")
        kept = [p for p in parts or [] if not str(p.get("text", "")).startswith(GEMINI_SESSION_CONTEXT)]
        if parts and not kept:
            continue
        out.append(dict(c, parts=kept) if parts is not None else c)
    return out


def gemini_resume(contents, prompt):
    """The contents of a Gemini CLI resume request without what the resume
    adds: the new prompt (last) and, before it, the interrupted-turn placeholder."""
    if not contents or contents[-1] != {"role": "user", "parts": [{"text": prompt}]}:
        raise AssertionError("the request does not end with the resume's prompt %r: %s" % (prompt, short(contents[-1:])))
    contents = contents[:-1]
    if contents and contents[-1] == {"role": "model", "parts": [{"text": GEMINI_INTERRUPTED}]}:
        contents = contents[:-1]
    return contents


# Kilo Code CLI 7.7.7 ends every user message it sends with a text block of its
# own making: the message's time and the working folder. Its session holds no
# such part; it is written afresh for each request.
KILO_ENVIRONMENT = re.compile(r"\n\n<environment_details>\nMessage time: [^\n]*\nWorking directory: [^\n]*\nWorkspace root folder: [^\n]*\n</environment_details>")


def _kilo_environment(block):
    """A text block that is exactly Kilo's `<environment_details>`, with
    nothing but `type`, `text` and a cache mark."""
    return isinstance(block, dict) and block.get("type") == "text" and KILO_ENVIRONMENT.fullmatch(block.get("text", "")) and set(block) <= {"type", "text", "cache_control"}


def kilo_resume_tail(sent, prompt, spell):
    """`resume_tail` for Kilo Code CLI, which adds an `<environment_details>`
    block after each user message's parts: the one after the prompt the resume
    typed is cut with it (that message, and the time in its block, are in no
    session). The blocks of the messages the session holds are not forgiven:
    `preview` writes them from the session (its directory, path and each
    message's creation time), and they are compared."""
    if sent:
        last = sent[-1]
        content = last.get("content")
        if last.get("role") == "user" and isinstance(content, list) and len(content) > 1 and _kilo_environment(content[-1]):
            sent = sent[:-1] + [dict(last, content=content[:-1])]
    return resume_tail(sent, prompt, spell)


# Qwen Code writes its startup context (skills, environment, tools, the date) as
# whole `<system-reminder>` text parts before the first prompt's own text, and
# the date again before each new prompt: afresh on each start, in no session.
QWEN_REMINDER = re.compile(r"<system-reminder>\n.*</system-reminder>", re.S)


def _qwen_reminders(message):
    """`message`'s content without its leading `<system-reminder>` text parts
    (whole parts only), and how many there were."""
    content = message.get("content")
    if not isinstance(content, list):
        return message, 0
    n = 0
    while n < len(content) - 1 and isinstance(content[n], dict) and content[n].get("type") == "text" and QWEN_REMINDER.fullmatch(content[n].get("text", "")) and set(content[n]) == {"type", "text"}:
        n += 1
    return dict(message, content=content[n:]), n


def qwen_code_resume(sent, prompt):
    """The messages of a Qwen Code resume request without what it adds: its
    system prompt (first), the startup context before the first user message's
    own text, and the new prompt with the date reminder before it (last)."""
    body = leading(sent, "role", "system", "Qwen Code's system prompt")
    first = next((i for i, m in enumerate(body) if m.get("role") == "user"), None)
    if first is None:
        raise AssertionError("the request holds no user message: %s" % short(body))
    body = list(body)
    body[first], n = _qwen_reminders(body[first])
    if n == 0:
        raise AssertionError("the first user message does not start with Qwen Code's startup context: %s" % short(sent[first + 1]))
    # The new prompt, after the date reminder, ends the last user message: its
    # own, or the one a history ending in a user turn (a refused prompt) ends with.
    last = chat(body[-1])
    content = last.get("content") or []
    dated = len(content) >= 2 and content[-1] == {"type": "text", "text": prompt} and _qwen_reminders({"content": content[-2:]})[1] == 1
    if last.get("role") != "user" or not dated:
        raise AssertionError("the request does not end with the date reminder and the resume's prompt %r: %s" % (prompt, short(sent[-1])))
    if len(content) == 2:
        return body[:-1]
    return body[:-1] + [dict(last, content=content[:-2])]


def codex_aborted(item):
    """Codex gives the "aborted" output it adds to a call its killed run left
    unanswered an id of its own making, which no rollout line holds."""
    if item.get("type") == "function_call_output" and item.get("output") == "aborted":
        return {k: v for k, v in item.items() if k != "id"}
    return item


# -------------------------------------------------------------------- comparison


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
