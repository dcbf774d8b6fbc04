#!/usr/bin/env python3
"""Writes the sample sessions in samples/: one small, realistic stuck session
per format, each in the agent's exact on-disk shape, with real media bytes.

Every sample holds a valid PNG pasted by the user, a valid PDF, and a PNG that
a tool read from an interrupted download (cut short before IEND) followed by
the provider's rejection. Run: python3 samples/generate.py (stdlib only).
The files are committed; tests read them, not this script.
"""
import base64, json, os, struct, zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def png(w, h, seed):
    raw = b"".join(b"\x00" + bytes(((x * 7 + y * 13 + seed) % 256) for x in range(w * 3)) for y in range(h))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def pdf():
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>"]
    stream = b"BT /F1 12 Tf 72 720 Td (quarterly report) Tj ET"
    objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offs = []
    for i, o in enumerate(objs, 1):
        offs.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    x = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for o in offs:
        out += b"%010d 00000 n \n" % o
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
    return bytes(out)


SHOT = png(64, 40, 1)            # the user's pasted screenshot
DIAGRAM = png(120, 80, 2)
CUT = DIAGRAM[: len(DIAGRAM) * 2 // 3]  # interrupted download: no IEND
PDF = pdf()
B = lambda b: base64.b64encode(b).decode()
DATA = lambda mime, b: "data:%s;base64,%s" % (mime, B(b))
# The block each error names is where the cut PNG sits in the request the agent builds.
def anthropic_err(block):
    return {"type": "error", "error": {"type": "invalid_request_error", "message": block + ".image.source.base64: Could not process image"}, "request_id": "req_011CVHx8n1Dq2"}
def openai_err(item):
    return {"error": {"message": "Invalid image data: the image at input[%d].output[0].image_url could not be decoded." % item, "type": "invalid_request_error", "param": "input[%d].output[0].image_url" % item, "code": "invalid_image_format"}}
# A logged Responses request numbers its own input; Codex sends a developer
# message of its own ahead of the rollout's items, so there the output is one further.
OPENAI_ERR = openai_err(3)
CODEX_ERR = openai_err(4)
GEMINI_ERR = {"error": {"code": 400, "message": "Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", "status": "INVALID_ARGUMENT"}}


def write(name, lines):
    with open(os.path.join(HERE, name), "w", newline="\n") as f:
        for l in lines:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")


def claude_code():
    sid, cwd, v = "7f3c2a9e-1b4d-4c8e-9f21-5a6b7c8d9e0f", "/home/dev/shop", "2.1.178"
    base = lambda t, u, p, **k: dict({"parentUuid": p, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid, "version": v, "gitBranch": "main", "type": t, "uuid": u, "timestamp": "2026-11-20T10:0%d:00.000Z" % (int(u[-1], 16) % 10)}, **k)
    usage = {"input_tokens": 2210, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1800, "output_tokens": 64, "service_tier": "standard"}
    asst = lambda mid, content, model="claude-sonnet-4-5-20250929": {"id": mid, "type": "message", "role": "assistant", "model": model, "content": content, "stop_reason": "tool_use", "stop_sequence": None, "usage": usage}
    return [
        {"type": "summary", "summary": "Checkout page layout", "leafUuid": "00000000-0000-4000-8000-00000000000a"},
        base("user", "00000000-0000-4000-8000-000000000001", None, message={"role": "user", "content": [{"type": "text", "text": "The checkout button overlaps the footer, see screenshot"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B(SHOT)}}]}),
        base("assistant", "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000001", requestId="req_011CVHa1", message=asst("msg_01A", [{"type": "thinking", "thinking": "Look at the spec first.", "signature": "EqQBCkYIBxgCKkB0c2lnbmF0dXJl"}])),
        base("assistant", "00000000-0000-4000-8000-000000000003", "00000000-0000-4000-8000-000000000002", requestId="req_011CVHa1", message=asst("msg_01A", [{"type": "tool_use", "id": "toolu_01PDF", "name": "Read", "input": {"file_path": "/home/dev/shop/docs/spec.pdf"}}])),
        base("user", "00000000-0000-4000-8000-000000000004", "00000000-0000-4000-8000-000000000003", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01PDF", "content": [{"type": "text", "text": "PDF file read: /home/dev/shop/docs/spec.pdf (%d bytes)" % len(PDF)}, {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": B(PDF)}}]}]}, toolUseResult={"type": "pdf", "file": {"filePath": "/home/dev/shop/docs/spec.pdf", "base64": B(PDF), "originalSize": len(PDF)}}),
        base("assistant", "00000000-0000-4000-8000-000000000005", "00000000-0000-4000-8000-000000000004", requestId="req_011CVHa2", message=asst("msg_01B", [{"type": "tool_use", "id": "toolu_01IMG", "name": "Read", "input": {"file_path": "/home/dev/shop/tmp/layout-diagram.png"}}])),
        base("user", "00000000-0000-4000-8000-000000000006", "00000000-0000-4000-8000-000000000005", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01IMG", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B(CUT)}}]}]}, toolUseResult={"type": "image", "file": {"base64": B(CUT), "type": "image/png", "originalSize": len(CUT), "dimensions": {"originalWidth": 120, "originalHeight": 80, "displayWidth": 120, "displayHeight": 80}}}),
        base("assistant", "00000000-0000-4000-8000-000000000007", "00000000-0000-4000-8000-000000000006", isApiErrorMessage=True, apiErrorStatus=400, error="invalid_request", message={"id": "3c1f5a2e-9d8b-4e7f-a6c5-1b2d3e4f5a6b", "type": "message", "role": "assistant", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 400 " + json.dumps(anthropic_err("messages.4.content.0.content.0"), separators=(",", ":"))}], "stop_reason": "stop_sequence", "stop_sequence": "", "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}),
        base("user", "00000000-0000-4000-8000-000000000008", "00000000-0000-4000-8000-000000000007", message={"role": "user", "content": "why did it stop?"}),
        base("assistant", "00000000-0000-4000-8000-000000000009", "00000000-0000-4000-8000-000000000008", isApiErrorMessage=True, apiErrorStatus=400, error="invalid_request", message={"id": "4d2a6b3f-0e9c-4f80-b7d6-2c3e4f5a6b7c", "type": "message", "role": "assistant", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 400 " + json.dumps(anthropic_err("messages.4.content.0.content.0"), separators=(",", ":"))}], "stop_reason": "stop_sequence", "stop_sequence": "", "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}),
    ]


