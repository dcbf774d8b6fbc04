"""An agent pointed at `session-doctor proxy`, which forwards to the fake provider.

``Proxied(ctx, *args)`` starts ``session-doctor proxy --port 0 --upstream
<fake provider>`` in the scenario's sandbox (its journal under the sandbox's
``XDG_STATE_HOME``) and, in front of it, a recorder: a loopback hop that keeps
the sha256 of every body exactly as the agent sent it. ``.url`` is what the
agent is pointed at. The fake provider keeps the sha256 of every body it
received, so a scenario can tell that a request the proxy had nothing to
change reached the provider byte for byte.

The four cases every agent is driven through (``CASES``) are the ones that get
a session stuck when sent as they are: a cut PNG, a cut PDF, a 9000 px
screenshot (Anthropic refuses a side over 8000 px) and 31 images where the
provider takes 30.
"""

import hashlib
import http.client
import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import lib

# name -> (file name, bytes)
CASES = {
    "cut_png": ("cut.png", lib.cut_png),
    "cut_pdf": ("cut.pdf", lib.cut_pdf),
    "wide_png": ("wide.png", lambda: lib.png(9000, 40)),
}

# 31 images where the provider takes 30: the fake refuses past max_images, the proxy keeps 30.
MANY, LIMIT = 31, 30


class Proxied:
    def __init__(self, ctx, *args):
        self.ctx, self.args = ctx, [str(a) for a in args]
        self.sent = []  # (path, sha256) of each body as the agent sent it
        self._lock = threading.Lock()

    def __enter__(self):
        sb = self.ctx.sb
        argv = [str(lib.doctor_bin()), "proxy", "--port", "0", "--upstream", self.ctx.provider.url, *self.args]
        self.proc = subprocess.Popen(argv, env=sb.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        first = self.proc.stdout.readline().strip()
        prefix = "listening on http://127.0.0.1:"
        lib.check(first.startswith(prefix), "the proxy's first line names its address", first)
        self.port = int(first[len(prefix):])
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _recorder(self))
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def journal(self):
        path = self.ctx.sb.home / ".local" / "state" / "session-doctor" / "proxy" / "journal.jsonl"
        return [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []

    def check_untouched_requests_are_byte_identical(self):
        """Every model request the proxy journaled no change for reached the
        provider as the agent sent it, byte for byte, in the same order."""
        model = lambda path: _api(path) is not None
        sent = [sha for path, sha in self.sent if model(path)]
        got = [e["sha256"] for e in self.ctx.provider.model_requests()]
        lib.check(sent and sent == got, "with nothing to change, the provider received the agent's bytes (%d requests)" % len(sent), sent, got)


def _api(path):
    from fake.provider import _api_of

    return _api_of(path)


def _recorder(proxied):
    class Hop(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _hop(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                from fake.provider import _read_chunked

                raw = _read_chunked(self.rfile)
            with proxied._lock:
                proxied.sent.append((self.path, hashlib.sha256(raw).hexdigest()))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length", "transfer-encoding")}
            conn = http.client.HTTPConnection("127.0.0.1", proxied.port, timeout=120)
            conn.request(method, self.path, body=raw if (raw or method == "POST") else None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("connection", "content-length", "transfer-encoding"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            conn.close()

        def do_POST(self):
            self._hop("POST")

        def do_GET(self):
            self._hop("GET")

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Hop


def check_every_request_accepted(ctx, api):
    reqs = ctx.provider.model_requests(api)
    lib.check(reqs and all(r["status"] == 200 for r in reqs), "every request the provider received is accepted", *[r["answer"] for r in reqs if r["status"] != 200])
    return reqs


def check_journal(proxied, what):
    changes = [c["what"] for line in proxied.journal() for c in line["changes"]]
    lib.check(what in changes, "the journal says the proxy %s an attachment" % what, proxied.journal())
    text = json.dumps(proxied.journal())
    for secret in ("sk-ant-", "sk-fake", "sk-suite", "fake-key"):
        lib.check(secret not in text, "no credential in the journal")


def images(body):
    """The bytes of every image block in an Anthropic, Responses or Chat Completions body, tool results included."""
    import base64

    out = []

    def walk(v):
        if isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            if v.get("type") == "image" and isinstance(v.get("source"), dict) and v["source"].get("data"):
                out.append(base64.b64decode(v["source"]["data"]))
            elif v.get("type") == "input_image" and str(v.get("image_url", "")).startswith("data:"):
                out.append(base64.b64decode(v["image_url"].split(",", 1)[1]))
            elif v.get("type") == "image_url" and str((v.get("image_url") or {}).get("url", "")).startswith("data:"):
                out.append(base64.b64decode(v["image_url"]["url"].split(",", 1)[1]))
            else:
                for x in v.values():
                    walk(x)

    walk(body.get("messages") or body.get("input") or [])
    return out
