#!/usr/bin/env bash
# The real Kubernetes API server of the test suites (tests/kube/harness.sh): kube-apiserver and
# etcd built from the Go module proxy (cached after the first build), started on loopback; the
# TFJob CRD (examples/deploy/crd-tfjob.yaml) is served; a TFJob can be created, read and its
# status written through the status subresource; a user without rights gets 403 with a Status;
# kube-apiserver alone can be stopped and started again on the same etcd (stop-apiserver,
# start-apiserver, restart-apiserver: same port, data, certificates and tokens, open watches
# end); `stop` and the death of the calling shell both leave no process behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
H="$PWD/tests/kube/harness.sh"

failures=0
ok()   { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check() {  # DESCRIPTION COMMAND...
  local what="$1"; shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}
# json FILE EXPR: evaluate a Python expression over the JSON document d.
json() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# expect FILE EXPR VALUE
expect() {
  local got; got="$(json "$1" "$2" 2>&1)" || got="<error: $got>"
  if [ "$got" = "$3" ]; then ok "$2 == $3"; else fail "$2: want $3, got $got"; fi
}

t0=$SECONDS
"$H" build >/dev/null
echo "build: $((SECONDS - t0)) s (cached after the first build)"

dir="$(mktemp -d)"
dir2="$(mktemp -d)"
cleanup() {
  "$H" stop "$dir" >/dev/null 2>&1 || true
  "$H" stop "$dir2" >/dev/null 2>&1 || true
  rm -rf "$dir" "$dir2"
}
trap cleanup EXIT

t0=$SECONDS
"$H" start "$dir"
echo "start: $((SECONDS - t0)) s"
# shellcheck disable=SC1091
. "$dir/env"
out="$dir/out"; mkdir -p "$out"

# curl as admin / as the unprivileged users; prints the HTTP code, body in $out/body.json.
req() {
  curl -sS --max-time 20 --cacert "$KUBE_CA_CERT" --cert "$KUBE_ADMIN_CERT" --key "$KUBE_ADMIN_KEY" \
    -o "$out/body.json" -w '%{http_code}' "$@"
}
ureq() {
  curl -sS --max-time 20 --cacert "$KUBE_CA_CERT" --cert "$KUBE_USER_CERT" --key "$KUBE_USER_KEY" \
    -o "$out/body.json" -w '%{http_code}' "$@"
}
treq() {
  curl -sS --max-time 20 --cacert "$KUBE_CA_CERT" -H "Authorization: Bearer $KUBE_USER_TOKEN" \
    -o "$out/body.json" -w '%{http_code}' "$@"
}
# leftovers DIR: fails (and names them) when an etcd, kube-apiserver or supervisor of DIR runs.
leftovers() {
  python3 - "$1" <<'EOF'
import os, sys
d = sys.argv[1].encode()
found = []
for p in filter(str.isdigit, os.listdir("/proc")):
    try:
        argv = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    ours = any(d in a for a in argv)
    server = os.path.basename(argv[0]) in (b"etcd", b"kube-apiserver", b"setpriv") or b"_supervise" in argv
    if ours and server:
        found.append(p + " " + b" ".join(argv).decode(errors="replace")[:200])
if found:
    print("\n".join(found))
sys.exit(1 if found else 0)
EOF
}
code_is() {  # WANT DESCRIPTION CODE
  if [ "$3" = "$1" ]; then ok "$2: HTTP $3"; else fail "$2: want HTTP $1, got $3: $(head -c 600 "$out/body.json")"; fi
}
API="$KUBE_APISERVER_URL"
TFJOBS="$API/apis/kubeflow.org/v1/namespaces/kubeflow/tfjobs"

# --- the server
check "/readyz is ok" test "$(curl -sS --cacert "$KUBE_CA_CERT" "$API/readyz")" = ok
code_is 200 "GET /version" "$(req "$API/version")"
expect "$out/body.json" 'd["gitVersion"]' "$KUBE_VERSION"
check "the server listens on loopback only" \
  bash -c "ss -ltnp | grep -F \"pid=$KUBE_APISERVER_PID,\" | awk '{print \$4}' | grep -qvE '^127\\.0\\.0\\.1:' && exit 1 || exit 0"
check "etcd listens on loopback only" \
  bash -c "ss -ltnp | grep -F \"pid=$ETCD_PID,\" | awk '{print \$4}' | grep -qvE '^127\\.0\\.0\\.1:' && exit 1 || exit 0"
check "the admin kubeconfig embeds the CA and the client certificate" \
  grep -q 'certificate-authority-data: ..' "$KUBE_ADMIN_KUBECONFIG"
check "admin.kubeconfig has client-certificate-data and client-key-data" \
  bash -c "grep -q 'client-certificate-data: ..' '$KUBE_ADMIN_KUBECONFIG' && grep -q 'client-key-data: ..' '$KUBE_ADMIN_KUBECONFIG'"

# --- the CRD
code_is 200 "GET the CRD" "$(req "$API/apis/apiextensions.k8s.io/v1/customresourcedefinitions/tfjobs.kubeflow.org")"
expect "$out/body.json" '[c["status"] for c in d["status"]["conditions"] if c["type"] == "Established"][0]' True
expect "$out/body.json" '[c["status"] for c in d["status"]["conditions"] if c["type"] == "NamesAccepted"][0]' True
expect "$out/body.json" 'd["spec"]["versions"][0]["name"], d["spec"]["scope"]' "('v1', 'Namespaced')"
code_is 200 "discovery of kubeflow.org/v1" "$(req "$API/apis/kubeflow.org/v1")"
expect "$out/body.json" 'sorted(r["name"] for r in d["resources"])' "['tfjobs', 'tfjobs/status']"

# --- create: the documentation example as YAML, and the PS+Worker example as JSON
code_is 201 "create namespace kubeflow" "$(req -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kubeflow"}}' "$API/api/v1/namespaces")"
code_is 201 "create examples/tfjob-simple.yaml (YAML body)" "$(req -X POST -H 'Content-Type: application/yaml' \
  --data-binary @examples/tfjob-simple.yaml "$TFJOBS")"
