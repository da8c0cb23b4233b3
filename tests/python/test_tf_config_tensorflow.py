#!/usr/bin/env python3
"""TensorFlow as the consumer of TF_CONFIG.

Renders the TF_CONFIG of every replica of a Chief + PS + Worker + Evaluator job with
`tfjobctl tf-config` and hands it to tf.distribute.cluster_resolver.TFConfigClusterResolver,
which must see the right task type, task id and cluster spec. Also checks the sparse form of
enableDynamicWorker (documented mode: "ps":[]) and a job that is not distributed.

Usage: test_tf_config_tensorflow.py PATH/TO/tfjobctl
"""
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

TFJOBCTL = sys.argv[1] if len(sys.argv) > 1 else "build/src/tfjobctl/tfjobctl"

JOB = """apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: dist
  namespace: team
spec:
  tfReplicaSpecs:
    Chief:
      template:
        spec:
          containers: [{name: tensorflow, image: img}]
    PS:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            image: img
            ports: [{name: tfjob-port, containerPort: 3333}]
    Worker:
      replicas: 3
      template:
        spec:
          containers: [{name: tensorflow, image: img}]
    Evaluator:
      template:
        spec:
          containers: [{name: tensorflow, image: img}]
"""

COUNTS = {"chief": 1, "ps": 2, "worker": 3, "evaluator": 1}
PORTS = {"chief": 2222, "ps": 3333, "worker": 2222, "evaluator": 2222}


def tf_config(path, rtype, index, *flags):
    out = subprocess.run([TFJOBCTL, "tf-config", *flags, path, rtype, str(index)], check=True,
                         capture_output=True, text=True).stdout
    return out.rstrip("\n")


class Resolved:
    """What TFConfigClusterResolver makes of a TF_CONFIG (it reads the variable lazily)."""

    def __init__(self, config):
        os.environ["TF_CONFIG"] = config
        try:
            r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
            self.task_type = r.task_type
            self.task_id = r.task_id
            self.rpc_layer = r.rpc_layer
            self.spec = r.cluster_spec()
        finally:
            del os.environ["TF_CONFIG"]

    def cluster_spec(self):
        return self.spec


def resolver_for(config):
    return Resolved(config)


def main():
    checked = 0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "job.yaml")
        with open(path, "w") as f:
            f.write(JOB)
        expected_cluster = {
            t: [f"dist-{t}-{i}.team.svc:{PORTS[t]}" for i in range(n)] for t, n in COUNTS.items()
        }
        for rtype, count in COUNTS.items():
            for index in range(count):
                config = tf_config(path, rtype.capitalize() if rtype != "ps" else "PS", index)
                assert json.loads(config)["environment"] == "cloud"
                r = resolver_for(config)
                assert r.task_type == rtype, (r.task_type, rtype)
                assert r.task_id == index, (r.task_id, index)
                spec = r.cluster_spec().as_dict()
                assert spec == expected_cluster, (spec, expected_cluster)
                assert r.rpc_layer in (None, "grpc", ""), r.rpc_layer
                checked += 1
                # the same through ClusterSpec with the evaluator left out by the option
                config2 = tf_config(path, rtype, index, "--exclude-evaluator", "--cluster-domain", "cluster.local")
                r2 = resolver_for(config2)
                spec2 = r2.cluster_spec().as_dict()
                assert set(spec2) == {"chief", "ps", "worker"}, spec2
                assert spec2["ps"][1] == "dist-ps-1.team.svc.cluster.local:3333", spec2
                assert (r2.task_type, r2.task_id) == (rtype, index)
                checked += 1

        # sparse form (enableDynamicWorker): TensorFlow accepts the documented "ps": []
        dyn = os.path.join(d, "dyn.yaml")
        with open(dyn, "w") as f:
            f.write(JOB.replace("spec:\n  tfReplicaSpecs:", "spec:\n  enableDynamicWorker: true\n  tfReplicaSpecs:", 1)
                    .replace("    PS:\n      replicas: 2", "    PS:\n      replicas: 2", 1))
        r = resolver_for(tf_config(dyn, "Worker", 2))
        assert (r.task_type, r.task_id) == ("worker", 2)
        spec = r.cluster_spec()
        assert spec.task_address("worker", 2) == "dist-worker-2.team.svc:2222"
        assert spec.task_indices("worker") == [2]
        assert spec.job_tasks("ps") == ["dist-ps-0.team.svc:3333", "dist-ps-1.team.svc:3333"]
        r = resolver_for(tf_config(dyn, "PS", 1))
        assert (r.task_type, r.task_id) == ("ps", 1)
        # v1.9's sparse PS entry is a one-element list holding its own address (not keyed by index)
        assert r.cluster_spec().job_tasks("ps") == ["dist-ps-1.team.svc:3333"]
        checked += 2

        nops = os.path.join(d, "nops.json")
        with open(nops, "w") as f:
            json.dump({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "np"},
                       "spec": {"enableDynamicWorker": True, "tfReplicaSpecs": {"Worker": {"replicas": 2, "template": {
                           "spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}}}}}, f)
        r = resolver_for(tf_config(nops, "worker", 1))
        got = r.cluster_spec().as_dict()
        assert got["worker"] == {1: "np-worker-1.default.svc:2222"} and len(got["ps"]) == 0, got
        # v1.9's "ps": null is what TensorFlow rejects (defect 8)
        try:
            resolver_for(tf_config(nops, "worker", 1, "--compat", "training-operator-1.9"))
            v19_rejected = False
        except Exception:  # noqa: BLE001 - any failure counts as rejection
            v19_rejected = True
        assert v19_rejected, "TensorFlow accepted \"ps\": null"
        checked += 2

        # not distributed: no TF_CONFIG at all
        single = os.path.join(d, "single.yaml")
        with open(single, "w") as f:
            f.write("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: s}\nspec:\n  tfReplicaSpecs:\n"
                    "    Worker:\n      template:\n        spec:\n          containers: [{name: tensorflow, image: i}]\n")
        assert tf_config(single, "Worker", 0) == ""
        checked += 1
    print(f"TensorFlow {tf.__version__}: {checked} TF_CONFIG checks passed")


if __name__ == "__main__":
    main()
