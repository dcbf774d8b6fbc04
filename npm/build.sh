#!/usr/bin/env bash
# The npm package that holds one platform's binary, as the release workflow
# makes it: npm/build.sh BINARY TARGET [OUT] writes OUT/npm/<platform>-<arch>/
# (package.json with `os` and `cpu`, bin/session-doctor[.exe], README.md), at
# the crate's version. OUT defaults to dist/out. Prints the package's folder.
# The launcher (npm/session-doctor) lists each as an optional dependency.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=$1
target=$2
out=${3:-$root/dist/out}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
case "$target" in
  x86_64-*-linux-*) os=linux cpu=x64 ;;
  aarch64-*-linux-*) os=linux cpu=arm64 ;;
  x86_64-apple-darwin) os=darwin cpu=x64 ;;
  aarch64-apple-darwin) os=darwin cpu=arm64 ;;
  x86_64-pc-windows-*) os=win32 cpu=x64 ;;
  *) echo "npm/build.sh: no npm platform for $target" >&2; exit 2 ;;
esac
exe=session-doctor
[ "$os" = win32 ] && exe=session-doctor.exe
dir=$out/npm/$os-$cpu
rm -rf "$dir"
mkdir -p "$dir/bin"
cp "$binary" "$dir/bin/$exe"
chmod 755 "$dir/bin/$exe"
cat >"$dir/package.json" <<JSON
{
  "name": "@session-doctor/$os-$cpu",
  "version": "$version",
  "description": "The session-doctor binary for $os $cpu ($target); installed by the session-doctor package",
  "license": "MIT OR Apache-2.0",
  "repository": {
    "type": "git",
    "url": "git+https://github.com/session-doctor/session-doctor.git"
  },
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/"],
  "preferUnplugged": true
}
JSON
printf '# @session-doctor/%s-%s\n\nThe session-doctor binary for %s (%s), run by the `session-doctor` package: install that one.\n' \
  "$os" "$cpu" "$os $cpu" "$target" >"$dir/README.md"
echo "$dir"
