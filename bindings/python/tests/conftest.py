"""Helpers shared by the transport, controller, local and kube tests."""
from typing import Any, Dict, Optional

import pytest

import tfjob


def make_job(name: str, replicas: Dict[str, int], namespace: Optional[str] = "default", image: Optional[str] = "tf:2",
             restart_policy: str = "Never", run_policy: Optional[Dict[str, Any]] = None,
             command: Optional[list] = None) -> Dict[str, Any]:
    """A TFJob dict with the given replica counts per type."""
    container: Dict[str, Any] = {"name": "tensorflow"}
    if image is not None:
        container["image"] = image
    if command is not None:
        container["command"] = command
    specs = {t: {"replicas": n, "restartPolicy": restart_policy, "template": {"spec": {"containers": [dict(container)]}}}
             for t, n in replicas.items()}
    meta: Dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": meta,
            "spec": {"runPolicy": dict(run_policy or {"cleanPodPolicy": "None"}), "tfReplicaSpecs": specs}}


def set_pod(backend: tfjob.Backend, name: str, phase: str, exit_code: Optional[int] = None, restarts: int = 0,
            namespace: Optional[str] = None) -> Dict[str, Any]:
    """Set a pod's status as a kubelet would (tests/ctlutil.c cu_set_pod): phase, the tensorflow
    container's exit code and restart count; retried on conflicts."""
    for _ in range(20):
        pod = backend.get("pods", name, namespace)
        state: Dict[str, Any] = {}
        if exit_code is not None:
            state["terminated"] = {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error"}
        elif phase == "Running":
            state["running"] = {}
        pod["status"] = {"phase": phase, "containerStatuses": [
            {"name": "tensorflow", "image": "tf", "imageID": "", "ready": phase == "Running",
             "restartCount": restarts, "state": state}]}
        try:
            return backend.update_status("pods", pod, namespace)
        except tfjob.ConflictError:
            continue
    raise AssertionError(f"could not set the status of pod {name}")


@pytest.fixture
def memory():
    with tfjob.MemoryBackend(seed=7) as backend:
        yield backend
