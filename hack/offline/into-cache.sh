#!/usr/bin/env bash
# usage: into-cache.sh DEST COMMAND [ARG...]
# A cache entry of the offline build whole or not at all: runs COMMAND ARG... DEST.part (its
# output path last, as build-kubernetes.sh and build-images.sh take it), then renames DEST.part
# to DEST (replacing what was there). A failed or interrupted COMMAND leaves no DEST.part nor the
# DEST.part.tmp it may write first (build-images.sh does), and DEST as it was; the exit status is
# COMMAND's (130 on SIGINT, 143 on SIGTERM).
set -uo pipefail
dest=${1:?usage: into-cache.sh DEST COMMAND [ARG...]}
shift
[ $# -gt 0 ] || { echo "usage: into-cache.sh DEST COMMAND [ARG...]" >&2; exit 2; }
part=$dest.part
clean() { rm -rf "$part" "$part.tmp"; }
stopped() {
  clean
  printf '\npod-lifecycle-e2e: %s stopped by %s: nothing of %s left\n' "$1" "$2" "$dest" >&2
  exit "$3"
}
trap 'stopped "$1" SIGINT 130' INT
trap 'stopped "$1" SIGTERM 143' TERM
clean
"$@" "$part"
rc=$?
if [ "$rc" -ne 0 ]; then
  clean
  printf 'pod-lifecycle-e2e: error: %s failed (exit %s): nothing of %s left\n' "$1" "$rc" "$dest" >&2
  exit "$rc"
fi
rm -rf "$dest"
mv "$part" "$dest"
