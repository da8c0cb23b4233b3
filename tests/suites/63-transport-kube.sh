#!/usr/bin/env bash
# The transport against a real kube-apiserver + etcd (tests/kube/harness.sh): the Check test
# tests/test_kube_apiserver.c (every verb, conflicts, 422 causes, watch resume and 410 relist,
# RBAC 403, token rotation, exec plugin, in-cluster, and the memory backend answering exactly as
# the API server does), then tfjobctl apply/get/describe/watch/delete/logs/diagnose against the cluster.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/suites/lib/kube-env.bash
. tests/suites/lib/kube-env.bash

meson test -C build --print-errorlogs --suite kube

# tfjobctl against the cluster.
C="$PWD/build/src/tfjobctl/tfjobctl"
K=(--kubeconfig "$KUBE_ADMIN_KUBECONFIG")
fail=0
check() { local what="$1"; shift; if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi; }
out="$dir/out.txt"
acurl() { curl -sS --max-time 20 --cacert "$KUBE_CA_CERT" --cert "$KUBE_ADMIN_CERT" --key "$KUBE_ADMIN_KEY" "$@"; }
acurl -o /dev/null -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kubeflow"}}' "$KUBE_APISERVER_URL/api/v1/namespaces"

check "apply creates" bash -c "'$C' apply -f examples/tfjob-simple.yaml ${K[*]} | grep -qx 'tfjob.kubeflow.org/tfjob-simple created'"
check "apply again: unchanged" bash -c "'$C' apply -f examples/tfjob-simple.yaml ${K[*]} | grep -qx 'tfjob.kubeflow.org/tfjob-simple unchanged'"
sed 's/replicas: 2/replicas: 3/' examples/tfjob-simple.yaml >"$dir/three.yaml"
check "apply a change: configured" bash -c "'$C' apply -f '$dir/three.yaml' ${K[*]} | grep -qx 'tfjob.kubeflow.org/tfjob-simple configured'"
check "get -o wide shows 3 workers" bash -c "'$C' get -n kubeflow -o wide ${K[*]} | grep -q 'Worker:3'"
check "get -o yaml" bash -c "'$C' get tfjob-simple -n kubeflow -o yaml ${K[*]} | grep -q '^kind: TFJob$'"
check "get as the unprivileged user: 403" bash -c "'$C' get -n kubeflow --kubeconfig '$KUBE_USER_KUBECONFIG' 2>'$out'; grep -q 'Error from server (Forbidden)' '$out'"
"$C" get -n kubeflow --kubeconfig "$KUBE_USER_KUBECONFIG" >/dev/null 2>&1 && rc=0 || rc=$?
check "unprivileged exit status is 1" [ "$rc" -eq 1 ]
# As kubectl: a List wrapper without managedFields, -o name, the empty-namespace message.
check "get -o json: kubectl's List, no managedFields" bash -c "'$C' get -n kubeflow -o json ${K[*]} | python3 -c '
import json, sys
v = json.load(sys.stdin)
assert (v[\"apiVersion\"], v[\"kind\"]) == (\"v1\", \"List\"), v
assert [i[\"metadata\"][\"name\"] for i in v[\"items\"]] == [\"tfjob-simple\"]
assert \"managedFields\" not in v[\"items\"][0][\"metadata\"]'"
check "get -o name" bash -c "[ \"\$('$C' get -n kubeflow -o name ${K[*]})\" = tfjob.kubeflow.org/tfjob-simple ]"
check "get in an empty namespace" bash -c "'$C' get -n nothing-here ${K[*]} 2>&1 >/dev/null | grep -qx 'No resources found in nothing-here namespace.'"
# render -o yaml / -o list print what kubectl apply -f - sends: the API server takes every Pod and
# Service as it is (a dry run, unknown fields refused), with the owner reference of the real job.
"$C" get tfjob-simple -n kubeflow -o json "${K[@]}" | "$C" render -o yaml -f - >"$dir/children.yaml"
"$C" get tfjob-simple -n kubeflow -o json "${K[@]}" | "$C" render -o list -f - >"$dir/children-list.yaml"
python3 - "$dir" <<'EOF'
import json, sys, yaml
d = sys.argv[1]
stream = list(yaml.safe_load_all(open(d + "/children.yaml")))
listed = yaml.safe_load(open(d + "/children-list.yaml"))
assert listed["kind"] == "List" and listed["items"] == stream, "-o list and -o yaml differ"
for i, obj in enumerate(stream):
    json.dump(obj, open("%s/child-%02d-%s.json" % (d, i, obj["kind"].lower() + "s"), "w"))
EOF
children=0
for f in "$dir"/child-*.json; do
  plural=${f##*-}; plural=${plural%.json}
  code=$(acurl -o "$out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary @"$f" \
    "$KUBE_APISERVER_URL/api/v1/namespaces/kubeflow/$plural?dryRun=All&fieldValidation=Strict")
  check "the API server takes $(basename "$f") as render printed it ($code)" bash -c "[ '$code' = 201 ] || { cat '$out'; false; }"
  children=$((children + 1))
done
check "render printed 3 pods and 3 services" [ "$children" -eq 6 ]
# apply warns as kubectl shows an API server's warnings: a namespace that injects the Istio sidecar.
acurl -o /dev/null -X POST -H 'Content-Type: application/json' \
  -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"meshed","labels":{"istio-injection":"enabled"}}}' \
  "$KUBE_APISERVER_URL/api/v1/namespaces"
sed 's/namespace: kubeflow/namespace: meshed/' examples/tfjob-simple.yaml >"$dir/meshed.yaml"
"$C" apply -f "$dir/meshed.yaml" "${K[@]}" >"$dir/meshed.out" 2>"$out" && rc=0 || rc=$?
check "apply into an Istio namespace: created, exit 0" bash -c "[ $rc -eq 0 ] && grep -qx 'tfjob.kubeflow.org/tfjob-simple created' '$dir/meshed.out'"
check "apply into an Istio namespace: the warning" grep -q '^Warning: tfjob/tfjob-simple: spec.tfReplicaSpecs\[Worker\].template.metadata.annotations: the namespace injects the Istio sidecar' "$out"
"$C" apply -f "$dir/meshed.yaml" --warnings-as-errors "${K[@]}" >/dev/null 2>"$out" && rc=0 || rc=$?
check "--warnings-as-errors: exit 1" [ "$rc" -eq 1 ]
# apply of what get -o yaml printed: its resourceVersion is a precondition.
"$C" get tfjob-simple -n kubeflow -o yaml "${K[@]}" | sed 's/replicas: 3/replicas: 4/' >"$dir/exported.yaml"
check "apply of an exported object: configured" bash -c "'$C' apply -f '$dir/exported.yaml' ${K[*]} | grep -qx 'tfjob.kubeflow.org/tfjob-simple configured'"
"$C" apply -f "$dir/exported.yaml" "${K[@]}" >/dev/null 2>"$out" && rc=0 || rc=$?
check "apply of a stale resourceVersion: Conflict, exit 1" bash -c "[ $rc -eq 1 ] && grep -q '^Error from server (Conflict): Operation cannot be fulfilled on tfjobs.kubeflow.org \"tfjob-simple\"' '$out'"
# Strict schema: a typo'd field ("replica: 2") is refused by tfjobctl before anything is sent, and
# by the API server itself (the CRD is generated from the same schema) with its strict decoding
# error; with --validate=warn it is sent with a warning and --validate=ignore silently, and the
# server prunes it (the CRD keeps no unknown fields), so the job runs with the default replicas.
sed -e 's/name: tfjob-simple/name: typo/' -e 's/replicas: 2/replica: 2/' examples/tfjob-simple.yaml >"$dir/typo.yaml"
"$C" apply -f "$dir/typo.yaml" "${K[@]}" >/dev/null 2>"$out" && rc=0 || rc=$?
check "apply of replica: 2 refused, exit 1" bash -c "[ $rc -eq 1 ] && grep -qF 'spec.tfReplicaSpecs[Worker].replica: Unsupported value: \"replica\": unknown field \"spec.tfReplicaSpecs.Worker.replica\"; did you mean \"replicas\"?' '$out'"
check "nothing was created" bash -c "! '$C' get typo -n kubeflow ${K[*]} >/dev/null 2>&1"
"$C" validate -o json "$dir/typo.yaml" >"$dir/typo.json" || true
acurl -o "$dir/server.json" -X POST -H 'Content-Type: application/yaml' --data-binary @"$dir/typo.yaml" \
  "$KUBE_APISERVER_URL/apis/kubeflow.org/v1/namespaces/kubeflow/tfjobs?fieldValidation=Strict"
check "the API server refuses it too (strict decoding error)" grep -qF 'strict decoding error: unknown field \"spec.tfReplicaSpecs.Worker.replica\"' "$dir/server.json"
"$C" apply --validate=warn -f "$dir/typo.yaml" "${K[@]}" >"$dir/warn.out" 2>"$out" && rc=0 || rc=$?
check "apply --validate=warn: created with a warning" bash -c "[ $rc -eq 0 ] && grep -qx 'tfjob.kubeflow.org/typo created' '$dir/warn.out' && grep -q '^Warning: .*unknown field \"spec.tfReplicaSpecs.Worker.replica\"' '$out'"
check "the server pruned the typo'd field" bash -c "'$C' get typo -n kubeflow -o json ${K[*]} | python3 -c '
import json, sys
w = json.load(sys.stdin)[\"spec\"][\"tfReplicaSpecs\"][\"Worker\"]
assert \"replica\" not in w and \"replicas\" not in w, w'"
"$C" delete typo -n kubeflow "${K[@]}" >/dev/null
"$C" apply --validate=ignore -f "$dir/typo.yaml" "${K[@]}" >"$dir/ignore.out" 2>"$out" && rc=0 || rc=$?
check "apply --validate=ignore: created, nothing said" bash -c "[ $rc -eq 0 ] && [ ! -s '$out' ] && grep -qx 'tfjob.kubeflow.org/typo created' '$dir/ignore.out'"
"$C" delete typo -n kubeflow "${K[@]}" >/dev/null
# A bad allowed value in the pod template: the server's error and tfjobctl's are the same words.
sed -e 's/name: tfjob-simple/name: enum/' -e 's|image: kubeflow|imagePullPolicy: IfMissing\n              image: kubeflow|' examples/tfjob-simple.yaml >"$dir/enum.yaml"
acurl -o "$dir/server.json" -X POST -H 'Content-Type: application/yaml' --data-binary @"$dir/enum.yaml" \
  "$KUBE_APISERVER_URL/apis/kubeflow.org/v1/namespaces/kubeflow/tfjobs?fieldValidation=Strict"
check "bad imagePullPolicy: the server's message is tfjobctl validate's" bash -c "python3 -c 'import json, sys; print(json.load(sys.stdin)[\"message\"])' <'$dir/server.json' | grep -qF 'spec.tfReplicaSpecs.Worker.template.spec.containers[0].imagePullPolicy: Unsupported value: \"IfMissing\": supported values: \"Always\", \"Never\", \"IfNotPresent\"' && '$C' validate '$dir/enum.yaml' | grep -qF 'spec.tfReplicaSpecs[Worker].template.spec.containers[0].imagePullPolicy: Unsupported value: \"IfMissing\": supported values: \"Always\", \"Never\", \"IfNotPresent\"'"
# Server-side apply: created, then a no-op (same resourceVersion) when applied again, also after
# a status write by someone else; a change made by another field manager conflicts unless forced.
sed -e 's/name: tfjob-simple/name: ssa/' examples/tfjob-simple.yaml >"$dir/ssa.yaml"
rv() { "$C" get ssa -n kubeflow -o json "${K[@]}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])'; }
check "apply --server-side creates" bash -c "'$C' apply --server-side -f '$dir/ssa.yaml' ${K[*]} | grep -qx 'tfjob.kubeflow.org/ssa serverside-applied'"
check "managed by tfjobctl" bash -c "acurl() { curl -sS --cacert '$KUBE_CA_CERT' --cert '$KUBE_ADMIN_CERT' --key '$KUBE_ADMIN_KEY' \"\$@\"; }; acurl '$KUBE_APISERVER_URL/apis/kubeflow.org/v1/namespaces/kubeflow/tfjobs/ssa' | grep -q '\"manager\": \"tfjobctl\"'"
before="$(rv)"
acurl -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
  -d '{"status":{"conditions":[{"type":"Created","status":"True","reason":"TFJobCreated","message":"m"}]}}' \
  "$KUBE_APISERVER_URL/apis/kubeflow.org/v1/namespaces/kubeflow/tfjobs/ssa/status"
after_status="$(rv)"
"$C" apply --server-side -f "$dir/ssa.yaml" "${K[@]}" >/dev/null
check "apply --server-side of an unchanged file: a no-op (resourceVersion $after_status)" [ "$(rv)" = "$after_status" -a "$before" != "$after_status" ]
sed 's/replicas: 2/replicas: 5/' "$dir/ssa.yaml" >"$dir/ssa5.yaml"
"$C" apply --server-side --field-manager other -f "$dir/ssa5.yaml" "${K[@]}" >/dev/null 2>"$out" && rc=0 || rc=$?
check "another manager's change conflicts, exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'Error from server (Conflict): Apply failed with 1 conflict: conflict with \"tfjobctl\": .spec.tfReplicaSpecs.Worker.replicas' '$out'"
check "--force-conflicts takes it over" bash -c "'$C' apply --server-side --force-conflicts --field-manager other -f '$dir/ssa5.yaml' ${K[*]} >/dev/null && '$C' get ssa -n kubeflow -o wide ${K[*]} | grep -q 'Worker:5'"
"$C" apply --server-side -f "$dir/typo.yaml" "${K[@]}" >/dev/null 2>"$out" && rc=0 || rc=$?
check "apply --server-side of replica: 2 refused, exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'unknown field \"spec.tfReplicaSpecs.Worker.replica\"' '$out'"
"$C" delete ssa -n kubeflow "${K[@]}" >/dev/null
printf 'apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: c\n  cluster:\n    server: %s\n    certificate-authority: %s\nusers:\n- name: u\n  user:\n    token: not-a-token\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n' \
  "$KUBE_APISERVER_URL" "$KUBE_CA_CERT" >"$dir/bad-token.kubeconfig"
"$C" get -n kubeflow --kubeconfig "$dir/bad-token.kubeconfig" >/dev/null 2>"$out" && rc=0 || rc=$?
check "a wrong token: kubectl's 401 message, exit 1" bash -c "[ $rc -eq 1 ] && grep -qx 'error: You must be logged in to the server (Unauthorized)' '$out'"

# watch: the job succeeds while we follow it (a status write as the operator would make).
( sleep 2
  acurl -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
    -d '{"status":{"conditions":[{"type":"Succeeded","status":"True","reason":"TFJobSucceeded","message":"done"}]}}' \
    "$KUBE_APISERVER_URL/apis/kubeflow.org/v1/namespaces/kubeflow/tfjobs/tfjob-simple/status" ) &
"$C" watch tfjob-simple -n kubeflow --timeout 60 "${K[@]}" >"$out" && rc=0 || rc=$?
wait
check "watch ends with exit 0 when the job succeeds" [ "$rc" -eq 0 ]
check "watch printed the change" grep -q "condition Succeeded=True TFJobSucceeded: done" "$out"
check "watch ended with its summary" grep -q "^TFJob tfjob-simple Succeeded (TFJobSucceeded: done)" "$out"
check "describe shows the condition" bash -c "'$C' describe tfjob-simple -n kubeflow ${K[*]} | grep -q 'TFJobSucceeded'"
check "delete" bash -c "'$C' delete tfjob-simple -n kubeflow ${K[*]} | grep -qx 'tfjob.kubeflow.org \"tfjob-simple\" deleted'"
"$C" get tfjob-simple -n kubeflow "${K[@]}" >/dev/null 2>"$out" && rc=0 || rc=$?
check "get after delete: NotFound, exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'Error from server (NotFound)' '$out'"
# logs JOB REPLICA through the API server's pods/NAME/log, to a stand-in kubelet's log endpoint.
TFJOBCTL="$C" python3 tests/kube/logs_e2e.py || fail=1
# diagnose JOB: each step made to fail in turn with real objects, then all well.
TFJOBCTL="$C" python3 tests/kube/diagnose_e2e.py || fail=1
[ "$fail" -eq 0 ]
