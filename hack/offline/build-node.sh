#!/usr/bin/env bash
# Assemble the kind node image from the offline base image, following the steps of kind's
# pkg/build/nodeimage (buildcontext.go) — `kind build node-image` itself cannot be used
# offline: it fetches the CNI and storage images with `ctr content fetch` unconditionally.
#   1. a build container from the base image (entrypoint sleep), binaries into /usr/bin;
#   2. /kind/version and the default storage manifest (kind's host-path fallback class);
#   3. containerd started inside, the component images imported unpacked-later (--no-unpack);
#   4. docker commit with kind's entrypoint.
#
# usage: build-node.sh BASE_IMAGE KUBERNETES_DIR IMAGES_TAR NODE_IMAGE
set -euo pipefail
base=${1:?usage: build-node.sh BASE_IMAGE KUBERNETES_DIR IMAGES_TAR NODE_IMAGE}
kdir=${2:?usage}
images=${3:?usage}
node=${4:?usage}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

id="pod-lifecycle-e2e-build-$$"
docker rm -f -v "$id" >/dev/null 2>&1 || true
trap 'docker rm -f -v "$id" >/dev/null 2>&1 || true' EXIT
step "node: build container from $base"
docker run -d --name "$id" --entrypoint=sleep --security-opt seccomp=unconfined "$base" infinity >/dev/null
for b in kubeadm kubelet kubectl; do
  docker cp "$kdir/$b" "$id:/usr/bin/$b"
  docker exec "$id" chown root:root "/usr/bin/$b"
  docker exec "$id" chmod 0755 "/usr/bin/$b"
done
docker exec "$id" sh -c "echo $(cat "$kdir/version") > /kind/version && mkdir -p /kind/manifests"
docker exec -i "$id" sh -c 'cat > /kind/manifests/default-storage.yaml' <<'YAML'
# host-path based default storage class (kind's fallback when its local-path provisioner
# image is absent, as in the offline build)
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
YAML

step "node: importing component images into the node's containerd"
docker exec "$id" bash -c 'nohup containerd > /dev/null 2>&1 &'
for i in 0 1 2 3 4 5; do
  docker exec "$id" test -S /run/containerd/containerd.sock && break
  sleep "$i"
done
docker exec "$id" ctr info >/dev/null
docker exec -i "$id" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
  --all-platforms --no-unpack --digests - < "$images" >/dev/null
docker exec "$id" ctr --namespace=k8s.io images list -q | grep -v '^sha256:' >&2
docker exec "$id" pkill containerd || true
sleep 1

step "node: committing $node"
docker commit \
  --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
  --change 'ENV HTTP_PROXY="" HTTPS_PROXY="" NO_PROXY=""' \
  "$id" "$node" >/dev/null