def codex():
    ts = lambda i: "2026-11-20T10:%02d:00.000Z" % i
    L = lambda i, t, p: {"timestamp": ts(i), "type": t, "payload": p}
    return [
        L(0, "session_meta", {"id": "019a8b2c-3d4e-7f50-8a6b-7c8d9e0f1a2b", "timestamp": ts(0), "cwd": "/home/dev/shop", "originator": "codex_cli_rs", "cli_version": "0.58.0", "source": "cli", "model_provider": "openai", "git": {"commit_hash": "a1b2c3d", "branch": "main", "repository_url": "git@example.com:dev/shop.git"}}),
        L(1, "turn_context", {"cwd": "/home/dev/shop", "approval_policy": "on-request", "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex", "effort": "medium", "summary": "auto"}),
        L(2, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "The checkout button overlaps the footer"}, {"type": "input_text", "text": "<image name=[Image #1] path=\"/home/dev/shot.png\">"}, {"type": "input_image", "image_url": DATA("image/png", SHOT)}, {"type": "input_text", "text": "</image>"}]}),
        L(3, "event_msg", {"type": "user_message", "message": "The checkout button overlaps the footer", "images": [], "local_images": ["/home/dev/shot.png"]}),
        L(4, "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Inspecting the layout diagram"}], "content": None, "encrypted_content": "gAAAAABpQ3Zk" + "A" * 40}),
        L(5, "response_item", {"type": "function_call", "name": "view_image", "arguments": json.dumps({"path": "/home/dev/shop/tmp/layout-diagram.png"}), "call_id": "call_Vx81"}),
        L(6, "response_item", {"type": "function_call_output", "call_id": "call_Vx81", "output": [{"type": "input_image", "image_url": DATA("image/png", CUT)}]}),
        L(7, "event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 5120, "cached_input_tokens": 0, "output_tokens": 80, "reasoning_output_tokens": 64, "total_tokens": 5200}, "last_token_usage": {"input_tokens": 5120, "cached_input_tokens": 0, "output_tokens": 80, "reasoning_output_tokens": 64, "total_tokens": 5200}, "model_context_window": 272000}, "rate_limits": None}),
        L(8, "event_msg", {"type": "error", "message": "unexpected status 400 Bad Request: " + json.dumps(CODEX_ERR)}),
    ]


