#!/usr/bin/env bash
# tfjobctl's kubectl conventions: -f FILE|DIR|- (repeatable, multi-document streams, one result
# per document with FILE:LINE), -o json|yaml|name|wide|list, and that what -o yaml / -o list
# print reads back unchanged (our own parser and PyYAML, a YAML 1.1 reader as kubectl's is).
# Usage: tests/cli/test_tfjobctl_kubectl.sh [PATH/TO/tfjobctl]   (run from the source root)
set -u
# shellcheck source=tests/cli/common.bash
. "$(dirname "$0")/common.bash"

JOB='apiVersion: kubeflow.org/v1
kind: TFJob'
WORKER='    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: tf}]}}}'
{
  echo "# a comment before the first document"
  echo "$JOB"; echo 'metadata: {name: a}'; echo 'spec:'; echo '  tfReplicaSpecs:'; echo "$WORKER"
  echo '---'
  echo 'apiVersion: v1'; echo 'kind: ConfigMap'; echo 'metadata: {name: cm}'   # lines 9-11
  echo '--- # the invalid one'
  echo
  echo "$JOB"; echo 'metadata: {name: b}'; echo 'spec:'; echo '  tfReplicaSpecs:'   # line 14
  echo '    Worker: {template: {spec: {containers: [{name: tensorflow}]}}}'
  echo '---'
  echo "$JOB"; echo 'metadata: {name: c'                                          # lines 21-23
  echo '---'
} >"$TMP/multi.yaml"
{ echo "$JOB"; echo 'metadata: {name: one}'; echo 'spec:'; echo '  tfReplicaSpecs:'; echo "$WORKER"; } >"$TMP/one.yaml"
sed 's/name: one/name: two/' "$TMP/one.yaml" >"$TMP/two.yaml"
mkdir -p "$TMP/dir" "$TMP/empty"
"$CTL" default -o json -f "$TMP/one.yaml" >"$TMP/dir/b.json"
cp "$TMP/two.yaml" "$TMP/dir/a.yml"
cp "$TMP/multi.yaml" "$TMP/dir/c.yaml"
echo 'not a manifest' >"$TMP/dir/notes.txt"

