#!/usr/bin/env bash
# The Kubernetes release the offline build makes for K8S_VERSION, printed as vX.Y.Z on stdout:
#   (nothing)       the newest release of versions.env K8S_VERSIONS;
#   1.MINOR         the release of that minor in K8S_VERSIONS (1.36: v1.36.3);
#   1.MINOR.PATCH   that release, of a minor of K8S_VERSIONS, pinned there or not: an unpinned one
#                   must be served by the Go module proxy (`go list -m k8s.io/kubernetes@vX.Y.Z`,
#                   its .info only; the build fetches its source the same way). Its etcd, CoreDNS
#                   and pause are what its own kubeadm asks for (build-images.sh), as for the pinned.
# Refused, with the reason on stderr, exit 1 and nothing on stdout or in the cache: not
# 1.MINOR[.PATCH], a minor outside K8S_VERSIONS, a patch the module proxy does not serve (or
# GOPROXY naming none: "direct" or "off" alone).
#
# usage: k8s-version.sh [K8S_VERSION]    (1.36, v1.36.2, 1.34.1; default: the newest pinned)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=versions.env
. "$here/versions.env"

want=${1:-}
read -ra pinned <<<"$K8S_VERSIONS"
if [ -z "$want" ]; then echo "${pinned[0]}"; exit 0; fi
v=${want#v}
[[ "$v" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || die "Kubernetes version '$want': give 1.MINOR or 1.MINOR.PATCH"
minor=$(cut -d. -f1,2 <<<"$v")
release=""
for p in "${pinned[@]}"; do [ "$(cut -d. -f1,2 <<<"${p#v}")" = "$minor" ] && release=$p && break; done
if [ -z "$release" ]; then
  minors=""
  for p in "${pinned[@]}"; do minors+="${minors:+, }$(cut -d. -f1,2 <<<"${p#v}")"; done
  die "Kubernetes version '$want' is not one the offline build supports: a release of $minors (hack/offline/versions.env K8S_VERSIONS)"
fi
if [ "$v" = "$minor" ] || [ "v$v" = "$release" ]; then echo "$release"; exit 0; fi

# an unpinned patch: asked of the module proxy alone (GOPROXY without its "direct" fallback, which
# would clone the repository), from a directory of no module
need go "the offline build fetches Kubernetes from the Go module proxy: install Go >= 1.24"
proxies=$(go env GOPROXY | tr ',|' '\n\n' | grep -v -x -e direct -e off -e '' | paste -sd, || true)
[ -n "$proxies" ] || die "k8s.io/kubernetes v$v: GOPROXY=$(go env GOPROXY) names no module proxy; a patch not pinned in hack/offline/versions.env is asked of one and fetched through it (e.g. GOPROXY=https://proxy.golang.org)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! served=$(cd "$tmp" && GOWORK=off GOPROXY=$proxies go list -m -f '{{.Version}}' "k8s.io/kubernetes@v$v" 2>"$tmp/err"); then
  die "k8s.io/kubernetes v$v cannot be had from the Go module proxy ($proxies), so it cannot be built offline (is it a released patch of $minor? K8S_VERSION=$minor builds the pinned $release):
$(sed 's/^\s*/  /' "$tmp/err")"
fi
[ "$served" = "v$v" ] || die "the Go module proxy ($proxies) answered k8s.io/kubernetes@v$v with '$served'"
echo "v$v"
