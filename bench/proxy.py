#!/usr/bin/env python3
"""The proxy's added latency per request, and a bounded load check.

Usage: bench/proxy.py [--requests N] [--streams N] [--bin PATH]

A loopback upstream (stdlib, threads) answers Anthropic Messages requests
with a short SSE stream that names the request it answers in every event.
`session-doctor proxy --port 0 --upstream <it>` sits in front of it.

1. Latency: N requests one after another on a kept-alive connection, first
   straight to the upstream, then through the proxy, in the same run (and
   through it on a route it does not mend: the hop alone); printed: median
   and p95 of each, the median added per request, and the ratio.
2. Load: N requests over --streams concurrent connections through the proxy,
   each body carrying a small valid PNG (so the proxy checks it); every answer
   must be complete, its events in order and naming its own request: nothing
   lost, nothing reordered, nothing crossed. Bounded in count and time (every
   socket has a 30 s timeout); loopback only.

Prints one line per measure; exits 1 when the load check finds a fault.
"""

import argparse
import base64
import http.client
import json
import os
import statistics
import struct
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVENTS = 8


def png(w=8, h=8):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + b"\x40\x80\xc0" * w for _ in range(h))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Head and body are two writes: without this, Nagle and delayed ACKs add 40 ms to each answer.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        rid = body["metadata"]["user_id"]
        events = "".join("event: content_block_delta\ndata: %s\n\n" % json.dumps({"id": rid, "n": i}) for i in range(EVENTS))
        data = events.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def request_body(rid, image):
    content = [{"type": "text", "text": "hello %s" % rid}]
    if image:
        content.append({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}})
    return json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 16, "stream": True, "metadata": {"user_id": rid}, "messages": [{"role": "user", "content": content}]})


def post(conn, rid, image=None, path="/v1/messages"):
    conn.request("POST", path, body=request_body(rid, image).encode(), headers={"content-type": "application/json", "x-api-key": "sk-bench"})
    r = conn.getresponse()
    return r.status, r.read()


def latencies(port, n, path="/v1/messages"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out = []
    for i in range(n):
        t = time.perf_counter()
        status, _ = post(conn, "lat-%d" % i, path=path)
        out.append(time.perf_counter() - t)
        assert status == 200, status
    conn.close()
    return out


def check_answer(rid, status, data):
    if status != 200:
        return "%s: status %s" % (rid, status)
    events = [json.loads(l[6:]) for l in data.decode().splitlines() if l.startswith("data: ")]
    if [e.get("id") for e in events] != [rid] * EVENTS:
        return "%s: an answer crossed with another: %s" % (rid, events[:2])
    if [e["n"] for e in events] != list(range(EVENTS)):
        return "%s: events lost or reordered" % rid
    return None


def load(port, n, streams):
    image = base64.b64encode(png()).decode()
    faults, done = [], []
    lock = threading.Lock()
    ids = iter(range(n))

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while True:
            with lock:
                i = next(ids, None)
            if i is None:
                break
            rid = "load-%d" % i
            try:
                status, data = post(conn, rid, image)
                fault = check_answer(rid, status, data)
            except Exception as err:  # noqa: BLE001 - a fault to report, whatever it is
                fault = "%s: %r" % (rid, err)
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            with lock:
                done.append(rid)
                if fault:
                    faults.append(fault)
        conn.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return faults, len(done), time.perf_counter() - started


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--streams", type=int, default=16)
    ap.add_argument("--bin", default=os.environ.get("SD_BIN") or next((str(p) for p in (ROOT / "target" / "release" / "session-doctor", ROOT / "target" / "debug" / "session-doctor") if p.exists()), None))
    args = ap.parse_args()
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    upstream.daemon_threads = True
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    up_port = upstream.server_address[1]
    state = Path(os.environ.get("TMPDIR", "/tmp")) / ("sd-bench-proxy-%d" % os.getpid())
    env = dict(os.environ, XDG_STATE_HOME=str(state))
    proc = subprocess.Popen([args.bin, "proxy", "--port", "0", "--upstream", "http://127.0.0.1:%d" % up_port], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
        latencies(port, 20)  # warm both ends
        latencies(up_port, 20)
        direct = latencies(up_port, args.requests)
        proxied = latencies(port, args.requests)
        # A route the proxy does not mend: the HTTP hop alone, without reading the body.
        hop = latencies(port, args.requests, "/v1/other")
        med = lambda xs: statistics.median(xs) * 1000
        p95 = lambda xs: sorted(xs)[int(len(xs) * 0.95)] * 1000
        print("binary: %s" % args.bin)
        print("direct:  median %.3f ms, p95 %.3f ms (%d requests)" % (med(direct), p95(direct), len(direct)))
        print("proxied: median %.3f ms, p95 %.3f ms (%d requests)" % (med(proxied), p95(proxied), len(proxied)))
        print("proxied, a route it does not mend: median %.3f ms, p95 %.3f ms" % (med(hop), p95(hop)))
        print("added per request: %.3f ms (median), ratio proxied/direct %.2f" % (med(proxied) - med(direct), med(proxied) / med(direct)))
        faults, done, took = load(port, args.requests, args.streams)
        print("load: %d requests over %d concurrent streams in %.2f s, %d faults" % (done, args.streams, took, len(faults)))
        for f in faults[:10]:
            print("  " + f)
        return 1 if faults or done != args.requests else 0
    finally:
        proc.terminate()
        proc.wait(10)
        upstream.shutdown()


if __name__ == "__main__":
    sys.exit(main())
