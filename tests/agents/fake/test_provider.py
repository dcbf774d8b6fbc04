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
        # Earlier turns are not validated, only the current one; and 2.5 never asks.
        self.taken(GEMINI3, {"contents": [g_user("hi"), g_call(), g_response(), {"role": "model", "parts": [{"text": "ok"}]}, g_user("next")]})
        self.taken(GEMINI, {"contents": [g_user("hi"), g_call(), g_response()]})

    def test_gemini_3_answers_a_call_with_a_signature(self):
        PROVIDER.settings.tool = ("read_file", {"file_path": "x"})
        answer = self.taken(GEMINI3, {"contents": [g_user("READ-THE-FILE")], "tools": [{"functionDeclarations": [{"name": "read_file"}]}]})
        self.assertTrue(answer["candidates"][0]["content"]["parts"][0]["thoughtSignature"])


if __name__ == "__main__":
    unittest.main()
