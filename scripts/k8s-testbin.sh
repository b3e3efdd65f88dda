#!/usr/bin/env bash
# Builds the Kubernetes control-plane binaries the cluster tests run against
# (etcd, kube-apiserver, kube-controller-manager) plus helm and kustomize, from
# published Go modules, into a cache directory outside the repository.
#
#   scripts/k8s-testbin.sh               build if needed; last stdout line = the directory
#   scripts/k8s-testbin.sh --print-dir   print the directory; exit 1 if it is not built yet
#   scripts/k8s-testbin.sh --force       rebuild even if the stamp says it is complete
#   scripts/k8s-testbin.sh --update-k8s v1.35.9 [--update-helm v4.3.2] [--update-kustomize v5.8.3]
#                                        regenerate test/k8s-bin/go.mod (+ helm/, kustomize/go.mod)
#                                        for another release (network: Go module proxy)
#
# The versions come from the committed wrapper modules:
#   test/k8s-bin/go.mod       k8s.io/kubernetes + go.etcd.io/etcd/server/v3 (the version
#                             k8s.io/kubernetes' own go.mod pins) + one replace per staging module
#   test/k8s-bin/helm/go.mod  helm.sh/helm/v4 (separate module: helm needs newer k8s.io/* libraries,
#                             which must not leak into the apiserver's module graph)
#   test/k8s-bin/kustomize/go.mod  sigs.k8s.io/kustomize/kustomize/v5 (separate module: in helm's
#                             it would bump sigs.k8s.io/kustomize/api)
#
# Environment:
#   COFFER_TESTBIN_DIR  output dir (default $HOME/.cache/coffer/testbin/<k8s version>)
#   GO                  go binary (default: `go` on PATH, else /usr/local/go/bin/go)
#
# Builds run one after another (go build's own -p defaults to the CPU count); peak
# memory stays around a few GB. Log output goes to stderr; stdout carries only the
# directory, so `dir=$(scripts/k8s-testbin.sh | tail -n1)` works.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD="$ROOT/test/k8s-bin"
HELM_MOD="$MOD/helm"
KUSTOMIZE_MOD="$MOD/kustomize"
MIN_GO_MINOR=26 # go 1.26: the wrapper modules' go line; keep in sync with test/k8s-bin/go.mod

log() { printf 'k8s-testbin: %s\n' "$*" >&2; }
die() { printf 'k8s-testbin: ERROR: %s\n' "$*" >&2; exit 1; }

MODE=build FORCE=0 NEW_K8S= NEW_HELM= NEW_KUSTOMIZE=
while [ $# -gt 0 ]; do
  case "$1" in
    --print-dir) MODE=print ;;
    --force) FORCE=1 ;;
    --update-k8s) MODE=update; NEW_K8S=${2:?--update-k8s needs a version like v1.35.8}; shift ;;
    --update-helm) MODE=update; NEW_HELM=${2:?--update-helm needs a version like v4.3.1}; shift ;;
    --update-kustomize) MODE=update; NEW_KUSTOMIZE=${2:?--update-kustomize needs a version like v5.8.2}; shift ;;
    -h|--help) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done

