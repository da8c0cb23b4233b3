#!/usr/bin/env bash
# Installing tfjob-operator on a cluster (docs/install.md, "Install on a cluster"):
# - the TFJob CRD installs with a client-side `kubectl apply -f` on a fresh API server (its
#   last-applied annotation fits in 256 KiB; training-operator v1.9.4's own CRD does not, which
#   the suite checks too, so the check can tell), and a minimal TFJob, and one using the pod
#   fields that have defaults, come back from `kubectl get -o yaml` exactly as with v1.9.4's CRD;
# - `kubectl kustomize` of deploy/kustomize/base and of every overlay, `helm lint` and
#   `helm template` of deploy/helm/tfjob-operator with its default and with other values: the
#   objects each should have, the image localhost/tfjob-operator:<meson.build's version>, and
#   every Deployment's args accepted by build/src/tfjob-operator/tfjob-operator (`ARGS --help`
#   exits 0; ARGS alone get as far as the Kubernetes client: no flag or value refused);
# - `kubectl apply --dry-run=server` of every rendering, and of examples/deploy/'s files,
#   against the harness's kube-apiserver (tests/kube/harness.sh), the CRD applied for real first.
# kubectl is the harness's (same version as kube-apiserver); helm v3.21.4 is built once with
# `go install` into the harness's cache. Without Go the suite is skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"; }
if ! command -v go >/dev/null 2>&1; then
  echo "46-deploy: skipped (no 'go' to build kubectl, kube-apiserver and helm)"
  exit 0
fi

