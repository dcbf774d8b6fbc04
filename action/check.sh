#!/usr/bin/env bash
# The Action's check step (action.yml): `session-doctor check` over the paths,
# once as workflow annotations (on stdout, which GitHub reads) and once as a
# SARIF log. Always exits 0 once check has run, so the SARIF upload runs; the
# exit status goes to $GITHUB_OUTPUT as `status` for the step that fails the job.
#
# Environment: INPUT_PATHS (one a line, or separated by spaces when on one line),
# INPUT_ARGS (more check arguments), INPUT_SARIF (the log's path, empty for
# none), GITHUB_OUTPUT (a file; default /dev/null), SESSION_DOCTOR (the binary;
# default session-doctor on PATH).
set -uo pipefail
sd=${SESSION_DOCTOR:-session-doctor}
output=${GITHUB_OUTPUT:-/dev/null}

paths=()
if [ "$(printf '%s\n' "${INPUT_PATHS:-}" | sed '/^[[:space:]]*$/d' | wc -l)" -gt 1 ]; then
  while IFS= read -r line; do
    line=${line#"${line%%[![:space:]]*}"}
    line=${line%"${line##*[![:space:]]}"}
    [ -n "$line" ] && paths+=("$line")
  done <<<"$INPUT_PATHS"
else
  read -r -a paths <<<"${INPUT_PATHS:-}"
fi
if [ "${#paths[@]}" -eq 0 ]; then
  echo "::error title=session-doctor::no paths given (the action's \`paths\` input)"
  echo "status=2" >>"$output"
  exit 0
fi
args=()
read -r -a args <<<"${INPUT_ARGS:-}"

"$sd" check --output-format github "${args[@]}" "${paths[@]}"
status=$?
echo "status=$status" >>"$output"
sarif=${INPUT_SARIF:-}
if [ -n "$sarif" ]; then
  # The same judgement; its exit status is the one above.
  "$sd" check --output-format sarif --out "$sarif" "${args[@]}" "${paths[@]}" 2>/dev/null
  if [ -s "$sarif" ]; then
    echo "sarif-file=$sarif" >>"$output"
  fi
fi
exit 0
