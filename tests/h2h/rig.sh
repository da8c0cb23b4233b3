#!/usr/bin/env bash
# The head-to-head rig: tfjob-operator and training-operator v1.9.4 on the same kind of
# kube-apiserver (tests/kube/harness.sh), one at a time, with an audit log of every request.
#
#   tests/h2h/rig.sh build-v19          build training-operator v1.9.4 from the Go module proxy
#                                       unless cached ($TFJOB_KUBE_CACHE/bin/training-operator-
#                                       v1.9.4/training-operator.v1); prints its path
#   tests/h2h/rig.sh crd-v19            prints the path of v1.9.4's own TFJob CRD (Go module cache)
#   tests/h2h/rig.sh crd-scheduler-plugins
#                                       prints the path of scheduler-plugins' PodGroup CRD (Go module
#                                       sigs.k8s.io/scheduler-plugins, the version v1.9.4 requires)
#   tests/h2h/rig.sh start DIR          harness.sh start DIR with v1.9.4's CRD and an audit log
#                                       (DIR/audit.log: every request, metadata level; with
#                                       H2H_AUDIT_STATUS_BODIES=1 the bodies of TFJob status
#                                       writes too, request and response), plus what
#                                       v1.9.4 needs to start: namespace kubeflow, an empty Secret
#                                       training-operator-webhook-cert (its cert rotator fills it)
#   tests/h2h/rig.sh stop DIR           harness.sh stop DIR
#   tests/h2h/rig.sh argv OPERATOR DIR [FLAGS...]
#                                       prints, one per line, the command line that runs OPERATOR
#                                       against DIR's server: ours (tfjob-operator --compat
#                                       training-operator-1.9), ours-documented, or v1.9.4; FLAGS
#                                       (e.g. --kube-api-qps 500) are appended
#   tests/h2h/rig.sh agent OPERATOR     prints the user agent prefix of OPERATOR's requests
#
# v1.9's webhook server listens on :9443 on every interface and its certificate directory is
# fixed (/tmp/k8s-webhook-server/serving-certs): run it in a network namespace of its own with a
# private mount there (tests/suites/67-head-to-head.sh and bench/operator.sh use `unshare -nm`),
# where it is reachable from loopback only and does not meet another run's certificates.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
H="$ROOT/tests/kube/harness.sh"
CACHE="${TFJOB_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libtfjob/kube}"
# The training-operator release compared with (v1.9.4, its last); H2H_TRAINING_OPERATOR_VERSION
# picks another v1.9.x, e.g. v1.9.2.
V19="${H2H_TRAINING_OPERATOR_VERSION:-v1.9.4}"
V19_MODULE=github.com/kubeflow/training-operator
OURS="${TFJOB_OPERATOR:-$ROOT/build/src/tfjob-operator/tfjob-operator}"
CERT_DIR=/tmp/k8s-webhook-server/serving-certs

die() { echo "rig: error: $*" >&2; exit 1; }

need_go() {
  command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"; }
  command -v go >/dev/null 2>&1 || die "'go' not found: training-operator $V19 is built from the Go module proxy"
}

cmd_build_v19() {
  local out="$CACHE/bin/training-operator-$V19"
  if [ ! -x "$out/training-operator.v1" ]; then
    need_go
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.build-v19.lock"
    flock 9
    if [ ! -x "$out/training-operator.v1" ]; then
      echo "rig: building training-operator $V19 (first time only; several minutes) ..." >&2
      rm -rf "$out.tmp"
      mkdir -p "$out.tmp"
      CGO_ENABLED=0 GOBIN="$out.tmp" GOFLAGS="-p=${TFJOB_KUBE_BUILD_JOBS:-2}" \
        go install -trimpath -ldflags "-s -w" "$V19_MODULE/cmd/training-operator.v1@$V19" >&2 ||
        die "building training-operator $V19 failed"
      rm -rf "$out"
      mv "$out.tmp" "$out"
    fi
    exec 9>&-
  fi
  echo "$out/training-operator.v1"
}

# module_file MODULE@VERSION PATH: the path of a file of a Go module (downloaded if needed, through
# tests/diff's go.sum).
module_file() {
  need_go
  local dir
  dir="$(cd "$ROOT/tests/diff" && go mod download -json "$1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
  [ -f "$dir/$2" ] || die "no $2 in $dir"
  echo "$dir/$2"
}

cmd_crd_v19() { module_file "$V19_MODULE@$V19" manifests/base/crds/kubeflow.org_tfjobs.yaml; }

# The sigs.k8s.io/scheduler-plugins version the compared training-operator requires (its go.mod):
# v0.34.7 for v1.9.4, v0.28.9 for v1.9.2.
scheduler_plugins_version() {
  need_go
  local gomod v
  gomod="$(cd "$ROOT/tests/diff" && go mod download -json "$V19_MODULE@$V19" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["GoMod"])')"
  v="$(awk '$1 == "sigs.k8s.io/scheduler-plugins" { print $2; exit }' "$gomod")"
  [ -n "$v" ] || die "no sigs.k8s.io/scheduler-plugins in $gomod"
  echo "$v"
}

