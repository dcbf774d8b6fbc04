"""A loopback fake model provider for the round-trip suite.

It speaks the four wire APIs the agents use — Anthropic Messages (JSON and
SSE), OpenAI Responses (SSE), OpenAI Chat Completions (JSON and SSE) and
Gemini generateContent/streamGenerateContent — and judges every request the
way a strict provider does before any model sees it:

* every image and document is decoded (``media.problem``); a broken one is
  answered with that provider's real 400 body naming the block in the
  provider's own numbering (``messages.N.content.M...``, ``input[N]...``);
* tool calls and results must pair, by each API's own rules (Anthropic,
  Responses, Chat Completions, Gemini), and the other structural rules the
  real APIs apply are checked, each answered with the real body (the rules and
  their sources: ``tests/agents/NOTES-fake-provider.md``);
* replayed ``rs_`` reasoning items are refused under ``store: false`` when
  the scenario asks for it, as the Responses API does for items it never kept;
  an ``item_reference`` resolves only to an item this provider answered with
  under ``store`` (``Provider.forget`` is a route switch: what it kept is gone),
  and, when asked, encrypted reasoning it did not issue "could not be verified"
  (``Provider.new_org``: a switch to another organisation's key);
* more images than ``max_images`` in one request is refused.

Each logged request also keeps the sha256 of its body's bytes as received.

Answers come from a *responder*: the last user turn decides whether the model
calls the scenario's tool or answers with short text. Every request body is
logged (``Provider.log``, and one JSON line per request in ``log_path``).
Nothing listens beyond 127.0.0.1.
"""

import base64
import hashlib
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import media


class Reject(Exception):
    def __init__(self, status, body):
        super().__init__(status)
        self.status, self.body = status, body


def _data_url(url):
    m = re.match(r"data:([^;,]*)(;base64)?,(.*)$", url or "", re.S)
    if not m:
        return None, None
    return m.group(1) or None, base64.b64decode(m.group(3)) if m.group(2) else m.group(3).encode()


class Settings:
    """What a scenario sets on the provider before it drives an agent."""

    def __init__(self):
        self.tool = None  # (tool name, arguments) the model calls on a fresh user turn
        self.more_tools = []  # Anthropic and Gemini: further (name, arguments) called in the same turn, in parallel
        self.tool_trigger = "READ-THE-FILE"  # text in the user's turn that makes the model call it
        self.triggers = []  # further (text, (tool name, arguments)), checked first: a subagent's own call
        self.gateway = None  # None, or "litellm": answer media errors as a LiteLLM-style proxy does
        self.reject_replayed_reasoning = False  # Responses: refuse rs_ ids under store:false
        self.emit_reasoning = False  # Responses: answer with a reasoning item first
        self.verify_encrypted = False  # Responses: refuse encrypted reasoning this provider did not issue
        self.max_images = None  # refuse a request carrying more images than this
        self.refuse_image = None  # bytes of one valid image this provider cannot process anyway
        # A model or route that takes no images: one of NO_IMAGES' names; any request
        # carrying an image, valid or not, is refused with that route's real answer.
        self.no_images = None
        self.check_media = True
        # Anthropic's per-image limits: a side over 8000 px, over 5 MB of base64.
        self.anthropic_max_side = 8000
        self.anthropic_max_base64 = 5 * 1024 * 1024
        # Past 20 images a side may be at most 2000 px; at most 100 images and PDF pages;
        # at most 100 PDF pages; a request of at most 32 MB (docs.anthropic.com, limits.md).
        self.anthropic_many_images = (20, 2000)
        self.anthropic_max_media = 100
        self.anthropic_max_pages = 100
        self.anthropic_max_request = 32 * 1024 * 1024
        self.fail_next = []  # (status, body) answered to the next model requests, one each, before any check
        # Refuse a request over this many tokens (the whole body's JSON, BYTES_PER_TOKEN bytes a
        # token) with the provider's real overflow body; None: no window.
        self.context_tokens = None
        # Chat Completions: report the request's own tokens (tokens_of) as its prompt_tokens,
        # not a flat 100 (an agent that decides to compact by the usage it was told).
        self.counted_usage = False
        self.thinking_key = None  # Anthropic: answer with a thinking block signed with this key, and refuse replayed ones it did not sign
        # Gemini 3: answer a call without its thoughtSignature, as a gateway that drops it on the way
        # back does (cases.tsv: Antigravity-Manager#139, #938); the next step of the turn is refused.
        self.drop_signatures = False
        self.redacted_thinking = False  # Anthropic: answer with a redacted_thinking block first (its data: opaque bytes this provider issued)
        # Anthropic's Files API: file_id -> (media type, bytes) this provider holds; any other
        # `{"type": "file", "file_id"}` source is not found.
        self.files = {}


