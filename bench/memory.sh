#!/usr/bin/env bash
# Peak RSS of every reading command on two files that stress memory, against
# the bounds the project promises (issue 20): 64 MB + 1.5 x the longest line,
# and 64 MB + 150 bytes a line on many short lines (what a line of the history
# costs: docs/performance.md, "Memory per line").
#
#   bench/memory.sh [LINES] [LONG_MB]     (default 1000000 lines, a 150 MB line)
#
# 1. many short lines: LINES Claude Code records of ~450 bytes (the cost per line);
# 2. one long line: a Claude Code user turn holding one PNG whose base64 is LONG_MB.
# Prints one row per command and file with its peak RSS and the bound; exits 1
# when a command is over its bound.
set -euo pipefail
die() { echo "bench/memory.sh: $*" >&2; exit 2; }
command -v python3 >/dev/null || die "python3 is needed to generate the sessions"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (Debian: apt-get install time)"
lines=${1:-1000000}
long_mb=${2:-150}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp/session-doctor-bench}
mkdir -p "$dir"
cargo build --release --locked --quiet --manifest-path "$here/../Cargo.toml" || die "cargo build failed"
bin="${CARGO_TARGET_DIR:-$here/../target}/release/session-doctor"

many="$dir/lines$lines.jsonl"
long="$dir/line${long_mb}mb.jsonl"
[ -f "$many" ] || python3 - "$many" "$lines" <<'EOF'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
sid = "0b4d6c8e-1111-4222-8333-944455556666"
with open(path, "w") as f:
    parent = None
    for i in range(n):
        u = "00000000-0000-4000-8000-%012d" % (i + 1)
        r = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/u/p",
             "sessionId": sid, "version": "2.1.332", "uuid": u, "timestamp": "2026-11-30T10:00:00.000Z"}
        if i % 2 == 0:
            r.update(type="user", message={"role": "user", "content": "please go on with step %d" % i})
        else:
            r.update(type="assistant", message={"id": "msg_%d" % i, "type": "message", "role": "assistant",
                     "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "Done, step %d." % i}],
                     "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}})
        f.write(json.dumps(r) + "\n")
        parent = u
EOF
[ -f "$long" ] || python3 - "$long" "$long_mb" <<'EOF'
import base64, json, struct, sys, zlib, os
path, mb = sys.argv[1], int(sys.argv[2])
side = int((mb * 1e6 * 3 / 4 / 3) ** 0.5)  # RGB, stored deflate: encoded ~= raw
raw = b"".join(b"\0" + os.urandom(side * 3) for _ in range(side))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b"")
sid = "0b4d6c8e-1111-4222-8333-944455556666"
img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png).decode()}}
u1, u2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
with open(path, "w") as f:
    f.write(json.dumps({"parentUuid": None, "isSidechain": False, "type": "user", "uuid": u1, "sessionId": sid,
                        "timestamp": "2026-11-30T10:00:00.000Z", "cwd": "/p", "version": "2.1.332",
                        "message": {"role": "user", "content": [{"type": "text", "text": "look"}, img]}}) + "\n")
    f.write(json.dumps({"parentUuid": u1, "isSidechain": False, "type": "assistant", "uuid": u2, "sessionId": sid,
                        "timestamp": "2026-11-30T10:00:01.000Z", "cwd": "/p", "version": "2.1.332",
                        "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                    "content": [{"type": "text", "text": "ok"}],
                                    "usage": {"input_tokens": 1, "output_tokens": 1}}}) + "\n")
EOF

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# peak RSS in MB of one run; exit 0 and 1 are verdicts, anything else a failure
rss() {
  local status=0
  /usr/bin/time -o "$work/t" -f "%M" "$@" >/dev/null 2>"$work/err" || status=$?
  [ "$status" -le 1 ] || die "'$*' failed (exit $status): $(tail -n 3 "$work/err")"
  echo $(( $(tail -n 1 "$work/t") / 1024 ))
}
over=0
for file in "$many" "$long"; do
  n=$(wc -l <"$file")
  longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$file")
  bound=$(( 64 + longest * 3 / 2 / 1000000 ))
  [ "$file" = "$many" ] && bound=$(( 64 + n * 150 / 1048576 ))
  copy="$work/$(basename "$file")"
  cp "$file" "$copy"
  echo "$(basename "$file"): $(( $(stat -c %s "$file") / 1000000 )) MB, $n lines, longest $(( longest / 1000 )) kB"
  printf '  %-28s %9s %9s\n' command "peak RSS" bound
  cmds=("scan --json" "scan --deep --json" "diagnose --json" "check")
  # only the long line's file has an attachment to exclude
  [ "$file" = "$long" ] && cmds+=("exclude --ref L1.1")
  cmds+=("preview --out $work/p.json" "repair --force --keep-suspects --out $work/r")
  for cmd in "${cmds[@]}"; do
    rm -rf "$work/r" "$work/p.json" "$copy.doctor"
    mkdir -p "$work/r"
    # shellcheck disable=SC2086
    mb=$(rss "$bin" $cmd "$copy")
    mark=""
    [ "$mb" -le "$bound" ] || { mark="  OVER"; over=1; }
    if [ "$file" = "$long" ]; then
      printf '  %-28s %6s MB %6s MB%s\n' "${cmd%% --out*}" "$mb" "$bound" "$mark"
    else
      printf '  %-28s %6s MB %6s MB  (%s bytes per line)%s\n' "${cmd%% --out*}" "$mb" "$bound" $(( mb * 1048576 / n )) "$mark"
    fi
  done
done
exit "$over"