# ---------------------------------------------------------------- go toolchain
find_go() {
  if [ -n "${GO:-}" ]; then command -v "$GO" || return 1
  elif command -v go >/dev/null 2>&1; then command -v go
  elif [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go
  else return 1; fi
}
need_go() {
  GO_BIN=$(find_go) || die "Go not found. The cluster tests build kube-apiserver/etcd from Go modules.
  Install Go >= 1.$MIN_GO_MINOR: e.g. download https://go.dev/dl/ into /usr/local/go and add /usr/local/go/bin
  to PATH, or apt-get install golang-1.$MIN_GO_MINOR (if your distribution has it); or set GO=/path/to/go."
  local v; v=$("$GO_BIN" env GOVERSION 2>/dev/null) || die "'$GO_BIN env GOVERSION' failed"
  local minor; minor=$(printf '%s' "$v" | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
  if [ -z "$minor" ] || [ "$minor" -lt "$MIN_GO_MINOR" ]; then
    die "found $v at $GO_BIN, need Go >= 1.$MIN_GO_MINOR (GOTOOLCHAIN=local: no automatic toolchain download).
  Install Go >= 1.$MIN_GO_MINOR (https://go.dev/dl/ or apt-get install golang-1.$MIN_GO_MINOR) or set GO=/path/to/go."
  fi
  export GOTOOLCHAIN=local CGO_ENABLED=0
  # A user-level GOFLAGS=-mod=vendor or similar must not change how the wrapper resolves.
  export GOFLAGS="${GOFLAGS:-} -mod=readonly"
}

modver() { # modver <go.mod> <module path> -> version from a require line
  sed -n "s#^[[:space:]]*\(require[[:space:]]\{1,\}\)\{0,1\}$2 \(v[^[:space:]]*\).*#\2#p" "$1" | head -n1
}

# ---------------------------------------------------------------- --update-*
update_modules() {
  need_go
  export GOFLAGS="${GOFLAGS% -mod=readonly}"
  local tmp; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' RETURN
  if [ -n "$NEW_K8S" ]; then
    case "$NEW_K8S" in v1.*.*) ;; *) die "k8s version must look like v1.35.8" ;; esac
    local stg="v0.${NEW_K8S#v1.}"
    log "resolving k8s.io/kubernetes@$NEW_K8S"
    local km; km=$(cd "$tmp" && "$GO_BIN" mod download -json "k8s.io/kubernetes@$NEW_K8S" |
      sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
    [ -f "$km" ] || die "could not download k8s.io/kubernetes@$NEW_K8S"
    local etcd; etcd=$(modver "$km" go.etcd.io/etcd/server/v3)
    local gd; gd=$(sed -n 's/^godebug default=\(go[0-9.]*\)/\1/p' "$km")
    grep -Eq '^[[:space:]]*exclude' "$km" && log "WARNING: $km has exclude lines; copy them into test/k8s-bin/go.mod"
    {
      echo "// Wrapper module that builds kube-apiserver, kube-controller-manager and etcd for the"
      echo "// cluster tests (scripts/k8s-testbin.sh). Generated by scripts/k8s-testbin.sh --update-k8s;"
      echo "// keep it isolated: nothing else may live in this module (shared dependencies must stay at"
      echo "// the versions k8s.io/kubernetes pins)."
      echo "module coffer.dev/test/k8sbin"
      echo
      echo "go 1.$MIN_GO_MINOR"
      [ -z "$gd" ] || { echo; echo "godebug default=$gd"; }
      echo
      echo "tool ("
      echo "	go.etcd.io/etcd/server/v3"
      echo "	k8s.io/kubernetes/cmd/kube-apiserver"
      echo "	k8s.io/kubernetes/cmd/kube-controller-manager"
      echo ")"
      echo
      echo "require ("
      echo "	go.etcd.io/etcd/server/v3 $etcd"
      echo "	k8s.io/kubernetes $NEW_K8S"
      echo ")"
      echo
      echo "// Staging modules of k8s.io/kubernetes (its own replaces point into ./staging and are"
      echo "// ignored for dependencies), mapped to their published tags."
      echo "replace ("
      sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$km" |
        while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$stg"; done
      echo ")"
    } > "$MOD/go.mod"
    rm -f "$MOD/go.sum"
    (cd "$MOD" && "$GO_BIN" mod tidy) || die "go mod tidy failed in $MOD"
    # Nothing may be bumped above what k8s.io/kubernetes pins.
    (cd "$MOD" && "$GO_BIN" list -m -f '{{.Path}} {{.Version}}' all) | sort > "$tmp/w"
    awk '/^\t[a-z]/ && !/=>/ {print $1, $2}' "$km" | sort > "$tmp/k"
    local bumped; bumped=$(join "$tmp/w" "$tmp/k" | awk '$2!=$3 && $3!="v0.0.0"')
    [ -z "$bumped" ] || die "wrapper resolves versions different from k8s.io/kubernetes@$NEW_K8S:
$bumped"
    log "test/k8s-bin/go.mod now pins k8s.io/kubernetes $NEW_K8S, etcd $etcd, staging $stg"
  fi
  if [ -n "$NEW_HELM" ]; then
    case "$NEW_HELM" in v4.*) ;; *) die "helm version must be v4.x (module helm.sh/helm/v4)" ;; esac
    printf '// Helm CLI for the chart tests, built by scripts/k8s-testbin.sh (separate from the\n// apiserver wrapper: helm needs newer k8s.io/* libraries).\nmodule coffer.dev/test/k8sbin/helm\n\ngo 1.%s\n' \
      "$MIN_GO_MINOR" > "$HELM_MOD/go.mod"
    rm -f "$HELM_MOD/go.sum"
    (cd "$HELM_MOD" && "$GO_BIN" get -tool "helm.sh/helm/v4/cmd/helm@$NEW_HELM" && "$GO_BIN" mod tidy) ||
      die "could not resolve helm $NEW_HELM"
    log "test/k8s-bin/helm/go.mod now pins helm.sh/helm/v4 $NEW_HELM"
  fi
  if [ -n "$NEW_KUSTOMIZE" ]; then
    case "$NEW_KUSTOMIZE" in v5.*) ;; *) die "kustomize version must be v5.x (module sigs.k8s.io/kustomize/kustomize/v5)" ;; esac
    mkdir -p "$KUSTOMIZE_MOD"
    printf '// kustomize CLI for the deploy/ tests, built by scripts/k8s-testbin.sh (separate module: in the helm\n// module it would bump sigs.k8s.io/kustomize/api, which helm resolves through k8s.io/kubectl).\nmodule coffer.dev/test/k8sbin/kustomize\n\ngo 1.%s\n' \
      "$MIN_GO_MINOR" > "$KUSTOMIZE_MOD/go.mod"
    rm -f "$KUSTOMIZE_MOD/go.sum"
    (cd "$KUSTOMIZE_MOD" && "$GO_BIN" get -tool "sigs.k8s.io/kustomize/kustomize/v5@$NEW_KUSTOMIZE" && "$GO_BIN" mod tidy) ||
      die "could not resolve kustomize $NEW_KUSTOMIZE (a release may need a newer Go than 1.$MIN_GO_MINOR)"
    log "test/k8s-bin/kustomize/go.mod now pins sigs.k8s.io/kustomize/kustomize/v5 $NEW_KUSTOMIZE"
  fi
}
if [ "$MODE" = update ]; then update_modules; exit 0; fi

