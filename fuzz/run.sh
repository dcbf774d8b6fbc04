#!/bin/sh
# Build and run one fuzz target with libFuzzer, without cargo-fuzz:
#   fuzz/run.sh build                 # build every target (nightly, sancov)
#   fuzz/run.sh reader -max_total_time=600
# (With cargo-fuzz installed, `cargo +nightly fuzz run reader` works as well.)
# New inputs libFuzzer finds go to fuzz/corpus/<target>/; crashes to fuzz/artifacts/<target>/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target}"
# The flags cargo-fuzz passes (no sanitizer: session-doctor forbids unsafe code).
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
if [ "${1:-build}" = build ]; then
    exec cargo +nightly build --manifest-path "$here/Cargo.toml" --release --target "$triple" --bins -j"${FUZZ_JOBS:-1}"
fi
t=$1; shift
mkdir -p "$here/corpus/$t" "$here/artifacts/$t"
exec "$CARGO_TARGET_DIR/$triple/release/$t" -artifact_prefix="$here/artifacts/$t/" \
    -timeout=10 -rss_limit_mb=2048 -max_len=1048576 "$@" "$here/corpus/$t"
