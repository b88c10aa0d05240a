#!/usr/bin/env bash
# usage: last-night.sh ARTIFACT DIR
# The nightly's carry-over (.github/workflows/nightly.yml): ARTIFACT of the newest earlier night
# that kept it, downloaded into DIR with the GitHub CLI (gh run download; GH_TOKEN,
# GITHUB_REF_NAME and GITHUB_RUN_ID as a workflow sets them). The last 10 completed runs of the
# workflow on this branch are tried newest first, so a night that kept nothing of a minor (it
# failed before its merge) does not break the chain: the values history, the HTML report's trend
# and the durations come from the night before it. Says which run it took; exit 1 when none of
# them kept ARTIFACT.
set -euo pipefail
artifact=$1
dir=$2
runs=$(gh run list --workflow nightly.yml --branch "$GITHUB_REF_NAME" --status completed --limit 10 \
  --json databaseId --jq ".[].databaseId | select(. != ${GITHUB_RUN_ID:-0})")
for run in $runs; do
  if gh run download "$run" --name "$artifact" --dir "$dir" 2>/dev/null; then
    echo "$artifact: from nightly run $run"
    exit 0
  fi
done
echo "$artifact: kept by none of the last 10 nights" >&2
exit 1
