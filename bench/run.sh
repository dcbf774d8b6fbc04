#!/usr/bin/env bash
# Throughput of `scan` as a ratio of `cat`, `diagnose` against `scan`, and `repair`
# against `cp`, on the same warm file, with peak RSS.
# Absolute times on shared machines are noisy; the ratio, taken in one run, is not.
#
#   bench/run.sh [SIZE_MB] [RUNS]      (default 1000 MB, 5 runs; needs python3)
#
# Generates a Claude-Code-style session with real PNGs and PDFs (5% corrupt) under
# $BENCH_DIR (default /tmp/session-doctor-bench), then times, for each of `cat`,
# `scan` (structural) and `scan --deep`, the median wall time of RUNS runs.
# The binary is built into $CARGO_TARGET_DIR (default: target/ beside Cargo.toml).
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
file="$dir/s${size}.jsonl"
[ -f "$file" ] || python3 "$here/gen_session.py" "$file" "$size" --seed 2 >/dev/null
cargo build --release --locked --quiet --manifest-path "$here/../Cargo.toml" || die "cargo build failed"
target=${CARGO_TARGET_DIR:-$here/../target}
bin="$target/release/session-doctor"
[ -x "$bin" ] || die "no binary at $bin"
cat "$file" >/dev/null # warm the page cache

# median wall seconds and max RSS (KB) of RUNS runs of a command
measure() {
  local walls=() rss=0 out tmp
  tmp=$(mktemp)
  for _ in $(seq "$runs"); do
    # scan exits 1 when it finds problems (the benchmark file has some); 2 is a failure.
    local status=0
    /usr/bin/time -o "$tmp" -f "%e %M" "$@" >/dev/null 2>&1 || status=$?
    [ "$status" -le 1 ] || die "'$*' failed (exit $status)"
    out=$(tail -n 1 "$tmp")
    [[ "$out" =~ ^[0-9.]+\ [0-9]+$ ]] || die "could not time '$*': $out"
    walls+=("${out% *}")
    [ "${out#* }" -gt "$rss" ] && rss=${out#* }
  done
  rm -f "$tmp"
  printf '%s %s\n' "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")" "$rss"
}

bytes=$(stat -c %s "$file")
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$file")
read -r cat_s cat_rss < <(measure cat "$file")
read -r scan_s scan_rss < <(measure "$bin" scan --json "$file")
read -r deep_s deep_rss < <(measure "$bin" scan --deep --json "$file")
read -r diag_s diag_rss < <(measure "$bin" diagnose --json "$file")
# repair writes a new copy beside the file each run; cp of the same file is its yardstick.
out="$dir/out"
rm -rf "$out" && mkdir -p "$out"
read -r cp_s cp_rss < <(measure cp "$file" "$out/cp.jsonl")
read -r repair_s repair_rss < <(measure "$bin" repair --json --max-images 20 --out "$out" "$file")
rm -rf "$out"
read -r preview_s preview_rss < <(measure "$bin" preview --max-images 20 "$file")
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
echo "file: $file ($(( bytes / 1000000 )) MB, longest line $(( longest / 1000000 )) MB), median of $runs runs"
printf '%-22s %8s %10s %12s\n' stage wall "% of cat" "peak RSS"
printf '%-22s %7ss %10s %9s MB\n' cat "$cat_s" 100% $(( cat_rss / 1024 ))
printf '%-22s %7ss %10s %9s MB\n' "scan (structural)" "$scan_s" "$scan_ratio" $(( scan_rss / 1024 ))
printf '%-22s %7ss %10s %9s MB\n' "scan --deep" "$deep_s" "$deep_ratio" $(( deep_rss / 1024 ))
printf '%-22s %7ss %10s %9s MB\n' "diagnose" "$diag_s" "$diag_vs_scan" $(( diag_rss / 1024 ))
printf '%-22s %7ss %10s %9s MB\n' cp "$cp_s" "100% of cp" $(( cp_rss / 1024 ))
printf '%-22s %7ss %10s %9s MB\n' "repair --max-images 20" "$repair_s" "$repair_ratio of cp, $(times_scan "$repair_s")" $(( repair_rss / 1024 ))
printf '%-22s %7ss %10s %9s MB\n' "preview --max-images 20" "$preview_s" "$(times_scan "$preview_s")" $(( preview_rss / 1024 ))