# ---- -f: one result per document, FILE:LINE, the worst status ----
run 2 "validate -f multi" -- validate -f "$TMP/multi.yaml"
same "validate -f multi stdout" "$TMP/out" "tfjob/a valid
$TMP/multi.yaml:14: tfjob/b: spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be required"
contains "not a TFJob names its line" "$TMP/err" "$TMP/multi.yaml:9: not a TFJob"
contains "syntax error at the file's line" "$TMP/err" "$TMP/multi.yaml:24:1: YAML syntax error"
contains "syntax context at the file's line" "$TMP/err" "(line 23 column 11)"
# Blank and comment lines before a document do not shift the lines of its errors.
printf 'apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: a}\n---\n\n# c\n\napiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: c\n' >"$TMP/lead.yaml"
run 2 "validate -f, comments before a bad document" -- validate -f "$TMP/lead.yaml"
contains "syntax error line after comments" "$TMP/err" "$TMP/lead.yaml:11:1: YAML syntax error"
contains "syntax context line after comments" "$TMP/err" "(line 10 column 11)"
# An error whose field is written in the document: FILE:LINE:COLUMN, the line counted in the file.
{ cat "$TMP/one.yaml"; echo '---'; echo '# typo below'; sed 's/name: one/name: typo/; s/replicas: 2/replica: 2/' "$TMP/one.yaml"; } >"$TMP/typo.yaml"
run 1 "validate -f, unknown field in the second document" -- validate -f "$TMP/typo.yaml"
same "validate -f unknown field at its line and column" "$TMP/out" "tfjob/one valid
$TMP/typo.yaml:14:14: tfjob/typo: spec.tfReplicaSpecs[Worker].replica: Unsupported value: \"replica\": unknown field \"spec.tfReplicaSpecs.Worker.replica\"; did you mean \"replicas\"?"
STDIN="$TMP/typo.yaml" run 1 "validate -f - unknown field" -- validate -f -
contains "validate -f - unknown field position" "$TMP/out" "<stdin>:14:14: tfjob/typo: spec.tfReplicaSpecs[Worker].replica"
run 0 "validate -f --strict=false" -- validate --strict=false -f "$TMP/typo.yaml"
sed -n '13,19p' "$TMP/multi.yaml" >"$TMP/invalid-only.yaml"
run 1 "validate -f invalid: exit 1" -- validate -f "$TMP/invalid-only.yaml"
run 0 "validate -f repeatable" -- validate -f "$TMP/one.yaml" -f "$TMP/two.yaml"
same "validate -f repeatable stdout" "$TMP/out" "tfjob/one valid
tfjob/two valid"
STDIN="$TMP/two.yaml" run 0 "validate -f -" -- validate -f "$TMP/one.yaml" --filename -
same "validate -f - stdout" "$TMP/out" "tfjob/one valid
tfjob/two valid"
run 2 "validate -f DIR" -- validate -f "$TMP/dir"
same "validate -f DIR: .yaml/.yml/.json in name order" "$TMP/out" "tfjob/two valid
tfjob/one valid
tfjob/a valid
$TMP/dir/c.yaml:14: tfjob/b: spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be required"
run 2 "validate -f empty DIR" -- validate -f "$TMP/empty"
contains "empty DIR" "$TMP/err" "no .yaml, .yml or .json file"
run 2 "validate -f missing" -- validate -f "$TMP/nope.yaml" -f "$TMP/one.yaml"
contains "missing file named" "$TMP/err" "$TMP/nope.yaml"
contains "the others still validated" "$TMP/out" "tfjob/one valid"
run 2 "validate FILE and -f" -- validate -f "$TMP/one.yaml" "$TMP/two.yaml"
run 1 "validate -o json -f" -- validate -o json -f "$TMP/one.yaml" -f "$TMP/invalid-only.yaml"
pycheck "validate -o json -f: a contract line per TFJob" '
import json, sys
lines = [json.loads(l) for l in sys.stdin]
assert [d["valid"] for d in lines] == [True, False], lines
assert all(list(d) == ["valid", "errors"] for d in lines)'
# The positional FILE keeps its exact output and its all-or-nothing reading.
run 2 "validate FILE multi" -- validate "$TMP/multi.yaml"
[ ! -s "$TMP/out" ] && ok || bad "positional FILE with a bad document printed: $(cat "$TMP/out")"
run 0 "validate FILE" -- validate "$TMP/one.yaml"
same "validate FILE text" "$TMP/out" "$TMP/one.yaml: TFJob one is valid"
# FILE holding several TFJobs: each error names its TFJob (-o json keeps its contract lines).
run 1 "validate FILE, several TFJobs, one invalid" -- validate "$TMP/typo.yaml"
same "validate FILE several: errors name the TFJob" "$TMP/out" "$TMP/typo.yaml: TFJob one is valid
TFJob \"typo\": $TMP/typo.yaml:14:14: spec.tfReplicaSpecs[Worker].replica: Unsupported value: \"replica\": unknown field \"spec.tfReplicaSpecs.Worker.replica\"; did you mean \"replicas\"?"
run 1 "validate -o json FILE, several TFJobs" -- validate -o json "$TMP/typo.yaml"
pycheck "validate -o json FILE several: contract lines only" '
import json, sys
lines = [json.loads(l) for l in sys.stdin]
assert [d["valid"] for d in lines] == [True, False] and all(list(d) == ["valid", "errors"] for d in lines), lines'

# ---- default -o ----
run 0 "default -o yaml" -- default -o yaml -f "$TMP/one.yaml" -f "$TMP/two.yaml"
cp "$TMP/out" "$TMP/defaulted.yaml"
STDIN="$TMP/defaulted.yaml" run 0 "default -o yaml reads back" -- validate -f -
same "default -o yaml reads back: both" "$TMP/out" "tfjob/one valid
tfjob/two valid"
run 0 "default -o name" -- default -o name -f "$TMP/one.yaml" -f "$TMP/two.yaml"
same "default -o name" "$TMP/out" "tfjob.kubeflow.org/one
tfjob.kubeflow.org/two"
run 0 "default -o wide" -- default -o wide "$TMP/one.yaml"
pycheck "default -o wide" 'import sys; l=sys.stdin.read().splitlines(); assert l[0].split()==["NAME","NAMESPACE","REPLICAS","CLEAN-POD-POLICY","SUCCESS-POLICY"], l; assert l[1].split()==["one","default","Worker:2","Running","<default>"], l'
run 0 "default -o json several: a List" -- default -o json -f "$TMP/one.yaml" -f "$TMP/two.yaml"
pycheck "default -o json List" 'import json,sys; d=json.load(sys.stdin); assert d["kind"]=="List" and [i["metadata"]["name"] for i in d["items"]]==["one","two"], d'
run 2 "default -o bogus" -- default -o bogus "$TMP/one.yaml"
contains "default -o bogus lists formats" "$TMP/err" "expected json, yaml, name, wide"