failures=0
ok()   { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check() {  # DESCRIPTION COMMAND...
  local what="$1"; shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

BUILD_DIR=build scripts/build.sh >/dev/null
OP="$PWD/build/src/tfjob-operator/tfjob-operator"
H="$PWD/tests/kube/harness.sh"
eval "$("$H" build)"   # KUBE_APISERVER_BIN ETCD_BIN KUBECTL_BIN
K="$KUBECTL_BIN"
VERSION="$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" meson.build | head -n 1)"
IMAGE="localhost/tfjob-operator:$VERSION"
CHART=deploy/helm/tfjob-operator

# helm, built like the harness's binaries: once, cached by version, one build at a time.
HELM_VERSION=v3.21.4
CACHE="${TFJOB_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libtfjob/kube}"
HELM="$CACHE/bin/helm-$HELM_VERSION/helm"
if [ ! -x "$HELM" ]; then
  mkdir -p "$CACHE/bin"
  (
    flock 9
    if [ ! -x "$HELM" ]; then
      echo "46-deploy: building helm $HELM_VERSION (first time only) ..."
      rm -rf "$CACHE/bin/helm-$HELM_VERSION.tmp"
      GOBIN="$CACHE/bin/helm-$HELM_VERSION.tmp" CGO_ENABLED=0 \
        GOFLAGS="-p=${TFJOB_KUBE_BUILD_JOBS:-2} -buildvcs=false" \
        go install -trimpath -ldflags "-s -w" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
      rm -rf "$CACHE/bin/helm-$HELM_VERSION"
      mv "$CACHE/bin/helm-$HELM_VERSION.tmp" "$CACHE/bin/helm-$HELM_VERSION"
    fi
  ) 9>"$CACHE/.build.lock"
fi
echo "kubectl: $("$K" version --client 2>/dev/null | head -n 1); helm: $("$HELM" version --short)"

dir="$(mktemp -d)"
out="$dir/out"; mkdir -p "$out"
export HELM_CACHE_HOME="$dir/helm/cache" HELM_CONFIG_HOME="$dir/helm/config" HELM_DATA_HOME="$dir/helm/data"
cleanup() { "$H" stop "$dir/kube" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

# --- the renderings
# objects FILE: "Kind/name" of every object of a YAML stream, sorted, one a line.
objects() {
  python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d: print("%s/%s" % (d["kind"], d["metadata"]["name"]))' "$1" | sort
}
# deploy_field FILE EXPR: a Python expression over the (only) Deployment c of a stream (its
# first container is k, its pod spec p).
deploy_field() {
  python3 -c 'import sys, yaml
c = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Deployment"]
assert len(c) == 1, "%d Deployments" % len(c)
c = c[0]; p = c["spec"]["template"]["spec"]; k = p["containers"][0]
print(eval(sys.argv[2]))' "$1" "$2"
}
expect_field() {  # FILE EXPR WANT
  local got; got="$(deploy_field "$1" "$2" 2>&1)" || got="<error: $got>"
  if [ "$got" = "$3" ]; then ok "$(basename "$1"): $2 == $3"; else fail "$(basename "$1"): $2: want $3, got $got"; fi
}
has_objects() {  # FILE WANT...: every Kind/name of WANT is in FILE
  local f="$1" missing=""; shift
  local o; for o in "$@"; do grep -qxF "$o" <(objects "$f") || missing+=" $o"; done
  if [ -z "$missing" ]; then ok "$(basename "$f") has $*"; else fail "$(basename "$f") lacks$missing"; fi
}
lacks_objects() {  # FILE UNWANTED...
  local f="$1" found=""; shift
  local o; for o in "$@"; do grep -qxF "$o" <(objects "$f") && found+=" $o"; done
  if [ -z "$found" ]; then ok "$(basename "$f") has none of $*"; else fail "$(basename "$f") has$found"; fi
}

WEBHOOK_OBJECTS=(Secret/training-operator-webhook-cert Service/training-operator
  ValidatingWebhookConfiguration/validator.training-operator.kubeflow.org Role/tfjob-operator-webhook
  RoleBinding/tfjob-operator-webhook ClusterRole/tfjob-operator-webhook ClusterRoleBinding/tfjob-operator-webhook)
CORE_OBJECTS=(CustomResourceDefinition/tfjobs.kubeflow.org ServiceAccount/tfjob-operator
  ClusterRole/tfjob-operator ClusterRoleBinding/tfjob-operator Deployment/tfjob-operator
  Service/tfjob-operator-metrics)

renderings=()
for k in base overlays/webhook-off overlays/ha; do
  name="kustomize-${k##*/}.yaml"
  if "$K" kustomize "deploy/kustomize/$k" >"$out/$name" 2>"$out/$name.err"; then
    ok "kubectl kustomize deploy/kustomize/$k ($(objects "$out/$name" | wc -l) objects)"
    renderings+=("$name")
  else
    fail "kubectl kustomize deploy/kustomize/$k: $(cat "$out/$name.err")"
  fi
done
if [ -s "$out/kustomize-base.yaml" ]; then
  has_objects "$out/kustomize-base.yaml" Namespace/kubeflow "${CORE_OBJECTS[@]}" "${WEBHOOK_OBJECTS[@]}"
  expect_field "$out/kustomize-base.yaml" 'k["image"]' "$IMAGE"
  expect_field "$out/kustomize-base.yaml" 'c["spec"]["replicas"], "--leader-elect" in k["args"], "--webhook-server-port=9443" in k["args"]' "(1, True, True)"
fi
if [ -s "$out/kustomize-webhook-off.yaml" ]; then
  has_objects "$out/kustomize-webhook-off.yaml" "${CORE_OBJECTS[@]}"
  lacks_objects "$out/kustomize-webhook-off.yaml" "${WEBHOOK_OBJECTS[@]}"
  expect_field "$out/kustomize-webhook-off.yaml" '[a for a in k["args"] if "webhook" in a], [q["name"] for q in k["ports"]]' "([], ['metrics', 'health'])"
fi
if [ -s "$out/kustomize-ha.yaml" ]; then
  has_objects "$out/kustomize-ha.yaml" "${CORE_OBJECTS[@]}" "${WEBHOOK_OBJECTS[@]}" PodDisruptionBudget/tfjob-operator
  expect_field "$out/kustomize-ha.yaml" 'c["spec"]["replicas"], "--leader-elect" in k["args"], "podAntiAffinity" in p["affinity"]' "(2, True, True)"
fi

# examples/deploy/ is the base's files (symbolic links), so its documented commands stay true.
for f in crd-tfjob rbac webhook deployment; do
  check "examples/deploy/$f.yaml is deploy/kustomize/base/$f.yaml" \
    test "$(readlink -f "examples/deploy/$f.yaml")" = "$(readlink -f "deploy/kustomize/base/$f.yaml")"
done
check "the Helm chart's CRD is the base's" cmp -s "$CHART/crds/crd-tfjob.yaml" deploy/kustomize/base/crd-tfjob.yaml

# Helm: lint and template with the default values and with others.
cat >"$out/values-other.yaml" <<'EOF'
image: { repository: registry.example.com/ml/tfjob-operator, tag: "0.1.0-test", pullPolicy: Always }
imagePullSecrets: [{ name: regcred }]
replicas: 2
compat: training-operator-1.9
watchNamespace: team-a
threadiness: 8
kubeAPI: { qps: 50.5, burst: 100 }
leaderElection: { enabled: true, id: tfjob-operator-lease }
metrics: { port: 9090, service: { enabled: false } }
health: { port: 9091 }
webhook: { enabled: true, port: 10443, certValidity: 8760h, failurePolicy: Ignore, timeoutSeconds: 5 }
gangSchedulerName: volcano
clusterDomain: cluster.example
logLevel: debug
extraArgs: ["--status-writers=8"]
resources: { requests: { cpu: 200m, memory: 128Mi }, limits: { cpu: "1", memory: 1Gi } }
serviceAccount: { create: true, name: tfjob-sa, annotations: { example.com/role: operator } }
nodeSelector: { kubernetes.io/os: linux }
tolerations: [{ key: dedicated, operator: Equal, value: ml, effect: NoSchedule }]
affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: node-role, operator: In, values: [ml] }] }] } } }
priorityClassName: system-cluster-critical
podAnnotations: { prometheus.io/scrape: "true" }
EOF
cat >"$out/values-nowebhook.yaml" <<'EOF'
webhook: { enabled: false }
leaderElection: { enabled: false }
EOF
for v in default other nowebhook; do
  vf=(); [ "$v" = default ] || vf=(-f "$out/values-$v.yaml")
  ns=tfjob-system; [ "$v" = default ] && ns=kubeflow
  if "$HELM" lint --strict "$CHART" "${vf[@]}" >"$out/lint-$v.txt" 2>&1; then
    ok "helm lint --strict ($v values)"
  else
    fail "helm lint --strict ($v values): $(cat "$out/lint-$v.txt")"
  fi
  if "$HELM" template tfjob-operator "$CHART" --namespace "$ns" --include-crds "${vf[@]}" \
       >"$out/helm-$v.yaml" 2>"$out/helm-$v.err"; then
    ok "helm template ($v values, namespace $ns): $(objects "$out/helm-$v.yaml" | wc -l) objects"
    renderings+=("helm-$v.yaml")
  else
    fail "helm template ($v values): $(cat "$out/helm-$v.err")"
  fi
