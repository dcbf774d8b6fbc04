# Shared by tests/ci/*.sh: the binary under test and a scratch folder.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SD_BIN=${SD_BIN:-$root/target/debug/session-doctor}
[ -x "$SD_BIN" ] || { echo "no binary at $SD_BIN: cargo build first (or set SD_BIN)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAILED: $*"; }
expect() { # expect WANT GOT WHAT
  if [ "$1" = "$2" ]; then ok "$3"; else bad "$3 (wanted $1, got $2)"; fi
}
# A session with an invalid attachment (the Claude Code sample's cut PNG) and a
# healthy one: the copy `repair` makes of it once its suspects are excluded.
sessions() { # sessions DIR
  mkdir -p "$1"
  cp "$root/samples/claude-code.jsonl" "$1/broken.jsonl"
  local work
  work=$(mktemp -d "$scratch/work.XXXX")
  cp "$root/samples/claude-code.jsonl" "$work/s.jsonl"
  mkdir "$work/out"
  "$SD_BIN" exclude --suspects "$work/s.jsonl" >/dev/null 2>&1
  "$SD_BIN" repair --out "$work/out" "$work/s.jsonl" >/dev/null 2>&1
  cp "$work"/out/*.jsonl "$1/healthy.jsonl"
  "$SD_BIN" check "$1/healthy.jsonl" >/dev/null 2>&1 || { echo "the repaired copy does not pass check" >&2; exit 1; }
}
summary() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
