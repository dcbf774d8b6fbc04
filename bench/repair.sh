#!/usr/bin/env bash
# `repair` against `scan` on the two kinds of session it meets, in one run:
#
#   capped  the default bench session (bench/run.sh's s<SIZE>.jsonl, 5% corrupt
#           media, results that answer no call), repaired with --max-images 20:
#           most payloads become notes and the copy is small;
#   mended  a history an interrupted run leaves (gen_session.py --mended,
#           s<SIZE>-mended.jsonl): about a quarter of the records rewritten,
#           holding a third of the bytes (calls answered, orphan results with
#           their images removed), repaired with no cap: the copy keeps most
#           of the file.
#
#   bench/repair.sh [SIZE_MB] [RUNS]      (default 300 MB, 11 runs; needs python3)
#
# Each round runs scan, then repair, on one session, then on the other, so a
# shift in the machine's load weighs on both alike; the ratio is of medians.
# Prints wall and CPU time (user + system) of each, repair's as a ratio to
# scan's, and peak RSS; and, as a yardstick, a plain `cp` of the copy repair
# wrote followed by an fsync of it: what writing those bytes durably costs
# alone, which a repair (it fsyncs its copy) cannot go below. The copy depends
# on the whole session (a result answers a call anywhere before it), so it is
# written after the read: "scan, then cp + fsync" adds the two, about what a
# repair costs that does nothing else. The last lines say whether repair meets
# the target (DESIGN, issue "One house again": repair <= 1.3 x scan on both)
# and what the read and the durable write alone come to. The binary is built into $CARGO_TARGET_DIR
# (default: target/ beside Cargo.toml), or is $SD_BIN when set, not built.
# $BENCH_DIR (default /tmp/session-doctor-bench) holds the sessions; with
# BENCH_KEEP=1 the last copy of each is kept there (repaired-capped.jsonl,
# repaired-mended.jsonl) to compare two builds' output.
set -euo pipefail
die() { echo "bench/repair.sh: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 is needed to generate the sessions"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (Debian: apt-get install time)"
size=${1:-300}
runs=${2:-11}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp/session-doctor-bench}
mkdir -p "$dir"
capped="$dir/s${size}.jsonl"
mended="$dir/s${size}-mended.jsonl"
[ -f "$capped" ] || python3 "$here/gen_session.py" "$capped" "$size" --seed 2 >/dev/null
[ -f "$mended" ] || python3 "$here/gen_session.py" "$mended" "$size" --seed 2 --mended --corrupt 0 >/dev/null
if [ -n "${SD_BIN:-}" ]; then
  bin=$SD_BIN
else
  cargo build --release --locked --quiet --manifest-path "$here/../Cargo.toml" || die "cargo build failed"
  bin="${CARGO_TARGET_DIR:-$here/../target}/release/session-doctor"
fi
[ -x "$bin" ] || die "no binary at $bin"
cat "$capped" "$mended" >/dev/null # warm the page cache

out="$dir/repair-out"
rm -rf "$out" && mkdir -p "$out"
cases=(capped mended)
declare -A files flags walls cpus rss summary written
files[capped]=$capped
files[mended]=$mended
flags[capped]="--max-images 20"
flags[mended]=""
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# One timed run: wall (ns clock), CPU and peak RSS appended under key $1.
timed() {
  local key=$1 status=0 t0 t1 line
  shift
  t0=$(date +%s%N)
  # scan and repair exit 1 when they find problems (these files have some); 2 is a failure.
  /usr/bin/time -o "$tmp" -f "%M %U %S" "$@" >"$out/stdout" 2>/dev/null || status=$?
  t1=$(date +%s%N)
  [ "$status" -le 1 ] || die "'$*' failed (exit $status)"
  line=$(tail -n 1 "$tmp")
  [[ "$line" =~ ^([0-9]+)\ ([0-9.]+)\ ([0-9.]+)$ ]] || die "could not time '$*': $line"
  walls[$key]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }') "
  cpus[$key]+="$(awk -v u="${BASH_REMATCH[2]}" -v s="${BASH_REMATCH[3]}" 'BEGIN { printf "%.2f", u + s }') "
  [ "${BASH_REMATCH[1]}" -gt "${rss[$key]:-0}" ] && rss[$key]=${BASH_REMATCH[1]}
  return 0
}
for _ in $(seq "$runs"); do
  for c in "${cases[@]}"; do
    timed "scan-$c" "$bin" scan --json "${files[$c]}"
    mkdir -p "$out/$c"
    # shellcheck disable=SC2086
    timed "repair-$c" "$bin" repair --json ${flags[$c]} --out "$out/$c" "${files[$c]}"
    summary[$c]=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); c = r["changes"]
