#!/usr/bin/env bash
# Everything `make e2e` needs before pytest starts, printed as shell assignments on stdout
# (progress on stderr): a Docker engine, the pinned kind CLI, a node image — pulled where a
# registry answers, built by hack/offline where not (or when OFFLINE=1) — and the workload
# images (busybox; the suite's own lifecycle-app and the IM family's registry, always built locally).
#
# env: K8S_VERSION (1.37, 1.34, v1.37.2...), NODE_IMAGE (explicit node image), OFFLINE
# (auto|1|0), E2E_START_DOCKER (1: install/start Debian's docker.io as root when no engine
# answers; default 1 when root with apt-get, else 0), E2E_PREPARE_FOR (kubeconfig: for a run on a
# cluster the suite did not make — `make e2e` sets it when PYTEST_ARGS has --kubeconfig: no kind,
# no node image, no inotify limits, only the workload images and their names).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=offline/lib.sh
. "$here/offline/lib.sh"
# shellcheck source=offline/versions.env
. "$here/offline/versions.env"
cache=${E2E_CACHE:-$HOME/.cache/pod-lifecycle-e2e}
offline=${OFFLINE:-auto}
for_kubeconfig=0
case ${E2E_PREPARE_FOR:-} in
  kubeconfig) for_kubeconfig=1 ;;
  "") ;;
  *) die "E2E_PREPARE_FOR=$E2E_PREPARE_FOR: give kubeconfig or nothing" ;;
esac

