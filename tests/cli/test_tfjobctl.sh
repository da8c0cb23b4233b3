#!/usr/bin/env bash
# Contract tests of tfjobctl (the exact outputs and exit statuses other tools rely on): exit codes, JSON shapes, stdin,
# YAML/JSON input, --old, --compat, syntax error positions, default, exit-code, --help.
# Usage: tests/cli/test_tfjobctl.sh [PATH/TO/tfjobctl]   (run from the source root)
set -u
# shellcheck source=tests/cli/common.bash
. "$(dirname "$0")/common.bash"

# run_stdin EXPECTED_RC LABEL FILE -- ARGS...: run, with FILE on standard input.
run_stdin() {
  local want="$1" label="$2" input="$3"; shift 3
  STDIN="$input" run "$want" "$label" "$@"
}
# The -o json shape, exactly: {"valid":bool,"errors":[{"field","type","detail"}]}, one per line.
SHAPE='
import json, sys
lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
assert lines, "no output"
for line in lines:
    d = json.loads(line)
    assert list(d.keys()) == ["valid", "errors"], d.keys()
    assert isinstance(d["valid"], bool)
    assert isinstance(d["errors"], list)
    assert d["valid"] == (len(d["errors"]) == 0)
    for e in d["errors"]:
        assert list(e.keys()) == ["field", "type", "detail"], e.keys()
        assert all(isinstance(v, str) for v in e.values())
        assert e["type"] in ("FieldValueRequired", "FieldValueInvalid", "FieldValueForbidden", "FieldValueNotSupported",
                             "FieldValueDuplicate", "FieldValueTypeInvalid", "FieldValueTooLong", "FieldValueNotFound",
                             "FieldValueTooMany", "InternalError"), e["type"]
'

write() { local f="$TMP/$1"; shift; printf '%s\n' "$@" >"$f"; }

write valid.yaml 'apiVersion: kubeflow.org/v1' 'kind: TFJob' 'metadata: {name: ok}' 'spec:' '  tfReplicaSpecs:' \
  '    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: tf}]}}}'
write invalid.yaml 'apiVersion: kubeflow.org/v1' 'kind: TFJob' 'metadata: {name: Bad}' 'spec:' '  tfReplicaSpecs:' \
  '    Worker: {template: {spec: {containers: [{name: main}]}}}'
write chief-master.yaml 'apiVersion: kubeflow.org/v1' 'kind: TFJob' 'metadata: {name: cm}' 'spec:' '  tfReplicaSpecs:' \
  '    chief: {template: {spec: {containers: [{name: tensorflow, image: tf}]}}}' \
  '    Master: {template: {spec: {containers: [{name: tensorflow, image: tf}]}}}'
write managed-kf.yaml 'apiVersion: kubeflow.org/v1' 'kind: TFJob' 'metadata: {name: ok}' 'spec:' \
  '  runPolicy: {managedBy: kubeflow.org/training-operator, schedulingPolicy: {queue: a}}' '  tfReplicaSpecs:' \
  '    Worker: {template: {spec: {containers: [{name: tensorflow, image: tf}]}}}'
sed 's#kubeflow.org/training-operator#kueue.x-k8s.io/multikueue#' "$TMP/managed-kf.yaml" >"$TMP/managed-mk.yaml"
sed 's#queue: a#queue: b#' "$TMP/managed-kf.yaml" >"$TMP/queue-b.yaml"
write two.yaml 'apiVersion: kubeflow.org/v1' 'kind: TFJob' 'metadata: {name: one}' \
  'spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, image: tf}]}}}}}' '---' \
  'apiVersion: kubeflow.org/v1' 'kind: TFJob' 'metadata: {name: Two}' \
  'spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, image: tf}]}}}}}'

