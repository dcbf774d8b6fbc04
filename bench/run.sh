#!/usr/bin/env bash
# Throughput of `scan` as a ratio of `cat`; `diagnose`, `repair` and `preview`
# against `scan` (and `repair` against `cp`), on the same warm file, with the CPU
# time (user + system) and peak RSS of each. Absolute times on shared machines are
# noisy; the ratio, taken in one run, less so. On a machine whose cores other work
# keeps busy, wall time follows CPU time: the cpu column says which it was.
#
#   bench/run.sh [SIZE_MB] [RUNS]      (default 1000 MB, 5 runs; needs python3)
#
# Generates a Claude-Code-style session with real PNGs and PDFs (5% corrupt) under
# $BENCH_DIR (default /tmp/session-doctor-bench): by default one whose tool results
# answer no call (`repair` mends hundreds of them), with BENCH_STUCK=1 one stuck
# on a last image the provider rejects (`diagnose` decodes the suspects in full
# before `repair` writes), with BENCH_MENDED=1 the history an interrupted run
# leaves (gen_session.py --mended: a quarter of the records rewritten, holding
# a third of the bytes), which `repair` then mends with no cap, so its copy
# keeps most of the file (bench/repair.sh times both kinds against `scan` in
# one run). Then times, for each of `cat`,
# `scan` (structural) and `scan --deep`, the median wall time of RUNS runs.
# The binary is built into $CARGO_TARGET_DIR (default: target/ beside Cargo.toml),
# or is $SD_BIN when set (to compare two builds under the same load), not built.
# Any failure (a run that exits 2, a missing tool, a time of zero) stops the
# script with a message and a non-zero status: it never prints a made-up ratio.
set -euo pipefail
die() { echo "bench/run.sh: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 is needed to generate the session"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (Debian: apt-get install time)"
size=${1:-1000}
runs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp/session-doctor-bench}
mkdir -p "$dir"
# What `repair` and `preview` are given: the cap, except on the mended history.
cap=(--max-images 20)
[ -n "${BENCH_STUCK:-}" ] && [ -n "${BENCH_MENDED:-}" ] && die "BENCH_STUCK and BENCH_MENDED are two different sessions"
if [ -n "${BENCH_STUCK:-}" ]; then
  file="$dir/s${size}-stuck.jsonl"
  [ -f "$file" ] || python3 "$here/gen_session.py" "$file" "$size" --seed 2 --stuck >/dev/null
elif [ -n "${BENCH_MENDED:-}" ]; then
  file="$dir/s${size}-mended.jsonl"
  [ -f "$file" ] || python3 "$here/gen_session.py" "$file" "$size" --seed 2 --mended --corrupt 0 >/dev/null
  cap=()
else
  file="$dir/s${size}.jsonl"
  [ -f "$file" ] || python3 "$here/gen_session.py" "$file" "$size" --seed 2 >/dev/null
fi
if [ -n "${SD_BIN:-}" ]; then
  bin=$SD_BIN
else
  cargo build --release --locked --quiet --manifest-path "$here/../Cargo.toml" || die "cargo build failed"
  bin="${CARGO_TARGET_DIR:-$here/../target}/release/session-doctor"
fi
[ -x "$bin" ] || die "no binary at $bin"
cat "$file" >/dev/null # warm the page cache

bytes=$(stat -c %s "$file")
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$file")