class Provider:
    def __init__(self, log_path=None):
        self.settings = Settings()
        self.log = []
        self.log_path = log_path
        self._lock = threading.Lock()
        # Responses: the output items kept under store (by id), and the encrypted
        # reasoning this provider's organisation issued.
        self._kept = {}
        self._issued = set()
        # Anthropic: the redacted_thinking data this provider answered with.
        self._redacted = set()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def forget(self):
        """A route switch or an eviction: no item answered before can be referenced."""
        with self._lock:
            self._kept.clear()

    def new_org(self):
        """Another organisation's key: its earlier encrypted reasoning (the
        Responses API's, and Anthropic's redacted_thinking) no longer verifies."""
        with self._lock:
            self._kept.clear()
            self._issued.clear()
            self._redacted.clear()

    # ----------------------------------------------------------------- logging

    def record(self, entry):
        with self._lock:
            self.log.append(entry)
            if self.log_path:
                with open(self.log_path, "a") as out:
                    out.write(json.dumps(entry) + "\n")

    def model_requests(self, api=None):
        """Logged requests that reached a model endpoint, oldest first."""
        return [e for e in self.log if e.get("api") and (api is None or e["api"] == api)]

    # ---------------------------------------------------------------- dispatch

    def handle(self, method, path, body, raw=b""):
        route = path.split("?")[0]
        if method != "POST":
            if route.endswith("/models"):
                return 200, {"object": "list", "data": [], "models": []}, None
            return 200, {}, None
        if route.endswith("/messages/count_tokens"):
            return 200, {"input_tokens": 100}, None
        if self.settings.fail_next and _api_of(path):
            status, answer = self.settings.fail_next.pop(0)
            raise Reject(status, answer)
        if route.endswith("/messages"):
            _anthropic_json(raw)
            return self._anthropic(body)
        if route.endswith("/responses"):
            return self._responses(body)
        if route.endswith("/chat/completions"):
            return self._chat(body)
        if re.search(r"/models/[^/:]+:countTokens$", route):
            # Gemini CLI counts a request's tokens before it sends a large tool result.
            return 200, {"totalTokens": 100}, None
        m = re.search(r"/models/([^/:]+):(generateContent|streamGenerateContent)", route)
        if m:
            return self._gemini(body, m.group(2) == "streamGenerateContent", m.group(1))
        return 404, {"error": {"message": "no route %s" % route}}, None

    # -------------------------------------------------------- the model's turn

    def _reply(self, last_user_text, last_is_tool_result, tool_names):
        """(text, tool call or None): the model's next turn."""
        s = self.settings
        for text, call in s.triggers:
            if not last_is_tool_result and text in last_user_text and (not tool_names or call[0] in tool_names):
                return None, call
        if (
            s.tool
            and not last_is_tool_result
            and s.tool_trigger in last_user_text
            and (not tool_names or s.tool[0] in tool_names)
        ):
            return None, s.tool
        return "Done.", None

    # ------------------------------------------------------------- media check

    def _media_error(self, api, path, mime, reason):
        """The body a provider answers with for one attachment it cannot process."""
        is_pdf = mime == "application/pdf"
        if self.settings.gateway == "litellm":
            text = (
                "litellm.BadRequestError: OpenAIException - The image data you provided does not "
                "represent a valid image. Please check your input and try again with one of the "
                "supported image formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp']."
            )
            if is_pdf:
                # LiteLLM's prefix (as above) on OpenAI's answer to a cut PDF (shared/seeds/000).
                text = "litellm.BadRequestError: OpenAIException - The file you uploaded is badly formatted or corrupted"
            return Reject(400, {"error": {"message": text, "type": "invalid_request_error", "param": None, "code": "400"}})
        if api == "anthropic":
            text = "%s: The PDF specified was not valid." % path if is_pdf else "%s: Could not process image" % path
            return Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": text}, "request_id": _id("req_")})
        if api in ("responses", "chat"):
            text = (
                "The image data you provided does not represent a valid image. Please check your input "
                "and try again with one of the supported image formats: ['image/jpeg', 'image/png', "
                "'image/gif', 'image/webp']."
            )
            if is_pdf:
                # shared/seeds/000 (cases.tsv): OpenAI's answer to a cut PDF sent by opencode.
                return Reject(400, {"error": {"message": "The file you uploaded is badly formatted or corrupted", "type": "invalid_request_error", "param": None, "code": "invalid_file"}})
            return Reject(400, {"error": {"message": text, "type": "invalid_request_error", "param": path, "code": "invalid_image_format"}})
        return Reject(400, {"error": {"code": 400, "message": "Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", "status": "INVALID_ARGUMENT"}})

    def _judge_media(self, api, items):
        """items: (path, declared mime, bytes). Raise the first rejection."""
        if self.settings.no_images and any(_is_image(i) for i in items):
            status, body = NO_IMAGES[self.settings.no_images]
            raise Reject(status, body)
        if self.settings.max_images is not None:
            images = [i for i in items if (i[1] or "").startswith("image/") or (media.sniff(i[2]) or "").startswith("image/")]
            if len(images) > self.settings.max_images:
                n, most = len(images), self.settings.max_images
                if api == "anthropic":
                    # cases.tsv: claude-code#24541, openclaw#13202 (images + documents > the cap).
                    docs = len(items) - n
                    text = "too many images and documents: %d + %d > %d" % (n, docs, most)
                    raise Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": text}, "request_id": _id("req_")})
                if api == "gemini":
                    # cases.tsv: vscode#306919 (Gemini's 400 behind Copilot's proxy, vscode#289484).
                    text = "Too many images in request: %d images provided, but the model supports a maximum of %d images." % (n, most)
                    raise _gemini_reject(text)
                # cases.tsv: opencode#47721, #47487 (an OpenAI-compatible upstream's invalid_request_error).
                text = "request contains %d images, exceeding the maximum of %d allowed per request" % (n, most)
                raise Reject(400, {"error": {"message": text, "type": "invalid_request_error", "param": None, "code": None}})
        if api == "anthropic":
            self._anthropic_counts(items)
        if not self.settings.check_media:
            return
        for path, declared, data in items:
            why = media.problem(data, declared) or (data == self.settings.refuse_image and "refused by this provider")
            if why:
                raise self._media_error(api, path, declared or media.sniff(data), why)
            if api == "anthropic":
                self._anthropic_limits(path, data)

    def _anthropic_counts(self, items):
        """Anthropic's caps on a request's media as a whole."""
        s = self.settings
        images = [i for i in items if not _is_pdf(i)]
        pages = sum(media.pdf_pages(i[2]) or 1 for i in items if _is_pdf(i))
        if s.anthropic_max_media and len(images) + pages > s.anthropic_max_media:
            # cases.tsv: claude-code#3397, #19822 ("Too much media: D document pages + N images > 100").
            raise _anthropic_reject("Too much media: %d document pages + %d images > %d" % (pages, len(images), s.anthropic_max_media))
        for path, _, data in items:
            if _is_pdf((path, _, data)):
                if media.pdf_encrypted(data):
                    # cases.tsv: claude-code#19013.
                    raise _anthropic_reject("%s: The PDF specified is password protected" % path)
                if s.anthropic_max_pages and (media.pdf_pages(data) or 0) > s.anthropic_max_pages:
                    # cases.tsv: claude-code#6197.
                    raise _anthropic_reject("%s: A maximum of %d PDF pages may be provided." % (path, s.anthropic_max_pages))
        many, side = s.anthropic_many_images or (None, None)
        if many is not None and len(images) > many:
            for path, _, data in images:
                dims = media.dimensions(data)
                if dims and max(dims) > side:
                    # cases.tsv: claude-code#16173, #17513, #24767 (the path ends in .image.source.base64.data).
                    raise _anthropic_reject("%s.data: At least one of the image dimensions exceed max allowed size for many-image requests: %d pixels" % (path, side))

    def _anthropic_limits(self, path, data):
        """Anthropic's 400s for a valid image over its per-image limits."""
        s = self.settings
        dims = media.dimensions(data)
        if dims and s.anthropic_max_side and max(dims) > s.anthropic_max_side:
            text = "%s: image dimensions exceed max allowed size: %d pixels" % (path, s.anthropic_max_side)
        elif s.anthropic_max_base64 and (len(data) + 2) // 3 * 4 > s.anthropic_max_base64:
            text = "%s: image exceeds 5 MB maximum: %d bytes > %d bytes" % (path, (len(data) + 2) // 3 * 4, s.anthropic_max_base64)
        else:
            return
        raise Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": text}, "request_id": _id("req_")})

    # -------------------------------------------------------------- Anthropic

    def _context(self, api, body):
        """Each provider's real answer to a request over the window (cases.tsv has each body)."""
        limit = self.settings.context_tokens
        count = tokens_of(body)
        if limit is None or count <= limit:
            return
        if api == "anthropic":
            # claude-code #23047 and stackblitz/bolt.new#1748: the body Anthropic answers.
            raise Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: %d tokens > %d maximum" % (count, limit)}, "request_id": _id("req_")})
        if api == "responses":
            # openai/codex#20866: the Responses API's body for an input over the window.
            raise Reject(400, {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input and try again.", "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}})
        if api == "chat":
            # platform.openai.com/docs/guides/error-codes: Chat Completions' context_length_exceeded.
            raise Reject(400, {"error": {"message": "This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages." % (limit, count), "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
        # Gemini (pi-mono's overflow.ts pattern): INVALID_ARGUMENT with both counts.
        raise Reject(400, {"error": {"code": 400, "message": "The input token count (%d) exceeds the maximum number of tokens allowed (%d)." % (count, limit), "status": "INVALID_ARGUMENT"}})

    def _anthropic(self, body):
        self._context("anthropic", body)
        limit = self.settings.anthropic_max_request
        if limit and len(json.dumps(body)) > limit:
            # docs.anthropic.com/en/api/errors; cases.tsv: anthropic-sdk-python#938 (a 413 before any check).
            raise Reject(413, {"type": "error", "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}})
        items = []
        messages = body.get("messages") or []
        for i, msg in enumerate(messages):
            content = msg.get("content")
            if not isinstance(content, list):
                continue
            for j, block in enumerate(content):
                _anthropic_media(block, "messages.%d.content.%d" % (i, j), items)
                if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                    for k, inner in enumerate(block["content"]):
                        _anthropic_media(inner, "messages.%d.content.%d.content.%d" % (i, j, k), items)
        _anthropic_roles(messages, body.get("model") or "")
        _anthropic_pairs(messages)
        self._check_thinking(messages)
        self._anthropic_sources(messages, items)
        self._judge_media("anthropic", items)
        # Claude Code may end with a `system` message of its own; the turn is the last other one.
        last = next((m for m in reversed(messages) if m.get("role") != "system"), {})
        blocks = last.get("content") if isinstance(last.get("content"), list) else [{"type": "text", "text": last.get("content") or ""}]
        is_result = any(b.get("type") == "tool_result" for b in blocks)
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        tools = [t.get("name") for t in body.get("tools") or []]
        reply, call = self._reply(text, is_result, tools)
        content = []
        if self.settings.redacted_thinking:
            data = base64.b64encode(uuid.uuid4().bytes * 3).decode()
            with self._lock:
                self._redacted.add(data)
            content.append({"type": "redacted_thinking", "data": data})
        if self.settings.thinking_key:
            thought = "Thinking about it."
            content.append({"type": "thinking", "thinking": thought, "signature": _sign(self.settings.thinking_key, thought)})
        if call:
            for name, args in [call] + list(self.settings.more_tools):
                content.append({"type": "tool_use", "id": _id("toolu_"), "name": name, "input": args})
        else:
            content.append({"type": "text", "text": reply})
        message = {
            "id": _id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude"),
            "content": content,
            "stop_reason": "tool_use" if call else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }
        if body.get("stream"):
            return 200, None, _anthropic_sse(message)
        return 200, message, None

    def _check_thinking(self, messages):
        """Anthropic decrypts every replayed redacted_thinking block and verifies
        the signature of every replayed thinking block."""
        for i, msg in enumerate(messages):
            blocks = msg.get("content") if isinstance(msg.get("content"), list) else []
            for j, b in enumerate(blocks):
                if isinstance(b, dict) and b.get("type") == "redacted_thinking":
                    with self._lock:
                        issued = b.get("data") in self._redacted
                    if not issued:
                        # cases.tsv: claude-code#56708 (data it cannot decrypt: altered, empty, another's).
                        raise _anthropic_reject("messages.%d.content.%d: Invalid `data` in `redacted_thinking` block" % (i, j))
        key = self.settings.thinking_key
        if not key:
            return
        for i, msg in enumerate(messages):
            if msg.get("role") != "assistant" or not isinstance(msg.get("content"), list):
                continue
            for j, b in enumerate(msg["content"]):
                if b.get("type") == "thinking" and b.get("signature") != _sign(key, b.get("thinking", "")):
                    raise Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "messages.%d.content.%d: Invalid `signature` in `thinking` block" % (i, j)}, "request_id": _id("req_")})

    def _anthropic_sources(self, messages, items):
        """Image and document sources other than base64: a URL the API must fetch
        and a Files API id it must hold. The fake fetches nothing (it runs
        offline, and Anthropic's servers could not reach a loopback address
        either): a URL is refused as Anthropic refuses one it cannot download."""
        for i, msg in enumerate(messages):
            content = msg.get("content") if isinstance(msg.get("content"), list) else []
            for j, block in enumerate(content):
                inner = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
                blocks = [("messages.%d.content.%d" % (i, j), block)]
                blocks += [("messages.%d.content.%d.content.%d" % (i, j, k), b) for k, b in enumerate(inner if isinstance(inner, list) else [])]
                for path, b in blocks:
                    if not isinstance(b, dict) or b.get("type") not in ("image", "document"):
                        continue
                    source = b.get("source") or {}
                    if source.get("type") == "url":
                        if not str(source.get("url", "")).lower().startswith("https://"):
                            # Anthropic's 400 for an http:// source, quoted with its request id in a public
                            # project's test notes (NOTES-fake-provider.md names the sources).
                            raise _anthropic_reject("Only HTTPS URLs are supported.")
                        # Anthropic's 400 for a URL it could not download, quoted alike (and in its batch results).
                        raise _anthropic_reject("Unable to download the file. Please verify the URL and try again.")
                    if source.get("type") == "file":
                        held = self.settings.files.get(source.get("file_id"))
                        if held is None:
                            # docs.anthropic.com, Files API, "Error handling": a file_id that does not exist (404).
                            raise Reject(404, {"type": "error", "error": {"type": "invalid_request_error", "message": "File not found: %s" % source.get("file_id")}, "request_id": _id("req_")})
                        where = path + (".image.source.file" if b["type"] == "image" else ".pdf.source.file")
                        items.append((where, held[0], held[1]))

    # ------------------------------------------------------- OpenAI Responses

    def _responses(self, body):
        self._context("responses", body)
        items = []
        inputs = body.get("input") or []
        if isinstance(inputs, str):
            inputs = [{"type": "message", "role": "user", "content": inputs}]
        calls, outputs = set(), []
        inputs = [self._resolve(item) for item in inputs]
        for i, item in enumerate(inputs):
            kind = item.get("type", "message")
            if kind == "reasoning" and item.get("encrypted_content") and self.settings.verify_encrypted and item["encrypted_content"] not in self._issued:
                # cases.tsv: codex#8136 (the API shows the blob's first and last four characters).
                blob = item["encrypted_content"]
                raise Reject(400, {"error": {"message": "The encrypted content %s...%s could not be verified." % (blob[:4], blob[-4:]), "type": "invalid_request_error", "param": None, "code": "invalid_encrypted_content"}})
            if kind == "reasoning" and self.settings.reject_replayed_reasoning and body.get("store") is False and str(item.get("id", "")).startswith("rs_"):
                raise Reject(404, {"error": {"message": "Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input." % item["id"], "type": "invalid_request_error", "param": "input", "code": None}})
            for key in ("content", "output"):
                parts = item.get(key)
                if isinstance(parts, list):
                    for j, part in enumerate(parts):
                        if isinstance(part, dict) and part.get("type") in ("input_image", "input_file"):
                            url = part.get("image_url") or part.get("file_data")
                            mime, data = _data_url(url)
                            if data is not None:
                                items.append(("input[%d].%s[%d].%s" % (i, key, j, "image_url" if part["type"] == "input_image" else "file_data"), mime, data))
            if kind == "reasoning":
                _responses_reasoning(inputs, i, body)
            if kind in ("function_call", "custom_tool_call", "local_shell_call"):
                calls.add(item.get("call_id"))
            if kind in ("function_call_output", "custom_tool_call_output"):
                # An output placed before its call has no call yet: the stricter reading.
                outputs.append((i, item.get("call_id") if item.get("call_id") in calls else ("before", item.get("call_id"))))
        for i, call_id in outputs:
            if isinstance(call_id, tuple):
                call_id = call_id[1]
                raise Reject(400, {"error": {"message": "No tool call found for function call output with call_id %s." % call_id, "type": "invalid_request_error", "param": "input", "code": None}})
            if call_id not in calls:
                raise Reject(400, {"error": {"message": "No tool call found for function call output with call_id %s." % call_id, "type": "invalid_request_error", "param": "input", "code": None}})
        answered = {c for _, c in outputs if not isinstance(c, tuple)}
        for call_id in calls - answered:
            raise Reject(400, {"error": {"message": "No tool output found for function call %s." % call_id, "type": "invalid_request_error", "param": "input", "code": None}})
        self._judge_media("responses", items)
        last = inputs[-1] if inputs else {}
        is_result = last.get("type") in ("function_call_output", "custom_tool_call_output")
        last_user = next((x for x in reversed(inputs) if x.get("role") == "user"), {})
        text = _responses_text(last_user)
        tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        reply, call = self._reply(text, is_result, tools)
        output = []
        if self.settings.emit_reasoning:
            output.append({"type": "reasoning", "id": _id("rs_"), "summary": [], "encrypted_content": "gAAAAA" + base64.b64encode(uuid.uuid4().bytes * 4).decode()})
        if call:
            output.append({"type": "function_call", "id": _id("fc_"), "call_id": _id("call_"), "name": call[0], "arguments": json.dumps(call[1]), "status": "completed"})
        else:
            output.append({"type": "message", "id": _id("msg_"), "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": reply, "annotations": []}]})
        with self._lock:
            self._issued.update(o["encrypted_content"] for o in output if o.get("encrypted_content"))
            if body.get("store") is not False:
                # The API keeps what it answered unless told not to (store defaults to true).
                self._kept.update((o["id"], o) for o in output)
        response = {
            "id": _id("resp_"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": body.get("model", "gpt"),
            "output": output,
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110},
        }
        return 200, None, _responses_sse(response)

    def _resolve(self, item):
        """An ``item_reference`` as the item it names, which the API must have kept."""
        if item.get("type") != "item_reference":
            return item
        with self._lock:
            kept = self._kept.get(item.get("id"))
        if kept is None:
            # shared/seeds/004: a reference the store does not hold (a route switch, an eviction).
            raise Reject(400, {"error": {"message": "Item with id '%s' not found." % item.get("id"), "type": "invalid_request_error", "param": "input", "code": None}})
        return kept

    # ------------------------------------------------------ Chat Completions

    def _chat(self, body):
        self._context("chat", body)
        items = []
        messages = body.get("messages") or []
        for i, msg in enumerate(messages):
            content = msg.get("content")
            if isinstance(content, list):
                for j, part in enumerate(content):
                    if isinstance(part, dict) and part.get("type") == "image_url":
                        url = (part.get("image_url") or {}).get("url")
                        mime, data = _data_url(url)
                        if data is not None:
                            items.append(("messages[%d].content[%d].image_url" % (i, j), mime, data))
                    if isinstance(part, dict) and part.get("type") == "file":
                        # A PDF sent inline: {"type": "file", "file": {"file_data": "data:application/pdf;base64,..."}}.
                        mime, data = _data_url((part.get("file") or {}).get("file_data"))
                        if data is not None:
                            items.append(("messages[%d].content[%d].file.file_data" % (i, j), mime or "application/pdf", data))
        _chat_pairs(messages)
        self._judge_media("chat", items)
        last = messages[-1] if messages else {}
        text = last.get("content") if isinstance(last.get("content"), str) else " ".join(p.get("text", "") for p in last.get("content") or [] if isinstance(p, dict))
        tools = [(t.get("function") or {}).get("name") for t in body.get("tools") or []]
        reply, call = self._reply(text or "", last.get("role") == "tool", tools)
        message = {"role": "assistant", "content": reply}
        if call:
            message = {"role": "assistant", "content": None, "tool_calls": [{"id": _id("call_"), "type": "function", "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}
        finish = "tool_calls" if call else "stop"
        prompt = tokens_of(body) if self.settings.counted_usage else 100
        usage = {"prompt_tokens": prompt, "completion_tokens": 10, "total_tokens": prompt + 10}
        if not body.get("stream"):
            return 200, {"id": _id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()), "model": body.get("model"), "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}, None
        chunks = []
        delta = {"role": "assistant"}
        if call:
            tc = message["tool_calls"][0]
            delta["tool_calls"] = [{"index": 0, "id": tc["id"], "type": "function", "function": tc["function"]}]
        else:
            delta["content"] = reply
        base = {"id": _id("chatcmpl-"), "object": "chat.completion.chunk", "created": int(time.time()), "model": body.get("model")}
        chunks.append(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]))
        chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage))
        return 200, None, "".join("data: %s\n\n" % json.dumps(c) for c in chunks) + "data: [DONE]\n\n"

    # ----------------------------------------------------------------- Gemini

    def _gemini(self, body, stream, model=""):
        self._context("gemini", body)
        items = []
        contents = body.get("contents") or []
        for i, content in enumerate(contents):
            for j, part in enumerate(content.get("parts") or []):
                inline = part.get("inlineData") or part.get("inline_data")
                if inline:
                    items.append(("contents[%d].parts[%d].inline_data" % (i, j), inline.get("mimeType") or inline.get("mime_type"), base64.b64decode(inline.get("data", ""))))
                fr = part.get("functionResponse") or {}
                for k, inner in enumerate(fr.get("parts") or []):
                    inline = inner.get("inlineData") or {}
                    if inline:
                        items.append(("contents[%d].parts[%d].function_response.parts[%d].inline_data" % (i, j, k), inline.get("mimeType"), base64.b64decode(inline.get("data", ""))))
        _gemini_turns(contents, model)
        self._judge_media("gemini", items)
        last = contents[-1] if contents else {}
        parts = last.get("parts") or []
        is_result = any("functionResponse" in p for p in parts)
        text = " ".join(p.get("text", "") for p in parts if isinstance(p.get("text"), str))
        names = [f.get("name") for t in body.get("tools") or [] for f in t.get("functionDeclarations") or []]
        reply, call = self._reply(text, is_result, names)
        calls = [call] + list(self.settings.more_tools) if call else []
        parts = [{"functionCall": {"name": n, "args": a}} for n, a in calls] or [{"text": reply}]
        if calls and model.startswith("gemini-3") and not self.settings.drop_signatures:
            # Gemini 3 signs the first call of each step; the client must send it back.
            parts[0]["thoughtSignature"] = base64.b64encode(uuid.uuid4().bytes).decode()
        answer = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}, "modelVersion": "gemini"}
        if stream:
            return 200, None, "data: %s\n\n" % json.dumps(answer)
        return 200, answer, None


