#!/usr/bin/env bash
# Build the lifecycle-app test workload (main.go; grpc.go with google.golang.org/grpc, pinned in
# go.mod/go.sum) and make it a one-layer Docker image whose entrypoint is the static binary /app.
#
# usage: build.sh IMAGE_TAG        e.g. build.sh pod-lifecycle-e2e/lifecycle-app:0.1.0
# Needs Go 1.24+ (go.mod), the Go module proxy once (modules cached after) and a Docker engine;
# no registry. Prints progress on stderr.
# An image already tagged IMAGE_TAG is rebuilt (the tag moves to the new image).
set -euo pipefail
tag=${1:?usage: build.sh IMAGE_TAG}
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null || { echo "build.sh: go not found (needed to build lifecycle-app)" >&2; exit 1; }
command -v docker >/dev/null || { echo "build.sh: docker not found" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/tmp"
chmod 1777 "$work/root/tmp"
(cd "$here" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
  go build -trimpath -ldflags "-s -w" -o "$work/root/app" .)
tar --numeric-owner --owner=0 --group=0 -C "$work/root" -c app tmp \
  | docker import --change 'ENTRYPOINT ["/app"]' - "$tag" >/dev/null
echo "lifecycle-app: $tag ($(docker image inspect -f '{{.Id}}' "$tag" | cut -c1-19))" >&2
