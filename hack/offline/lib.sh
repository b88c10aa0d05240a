# shellcheck shell=bash
# Shared helpers for hack/offline scripts (sourced, not executed).
_t0=${_OFFLINE_T0:-$(date +%s)}
export _OFFLINE_T0=$_t0
step() { printf '[offline %4ss] %s\n' "$(( $(date +%s) - _t0 ))" "$*" >&2; }
die() { printf 'pod-lifecycle-e2e: error: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }

# go_build_wrapped OUT_DIR MODULE@VERSION PACKAGE...
# Build packages of a published Go module through a throw-away wrapper module that requires
# it (so the module's own replace directives, if any, do not matter). Honors CGO_ENABLED,
# BUILDTAGS and LDFLAGS from the environment. Binaries are named after the package's last
# path element.
go_build_wrapped() {
  local out=$1 modver=$2; shift 2
  local dir
  dir=$(mktemp -d)
  (
    cd "$dir" || exit
    printf 'module offline.local/wrapper\n\ngo 1.24\n\nrequire %s %s\n' "${modver%@*}" "${modver#*@}" > go.mod
    {
      printf '//go:build tools\n\npackage tools\n\nimport (\n'
      for p in "$@"; do printf '\t_ "%s"\n' "$p"; done
      printf ')\n'
    } > tools.go
    GOFLAGS=-mod=mod go mod tidy 2> >(grep -v "^go: downloading" >&2)
    for p in "$@"; do
      step "go build $p ($modver)"
      GOFLAGS=-mod=mod go build -trimpath -tags "${BUILDTAGS:-}" -ldflags "${LDFLAGS:-} -s -w" \
        -o "$out/$(basename "$p")" "$p"
    done
  )
  local rc=$?
  rm -rf "$dir"
  return $rc
}

# kind_module_dir: the sigs.k8s.io/kind module source at KIND_VERSION (from the Go proxy).
kind_module_dir() {
  local d
  d=$(mktemp -d)
  (cd "$d" && go mod init x >/dev/null 2>&1 && go mod download -json "sigs.k8s.io/kind@$KIND_VERSION" | jq -r .Dir)
  rm -rf "$d"
}

# docker_build_local TAG < Dockerfile: build from a Dockerfile on stdin whose FROM images are
# all local (the classic builder never pulls an image it has).
docker_build_local() {
  local ctx
  ctx=$(mktemp -d)
  cat > "$ctx/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "$1" "$ctx" >/dev/null
  local rc=$?
  rm -rf "$ctx"
  return $rc
}