cmd_crd_scheduler_plugins() {
  module_file "sigs.k8s.io/scheduler-plugins@$(scheduler_plugins_version)" \
    config/crd/bases/scheduling.x-k8s.io_podgroups.yaml
}

cmd_start() {
  [ $# -eq 1 ] || die "usage: rig.sh start DIR"
  mkdir -p "$1"
  local dir; dir="$(cd "$1" && pwd)"
  cat >"$dir/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
EOF
  if [ "${H2H_AUDIT_STATUS_BODIES:-}" = 1 ]; then
    printf -- '- level: RequestResponse\n  resources: [{group: kubeflow.org, resources: ["tfjobs/status"]}]\n' \
      >>"$dir/audit-policy.yaml"
  fi
  echo "- level: Metadata" >>"$dir/audit-policy.yaml"
  # The servers live as long as the shell that runs rig.sh start (not rig.sh itself).
  TFJOB_KUBE_OWNER_PID="${TFJOB_KUBE_OWNER_PID:-$PPID}" TFJOB_KUBE_CRD="${TFJOB_KUBE_CRD:-$(cmd_crd_v19)}" \
  TFJOB_KUBE_APISERVER_ARGS="--audit-policy-file=$dir/audit-policy.yaml --audit-log-path=$dir/audit.log --audit-log-format=json --audit-log-maxsize=0 ${TFJOB_KUBE_APISERVER_ARGS:-}" \
    "$H" start "$dir" 2>&1 | tail -n 1 >&2
  # shellcheck disable=SC1091
  . "$dir/env"
  local a=(curl -sS --fail --max-time 10 --cacert "$KUBE_CA_CERT" --cert "$KUBE_ADMIN_CERT" --key "$KUBE_ADMIN_KEY"
           -H 'Content-Type: application/json' -o /dev/null)
  "${a[@]}" -X POST -d '{"metadata":{"name":"kubeflow"}}' "$KUBE_APISERVER_URL/api/v1/namespaces"
  "${a[@]}" -X POST -d '{"metadata":{"name":"training-operator-webhook-cert"}}' \
    "$KUBE_APISERVER_URL/api/v1/namespaces/kubeflow/secrets"
}

# v1.9 serves its webhook only once a certificate is in CERT_DIR (the cert rotator writes the
# one it generates there too); a self-signed one is enough, nothing calls the webhook.
v19_certs() {
  [ -f "$CERT_DIR/tls.crt" ] && [ -f "$CERT_DIR/tls.key" ] && return 0
  mkdir -p "$CERT_DIR"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$CERT_DIR/tls.key" -out "$CERT_DIR/tls.crt" -subj "/CN=training-operator.kubeflow.svc" 2>/dev/null
}

cmd_argv() {
  [ $# -ge 2 ] || die "usage: rig.sh argv ours|ours-documented|$V19 DIR [FLAGS...]"
  local op="$1" dir; dir="$(cd "$2" && pwd)"; shift 2
  local common=(--kubeconfig "$dir/admin.kubeconfig" --enable-scheme=tfjob
                --metrics-bind-address 0 --health-probe-bind-address 0)
  case "$op" in
    ours) printf '%s\n' "$OURS" "${common[@]}" --compat training-operator-1.9 "$@" ;;
    ours-documented) printf '%s\n' "$OURS" "${common[@]}" "$@" ;;
    "$V19")
      v19_certs
      # controller-runtime: 0 turns metrics off; the probe address must be an address.
      printf '%s\n' "$(cmd_build_v19)" --kubeconfig "$dir/admin.kubeconfig" --enable-scheme=tfjob \
        --metrics-bind-address 0 --health-probe-bind-address 127.0.0.1:0 "$@" ;;
    *) die "unknown operator $op (ours, ours-documented, $V19)" ;;
  esac
}

cmd_agent() {
  case "$1" in
    ours|ours-documented) echo "tfjob-operator/" ;;
    "$V19") echo "training-operator" ;;
    *) die "unknown operator $1" ;;
  esac
}

case "${1:-}" in
  build-v19) shift; cmd_build_v19 ;;
  crd-v19) shift; cmd_crd_v19 ;;
  crd-scheduler-plugins) shift; cmd_crd_scheduler_plugins ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; "$H" stop "$@" ;;
  argv) shift; cmd_argv "$@" ;;
  agent) shift; cmd_agent "$@" ;;
  *) echo "usage: $0 build-v19 | crd-v19 | crd-scheduler-plugins | start DIR | stop DIR | argv OPERATOR DIR [FLAGS...] | agent OPERATOR" >&2; exit 2 ;;
esac
