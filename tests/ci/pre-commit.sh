#!/usr/bin/env bash
# The pre-commit hook (.pre-commit-hooks.yaml) run by pre-commit's own
# `try-repo` against this checkout: it fails on a session with an invalid
# attachment and passes a healthy one. pre-commit comes from PyPI, pinned, into
# a venv under ~/.cache/session-doctor (or beside $SD_AGENTS_CACHE) on first run.
# The manifest is this checkout's, in a repository of its own. The hook tried is `session-doctor-check-system` (the binary under test on
# PATH); `session-doctor-check` (language: rust) runs the same entry after
# pre-commit's `cargo install` of this crate, minutes of release build: not run here.
source "$(dirname "$0")/lib.sh"
PRE_COMMIT=4.2.0
cache=${SD_AGENTS_CACHE:-$HOME/.cache/session-doctor/agents}
venv=$(dirname "$cache")/pre-commit-$PRE_COMMIT
if [ ! -x "$venv/bin/pre-commit" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "pre-commit==$PRE_COMMIT"
fi
# pre-commit keeps its own cache of hook repositories: a scratch one, so nothing leaks between runs.
export PRE_COMMIT_HOME=$scratch/pre-commit-home
repo=$scratch/repo
sessions "$repo/recordings"
git -C "$repo" init -q
git -C "$repo" add recordings
# The hook repository pre-commit clones: this checkout's manifest alone (a clone of the
# whole repository, history and all, per try would take minutes; a system hook needs
# nothing else from it).
hooks=$scratch/hooks
mkdir -p "$hooks"
cp "$root/.pre-commit-hooks.yaml" "$hooks/"
git -C "$hooks" init -q
git -C "$hooks" add .pre-commit-hooks.yaml
git -C "$hooks" -c user.name=test -c user.email=test@localhost commit -q -m hooks
bin_dir=$(dirname "$SD_BIN")
try() { # try FILE: pre-commit try-repo's exit status
  (cd "$repo" && PATH="$bin_dir:$PATH" "$venv/bin/pre-commit" try-repo "$hooks" session-doctor-check-system \
    --files "$1" >"$scratch/try.out" 2>&1)
}
if try recordings/broken.jsonl; then bad "the hook passed a session with a cut PNG: $(cat "$scratch/try.out")"; else
  grep -q "png.truncated" "$scratch/try.out" && ok "the hook fails on the cut PNG, naming its code" ||
    bad "the hook failed without naming the code: $(cat "$scratch/try.out")"
fi
try recordings/healthy.jsonl && ok "the hook passes a healthy session" || bad "the hook failed a healthy session: $(cat "$scratch/try.out")"
# What `files:` leaves out is not read: a JSON file that is no session.
echo '{"name": "x"}' >"$repo/package.json"
git -C "$repo" add package.json
try package.json && grep -q "no files to check" "$scratch/try.out" && ok "files: a non-session JSON file is not checked" ||
  bad "files: $(cat "$scratch/try.out")"
summary
