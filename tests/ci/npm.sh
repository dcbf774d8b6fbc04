#!/usr/bin/env bash
# The npm packages, packed locally and run from a scratch folder with no
# registry (npm offline, an empty cache): the platform package npm/build.sh
# makes of the binary under test, and the launcher (npm/session-doctor), run as
# `npx ./session-doctor-<version>.tgz`. The versions agree with Cargo.toml's.
source "$(dirname "$0")/lib.sh"
host=$(rustc -vV | sed -n 's/^host: //p')
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
export npm_config_cache=$scratch/npm-cache npm_config_offline=true npm_config_audit=false npm_config_fund=false \
  npm_config_update_notifier=false npm_config_loglevel=error

node - "$root/npm/session-doctor/package.json" "$version" <<'JS' && ok "launcher: its version and its platforms' are $version" || bad "launcher: versions"
const [file, version] = process.argv.slice(2);
const p = require(file);
if (p.version !== version) throw new Error(`${p.version} != ${version}`);
for (const [name, v] of Object.entries(p.optionalDependencies)) if (v !== version) throw new Error(`${name}@${v}`);
JS

# The debug build, without its debug info (a smaller package to pack and unpack).
binary=$SD_BIN
if command -v strip >/dev/null; then
  binary=$scratch/session-doctor
  strip -o "$binary" "$SD_BIN"
fi
platform=$("$root/npm/build.sh" "$binary" "$host" "$scratch/out")
(cd "$platform" && npm pack --pack-destination "$scratch" >/dev/null)
(cd "$root/npm/session-doctor" && npm pack --pack-destination "$scratch" >/dev/null)
name=$(node -p "require('$platform/package.json').name")
tgz_platform=$scratch/$(echo "${name#@}" | tr / -)-$version.tgz
[ -f "$tgz_platform" ] && [ -f "$scratch/session-doctor-$version.tgz" ] && ok "npm pack: both packages" ||
  bad "npm pack: $(ls "$scratch")"

# A scratch project: the platform package installed from its tarball, then the launcher run with npx.
run=$scratch/project
mkdir -p "$run"
cp "$scratch/session-doctor-$version.tgz" "$run/"
cd "$run"
npm install --no-save "$tgz_platform" >/dev/null 2>"$scratch/npm.err" || bad "npm install: $(cat "$scratch/npm.err")"
expect "session-doctor $version" "$(npx --yes ./session-doctor-*.tgz --version 2>"$scratch/npx.err")" \
  "npx ./session-doctor-$version.tgz --version"
set +e
npx --yes ./session-doctor-*.tgz check "$root/samples/claude-code.jsonl" >"$scratch/check.out" 2>&1
status=$?
set -e
expect 1 "$status" "npx: check's exit status passes through (1: a problem)"
grep -q "png.truncated" "$scratch/check.out" && ok "npx: check's report" || bad "npx: $(cat "$scratch/check.out")"

# Without the platform package: a message that names it, exit 2.
bare=$scratch/bare
mkdir -p "$bare"
cp "$scratch/session-doctor-$version.tgz" "$bare/"
cd "$bare"
set +e
npx --yes ./session-doctor-*.tgz --version >/dev/null 2>"$scratch/bare.err"
status=$?
set -e
expect 2 "$status" "npx without the platform package exits 2"
grep -q "$name" "$scratch/bare.err" && ok "npx without it names $name" || bad "npx: $(cat "$scratch/bare.err")"
summary