# ---- validate: exit codes ----
run 0 "validate valid" -- validate "$TMP/valid.yaml"
contains "validate valid text" "$TMP/out" "is valid"
run 1 "validate invalid" -- validate "$TMP/invalid.yaml"
contains "validate invalid text" "$TMP/out" "$TMP/invalid.yaml:3:12: metadata.name: Invalid value: \"Bad\""
run 2 "validate syntax error" -- validate tests/data/bad/yaml-syntax.yaml
contains "yaml syntax position" "$TMP/err" "tests/data/bad/yaml-syntax.yaml:4:5:"
empty "yaml syntax stdout" "$TMP/out"
run 2 "validate JSON syntax error" -- validate tests/data/bad/json-token.json
contains "json syntax position" "$TMP/err" "tests/data/bad/json-token.json:2:11: JSON syntax error"
run 2 "validate duplicate key" -- validate tests/data/bad/duplicate-key.yaml
contains "duplicate key position" "$TMP/err" "tests/data/bad/duplicate-key.yaml:5:3: duplicate key 'name'"
run 2 "validate invalid UTF-8" -- validate tests/data/bad/invalid-utf8.yaml
contains "invalid UTF-8 position" "$TMP/err" "tests/data/bad/invalid-utf8.yaml:4:14:"
run 2 "validate alias bomb" -- validate tests/data/bad/alias-bomb.yaml
contains "alias bomb" "$TMP/err" "more than 2000000 values"
run 2 "validate pod" -- validate tests/data/bad/pod.yaml
contains "pod" "$TMP/err" "not a TFJob"
run 2 "validate empty" -- validate tests/data/bad/empty.yaml
contains "empty" "$TMP/err" "tests/data/bad/empty.yaml: empty input"
run 2 "validate missing file" -- validate "$TMP/nope.yaml"
contains "missing file" "$TMP/err" "$TMP/nope.yaml"
run 2 "validate no FILE" -- validate
run 2 "validate two FILEs" -- validate "$TMP/valid.yaml" "$TMP/valid.yaml"
run 2 "validate unknown option" -- validate --bogus "$TMP/valid.yaml"
run 2 "validate -o yaml" -- validate -o yaml "$TMP/valid.yaml"
run 2 "validate --compat bogus" -- validate --compat bogus "$TMP/valid.yaml"
contains "compat bogus" "$TMP/err" "bogus"
run 2 "validate --old missing" -- validate --old "$TMP/nope.yaml" "$TMP/valid.yaml"
run 1 "validate wrong type" -- validate tests/data/bad/replicas-string.yaml
contains "wrong type" "$TMP/out" "spec.tfReplicaSpecs[Worker].replicas: Invalid value: \"three\""
run 1 "validate 2^31 replicas" -- validate tests/data/bad/replicas-2pow31.yaml
contains "2^31" "$TMP/out" "spec.tfReplicaSpecs[Worker].replicas: Invalid value: 2147483648"
# The library's replica limit (docs/limits.md) is a validation rule, in both modes.
sed 's/2147483648/100000000/' tests/data/bad/replicas-2pow31.yaml >"$TMP/replicas-1e8.yaml"
for compat in documented training-operator-1.9; do
  run 1 "validate over the replica limit ($compat)" -- validate --compat "$compat" "$TMP/replicas-1e8.yaml"
  contains "replica limit ($compat)" "$TMP/out" "spec.tfReplicaSpecs[Worker].replicas: Invalid value: 100000000: must be less than or equal to 100000 (the limit of replicas of one type)"
  run 1 "validate -o json over the replica limit ($compat)" -- validate -o json --compat "$compat" "$TMP/replicas-1e8.yaml"
  [ "$(cat "$TMP/out")" = '{"valid":false,"errors":[{"field":"spec.tfReplicaSpecs[Worker].replicas","type":"FieldValueInvalid","detail":"must be less than or equal to 100000 (the limit of replicas of one type)"}]}' ] && ok || bad "replica limit -o json ($compat): $(cat "$TMP/out")"
