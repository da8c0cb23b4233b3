#!/usr/bin/env python3
"""tfjobctl's cluster commands (apply, get, describe, delete, watch) against the fault server.

Run by tests/suites/62-transport.sh with TFJOBCTL set to the built binary.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TFJOBCTL = os.environ.get("TFJOBCTL", os.path.join(ROOT, "build", "src", "tfjobctl", "tfjobctl"))
BASE = "/apis/kubeflow.org/v1/namespaces"


def job(name, ns="default", state=None, rv="5"):
    obj = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
           "metadata": {"name": name, "namespace": ns, "uid": "uid-" + name, "resourceVersion": rv,
                        "creationTimestamp": "2020-01-01T00:00:00Z", "labels": {"team": "ml"}},
           "spec": {"runPolicy": {"cleanPodPolicy": "None"},
                    "tfReplicaSpecs": {"Worker": {"replicas": 2, "restartPolicy": "Never",
                                                  "template": {"spec": {"containers": [
                                                      {"name": "tensorflow", "image": "tf:2"}]}}}}},
           "status": {}}
    if state:
        obj["status"] = {"conditions": [
            {"type": "Created", "status": "True", "reason": "TFJobCreated", "message": "created"},
            {"type": state, "status": "True", "reason": "TFJob" + state, "message": "now " + state}],
            "replicaStatuses": {"Worker": {"active": 2}}, "startTime": "2020-01-01T00:00:05Z"}
    return obj


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
            "message": message}


class TfjobctlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tfjobctl-test-")
        port_file = os.path.join(cls.dir, "port")
        cls.server = subprocess.Popen([sys.executable, os.path.join(HERE, "fault_server.py"), "--port-file", port_file])
        for _ in range(500):
            if os.path.exists(port_file):
                break
            time.sleep(0.02)
        with open(port_file) as f:
            cls.url = "http://127.0.0.1:%s" % f.read().strip()
        cls.kubeconfig = os.path.join(cls.dir, "config")
        with open(cls.kubeconfig, "w") as f:
            f.write("current-context: c\nclusters:\n- name: k\n  cluster:\n    server: %s\n"
                    "users:\n- name: u\n  user:\n    token: secret-token\n"
                    "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
                    "- name: other\n  context: {cluster: k, user: u, namespace: team}\n" % cls.url)

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait()
        subprocess.call(["rm", "-rf", cls.dir])

    def control(self, path, data=None):
        req = urllib.request.Request(self.url + path, data=json.dumps(data).encode() if data is not None else None,
                                     method="POST" if data is not None else "GET")
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())

    def setUp(self):
        self.control("/_control/reset", {})

    def rules(self, *rules):
        self.control("/_control/rules", list(rules))

    def log(self):
        return self.control("/_control/log")

    def run_ctl(self, *args, stdin=None, timeout=30):
        p = subprocess.run([TFJOBCTL] + list(args) + ["--kubeconfig", self.kubeconfig], input=stdin,
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def test_get_table_json_yaml_wide(self):
        lst = {"kind": "TFJobList", "apiVersion": "kubeflow.org/v1", "metadata": {"resourceVersion": "9"},
               "items": [job("a", state="Running"), job("b", state="Succeeded")]}
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs", "times": 2, "body": lst},
                   {"method": "GET", "path": BASE + "/default/tfjobs/a", "times": -1, "body": job("a", state="Running")})
        rc, out, err = self.run_ctl("get")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[0].split(), ["NAME", "STATE", "AGE"])
        self.assertEqual(lines[1].split()[:2], ["a", "Running"])
        self.assertEqual(lines[2].split()[:2], ["b", "Succeeded"])
        self.assertTrue(lines[1].split()[2].endswith("d"))
        rc, out, err = self.run_ctl("get", "-o", "wide")
        self.assertEqual(rc, 0, err)
        self.assertIn("Worker:2", out)
        self.assertIn("None", out)
        rc, out, err = self.run_ctl("get", "a", "-o", "json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["metadata"]["name"], "a")
        rc, out, err = self.run_ctl("get", "a", "-o", "yaml")
        self.assertEqual(rc, 0, err)
        self.assertIn("kind: TFJob\n", out)
        self.assertIn("  name: a\n", out)
        self.assertIn("- name: tensorflow\n", out)
        self.assertIn("status: \"True\"", out)
        self.assertEqual(self.log()[0]["auth"], "Bearer secret-token")

    def test_get_not_found_and_forbidden(self):
        self.rules({"path": BASE + "/default/tfjobs/x", "status": 404,
                    "body": status(404, "NotFound", 'tfjobs.kubeflow.org "x" not found')},
                   {"path": BASE + "/team/tfjobs", "status": 403,
                    "body": status(403, "Forbidden", 'tfjobs.kubeflow.org is forbidden: User "bob" cannot list')})
        rc, out, err = self.run_ctl("get", "x")
        self.assertEqual(rc, 1)
        self.assertEqual(err.strip(), 'Error from server (NotFound): tfjobs.kubeflow.org "x" not found')
        rc, out, err = self.run_ctl("get", "--context", "other")
        self.assertEqual(rc, 1)
        self.assertIn("Error from server (Forbidden)", err)
        self.assertNotIn("secret-token", err)

    def test_usage_and_config_errors(self):
        rc, _, err = self.run_ctl("get", "-o", "xml")
        self.assertEqual(rc, 2)
        rc, _, err = self.run_ctl("get", "--compat", "nope")
        self.assertEqual(rc, 2)
        p = subprocess.run([TFJOBCTL, "get", "--kubeconfig", os.path.join(self.dir, "missing")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("missing", p.stderr)

    def test_apply_create_then_configure(self):
        path = os.path.join(ROOT, "examples", "tfjob-simple.yaml")
        self.rules({"method": "POST", "path": BASE + "/kubeflow/tfjobs", "status": 201, "body": job("x", ns="kubeflow")})
        rc, out, err = self.run_ctl("apply", "-f", path)
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"^tfjob\.kubeflow\.org/\S+ created\n$")
        name = out.split("/")[1].split()[0]
        sent = json.loads(self.log()[0]["body"])
        self.assertEqual(sent["kind"], "TFJob")
        self.assertEqual(sent["metadata"]["name"], name)
        # Exists: AlreadyExists, then GET and PUT at the server's version.
        self.setUp()
        server_obj = job(name, ns="kubeflow", rv="41")
        self.rules({"method": "POST", "status": 409, "path": BASE + "/kubeflow/tfjobs",
                    "body": status(409, "AlreadyExists", "exists")},
                   {"method": "GET", "path": BASE + "/kubeflow/tfjobs/" + name, "body": server_obj},
                   {"method": "PUT", "path": BASE + "/kubeflow/tfjobs/" + name,
                    "body": dict(server_obj, metadata=dict(server_obj["metadata"], resourceVersion="42"))})
        rc, out, err = self.run_ctl("apply", "-f", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "tfjob.kubeflow.org/%s configured\n" % name)
        put = json.loads(self.log()[2]["body"])
        self.assertEqual(put["metadata"]["resourceVersion"], "41")
        self.assertEqual(put["metadata"]["uid"], "uid-" + name)
        self.assertEqual(put["spec"], sent["spec"])
        self.assertNotIn("labels", put["metadata"])

    def test_apply_invalid_is_not_sent(self):
        bad = ("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: bad}\nspec:\n  tfReplicaSpecs:\n"
               "    Worker:\n      template:\n        spec:\n          containers: [{name: tensorflow}]\n")
        rc, out, err = self.run_ctl("apply", "-f", "-", stdin=bad)
        self.assertEqual(rc, 1)
        self.assertIn("image", err)
        self.assertEqual(self.log(), [])

    def test_describe(self):
        ev = {"kind": "EventList", "items": [
            {"type": "Normal", "reason": "SuccessfulCreatePod", "message": "Created pod: x-worker-0",
             "source": {"component": "tfjob-controller"}, "lastTimestamp": "2020-01-01T00:00:01Z"}]}
        self.rules({"path": BASE + "/default/tfjobs/x", "body": job("x", state="Running")},
                   {"path": "/api/v1/namespaces/default/events", "body": ev})
        rc, out, err = self.run_ctl("describe", "x")
        self.assertEqual(rc, 0, err)
        for text in ("Name:        x", "Labels:      team=ml", "Kind:        TFJob", "Worker:", "Replicas:        2",
                     "Container tensorflow:  tf:2", "Conditions:", "Running", "now Running",
                     "Active: 2", "Events:", "SuccessfulCreatePod", "Created pod: x-worker-0", "tfjob-controller"):
            self.assertIn(text, out)
        q = self.log()[1]["query"]
        self.assertIn("fieldSelector=involvedObject.name%3Dx%2CinvolvedObject.kind%3DTFJob", q)

    def test_delete(self):
        self.rules({"method": "DELETE", "path": BASE + "/team/tfjobs/x", "body": {"kind": "Status", "status": "Success"}},
                   {"method": "DELETE", "path": BASE + "/team/tfjobs/y", "status": 404,
                    "body": status(404, "NotFound", 'tfjobs.kubeflow.org "y" not found')})
        rc, out, err = self.run_ctl("delete", "x", "y", "-n", "team", "--cascade", "foreground")
        self.assertEqual(rc, 1)
        self.assertEqual(out, 'tfjob.kubeflow.org "x" deleted\n')
        self.assertIn('"y" not found', err)
        body = json.loads(self.log()[0]["body"])
        self.assertEqual(body["propagationPolicy"], "Foreground")

    def test_watch_until_succeeded(self):
        def ev(t, obj):
            return json.dumps({"type": t, "object": obj}) + "\n"
        running = job("w", state="Running", rv="7")
        done = job("w", state="Succeeded", rv="9")
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true",
                    "chunks": [ev("MODIFIED", running)[:50], ev("MODIFIED", running)[50:], ev("MODIFIED", done)],
                    "hang_ms": 5000})
        rc, out, err = self.run_ctl("watch", "w")
        self.assertEqual(rc, 0, err)
        self.assertEqual([l.split() for l in out.splitlines()],
                         [["ADDED", "w"], ["MODIFIED", "w", "Running"], ["MODIFIED", "w", "Succeeded"]])
        q = self.log()[1]["query"]
        self.assertIn("resourceVersion=5", q)
        self.assertIn("fieldSelector=metadata.name%3Dw", q)

    def test_watch_relists_on_gone_and_times_out(self):
        gone = json.dumps({"type": "ERROR", "object": status(410, "Expired", "too old")}) + "\n"
        failed = job("w", state="Failed", rv="20")
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true", "chunks": [gone]},
                   {"method": "GET", "path": BASE + "/default/tfjobs/w", "body": failed})
        rc, out, err = self.run_ctl("watch", "w", "-o", "json")
        self.assertEqual(rc, 1, err)
        lines = [json.loads(l) for l in out.splitlines()]
        self.assertEqual(lines[-1]["object"]["metadata"]["resourceVersion"], "20")
        self.setUp()
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true", "chunks": [],
                    "hang_ms": 10000})
        start = time.time()
        rc, out, err = self.run_ctl("watch", "w", "--timeout", "1")
        self.assertEqual(rc, 1)
        self.assertIn("did not finish", err)
        self.assertLess(time.time() - start, 6)


if __name__ == "__main__":
    unittest.main(verbosity=1)