# Strings a YAML 1.1 reader would take for something else come back as the same strings.
cat >"$TMP/tricky.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: tricky
  labels: {a: "yes", b: "on", c: "0755", d: "1e3", e: "2024-01-01", f: "~", g: "null", h: "1_000", i: "0x1F", j: "12:30"}
  annotations: {k: "- x", l: "a: b", m: "#x", n: " lead", o: "tail ", p: "multi\nline", q: "", r: "<<", s: ".inf", t: "@x", u: "=", v: "true"}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            image: tf
            args: ["--lr", "0.1", "yes", "3"]
            env: [{name: X, value: "no"}]
EOF
"$CTL" default "$TMP/tricky.yaml" >"$TMP/tricky.json"
run 0 "default -o yaml tricky" -- default -o yaml "$TMP/tricky.yaml"
cp "$TMP/out" "$TMP/tricky-out.yaml"
pycheck "PyYAML reads -o yaml as the JSON" 'import json,sys,yaml; assert yaml.safe_load(sys.stdin) == json.load(open(sys.argv[1]))' "$TMP/tricky.json"
run 0 "our parser reads -o yaml as the JSON" -- default "$TMP/tricky-out.yaml"
pycheck "our parser round trip" 'import json,sys; assert json.load(sys.stdin) == json.load(open(sys.argv[1]))' "$TMP/tricky.json"

# ---- render -o ----
run 0 "render JSON" -- render "$TMP/tricky.yaml"
cp "$TMP/out" "$TMP/render.json"
run 0 "render -o yaml" -- render -o yaml "$TMP/tricky.yaml"
cp "$TMP/out" "$TMP/render.yaml"
pycheck "render -o yaml: a stream of the Pods then the Services" '
import json, sys, yaml
docs = list(yaml.safe_load_all(sys.stdin))
want = json.load(open(sys.argv[1]))
for o in want["pods"] + want["services"]:
    o["metadata"].pop("ownerReferences")  # the job has no uid: an owner reference would be refused
assert docs == want["pods"] + want["services"], docs
assert [d["kind"] for d in docs] == ["Pod", "Pod", "Service", "Service"]
assert all(d["apiVersion"] == "v1" for d in docs)' "$TMP/render.json"
run 0 "render -o list" -- render -o list -f "$TMP/tricky.yaml" -f "$TMP/one.yaml"
cp "$TMP/out" "$TMP/list.yaml"
pycheck "render -o list: one kind: List" '
import sys, yaml
d = yaml.safe_load(sys.stdin)
assert d["kind"] == "List" and d["apiVersion"] == "v1", d.keys()
assert [i["metadata"]["name"] for i in d["items"]] == ["tricky-worker-0", "tricky-worker-1", "tricky-worker-0",
    "tricky-worker-1", "one-worker-0", "one-worker-1", "one-worker-0", "one-worker-1"]'
run 0 "render -o list reads back through our parser" -- plan --job "$TMP/tricky.yaml" --pods "$TMP/list.yaml" --now 2024-01-01T00:00:00Z
python3 -c 'import yaml,sys; d=yaml.safe_load(open(sys.argv[1])); print("\n---\n".join(yaml.safe_dump(o) for o in d["items"]))' "$TMP/list.yaml" >/dev/null && ok || bad "list items"
# A job with a uid keeps its owner references (the API server needs the uid).
sed 's/  name: tricky/  name: tricky\n  uid: 1234-5678/' "$TMP/tricky.yaml" >"$TMP/uid.yaml"
run 0 "render -o json with a uid" -- render -o json "$TMP/uid.yaml"
pycheck "owner reference kept with its uid" 'import json,sys; d=json.load(sys.stdin); assert d["kind"]=="List"; assert all(i["metadata"]["ownerReferences"][0]["uid"]=="1234-5678" for i in d["items"])'
run 0 "render -o name" -- render -o name "$TMP/one.yaml"
same "render -o name" "$TMP/out" "pod/one-worker-0
pod/one-worker-1
service/one-worker-0
service/one-worker-1"
run 0 "render -o wide" -- render -o wide "$TMP/one.yaml"
pycheck "render -o wide" 'import sys; l=sys.stdin.read().splitlines(); assert l[0].split()==["KIND","NAME","REPLICA-TYPE","INDEX","PORT","IMAGE"]; assert l[1].split()==["Pod","one-worker-0","worker","0","<none>","tf"], l; assert l[3].split()[:5]==["Service","one-worker-0","worker","0","2222"], l'
run 0 "render -f: a contract line per TFJob" -- render -f "$TMP/one.yaml" -f "$TMP/two.yaml"
pycheck "render -f lines" 'import json,sys; l=[json.loads(x) for x in sys.stdin]; assert [d["pods"][0]["metadata"]["name"] for d in l]==["one-worker-0","two-worker-0"]'
run 2 "render -o bogus" -- render -o bogus "$TMP/one.yaml"

