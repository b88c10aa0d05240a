#!/usr/bin/env bash
# Make sure a Docker engine answers. Use the running one (never restarted); otherwise install
# Debian's docker.io (when apt-get is available and we are root) and start dockerd.
# On a host whose capability bounding set lacks CAP_SYS_RESOURCE, register
# runc-wrapper.sh as Docker's default OCI runtime (see that file for why).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

cap_sys_resource_missing() {
  # CAP_SYS_RESOURCE is capability 24; CapBnd is a hex mask.
  local bnd
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  (( (16#$bnd >> 24 & 1) == 0 ))
}

wrapper=/usr/local/libexec/pod-lifecycle-e2e/runc-nosysresource
ensure_wrapper_config() {
  cap_sys_resource_missing || return 0
  local real_runc
  real_runc=$(command -v runc || true)
  [ -n "$real_runc" ] || die "runc not found (needed by the Docker engine)"
  need jq "apt-get install jq (used by the OCI runtime wrapper)"
  mkdir -p "$(dirname "$wrapper")"
  sed "s#@REAL_RUNC@#$real_runc#" "$here/runc-wrapper.sh" > "$wrapper.new"
  chmod 755 "$wrapper.new"
  mv "$wrapper.new" "$wrapper"
  local cfg=/etc/docker/daemon.json
  mkdir -p /etc/docker
  [ -s "$cfg" ] || echo '{}' > "$cfg"
  local want
  want=$(jq --arg w "$wrapper" '.runtimes["runc-nosysresource"] = {path: $w} | .["default-runtime"] = "runc-nosysresource"' "$cfg")
  if [ "$want" != "$(jq . "$cfg")" ]; then
    step "docker: registering OCI runtime wrapper (host lacks CAP_SYS_RESOURCE)"
    echo "$want" > "$cfg"
    return 1  # daemon must (re)start to pick it up
  fi
  return 0
}

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

start_dockerd() {
  step "docker: starting dockerd (log: /var/log/dockerd.log)"
  setsid nohup dockerd >>/var/log/dockerd.log 2>&1 < /dev/null &
  for _ in $(seq 1 60); do
    engine_answers && return 0
    sleep 1
  done
  tail -20 /var/log/dockerd.log >&2
  die "dockerd did not answer within 60 s (see /var/log/dockerd.log)"
}

if ! command -v dockerd >/dev/null 2>&1 && ! engine_answers; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "docker: installing Debian's docker.io"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io jq >/dev/null
  else
    die "no Docker engine answers and none can be installed here (need root and apt-get): install Docker"
  fi
fi

config_ok=0
ensure_wrapper_config && config_ok=1
if engine_answers; then
  # never restart a running engine: other containers (other people's clusters) live in it
  [ $config_ok = 1 ] || die "registered the OCI runtime wrapper in /etc/docker/daemon.json (this host lacks CAP_SYS_RESOURCE); the running Docker engine must be restarted to load it (e.g. systemctl restart docker), then run again"
else
  [ "$(id -u)" = 0 ] || die "no Docker engine answers; start it (dockerd needs root)"
  start_dockerd
fi
step "docker: engine $(docker version -f '{{.Server.Version}}') answers"
