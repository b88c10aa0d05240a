#!/usr/bin/env bash
# The suite's container registry image: CNCF distribution's `registry` built from its Go module
# (github.com/distribution/distribution/v3/cmd/registry, CGO_ENABLED=0) into a one-layer image
# made with `docker import`, like hack/images/lifecycle-app and hack/offline's busybox: no image is
# ever pulled. Tagged by the module version and a hash of this recipe, so a second call only checks.
#
# usage: build.sh            prints the image tag on stdout (progress on stderr); builds it when absent
#        build.sh --tag      prints the tag only (no Docker call: a --kubeconfig run names the image
#                            the nodes must already have)
# env:   REGISTRY_VERSION    (default v3.1.2: the newest v3 the Go module proxy serves)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${REGISTRY_VERSION:-v3.1.2}
tag=pod-lifecycle-e2e/registry:$version-$(cat "$here/build.sh" "$here/config.yml" | sha256sum | cut -c1-10)
if [ "${1:-}" = --tag ]; then
  echo "$tag"
  exit 0
fi
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi
command -v go >/dev/null || { echo "registry/build.sh: go not found (needed to build the registry)" >&2; exit 1; }
command -v docker >/dev/null || { echo "registry/build.sh: docker not found" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/tmp" "$work/root/etc/distribution" "$work/root/var/lib/registry" "$work/root/bin"
chmod 1777 "$work/root/tmp"
echo "registry: go install github.com/distribution/distribution/v3/cmd/registry@$version" >&2
CGO_ENABLED=0 GOBIN="$work/root/bin" GOFLAGS=-mod=mod \
  go install -trimpath -ldflags "-s -w" "github.com/distribution/distribution/v3/cmd/registry@$version"
install -m 0644 "$here/config.yml" "$work/root/etc/distribution/config.yml"
# OTEL_TRACES_EXPORTER=none as upstream's Dockerfile sets it: the registry's tracing exports nothing
tar --numeric-owner --owner=0 --group=0 -C "$work/root" -c bin etc tmp var \
  | docker import --change 'ENV OTEL_TRACES_EXPORTER=none' --change 'EXPOSE 5000' \
      --change 'ENTRYPOINT ["/bin/registry"]' --change 'CMD ["serve", "/etc/distribution/config.yml"]' - "$tag" >/dev/null
echo "registry: $tag ($(docker image inspect -f '{{.Id}}' "$tag" | cut -c1-19))" >&2
echo "$tag"
