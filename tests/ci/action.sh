#!/usr/bin/env bash
# The GitHub Action's steps (action.yml) run locally: the installer
# (dist/install.sh) installs an archive packed by dist/pack.sh from a file://
# "release" and refuses one whose SHA-256 differs; action/check.sh annotates a
# broken session, writes a valid-looking SARIF log and reports status 1, and
# passes a healthy one with status 0. A second or two with a built binary.
source "$(dirname "$0")/lib.sh"
host=$(rustc -vV | sed -n 's/^host: //p')
release=$scratch/release
# The debug build, without its debug info (a smaller archive to pack and unpack).
binary=$SD_BIN
if command -v strip >/dev/null; then
  binary=$scratch/session-doctor
  strip -o "$binary" "$SD_BIN"
fi
"$root/dist/pack.sh" "$host" "$binary" "$release" >/dev/null
[ -s "$release/session-doctor-$host.tar.gz.sha256" ] && ok "pack: an archive and its sum" || bad "pack: no sum"

# The action's install step, as it runs on a runner.
gh_path=$scratch/github_path
install() {
  SESSION_DOCTOR_BASE_URL="file://$1" SESSION_DOCTOR_TARGET=$host \
    SESSION_DOCTOR_INSTALL_DIR="$scratch/bin" sh "$root/dist/install.sh" 2>"$scratch/install.log"
}
if install "$release"; then
  echo "$scratch/bin" >>"$gh_path"
  expect "session-doctor $("$SD_BIN" --version | cut -d ' ' -f 2)" "$("$scratch/bin/session-doctor" --version)" "install: the binary runs"
else
  bad "install: $(cat "$scratch/install.log")"
fi
tampered=$scratch/tampered
cp -r "$release" "$tampered"
printf '0000000000000000000000000000000000000000000000000000000000000000  session-doctor-%s.tar.gz\n' "$host" >"$tampered/session-doctor-$host.tar.gz.sha256"
if install "$tampered"; then bad "install: a wrong SHA-256 was accepted"; else
  grep -q "is not the published" "$scratch/install.log" && ok "install: a wrong SHA-256 is refused" || bad "install: $(cat "$scratch/install.log")"
fi

# The check step, with the installed binary on PATH as $GITHUB_PATH puts it.
sessions "$scratch/repo/recordings"
cd "$scratch/repo"
step() { # step PATHS: runs action/check.sh; its stdout in $scratch/step.out
  : >"$scratch/output"
  PATH="$(cat "$gh_path"):$PATH" GITHUB_OUTPUT="$scratch/output" INPUT_PATHS="$1" INPUT_ARGS="${2:-}" \
    INPUT_SARIF=session-doctor.sarif bash "$root/action/check.sh" >"$scratch/step.out" 2>/dev/null
}
rm -f session-doctor.sarif
step "recordings/broken.jsonl" && ok "check step: exits 0 so the upload runs" || bad "check step: exited $?"
expect "status=1" "$(grep '^status=' "$scratch/output")" "check step: a broken session is status 1"
grep -q '^::error file=recordings/broken.jsonl,line=7,title=png.truncated::L7.1: ' "$scratch/step.out" &&
  ok "check step: the cut PNG annotated at its line" || bad "check step: no annotation: $(cat "$scratch/step.out")"
expect "sarif-file=session-doctor.sarif" "$(grep '^sarif-file=' "$scratch/output")" "check step: the SARIF log named"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["runs"][0]["results"]; assert d["version"]=="2.1.0" and any(x["ruleId"]=="png.truncated" for x in r), r' session-doctor.sarif &&
  ok "check step: the SARIF log holds the cut PNG" || bad "check step: SARIF log"
step "recordings/healthy.jsonl"
expect "status=0" "$(grep '^status=' "$scratch/output")" "check step: a healthy session is status 0"
step $'recordings/healthy.jsonl\nrecordings/broken.jsonl' "--allow png.truncated --allow session.stuck.media_rejected"
expect "status=0" "$(grep '^status=' "$scratch/output")" "check step: paths one a line, args passed (--allow)"
step ""
expect "status=2" "$(grep '^status=' "$scratch/output")" "check step: no paths is status 2"

# action.yml runs these very scripts and uploads what the check step names.
python3 - "$root/action.yml" <<'PY' && ok "action.yml: its steps run the scripts tested here" || bad "action.yml"
import sys
text = open(sys.argv[1]).read()
for needle in ['"$GITHUB_ACTION_PATH/dist/install.sh"', '"$GITHUB_ACTION_PATH/action/check.sh"',
               "github/codeql-action/upload-sarif@", "steps.check.outputs.sarif-file", "steps.check.outputs.status != '0'"]:
    assert needle in text, needle
PY
summary