print("%d lines written, %d records rewritten, %d added; %d calls answered, %d results removed, %d images capped" % (
    r["lines"], r["touched"], r["inserted"], len(c["calls_answered"]), len(c["results_removed"]), len(c["capped"])))
' "$out/stdout")
    copy=$(find "$out/$c" -name '*.jsonl' | head -n 1)
    [ -n "$copy" ] || die "repair of ${files[$c]} wrote no copy"
    written[$c]=$(stat -c %s "$copy")
    timed "write-$c" sh -c 'cp -- "$1" "$2" && sync -- "$2"' sh "$copy" "$out/written.jsonl"
    rm -f "$out/written.jsonl"
    if [ -n "${BENCH_KEEP:-}" ]; then mv "$copy" "$dir/repaired-$c.jsonl"; fi
    rm -rf "${out:?}/$c"
  done
  sync
done
rm -rf "$out"
median() { printf '%s\n' $1 | sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
over() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) exit 1; printf "%.2fx", a / b }' || die "a time of 0 s: use a larger SIZE_MB"; }
echo "median of $runs runs, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
verdicts=()
printf '%-8s %-34s %9s %7s %9s %9s %9s\n' session stage wall cpu "wall/scan" "cpu/scan" "peak RSS"
for c in "${cases[@]}"; do
  f=${files[$c]}
  echo "$c: $(basename "$f") ($(( $(stat -c %s "$f") / 1000000 )) MB, $(wc -l <"$f") lines); copy $(( written[$c] / 1000000 )) MB: ${summary[$c]}"
  sw=$(median "${walls[scan-$c]}") sc=$(median "${cpus[scan-$c]}")
  rw=$(median "${walls[repair-$c]}") rc=$(median "${cpus[repair-$c]}")
  printf '%-8s %-34s %8ss %6ss %9s %9s %6s MB\n' "" "scan --json" "$sw" "$sc" "1.00x" "1.00x" $(( rss[scan-$c] / 1024 ))
  printf '%-8s %-34s %8ss %6ss %9s %9s %6s MB\n' "" "repair --json ${flags[$c]}" "$rw" "$rc" "$(over "$rw" "$sw")" "$(over "$rc" "$sc")" $(( rss[repair-$c] / 1024 ))
  ww=$(median "${walls[write-$c]}") wc=$(median "${cpus[write-$c]}")
  printf '%-8s %-34s %8ss %6ss %9s %9s\n' "" "(cp + fsync of the copy alone)" "$ww" "$wc" "$(over "$ww" "$sw")" "$(over "$wc" "$sc")"
  fw=$(awk -v a="$sw" -v b="$ww" 'BEGIN { printf "%.4f", a + b }') fc=$(awk -v a="$sc" -v b="$wc" 'BEGIN { printf "%.2f", a + b }')
  printf '%-8s %-34s %8ss %6ss %9s %9s\n' "" "(scan, then cp + fsync)" "$fw" "$fc" "$(over "$fw" "$sw")" "$(over "$fc" "$sc")"
  verdicts+=("$c: repair $(over "$rw" "$sw") scan's wall, $(awk -v r="$rw" -v s="$sw" 'BEGIN { print (r <= 1.3 * s) ? "meets" : "misses" }') the target (<= 1.30x); scan, then cp + fsync of its copy: $(over "$fw" "$sw")")
done
printf '%s\n' "${verdicts[@]}"
