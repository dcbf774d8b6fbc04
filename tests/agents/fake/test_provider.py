"""Unit tests of the fake provider's strict rules: each builds a request body by
hand, sends it over loopback and checks the status and the real provider's body.

Run: python3 -m unittest discover -s tests/agents/fake -t tests/agents  (from the repo root)
"""

import base64
import json
import os
import sys
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fake import provider  # noqa: E402
from fake.provider import Provider  # noqa: E402

PROVIDER = None


def setUpModule():
    global PROVIDER
    PROVIDER = Provider().__enter__()


def tearDownModule():
    PROVIDER.__exit__(None, None, None)


def post(path, body):
    req = urllib.request.Request(PROVIDER.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            raw = r.read().decode()
            return r.status, (json.loads(raw) if r.headers.get("Content-Type") == "application/json" else raw)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


class Case(unittest.TestCase):
    def setUp(self):
        PROVIDER.settings.__init__()

    def refused(self, path, body, text, status=400):
        code, answer = post(path, body)
        self.assertEqual(code, status, answer)
        self.assertIn(text, json.dumps(answer))
        return answer

    def taken(self, path, body):
        code, answer = post(path, body)
        self.assertEqual(code, 200, answer)
        return answer


GEMINI = "/v1beta/models/gemini-2.5-flash:generateContent"
GEMINI3 = "/v1beta/models/gemini-3-pro-preview:generateContent"
COUNT = "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."


def g_user(text):
    return {"role": "user", "parts": [{"text": text}]}


def g_call(name="read_file", sig=None):
    part = {"functionCall": {"id": "c1", "name": name, "args": {}}}
    if sig:
        part["thoughtSignature"] = sig
    return {"role": "model", "parts": [part]}


def g_response(n=1):
    return {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "x"}}}] * n}


class Gemini(Case):
    def test_a_paired_call_is_taken(self):
        self.taken(GEMINI, {"contents": [g_user("hi"), g_call(), g_response()]})

    def test_a_response_sent_twice_for_one_call(self):
        answer = self.refused(GEMINI, {"contents": [g_user("hi"), g_call(), g_response(2)]}, COUNT)
        self.assertEqual(answer["error"]["status"], "INVALID_ARGUMENT")

    def test_a_response_with_no_call(self):
        self.refused(GEMINI, {"contents": [g_user("hi"), {"role": "model", "parts": [{"text": "ok"}]}, g_response()]}, "Please ensure that function response turn comes immediately after a function call turn.")

    def test_a_call_right_after_a_model_turn(self):
        self.refused(GEMINI, {"contents": [g_user("hi"), {"role": "model", "parts": [{"text": "ok"}]}, g_call(), g_response()]}, "function call turn comes immediately after a user turn or after a function response turn")

    def test_a_turn_with_empty_parts(self):
        self.refused(GEMINI, {"contents": [g_user("hi"), {"role": "model", "parts": []}, g_user("again")]}, "GenerateContentRequest.contents[1].parts: contents.parts must not be empty.")

    def test_gemini_3_refuses_a_replayed_call_without_its_signature(self):
        self.refused(GEMINI3, {"contents": [g_user("hi"), g_call(), g_response()]}, "Function call is missing a thought_signature in functionCall parts.")
        self.taken(GEMINI3, {"contents": [g_user("hi"), g_call(sig="c2ln"), g_response()]})
        # Google's placeholder for a call Gemini 3 did not sign, what Gemini CLI and the AI SDK send.
        self.taken(GEMINI3, {"contents": [g_user("hi"), g_call(sig="skip_thought_signature_validator"), g_response()]})
        # Earlier turns are not validated, only the current one; and 2.5 never asks.
        self.taken(GEMINI3, {"contents": [g_user("hi"), g_call(), g_response(), {"role": "model", "parts": [{"text": "ok"}]}, g_user("next")]})
        self.taken(GEMINI, {"contents": [g_user("hi"), g_call(), g_response()]})

    def test_gemini_3_missing_signature_body_is_the_real_one(self):
        # The wording of cases.tsv (zafiro#100, Antigravity-Manager#139), this call's name and
        # content position (1-based), in Gemini's INVALID_ARGUMENT envelope.
        real = (
            "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
            "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
            "function call `default_api:read_file` , position 2. Please refer to "
            "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
        )
        code, answer = post(GEMINI3, {"contents": [g_user("hi"), g_call(), g_response()]})
        self.assertEqual(code, 400, answer)
        self.assertEqual(answer["error"]["message"], real)
        self.assertEqual((answer["error"]["code"], answer["error"]["status"]), (400, "INVALID_ARGUMENT"))

    def test_gemini_3_checks_every_step_of_the_current_turn(self):
        # A signed first step, then an unsigned second one in the same turn: refused at the second.
        steps = [g_user("hi"), g_call(sig="c2ln"), g_response(), g_call("grep"), g_response()]
        answer = self.refused(GEMINI3, {"contents": steps}, "function call `default_api:grep` , position 4.")
        self.assertNotIn("read_file", answer["error"]["message"])
        # Text beside a function response does not start a turn (Gemini CLI's own rule).
        mixed = {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {}}}, {"text": "go on"}]}
        self.refused(GEMINI3, {"contents": [g_user("hi"), g_call(), mixed]}, "function call `default_api:read_file` , position 2.")

    def test_gemini_3_answers_a_call_with_a_signature(self):
        PROVIDER.settings.tool = ("read_file", {"file_path": "x"})
        answer = self.taken(GEMINI3, {"contents": [g_user("READ-THE-FILE")], "tools": [{"functionDeclarations": [{"name": "read_file"}]}]})
        self.assertTrue(answer["candidates"][0]["content"]["parts"][0]["thoughtSignature"])
        # As a gateway that drops it: no signature, so the turn's next step is refused.
        PROVIDER.settings.drop_signatures = True
        answer = self.taken(GEMINI3, {"contents": [g_user("READ-THE-FILE")], "tools": [{"functionDeclarations": [{"name": "read_file"}]}]})
        part = answer["candidates"][0]["content"]["parts"][0]
        self.assertIn("functionCall", part)
        self.assertNotIn("thoughtSignature", part)


CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"


def c_call(*ids):
    return {"role": "assistant", "content": None, "tool_calls": [{"id": i, "type": "function", "function": {"name": "read", "arguments": "{}"}} for i in ids]}


def c_tool(i):
    return {"role": "tool", "tool_call_id": i, "content": "x"}


def cut_pdf():
    return b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pa"


def png():
    import struct
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def b64(data):
    return base64.b64encode(data).decode()


class Chat(Case):
    def test_usage_is_flat_unless_counted(self):
        body = {"messages": [{"role": "user", "content": "hi " * 400}]}
        self.assertEqual(self.taken(CHAT, body)["usage"]["prompt_tokens"], 100)
        PROVIDER.settings.counted_usage = True
        self.assertEqual(self.taken(CHAT, body)["usage"]["prompt_tokens"], provider.tokens_of(body))

    def test_paired_calls_are_taken(self):
        self.taken(CHAT, {"messages": [{"role": "user", "content": "hi"}, c_call("a", "b"), c_tool("b"), c_tool("a"), {"role": "user", "content": "go"}]})

    def test_a_call_without_its_tool_message(self):
        answer = self.refused(CHAT, {"messages": [{"role": "user", "content": "hi"}, c_call("a", "b"), c_tool("a"), {"role": "user", "content": "go"}]}, "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: b")
        self.assertEqual(answer["error"]["type"], "invalid_request_error")

    def test_an_unanswered_call_at_the_end(self):
        self.refused(CHAT, {"messages": [{"role": "user", "content": "hi"}, c_call("a")]}, "did not have response messages: a")

    def test_a_tool_message_without_its_call(self):
        answer = self.refused(CHAT, {"messages": [{"role": "user", "content": "hi"}, c_tool("a")]}, "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'")
        self.assertEqual(answer["error"]["param"], "messages.[1].role")

    def test_a_cut_pdf_file_part(self):
        part = {"type": "file", "file": {"filename": "doc.pdf", "file_data": "data:application/pdf;base64," + b64(cut_pdf())}}
        answer = self.refused(CHAT, {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}, part]}]}, "The file you uploaded is badly formatted or corrupted")
        self.assertEqual(answer["error"]["code"], "invalid_file")

    def test_too_many_images(self):
        PROVIDER.settings.max_images = 2
        img = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(png())}}
        self.taken(CHAT, {"messages": [{"role": "user", "content": [img, img]}]})
        self.refused(CHAT, {"messages": [{"role": "user", "content": [img, img, img]}]}, "request contains 3 images, exceeding the maximum of 2 allowed per request")