code_is 201 "create the PS+Worker job (JSON body, generateName)" "$(req -X POST -H 'Content-Type: application/json' \
  --data-binary @tests/kube/fixtures/tfjob-ps-worker.json "$TFJOBS")"
expect "$out/body.json" 'd["metadata"]["name"].startswith("tfjob") and len(d["metadata"]["name"]) > 5' True
expect "$out/body.json" 'd["spec"]["tfReplicaSpecs"]["Worker"]["replicas"]' 3
code_is 409 "create the same name twice" "$(req -X POST -H 'Content-Type: application/yaml' \
  --data-binary @examples/tfjob-simple.yaml "$TFJOBS")"
expect "$out/body.json" 'd["kind"], d["reason"]' "('Status', 'AlreadyExists')"

# The schema: types are checked, tfReplicaSpecs is required, unknown fields are pruned
# except inside the pod template.
bad='{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"bad"},"spec":{"tfReplicaSpecs":{"Worker":{"replicas":"two"}}}}'
code_is 422 "replicas as a string is rejected" "$(req -X POST -H 'Content-Type: application/json' -d "$bad" "$TFJOBS")"
expect "$out/body.json" 'd["reason"], d["details"]["causes"][0]["field"]' "('Invalid', 'spec.tfReplicaSpecs.Worker.replicas')"
bad='{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"bad"},"spec":{"runPolicy":{}}}'
code_is 422 "a spec without tfReplicaSpecs is rejected" "$(req -X POST -H 'Content-Type: application/json' -d "$bad" "$TFJOBS")"
odd='{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"pruned"},"spec":{"bogus":1,"runPolicy":{"cleanPodPolicy":"None","backoffLimit":3,"schedulingPolicy":{"minResources":{"cpu":"2","memory":1024}}},"tfReplicaSpecs":{"Worker":{"replicas":1,"template":{"spec":{"containers":[{"name":"tensorflow","image":"x"}],"anything":{"kept":true}}}}}}}'
code_is 201 "create a job with unknown fields" "$(req -X POST -H 'Content-Type: application/json' -d "$odd" "$TFJOBS")"
expect "$out/body.json" '"bogus" in d["spec"]' False
# the pod template is typed (the whole core/v1 PodSpec, scripts/gen-schema.py): unknown fields in it
# are pruned too, as the official CRD does
expect "$out/body.json" '"anything" in d["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]' False
expect "$out/body.json" 'd["spec"]["runPolicy"]["schedulingPolicy"]["minResources"]' "{'cpu': '2', 'memory': 1024}"

# --- read back
code_is 200 "GET tfjob-simple" "$(req "$TFJOBS/tfjob-simple")"
cp "$out/body.json" "$out/job.json"
expect "$out/job.json" 'd["kind"], d["apiVersion"], d["metadata"]["namespace"]' "('TFJob', 'kubeflow.org/v1', 'kubeflow')"
expect "$out/job.json" 'd["spec"]["tfReplicaSpecs"]["Worker"]["replicas"]' 2
expect "$out/job.json" 'd["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["image"]' \
  kubeflow/tf-mnist-with-summaries:latest
code_is 200 "LIST tfjobs" "$(req "$TFJOBS")"
expect "$out/body.json" 'd["kind"], len(d["items"])' "('TFJobList', 3)"

