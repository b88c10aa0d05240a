#!/usr/bin/env bash
# Build the component images one Kubernetes release needs, tagged exactly as
# `kubeadm config images list` prints them (plus the sandbox image kind's containerd config
# names), and save them into one archive for the node image:
#   kube-apiserver, kube-controller-manager, kube-scheduler: the static binaries;
#   kube-proxy: the binary plus iptables (legacy and nft, chosen like upstream's iptables-wrapper)
#     and conntrack copied from the node base image;
#   etcd: through a wrapper main calling etcdmain.Main (its server module has replace directives);
#   coredns: go build of github.com/coredns/coredns;
#   pause: static build of build/pause/linux/pause.c (by build-kubernetes.sh).
#
# usage: build-images.sh KUBERNETES_DIR BASE_IMAGE OUT_TAR
set -euo pipefail
kdir=${1:?usage: build-images.sh KUBERNETES_DIR BASE_IMAGE OUT_TAR}
base=${2:?usage: build-images.sh KUBERNETES_DIR BASE_IMAGE OUT_TAR}
out=${3:?usage: build-images.sh KUBERNETES_DIR BASE_IMAGE OUT_TAR}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

version=$(cat "$kdir/version")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mapfile -t wanted < <("$kdir/kubeadm" config images list --kubernetes-version "$version")
image_for() { printf '%s\n' "${wanted[@]}" | grep "/$1:" ; }
tag_of() { local ref; ref=$(image_for "$1"); echo "${ref##*:}"; }

# import_dir DIR TAG [docker import --change ...]: a directory as a one-layer image
import_dir() {
  local dir=$1 tag=$2; shift 2
  tar --numeric-owner -C "$dir" -c . | docker import "$@" - "$tag" >/dev/null
}

tags=()
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  ref=$(image_for "$c")
  step "images: $ref"
  mkdir -p "$work/$c/usr/local/bin"
  install -m 0755 "$kdir/$c" "$work/$c/usr/local/bin/"
  import_dir "$work/$c" "$ref" --change "ENV PATH=/usr/local/bin:/usr/bin:/bin" --change "ENTRYPOINT [\"/usr/local/bin/$c\"]"
  tags+=("$ref")
done

ref=$(image_for kube-proxy)
step "images: $ref (with iptables, conntrack from $base and a mode-selecting wrapper)"
mkdir -p "$work/kube-proxy/usr/local/bin" "$work/kube-proxy/bin"
install -m 0755 "$kdir/kube-proxy" "$work/kube-proxy/usr/local/bin/"
# copy the binaries kube-proxy runs, their shared libraries and xtables modules out of the base image
docker run --rm --entrypoint bash "$base" -c '
  set -e
  bins="/usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /usr/sbin/conntrack /usr/sbin/ip"
  mods=$(ls /usr/lib/x86_64-linux-gnu/xtables/*.so)
  files=$(for b in $bins $mods; do echo "$b"; ldd "$b" | grep -o "/[^ ]*"; done | sort -u)
  tar -chf - $files /usr/lib/x86_64-linux-gnu/xtables /etc/ethertypes /etc/protocols 2>/dev/null
' | tar -C "$work/kube-proxy" -xf -
# like upstream's iptables-wrapper and kind's entrypoint: use the backend (legacy or nft) that
# already holds the node's rules, so kube-proxy's rules sit next to them
install -m 0755 /bin/busybox "$work/kube-proxy/bin/busybox"
for a in sh grep ln; do ln -sf busybox "$work/kube-proxy/bin/$a"; done
cat > "$work/kube-proxy/usr/sbin/iptables-wrapper" <<'SH'
#!/bin/sh
legacy=$( (xtables-legacy-multi iptables-save; xtables-legacy-multi ip6tables-save) 2>/dev/null | grep -c '^-')
nft=$( (xtables-nft-multi iptables-save; xtables-nft-multi ip6tables-save) 2>/dev/null | grep -c '^-')
mode=nft
[ "$legacy" -gt "$nft" ] && mode=legacy
for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -sf "xtables-$mode-multi" "/usr/sbin/$t"
done
exec "$0" "$@"
SH
chmod 0755 "$work/kube-proxy/usr/sbin/iptables-wrapper"
for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -sf iptables-wrapper "$work/kube-proxy/usr/sbin/$t"
done
mkdir -p "$work/kube-proxy/run" "$work/kube-proxy/tmp" "$work/kube-proxy/lib/modules"
import_dir "$work/kube-proxy" "$ref" --change "ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" --change 'ENTRYPOINT ["/usr/local/bin/kube-proxy"]'
tags+=("$ref")

etcd_ref=$(image_for etcd); etcd_version="v$(tag_of etcd)"; etcd_version=${etcd_version%-*}
step "images: $etcd_ref (go.etcd.io/etcd/server/v3 $etcd_version)"
mkdir -p "$work/etcd-src" "$work/etcd/usr/local/bin"
(
  cd "$work/etcd-src"
  printf 'module offline.local/etcd\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$etcd_version" > go.mod
  cat > main.go <<'GO'
// Command etcd runs the etcd server, as go.etcd.io/etcd's own main does.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  GOFLAGS=-mod=mod go mod tidy 2> >(grep -v '^go: downloading' >&2)
  CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$work/etcd/usr/local/bin/etcd" .
)
import_dir "$work/etcd" "$etcd_ref" --change "ENV PATH=/usr/local/bin:/usr/bin:/bin" --change 'ENTRYPOINT ["/usr/local/bin/etcd"]'
tags+=("$etcd_ref")

coredns_ref=$(image_for coredns)
step "images: $coredns_ref"
mkdir -p "$work/coredns"
CGO_ENABLED=0 go_build_wrapped "$work/coredns" "github.com/coredns/coredns@$(tag_of coredns)" github.com/coredns/coredns
mkdir -p "$work/coredns/etc/ssl/certs"
import_dir "$work/coredns" "$coredns_ref" --change 'ENTRYPOINT ["/coredns"]'
tags+=("$coredns_ref")

pause_ref=$(image_for pause)
step "images: $pause_ref"
mkdir -p "$work/pause"
install -m 0755 "$kdir/pause" "$work/pause/pause"
import_dir "$work/pause" "$pause_ref" --change 'ENTRYPOINT ["/pause"]'
tags+=("$pause_ref")
# kind's containerd config names its own sandbox image; the same pause serves it
sandbox_ref=$(docker run --rm --entrypoint sed "$base" -n 's/^ *sandbox_image *= *"\(.*\)"/\1/p' /etc/containerd/config.toml)
if [ -n "$sandbox_ref" ] && [ "$sandbox_ref" != "$pause_ref" ]; then
  docker tag "$pause_ref" "$sandbox_ref"
  tags+=("$sandbox_ref")
fi

step "images: saving ${#tags[@]} images"
docker save -o "$out.tmp" "${tags[@]}"
mv "$out.tmp" "$out"
