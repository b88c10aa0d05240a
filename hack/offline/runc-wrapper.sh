#!/bin/sh
# OCI runtime wrapper registered as Docker's default runtime by hack/offline/docker.sh.
#
# On hosts whose capability bounding set lacks CAP_SYS_RESOURCE, runc fails a privileged
# container ("unable to apply caps") because Docker asks for every capability. This wrapper
# removes CAP_SYS_RESOURCE from the OCI spec (config.json for create/run, the process spec
# for exec) and raises a negative oomScoreAdj to 0 (negative values cannot be written on
# such hosts), then runs the real runc with the same arguments.
set -eu
REAL_RUNC=${REAL_RUNC:-@REAL_RUNC@}
fix() {
  [ -f "$1" ] || return 0
  tmp="$1.nocap.$$"
  jq '
    def strip: if type == "array" then map(select(. != "CAP_SYS_RESOURCE")) else . end;
    if .process then
        .process.capabilities |= (if . then with_entries(.value |= strip) else . end)
        | if (.process.oomScoreAdj // 0) < 0 then .process.oomScoreAdj = 0 else . end
      else
        .capabilities |= (if . then with_entries(.value |= strip) else . end)
      end
  ' "$1" > "$tmp" && mv "$tmp" "$1"
}
cmd="" bundle="" process=""
prev=""
for a in "$@"; do
  case "$prev" in
    --bundle|-b) bundle=$a ;;
    --process|-p) process=$a ;;
  esac
  case "$a" in
    --bundle=*) bundle=${a#--bundle=} ;;
    --process=*) process=${a#--process=} ;;
    create|run|exec) [ -z "$cmd" ] && cmd=$a ;;
  esac
  prev=$a
done
case "$cmd" in
  create|run) fix "${bundle:-.}/config.json" ;;
  exec) [ -n "$process" ] && fix "$process" ;;
esac
exec "$REAL_RUNC" "$@"
