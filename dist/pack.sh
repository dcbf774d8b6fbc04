#!/usr/bin/env bash
# Packs a built binary as a release archive, in the layout `cargo binstall`
# expects (Cargo.toml's [package.metadata.binstall]) and dist/install.sh reads:
#   OUT/session-doctor-<target>.tar.gz   (.zip for *-windows-*)
#     session-doctor-<target>/session-doctor[.exe], README.md, CHANGELOG.md, LICENSE-*
#   OUT/session-doctor-<target>.tar.gz.sha256   ("<sha256>  <name>", as `sha256sum -c` reads it)
# Usage: dist/pack.sh TARGET BINARY [OUT]   (OUT defaults to dist/out); prints the archive's path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=$1
binary=$2
out=${3:-$root/dist/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
name=session-doctor-$target
exe=session-doctor
case "$target" in *-windows-*) exe=session-doctor.exe ;; esac

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name"
cp "$binary" "$stage/$name/$exe"
chmod 755 "$stage/$name/$exe"
(cd "$root" && cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$stage/$name/")
case "$target" in
  *-windows-*)
    archive=$name.zip
    rm -f "$out/$archive"
    if command -v 7z >/dev/null; then
      (cd "$stage" && 7z a -tzip -bd -bso0 "$out/$archive" "$name")
    else
      (cd "$stage" && zip -qr "$out/$archive" "$name")
    fi
    ;;
  *)
    archive=$name.tar.gz
    # Reproducible entries where GNU tar is there: sorted, owned by root, dated by the last commit.
    stamp=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
    if tar --version 2>/dev/null | grep -q GNU; then
      tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -czf "$out/$archive" "$name"
    else
      tar -C "$stage" --uid 0 --gid 0 -czf "$out/$archive" "$name" # bsdtar (macOS)
    fi
    ;;
esac
sum() { if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi; }
(cd "$out" && sum "$archive" >"$archive.sha256")
echo "$out/$archive"
