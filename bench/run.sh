#!/usr/bin/env bash
# Throughput of `scan` as a ratio of `cat` on the same warm file, and peak RSS.
# Absolute times on shared machines are noisy; the ratio, taken in one run, is not.
#
#   bench/run.sh [SIZE_MB] [RUNS]      (default 1000 MB, 5 runs; needs python3)
#
# Generates a Claude-Code-style session with real PNGs and PDFs (5% corrupt) under
# $BENCH_DIR (default /tmp/session-doctor-bench), then times, for each of `cat`,
# `scan` (structural) and `scan --deep`, the median wall time of RUNS runs.
set -euo pipefail
size=${1:-1000}
runs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp/session-doctor-bench}
mkdir -p "$dir"
file="$dir/s${size}.jsonl"
[ -f "$file" ] || python3 "$here/gen_session.py" "$file" "$size" --seed 2 >/dev/null
cargo build --release --quiet --manifest-path "$here/../Cargo.toml"
bin="$here/../target/release/session-doctor"
cat "$file" >/dev/null # warm the page cache

# median wall seconds and max RSS (KB) of RUNS runs of a command
measure() {
  local walls=() rss=0 out tmp
  tmp=$(mktemp)
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$tmp" -f "%e %M" "$@" >/dev/null 2>&1 || true
    out=$(tail -n 1 "$tmp")
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
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", (b > 0 ? 100 * a / b : 0) }'; }
echo "file: $file ($(( bytes / 1000000 )) MB, longest line $(( longest / 1000000 )) MB), median of $runs runs"
printf '%-22s %8s %10s %12s\n' stage wall "% of cat" "peak RSS"
printf '%-22s %7ss %10s %9s MB\n' cat "$cat_s" 100% $(( cat_rss / 1024 ))
printf '%-22s %7ss %10s %9s MB\n' "scan (structural)" "$scan_s" "$(ratio "$cat_s" "$scan_s")" $(( scan_rss / 1024 ))
printf '%-22s %7ss %10s %9s MB\n' "scan --deep" "$deep_s" "$(ratio "$cat_s" "$deep_s")" $(( deep_rss / 1024 ))
