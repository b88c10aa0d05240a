#!/usr/bin/env bash
# Make the Debian rootfs of the offline node image with debootstrap: DEBIAN_SUITE
# (bookworm: its systemd 252 boots on cgroup v1 hosts, newer systemd may not) with the
# packages kind's base image installs, read from images/base/Dockerfile of the kind module,
# plus EXTRA_PACKAGES.
#
# EXTRA_PACKAGES: dbus, for the kubelet's graceful node shutdown (CASES-faults.md §2.6, NF-9):
# the kubelet takes a logind delay inhibitor lock and listens for PrepareForShutdown on the
# system bus. systemd 252 already ships systemd-logind and its D-Bus activation file; kind's
# base installs no bus daemon. dbus.socket is linked statically into sockets.target.wants (the
# base keeps that link), so the bus daemon runs from boot (systemd connects to it); logind is
# started by bus activation on its first caller, the kubelet, only when shutdownGracePeriod
# is > 0. Tried on this host
# (cgroup v1 hybrid, privileged node container, --cgroupns=private): logind starts, the
# kubelet holds "Kubelet needs time to handle node shutdown" and reacts to a spoofed signal.
#
# usage: build-rootfs.sh OUT_TAR
set -euo pipefail
out=${1:?usage: build-rootfs.sh OUT_TAR}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=versions.env
. "$here/versions.env"
need debootstrap "apt-get install debootstrap"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kind_dir=$(kind_module_dir)
packages=$(sed -n '/clean-install \\/,/&& find/p' "$kind_dir/images/base/Dockerfile" \
  | grep -v -e clean-install -e '&& find' | tr -d '\\' | xargs | tr ' ' ',')
[ -n "$packages" ] || die "could not read the package list from kind's base Dockerfile"
EXTRA_PACKAGES=dbus
packages=$packages,$EXTRA_PACKAGES

step "rootfs: debootstrap $DEBIAN_SUITE with kind's packages: $packages"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
debootstrap --variant=minbase --include="$packages" "$DEBIAN_SUITE" "$work/rootfs" "$mirror" \
  > "$work/debootstrap.log" 2>&1 || { tail -30 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
chroot "$work/rootfs" sh -c 'apt-get clean; rm -rf /var/lib/apt/lists/*'
tar --numeric-owner -C "$work/rootfs" -cf "$out.tmp" .
mv "$out.tmp" "$out"
step "rootfs: $(du -h "$out" | cut -f1) in $out"
