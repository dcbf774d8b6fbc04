"""What every round-trip scenario needs: the pinned agents, a sandbox, session-doctor.

* ``install(agent)`` installs the agent's pinned npm package into a cache folder
  (``$SD_AGENTS_CACHE``, default ``~/.cache/session-doctor/agents``) once and
  returns the path of its executable; later runs need no registry.
* ``Sandbox`` is one scenario's world: a temporary HOME, a working folder and
  an environment that points nowhere but the loopback fake provider.
* ``doctor(...)`` runs the session-doctor binary under test (``$SD_BIN``, else
  ``target/release/session-doctor``, else ``target/debug/session-doctor``).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The versions the suite drives. Bump them on purpose, with CONTRIBUTING.md's table.
AGENTS = {
    "claude-code": ("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "pi": ("@mariozechner/pi-coding-agent", "0.73.1", "pi"),
    # The same agent under its new scope (0.74.0 on): session version 3 with UUIDv7 ids.
    "pi-1.6": ("@earendil-works/pi-coding-agent", "1.6.0", "pi"),
    "gemini-cli": ("@google/gemini-cli", "0.61.0", "gemini"),
    "opencode": ("opencode-ai", "1.18.33", "opencode"),
    "copilot": ("@github/copilot", "1.0.102", "copilot"),
    "cline": ("cline", "3.0.65", "cline"),
    # opencode's fork: its own binary and store (`kilo.db`), opencode's format.
    # 7.8.1 (the newest) publishes no linux-x64 binary.
    "kilo": ("@kilocode/cli", "7.7.7", "kilo"),
    # Qwen Code asks for Node >= 22 too: the same `node` package beside it.
    "qwen-code": ("@qwen-code/qwen-code", "0.24.4", "qwen"),
}

# npm packages installed beside an agent that its executable needs first on PATH:
# pi 1.x asks for Node >= 22.19, which npm's `node` package brings (a Node binary);
# Qwen Code 0.24 asks for Node >= 22.
RUNTIMES = {"pi-1.6": ["node@22.23.3"], "qwen-code": ["node@22.23.3"]}

# An agent that runs another one's scenarios (the same agent at another version).
SCENARIOS_OF = {"pi-1.6": "pi"}

AGENT_TIMEOUT = 120  # seconds for one agent run
DOCTOR_TIMEOUT = 60


def cache_dir():
    return Path(os.environ.get("SD_AGENTS_CACHE") or Path.home() / ".cache" / "session-doctor" / "agents")


def newest_version(agent):
    """The version npm's `latest` tag names for the agent's package (asks the registry)."""
    package = AGENTS[agent][0]
    run = subprocess.run(["npm", "view", package, "version"], capture_output=True, text=True, timeout=120)
    version = run.stdout.strip()
    if run.returncode != 0 or not version:
        raise RuntimeError("npm view %s version failed:\n%s" % (package, run.stderr[-2000:]))
    return version


def install(agent, version=None):
    """The executable of the agent at `version` (default: the pinned one),
    installed from npm on first use into a folder of its own
    (`<agent>@<version>`), so another version never replaces the pinned install.

    An install is complete once its marker is written: a folder without one
    (an install killed halfway, which npm does not finish on a second run) is
    removed and installed again."""
    package, pinned, binary = AGENTS[agent]
    version = version or pinned
    prefix = cache_dir() / ("%s@%s" % (agent, version))
    exe = prefix / "node_modules" / ".bin" / binary
    done = prefix / ".installed"
    if done.exists() and exe.exists():
        return exe
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "package.json").write_text(json.dumps({"name": "sd-agent-cache", "private": True}))
    packages = ["%s@%s" % (package, version)] + RUNTIMES.get(agent, [])
    cmd = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(prefix), *packages]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if run.returncode != 0 or not exe.exists():
        shutil.rmtree(prefix, ignore_errors=True)
        raise RuntimeError("npm install %s@%s failed:\n%s" % (package, version, run.stderr[-2000:]))
    done.write_text("".join(p + "\n" for p in packages))
    return exe


def runtime_path(agent, exe):
    """The folder to put first on the agent's PATH (its own Node), or None."""
    return Path(exe).parent if agent in RUNTIMES else None