def pi():
    usage = {"input": 1800, "output": 90, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1890, "cost": {"input": 0.005, "output": 0.001, "cacheRead": 0, "cacheWrite": 0, "total": 0.006}}
    E = lambda i, p, t, **k: dict({"type": t, "id": "%08x" % (0xa1b2c300 + i), "parentId": None if p is None else "%08x" % (0xa1b2c300 + p), "timestamp": "2026-11-20T10:%02d:00.000Z" % i}, **k)
    return [
        {"type": "session", "version": 3, "id": "5b6c7d8e-9f01-4a2b-8c3d-4e5f6a7b8c9d", "timestamp": "2026-11-20T10:00:00.000Z", "cwd": "/home/dev/shop"},
        E(1, None, "model_change", provider="anthropic", modelId="claude-sonnet-4-5"),
        E(2, 1, "message", message={"role": "user", "content": [{"type": "text", "text": "The checkout button overlaps the footer"}, {"type": "image", "data": B(SHOT), "mimeType": "image/png"}], "timestamp": 1763632800000}),
        E(3, 2, "message", message={"role": "assistant", "content": [{"type": "thinking", "thinking": "Open the diagram.", "thinkingSignature": "EqQBCkYIBxgC"}, {"type": "toolCall", "id": "toolu_01RD", "name": "read", "arguments": {"path": "/home/dev/shop/tmp/layout-diagram.png"}}], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage, "stopReason": "toolUse", "timestamp": 1763632860000}),
        E(4, 3, "message", message={"role": "toolResult", "toolCallId": "toolu_01RD", "toolName": "read", "content": [{"type": "text", "text": "Read image file [image/png]"}, {"type": "image", "data": B(CUT), "mimeType": "image/png"}], "isError": False, "timestamp": 1763632861000}),
        E(5, 4, "message", message={"role": "assistant", "content": [], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": {**usage, "input": 0, "output": 0, "totalTokens": 0}, "stopReason": "error", "errorMessage": "400 " + json.dumps(anthropic_err("messages.2.content.0.content.1")), "timestamp": 1763632862000}),
    ]


def gemini_cli():
    sid = "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f"
    rec = lambda id_, t, c, **k: dict({"id": id_, "timestamp": "2026-11-20T10:00:00.000Z", "type": t, "content": c}, **k)
    call = {"id": "read_file-1763632860-1", "name": "read_file", "args": {"absolute_path": "/home/dev/shop/tmp/layout-diagram.png"}, "status": "executing", "timestamp": "2026-11-20T10:01:00.000Z"}
    done = dict(call, status="success", result=[{"functionResponse": {"id": call["id"], "name": "read_file", "response": {"output": "Binary content provided (1 item)."}, "parts": [{"inlineData": {"mimeType": "image/png", "data": B(CUT)}}]}}])
    toks = {"input": 2100, "output": 40, "cached": 0, "thoughts": 12, "tool": 0, "total": 2152}
    return [
        {"sessionId": sid, "projectHash": "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0", "startTime": "2026-11-20T10:00:00.000Z", "lastUpdated": "2026-11-20T10:00:00.000Z", "kind": "main"},
        rec("u1", "user", [{"text": "The checkout button overlaps the footer"}, {"inlineData": {"mimeType": "image/png", "data": B(SHOT)}}]),
        rec("g1", "gemini", "", model="gemini-2.5-pro", toolCalls=[call]),
        rec("g1", "gemini", "", model="gemini-2.5-pro", toolCalls=[done], tokens=toks),
        {"$set": {"lastUpdated": "2026-11-20T10:01:05.000Z"}},
        rec("e1", "error", "[API Error: " + GEMINI_ERR["error"]["message"] + " (Status: INVALID_ARGUMENT)]"),
    ]


def mux():
    meta = lambda seq, **k: dict({"historySequence": seq, "timestamp": 1763632800000 + seq * 1000}, **k)
    usage = {"inputTokens": 2100, "outputTokens": 60, "totalTokens": 2160}
    W = "shop-a1b2c3"
    return [
        {"id": "msg-u1", "role": "user", "metadata": meta(1), "parts": [{"type": "text", "text": "The checkout button overlaps the footer"}, {"type": "file", "mediaType": "image/png", "url": DATA("image/png", SHOT), "filename": "shot.png"}], "workspaceId": W},
        {"id": "msg-a1", "role": "assistant", "metadata": meta(2, model="anthropic:claude-sonnet-4-5", usage=usage, finishReason="tool-calls"), "parts": [{"type": "reasoning", "text": "Look at the diagram", "providerOptions": {"anthropic": {"signature": "EqQBCkYIBxgC"}}}, {"type": "dynamic-tool", "toolCallId": "toolu_01AF", "toolName": "attach_file", "input": {"path": "/home/dev/shop/tmp/layout-diagram.png"}, "state": "output-available", "output": {"type": "content", "value": [{"type": "text", "text": "Attached layout-diagram.png"}, {"type": "media", "data": B(CUT), "mediaType": "image/png", "filename": "layout-diagram.png"}]}}], "workspaceId": W},
        {"id": "msg-a2", "role": "assistant", "metadata": meta(3, model="anthropic:claude-sonnet-4-5", error="messages.2.content.0.image.source.base64: Could not process image", errorType="api"), "parts": [], "workspaceId": W},
    ]


def opencode():
    info = lambda id_, role, **k: dict({"id": id_, "sessionID": "ses_5a6b7c8d9e0fA1b2C3d4E5f6", "role": role, "time": {"created": 1763632800000}}, **k)
    return [
        {"info": info("msg_01", "user", agent="build", model={"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}), "parts": [{"id": "prt_01", "sessionID": "ses_5a6b7c8d9e0fA1b2C3d4E5f6", "messageID": "msg_01", "type": "text", "text": "Summarise the spec and fix the layout"}, {"id": "prt_02", "sessionID": "ses_5a6b7c8d9e0fA1b2C3d4E5f6", "messageID": "msg_01", "type": "file", "mime": "application/pdf", "filename": "spec.pdf", "url": DATA("application/pdf", PDF)}]},
        {"info": info("msg_02", "assistant", parentID="msg_01", modelID="claude-sonnet-4-5", providerID="anthropic", mode="build", agent="build", path={"cwd": "/home/dev/shop", "root": "/home/dev/shop"}, cost=0.01, tokens={"input": 2100, "output": 70, "reasoning": 0, "cache": {"read": 0, "write": 0}}, finish="tool-calls"), "parts": [{"id": "prt_03", "sessionID": "ses_5a6b7c8d9e0fA1b2C3d4E5f6", "messageID": "msg_02", "type": "tool", "callID": "toolu_01OC", "tool": "read", "state": {"status": "completed", "input": {"filePath": "/home/dev/shop/tmp/layout-diagram.png"}, "output": "Image read successfully", "title": "tmp/layout-diagram.png", "metadata": {}, "time": {"start": 1, "end": 2}, "attachments": [{"id": "prt_04", "sessionID": "ses_5a6b7c8d9e0fA1b2C3d4E5f6", "messageID": "msg_02", "type": "file", "mime": "image/png", "filename": "layout-diagram.png", "url": DATA("image/png", CUT)}]}}]},
        {"info": info("msg_03", "assistant", parentID="msg_01", modelID="claude-sonnet-4-5", providerID="anthropic", mode="build", agent="build", path={"cwd": "/home/dev/shop", "root": "/home/dev/shop"}, cost=0, tokens={"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}, error={"name": "APIError", "data": {"message": "Could not process image", "statusCode": 400, "isRetryable": False, "responseBody": json.dumps(anthropic_err("messages.2.content.0"))}}), "parts": []},
    ]


def openai_chat():
    req = lambda msgs: {"model": "gpt-4o", "messages": msgs, "max_completion_tokens": 1024}
    m1 = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": [{"type": "text", "text": "The checkout button overlaps the footer"}, {"type": "image_url", "image_url": {"url": DATA("image/png", SHOT), "detail": "auto"}}]}]
    m2 = m1 + [{"role": "assistant", "content": None, "tool_calls": [{"id": "call_9Qz", "type": "function", "function": {"name": "view_image", "arguments": json.dumps({"path": "/home/dev/shop/tmp/layout-diagram.png"})}}]},
               {"role": "tool", "tool_call_id": "call_9Qz", "content": "Image attached below."},
               {"role": "user", "content": [{"type": "image_url", "image_url": {"url": DATA("image/png", CUT)}}, {"type": "file", "file": {"filename": "spec.pdf", "file_data": DATA("application/pdf", PDF)}}]}]
    return [req(m1), {"id": "chatcmpl-Bx1", "object": "chat.completion", "created": 1763632800, "model": "gpt-4o-2024-08-06", "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": m2[2]["tool_calls"]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 900, "completion_tokens": 30, "total_tokens": 930}}, req(m2), {"error": {"message": "You uploaded an unsupported image. Please make sure your image is valid.", "type": "invalid_request_error", "param": None, "code": "invalid_image_format"}}]


def openai_responses():
    base = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "The checkout button overlaps the footer"}, {"type": "input_image", "image_url": DATA("image/png", SHOT), "detail": "auto"}]}]
    more = base + [{"type": "reasoning", "id": "rs_68a1b2c3d4e5f6a7", "summary": [], "encrypted_content": "gAAAAABpQ3Zk" + "B" * 40},
                   {"type": "function_call", "id": "fc_68a1b2c3", "call_id": "call_Vx81", "name": "view_image", "arguments": json.dumps({"path": "/home/dev/shop/tmp/layout-diagram.png"})},
                   {"type": "function_call_output", "call_id": "call_Vx81", "output": [{"type": "input_image", "image_url": DATA("image/png", CUT)}]}]
    req = lambda inp: {"model": "gpt-5", "input": inp, "store": False, "include": ["reasoning.encrypted_content"], "reasoning": {"effort": "medium"}}
    resp = {"id": "resp_68a1", "object": "response", "created_at": 1763632800, "status": "completed", "model": "gpt-5-2025-08-07", "output": more[1:3], "usage": {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 32}, "total_tokens": 940}}
    return [req(base), resp, req(more), OPENAI_ERR]


def anthropic():
    m1 = [{"role": "user", "content": [{"type": "text", "text": "The checkout button overlaps the footer"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B(SHOT)}}]}]
    asst = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01IMG", "name": "Read", "input": {"file_path": "/home/dev/shop/tmp/layout-diagram.png"}}]}
    m2 = m1 + [asst, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01IMG", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B(CUT)}}]}, {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": B(PDF)}, "title": "spec.pdf"}]}]
    req = lambda m: {"model": "claude-sonnet-4-5", "max_tokens": 8192, "system": "You are a coding agent.", "messages": m}
    resp = {"id": "msg_01XFD", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": asst["content"], "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 900, "output_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
    return [req(m1), resp, req(m2), anthropic_err("messages.2.content.0.content.0")]


def gemini():
    c1 = [{"role": "user", "parts": [{"text": "The checkout button overlaps the footer"}, {"inlineData": {"mimeType": "image/png", "data": B(SHOT)}}]}]
    c2 = c1 + [{"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"absolute_path": "/home/dev/shop/tmp/layout-diagram.png"}}, "thoughtSignature": "CiQBVKhc7u"}]},
               {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "Binary content provided (1 item)."}, "parts": [{"inlineData": {"mimeType": "image/png", "data": B(CUT)}}]}}]}]
    req = lambda c: {"contents": c, "systemInstruction": {"parts": [{"text": "You are a coding agent."}]}, "generationConfig": {"temperature": 1}}
    resp = {"candidates": [{"content": c2[1], "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 900, "candidatesTokenCount": 30, "totalTokenCount": 930}, "modelVersion": "gemini-2.5-pro"}
    return [req(c1), resp, req(c2), GEMINI_ERR]


def cline():
    """Cline's api_conversation_history.json: one line, a JSON array of Anthropic messages."""
    env = {"type": "text", "text": "<environment_details>\n# VSCode Visible Files\nsrc/checkout.css\n</environment_details>"}
    info = {"modelId": "claude-sonnet-4-5-20250929", "providerId": "anthropic", "mode": "act"}
    return [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nThe checkout button overlaps the footer\n</task>"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B(SHOT)}}, env], "ts": 1770912345678},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01IMG", "name": "read_file", "input": {"path": "/home/dev/shop/tmp/layout-diagram.png"}}], "modelInfo": info, "metrics": {"tokens": {"prompt": 900, "completion": 40, "cached": 0}}, "ts": 1770912349000},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01IMG", "content": [{"type": "text", "text": "[read_file for '/home/dev/shop/tmp/layout-diagram.png'] Result:"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B(CUT)}}]}, env], "ts": 1770912350000},
    ]


