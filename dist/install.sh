#!/bin/sh
# Installs a session-doctor release binary: downloads the archive for this
# machine from the release, checks it against its published SHA-256 sum, and
# puts `session-doctor` in the install folder. Works once a release is
# published (none is yet); the GitHub Action (action.yml) installs with it.
#
#   curl -LsSf https://github.com/session-doctor/session-doctor/releases/latest/download/session-doctor-installer.sh | sh
#
# Environment (all optional):
#   SESSION_DOCTOR_VERSION      a version (0.1.0) or "latest" (default)
#   SESSION_DOCTOR_INSTALL_DIR  where the binary goes (default ~/.local/bin)
#   SESSION_DOCTOR_BASE_URL     where the archives are (default: the release's
#                               download folder; a file:// URL works, for tests)
#   SESSION_DOCTOR_TARGET       the target triple (default: this machine's)
set -eu

repo=https://github.com/session-doctor/session-doctor
version=${SESSION_DOCTOR_VERSION:-latest}
dir=${SESSION_DOCTOR_INSTALL_DIR:-$HOME/.local/bin}

say() { printf 'session-doctor-installer: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

target=${SESSION_DOCTOR_TARGET:-}
if [ -z "$target" ]; then
  os=$(uname -s)
  arch=$(uname -m)
  case "$arch" in
    x86_64 | amd64) arch=x86_64 ;;
    arm64 | aarch64) arch=aarch64 ;;
    *) die "no release binary for $arch; build from source: cargo install session-doctor" ;;
  esac
  case "$os" in
    Linux) target=$arch-unknown-linux-musl ;;
    Darwin) target=$arch-apple-darwin ;;
    *) die "no release binary for $os here; on Windows use the PowerShell installer" ;;
  esac
fi

if [ -n "${SESSION_DOCTOR_BASE_URL:-}" ]; then
  base=$SESSION_DOCTOR_BASE_URL
elif [ "$version" = latest ]; then
  base=$repo/releases/latest/download
else
  base=$repo/releases/download/v${version#v}
fi

name=session-doctor-$target
archive=$name.tar.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl --proto '=https,file' --tlsv1.2 -fsSL "$1" -o "$2"
  elif command -v wget >/dev/null 2>&1; then
    wget -q "$1" -O "$2"
  else
    die "neither curl nor wget is installed"
  fi
}

say "downloading $base/$archive"
fetch "$base/$archive" "$tmp/$archive" || die "cannot download $base/$archive (is a release published for $target?)"
fetch "$base/$archive.sha256" "$tmp/$archive.sha256" || die "cannot download $base/$archive.sha256"

want=$(cut -d ' ' -f 1 <"$tmp/$archive.sha256")
if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$tmp/$archive" | cut -d ' ' -f 1)
else
  got=$(shasum -a 256 "$tmp/$archive" | cut -d ' ' -f 1)
fi
[ -n "$want" ] && [ "$want" = "$got" ] || die "$archive: SHA-256 $got is not the published $want"

tar -xzf "$tmp/$archive" -C "$tmp"
mkdir -p "$dir"
# Into place atomically: a copy beside it, then a rename.
cp "$tmp/$name/session-doctor" "$dir/.session-doctor.new"
chmod 755 "$dir/.session-doctor.new"
mv -f "$dir/.session-doctor.new" "$dir/session-doctor"
say "installed $("$dir/session-doctor" --version) in $dir"
case ":$PATH:" in
  *":$dir:"*) ;;
  *) say "add $dir to PATH to run it: export PATH=\"$dir:\$PATH\"" ;;
esac