done
python3 -c 'import sys; sys.stdout.write("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  annotations:\n    a: \"" + "x" * (17 * 1024 * 1024) + "\"\n")' >"$TMP/huge.yaml"
run 2 "validate huge" -- validate "$TMP/huge.yaml"
contains "huge" "$TMP/err" "larger than the limit of 16777216 bytes"

# ---- validate: strict schema (unknown fields) ----
sed -e 's/replicas: 2/replica: 2/' -e 's/image: tf/image: tf, imagePullPolicy: Sometimes/' "$TMP/valid.yaml" >"$TMP/typo.yaml"
run 1 "validate unknown field (strict by default)" -- validate "$TMP/typo.yaml"
contains "unknown field" "$TMP/out" "$TMP/typo.yaml:6:14: spec.tfReplicaSpecs[Worker].replica: Unsupported value: \"replica\": unknown field \"spec.tfReplicaSpecs.Worker.replica\"; did you mean \"replicas\"?"
run 1 "validate -o json unknown field" -- validate -o json "$TMP/typo.yaml"
pycheck "json unknown field" '
import json, sys
d = json.load(sys.stdin)
assert d["errors"][0] == {"field": "spec.tfReplicaSpecs[Worker].replica", "type": "FieldValueNotSupported",
                          "detail": "unknown field \"spec.tfReplicaSpecs.Worker.replica\"; did you mean \"replicas\"?"}, d
'
run 1 "validate --strict=false: the bad value stays" -- validate --strict=false "$TMP/typo.yaml"
pycheck "strict=false: no unknown field" 'import sys; t = sys.stdin.read(); assert "unknown field" not in t and "imagePullPolicy: Unsupported value: \"Sometimes\"" in t, t'
run 1 "validate --compat v1.9 is strict too" -- validate --compat training-operator-1.9 "$TMP/typo.yaml"
contains "compat strict" "$TMP/out" "did you mean \"replicas\""
run 2 "validate --strict=maybe" -- validate --strict=maybe "$TMP/typo.yaml"
sed -e 's/replicas: 2/replica: 2/' "$TMP/valid.yaml" >"$TMP/typo-only.yaml"
run 0 "validate --strict=false accepts the unknown field" -- validate --strict=false "$TMP/typo-only.yaml"
run 0 "default keeps the unknown field" -- default "$TMP/typo-only.yaml"
pycheck "default keeps replica" 'import json, sys; d = json.load(sys.stdin); assert d["spec"]["tfReplicaSpecs"]["Worker"]["replica"] == 2, d'

# ---- validate -o json ----
run 0 "json valid" -- validate -o json "$TMP/valid.yaml"
pycheck "json valid shape" "$SHAPE"
pycheck "json valid value" 'import json,sys; assert json.load(sys.stdin) == {"valid": True, "errors": []}'
run 1 "json invalid" -- validate -o json "$TMP/invalid.yaml"
pycheck "json invalid shape" "$SHAPE"
pycheck "json invalid value" '
import json, sys
d = json.load(sys.stdin)
assert d["valid"] is False
got = [(e["field"], e["type"]) for e in d["errors"]]
assert got == [("metadata.name", "FieldValueInvalid"),
               ("spec.tfReplicaSpecs[Worker].template.spec.containers[0].image", "FieldValueRequired"),
               ("spec.tfReplicaSpecs[Worker].template.spec.containers", "FieldValueRequired")], got
assert d["errors"][1]["detail"] == "must be required"
'
run 1 "json --output=json" -- validate --output=json "$TMP/invalid.yaml"
pycheck "json --output shape" "$SHAPE"
run 1 "json two documents" -- validate -o json "$TMP/two.yaml"
pycheck "json two shape" "$SHAPE"
pycheck "json two lines" 'import json,sys; l=[json.loads(x) for x in sys.stdin]; assert [d["valid"] for d in l] == [True, False], l'
run 2 "json syntax error" -- validate -o json tests/data/bad/json-token.json
empty "json syntax error stdout" "$TMP/out"

