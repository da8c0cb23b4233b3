#!/usr/bin/env python3
"""tfjobctl tf-config and render: output, flags and exit codes.

Usage: test_tfjobctl_tf_config.py PATH/TO/tfjobctl
"""
import json
import os
import subprocess
import sys
import tempfile

TFJOBCTL = sys.argv[1] if len(sys.argv) > 1 else "build/src/tfjobctl/tfjobctl"
failures = []

JOB = """apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: mnist
  namespace: ml
spec:
  tfReplicaSpecs:
    PS:
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow
            image: img
    worker:
      replicas: 2
      restartPolicy: ExitCode
      template:
        spec:
          containers:
          - name: tensorflow
            image: img
            ports:
            - {name: tfjob-port, containerPort: 3000}
"""

SINGLE = """apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: one}
spec:
  tfReplicaSpecs:
    Worker:
      template:
        spec:
          containers: [{name: tensorflow, image: img}]
"""

DYNAMIC = """{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"dyn"},
"spec":{"enableDynamicWorker":true,"tfReplicaSpecs":{"Worker":{"replicas":2,
"template":{"spec":{"containers":[{"name":"tensorflow","image":"img"}]}}}}}}"""


def run(*args, stdin=None):
    p = subprocess.run([TFJOBCTL, *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}")
    else:
        print(f"ok   {name}")


with tempfile.TemporaryDirectory() as d:
    job = os.path.join(d, "job.yaml")
    single = os.path.join(d, "single.yaml")
    dyn = os.path.join(d, "dyn.json")
    for path, text in ((job, JOB), (single, SINGLE), (dyn, DYNAMIC)):
        with open(path, "w") as f:
            f.write(text)

    want = ('{"cluster":{"ps":["mnist-ps-0.ml.svc:2222"],"worker":["mnist-worker-0.ml.svc:3000",'
            '"mnist-worker-1.ml.svc:3000"]},"task":{"type":"worker","index":1},"environment":"cloud"}\n')
    rc, out, err = run("tf-config", job, "Worker", "1")
    check("tf-config worker 1", rc == 0 and out == want, repr((rc, out, err)))
    rc, out, err = run("tf-config", job, "WORKER", "1")
    check("tf-config type case-insensitive", rc == 0 and out == want, repr((rc, out, err)))
    rc, out, err = run("tf-config", "-", "worker", "1", stdin=JOB)
    check("tf-config stdin", rc == 0 and out == want, repr((rc, out, err)))
    rc, out, err = run("tf-config", "--cluster-domain", "cluster.local", job, "ps", "0")
    check("tf-config cluster domain",
          rc == 0 and out == ('{"cluster":{"ps":["mnist-ps-0.ml.svc.cluster.local:2222"],"worker":['
                              '"mnist-worker-0.ml.svc.cluster.local:3000","mnist-worker-1.ml.svc.cluster.local:3000"]},'
                              '"task":{"type":"ps","index":0},"environment":"cloud"}\n'), repr((rc, out, err)))
    rc, out, err = run("tf-config", single, "worker", "0")
    check("tf-config not distributed: empty output", rc == 0 and out == "", repr((rc, out, err)))
    check("tf-config not distributed: stderr says why",
          "TFJob one gets no TF_CONFIG: it has one replica in total" in err, repr(err))
    rc, out, err = run("tf-config", job, "worker", "0")
    check("tf-config distributed: nothing on stderr", rc == 0 and err == "", repr(err))
    rc, out, err = run("tf-config", dyn, "worker", "1")
    check("tf-config dynamic documented",
          rc == 0 and out == '{"cluster":{"worker":{"1":"dyn-worker-1.default.svc:2222"},"ps":[]},'
                             '"task":{"type":"worker","index":1}}\n', repr((rc, out, err)))
    rc, out, err = run("tf-config", "--compat", "training-operator-1.9", dyn, "worker", "1")
    check("tf-config dynamic v1.9",
          rc == 0 and out == '{"cluster":{"worker":{"1":"dyn-worker-1.default.svc:2222"},"ps":null},'
                             '"task":{"type":"worker","index":1}}\n', repr((rc, out, err)))
    for args, what in ((["tf-config", job, "chief", "0"], "unknown type"),
                       (["tf-config", job, "worker", "2"], "index out of range"),
                       (["tf-config", job, "worker", "x"], "bad index"),
                       (["tf-config", job, "worker"], "missing index"),
                       (["tf-config", "--compat", "nope", job, "worker", "0"], "bad compat"),
                       (["tf-config", "--bogus", job, "worker", "0"], "unknown flag"),
                       (["tf-config", os.path.join(d, "missing.yaml"), "worker", "0"], "missing file"),
                       (["render"], "render without file"),
                       (["render", "--cluster-domain"], "flag without value")):
        rc, out, err = run(*args)
        check(f"exit 2: {what}", rc == 2 and out == "" and err.startswith("tfjobctl: "), repr((rc, out, err)))

    for cmd, flags in (("tf-config", ["--cluster-domain", "--compat", "--namespace", "--exclude-evaluator"]),
                       ("render", ["--cluster-domain", "--compat", "--namespace", "--exclude-evaluator", "--pretty"])):
        rc, out, err = run(cmd, "--help")
        check(f"{cmd} --help", rc == 0 and all(f in out for f in flags), repr((rc, out)))
    rc, out, err = run("--help")
    check("tfjobctl --help lists the commands", "tf-config" in out and "render" in out, out)

    rc, out, err = run("render", job)
    check("render exit 0, one line", rc == 0 and out.count("\n") == 1, repr((rc, err)))
    doc = json.loads(out)
    check("render keys", list(doc) == ["pods", "services"], list(doc))
    names = [p["metadata"]["name"] for p in doc["pods"]]
    check("render pod order", names == ["mnist-ps-0", "mnist-worker-0", "mnist-worker-1"], names)
    check("render service order", [s["metadata"]["name"] for s in doc["services"]] == names, "")
    w1 = doc["pods"][2]
    check("render restartPolicy ExitCode -> Never", w1["spec"]["restartPolicy"] == "Never", w1["spec"])
    env = w1["spec"]["containers"][0]["env"]
    check("render TF_CONFIG env", env[-1]["name"] == "TF_CONFIG" and env[-1]["value"] + "\n" == want, env)
    check("render master label on worker 0",
          doc["pods"][1]["metadata"]["labels"].get("training.kubeflow.org/job-role") == "master", "")
    svc = doc["services"][2]
    check("render service", svc["spec"]["clusterIP"] == "None" and
          svc["spec"]["ports"] == [{"name": "tfjob-port", "port": 3000}] and
          svc["spec"]["selector"]["training.kubeflow.org/replica-index"] == "1", svc)
    rc, out, err = run("render", "--namespace", "other", single)
    doc = json.loads(out)
    check("render --namespace, not distributed",
          rc == 0 and doc["pods"][0]["metadata"]["namespace"] == "other" and
          "env" not in doc["pods"][0]["spec"]["containers"][0], repr((rc, err)))
    rc, out, err = run("render", "--pretty", job)
    check("render --pretty", rc == 0 and out.count("\n") > 10 and json.loads(out)["pods"], repr((rc, err)))

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