def doctor_bin():
    env = os.environ.get("SD_BIN")
    if env:
        return Path(env)
    for profile in ("release", "debug"):
        exe = ROOT / "target" / profile / "session-doctor"
        if exe.exists():
            return exe
    raise RuntimeError("no session-doctor binary: run `cargo build --release` or set SD_BIN")


class Result:
    def __init__(self, argv, proc):
        self.argv, self.code, self.stdout, self.stderr = argv, proc.returncode, proc.stdout, proc.stderr

    def json(self):
        return json.loads(self.stdout)

    def __repr__(self):
        return "$ %s\n[exit %s]\n--- stdout\n%s\n--- stderr\n%s" % (" ".join(map(str, self.argv)), self.code, self.stdout[-4000:], self.stderr[-4000:])


class Sandbox:
    """A temporary HOME and working folder; removed on exit unless SD_KEEP is set."""

    def __init__(self, name, path_first=None):
        self.root = Path(tempfile.mkdtemp(prefix="sd-%s-" % name))
        self.home = self.root / "home"
        self.work = self.root / "work"
        self.home.mkdir()
        self.work.mkdir()
        self.env = {
            "HOME": str(self.home),
            "PATH": ((str(path_first) + os.pathsep) if path_first else "") + os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "TMPDIR": str(self.root),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            # Never reach beyond the loopback, even by accident.
            "NO_PROXY": "127.0.0.1,localhost",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "HTTPS_PROXY": "http://127.0.0.1:9",
        }

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not os.environ.get("SD_KEEP"):
            shutil.rmtree(self.root, ignore_errors=True)
        else:
            print("  kept %s" % self.root, file=sys.stderr)

    def run(self, argv, timeout=AGENT_TIMEOUT, env=None, cwd=None):
        full = dict(self.env, **(env or {}))
        try:
            proc = subprocess.run([str(a) for a in argv], cwd=str(cwd or self.work), env=full, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as err:
            proc = subprocess.CompletedProcess(argv, 124, err.stdout or "", (err.stderr or "") + "\n(timed out after %ss)" % timeout)
            if isinstance(proc.stdout, bytes):
                proc.stdout = proc.stdout.decode(errors="replace")
            if isinstance(proc.stderr, bytes):
                proc.stderr = proc.stderr.decode(errors="replace")
        return Result(argv, proc)

    def doctor(self, *args):
        return self.run([doctor_bin(), *args], timeout=DOCTOR_TIMEOUT, env={"COLUMNS": "200"})


class Failed(AssertionError):
    pass


def check(cond, what, *evidence):
    if not cond:
        raise Failed(what + "".join("\n" + repr(e) for e in evidence))


def known_gap(why):
    """Mark a scenario that meets a gap the project knows about (see run.py)."""

    def mark(fn):
        fn.known_gap = why
        return fn

    return mark


# ------------------------------------------------------------------ media bytes

import struct as _struct
import zlib as _zlib


def png(width=4, height=4, rgb=(255, 0, 0)):
    """A valid RGB PNG."""

    def chunk(kind, body):
        return _struct.pack(">I", len(body)) + kind + body + _struct.pack(">I", _zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    ihdr = _struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", _zlib.compress(raw)) + chunk(b"IEND", b"")


def cut_png():
    """A PNG cut short inside its IDAT chunk, as an interrupted download leaves it."""
    return png(16, 16)[:60]


def jpeg():
    """A valid 8x8 grey baseline JPEG: one flat block, one-code Huffman tables."""

    def seg(marker, body):
        return b"\xff" + bytes([marker]) + _struct.pack(">H", len(body) + 2) + body

    app0 = seg(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    dqt = seg(0xDB, b"\x00" + bytes([1] * 64))
    sof = seg(0xC0, b"\x08\x00\x08\x00\x08\x01\x01\x11\x00")
    # One code of length 1 each: DC category 0, AC end-of-block.
    dht = seg(0xC4, b"\x00" + bytes([1] + [0] * 15) + b"\x00") + seg(0xC4, b"\x10" + bytes([1] + [0] * 15) + b"\x00")
    sos = seg(0xDA, b"\x01\x01\x00\x00\x3f\x00")
    return b"\xff\xd8" + app0 + dqt + sof + dht + sos + b"\x3f" + b"\xff\xd9"


def cut_jpeg():
    """A JPEG cut short inside its quantisation table, as an interrupted download leaves it."""
    return jpeg()[:40]


def pdf(text="hello"):
    """A valid one-page PDF with a correct xref table."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>",
    ]
    stream = ("BT /F1 12 Tf 20 100 Td (%s) Tj ET" % text).encode()
    objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def cut_pdf():
    """A PDF cut off before its xref and trailer."""
    return pdf()[:200]


# ------------------------------------------------------------- the rescue flow


def diagnose(sb, session, *extra):
    r = sb.doctor("diagnose", session, "--json", *extra)
    check(r.code in (0, 1), "diagnose answers", r)
    return r, r.json()


def rescue_steps(sb, session, expect_class, out_dir, *repair_args):
    """diagnose -> exclude --suspects -> repair [repair_args]; returns (diagnosis, repair JSON).

    Checks what holds for every agent: the session is stuck with the expected
    class, there is a prime suspect, the next commands name exclude and repair,
    the original file is byte-identical afterwards, and the copy is not stuck.
    """
    before = Path(session).read_bytes()
    r, d = diagnose(sb, session)
    check(d["stuck"] is True and r.code == 1, "diagnose calls the session stuck", r)
    check(d["failure"] and d["failure"]["class"] == expect_class, "failure class is %s" % expect_class, r)
    if expect_class == "media_rejected":
        prime = [s for s in d["suspects"] if s.get("prime")]
        check(prime, "diagnose names a prime suspect", r)
        check(any("exclude" in n for n in d["next"]), "next commands name exclude", r)
        x = sb.doctor("exclude", session, "--suspects")
        check(x.code == 0, "exclude --suspects lands", x)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    rep = sb.doctor("repair", session, "--out", out_dir, "--json", *repair_args)
    check(rep.code == 0, "repair writes a copy", rep)
    copy = rep.json()
    check(Path(session).read_bytes() == before, "the original session is byte-identical")
    r2, d2 = diagnose(sb, copy["out"])
    check(d2["stuck"] is False, "diagnose on the repaired copy says not stuck", r2)
    return d, copy


def rescued(sb, own_resume, original, kept, copy, differences, *copy_args):
    """The four things every rescue scenario proves, checked in one place.

    * ``own_resume``: the provider's log entries of the requests the agent sent
      in its own resume of the stuck session (taken from the log by index, so
      never an earlier run's): at least one, and the last refused (400 or more);
    * ``differences``: ``request_diff`` lines between the preview of the copy
      and the request the agent sent when it resumed the copy: none;
    * ``original``/``kept``: the original session (a path, or a function that
      reads it, e.g. an export of a database) is byte-identical to ``kept``;
    * ``copy`` (with ``copy_args`` for diagnose): diagnose says not stuck.
    """
    check(own_resume, "the agent's own resume sent a request")
    check(own_resume[-1]["status"] >= 400, "the agent's own resume failed (its last request got %s)" % own_resume[-1]["status"], own_resume[-1].get("answer"))
    check(not differences, "preview of the copy equals what the agent sent for it (%d difference(s))" % len(differences), "\n".join(differences))
    now = original() if callable(original) else Path(original).read_bytes()
    check(now == kept, "the original session is byte-identical")
    r, d = diagnose(sb, copy, *copy_args)
    check(d["stuck"] is False, "diagnose on the repaired copy says not stuck", r)


# ------------------------------------------------- preview against the request


def spawn(sb, argv, env=None):
    """Start an agent in the sandbox without waiting (for a run the scenario kills)."""
    full = dict(sb.env, **(env or {}))
    return subprocess.Popen([str(a) for a in argv], cwd=str(sb.work), env=full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def preview(sb, session, *extra):
    """(request body, summary JSON) that `preview --json` prints for `session`."""
    r = sb.doctor("preview", session, "--json", *extra)
    check(r.code == 0, "preview writes the request", r)
    lines = [l for l in r.stderr.splitlines() if l.startswith("{")]
    return json.loads(r.stdout), (json.loads(lines[-1]) if lines else {})


def message_differences(preview_messages, sent_messages, normalise=None):
    """Differences between what ``preview`` printed and what the agent sent,
    message by message, after ``normalise`` (the agent's own spellings that
    mean the same to the provider, e.g. a string for one text block).

    Returns a list of human-readable differences; empty means equal.
    """
    normalise = normalise or (lambda m: m)
    want = [normalise(m) for m in sent_messages]
    got = [normalise(m) for m in preview_messages]
    out = []
    if len(want) != len(got):
        out.append("preview has %d messages, the agent sent %d" % (len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            out.append("message %d differs:\n  preview: %s\n  sent:    %s" % (i, _short(g), _short(w)))
    for i in range(len(got), len(want)):
        out.append("message %d missing from preview: %s" % (i, _short(want[i])))
    for i in range(len(want), len(got)):
        out.append("message %d only in preview: %s" % (i, _short(got[i])))
    return out


def _short(v, limit=600):
    text = json.dumps(v, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…(%d chars)" % len(text)


def preview_messages(sb, session, *extra):
    """The `messages`/`input`/`contents` list `session-doctor preview` prints."""
    r = sb.doctor("preview", session, *extra)
    check(r.code == 0, "preview answers", r)
    body = json.loads(r.stdout)
    for key in ("messages", "input", "contents"):
        if key in body:
            return body, body[key]
    raise Failed("preview printed no message list\n%r" % r)


# ------------------------------------------------ agents that resume only in a terminal


def run_in_terminal(sb, argv, steps, timeout=AGENT_TIMEOUT, env=None, rows=40, cols=120):
    """Runs an interactive agent in a pseudo-terminal (for resumes that have
    no headless form). ``steps`` are ``(ready, keys)`` pairs: once
    ``ready(screen)`` is true for the text shown so far (escape codes
    removed), ``keys`` (bytes) are typed. After the last step the run is
    given until ``timeout`` to exit by itself; then its process group is ended.
    Returns a Result whose stdout is the screen text."""
    import fcntl
    import pty
    import re
    import select
    import signal
    import struct
    import termios
    import time

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    full = dict(sb.env, TERM="xterm-256color", **(env or {}))
    proc = subprocess.Popen([str(a) for a in argv], stdin=slave, stdout=slave, stderr=slave, cwd=str(sb.work), env=full, start_new_session=True)
    os.close(slave)
    raw, step, deadline = b"", 0, time.time() + timeout
    screen = lambda: re.sub(r"\x1b\[[0-9;?>=<]*[a-zA-Z~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\x1b[=>]", "", raw.decode(errors="replace"))
    timed_out = False
    while proc.poll() is None:
        if time.time() > deadline:
            timed_out = True
            break
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                raw += os.read(master, 65536)
            except OSError:
                break
        if step < len(steps) and steps[step][0](screen()):
            time.sleep(0.3)
            os.write(master, steps[step][1])
            step += 1
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                break
            chunk = os.read(master, 65536)
            if not chunk:
                break
            raw += chunk
    except OSError:
        pass
    os.close(master)
    code = 124 if timed_out else proc.returncode
    note = "\n(steps done: %d of %d%s)" % (step, len(steps), ", timed out after %ss" % timeout if timed_out else "")
    return Result(argv, subprocess.CompletedProcess(argv, code, screen(), note))


def processes_under(root, marker):
    """Pids of processes whose command line holds ``marker`` and a path under
    ``root`` (what an agent left running in the background of one sandbox)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = [a.decode(errors="replace") for a in args]
        if any(marker in a for a in text) and any(str(root) in a for a in text):
            found.append(int(entry.name))
    return found