# ---- tf-config -f ----
run 0 "tf-config -f" -- tf-config -f "$TMP/one.yaml" -f "$TMP/two.yaml" worker 1
pycheck "tf-config -f: a line per TFJob" 'import json,sys; l=[json.loads(x) for x in sys.stdin]; assert [d["cluster"]["worker"][1] for d in l]==["one-worker-1.default.svc:2222","two-worker-1.default.svc:2222"], l'

# ---- plan -f, -o ----
run 0 "plan -o yaml" -- plan -f "$TMP/one.yaml" -o yaml --now 2024-01-01T00:00:00Z
cp "$TMP/out" "$TMP/plan.yaml"
run 0 "plan JSON" -- plan --job "$TMP/one.yaml" --now 2024-01-01T00:00:00Z
pycheck "plan -o yaml is the plan" 'import json,sys,yaml; assert yaml.safe_load(open(sys.argv[1])) == json.load(sys.stdin)' "$TMP/plan.yaml"
run 0 "plan -o name" -- plan -f "$TMP/one.yaml" -o name --now 2024-01-01T00:00:00Z
same "plan -o name" "$TMP/out" "create pod/one-worker-0
create pod/one-worker-1
create service/one-worker-0
create service/one-worker-1"
run 0 "plan -o wide" -- plan -f "$TMP/one.yaml" -o wide --now 2024-01-01T00:00:00Z
contains "plan -o wide header" "$TMP/out" "ACTION"
run 2 "plan two jobs" -- plan -f "$TMP/one.yaml" --job "$TMP/two.yaml"

# ---- warnings: what the TFJob docs advise against (exit 0; kubectl's "Warning: " on stderr) ----
cat >"$TMP/warned.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: w}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers:
          - {name: tensorflow, image: tf, resources: {limits: {nvidia.com/gpu: 1}, requests: {cpu: 1}}}
EOF
run 0 "validate warned" -- validate "$TMP/warned.yaml"
same "validate warned: stdout as ever" "$TMP/out" "$TMP/warned.yaml: TFJob w is valid"
same "validate warned: the warnings" "$TMP/err" "Warning: tfjob/w: spec.tfReplicaSpecs[Worker].restartPolicy: restartPolicy Never should rarely be used: a pod that fails, or whose node fails, is not restarted and the job fails with it; use OnFailure or ExitCode (and resume from a checkpoint)
Warning: tfjob/w: spec.tfReplicaSpecs[Worker].template.spec.containers[0].resources.requests: a GPU limit without a memory request: the scheduler then reserves no memory for this replica, which may land on a node that cannot feed its GPUs; request cpu and memory next to the GPU limit"
run 0 "validate -o json warned" -- validate -o json "$TMP/warned.yaml"
same "validate -o json warned: the contract line" "$TMP/out" '{"valid":true,"errors":[]}'
run 1 "validate --warnings-as-errors" -- validate --warnings-as-errors -f "$TMP/warned.yaml"
contains "--warnings-as-errors prints them" "$TMP/err" "Warning: tfjob/w:"
run 0 "validate --warnings-as-errors, nothing to warn" -- validate --warnings-as-errors -f "$TMP/one.yaml"
[ ! -s "$TMP/err" ] && ok || bad "no warning expected: $(cat "$TMP/err")"
run 0 "validate --istio-injection" -- validate --istio-injection -f "$TMP/one.yaml"
contains "istio warning" "$TMP/err" "Warning: tfjob/one: spec.tfReplicaSpecs[Worker].template.metadata.annotations: the namespace injects the Istio sidecar"
# a pod template's restartPolicy the replica's overrides; more than one chief (valid: validation only
# refuses Chief next to Master)
cat >"$TMP/chiefs.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: chiefs}
spec:
  tfReplicaSpecs:
    Chief:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          restartPolicy: Always
          containers:
          - {name: tensorflow, image: tf}