# ---- stdin, JSON input ----
run_stdin 0 "stdin valid" "$TMP/valid.yaml" -- validate -
run_stdin 1 "stdin invalid json" "$TMP/invalid.yaml" -- validate -o json -
pycheck "stdin json shape" "$SHAPE"
run_stdin 2 "stdin syntax" tests/data/bad/yaml-syntax.yaml -- validate -
contains "stdin syntax position" "$TMP/err" "<stdin>:4:5:"
"$CTL" default "$TMP/valid.yaml" >"$TMP/valid.json" 2>/dev/null
run 0 "validate JSON file" -- validate "$TMP/valid.json"
run_stdin 0 "validate JSON stdin" "$TMP/valid.json" -- validate -o json -
python3 -c 'import json; print(json.dumps([json.load(open("'"$TMP/valid.json"'"))]*2))' >"$TMP/array.json"
run 0 "validate JSON array" -- validate -o json "$TMP/array.json"
pycheck "array lines" 'import sys; assert len(sys.stdin.read().splitlines()) == 2'
printf '{"apiVersion":"v1","kind":"List","items":[%s]}\n' "$(cat "$TMP/valid.json")" >"$TMP/list.json"
run 0 "validate Kubernetes List" -- validate "$TMP/list.json"

# ---- --compat ----
run 1 "chief+Master documented" -- validate -o json "$TMP/chief-master.yaml"
pycheck "chief+Master error" 'import json,sys; d=json.load(sys.stdin); assert d["errors"][0]["type"] == "FieldValueForbidden", d'
run 0 "chief+Master v1.9" -- validate --compat training-operator-1.9 "$TMP/chief-master.yaml"
run 0 "chief+Master v1.9 =" -- validate --compat=training-operator-1.9 -o json "$TMP/chief-master.yaml"
run 1 "--compat documented" -- validate --compat documented "$TMP/chief-master.yaml"

# ---- --old ----
run 0 "update same" -- validate --old "$TMP/managed-kf.yaml" "$TMP/managed-kf.yaml"
run 1 "update managedBy" -- validate -o json --old "$TMP/managed-kf.yaml" "$TMP/managed-mk.yaml"
pycheck "update managedBy error" '
import json, sys
d = json.load(sys.stdin)
assert d["errors"] == [{"field": "spec.runPolicy.managedBy", "type": "FieldValueInvalid", "detail": "field is immutable"}], d'
run 1 "update managedBy unset" -- validate --old "$TMP/managed-kf.yaml" "$TMP/valid.yaml"
contains "unset text" "$TMP/out" 'spec.runPolicy.managedBy: Invalid value: "null": field is immutable'
run 1 "update queue" -- validate -o json --compat training-operator-1.9 --old "$TMP/managed-kf.yaml" "$TMP/queue-b.yaml"
pycheck "update queue error" 'import json,sys; d=json.load(sys.stdin); assert d["errors"][0]["field"] == "spec.runPolicy.schedulingPolicy.queue", d'
run_stdin 1 "update from stdin" "$TMP/managed-mk.yaml" -- validate --old "$TMP/managed-kf.yaml" -

