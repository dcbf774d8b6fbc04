#!/usr/bin/env bash
# The release workflow's build steps for the host target, run locally:
# dist/build.sh (cargo build --profile dist, then dist/pack.sh), then checks
# that the archive holds the binary where `cargo binstall` looks for it, that
# the binary is stripped and runs, that the archive is under 12 MB, and that
# its .sha256 verifies. Not in .ci/run: the dist build (fat LTO, one codegen
# unit) takes many minutes on a shared 2-core machine; run it by hand before a
# release (SKIP_BUILD=1 packs and checks what target/<host>/dist/ holds).
source "$(dirname "$0")/lib.sh"
host=$(rustc -vV | sed -n 's/^host: //p')
out=$scratch/out
start=$(date +%s)
if [ -z "${SKIP_BUILD:-}" ]; then
  OUT_DIR=$out "$root/dist/build.sh" "$host" >/dev/null
else
  "$root/dist/pack.sh" "$host" "$root/target/$host/dist/session-doctor" "$out" >/dev/null
fi
echo "built and packed in $(($(date +%s) - start)) s"
archive=$out/session-doctor-$host.tar.gz
bytes=$(wc -c <"$archive")
echo "archive: $bytes bytes"
[ "$bytes" -lt $((12 * 1024 * 1024)) ] && ok "the archive is under 12 MB ($bytes bytes)" || bad "the archive is $bytes bytes"
(cd "$out" && sha256sum -c --quiet "session-doctor-$host.tar.gz.sha256") && ok "its .sha256 verifies" || bad "sha256"
tar -xzf "$archive" -C "$scratch"
exe=$scratch/session-doctor-$host/session-doctor
[ -x "$exe" ] && ok "session-doctor-$host/session-doctor, as binstall's bin-dir says" || bad "no binary at $exe"
echo "binary: $(wc -c <"$exe") bytes"
if command -v readelf >/dev/null; then
  readelf -S "$exe" | grep -Eq '\.symtab|\.debug_' && bad "the binary keeps symbols or debug info" || ok "the binary is stripped (no .symtab, no .debug_*)"
fi
expect "session-doctor $(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)" "$("$exe" --version)" "the binary runs"
for f in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE; do
  [ -f "$scratch/session-doctor-$host/$f" ] || bad "$f is not in the archive"
done
summary
