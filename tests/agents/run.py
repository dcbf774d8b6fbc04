#!/usr/bin/env python3
"""Run the round-trip suite: the real agents, a loopback fake provider, session-doctor.

    python3 tests/agents/run.py                 # every agent, every scenario
    python3 tests/agents/run.py codex           # one agent
    python3 tests/agents/run.py pi -k stuck     # scenarios whose name holds "stuck"
    python3 tests/agents/run.py --latest codex  # the newest release on npm instead of the pin

Each scenario is a function ``scenario_<name>(ctx)`` in ``scenarios/<agent>.py``
(the agent's name with ``-`` as ``_``). A scenario that meets a gap the project
knows about is marked ``@known_gap("why")``: its failure is reported but not
counted, and its passing is reported as a failure until the mark is removed, so
the mark cannot outlive the gap. A scenario that fails is run once more; one
that passes then is counted, reported as flaky with its first failure and that
run's log, and named again at the end. ``--latest`` runs each agent's newest
release on npm instead of its pin (installed in a folder of its own beside the
pinned one). The versions that ran are listed before the last line,
``N passed, N failed``.
Logs of every provider request go to ``$SD_AGENTS_LOGS`` (default: a temporary
folder, printed on failure).
"""

import argparse
import importlib
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lib  # noqa: E402
from fake.provider import Provider  # noqa: E402


# How many scenarios each agent has, over all of its modules: a module that yields
# fewer (a rename, an import that hides one) or more fails the run. Change it with
# the scenarios (guard, layout and proxy modules included).
SCENARIOS = {
    "claude-code": 25,
    "codex": 19,
    "pi": 26,
    "pi-1.6": 26,
    "gemini-cli": 15,
    "opencode": 13,
    "copilot": 11,
    "cline": 12,
    "kilo": 2,
    "qwen-code": 4,
}


class Context:
    """What a scenario gets: the agent's executable, a sandbox, the provider."""

    def __init__(self, agent, exe, sandbox, provider):
        self.agent, self.exe, self.sb, self.provider = agent, exe, sandbox, provider


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="*", help="agents to run (default: all)")
    parser.add_argument("-k", dest="pattern", default="", help="only scenarios whose name holds this")
    parser.add_argument("--latest", action="store_true", help="run each agent's newest release on npm (its `latest` tag), installed beside the pinned one, instead of the pin")
    args = parser.parse_args()
    agents = args.agents or list(lib.AGENTS)
    logs = Path(os.environ.get("SD_AGENTS_LOGS") or tempfile.mkdtemp(prefix="sd-agents-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    passed = failed = gaps = 0
    flakes = []
    ran = []
    for agent in agents:
        stem = lib.SCENARIOS_OF.get(agent, agent).replace("-", "_")
        # scenarios/<agent>.py, and scenarios/<agent>_<topic>.py for scenarios of one topic.
        names = sorted(p.stem for p in (Path(__file__).parent / "scenarios").glob(stem + "*.py"))
        modules = [importlib.import_module("scenarios." + n) for n in names if n == stem or n.startswith(stem + "_")]
        started = time.time()
        pinned = lib.AGENTS[agent][1]
        try:
            version = lib.newest_version(agent) if args.latest else pinned
            exe = lib.install(agent, version)
        except Exception as err:  # an agent that cannot install fails all of its scenarios
            print("FAIL %s: install%s: %s" % (agent, " of the newest release" if args.latest else "", err))
            failed += 1
            continue
        which = "" if not args.latest else (", the newest release, the pinned one" if version == pinned else ", the newest release; pinned: %s" % pinned)
        print("%s %s (installed in %.0fs%s)" % (agent, version, time.time() - started, which), flush=True)
        ran.append("%s %s" % (agent, version))
        found = sorted(((n, getattr(m, n)) for m in modules for n in dir(m) if n.startswith("scenario_")), key=lambda f: f[0])
        if len(found) != SCENARIOS.get(agent):
            failed += 1
            print("FAIL %s: %d scenarios found, run.py's table says %s" % (agent, len(found), SCENARIOS.get(agent)), flush=True)
        for name, fn in found:
            if args.pattern not in name:
                continue
            gap = getattr(fn, "known_gap", None)
            started = time.time()
            log = logs / ("%s-%s.jsonl" % (agent, name))
            error = _run(fn, agent, exe, log)
            flaky = None
            if error is not None and not gap:
                # Real agents race their own writers now and then: a scenario that fails is
                # run once more, and one that then passes is reported as flaky, with the
                # first failure's log kept, so it is never hidden.
                flaky = log.with_suffix(".first-failure.jsonl")
                if log.exists():
                    log.replace(flaky)
                first, error = error, _run(fn, agent, exe, log)
            took = "%.1fs" % (time.time() - started)
            label = "%s/%s" % (agent, name[len("scenario_"):])
            if error is None and gap:
                failed += 1
                print("FAIL %s (%s): passes, but is marked as a known gap (%s): remove the mark" % (label, took, gap))
            elif error is None and flaky:
                passed += 1
                flakes.append(label)
                print("ok   %s (%s), on a second run: the first failed\n%s\n  requests: %s" % (label, took, _indent(str(first)), flaky))
            elif error is None:
                passed += 1
                print("ok   %s (%s)" % (label, took))
            elif gap:
                gaps += 1
                print("gap  %s (%s): %s" % (label, took, gap))
            else:
                failed += 1
                print("FAIL %s (%s)\n%s\n  requests: %s" % (label, took, _indent(str(error)), log))
            sys.stdout.flush()
    if gaps:
        print("%d known gap(s) not counted" % gaps)
    if flakes:
        print("%d flaky (failed, then passed on a second run): %s" % (len(flakes), ", ".join(flakes)))
    print("versions: %s" % (", ".join(ran) or "none installed"))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def _run(fn, agent, exe, log):
    """Runs one scenario against a fresh provider and sandbox: None, or what failed."""
    log.unlink(missing_ok=True)
    with Provider(str(log)) as provider, lib.Sandbox(agent, lib.runtime_path(agent, exe)) as sb:
        try:
            fn(Context(agent, exe, sb, provider))
        except Exception as err:
            return err if isinstance(err, lib.Failed) else traceback.format_exc()
    return None


def _indent(text):
    return "\n".join("  " + line for line in text.splitlines()[-60:])


if __name__ == "__main__":
    sys.exit(main())