# ---- default ----
for f in examples/*.yaml; do
  for mode in documented training-operator-1.9; do
    run 0 "default $f $mode" -- default --compat "$mode" "$f"
    empty "default $f $mode stderr" "$TMP/err"
    pycheck "default $f $mode output" '
import json, sys
mode = sys.argv[1]
text = sys.stdin.read()
dec = json.JSONDecoder()
docs, i = [], 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    d, i = dec.raw_decode(text, i)
    docs.append(d)
assert docs, "no output"
for d in docs:
    assert d["apiVersion"] == "kubeflow.org/v1" and d["kind"] == "TFJob"
    spec = d["spec"]
    assert spec["runPolicy"]["cleanPodPolicy"] in ("All", "Running", "None")
    if mode == "training-operator-1.9":
        assert spec["runPolicy"]["cleanPodPolicy"] in ("None", "All", "Running")
    assert "successPolicy" in spec
    for t, r in spec["tfReplicaSpecs"].items():
        assert t in ("Chief", "Master", "PS", "Worker", "Evaluator"), t
        assert isinstance(r["replicas"], int) and r["restartPolicy"], r
        cs = r["template"]["spec"]["containers"]
        tf = [c for c in cs if c["name"] == "tensorflow"] or cs[:1]
        ports = [p for p in tf[0].get("ports", []) if p.get("name") == "tfjob-port"]
        assert len(ports) == 1, tf[0]
' "$mode"
  done
done
# The compat modes differ in cleanPodPolicy when it is absent.
run 0 "default documented" -- default "$TMP/valid.yaml"
pycheck "default documented cleanPodPolicy" '
import json, sys
d = json.load(sys.stdin)
assert d["spec"]["runPolicy"] == {"cleanPodPolicy": "Running"}, d["spec"]
assert d["spec"]["successPolicy"] == ""
w = d["spec"]["tfReplicaSpecs"]["Worker"]
assert w["replicas"] == 2 and w["restartPolicy"] == "Never"
assert w["template"]["spec"]["containers"][0]["ports"] == [{"name": "tfjob-port", "containerPort": 2222}]'
run 0 "default v1.9" -- default --compat training-operator-1.9 "$TMP/valid.yaml"
pycheck "default v1.9 cleanPodPolicy" 'import json,sys; d=json.load(sys.stdin); assert d["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}'
run_stdin 0 "default stdin" "$TMP/valid.json" -- default -
pycheck "default stdin idempotent" 'import json,sys; d=json.load(sys.stdin); assert d == json.load(open(sys.argv[1])), "not idempotent"' "$TMP/valid.json"
run 0 "default keeps unknown fields" -- default "$TMP/chief-master.yaml"
run 2 "default wrong type" -- default tests/data/bad/replicas-string.yaml
contains "default wrong type names file and field" "$TMP/err" "tests/data/bad/replicas-string.yaml: spec.tfReplicaSpecs[Worker].replicas"
empty "default wrong type stdout" "$TMP/out"
run 2 "default syntax" -- default tests/data/bad/json-trailing-comma.json
contains "default syntax position" "$TMP/err" "tests/data/bad/json-trailing-comma.json:4:1:"
run 2 "default no file" -- default
run 2 "default bad compat" -- default --compat x "$TMP/valid.yaml"
run 2 "default unknown option" -- default -x "$TMP/valid.yaml"

# ---- exit-code ----
for code in 0 1 2 126 127 128 130 137 138 139 143 255; do
  case $code in
    1|2|126|127|128|139) doc=permanent ;;
    *) doc=retryable ;;
  esac
  if [ "$code" -ge 128 ]; then v19=retryable; else v19=permanent; fi
  # 0 is not a failure: the replica succeeded, in both modes.
  if [ "$code" -eq 0 ]; then doc=success v19=success; fi
  run 0 "exit-code $code" -- exit-code "$code"
  contains "exit-code $code documented" "$TMP/out" "$doc"
  [ "$(cat "$TMP/out")" = "$doc" ] && ok || bad "exit-code $code: '$(cat "$TMP/out")' != $doc"
  run 0 "exit-code $code v1.9" -- exit-code --compat training-operator-1.9 "$code"
  [ "$(cat "$TMP/out")" = "$v19" ] && ok || bad "exit-code $code v1.9: '$(cat "$TMP/out")' != $v19"
  run 0 "exit-code $code v1.9 after" -- exit-code "$code" --compat=training-operator-1.9
  [ "$(cat "$TMP/out")" = "$v19" ] && ok || bad "exit-code $code v1.9 (option after): '$(cat "$TMP/out")' != $v19"
done
# What no container can report is refused, with the rule (0 to 255) in the message.
for code in -1 -128 -2147483648 256 1000 2147483647; do
  run 2 "exit-code $code" -- exit-code "$code"
  empty "exit-code $code stdout" "$TMP/out"
  contains "exit-code $code rule" "$TMP/err" "exit codes are 0 to 255"
  run 2 "exit-code $code v1.9" -- exit-code --compat training-operator-1.9 "$code"
done
run 2 "exit-code after --" -- exit-code -- -5
contains "exit-code after -- rule" "$TMP/err" "-5 is not an exit code a container can report"
run 0 "exit-code 7 after --" -- exit-code -- 7
for badcode in abc 1.5 "" 0x10 12abc 99999999999 " 1" -; do
  run 2 "exit-code '$badcode'" -- exit-code "$badcode"
  empty "exit-code '$badcode' stdout" "$TMP/out"
done
run 2 "exit-code none" -- exit-code
run 2 "exit-code two" -- exit-code 1 2
run 2 "exit-code bad compat" -- exit-code --compat nope 1
run 2 "exit-code unknown option" -- exit-code --verbose 1

# ---- help, version, unknown commands ----
for cmd in validate default exit-code; do
  run 0 "$cmd --help" -- "$cmd" --help
  contains "$cmd --help" "$TMP/out" "usage: tfjobctl $cmd"
  contains "$cmd --help exit status" "$TMP/out" "Exit status"
  run 0 "$cmd -h" -- "$cmd" -h
done
run 0 "--help" -- --help
contains "--help lists commands" "$TMP/out" "exit-code"
# Every command listed by --help has its own --help, which documents --compat, and accepts
# --compat (DESIGN.md: "every command accepts it"): a wrong value is a usage error naming it, a
# right one is never an unknown option. Inputs that do not exist end each run early.
commands=$(sed -n '/^Commands:/,/^$/p' "$TMP/out" | awk 'NF > 1 {print $1}')
[ "$(echo "$commands" | wc -w)" -ge 14 ] && ok || bad "--help lists only: $commands"
for cmd in $commands; do
  run 0 "$cmd --help" -- "$cmd" --help
  contains "$cmd --help usage" "$TMP/out" "usage: tfjobctl $cmd"
  contains "$cmd --help documents --compat" "$TMP/out" "--compat"
  case $cmd in
    exit-code) args=(1) ;;
    tf-config) args=("$TMP/nope.yaml" Worker 0) ;;
    plan) args=(--job "$TMP/nope.yaml") ;;
    apply) args=(-f "$TMP/nope.yaml") ;;
    get) args=(--run-dir "$TMP/nope") ;;
    logs) args=("$TMP/nope" worker-0) ;;
    describe|delete|watch) args=(x --kubeconfig "$TMP/nope.kubeconfig") ;;
    *) args=("$TMP/nope.yaml") ;;
  esac
  KUBECONFIG="$TMP/nope.kubeconfig" "$CTL" "$cmd" --compat training-operator-1.9 "${args[@]}" >"$TMP/out2" 2>"$TMP/err" </dev/null
  if grep -qiE "unknown option|unrecognized" "$TMP/err"; then bad "$cmd --compat: $(head -c 300 "$TMP/err")"; else ok; fi
  KUBECONFIG="$TMP/nope.kubeconfig" "$CTL" "$cmd" --compat bogus "${args[@]}" >"$TMP/out2" 2>"$TMP/err" </dev/null
  rc=$?
  [ "$rc" -eq 2 ] && grep -qF "unknown --compat value 'bogus'" "$TMP/err" && ok ||
    bad "$cmd --compat bogus: exit $rc: $(head -c 300 "$TMP/err")"
done
run 0 "help" -- help
run 0 "--version" -- --version
contains "--version" "$TMP/out" "tfjobctl "
run 2 "no command" --
run 2 "unknown command" -- frobnicate
contains "unknown command" "$TMP/err" "unknown command 'frobnicate'"

echo "tfjobctl contract: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