EOF
run 0 "validate chiefs: valid, warned" -- validate "$TMP/chiefs.yaml"
same "validate chiefs: stdout as ever" "$TMP/out" "$TMP/chiefs.yaml: TFJob chiefs is valid"
same "validate chiefs: the warnings" "$TMP/err" "Warning: tfjob/chiefs: spec.tfReplicaSpecs[Chief].template.spec.restartPolicy: restartPolicy Always in the pod template is not used: the replica's restartPolicy (OnFailure) overrides it and the pods get OnFailure; set restartPolicy on the replica (spec.tfReplicaSpecs[Chief].restartPolicy) instead
Warning: tfjob/chiefs: spec.tfReplicaSpecs[Chief].replicas: 2 replicas of Chief: TensorFlow expects exactly one chief, but every one of these pods gets task type chief in TF_CONFIG, and the job succeeds only when all of them have; set replicas: 1 and add Worker replicas instead"
run 0 "validate -o json chiefs" -- validate -o json "$TMP/chiefs.yaml"
same "validate -o json chiefs: the contract line" "$TMP/out" '{"valid":true,"errors":[]}'
run 1 "validate --warnings-as-errors chiefs" -- validate --warnings-as-errors "$TMP/chiefs.yaml"
run 1 "invalid: no warnings" -- validate -f "$TMP/invalid-only.yaml" --istio-injection
if grep -q "Warning" "$TMP/err"; then bad "an invalid job got warnings"; else ok; fi