# --- PUT /status: the status is written, a spec change in the same body is ignored
python3 - "$out/job.json" "$out/status.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 5
d["status"] = {
    "conditions": [{"type": "Created", "status": "True", "reason": "TFJobCreated",
                    "message": "TFJob kubeflow/tfjob-simple is created.",
                    "lastUpdateTime": "2026-01-01T00:00:00Z",
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    "replicaStatuses": {"Worker": {"active": 2, "selector": "training.kubeflow.org/job-name=tfjob-simple"}},
    "startTime": "2026-01-01T00:00:01Z",
    "lastReconcileTime": "2026-01-01T00:00:02Z",
}
json.dump(d, open(sys.argv[2], "w"))
EOF
code_is 200 "PUT /status" "$(req -X PUT -H 'Content-Type: application/json' \
  --data-binary @"$out/status.json" "$TFJOBS/tfjob-simple/status")"
code_is 200 "GET after PUT /status" "$(req "$TFJOBS/tfjob-simple")"
expect "$out/body.json" 'd["status"]["conditions"][0]["type"], d["status"]["replicaStatuses"]["Worker"]["active"]' "('Created', 2)"
expect "$out/body.json" 'd["spec"]["tfReplicaSpecs"]["Worker"]["replicas"]' 2
expect "$out/body.json" 'd["metadata"]["generation"]' 1
code_is 409 "PUT /status with a stale resourceVersion" "$(req -X PUT -H 'Content-Type: application/json' \
  --data-binary @"$out/status.json" "$TFJOBS/tfjob-simple/status")"
expect "$out/body.json" 'd["kind"], d["reason"]' "('Status', 'Conflict')"
# The printer columns: State is the last condition's type.
code_is 200 "GET as a Table" "$(req -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$TFJOBS/tfjob-simple")"
expect "$out/body.json" '[c["name"] for c in d["columnDefinitions"]]' "['Name', 'State', 'Age']"
expect "$out/body.json" 'd["rows"][0]["cells"][:2]' "['tfjob-simple', 'Created']"

# --- RBAC: a user without bindings is authenticated but forbidden
for who in cert token; do
  if [ $who = cert ]; then c="$(ureq "$TFJOBS")"; else c="$(treq "$TFJOBS")"; fi
  code_is 403 "unprivileged user ($who) lists tfjobs" "$c"
  expect "$out/body.json" 'd["kind"], d["status"], d["reason"], d["code"]' "('Status', 'Failure', 'Forbidden', 403)"
done
expect "$out/body.json" '"libtfjob-token-user" in d["message"]' True
code_is 403 "unprivileged user creates a tfjob" "$(ureq -X POST -H 'Content-Type: application/yaml' \
  --data-binary @examples/tfjob-simple.yaml "$TFJOBS")"
code_is 401 "a wrong token is not authenticated" "$(curl -sS --cacert "$KUBE_CA_CERT" \
  -H 'Authorization: Bearer nope' -o "$out/body.json" -w '%{http_code}' "$TFJOBS")"
# The same rights through the user's kubeconfig (what the libcurl transport reads).
check "user.kubeconfig names the unprivileged client certificate" \
  bash -c "grep -q 'client-certificate-data: $(base64 -w0 "$KUBE_USER_CERT")' '$KUBE_USER_KUBECONFIG'"

# --- kube-apiserver restarted alone on the same etcd: data, port, certificates and tokens stay
code_is 201 "create a TFJob before the restart" "$(req -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"survivor"},"spec":{"tfReplicaSpecs":{"Worker":{"template":{"spec":{"containers":[{"name":"tensorflow","image":"x"}]}}}}}}' "$TFJOBS")"
survivor_uid="$(json "$out/body.json" 'd["metadata"]["uid"]')"
old_api_pid=$KUBE_APISERVER_PID
# A watch open across the restart: the server ends it (the client sees the stream close).
curl -sS -N --max-time 120 --cacert "$KUBE_CA_CERT" --cert "$KUBE_ADMIN_CERT" --key "$KUBE_ADMIN_KEY" \
  "$TFJOBS?watch=true&resourceVersion=0" >"$out/watch.txt" 2>"$out/watch.err" &
watch_pid=$!
sleep 1
t0=$SECONDS
"$H" stop-apiserver "$dir"
stop_secs=$((SECONDS - t0))
echo "stop-apiserver: $stop_secs s"
check "stop-apiserver with a watch open exits by itself ($stop_secs s < 15 s: watches drained, no SIGKILL)" \
  test "$stop_secs" -lt 15
check "kube-apiserver (pid $old_api_pid) has exited" bash -c "! kill -0 $old_api_pid 2>/dev/null"
check "etcd (pid $ETCD_PID) keeps running" kill -0 "$ETCD_PID"
check "the supervisor (pid $KUBE_SUPERVISOR_PID) keeps running" kill -0 "$KUBE_SUPERVISOR_PID"
check "etcd still answers" bash -c "curl -s --max-time 5 '$ETCD_URL/health' | grep -q '\"health\":\"true\"'"
check "the API server port is closed while it is down" bash -c "! curl -s --max-time 2 -k '$API/readyz' >/dev/null"
check "kube-apiserver got SIGTERM and shut down gracefully" \
  grep -qE 'graceful-termination|Shutting down|shutting down' "$dir/kube-apiserver.log"
wait_watch=0
for _ in $(seq 1 50); do kill -0 "$watch_pid" 2>/dev/null || { wait_watch=1; break; }; sleep 0.1; done
check "an open watch ends when kube-apiserver stops" test "$wait_watch" = 1
check "the watch had delivered the job before" grep -q '"survivor"' "$out/watch.txt"
kill "$watch_pid" 2>/dev/null || true
sleep 2
t0=$SECONDS
"$H" start-apiserver "$dir"
echo "start-apiserver: $((SECONDS - t0)) s"
new_api_pid="$(. "$dir/env"; echo "$KUBE_APISERVER_PID")"
check "a new kube-apiserver process (pid $old_api_pid -> $new_api_pid)" \
  bash -c "[ '$new_api_pid' != '$old_api_pid' ] && kill -0 '$new_api_pid'"
check "same etcd process (pid $ETCD_PID)" kill -0 "$ETCD_PID"
check "the same URL is ready again" test "$(curl -sS --cacert "$KUBE_CA_CERT" "$API/readyz")" = ok
code_is 200 "the TFJob is still there after the restart" "$(req "$TFJOBS/survivor")"
expect "$out/body.json" 'd["metadata"]["uid"]' "$survivor_uid"
code_is 200 "the CRD is still served" "$(req "$API/apis/kubeflow.org/v1")"
code_is 403 "the token user is still known (and still forbidden)" "$(treq "$TFJOBS")"
code_is 200 "kubeconfig client certificates still work" "$(req "$API/api/v1/namespaces/kubeflow")"
t0=$SECONDS
"$H" restart-apiserver "$dir" 1
echo "restart-apiserver (1 s down): $((SECONDS - t0)) s"
third_api_pid="$(. "$dir/env"; echo "$KUBE_APISERVER_PID")"
check "restart-apiserver: another process (pid $third_api_pid)" \
  bash -c "[ '$third_api_pid' != '$new_api_pid' ] && ! kill -0 '$new_api_pid' 2>/dev/null && kill -0 '$third_api_pid'"
code_is 200 "restart-apiserver: the TFJob is still there" "$(req "$TFJOBS/survivor")"
check "restart-apiserver on a directory without a server fails" bash -c "! '$H' restart-apiserver '$dir2' 2>/dev/null"
KUBE_APISERVER_PID=$third_api_pid

# --- stop: nothing is left
pids="$KUBE_APISERVER_PID $ETCD_PID $KUBE_SUPERVISOR_PID"
t0=$SECONDS
"$H" stop "$dir"
echo "stop: $((SECONDS - t0)) s"
left=""
for p in $pids; do kill -0 "$p" 2>/dev/null && left+=" $p"; done
check "stop leaves no process (pids $pids)" test -z "$left"
check "no etcd, kube-apiserver or supervisor of $dir is running" leftovers "$dir"
check "the API server port is closed" bash -c "! curl -s --max-time 2 -k '$API/readyz' >/dev/null"
check "stop removed the state" bash -c "[ ! -e '$dir/etcd-data' ] && [ ! -e '$dir/env' ]"

# --- the calling shell dies (SIGKILL, no trap of its own runs): the servers follow it
bash -c '"$0" start "$1" >/dev/null 2>&1 && exec sleep 600' "$H" "$dir2" &
owner=$!
for _ in $(seq 1 240); do [ -f "$dir2/env" ] && break; sleep 0.5; done
if [ -f "$dir2/env" ]; then
  pids2="$(. "$dir2/env"; echo "$KUBE_APISERVER_PID $ETCD_PID $KUBE_SUPERVISOR_PID")"
  kill -KILL "$owner"; wait "$owner" 2>/dev/null || true
  left=""
  for _ in $(seq 1 60); do
    left=""
    for p in $pids2; do kill -0 "$p" 2>/dev/null && left+=" $p"; done
    [ -z "$left" ] && break
    sleep 0.5
  done
  check "the servers stop when the calling shell is killed (pids $pids2)" test -z "$left"
  check "no etcd, kube-apiserver or supervisor of $dir2 is running" leftovers "$dir2"
else
  fail "second server did not start: $(tail -n 20 "$dir2"/*.log 2>/dev/null)"
fi

echo "kube harness: $failures failure(s)"
[ "$failures" -eq 0 ]