done
if [ -s "$out/helm-default.yaml" ]; then
  has_objects "$out/helm-default.yaml" "${CORE_OBJECTS[@]}" "${WEBHOOK_OBJECTS[@]}"
  expect_field "$out/helm-default.yaml" 'k["image"], k["imagePullPolicy"], c["spec"]["replicas"]' "('$IMAGE', 'IfNotPresent', 1)"
  expect_field "$out/helm-default.yaml" 'k["args"]' "['--threadiness=4', '--kube-api-qps=20', '--kube-api-burst=30', '--metrics-bind-address=:8080', '--health-probe-bind-address=:8081', '--log-level=info', '--leader-elect', '--leader-election-namespace=kubeflow', '--webhook-server-port=9443', '--webhook-service-name=training-operator', '--webhook-secret-name=training-operator-webhook-cert', '--webhook-config-name=validator.training-operator.kubeflow.org']"
fi
if [ -s "$out/helm-other.yaml" ]; then
  has_objects "$out/helm-other.yaml" ServiceAccount/tfjob-sa PodDisruptionBudget/tfjob-operator "${WEBHOOK_OBJECTS[@]}"
  lacks_objects "$out/helm-other.yaml" Service/tfjob-operator-metrics
  expect_field "$out/helm-other.yaml" 'k["image"], k["imagePullPolicy"], c["spec"]["replicas"], p["serviceAccountName"]' \
    "('registry.example.com/ml/tfjob-operator:0.1.0-test', 'Always', 2, 'tfjob-sa')"
  expect_field "$out/helm-other.yaml" 'k["args"]' "['--threadiness=8', '--kube-api-qps=50.5', '--kube-api-burst=100', '--metrics-bind-address=:9090', '--health-probe-bind-address=:9091', '--log-level=debug', '--compat=training-operator-1.9', '--namespace=team-a', '--leader-elect', '--leader-election-namespace=tfjob-system', '--leader-election-id=tfjob-operator-lease', '--webhook-server-port=10443', '--webhook-service-name=training-operator', '--webhook-secret-name=training-operator-webhook-cert', '--webhook-config-name=validator.training-operator.kubeflow.org', '--webhook-cert-validity=8760h', '--gang-scheduler-name=volcano', '--cluster-domain=cluster.example', '--status-writers=8']"
  expect_field "$out/helm-other.yaml" '[(q["name"], q["containerPort"]) for q in k["ports"]], k["resources"]["limits"]' \
    "([('metrics', 9090), ('health', 9091), ('webhook-server', 10443)], {'cpu': '1', 'memory': '1Gi'})"
  expect_field "$out/helm-other.yaml" 'p["nodeSelector"], p["tolerations"][0]["key"], list(p["affinity"]), p["priorityClassName"], p["imagePullSecrets"]' \
    "({'kubernetes.io/os': 'linux'}, 'dedicated', ['nodeAffinity'], 'system-cluster-critical', [{'name': 'regcred'}])"
