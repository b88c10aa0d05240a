#!/usr/bin/env bash
# Build kind's node *base* image without a container registry, following the steps of
# images/base/Dockerfile of sigs.k8s.io/kind (KIND_VERSION): the Debian rootfs of
# build-rootfs.sh, kind's own base files (entrypoint, systemd units,
# containerd config) taken from the kind module, and the runtime tools of build-tools.sh.
#
# Offline deviations from kind's base, each needed on this kind of host:
# - containerd's restrict_oom_score_adj = true (negative oom_score_adj cannot be written
#   where the host lacks CAP_SYS_RESOURCE);
# - a static CNI config (ptp + host-local + portmap for the kind pod subnet) instead of
#   kindnetd, whose image cannot be pulled; so the offline profile sets disableDefaultCNI
#   and supports a single node.
#
# usage: build-base.sh ROOTFS_TAR TOOLS_DIR IMAGE_TAG
set -euo pipefail
rootfs_tar=${1:?usage: build-base.sh ROOTFS_TAR TOOLS_DIR IMAGE_TAG}
tools=${2:?usage: build-base.sh ROOTFS_TAR TOOLS_DIR IMAGE_TAG}
tag=${3:?usage: build-base.sh ROOTFS_TAR TOOLS_DIR IMAGE_TAG}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=versions.env
. "$here/versions.env"

work=$(mktemp -d)
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
rootfs=$work/rootfs

kind_dir=$(kind_module_dir)
files=$kind_dir/images/base/files
step "base: unpacking rootfs $rootfs_tar"
mkdir -p "$rootfs"
tar --numeric-owner -C "$rootfs" -xf "$rootfs_tar"

step "base: kind's base files and services"
install -m 0755 "$files"/usr/local/bin/* "$rootfs/usr/local/bin/"
mkdir -p "$rootfs/kind/bin" "$rootfs/LICENSES"
cp -r "$files/kind/." "$rootfs/kind/"
chmod -R u+w,go-w "$rootfs/kind"
chmod 0755 "$rootfs/kind" "$rootfs/kind/bin" "$rootfs"/kind/bin/*
install -m 0644 "$files"/etc/crictl.yaml "$rootfs/etc/"
for d in containerd default sysctl.d systemd/system systemd/system/kubelet.service.d; do
  mkdir -p "$rootfs/etc/$d"
  find "$files/etc/$d" -maxdepth 1 -type f -exec install -m 0644 {} "$rootfs/etc/$d/" \;
done
chroot "$rootfs" sh -eu -c '
  find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete
  rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
        /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
        /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
  echo "ReadKMsg=no" >> /etc/systemd/journald.conf
  ln -sf /usr/lib/systemd/systemd /sbin/init
  systemctl enable kubelet.service containerd.service undo-mount-hacks.service
  systemctl mask systemd-binfmt.service
  mkdir -p /etc/kubernetes/manifests
  apt-get clean
  rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/*.log
'

step "base: runtime tools (containerd, runc, crictl, CNI plugins)"
for b in containerd containerd-shim-runc-v2 ctr crictl; do install -m 0755 "$tools/$b" "$rootfs/usr/local/bin/"; done
install -m 0755 "$tools/runc" "$rootfs/usr/local/sbin/runc"
mkdir -p "$rootfs/opt/cni/bin"
for b in host-local loopback ptp portmap; do install -m 0755 "$tools/$b" "$rootfs/opt/cni/bin/"; done
"$tools/ctr" oci spec \
  | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
  | jq 'del(.process.rlimits)' > "$rootfs/etc/containerd/cri-base.json"
sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' "$rootfs/etc/containerd/config.toml"
grep -q 'restrict_oom_score_adj = true' "$rootfs/etc/containerd/config.toml" \
  || die "kind's containerd config has no restrict_oom_score_adj line to set"
mkdir -p "$rootfs/etc/cni/net.d"
install -m 0644 "$here/10-offline-ptp.conflist" "$rootfs/etc/cni/net.d/"

step "base: importing rootfs as $tag"
tar --numeric-owner -C "$rootfs" -c . | docker import - "$tag-rootfs" >/dev/null
# image metadata as kind's Dockerfile sets it (docker import cannot set STOPSIGNAL)
docker_build_local "$tag" <<DOCKERFILE
FROM $tag-rootfs
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
DOCKERFILE
docker rmi "$tag-rootfs" >/dev/null