# --------------------------------------------------------------------- helpers


BYTES_PER_TOKEN = 4


def tokens_of(body):
    """A request's tokens as the fake counts them: its JSON's bytes over BYTES_PER_TOKEN."""
    return len(json.dumps(body, separators=(",", ":"))) // BYTES_PER_TOKEN


# Routes that take no images, each answering any request with one as the real one does.
NO_IMAGES = {
    # GitHub Copilot's proxy after a switch to a model that takes none (Grok after Claude):
    # cases.tsv, microsoft/vscode#263970.
    "copilot": (400, {"error": {"message": "image media type not supported", "code": "invalid_request_body"}}),
    # OpenRouter when no endpoint of the model takes images: cases.tsv,
    # JohnnyZ93/oai-compatible-copilot#229 (the same body behind an OpenAI-compatible route).
    "openrouter": (404, {"error": {"code": "404", "message": "No endpoints found that support image input", "param": "", "type": ""}}),
    # OpenAI Chat Completions for a text-only model: cases.tsv, browser-use/web-ui#274.
    "openai": (400, {"error": {"message": "Invalid content type. image_url is only supported by certain models.", "type": "invalid_request_error", "param": "messages.[1].content.[1].type", "code": None}}),
}


def _is_image(item):
    return (item[1] or "").startswith("image/") or (media.sniff(item[2]) or "").startswith("image/")