# Every stage is run once per round, RUNS rounds, so that a shift in the
# machine's load (a neighbour on a shared host) weighs on every stage alike
# instead of on whichever ran in that moment; wall time is read in
# nanoseconds (`/usr/bin/time` gives CPU and peak RSS, at 10 ms steps).
out="$dir/out"
rm -rf "$out" && mkdir -p "$out"
# cp last, and the disk flushed after each round (not timed): the 300 MB cp
# leaves would otherwise still be written back while the next stages run.
stages=(cat scan deep diag repair preview cp)
# The command of stage $1, in the array `cmd`.
stage() {
  case $1 in
    cat) cmd=(cat "$file") ;;
    scan) cmd=("$bin" scan --json "$file") ;;
    deep) cmd=("$bin" scan --deep --json "$file") ;;
    diag) cmd=("$bin" diagnose --json "$file") ;;
    # repair writes a new copy into $out each run; cp of the same file is its yardstick.
    cp) cmd=(cp "$file" "$out/cp.jsonl") ;;
    repair) cmd=("$bin" repair --json "${cap[@]}" --out "$out" "$file") ;;
    preview) cmd=("$bin" preview "${cap[@]}" "$file") ;;
  esac
}
declare -A walls cpus rss
tmp=$(mktemp)
for _ in $(seq "$runs"); do
  for k in "${stages[@]}"; do
    stage "$k"
    status=0
    t0=$(date +%s%N)
    # scan exits 1 when it finds problems (the benchmark file has some); 2 is a failure.
    /usr/bin/time -o "$tmp" -f "%M %U %S" "${cmd[@]}" >/dev/null 2>&1 || status=$?
    t1=$(date +%s%N)
    [ "$status" -le 1 ] || die "'${cmd[*]}' failed (exit $status)"
    line=$(tail -n 1 "$tmp")
    [[ "$line" =~ ^([0-9]+)\ ([0-9.]+)\ ([0-9.]+)$ ]] || die "could not time '${cmd[*]}': $line"
    walls[$k]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') "
    cpus[$k]+="$(awk -v u="${BASH_REMATCH[2]}" -v s="${BASH_REMATCH[3]}" 'BEGIN { printf "%.2f", u + s }') "
    [ "${BASH_REMATCH[1]}" -gt "${rss[$k]:-0}" ] && rss[$k]=${BASH_REMATCH[1]}
  done
  rm -f "$out/cp.jsonl" && sync
done
rm -f "$tmp" && rm -rf "$out"
median() { printf '%s\n' $1 | sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
for k in "${stages[@]}"; do
  printf -v "${k}_s" '%s' "$(median "${walls[$k]}")"
  printf -v "${k}_cpu" '%s' "$(median "${cpus[$k]}")"
  printf -v "${k}_rss" '%s' "${rss[$k]}"
done
# A wall time of 0.00 s (a file too small to time) would give a meaningless ratio.
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a <= 0 || b <= 0) exit 1; printf "%.1f%%", 100 * a / b }' ||
    die "a wall time of 0 s ($1 s vs $2 s): use a larger SIZE_MB"
}
scan_ratio=$(ratio "$cat_s" "$scan_s")
deep_ratio=$(ratio "$cat_s" "$deep_s")
times_scan() { awk -v a="$1" -v b="$scan_s" 'BEGIN { if (b <= 0) exit 1; printf "%.2fx scan", a / b }' || die "scan took 0 s"; }
diag_vs_scan=$(times_scan "$diag_s")
repair_ratio=$(ratio "$cp_s" "$repair_s")
cpu_vs_scan() { awk -v a="$1" -v b="$scan_cpu" 'BEGIN { if (b <= 0) exit 1; printf "%.2fx", a / b }' || die "scan took 0 s of CPU"; }
echo "file: $file ($(( bytes / 1000000 )) MB, longest line $(( longest / 1000000 )) MB), median of $runs runs, $(nproc) cores"
row() { printf '%-24s %7ss  %-30s %6ss %7s %6s MB\n' "$@"; }
printf '%-24s %8s  %-30s %7s %7s %9s\n' stage wall ratio cpu "vs scan" "peak RSS"
row cat "$cat_s" "100%" "$cat_cpu" "" $(( cat_rss / 1024 ))
row "scan (structural)" "$scan_s" "$scan_ratio of cat" "$scan_cpu" "1.00x" $(( scan_rss / 1024 ))
row "scan --deep" "$deep_s" "$deep_ratio of cat" "$deep_cpu" "$(cpu_vs_scan "$deep_cpu")" $(( deep_rss / 1024 ))
row diagnose "$diag_s" "$diag_vs_scan" "$diag_cpu" "$(cpu_vs_scan "$diag_cpu")" $(( diag_rss / 1024 ))
row cp "$cp_s" "100% of cp" "$cp_cpu" "" $(( cp_rss / 1024 ))
row "repair ${cap[*]}" "$repair_s" "$(times_scan "$repair_s") ($repair_ratio of cp)" "$repair_cpu" "$(cpu_vs_scan "$repair_cpu")" $(( repair_rss / 1024 ))
row "preview ${cap[*]}" "$preview_s" "$(times_scan "$preview_s")" "$preview_cpu" "$(cpu_vs_scan "$preview_cpu")" $(( preview_rss / 1024 ))
