#!/usr/bin/env bash
# usage: write-if-ok.sh FILE COMMAND [ARG...]
# COMMAND's stdout into FILE only when COMMAND succeeds: it is written next to FILE first and
# moved into place after exit 0. A failed or interrupted COMMAND leaves FILE as it was (and
# says so); the exit status is COMMAND's. `make e2e` writes reports/profile.env so: a failed
# set-up (hack/prepare.sh) must not empty the profile that `make clean` and docs/running.md's
# `. reports/profile.env` read.
set -uo pipefail
out=$1
shift
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT
stopped() {
  printf '\npod-lifecycle-e2e: %s stopped by %s: %s left as it was\n' "$1" "$2" "$out" >&2
  exit "$3"
}
trap "stopped '$1' SIGINT 130" INT
trap "stopped '$1' SIGTERM 143" TERM
"$@" > "$tmp"
rc=$?
if [ "$rc" -ne 0 ]; then
  printf 'pod-lifecycle-e2e: error: %s failed (exit %s): %s left as it was\n' "$1" "$rc" "$out" >&2
  exit "$rc"
fi
mv "$tmp" "$out"