class ImageLimits(Case):
    def setUp(self):
        super().setUp()
        PROVIDER.settings.max_images = 2

    def test_anthropic(self):
        img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(png())}}
        answer = self.refused(MESSAGES, {"messages": [{"role": "user", "content": [img, img, img]}]}, "too many images and documents: 3 + 0 > 2")
        self.assertEqual(answer["error"]["type"], "invalid_request_error")

    def test_responses(self):
        img = {"type": "input_image", "image_url": "data:image/png;base64," + b64(png())}
        self.refused(RESPONSES, {"input": [{"type": "message", "role": "user", "content": [img, img, img]}]}, "request contains 3 images, exceeding the maximum of 2 allowed per request")

    def test_gemini(self):
        img = {"inlineData": {"mimeType": "image/png", "data": b64(png())}}
        answer = self.refused(GEMINI, {"contents": [{"role": "user", "parts": [img, img, img]}]}, "Too many images in request: 3 images provided, but the model supports a maximum of 2 images.")
        self.assertEqual(answer["error"]["status"], "INVALID_ARGUMENT")

    def test_responses_pdf_wording(self):
        PROVIDER.settings.max_images = None
        part = {"type": "input_file", "filename": "d.pdf", "file_data": "data:application/pdf;base64," + b64(cut_pdf())}
        self.refused(RESPONSES, {"input": [{"type": "message", "role": "user", "content": [part]}]}, "The file you uploaded is badly formatted or corrupted")


class NoImages(Case):
    """A route that takes no images refuses a valid one, and takes the same turn without it."""

    def test_every_route_refuses_a_valid_image(self):
        img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(png())}}
        for route, status, text in (
            ("copilot", 400, "image media type not supported"),
            ("openrouter", 404, "No endpoints found that support image input"),
            ("openai", 400, "image_url is only supported by certain models"),
        ):
            PROVIDER.settings.no_images = route
            self.refused(MESSAGES, {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}, img]}]}, text, status)
            self.taken(MESSAGES, {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})

    def test_chat_and_gemini(self):
        PROVIDER.settings.no_images = "openai"
        img = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(png())}}
        self.refused(CHAT, {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}, img]}]}, "image_url is only supported by certain models")
        part = {"inlineData": {"mimeType": "image/png", "data": b64(png())}}
        self.refused(GEMINI, {"contents": [{"role": "user", "parts": [{"text": "hi"}, part]}]}, "image_url is only supported by certain models")


def a_use(*ids):
    return {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "Read", "input": {}} for i in ids]}


def a_result(*ids, before=None):
    blocks = [{"type": "tool_result", "tool_use_id": i, "content": "x"} for i in ids]
    return {"role": "user", "content": ([before] if before else []) + blocks}


def a_user(text="hi"):
    return {"role": "user", "content": [{"type": "text", "text": text}]}


