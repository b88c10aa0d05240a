#!/usr/bin/env bash
# Build the Kubernetes node binaries (kubeadm, kubelet, kubectl) and the control-plane
# binaries (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy) of one
# release from the k8s.io/kubernetes Go module, with no container registry.
#
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at
# v0.0.0 and replaces them by local paths that the published module zip does not contain,
# so we build through a small wrapper module that requires k8s.io/kubernetes vX.Y.Z and
# replaces every staging module by its published v0.Y.Z.
#
# usage: build-kubernetes.sh VERSION OUT_DIR     (VERSION like v1.37.2)
set -euo pipefail
version=${1:?usage: build-kubernetes.sh VERSION OUT_DIR}
out=${2:?usage: build-kubernetes.sh VERSION OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

minor=${version#v1.}; minor=${minor%%.*}
staging_version="v0.${version#v1.}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "k8s.io/kubernetes $version: resolving modules"
cd "$work"
cat > go.mod <<MOD
module offline.local/kubernetes-build

go 1.24
MOD
GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" > "$work/dl.json"
src=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])' < "$work/dl.json")
{
  echo "require k8s.io/kubernetes $version"
  echo "replace ("
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$src/go.mod" | while read -r mod; do
    echo "  $mod => $mod $staging_version"
  done
  echo ")"
} >> go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
GOFLAGS=-mod=mod go mod tidy 2> >(grep -v '^go: downloading' >&2)

commit=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Origin",{}).get("Hash","0000000000000000000000000000000000000000"))' < "$work/dl.json")
build_date=$(python3 -c 'import json,sys; print(json.load(open(json.load(sys.stdin)["Info"]))["Time"])' < "$work/dl.json")
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitCommit=$commit -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done

mkdir -p "$out"
for cmd in kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
  step "k8s.io/kubernetes $version: go build $cmd"
  CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$out/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done
# kubeadm pins the pause image it expects; build it from the same module (static C).
step "k8s.io/kubernetes $version: pause (static C)"
cc -Os -static -DVERSION="$version" -o "$out/pause" "$src/build/pause/linux/pause.c"
echo "$version" > "$out/version"
"$out/kubeadm" version -o short
