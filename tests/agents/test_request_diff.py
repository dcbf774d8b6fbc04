"""What request_diff forgives, and what it does not: each wire spelling and
resume artefact on hand-built messages (`python3 -m unittest tests/agents/test_request_diff.py`)."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import request_diff as rd  # noqa: E402

PNG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}


class Anthropic(unittest.TestCase):
    def test_spellings_the_provider_reads_as_one(self):
        a = {"role": "user", "content": "hi"}
        b = {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
        self.assertEqual(rd.items([a], [b], rd.anthropic), [])
        r1 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok", "is_error": False}]}
        r2 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "ok"}]}]}
        self.assertEqual(rd.items([r1], [r2], rd.anthropic), [])

    def test_bytes_signatures_and_nested_parts_count(self):
        other = dict(PNG, source=dict(PNG["source"], data="iVBORw0KGgp="))
        a = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [PNG]}]}
        b = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [other]}]}
        self.assertTrue(rd.items([a], [b], rd.anthropic))
        t1 = {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "s1"}]}
        t2 = {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "s2"}]}
        self.assertTrue(rd.items([t1], [t2], rd.anthropic))
        self.assertTrue(rd.items([t1], [], rd.anthropic), "an item missing from the end is a difference")

    def test_output_config_is_claude_codes_only(self):
        a = {"role": "assistant", "content": "x"}
        b = dict(a, output_config={"effort": "medium"})
        self.assertEqual(rd.items([a], [b], rd.claude_code), [])
        self.assertTrue(rd.items([a], [b], rd.anthropic))


class ResumeArtefacts(unittest.TestCase):
    def test_the_typed_prompt_alone_or_joined(self):
        h = {"role": "assistant", "content": "done"}
        self.assertEqual(rd.resume_tail([h, {"role": "user", "content": "continue"}], "continue", rd.anthropic), [h])
        joined = {"role": "user", "content": [PNG, {"type": "text", "text": "continue"}]}
        self.assertEqual(rd.items(rd.resume_tail([joined], "continue", rd.anthropic), [{"role": "user", "content": [PNG]}], rd.anthropic), [])

    def test_anything_else_at_the_end_is_refused(self):
        with self.assertRaises(AssertionError):
            rd.resume_tail([{"role": "user", "content": "something else"}], "continue", rd.anthropic)
        with self.assertRaises(AssertionError):
            rd.resume_tail([{"role": "assistant", "content": "continue"}], "continue", rd.anthropic)

    def test_copilots_stamp(self):
        m = {"role": "user", "content": "<current_datetime>2026-12-06T20:09:12.206+00:00</current_datetime>\n\ncontinue"}
        self.assertEqual(rd.resume_tail([m], rd.copilot_prompt("continue"), rd.chat), [])
        with self.assertRaises(AssertionError):
            rd.resume_tail([dict(m, content=m["content"] + "!")], rd.copilot_prompt("continue"), rd.chat)

    def test_only_the_leading_system_message(self):
        s = {"role": "system", "content": "prompt"}
        u = {"role": "user", "content": "hi"}
        self.assertEqual(rd.leading([s, u, s], "role", "system", "x"), [u, s])
        with self.assertRaises(AssertionError):
            rd.leading([u, s], "role", "system", "x")

    def test_kilos_resume_tail_cuts_the_typed_prompts_environment_alone(self):
        env = {"type": "text", "text": "\n\n<environment_details>\nMessage time: 2026-12-06T22:55:32Z\nWorking directory: /w\nWorkspace root folder: /\n</environment_details>"}
        typed = {"type": "text", "text": "continue"}
        held = {"type": "text", "text": "hi"}
        sent = [{"role": "user", "content": [held, env, typed, dict(env, cache_control={"type": "ephemeral"})]}]
        # The held message's block stays: preview writes it.
        self.assertEqual(rd.kilo_resume_tail(sent, "continue", rd.anthropic), [{"role": "user", "content": [held, env]}])
        # Anything more in the block is not Kilo's: the prompt is then not last.
        longer = [{"role": "user", "content": [typed, dict(env, text=env["text"] + "\nmore")]}]
        with self.assertRaises(AssertionError):
            rd.kilo_resume_tail(longer, "continue", rd.anthropic)

    def test_gemini(self):
        ctx = {"role": "user", "parts": [{"text": "<session_context>\nnow"}, {"text": "READ"}]}
        self.assertEqual(rd.gemini_history([ctx]), [{"role": "user", "parts": [{"text": "READ"}]}])
        empty = {"role": "model", "parts": []}
        self.assertEqual(rd.gemini_history([empty]), [empty], "a turn left empty by the agent is compared, not dropped")
        sent = [ctx, {"role": "model", "parts": [{"text": rd.GEMINI_INTERRUPTED}]}, {"role": "user", "parts": [{"text": "continue"}]}]
        self.assertEqual(rd.gemini_resume(sent, "continue"), [ctx])
        signed = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "sig"}]}
        self.assertTrue(rd.items([signed], [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]))


    def test_qwen_code(self):
        system = {"role": "system", "content": "You are Qwen Code"}
        skills = {"type": "text", "text": "<system-reminder>\nskills\n</system-reminder>"}
        date = {"type": "text", "text": "<system-reminder>\nThe current date is: today\n</system-reminder>"}
        hi = {"type": "text", "text": "hi"}
        go = {"type": "text", "text": "continue"}
        done = {"role": "assistant", "content": "Done."}
        # The startup context and the new prompt after its date reminder are cut.
        sent = [system, {"role": "user", "content": [skills, date, hi]}, done, {"role": "user", "content": [date, go]}]
        self.assertEqual(rd.qwen_code_resume(sent, "continue"), [{"role": "user", "content": [hi]}, done])
        # A new prompt joined to a trailing user turn leaves that turn.
        sent = [system, {"role": "user", "content": [skills, hi, date, go]}]
        self.assertEqual(rd.qwen_code_resume(sent, "continue"), [{"role": "user", "content": [hi]}])
        # No reminder before the prompt, or no startup context: not Qwen Code's resume.
        with self.assertRaises(AssertionError):
            rd.qwen_code_resume([system, {"role": "user", "content": [skills, hi]}, {"role": "user", "content": [go]}], "continue")
        with self.assertRaises(AssertionError):
            rd.qwen_code_resume([system, {"role": "user", "content": [hi]}, {"role": "user", "content": [date, go]}], "continue")
        # A reminder that is not a whole part is history.
        partial = {"type": "text", "text": "<system-reminder>\nx\n</system-reminder> and more"}
        with self.assertRaises(AssertionError):
            rd.qwen_code_resume([system, {"role": "user", "content": [partial, hi]}, {"role": "user", "content": [date, go]}], "continue")


class Chat(unittest.TestCase):
    def test_spellings(self):
        a = {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}
        b = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]}
        self.assertEqual(rd.items([a], [b], rd.chat), [])
        self.assertTrue(rd.items([a], [dict(b, extra=1)], rd.chat), "a member only one side has is a difference")


if __name__ == "__main__":
    unittest.main()
