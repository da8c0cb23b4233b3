#!/usr/bin/env bash
# Kueue for the Kueue suite (tests/suites/71-kueue.sh, bench/kueue.sh):
#
#   tests/kueue/kueue.sh build         build Kueue's manager from the Go module proxy unless cached
#                                      (go install sigs.k8s.io/kueue/cmd/kueue@v0.17.0 into
#                                      $TFJOB_KUBE_CACHE/bin/kueue-v0.17.0/kueue, under a lock;
#                                      about 7 minutes on 2 cores the first time); prints its path
#   tests/kueue/kueue.sh cached        prints that path if the binary is there, else fails
#   tests/kueue/kueue.sh module-dir    prints the directory of the Kueue module (Go module cache,
#                                      downloaded if needed): its CRDs and webhook definitions
#
# KUEUE_VERSION picks another release (default v0.17.0).
set -euo pipefail
CACHE="${TFJOB_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libtfjob/kube}"
VERSION="${KUEUE_VERSION:-v0.17.0}"
OUT="$CACHE/bin/kueue-$VERSION"

die() { echo "kueue.sh: error: $*" >&2; exit 1; }

need_go() {
  command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"; }
  command -v go >/dev/null 2>&1 || die "'go' not found: Kueue $VERSION is built from the Go module proxy"
}

cmd_build() {
  if [ ! -x "$OUT/kueue" ]; then
    need_go
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.build-kueue.lock"
    flock 9
    if [ ! -x "$OUT/kueue" ]; then
      echo "kueue.sh: building Kueue $VERSION (first time only; several minutes) ..." >&2
      rm -rf "$OUT.tmp"
      mkdir -p "$OUT.tmp"
      CGO_ENABLED=0 GOBIN="$OUT.tmp" GOFLAGS="-p=${TFJOB_KUBE_BUILD_JOBS:-2}" \
        nice -n 10 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kueue/cmd/kueue@$VERSION" >&2 ||
        die "building Kueue $VERSION failed"
      rm -rf "$OUT"
      mv "$OUT.tmp" "$OUT"
    fi
    exec 9>&-
  fi
  echo "$OUT/kueue"
}

cmd_module_dir() {
  need_go
  local dir
  dir="$(cd / && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kueue@$VERSION" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
  [ -f "$dir/config/components/webhook/manifests.yaml" ] || die "no Kueue module at $dir"
  echo "$dir"
}

case "${1:-}" in
  build) cmd_build ;;
  cached) [ -x "$OUT/kueue" ] && echo "$OUT/kueue" ;;
  module-dir) cmd_module_dir ;;
  *) echo "usage: $0 build | cached | module-dir" >&2; exit 2 ;;
esac