class Anthropic(Case):
    def test_paired_calls_are_taken(self):
        self.taken(MESSAGES, {"messages": [a_user(), a_use("t1", "t2"), a_result("t1", "t2"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}, a_user("go")]})

    def test_an_unanswered_tool_use_at_the_end(self):
        self.refused(MESSAGES, {"messages": [a_user(), a_use("t1")]}, "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1.")

    def test_a_tool_use_answered_nowhere(self):
        self.refused(MESSAGES, {"messages": [a_user(), a_use("t1"), a_user("go")]}, "`tool_use` ids were found without `tool_result` blocks immediately after: t1")

    def test_duplicate_tool_ids(self):
        self.refused(MESSAGES, {"messages": [a_user(), a_use("t1"), a_result("t1"), a_use("t1"), a_result("t1")]}, "messages.3.content.0: `tool_use` ids must be unique")

    def test_text_before_a_tool_result(self):
        self.refused(MESSAGES, {"messages": [a_user(), a_use("t1"), a_result("t1", before={"type": "text", "text": "note"})]}, "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message.")
        # Text after the results is fine.
        after = a_result("t1")
        after["content"].append({"type": "text", "text": "note"})
        self.taken(MESSAGES, {"messages": [a_user(), a_use("t1"), after]})

    def test_a_lone_surrogate_is_not_valid_json(self):
        # json.dumps writes a lone surrogate as its escape, as JSON.stringify does.
        cut = {"messages": [a_user("deployed 3 pages \ud83c")]}
        answer = self.refused(MESSAGES, cut, "The request body is not valid JSON: no low surrogate in string: line 1 column ")
        at = json.dumps(cut).index("\\ud83c") + 6
        self.assertTrue(answer["error"]["message"].endswith("column %d (char %d)" % (at + 1, at)), answer)
        self.refused(MESSAGES, {"messages": [a_user("\udc89 half")]}, "not valid JSON: invalid high surrogate in string")
        # json.dumps escapes the é after it: a second escape, not a low half.
        self.refused(MESSAGES, {"messages": [a_user("\ud83c\u00e9")]}, "not valid JSON: invalid low surrogate in string")
        # A pair is a character; U+FFFD is what a repaired copy sends.
        self.taken(MESSAGES, {"messages": [a_user("done \ud83c\udf89 \ufffd")]})
        self.taken(MESSAGES, {"messages": [a_user("an escaped backslash: \\\\ud83c")]})

    def test_an_empty_text_block(self):
        self.refused(MESSAGES, {"messages": [a_user(""), ]}, "messages: text content blocks must be non-empty")

    def test_a_result_without_its_call(self):
        self.refused(MESSAGES, {"messages": [a_user(), a_result("t9")]}, "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t9.")

    def test_a_system_message_on_a_model_that_takes_none(self):
        body = {"model": "claude-sonnet-4-5-20250929", "messages": [a_user(), {"role": "system", "content": "note"}, a_user("go")]}
        answer = self.refused(MESSAGES, body, 'messages: Unexpected role \\"system\\". The Messages API accepts a top-level `system` parameter, not \\"system\\" as an input message role.')
        self.assertEqual(answer["error"]["type"], "invalid_request_error")
        for model in ("claude-opus-4-7", "claude-3-5-sonnet-20241022", "claude-opus-4-20250514", "us.anthropic.claude-opus-4-1-v1:0"):
            self.refused(MESSAGES, dict(body, model=model), "Unexpected role")
        # Claude Code sends them to claude-opus-4-8 and later (its mid_conv_system capability).
        for model in ("claude-opus-4-8", "claude-opus-5-5", "claude-sonnet-5"):
            self.taken(MESSAGES, dict(body, model=model))

    def test_redacted_thinking_is_taken_only_as_issued(self):
        PROVIDER.settings.redacted_thinking = True
        answer = self.taken(MESSAGES, {"messages": [a_user()]})
        block = answer["content"][0]
        self.assertEqual(block["type"], "redacted_thinking")
        replay = lambda b: {"messages": [a_user(), {"role": "assistant", "content": [b, {"type": "text", "text": "Done."}]}, a_user("go")]}
        self.taken(MESSAGES, replay(block))
        self.refused(MESSAGES, replay(dict(block, data=block["data"][:-4] + "AAAA")), "messages.1.content.0: Invalid `data` in `redacted_thinking` block")
        self.refused(MESSAGES, replay(dict(block, data="")), "messages.1.content.0: Invalid `data` in `redacted_thinking` block")
        # Data another provider (or another run) issued is not this one's to decrypt.
        PROVIDER.settings.redacted_thinking = False
        self.refused(MESSAGES, replay({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"}), "Invalid `data` in `redacted_thinking` block")

    def test_url_sources_the_fake_cannot_download(self):
        def image(url, kind="image"):
            return {"messages": [{"role": "user", "content": [{"type": kind, "source": {"type": "url", "url": url}}, {"type": "text", "text": "what is it"}]}]}

        self.refused(MESSAGES, image("http://127.0.0.1:9/pic.png"), "Only HTTPS URLs are supported.")
        self.refused(MESSAGES, image("https://example.com/pic.png"), "Unable to download the file. Please verify the URL and try again.")
        self.refused(MESSAGES, image("https://example.com/doc.pdf", "document"), "Unable to download the file. Please verify the URL and try again.")

    def test_a_file_id_the_provider_does_not_hold(self):
        import lib

        def doc(file_id, kind="document"):
            return {"messages": [{"role": "user", "content": [{"type": kind, "source": {"type": "file", "file_id": file_id}}, {"type": "text", "text": "read it"}]}]}

        answer = self.refused(MESSAGES, doc("file_011CNha8iCJcU1wXNR6q4V8w"), "File not found: file_011CNha8iCJcU1wXNR6q4V8w", status=404)
        self.assertEqual(answer["error"]["type"], "invalid_request_error")
        PROVIDER.settings.files = {"file_good": ("application/pdf", lib.pdf()), "file_cut": ("image/png", lib.png()[:60])}
        self.taken(MESSAGES, doc("file_good"))
        # A file it holds is judged as inline bytes are.
        self.refused(MESSAGES, doc("file_cut", "image"), "messages.0.content.0.image.source.file: Could not process image")


def r_user(text="hi"):
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def r_reasoning(**kw):
    return dict({"type": "reasoning", "summary": []}, **kw)


def r_call(i="c1"):
    return {"type": "function_call", "call_id": i, "name": "shell", "arguments": "{}"}


def r_output(i="c1"):
    return {"type": "function_call_output", "call_id": i, "output": "x"}


class Responses(Case):
    def test_a_paired_call_after_its_reasoning_is_taken(self):
        self.taken(RESPONSES, {"store": False, "input": [r_user(), r_reasoning(id="rs_1", encrypted_content="gAAA"), r_call(), r_output()]})

    def test_an_output_before_its_call(self):
        self.refused(RESPONSES, {"input": [r_user(), r_output(), r_call()]}, "No tool call found for function call output with call_id c1.")

    def test_a_reasoning_item_with_nothing_after_it(self):
        self.refused(RESPONSES, {"input": [r_user(), r_reasoning(id="rs_1", encrypted_content="gAAA")]}, "Item 'rs_1' of type 'reasoning' was provided without its required following item.")

    def test_a_reasoning_item_with_no_content_the_api_kept(self):
        self.refused(RESPONSES, {"store": False, "input": [r_user(), r_reasoning(id="rs_1"), r_call(), r_output()]}, "Item with id 'rs_1' not found.", status=404)
        self.refused(RESPONSES, {"input": [r_user(), r_reasoning(), r_call(), r_output()]}, "Missing required parameter: 'input[1].encrypted_content'.")

    def test_a_reference_resolves_only_to_an_item_kept_until_a_route_switch(self):
        PROVIDER.settings.emit_reasoning = True
        answer = self.taken(RESPONSES, {"input": [r_user()]})
        done = [json.loads(line[6:]) for line in answer.splitlines() if line.startswith("data: ")][-1]
        rs, msg = (o["id"] for o in done["response"]["output"])
        self.taken(RESPONSES, {"input": [r_user(), {"type": "item_reference", "id": rs}, {"type": "item_reference", "id": msg}, r_user("more")]})
        PROVIDER.forget()
        self.refused(RESPONSES, {"input": [r_user(), {"type": "item_reference", "id": rs}, {"type": "item_reference", "id": msg}, r_user("more")]}, "Item with id '%s' not found." % rs)

    def test_encrypted_reasoning_of_another_organisation_is_not_verified(self):
        PROVIDER.settings.emit_reasoning = True
        answer = self.taken(RESPONSES, {"store": False, "input": [r_user()]})
        done = [json.loads(line[6:]) for line in answer.splitlines() if line.startswith("data: ")][-1]
        blob = done["response"]["output"][0]["encrypted_content"]
        PROVIDER.settings.verify_encrypted = True
        msg = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}
        body = {"store": False, "input": [r_user(), r_reasoning(encrypted_content=blob), msg, r_user("more")]}
        self.taken(RESPONSES, body)
        PROVIDER.new_org()
        answer = self.refused(RESPONSES, body, "The encrypted content %s...%s could not be verified." % (blob[:4], blob[-4:]))
        self.assertEqual(answer["error"]["code"], "invalid_encrypted_content")


def blank_pdf(pages, password=None):
    """A valid PDF of blank pages, written by pypdf (the fake's own PDF decoder)."""
    import io

    from fake.decoders import pypdf

    writer = pypdf.PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    if password:
        writer.encrypt(password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


class AnthropicCaps(Case):
    def blocks(self, data, n, kind="image", mime="image/png"):
        return [{"type": kind, "source": {"type": "base64", "media_type": mime, "data": b64(data)}}] * n

    def test_past_20_images_a_side_over_2000_px(self):
        import lib

        wide = lib.png(2100, 2, (0, 0, 0))
        self.taken(MESSAGES, {"messages": [{"role": "user", "content": self.blocks(wide, 20)}]})
        self.refused(MESSAGES, {"messages": [{"role": "user", "content": self.blocks(wide, 21)}]}, "messages.0.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels")

    def test_over_100_images(self):
        self.refused(MESSAGES, {"messages": [{"role": "user", "content": self.blocks(png(), 101)}]}, "Too much media: 0 document pages + 101 images > 100")

    def test_over_100_pdf_pages(self):
        pages = blank_pdf(101)
        self.taken(MESSAGES, {"messages": [{"role": "user", "content": self.blocks(blank_pdf(100), 1, "document", "application/pdf")}]})
        self.refused(MESSAGES, {"messages": [{"role": "user", "content": self.blocks(pages, 1, "document", "application/pdf")}]}, "Too much media: 101 document pages + 0 images > 100")
        PROVIDER.settings.anthropic_max_media = None
        self.refused(MESSAGES, {"messages": [{"role": "user", "content": self.blocks(pages, 1, "document", "application/pdf")}]}, "messages.0.content.0.pdf.source.base64.data: A maximum of 100 PDF pages may be provided.")

    def test_an_encrypted_pdf(self):
        import lib

        locked = blank_pdf(1, password="secret")
        self.taken(MESSAGES, {"messages": [{"role": "user", "content": self.blocks(lib.pdf(), 1, "document", "application/pdf")}]})
        self.refused(MESSAGES, {"messages": [{"role": "user", "content": self.blocks(locked, 1, "document", "application/pdf")}]}, "messages.0.content.0.pdf.source.base64.data: The PDF specified is password protected")

    def test_a_request_over_32_mb(self):
        PROVIDER.settings.anthropic_max_request = 1000
        answer = self.refused(MESSAGES, {"messages": [a_user("x" * 2000)]}, "Request exceeds the maximum size", status=413)
        self.assertEqual(answer["error"]["type"], "request_too_large")
        self.assertEqual(PROVIDER.settings.__class__().anthropic_max_request, 32 * 1024 * 1024)


def media_structure(data):
    from fake import media

    return media.jpeg_problem(data)


def saved(fmt):
    import io

    from fake.decoders import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 10, 10)).save(out, fmt)
    return out.getvalue()


class Media(Case):
    """Defects the structural read misses, which the independent decoders find."""

    def image(self, data, mime):
        return {"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": mime, "data": b64(data)}}]}]}

    def test_a_png_with_a_bad_filter_byte(self):
        import struct
        import zlib

        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

        raw = b"".join(b"\x07" + b"\xff\x00\x00" * 4 for _ in range(4))
        bad = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
        self.refused(MESSAGES, self.image(bad, "image/png"), "messages.0.content.0.image.source.base64: Could not process image")

    def test_a_gif_with_a_broken_lzw_stream(self):
        good = saved("GIF")
        self.taken(MESSAGES, self.image(good, "image/gif"))
        bad = bytearray(good)
        at = good.index(b"\x2c") + 12
        bad[at : at + 18] = b"\xff" * 18
        self.refused(MESSAGES, self.image(bytes(bad), "image/gif"), "Could not process image")

    def test_a_jpeg_whose_scan_is_corrupt_but_ends_in_eoi(self):
        import io
        import random

        from fake.decoders import Image, image_problem

        rng = random.Random(1)
        im = Image.new("RGB", (64, 64))
        im.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(64 * 64)])
        for options in ({}, {"progressive": True}):
            out = io.BytesIO()
            im.save(out, "JPEG", quality=90, **options)
            good = out.getvalue()
            self.taken(MESSAGES, self.image(good, "image/jpeg"))
            sos = good.index(b"\xff\xda")
            start = sos + 2 + int.from_bytes(good[sos + 2 : sos + 4], "big")
            garbled = good[: start + 200] + bytes((b * 7 + 3) & 0xFF for b in good[start + 200 : start + 400]).replace(b"\xff", b"\xfe") + good[start + 400 :]
            for bad in (garbled, good[: start + 300] + b"\xff\xd9"):
                # Pillow alone decodes it (libjpeg only warns); the structural read sees EOI.
                self.assertIsNone(media_structure(bad))
                self.assertTrue(image_problem(bad).startswith("libjpeg-turbo: "), image_problem(bad))
                self.refused(MESSAGES, self.image(bad, "image/jpeg"), "messages.0.content.0.image.source.base64: Could not process image")

    def test_a_webp_with_a_broken_bitstream(self):
        good = saved("WEBP")
        self.taken(MESSAGES, self.image(good, "image/webp"))
        bad = bytearray(good)
        for k in range(40, len(bad) - 4):
            bad[k] = (bad[k] * 7 + 3) & 0xFF
        self.refused(MESSAGES, self.image(bytes(bad), "image/webp"), "Could not process image")