def kiro():
    """Kiro CLI's `sessions/cli/<id>.jsonl`: images as lists of byte values. Kiro
    records no failed request, so the story ends at the result holding the cut PNG."""
    img = lambda b: {"format": "png", "source": {"kind": "bytes", "data": list(b)}}
    row = lambda kind, mid, content, **extra: {"version": "v1", "kind": kind, "data": dict({"message_id": mid, "content": content}, **extra)}
    return [
        row("Prompt", "5b7f0d1e-1c2a-4e55-9f0e-8a1d2c3b4a01", [{"kind": "text", "data": "The checkout button overlaps the footer"}, {"kind": "image", "data": img(SHOT)}], meta={"timestamp": 1790244823}),
        row("AssistantMessage", "5b7f0d1e-1c2a-4e55-9f0e-8a1d2c3b4a02", [{"kind": "thinking", "data": {"text": "Look at the diagram", "signature": "EqQBCkYIBxgC", "modelId": "claude-sonnet-4.5"}}, {"kind": "text", "data": ""}, {"kind": "toolUse", "data": {"toolUseId": "tooluse_01AF", "name": "read", "input": {"operations": [{"mode": "Image", "image_paths": [DIAG]}]}}}]),
        row("ToolResults", "5b7f0d1e-1c2a-4e55-9f0e-8a1d2c3b4a03", [{"kind": "toolResult", "data": {"toolUseId": "tooluse_01AF", "content": [{"kind": "image", "data": img(CUT)}], "status": "success"}}],
            results={"tooluse_01AF": {"tool": None, "result": {"Success": {"items": [{"Image": img(CUT)}]}}}}),
    ]