fi
if [ -s "$out/helm-nowebhook.yaml" ]; then
  lacks_objects "$out/helm-nowebhook.yaml" "${WEBHOOK_OBJECTS[@]}"
  expect_field "$out/helm-nowebhook.yaml" '[a for a in k["args"] if "webhook" in a or "leader" in a], [q["name"] for q in k["ports"]]' \
    "(['--webhook-server-port=0'], ['metrics', 'health'])"
fi
# Values the operator would refuse are refused by the chart, with the value named.
for bad in "compat=v1.9" "logLevel=verbose" "metrics.port=http" "webhook.failurePolicy=Never" \
           "replicas=2,leaderElection.enabled=false"; do
  if "$HELM" template tfjob-operator "$CHART" --set "$bad" >/dev/null 2>"$out/bad.err"; then
    fail "helm template --set $bad: rendered"
  else
    # values.schema.json's message (- at '/compat': ...), or the template's own (fail).
    msg="$(sed -n -e "s/^- \(at '.*\)/\1/p" -e 's/^Error: execution error at ([^)]*): //p' "$out/bad.err")"
    if [ -n "$msg" ]; then ok "helm template --set $bad: refused: $msg"
    else fail "helm template --set $bad: refused without the chart's message: $(head -n 2 "$out/bad.err")"; fi
  fi