def _is_pdf(item):
    return item[1] == "application/pdf" or media.sniff(item[2]) == "application/pdf"


def _sign(key, text):
    import hashlib
    import hmac

    return base64.b64encode(hmac.new(key.encode(), text.encode(), hashlib.sha256).digest()).decode()


def _id(prefix):
    return prefix + uuid.uuid4().hex[:24]


def _anthropic_media(block, path, items):
    kind = block.get("type") if isinstance(block, dict) else None
    if kind not in ("image", "document"):
        return
    source = block.get("source") or {}
    if source.get("type") != "base64":
        return
    data = base64.b64decode(source.get("data", ""))
    where = path + (".image.source.base64" if kind == "image" else ".pdf.source.base64.data")
    items.append((where, source.get("media_type"), data))


def _escape_unit(raw, i):
    """The code unit of the ``\\uXXXX`` escape at ``raw[i:]``, or None."""
    if raw[i:i + 2] != b"\\u":
        return None
    try:
        return int(raw[i + 2:i + 6].decode("ascii"), 16) if len(raw) >= i + 6 else None
    except ValueError:
        return None


def _anthropic_json(raw):
    """Anthropic parses a request body strictly (orjson, so yyjson's wording):
    a lone surrogate escape, which Python's json takes, is refused with "The
    request body is not valid JSON: no low surrogate in string: line 1 column N
    (char N-1)" (a high half with no escape after it), "invalid low surrogate"
    (another escape after it), "invalid high surrogate" (a low half alone), at
    the place yyjson reports: after the high half, at the second escape, at the
    low half (cases.tsv: anthropics/claude-code#1939, #3277, #6273, #65607)."""
    i, n, in_string = 0, len(raw), False
    while i < n:
        c = raw[i]
        if c == 0x22:
            in_string = not in_string
            i += 1
            continue
        if not (in_string and c == 0x5C):
            i += 1
            continue
        unit = _escape_unit(raw, i)
        if unit is None:
            i += 2
            continue
        if 0xDC00 <= unit <= 0xDFFF:
            _surrogate_reject(raw, i, "invalid high surrogate in string")
        if 0xD800 <= unit <= 0xDBFF:
            low = _escape_unit(raw, i + 6)
            if raw[i + 6:i + 8] != b"\\u":
                _surrogate_reject(raw, i + 6, "no low surrogate in string")
            if low is not None and not 0xDC00 <= low <= 0xDFFF:
                _surrogate_reject(raw, i + 6, "invalid low surrogate in string")
            i += 12
            continue
        i += 6


