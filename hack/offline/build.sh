#!/usr/bin/env bash
# Build everything a kind cluster needs with no container registry, cached outside the repo
# (E2E_CACHE, default ~/.cache/pod-lifecycle-e2e) and keyed by versions and recipe, so a second
# run only checks. Prints the profile as shell assignments on stdout (progress goes to stderr):
#   E2E_KIND, E2E_NODE_IMAGE, E2E_PROFILE_PATCH, E2E_BUSYBOX_IMAGE
#
# Each release is built apart (kubernetes-<version>-*, images-<version>-*.tar, the node image
# kind-node:<version>-*), written whole or not at all (into-cache.sh).
#
# usage: build.sh [K8S_VERSION]    (1.37: the pinned v1.37.2; v1.36.2: any released patch of a
#                                   minor of versions.env; default: its newest; k8s-version.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=versions.env
. "$here/versions.env"

# stdout carries only the profile: every step's output goes to stderr
exec 3>&1 1>&2

# the release, before anything is written: a pinned one, or another patch of a pinned minor that
# the Go module proxy serves (k8s-version.sh); refused otherwise
version=$("$here/k8s-version.sh" "${1:-}")

cache=${E2E_CACHE:-$HOME/.cache/pod-lifecycle-e2e}/offline
mkdir -p "$cache"

# -- prerequisites, each with a clear error ---------------------------------------------------
need go "the offline build compiles kind, Kubernetes and the runtime from Go modules: install Go >= 1.24"
need cc "the pause image is a static C build: apt-get install gcc libc6-dev"
free_kb=$(df -Pk "$cache" | awk 'NR==2 {print $4}')
(( free_kb > 15 * 1024 * 1024 )) || die "less than 15 GiB free under $cache ($(( free_kb / 1024 / 1024 )) GiB): the offline build needs about 10 GiB"
missing=()
for tool in debootstrap jq; do command -v $tool >/dev/null || missing+=("$tool"); done
pkg-config --exists libseccomp 2>/dev/null || missing+=(libseccomp-dev)
dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
command -v pkg-config >/dev/null || missing+=(pkg-config)
if (( ${#missing[@]} )); then
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || die "missing: ${missing[*]} (install them; the offline build needs Debian's tools)"
  step "installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
"$here/docker.sh"

# key FILE...: a short hash of files (the recipe) and of the pins in versions.env, for cache
# names. The list of supported Kubernetes versions is left out: adding one must not invalidate
# what is built for the others (each Kubernetes artifact is named by its own version).
key() { { grep -v '^K8S_VERSIONS=' "$here/versions.env"; cat "$@"; } | sha256sum | cut -c1-10; }
done_dir() { [ -f "$1/.done" ]; }

# -- kind -----------------------------------------------------------------------------------------
kind_bin=$cache/bin/kind-$KIND_VERSION
if [ ! -x "$kind_bin" ]; then
  step "kind $KIND_VERSION: go install"
  mkdir -p "$cache/bin"
  GOBIN=$cache/bin.tmp go install "sigs.k8s.io/kind@$KIND_VERSION"
  mv "$cache/bin.tmp/kind" "$kind_bin"
  rmdir "$cache/bin.tmp"
fi

# -- node base image ----------------------------------------------------------------------------------
tools=$cache/tools-$(key "$here/build-tools.sh" "$here/lib.sh")
if ! done_dir "$tools"; then
  rm -rf "$tools"; "$here/build-tools.sh" "$tools"; touch "$tools/.done"
fi
rootfs=$cache/rootfs-$DEBIAN_SUITE-$(key "$here/build-rootfs.sh").tar
[ -f "$rootfs" ] || "$here/build-rootfs.sh" "$rootfs"
base=pod-lifecycle-e2e/kind-base:$(key "$here/build-tools.sh" "$here/build-rootfs.sh" "$here/build-base.sh" "$here/10-offline-ptp.conflist")
if ! docker image inspect "$base" >/dev/null 2>&1; then
  "$here/build-base.sh" "$rootfs" "$tools" "$base"
fi

# -- Kubernetes ----------------------------------------------------------------------------------------
kdir=$cache/kubernetes-$version-$(key "$here/build-kubernetes.sh")
if ! done_dir "$kdir"; then
  "$here/into-cache.sh" "$kdir" "$here/build-kubernetes.sh" "$version"; touch "$kdir/.done"
fi
images=$cache/images-$version-$(key "$here/build-kubernetes.sh" "$here/build-images.sh" "$here/build-base.sh").tar
[ -f "$images" ] || "$here/into-cache.sh" "$images" "$here/build-images.sh" "$kdir" "$base"
node=pod-lifecycle-e2e/kind-node:$version-$(key "$here"/build-*.sh "$here/10-offline-ptp.conflist")
if ! docker image inspect "$node" >/dev/null 2>&1; then
  "$here/build-node.sh" "$base" "$kdir" "$images" "$node"
fi

# -- workload images ---------------------------------------------------------------------------------
busybox=pod-lifecycle-e2e/busybox:debian-$(dpkg-query -W -f '${Version}' busybox-static | sed 's/[^A-Za-z0-9_.-]/_/g')
docker image inspect "$busybox" >/dev/null 2>&1 || "$here/build-busybox.sh" "$busybox"

step "offline build ready: $node ($(docker image inspect -f '{{.Size}}' "$node" | awk '{printf "%.0f MB", $1/1e6}')); cache $(du -sh "$cache" | cut -f1)"
cat >&3 <<ENV
E2E_KIND=$kind_bin
E2E_NODE_IMAGE=$node
E2E_PROFILE_PATCH=$here/kind-offline.yaml
E2E_BUSYBOX_IMAGE=$busybox
ENV