# ---- logs of a local run: --tail, --prefix, --all, -f over every replica, Ctrl-C ----
RUN="$TMP/run"
mkdir -p "$RUN"
echo '{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"t"}}' >"$RUN/job.json"
printf 'one\ntwo\nthree\nfour\n' >"$RUN/t-worker-0.log"
printf 'alpha\nbeta\nno newline' >"$RUN/t-ps-0.log"
pods_json() { # pods_json PID: worker-0 Succeeded, ps-0 Running with that process
  printf '{"items":[{"metadata":{"name":"t-worker-0"},"status":{"phase":"Succeeded"}},{"metadata":{"name":"t-ps-0","annotations":{"local.kubeflow.org/pid":"%s"}},"status":{"phase":"Running"}}]}\n' "$1" >"$RUN/pods.json"
}
pods_json 999999
run 0 "logs --tail 2" -- logs --tail 2 "$RUN" worker-0
same "logs --tail 2" "$TMP/out" "three
four"
run 0 "logs --tail 1, no final newline" -- logs --tail 1 "$RUN" ps-0
same "logs --tail 1, no final newline" "$TMP/out" "no newline"
run 0 "logs --tail 0" -- logs --tail 0 "$RUN" worker-0
[ ! -s "$TMP/out" ] && ok || bad "logs --tail 0 printed $(cat "$TMP/out")"
run 0 "logs --tail 9" -- logs --tail 9 "$RUN" t-worker-0
same "logs --tail beyond the start" "$TMP/out" "one
two
three
four"
run 2 "logs --tail x" -- logs --tail x "$RUN" worker-0
run 0 "logs --prefix" -- logs --prefix --tail 1 "$RUN" worker-0
same "logs --prefix" "$TMP/out" "[pod/t-worker-0/tensorflow] four"
run 0 "logs --all" -- logs --all --tail 2 "$RUN"
same "logs --all: name order, prefixed" "$TMP/out" "[pod/t-ps-0/tensorflow] beta
[pod/t-ps-0/tensorflow] no newline
[pod/t-worker-0/tensorflow] three
[pod/t-worker-0/tensorflow] four"
run 0 "logs -c tensorflow" -- logs -c tensorflow --tail 1 "$RUN" worker-0
same "logs -c tensorflow" "$TMP/out" "four"
run 2 "logs -c sidecar" -- logs --container sidecar "$RUN" worker-0
contains "logs -c sidecar: why" "$TMP/err" "logs: container 'sidecar' is not run locally"
run 2 "logs --all with a POD" -- logs --all "$RUN" worker-0
# follow_while_writing WORD N ARGS...: `tfjobctl logs ARGS` (with -f) runs while a writer, the
# replica's process, appends "WORD 1".."WORD N" to t-ps-0.log; the writer starts once the follower
# has the log open (a loaded machine can take longer than any fixed delay to start tfjobctl).
follow_while_writing() {
  local word=$1 n=$2 go="$TMP/go.$1"
  shift 2
  rm -f "$go"
  ( while [ ! -e "$go" ]; do sleep 0.05; done
    for i in $(seq "$n"); do echo "$word $i" >>"$RUN/t-ps-0.log"; sleep 0.3; done ) &
  local writer=$!
  pods_json "$writer"
  timeout 20 "$CTL" logs "$@" >"$TMP/out" 2>"$TMP/err" &
  local follower=$! p
  for _ in $(seq 200); do
    for p in $(pgrep -P "$follower"); do
      if ls -l "/proc/$p/fd" 2>/dev/null | grep -q 't-ps-0\.log$'; then break 2; fi
    done
    sleep 0.05
  done
  sleep 0.2
  touch "$go"
  wait "$follower"
  rc=$?
  wait "$writer" 2>/dev/null
}
# -f --all: follows the replica that still writes, until its process has ended.
follow_while_writing tick 3 -f --all --tail 0 "$RUN"
[ "$rc" -eq 0 ] && ok || bad "logs -f --all: exit $rc: $(cat "$TMP/err")"
same "logs -f --all: what was written meanwhile" "$TMP/out" "[pod/t-ps-0/tensorflow] tick 1
[pod/t-ps-0/tensorflow] tick 2
[pod/t-ps-0/tensorflow] tick 3"
# -f --timestamps: each line with its time as it comes (no index here: the log's modification time).
follow_while_writing tock 2 -f --timestamps --tail 0 "$RUN" ps-0
[ "$rc" -eq 0 ] && ok || bad "logs -f --timestamps: exit $rc: $(cat "$TMP/err")"
pycheck "logs -f --timestamps: timed lines as written" '
import sys, re, time, datetime
lines = sys.stdin.read().splitlines()
assert [l.split(" ", 1)[1] for l in lines] == ["tock 1", "tock 2"], lines
for l in lines:
    t = datetime.datetime.strptime(l.split(" ")[0], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    assert abs(t.timestamp() - time.time()) < 60, l
'
# Ctrl-C ends -f with 130, as every command.
sleep 30 &
sleeper=$!
pods_json "$sleeper"
"$CTL" logs -f "$RUN" ps-0 >"$TMP/out" 2>"$TMP/err" &
follower=$!
sleep 0.5
kill -INT "$follower"
wait "$follower"
rc=$?
kill "$sleeper" 2>/dev/null; wait "$sleeper" 2>/dev/null
[ "$rc" -eq 130 ] && ok || bad "logs -f Ctrl-C: exit $rc, want 130"

# ---- logs --since, --since-time, --timestamps: the run's time index of each log ----
# t-worker-0.log: one\n two\n three\n four\n (bytes 0-3, 4-7, 8-13, 14-18). Its index says bytes
# 0-3 were written by T0 (2001-09-09T01:46:40Z), 4-13 by T0+10s; four\n is past the index and
# takes the log's modification time, T0+20s.
TL="$RUN/t-worker-0.log"
printf '4 1000000000000\n14 1000000010000\n' >"$TL.times"
touch -d @1000000020 "$TL"
run 0 "logs with an index: plain output" -- logs "$RUN" worker-0
cmp -s "$TMP/out" "$TL" && ok || bad "logs with a time index: not the log byte for byte"
run 0 "logs --since-time T0+5s" -- logs --since-time 2001-09-09T01:46:45Z "$RUN" worker-0
same "logs --since-time: lines written after it" "$TMP/out" "two
three
four"
run 0 "logs --since-time T0" -- logs --since-time 2001-09-09T01:46:40Z "$RUN" worker-0
same "logs --since-time: a time the index names" "$TMP/out" "one
two
three
four"
run 0 "logs --since-time T0+15s" -- logs --since-time 2001-09-09T01:46:55Z "$RUN" worker-0
same "logs --since-time: past the index, the log's modification time" "$TMP/out" "four"
run 0 "logs --since-time T0+25s" -- logs --since-time 2001-09-09T01:47:05Z "$RUN" worker-0
empty "logs --since-time after the last write" "$TMP/out"
run 0 "logs --since-time --tail" -- logs --since-time 2001-09-09T01:46:45Z --tail 9 "$RUN" worker-0
same "logs --tail does not reach before --since" "$TMP/out" "two
three
four"
run 0 "logs --since-time --tail 1" -- logs --since-time 2001-09-09T01:46:45Z --tail 1 "$RUN" worker-0
same "logs --since-time --tail 1" "$TMP/out" "four"
run 0 "logs --timestamps --prefix" -- logs --timestamps --prefix "$RUN" worker-0
same "logs --timestamps: after the prefix, RFC 3339 UTC" "$TMP/out" "[pod/t-worker-0/tensorflow] 2001-09-09T01:46:40.000Z one
[pod/t-worker-0/tensorflow] 2001-09-09T01:46:50.000Z two
[pod/t-worker-0/tensorflow] 2001-09-09T01:46:50.000Z three
[pod/t-worker-0/tensorflow] 2001-09-09T01:47:00.000Z four"
# A record in the middle of a line: the line began before it, so it is older than the record.
printf '6 1000000000000\n' >"$TL.times"
run 0 "logs --since-time, record inside a line" -- logs --since-time 2001-09-09T01:46:41Z "$RUN" worker-0
same "logs --since-time: a line begun before is left out" "$TMP/out" "three
four"
# A damaged index: named with its line, the lines after the last good record take the mtime.
printf '4 1000000000000\n8 x\n' >"$TL.times"
run 0 "logs --timestamps, damaged index" -- logs --timestamps --tail 2 "$RUN" worker-0
contains "damaged index named" "$TMP/err" "$TL.times:2: not a record 'OFFSET MILLISECONDS'"
same "damaged index: mtime after it" "$TMP/out" "2001-09-09T01:47:00.000Z three
2001-09-09T01:47:00.000Z four"
# A record too long to be one: named too, not taken for one being written.
{ printf '4 1000000000000\n'; printf '%0200d\n' 7; } >"$TL.times"
run 0 "logs --timestamps, overlong record" -- logs --timestamps --tail 1 "$RUN" worker-0
contains "overlong record named" "$TMP/err" "$TL.times:2: not a record"
# No index at all (a run of an older version): every line takes the log's modification time.
rm -f "$TL.times"
run 0 "logs --since, old log" -- logs --since 1h "$RUN" worker-0
empty "logs --since 1h of a log last written in 2001" "$TMP/out"
touch "$TL"
run 0 "logs --since, fresh log" -- logs --since 1h "$RUN" worker-0
same "logs --since 1h of a log written now" "$TMP/out" "one
two
three
four"
run 2 "logs --since 0" -- logs --since 0 "$RUN" worker-0
contains "--since 0 refused" "$TMP/err" "logs: --since needs a positive duration (10s, 5m, 1h30m), got '0'"
run 2 "logs --since-time bad" -- logs --since-time yesterday "$RUN" worker-0
contains "--since-time bad" "$TMP/err" "logs: --since-time needs an RFC 3339 time"
run 2 "logs --tail -2" -- logs --tail -2 "$RUN" worker-0
same "one --tail message (logs)" "$TMP/err" "tfjobctl: logs: --tail needs a number of lines 0 or more (-1: all), got '-2'"
run 2 "get --run-dir --tail -1" -- get --run-dir "$RUN" --tail -1
same "one --tail message (get)" "$TMP/err" "tfjobctl: get: --tail needs a number of lines from 0 to 10000, got '-1'"
# A real run: the engine writes the index as the replicas write; a line written 2 s after the
# first one gets a time about 2 s later, and --since-time between them splits the log there.
local_job() { # local_job NAME CONTAINER-FIELDS: a TFJob of one Never worker, run by tfjobctl run
  printf 'apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: %s}\nspec:\n  tfReplicaSpecs:\n' "$1"
  printf '    Worker:\n      replicas: 1\n      restartPolicy: Never\n      template:\n        spec:\n'
  printf '          containers:\n          - {name: tensorflow, image: x, %s}\n' "$2"
}
local_job times 'command: [sh, -c, "echo early; sleep 2; echo late; printf unterminated"]' >"$TMP/times.yaml"
run 0 "run for the time index" -- run --run-dir "$TMP/trun" "$TMP/times.yaml"
[ -s "$TMP/trun/times-worker-0.log.times" ] && ok || bad "tfjobctl run wrote no time index"
run 0 "logs --timestamps of a run" -- logs --timestamps "$TMP/trun" worker-0
pycheck "--timestamps of a run: early about 2 s before late" '
import sys, datetime
t = {}
for line in sys.stdin:
    stamp, text = line.rstrip("\n").split(" ", 1)
    t[text] = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
assert sorted(t) == ["early", "late", "unterminated"], t
assert 1.5 <= t["late"] - t["early"] <= 10, t
assert t["unterminated"] == t["late"], t
'
MID="$(python3 -c 'import sys, datetime
s = sys.stdin.readline().split(" ")[0]
t = datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ") + datetime.timedelta(seconds=1.2)
print(t.strftime("%Y-%m-%dT%H:%M:%SZ"))' <"$TMP/out")"
run 0 "logs --since-time of a run" -- logs --since-time "$MID" "$TMP/trun" worker-0
same "logs --since-time splits a run's log" "$TMP/out" "late
unterminated"
run 0 "logs --since of a run" -- logs --since 1h "$TMP/trun" worker-0
cmp -s "$TMP/out" "$TMP/trun/times-worker-0.log" && ok || bad "logs --since 1h of a run: not the whole log"

# get --run-dir prints the run as kubectl prints objects: -o yaml the same object as -o json, -o name.
run 0 "get --run-dir -o name" -- get --run-dir "$TMP/trun" -o name
same "get --run-dir -o name" "$TMP/out" "tfjob.kubeflow.org/times"
"$CTL" get --run-dir "$TMP/trun" -o json >"$TMP/run.json"
run 0 "get --run-dir -o yaml" -- get --run-dir "$TMP/trun" -o yaml
pycheck "get --run-dir -o yaml equals -o json" '
import sys, json, yaml
assert yaml.safe_load(sys.stdin) == json.load(open(sys.argv[1]))
' "$TMP/run.json"
run 2 "get --run-dir -o wide" -- get --run-dir "$TMP/trun" -o wide

# ---- run -f FILE|DIR|-: exactly one TFJob; several are refused, named, before anything starts ----
mkdir -p "$TMP/rundir-in" "$TMP/rundir-in/sub"
local_job quick 'workingDir: sub, command: [sh, -c, "pwd"]' >"$TMP/rundir-in/quick.yaml"
run 0 "run -f DIR" -- run -f "$TMP/rundir-in" --run-dir "$TMP/r-dir"
contains "run -f DIR: from its file" "$TMP/out" "Running TFJob quick from $TMP/rundir-in/quick.yaml"
same "run -f DIR: workingDir against the file's directory" "$TMP/r-dir/quick-worker-0.log" "$TMP/rundir-in/sub"
sed 's/workingDir: sub, //' "$TMP/rundir-in/quick.yaml" >"$TMP/quick-here.yaml"
STDIN="$TMP/quick-here.yaml" run 0 "run -f -" -- run --run-dir "$TMP/r-stdin" -f -
contains "run -f -: from standard input" "$TMP/out" "Running TFJob quick from -"
run 2 "run -f multi" -- run -f "$TMP/multi.yaml" --run-dir "$TMP/r-multi"
contains "run -f multi: the bad document named" "$TMP/err" "$TMP/multi.yaml:9: not a TFJob"
run 2 "run -f two files" -- run -f "$TMP/one.yaml" -f "$TMP/two.yaml" --run-dir "$TMP/r-two"
same "run -f two TFJobs: refused, named" "$TMP/err" "tfjobctl: run: the input holds 2 TFJobs: tfjob/one ($TMP/one.yaml:1), tfjob/two ($TMP/two.yaml:1); a run is one TFJob in one run directory: give one, and a tfjobctl run to each"
[ ! -e "$TMP/r-two" ] && ok || bad "run -f with two TFJobs made a run directory"
mkdir -p "$TMP/plan-one" "$TMP/plan-two" && cp "$TMP/one.yaml" "$TMP/plan-one/"
cp "$TMP/one.yaml" "$TMP/two.yaml" "$TMP/plan-two/"
run 2 "plan -f DIR of two" -- plan -f "$TMP/plan-two"
same "plan -f DIR of two: refused, named" "$TMP/err" "tfjobctl: plan: the input holds 2 TFJobs: tfjob/one ($TMP/plan-two/one.yaml:1), tfjob/two ($TMP/plan-two/two.yaml:1); a plan is one reconcile of one TFJob: give one"
run 0 "plan -f DIR of one" -- plan -f "$TMP/plan-one" -o name
same "plan -f DIR of one" "$TMP/out" "create pod/one-worker-0
create pod/one-worker-1
create service/one-worker-0
create service/one-worker-1"
run 2 "run FILE and -f" -- run -f "$TMP/one.yaml" "$TMP/two.yaml"
contains "run FILE and -f" "$TMP/err" "run: give FILE or -f, not both"

echo "tfjobctl kubectl conventions: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