# ---------------------------------------------------------------- versions, output dir
[ -f "$MOD/go.mod" ] && [ -f "$MOD/go.sum" ] || die "missing $MOD/go.mod or go.sum"
[ -f "$HELM_MOD/go.mod" ] && [ -f "$HELM_MOD/go.sum" ] || die "missing $HELM_MOD/go.mod or go.sum"
[ -f "$KUSTOMIZE_MOD/go.mod" ] && [ -f "$KUSTOMIZE_MOD/go.sum" ] || die "missing $KUSTOMIZE_MOD/go.mod or go.sum"
K8S=$(modver "$MOD/go.mod" k8s.io/kubernetes)
ETCD=$(modver "$MOD/go.mod" go.etcd.io/etcd/server/v3)
HELM=$(modver "$HELM_MOD/go.mod" helm.sh/helm/v4)
KUSTOMIZE=$(modver "$KUSTOMIZE_MOD/go.mod" sigs.k8s.io/kustomize/kustomize/v5)
[ -n "$K8S" ] && [ -n "$ETCD" ] && [ -n "$HELM" ] && [ -n "$KUSTOMIZE" ] || die "cannot read versions from the wrapper go.mod files"
OUT=${COFFER_TESTBIN_DIR:-${HOME:?HOME is not set}/.cache/coffer/testbin/$K8S}
BINS="etcd kube-apiserver kube-controller-manager helm kustomize"
SCRIPT_REV=1 # bump when build flags change, to invalidate existing stamps
STAMP_WANT="k8s=$K8S etcd=$ETCD helm=$HELM kustomize=$KUSTOMIZE rev=$SCRIPT_REV mods=$(cat "$MOD/go.mod" "$MOD/go.sum" \
  "$HELM_MOD/go.mod" "$HELM_MOD/go.sum" "$KUSTOMIZE_MOD/go.mod" "$KUSTOMIZE_MOD/go.sum" | sha256sum | cut -c1-16)"

