#!/usr/bin/env bash
# Builds the container image from the Dockerfile and, when asked, loads it into a local cluster.
#
#   npm run image [-- OPTIONS]          (or: bash scripts/image.sh OPTIONS)
#     --tag IMAGE        image name (default ghcr.io/coffer-dev/coffer:<package.json version>, the name the
#                        manifests and the chart use)
#     --load kind        then load it into kind       (KIND_CLUSTER, default "kind", names the cluster)
#     --load minikube    then load it into minikube   (MINIKUBE_PROFILE names the profile)
#     --engine NAME      docker, podman or buildah (default: the first of them that can build here)
#     --dry-run          print the build plan and the exact commands; run nothing
#
# The engine must be able to build: a docker CLI without a reachable daemon does not count. Without one, the
# script prints the commands to run where one exists and exits 3. With --load the image is built, then
# handed to the cluster's own container runtime, so a Deployment with imagePullPolicy IfNotPresent (as in
# deploy/ and the chart) starts without any registry.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VERSION=$(sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "$ROOT/package.json" | head -n1)
IMAGE="ghcr.io/coffer-dev/coffer:$VERSION"
LOAD='' ENGINE='' DRY_RUN=0

die() { printf 'image: %s\n' "$*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) IMAGE=${2:?--tag needs an image name}; shift ;;
    --load) LOAD=${2:?--load needs kind or minikube}; shift ;;
    --engine) ENGINE=${2:?--engine needs docker, podman or buildah}; shift ;;
    --dry-run) DRY_RUN=1 ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
case "$LOAD" in ''|kind|minikube) ;; *) die "--load takes kind or minikube, not '$LOAD'" ;; esac

# ------------------------------------------------------------------ which engine can build here
usable() {
  case "$1" in
    docker) command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 ;;
    podman) command -v podman >/dev/null 2>&1 && podman info >/dev/null 2>&1 ;;
    buildah) command -v buildah >/dev/null 2>&1 ;;
    *) die "--engine takes docker, podman or buildah, not '$1'" ;;
  esac
}
if [ -z "$ENGINE" ]; then
  for candidate in docker podman buildah; do
    if usable "$candidate"; then ENGINE=$candidate; break; fi
  done
elif ! usable "$ENGINE"; then
  printf 'image: %s cannot build here (not installed, or its daemon does not answer)\n' "$ENGINE" >&2
  ENGINE=''
fi

# ------------------------------------------------------------------ the commands
build_command() { # engine
  case "$1" in
    buildah) printf 'buildah build --build-arg VERSION=%s -t %s %s' "$VERSION" "$IMAGE" "$ROOT" ;;
    *) printf '%s build --build-arg VERSION=%s -t %s %s' "$1" "$VERSION" "$IMAGE" "$ROOT" ;;
  esac
}
load_command() { # engine
  local archive="${TMPDIR:-/tmp}/coffer-image.tar"
  case "$LOAD:$1" in
    kind:docker) printf 'kind load docker-image %s --name %s' "$IMAGE" "${KIND_CLUSTER:-kind}" ;;
    kind:*) printf '%s save -o %s %s && kind load image-archive %s --name %s' "$(save_engine "$1")" "$archive" "$IMAGE" "$archive" "${KIND_CLUSTER:-kind}" ;;
    minikube:*) printf 'minikube image load %s%s' "$IMAGE" "${MINIKUBE_PROFILE:+ --profile $MINIKUBE_PROFILE}" ;;
  esac
}
save_engine() { [ "$1" = buildah ] && echo podman || echo "$1"; }
# buildah builds into the storage podman reads; `buildah push IMAGE docker-archive:FILE` works too

plan() { # engine shown in the commands
  echo "Build plan for $IMAGE (version $VERSION)"
  echo "  Dockerfile: $ROOT/Dockerfile; build context: $ROOT, limited by .dockerignore to:"
  grep '^!' "$ROOT/.dockerignore" | sed 's/^!/    /'
  echo "  stages:"
  grep -n '^FROM ' "$ROOT/Dockerfile" | sed 's/^/    line /'
  echo "  base image: $(sed -n 's/^ARG NODE_IMAGE=//p' "$ROOT/Dockerfile") (pulled from its registry at build time)"
  echo "  commands:"
  echo "    $(build_command "$1")"
  [ -n "$LOAD" ] && echo "    $(load_command "$1")"
  [ -z "$LOAD" ] && echo "    (add --load kind or --load minikube to hand the image to a local cluster)"
  return 0
}

if [ "$DRY_RUN" = 1 ]; then
  plan "${ENGINE:-docker}"
  [ -n "$ENGINE" ] && echo "  engine: $ENGINE (can build here)" || echo "  engine: none can build here (docker, podman, buildah); run the commands where one can"
  exit 0
fi

if [ -z "$ENGINE" ]; then
  {
    echo "image: no container engine can build here (docker with a running daemon, podman or buildah)."
    echo "Run, on a machine with one, in a checkout of this repository:"
    echo "  $(build_command docker)"
    [ -n "$LOAD" ] && echo "  $(load_command docker)"
  } >&2
  exit 3
fi

echo "+ $(build_command "$ENGINE")" >&2
eval "$(build_command "$ENGINE")"
if [ -n "$LOAD" ]; then
  command -v "$LOAD" >/dev/null 2>&1 || die "$LOAD is not on PATH: the image is built ($IMAGE); load it with: $(load_command "$ENGINE")"
  echo "+ $(load_command "$ENGINE")" >&2
  eval "$(load_command "$ENGINE")"
fi
echo "$IMAGE"