if __name__ == "__main__":
    unittest.main()


class ContextWindow(Case):
    """A request over the window gets each provider's real overflow body; one within it is taken."""

    def setUp(self):
        super().setUp()
        PROVIDER.settings.context_tokens = 1000

    def big(self):
        return "y" * 8000  # 2000 tokens at 4 bytes a token

    def test_anthropic(self):
        body = {"messages": [{"role": "user", "content": self.big()}]}
        answer = self.refused(MESSAGES, body, "prompt is too long: ")
        self.assertRegex(answer["error"]["message"], r"^prompt is too long: \d+ tokens > 1000 maximum$")
        self.assertEqual(answer["error"]["type"], "invalid_request_error")
        self.taken(MESSAGES, {"messages": [{"role": "user", "content": "hi"}]})

    def test_responses(self):
        answer = self.refused(RESPONSES, {"input": self.big()}, "Your input exceeds the context window of this model.")
        self.assertEqual(answer["error"]["code"], "context_length_exceeded")

    def test_chat(self):
        answer = self.refused(CHAT, {"messages": [{"role": "user", "content": self.big()}]}, "maximum context length is 1000 tokens")
        self.assertEqual(answer["error"]["code"], "context_length_exceeded")

    def test_gemini(self):
        answer = self.refused(GEMINI, {"contents": [g_user(self.big())]}, "exceeds the maximum number of tokens allowed (1000)")
        self.assertEqual(answer["error"]["status"], "INVALID_ARGUMENT")