complete() {
  [ -f "$OUT/.stamp" ] && [ "$(cat "$OUT/.stamp")" = "$STAMP_WANT" ] || return 1
  local b; for b in $BINS; do [ -x "$OUT/$b" ] || return 1; done
}

if [ "$MODE" = print ]; then
  echo "$OUT"
  complete || { log "not built yet (run scripts/k8s-testbin.sh)"; exit 1; }
  exit 0
fi
if [ "$FORCE" = 0 ] && complete; then echo "$OUT"; exit 0; fi

# ---------------------------------------------------------------- build
need_go
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
if ! flock -n 9; then
  log "another build into $OUT is running; waiting for it"
  flock 9
  if [ "$FORCE" = 0 ] && complete; then echo "$OUT"; exit 0; fi
fi
trap 'rc=$?; log "build FAILED (exit $rc). Output above; needs Go >= 1.$MIN_GO_MINOR and access to the Go module proxy ($("$GO_BIN" env GOPROXY 2>/dev/null))."; exit $rc' ERR

rm -f "$OUT/.stamp"
STG="$OUT/.partial"; rm -rf "$STG"; mkdir -p "$STG"
MINOR=${K8S#v1.}; MINOR=${MINOR%%.*}
LD_K8S="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LD_K8S="$LD_K8S -X $p.gitVersion=$K8S -X $p.gitMajor=1 -X $p.gitMinor=$MINOR -X $p.gitTreeState=clean"
done
LD_HELM="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM -X helm.sh/helm/v4/internal/version.gitTreeState=clean"

log "building k8s $K8S, etcd $ETCD, helm $HELM, kustomize $KUSTOMIZE into $OUT ($("$GO_BIN" env GOVERSION), $(nproc 2>/dev/null || echo ?) CPUs)"
build() { # build <name> <module dir> <ldflags> <package>
  local t0=$SECONDS
  log "go build $4"
  "$GO_BIN" -C "$2" build -trimpath -ldflags "$3" -o "$STG/$1" "$4"
  log "  $1 done in $((SECONDS - t0)) s"
}
build etcd "$MOD" "-s -w" go.etcd.io/etcd/server/v3
build kube-apiserver "$MOD" "$LD_K8S" k8s.io/kubernetes/cmd/kube-apiserver
build kube-controller-manager "$MOD" "$LD_K8S" k8s.io/kubernetes/cmd/kube-controller-manager
build helm "$HELM_MOD" "$LD_HELM" helm.sh/helm/v4/cmd/helm
# kustomize reads its version from the module build info (no -X needed).
build kustomize "$KUSTOMIZE_MOD" "-s -w" sigs.k8s.io/kustomize/kustomize/v5

# Smoke check: every binary runs and reports the expected version.
check_version() { # check_version <name> <expected substring> <command...>
  local out; out=$("${@:3}" 2>&1) || { log "$1 does not run: $out"; return 1; }
  case "$out" in *"$2"*) ;; *) log "$1 reports '$out', expected '$2'"; return 1 ;; esac
}
check_version etcd "etcd Version: ${ETCD#v}" "$STG/etcd" --version
check_version kube-apiserver "Kubernetes $K8S" "$STG/kube-apiserver" --version
check_version kube-controller-manager "Kubernetes $K8S" "$STG/kube-controller-manager" --version
check_version helm "$HELM" "$STG/helm" version --short
check_version kustomize "$KUSTOMIZE" "$STG/kustomize" version

for b in $BINS; do mv -f "$STG/$b" "$OUT/$b"; done
rmdir "$STG"
echo "$STAMP_WANT" > "$OUT/.stamp"
log "done in $SECONDS s: $(cd "$OUT" && du -ch $BINS | tail -n1 | cut -f1) of binaries"
echo "$OUT"
