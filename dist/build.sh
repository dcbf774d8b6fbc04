#!/usr/bin/env bash
# The release workflow's build of one target, runnable locally: `cargo build
# --profile dist` (stripped, fat LTO, one codegen unit; Cargo.toml), then
# dist/pack.sh packs the archive and its SHA-256 sum into dist/out/.
#
# Usage: dist/build.sh [TARGET]   (default: the host's; the target's std must be
# installed: `rustup target add TARGET`). CARGO names another cargo (e.g. `cross`).
# tests/ci/dist.sh builds the host's and checks the archive (stripped, < 12 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
target=${1:-$host}
exe=session-doctor
case "$target" in *-windows-*) exe=session-doctor.exe ;; esac
# Static musl binaries need no C runtime on the machine that runs them.
case "$target" in *-linux-musl*) export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" ;; esac
"${CARGO:-cargo}" build --locked --profile dist --target "$target" --bin session-doctor
dist/pack.sh "$target" "target/$target/dist/$exe" "${OUT_DIR:-dist/out}"
