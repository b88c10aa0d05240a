#!/usr/bin/env bash
# Build the node's runtime tools from their Go modules, at the versions kind's own base
# image pins (see versions.env): containerd (+ ctr, shim), runc, crictl, CNI plugins.
#
# usage: build-tools.sh OUT_DIR
set -euo pipefail
out=${1:?usage: build-tools.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=versions.env
. "$here/versions.env"

mkdir -p "$out"

BUILDTAGS="no_aufs no_zfs no_btrfs no_devmapper" CGO_ENABLED=1 \
LDFLAGS="-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
  go_build_wrapped "$out" "github.com/containerd/containerd/v2@$CONTAINERD_VERSION" \
    github.com/containerd/containerd/v2/cmd/containerd \
    github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    github.com/containerd/containerd/v2/cmd/ctr

BUILDTAGS="seccomp urfave_cli_no_docs" CGO_ENABLED=1 \
LDFLAGS="-X main.version=${RUNC_VERSION#v}" \
  go_build_wrapped "$out" "github.com/opencontainers/runc@$RUNC_VERSION" github.com/opencontainers/runc

BUILDTAGS="" CGO_ENABLED=0 LDFLAGS="-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" \
  go_build_wrapped "$out" "sigs.k8s.io/cri-tools@$CRICTL_VERSION" sigs.k8s.io/cri-tools/cmd/crictl

BUILDTAGS="" CGO_ENABLED=0 \
  go_build_wrapped "$out" "github.com/containernetworking/plugins@$CNI_PLUGINS_VERSION" \
    github.com/containernetworking/plugins/plugins/ipam/host-local \
    github.com/containernetworking/plugins/plugins/main/loopback \
    github.com/containernetworking/plugins/plugins/main/ptp \
    github.com/containernetworking/plugins/plugins/meta/portmap

"$out/containerd" --version
"$out/runc" --version | sed -n 1p  # sed reads to the end: head could SIGPIPE runc (exit 141 under pipefail)