def _surrogate_reject(raw, at, what):
    # Python's JSONDecodeError position: characters, not bytes.
    before = raw[:at].decode("utf-8", "replace")
    line, col = before.count("\n") + 1, len(before) - before.rfind("\n")
    text = "The request body is not valid JSON: %s: line %d column %d (char %d)" % (what, line, col, len(before))
    raise Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": text}, "request_id": _id("req_")})


def _anthropic_reject(text):
    return Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": text}, "request_id": _id("req_")})


# Claude models that take no `role: "system"` message inside `messages` (Claude Code
# 2.1.332's `mid_conv_system` capability: none before claude-opus-4-8, no claude-3).
_NO_SYSTEM_TURNS = re.compile(r"claude-3|claude-(?:opus|sonnet|haiku)-4(?:-([0-7])(?!\d)|-\d{8}|$|[^-\d])")


def _anthropic_roles(messages, model):
    """A `system` role inside `messages` on a model that takes none."""
    if any(m.get("role") == "system" for m in messages) and _NO_SYSTEM_TURNS.search(model):
        # cases.tsv: Robitx/gp.nvim#257.
        raise _anthropic_reject('messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.')


def _anthropic_pairs(messages):
    """Anthropic's structural rules for tool_use and tool_result blocks."""
    seen = set()
    for i, msg in enumerate(messages):
        blocks = msg.get("content") if isinstance(msg.get("content"), list) else []
        for j, b in enumerate(blocks):
            if isinstance(b, dict) and b.get("type") == "text" and b.get("text") == "":
                # cases.tsv: claude-code#61881, nanobot#949.
                raise _anthropic_reject("messages: text content blocks must be non-empty")
            if isinstance(b, dict) and b.get("type") == "tool_use":
                if b.get("id") in seen:
                    # claude-code#20573, #20901, cua#524 (search corpus issues).
                    raise _anthropic_reject("messages.%d.content.%d: `tool_use` ids must be unique" % (i, j))
                seen.add(b.get("id"))
        if msg.get("role") == "assistant" and i + 1 == len(messages) and any(b.get("type") == "tool_use" for b in blocks if isinstance(b, dict)):
            # The stricter reading: a request may not end on calls it does not answer (cases.tsv: claude-code#1747's wording).
            missing = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            raise _anthropic_reject("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message." % (i, ", ".join(missing)))
        prev = messages[i - 1] if i > 0 else {}
        prev_blocks = prev.get("content") if isinstance(prev.get("content"), list) else []
        uses = [b for b in prev_blocks if isinstance(b, dict) and b.get("type") == "tool_use"] if prev.get("role") == "assistant" else []
        if msg.get("role") == "user" and uses:
            lead = 0
            while lead < len(blocks) and isinstance(blocks[lead], dict) and blocks[lead].get("type") == "tool_result":
                lead += 1
            results = sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result")
            if results and lead < results:
                # cases.tsv: claude-code#37, cerebellum#5, tester-mcp-client#12 (text before the results).
                raise _anthropic_reject("messages.%d: Did not find %d `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks." % (i, len(uses)))
    for i, msg in enumerate(messages):
        blocks = msg.get("content") if isinstance(msg.get("content"), list) else []
        if msg.get("role") == "assistant":
            uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            if not uses:
                continue
            following = messages[i + 1] if i + 1 < len(messages) else None
            nxt = following.get("content") if following and isinstance(following.get("content"), list) else []
            answered = {b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing and following is not None:
                raise Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message." % (i, ", ".join(missing))}})
        else:
            prev = messages[i - 1] if i > 0 else {}
            prev_blocks = prev.get("content") if isinstance(prev.get("content"), list) else []
            uses = {b.get("id") for b in prev_blocks if b.get("type") == "tool_use"} if prev.get("role") == "assistant" else set()
            for j, b in enumerate(blocks):
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in uses:
                    raise Reject(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message." % (i, j, b.get("tool_use_id"))}})


def _chat_reject(text, i):
    return Reject(400, {"error": {"message": text, "type": "invalid_request_error", "param": "messages.[%d].role" % i, "code": None}})


def _chat_pairs(messages):
    """Chat Completions' rules for tool_calls and tool messages, with OpenAI's wordings."""
    open_calls, at = None, None
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "tool":
            if open_calls is None or msg.get("tool_call_id") not in open_calls:
                # cases.tsv: morphic#136, open-webui-tools#12 (param "messages.[N].role").
                raise _chat_reject("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", i)
            open_calls.discard(msg.get("tool_call_id"))
            continue
        if open_calls:
            # cases.tsv: cai#111, freecc#2 (OpenAI's body as LiteLLM passes it on).
            raise _chat_reject(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
                "The following tool_call_ids did not have response messages: %s" % ", ".join(sorted(open_calls)), at)
        open_calls, at = None, None
        if role == "assistant" and msg.get("tool_calls"):
            open_calls, at = {c.get("id") for c in msg["tool_calls"]}, i
    if open_calls:
        raise _chat_reject(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
            "The following tool_call_ids did not have response messages: %s" % ", ".join(sorted(open_calls)), at)


def _gemini_reject(text):
    # Gemini's error envelope, as cases.tsv quotes it (google-gemini/gemini-cli#16212, #11248).
    return Reject(400, {"error": {"code": 400, "message": text, "errors": [{"message": text, "domain": "global", "reason": "badRequest"}], "status": "INVALID_ARGUMENT"}})


def _gemini_turns(contents, model):
    """Gemini's structural rules for contents, each with the real API's wording."""
    for i, content in enumerate(contents):
        if not content.get("parts"):
            # cases.tsv: goose#1582, n8n#14390 ("* GenerateContentRequest.contents[N].parts: ...").
            raise _gemini_reject("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.\n" % i)
    for i, content in enumerate(contents):
        parts = content.get("parts")
        calls = [p for p in parts if "functionCall" in p or "function_call" in p]
        responses = [p for p in parts if "functionResponse" in p or "function_response" in p]
        prev = contents[i - 1] if i > 0 else {}
        prev_calls = [p for p in prev.get("parts") or [] if "functionCall" in p or "function_call" in p]
        if calls and content.get("role") == "model" and i > 0 and prev.get("role") == "model":
            # cases.tsv: continue#11164, gemini-cli#11814.
            raise _gemini_reject("Please ensure that function call turn comes immediately after a user turn or after a function response turn.")
        if responses and not prev_calls:
            # cases.tsv: langchain#27799.
            raise _gemini_reject("Please ensure that function response turn comes immediately after a function call turn.")
        if responses and len(responses) != len(prev_calls):
            # cases.tsv: gemini-cli#16212 -- a response sent twice for one call counts twice.
            raise _gemini_reject("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")
    if not model.startswith("gemini-3"):
        return
    # Gemini 3 validates the signatures of the current turn: every model step since the
    # last user text turn must carry a thoughtSignature on its first functionCall. A user
    # content holding a function response does not start a turn, text beside it or not
    # (as Google's own client counts it: Gemini CLI's ensureActiveLoopHasThoughtSignatures).
    # Wording: cases.tsv (Antigravity-Manager#139, zafiro#100, CodexPlusPlus#367).
    def starts_turn(c):
        parts = c.get("parts")
        responds = any("functionResponse" in p or "function_response" in p for p in parts)
        return c.get("role") != "model" and any("text" in p for p in parts) and not responds

    start = max((i for i, c in enumerate(contents) if starts_turn(c)), default=0)
    for i in range(start, len(contents)):
        content = contents[i]
        if content.get("role") != "model":
            continue
        calls = [p for p in content["parts"] if "functionCall" in p or "function_call" in p]
        if calls and not (calls[0].get("thoughtSignature") or calls[0].get("thought_signature")):
            name = (calls[0].get("functionCall") or calls[0].get("function_call") or {}).get("name")
            raise _gemini_reject(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
                "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
                "function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
                "for more details." % (name, i + 1)
            )


def _responses_reasoning(inputs, i, body):
    """A replayed reasoning item needs the item it led to after it, and its content."""
    item = inputs[i]
    following = inputs[i + 1] if i + 1 < len(inputs) else None
    if following is None or following.get("type") == "reasoning" or following.get("role") in ("user", "system", "developer"):
        # cases.tsv: vercel/ai#7099.
        raise Reject(400, {"error": {"message": "Item '%s' of type 'reasoning' was provided without its required following item." % item.get("id", ""), "type": "invalid_request_error", "param": "input", "code": None}})
    if not item.get("encrypted_content"):
        if item.get("id") and body.get("store") is False:
            # As the store:false rule above: an item the API never kept cannot be resolved.
            raise Reject(404, {"error": {"message": "Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input." % item["id"], "type": "invalid_request_error", "param": "input", "code": None}})
        if not item.get("id"):
            # cases.tsv: codex#19661.
            raise Reject(400, {"error": {"message": "Missing required parameter: 'input[%d].encrypted_content'." % i, "type": "invalid_request_error", "param": "input[%d].encrypted_content" % i, "code": "missing_required_parameter"}})


def _responses_text(item):
    content = item.get("content")
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _sse(events):
    return "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(data)) for name, data in events)


def _anthropic_sse(message):
    start = dict(message, content=[], stop_reason=None, usage=dict(message["usage"], output_tokens=1))
    events = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}}))
        elif block["type"] == "redacted_thinking":
            # Sent whole in its content_block_start, with no delta (Anthropic's stream).
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
        elif block["type"] == "thinking":
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": block["signature"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": dict(block, input={})}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def _responses_sse(response):
    created = dict(response, status="in_progress", output=[])
    events = [("response.created", {"type": "response.created", "response": created}), ("response.in_progress", {"type": "response.in_progress", "response": created})]
    for index, item in enumerate(response["output"]):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(("response.content_part.added", {"type": "response.content_part.added", "item_id": item["id"], "output_index": index, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index, "content_index": 0, "delta": text}))
            events.append(("response.output_text.done", {"type": "response.output_text.done", "item_id": item["id"], "output_index": index, "content_index": 0, "text": text}))
            events.append(("response.content_part.done", {"type": "response.content_part.done", "item_id": item["id"], "output_index": index, "content_index": 0, "part": item["content"][0]}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": response}))
    return _sse(events)


def _handler(provider):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _serve(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raw = _read_chunked(self.rfile)
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            api = _api_of(self.path) if method == "POST" else None
            # sha256: the body's bytes as received, to compare with what an agent sent (tests/agents/proxied.py).
            entry = {"at": time.time(), "method": method, "path": self.path, "api": api, "body": body, "sha256": hashlib.sha256(raw).hexdigest()}
            try:
                status, payload, stream = provider.handle(method, self.path, body, raw)
            except Reject as rej:
                status, payload, stream = rej.status, rej.body, None
            except Exception as err:  # a bug in the fake provider: answer it, never hang the agent
                status, payload, stream = 500, {"error": {"message": "fake provider: %r" % err}}, None
            entry["status"] = status
            entry["answer"] = payload if payload is not None else "(stream)"
            if api or status != 200:
                provider.record(entry)
            data = (stream if stream is not None else json.dumps(payload)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/event-stream" if stream is not None else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", _id("req_"))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            self._serve("POST")

        def do_GET(self):
            self._serve("GET")

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


def _read_chunked(stream):
    out = b""
    while True:
        size = int(stream.readline().strip() or b"0", 16)
        if size == 0:
            stream.readline()
            return out
        out += stream.read(size)
        stream.readline()


def _api_of(path):
    route = path.split("?")[0]
    if route.endswith("/messages/count_tokens"):
        return None
    if route.endswith("/messages"):
        return "anthropic"
    if route.endswith("/responses"):
        return "responses"
    if route.endswith("/chat/completions"):
        return "chat"
    if "generateContent" in route or "streamGenerateContent" in route:
        return "gemini"
    return None