# -- the Kubernetes version, before anything is pulled or built ------------------------------------
# a minor of the upgrade path (versions.env K8S_VERSIONS: what the suite documents and the offline
# build supports); any patch of it may be pulled
if [ -n "${K8S_VERSION:-}" ]; then
  v=${K8S_VERSION#v}
  [[ "$v" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || die "K8S_VERSION=$K8S_VERSION: give 1.MINOR or 1.MINOR.PATCH"
  minors=""
  for full in $K8S_VERSIONS; do minors+="${minors:+, }$(cut -d. -f1,2 <<<"${full#v}")"; done
  [[ ", $minors, " == *", $(cut -d. -f1,2 <<<"$v"), "* ]] \
    || die "K8S_VERSION=$K8S_VERSION is not supported: the suite documents and builds Kubernetes $minors (hack/offline/versions.env K8S_VERSIONS)"
  # OFFLINE=1 builds it: a patch the Go module proxy does not serve is refused here, before Docker
  if [ "$offline" = 1 ] && [ "$for_kubeconfig" = 0 ]; then
    "$here/offline/k8s-version.sh" "$K8S_VERSION" > /dev/null
  fi
fi

# -- Docker engine -------------------------------------------------------------------------------
start_default=0
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && start_default=1
start_docker=${E2E_START_DOCKER:-$start_default}
if ! command -v docker >/dev/null || ! timeout 10 docker info >/dev/null 2>&1; then
  if [ "$start_docker" = 1 ]; then
    "$here/offline/docker.sh"   # installs Debian's docker.io if needed, starts dockerd
  elif ! command -v docker >/dev/null; then
    die "the docker CLI is not installed: install Docker (kind runs its nodes as Docker containers), or run as root with E2E_START_DOCKER=1 to install Debian's docker.io"
  else
    die "no Docker engine answers (docker info failed within 10 s): start Docker, or run as root with E2E_START_DOCKER=1 to install and start Debian's docker.io"
  fi
elif [ "$(id -u)" = 0 ]; then
  "$here/offline/docker.sh"   # checks the runtime wrapper where the host needs it; never restarts an engine
fi

# -- inotify limits ---------------------------------------------------------------------------------
# Every kind node runs systemd and a kubelet, each with inotify instances: at the distribution's
# default (128 per user) the fifth or sixth node of the host fails to boot ("exec failed: setns",
# kubeadm killed). kind's known issues ("Pod errors due to too many open files") ask for these.
want_instances=512 want_watches=524288
have_instances=$(cat /proc/sys/fs/inotify/max_user_instances 2>/dev/null || echo "$want_instances")
have_watches=$(cat /proc/sys/fs/inotify/max_user_watches 2>/dev/null || echo "$want_watches")
# (a --kubeconfig run starts no kind node)
if [ "$for_kubeconfig" = 0 ] && (( have_instances < want_instances || have_watches < want_watches )); then
  if [ "$(id -u)" = 0 ] && sysctl -q -w fs.inotify.max_user_instances=$(( have_instances > want_instances ? have_instances : want_instances )) \
       fs.inotify.max_user_watches=$(( have_watches > want_watches ? have_watches : want_watches )) 2>/dev/null; then
    step "inotify: raised to max_user_instances=$(cat /proc/sys/fs/inotify/max_user_instances), max_user_watches=$(cat /proc/sys/fs/inotify/max_user_watches) (kind's known issue: several clusters)"
  else
    step "warning: fs.inotify.max_user_instances=$have_instances, max_user_watches=$have_watches: below kind's $want_instances/$want_watches; with several clusters alive new nodes may fail to boot (raise them with sysctl as root)"
  fi
fi

# -- node image --------------------------------------------------------------------------------------
image=${NODE_IMAGE:-}
if [ "$for_kubeconfig" = 1 ]; then
  step "--kubeconfig run: no kind, no node image (the cluster is yours); the workload images only"
elif [ -z "$image" ] && [ "$offline" != 1 ]; then
  if [ -z "${K8S_VERSION:-}" ]; then
    need go "Go is needed to read kind's default node image from its module (or set NODE_IMAGE)"
    kind_dir=$(kind_module_dir)
    [ -d "$kind_dir" ] || die "could not fetch sigs.k8s.io/kind@$KIND_VERSION from the Go module proxy (set NODE_IMAGE)"
    image=$(sed -n 's/^const Image = "\(.*\)"/\1/p' "$kind_dir/pkg/apis/config/defaults/image.go")
  else
    v=${K8S_VERSION#v}   # checked above
    for full in $K8S_VERSIONS; do [[ "$full" == "v$v" || "$full" == "v$v."* ]] && v=${full#v} && break; done
    image=kindest/node:v$v
  fi
fi
if [ "$for_kubeconfig" = 0 ] && [ -n "$image" ] && [ "$offline" != 1 ]; then
  if docker image inspect "$image" >/dev/null 2>&1 || { step "pulling $image"; timeout 600 docker pull "$image" >&2; }; then
    offline=0
  elif [ "$offline" = 0 ] || [ -n "${NODE_IMAGE:-}" ]; then
    die "node image $image cannot be pulled (and OFFLINE=0 or NODE_IMAGE given)"
  else
    step "$image cannot be pulled: building the node image offline (hack/offline)"
  fi
fi
# -- the suite's own workload image (no registry copy): tagged by a hash of its source --------------
app_dir=$here/images/lifecycle-app
app=pod-lifecycle-e2e/lifecycle-app:src-$(cat "$app_dir"/go.mod "$app_dir"/go.sum "$app_dir"/*.go "$app_dir"/build.sh | sha256sum | cut -c1-10)
if ! docker image inspect "$app" >/dev/null 2>&1; then
  need go "Go is needed to build the suite's HTTP workload (hack/images/lifecycle-app)"
  "$app_dir/build.sh" "$app"
fi
# -- the IM family's registry (CNCF distribution from its Go module; no registry copy either) -------
# keyed by its version and recipe (hack/images/registry/build.sh); without it the IM tests skip
if ! "$here/images/registry/build.sh" >/dev/null; then
  step "warning: the registry image could not be built (hack/images/registry/build.sh): the IM tests will skip"
fi

# -- a --kubeconfig run: the names of the images its nodes must have (it loads nothing) -------------
# busybox: E2E_BUSYBOX_IMAGE when given, else the one Docker has here (upstream's, then the offline
# build's: what `make foreign-cluster` loaded), else pulled, else built from Debian's busybox-static
if [ "$for_kubeconfig" = 1 ]; then
  busybox=${E2E_BUSYBOX_IMAGE:-}
  if [ -z "$busybox" ]; then
    upstream=$(cd "$here/.." && python3 -c 'from e2e.cluster.images import BUSYBOX; print(BUSYBOX)')
    local_bb=""
    dpkg -s busybox-static >/dev/null 2>&1 \
      && local_bb=pod-lifecycle-e2e/busybox:debian-$(dpkg-query -W -f '${Version}' busybox-static | sed 's/[^A-Za-z0-9_.-]/_/g')
    if docker image inspect "$upstream" >/dev/null 2>&1; then busybox=$upstream
    elif [ -n "$local_bb" ] && docker image inspect "$local_bb" >/dev/null 2>&1; then busybox=$local_bb
    elif [ "$offline" != 1 ] && { step "pulling $upstream"; timeout 120 docker pull "$upstream" >&2; }; then busybox=$upstream
    else
      [ -n "$local_bb" ] || die "$upstream cannot be pulled and busybox-static is not installed to build one (apt-get install busybox-static, or set E2E_BUSYBOX_IMAGE)"
      "$here/offline/build-busybox.sh" "$local_bb"
      busybox=$local_bb
    fi
  fi
  step "--kubeconfig run: its nodes need $busybox and $app (and for IM $("$here/images/registry/build.sh" --tag)): docs/your-own-cluster.md"
  echo "E2E_BUSYBOX_IMAGE=$busybox"
  echo "E2E_APP_IMAGE=$app"
  # the suite's bridge guard (e2e/cluster/egress.py) covers only a cluster on the suite's own network,
  # such as `make foreign-cluster`'s (offline-built nodes: they need nothing outside); without this
  # line it fell back to public, and `make wire-check` re-armed that bridge to forward public unicast
  echo "E2E_EGRESS=none"
  exit 0
fi

if [ "$offline" != 0 ]; then
  "$here/offline/build.sh" "${K8S_VERSION:-}"
  echo "E2E_APP_IMAGE=$app"
  echo "E2E_EGRESS=none"   # nodes need nothing outside the machine (e2e/cluster/egress.py)
  exit 0
fi

# -- online: kind and the workload images ----------------------------------------------------------
kind_bin=$(command -v kind || true)
if [ -z "$kind_bin" ] || [ "$("$kind_bin" version | awk '{print $2}')" != "$KIND_VERSION" ]; then
  kind_bin=$cache/offline/bin/kind-$KIND_VERSION
  if [ ! -x "$kind_bin" ]; then
    need go "kind $KIND_VERSION is not on PATH and Go is missing to install it: install kind $KIND_VERSION"
    mkdir -p "$cache/offline/bin"
    step "kind $KIND_VERSION: go install"
    GOBIN=$cache/offline/bin.tmp go install "sigs.k8s.io/kind@$KIND_VERSION"
    mv "$cache/offline/bin.tmp/kind" "$kind_bin"
  fi
fi
# a node image built by hack/offline and pulled from a registry of your own (NODE_IMAGE=host:port/...)
# has no kindnetd and needs nothing outside: the offline patch (static CNI) and no egress, as if built here
patch="" egress=public
if cid=$(docker create "$image" 2>/dev/null); then
  if docker cp "$cid:/etc/cni/net.d/10-offline-ptp.conflist" - >/dev/null 2>&1; then
    patch=$here/offline/kind-offline.yaml egress=none
    step "$image is an offline build (static CNI 10-offline-ptp): profile patch hack/offline/kind-offline.yaml, E2E_EGRESS=none"
  fi
  docker rm "$cid" >/dev/null
fi
busybox=$(cd "$here/.." && python3 -c 'from e2e.cluster.images import BUSYBOX; print(BUSYBOX)')
docker image inspect "$busybox" >/dev/null 2>&1 || { step "pulling $busybox"; docker pull "$busybox" >&2; }
cat <<ENV
E2E_KIND=$kind_bin
E2E_NODE_IMAGE=$image
E2E_PROFILE_PATCH=$patch
E2E_BUSYBOX_IMAGE=$busybox
E2E_APP_IMAGE=$app
E2E_EGRESS=$egress
ENV
