#!/bin/sh
# The policy sweep the example workflow (github-workflow.yml) runs, runnable locally as it is:
#
#   examples/policy-sweep/sweep.sh examples/policy-sweep/policies/wider-window.json
#
# Every transcript of the corpus (default: the repository's committed fixtures/transcripts) is
# recorded in memory at a 16,000-token budget, then replayed under each policy given (no model
# call, no network). The markdown verdict goes to $OUT (default: sweep.md) and to stdout; the exit
# status is the gate's: non-zero when a policy costs over 2% more than the recording, loses a tool
# result, a user message or a needed identifier, or overflows the model's window.
#
# Environment: CTXLOG (the command, default `node apps/inspector/dist/bin.js`), CORPUS, MATCH (a
# stream pattern, default *), OUT, WORKERS (default: the machine's cores).
set -eu
if [ "$#" -eq 0 ]; then
  echo "usage: $0 POLICY.json [POLICY.json ...]" >&2
  exit 2
fi
CTXLOG=${CTXLOG:-node apps/inspector/dist/bin.js}
CORPUS=${CORPUS:-fixtures/transcripts}
MATCH=${MATCH:-*}
OUT=${OUT:-sweep.md}
policies=""
for policy in "$@"; do
  policies="$policies --policy $policy"
done
workers=""
if [ -n "${WORKERS:-}" ]; then
  workers="--workers $WORKERS"
fi
status=0
# shellcheck disable=SC2086 # the command and the option lists are split on purpose
$CTXLOG whatif --import "$CORPUS" --import-budget 16000 --match "$MATCH" $policies $workers \
  --markdown --lost --fail-on 'cost>+2%' --fail-on 'lost>0' --fail-on 'overflow>0' > "$OUT" || status=$?
cat "$OUT"
exit "$status"