done
# The chart's ClusterRole is the base's (rbac.yaml): the same rules.
rules() { python3 -c 'import sys, yaml
r = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ClusterRole" and d["metadata"]["name"] == "tfjob-operator"]
print(r[0]["rules"])' "$1"; }
[ -s "$out/helm-default.yaml" ] && check "the chart's ClusterRole rules are deploy/kustomize/base/rbac.yaml's" \
  test "$(rules "$out/helm-default.yaml")" = "$(rules deploy/kustomize/base/rbac.yaml)"

# --- every Deployment's args are flags tfjob-operator accepts, with values it accepts
for r in "${renderings[@]}"; do
  mapfile -t args < <(deploy_field "$out/$r" '"\n".join(k["args"])')
  cmd="$(deploy_field "$out/$r" 'k["command"]')"
  [ "$cmd" = "['/usr/local/bin/tfjob-operator']" ] || fail "$r: command $cmd is not the installed tfjob-operator"
  if "$OP" "${args[@]}" --help >/dev/null 2>"$out/flags.err"; then
    ok "$r: tfjob-operator ${args[*]} --help: every flag known"
  else
    fail "$r: tfjob-operator refuses its args: $(head -n 1 "$out/flags.err")"
  fi
  # Values are checked after parsing (--compat, --log-level, ...): the args alone must get as far
  # as the Kubernetes client (exit 1 there; a refused flag or value exits 2).
  rc=0; timeout 20 "$OP" "${args[@]}" --kubeconfig "$dir/no-such-kubeconfig" >/dev/null 2>"$out/flags.err" || rc=$?
  if [ "$rc" = 1 ] && grep -q 'cannot configure the Kubernetes client' "$out/flags.err"; then
    ok "$r: tfjob-operator takes every value of its args"
  else
    fail "$r: tfjob-operator with its args: exit $rc: $(head -n 2 "$out/flags.err")"
  fi
done
# ... and the check itself tells a bad flag.
rc=0; "$OP" --threadiness=4 --no-such-flag --help >/dev/null 2>&1 || rc=$?
check "the flag check refuses an unknown flag (exit $rc)" test "$rc" = 2

# --- the API server: the CRD client-side, the defaults, the dry runs
"$H" start "$dir/kube" 2>&1 | tail -n 1
# shellcheck disable=SC1091
. "$dir/kube/env"
export KUBECONFIG="$KUBE_ADMIN_KUBECONFIG"
kc() { "$K" --request-timeout=60s "$@"; }
wait_crd_gone() {
  local i; for i in $(seq 1 120); do
    kc get crd tfjobs.kubeflow.org >/dev/null 2>&1 || return 0; sleep 0.5
  done; return 1
}
wait_crd_served() {
  local i; for i in $(seq 1 120); do
    [ "$(kc get crd tfjobs.kubeflow.org -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ] &&
      kc get tfjobs -A >/dev/null 2>&1 && return 0
    sleep 0.5
  done; return 1
}
# The harness installed the CRD with a POST: start from a server without it.
kc delete crd tfjobs.kubeflow.org >/dev/null
check "the harness's CRD is deleted" wait_crd_gone

crd_bytes="$(wc -c <deploy/kustomize/base/crd-tfjob.yaml)"
if kc apply -f examples/deploy/crd-tfjob.yaml >"$out/crd-apply.txt" 2>&1; then
  ok "kubectl apply -f examples/deploy/crd-tfjob.yaml (client-side, $crd_bytes bytes): $(cat "$out/crd-apply.txt")"
else
  fail "kubectl apply -f examples/deploy/crd-tfjob.yaml (client-side): $(cat "$out/crd-apply.txt")"
fi
check "the CRD is established and served" wait_crd_served
ann="$(kc get crd tfjobs.kubeflow.org -o json | python3 -c 'import json, sys
print(len(json.load(sys.stdin)["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]))')"
check "its last-applied annotation is $ann bytes (< 262144, with room: < 131072)" test "$ann" -lt 131072

# training-operator v1.9.4's own CRD, for the size control and the defaults.
V194="$(cd tests/diff && go mod download -json github.com/kubeflow/training-operator@v1.9.4 |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')/manifests/base/crds/kubeflow.org_tfjobs.yaml"

cat >"$out/minimal.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: minimal
  namespace: default
spec:
  tfReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
            - name: tensorflow
              image: tensorflow/tensorflow:2.16.1
EOF
# The pod fields v1.9.4's CRD defaults (ports[].protocol, the empty name of a reference,
# fileKeyRef.optional, the grpc probe's service, the rbd, iscsi and scaleIO volumes' fields,
# ...). Not azureDisk: ours also defaults its cachingMode and kind, as the pod API does.
cat >"$out/pod-defaults.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: pod-defaults
  namespace: default
spec:
  runPolicy:
    cleanPodPolicy: None
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          imagePullSecrets: [{}]
          containers:
            - name: tensorflow
              image: tensorflow/tensorflow:2.16.1
              ports: [{ containerPort: 2222, name: tfjob-port }]
              envFrom: [{ configMapRef: {} }, { secretRef: {} }]
              env:
                - { name: A, valueFrom: { configMapKeyRef: { key: a } } }
                - { name: B, valueFrom: { secretKeyRef: { key: b } } }
                - { name: C, valueFrom: { fileKeyRef: { key: c, path: p, volumeName: v } } }
              livenessProbe: { grpc: { port: 9000 } }
          volumes:
            - { name: rbd, rbd: { image: i, monitors: [m] } }
            - { name: iscsi, iscsi: { iqn: q, lun: 0, targetPortal: t } }
            - { name: cm, configMap: {} }
            - { name: scaleio, scaleIO: { gateway: g, system: s, secretRef: {} } }
EOF
# stored FILE: kubectl get -o yaml of the job FILE created, without what differs at every
# creation (uid, times, resourceVersion, managedFields).
stored() {
  local name; name="$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["metadata"]["name"])' "$1")"
  kc get tfjob "$name" -o yaml | python3 -c 'import sys, yaml
d = yaml.safe_load(sys.stdin)
for k in ("uid", "creationTimestamp", "resourceVersion", "generation", "managedFields"):
    d["metadata"].pop(k, None)
print(yaml.safe_dump(d, sort_keys=True), end="")'
}
for j in minimal pod-defaults; do
  if kc apply -f "$out/$j.yaml" >/dev/null 2>"$out/apply.err"; then stored "$out/$j.yaml" >"$out/$j.ours.yaml"
  else fail "kubectl apply -f $j.yaml (our CRD): $(cat "$out/apply.err")"; fi
done
# (A job without runPolicy gets none: a default applies inside an object that is there.)
check "our CRD defaults runPolicy.suspend to false" grep -q 'suspend: false' "$out/pod-defaults.ours.yaml"
check "our CRD defaults ports[].protocol to TCP" grep -q 'protocol: TCP' "$out/pod-defaults.ours.yaml"
kc delete crd tfjobs.kubeflow.org >/dev/null
wait_crd_gone || fail "our CRD was not deleted"

if kc apply -f "$V194" >"$out/v194.txt" 2>&1; then
  fail "v1.9.4's CRD ($(wc -c <"$V194") bytes) applied client-side: the size check above proves nothing"
else
  check "v1.9.4's CRD ($(wc -c <"$V194") bytes) is refused client-side: Too long" grep -q 'Too long' "$out/v194.txt"
fi
kc delete crd tfjobs.kubeflow.org >/dev/null 2>&1 || true
wait_crd_gone || true
kc apply --server-side -f "$V194" >/dev/null
check "v1.9.4's CRD is established (server-side apply)" wait_crd_served
for j in minimal pod-defaults; do
  if kc apply -f "$out/$j.yaml" >/dev/null 2>"$out/apply.err"; then stored "$out/$j.yaml" >"$out/$j.v194.yaml"
  else fail "kubectl apply -f $j.yaml (v1.9.4's CRD): $(cat "$out/apply.err")"; fi
  if diff -u "$out/$j.v194.yaml" "$out/$j.ours.yaml" >"$out/$j.diff"; then
    ok "$j: kubectl get tfjob -o yaml is the same with our CRD as with v1.9.4's ($(grep -c . "$out/$j.ours.yaml") lines)"
  else
    fail "$j: stored differently with our CRD (+) and v1.9.4's (-):"; cat "$out/$j.diff"
  fi
done
kc delete crd tfjobs.kubeflow.org >/dev/null
wait_crd_gone || fail "v1.9.4's CRD was not deleted"
kc apply -f deploy/kustomize/base/crd-tfjob.yaml >/dev/null
check "our CRD is back (client-side apply)" wait_crd_served

# Every rendering, server-side dry run (the namespaces exist for real; the CRD is applied).
kc create namespace kubeflow >/dev/null
kc create namespace tfjob-system >/dev/null
for r in "${renderings[@]}"; do
  if kc apply --dry-run=server -f - <"$out/$r" >"$out/dry.txt" 2>&1; then
    ok "kubectl apply --dry-run=server -f $r: $(grep -c 'server dry run' "$out/dry.txt") objects"
  else
    fail "kubectl apply --dry-run=server -f $r: $(grep -v 'server dry run' "$out/dry.txt" | head -n 5)"
  fi
done
# The documented commands on examples/deploy/ (docs/cluster.md).
if kc apply --dry-run=server -f examples/deploy/crd-tfjob.yaml -f examples/deploy/rbac.yaml \
     -f examples/deploy/webhook.yaml -f examples/deploy/deployment.yaml >"$out/dry.txt" 2>&1; then
  ok "kubectl apply --dry-run=server -f examples/deploy/*.yaml: $(grep -c 'server dry run' "$out/dry.txt") objects"
else
  fail "kubectl apply --dry-run=server -f examples/deploy/*.yaml: $(head -n 5 "$out/dry.txt")"
fi
# ... and the server checks: a broken rendering is refused.
sed 's/^  replicas: 1$/  replicas: one/' "$out/kustomize-base.yaml" >"$out/broken.yaml"
if kc apply --dry-run=server -f "$out/broken.yaml" >/dev/null 2>&1; then
  fail "a Deployment with replicas: one passed the server dry run"
else
  ok "a Deployment with replicas: one is refused by the server dry run"
fi

echo "46-deploy: $failures failure(s)"
[ "$failures" -eq 0 ]