def expect(name, rows):
    """What `scan` must report: (line, origin, tool, name, mime, bytes) per attachment."""
    import hashlib
    MANIFEST[name] = [{"line": l, "origin": o, "name": n, "mime": m, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for (l, o, n, m, b) in rows]


MANIFEST = {}
DIAG = "/home/dev/shop/tmp/layout-diagram.png"
PDFP = "/home/dev/shop/docs/spec.pdf"
PNG = "image/png"
expect("claude-code.jsonl", [(2, "user", None, PNG, SHOT), (5, "tool_result", PDFP, "application/pdf", PDF), (7, "tool_result", DIAG, PNG, CUT)])
expect("codex.jsonl", [(3, "user", "/home/dev/shot.png", PNG, SHOT), (7, "tool_result", DIAG, PNG, CUT)])
expect("pi.jsonl", [(3, "user", None, PNG, SHOT), (5, "tool_result", DIAG, PNG, CUT)])
expect("gemini-cli.jsonl", [(2, "user", None, PNG, SHOT), (4, "tool_result", DIAG, PNG, CUT)])
expect("mux.jsonl", [(1, "user", "shot.png", PNG, SHOT), (2, "tool_result", "layout-diagram.png", PNG, CUT)])
expect("opencode.jsonl", [(1, "user", "spec.pdf", "application/pdf", PDF), (2, "tool_result", "layout-diagram.png", PNG, CUT)])
expect("openai-chat.jsonl", [(3, "user", None, PNG, SHOT), (3, "user", None, PNG, CUT), (3, "user", "spec.pdf", "application/pdf", PDF)])
expect("openai-responses.jsonl", [(3, "user", None, PNG, SHOT), (3, "tool_result", DIAG, PNG, CUT)])
expect("anthropic.jsonl", [(3, "user", None, PNG, SHOT), (3, "tool_result", DIAG, PNG, CUT), (3, "user", "spec.pdf", "application/pdf", PDF)])
expect("gemini.jsonl", [(3, "user", None, PNG, SHOT), (3, "tool_result", DIAG, PNG, CUT)])
expect("cline.json", [(1, "user", None, PNG, SHOT), (1, "tool_result", DIAG, PNG, CUT)])
expect("kiro.jsonl", [(1, "user", None, PNG, SHOT), (3, "tool_result", DIAG, PNG, CUT)])
# Copilot CLI cannot tell the story (it sends no tool image to a custom provider and
# heals a refused attachment itself): its sample is a real run, copied as written.
COPILOT_RUN = os.path.join(HERE, "..", "tests", "data", "agents", "copilot", "attachment-healed", "77ee96c5-e46b-4f2b-8874-8b5c969c004b", "events.jsonl")
COPILOT_ASSET = base64.b64decode(next(json.loads(l) for l in open(COPILOT_RUN) if '"session.binary_asset"' in l)["data"]["data"])
expect("copilot.jsonl", [(3, "user", "/tmp/sd-cop-uf9uyoax/work/cut.png", PNG, COPILOT_ASSET)])
# Qwen Code cannot tell it either (its read_file never sends an image it cannot decode,
# and it retries a media request refused with a 400 without the media): its sample is a
# real run stuck on a route that takes no images (a 404), copied as written.
QWEN_RUN = os.path.join(HERE, "..", "tests", "data", "agents", "qwen-code", "image-route-404", "a8383ef4-f550-4f0b-b924-27d5d81bf89b.jsonl")
QWEN_IMAGE = base64.b64decode(next(json.loads(l) for l in open(QWEN_RUN) if '"inlineData"' in l)["message"]["parts"][0]["functionResponse"]["parts"][0]["inlineData"]["data"])
expect("qwen-code.jsonl", [(6, "tool_result", "shot.png", "image/jpeg", QWEN_IMAGE)])


if __name__ == "__main__":
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(MANIFEST, f, indent=1)
        f.write("\n")
    write("claude-code.jsonl", claude_code())
    write("codex.jsonl", codex())
    write("pi.jsonl", pi())
    write("gemini-cli.jsonl", gemini_cli())
    write("mux.jsonl", mux())
    write("opencode.jsonl", opencode())
    write("openai-chat.jsonl", openai_chat())
    write("openai-responses.jsonl", openai_responses())
    write("anthropic.jsonl", anthropic())
    write("gemini.jsonl", gemini())
    write("kiro.jsonl", kiro())
    with open(COPILOT_RUN, "rb") as src, open(os.path.join(HERE, "copilot.jsonl"), "wb") as f:
        f.write(src.read())
    with open(QWEN_RUN, "rb") as src, open(os.path.join(HERE, "qwen-code.jsonl"), "wb") as f:
        f.write(src.read())
    with open(os.path.join(HERE, "cline.json"), "w", newline="\n") as f:
        f.write(json.dumps(cline(), separators=(",", ":")))
