#!/usr/bin/env python3
"""tfjobctl's cluster commands (apply, get, describe, delete, watch) against the fault server.

Run by tests/suites/62-transport.sh with TFJOBCTL set to the built binary.
"""
import json
import os
import re
import signal
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
NAMESPACE_OBJECT = re.compile(r"^/api/v1/namespaces/[^/]+$")


def job(name, ns="default", state=None, rv="5"):
    obj = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
           "metadata": {"name": name, "namespace": ns, "uid": "uid-" + name, "resourceVersion": rv,
                        "creationTimestamp": "2020-01-01T00:00:00Z", "labels": {"team": "ml"}},
           "spec": {"runPolicy": {"cleanPodPolicy": "None"},
                    "tfReplicaSpecs": {"Worker": {"replicas": 2, "restartPolicy": "OnFailure",
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
        # Last, for apply's read of the target namespace when a test gives none: not found.
        any_namespace = {"method": "GET", "path": "/api/v1/namespaces/default", "times": -1, "status": 404,
                         "body": status(404, "NotFound", 'namespaces "default" not found')}
        self.control("/_control/rules", list(rules) + [any_namespace])

    def log(self, namespace_reads=False):
        """The requests the server got; without the reads of Namespace objects (apply reads the
        target namespace's labels for its warnings) unless namespace_reads."""
        log = self.control("/_control/log")
        return log if namespace_reads else [e for e in log if not NAMESPACE_OBJECT.match(e["path"])]

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

    def test_get_lists_in_pages(self):
        # As kubectl: limit=500 by default, then the continue token until the server gives none.
        page1 = {"kind": "TFJobList", "apiVersion": "kubeflow.org/v1",
                 "metadata": {"resourceVersion": "9", "continue": "tok-1"}, "items": [job("a"), job("b")]}
        page2 = {"kind": "TFJobList", "apiVersion": "kubeflow.org/v1", "metadata": {"resourceVersion": "9"},
                 "items": [job("c")]}
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs", "query": "continue=tok-1", "body": page2},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "body": page1})
        rc, out, err = self.run_ctl("get", "-o", "name")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split(), ["tfjob.kubeflow.org/a", "tfjob.kubeflow.org/b", "tfjob.kubeflow.org/c"])
        queries = [e["query"] for e in self.log()]
        self.assertEqual(len(queries), 2, queries)
        self.assertIn("limit=500", queries[0])
        self.assertNotIn("continue=", queries[0])
        self.assertIn("continue=tok-1", queries[1])
        # --chunk-size 0: one request without a limit; a bad size is a usage error.
        self.control("/_control/reset", {})
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs", "body": page2})
        rc, out, err = self.run_ctl("get", "--chunk-size", "0", "-o", "name")
        self.assertEqual((rc, out), (0, "tfjob.kubeflow.org/c\n"), err)
        self.assertNotIn("limit=", self.log()[0]["query"])
        rc, out, err = self.run_ctl("get", "--chunk-size", "-3")
        self.assertEqual(rc, 2)
        self.assertIn("--chunk-size", err)

    def test_get_as_kubectl(self):
        a = job("a", state="Running")
        a["metadata"]["managedFields"] = [{"manager": "m", "operation": "Update"}]
        lst = {"kind": "TFJobList", "apiVersion": "kubeflow.org/v1", "metadata": {"resourceVersion": "9"},
               "items": [a, job("b", state="Succeeded")]}
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs", "times": -1, "body": lst},
                   {"method": "GET", "path": BASE + "/default/tfjobs/a", "times": -1, "body": a},
                   {"method": "GET", "path": BASE + "/default/tfjobs/nope", "times": -1, "status": 404,
                    "body": status(404, "NotFound", 'tfjobs.kubeflow.org "nope" not found')},
                   {"method": "GET", "path": BASE + "/empty/tfjobs", "times": -1,
                    "body": {"kind": "TFJobList", "apiVersion": "kubeflow.org/v1", "items": []}})
        # The table: kubectl's tabwriter (3 blanks between columns, at least 10 wide, no trailing blanks).
        rc, out, err = self.run_ctl("get")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines()[0], "NAME      STATE       AGE")
        self.assertTrue(out.splitlines()[1].startswith("a         Running     "))
        for line in out.splitlines():
            self.assertEqual(line, line.rstrip())
        rc, out, err = self.run_ctl("get", "--no-headers")
        self.assertEqual([l.split()[:2] for l in out.splitlines()], [["a", "Running"], ["b", "Succeeded"]])
        # Many objects in json/yaml: kubectl's List wrapper, no managedFields.
        rc, out, err = self.run_ctl("get", "-o", "json")
        self.assertEqual(rc, 0, err)
        v = json.loads(out)
        self.assertEqual((v["apiVersion"], v["kind"], v["metadata"]), ("v1", "List", {"resourceVersion": ""}))
        self.assertEqual([i["metadata"]["name"] for i in v["items"]], ["a", "b"])
        self.assertEqual(v["items"][0]["kind"], "TFJob")
        self.assertNotIn("managedFields", v["items"][0]["metadata"])
        self.assertIn('\n    "apiVersion": "v1",\n', out)  # 4 blanks, sorted keys
        rc, out, err = self.run_ctl("get", "a", "-o", "json", "--show-managed-fields")
        self.assertEqual(rc, 0, err)
        self.assertIn("managedFields", json.loads(out)["metadata"])
        # -o name
        rc, out, err = self.run_ctl("get", "-o", "name")
        self.assertEqual((rc, out), (0, "tfjob.kubeflow.org/a\ntfjob.kubeflow.org/b\n"))
        # Several NAMEs, one missing: the others printed, the error reported, exit 1.
        rc, out, err = self.run_ctl("get", "a", "nope", "-o", "json")
        self.assertEqual(rc, 1)
        self.assertEqual([i["metadata"]["name"] for i in json.loads(out)["items"]], ["a"])
        self.assertEqual(err, 'Error from server (NotFound): tfjobs.kubeflow.org "nope" not found\n')
        rc, out, err = self.run_ctl("get", "nope", "-o", "json")
        self.assertEqual((rc, out), (1, ""))
        rc, out, err = self.run_ctl("get", "a", "nope", "-o", "name")
        self.assertEqual((rc, out), (1, "tfjob.kubeflow.org/a\n"))
        # Nothing there.
        rc, out, err = self.run_ctl("get", "-n", "empty")
        self.assertEqual((rc, out, err), (0, "", "No resources found in empty namespace.\n"))
        rc, out, err = self.run_ctl("get", "-n", "empty", "-o", "json")
        self.assertEqual(json.loads(out)["items"], [])
        # -l is sent as labelSelector; NAME with -A or -l is a usage error.
        self.setUp()
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs", "body": lst})
        rc, out, err = self.run_ctl("get", "-l", "team=ml,tier!=x")
        self.assertEqual(rc, 0, err)
        self.assertIn("labelSelector=team%3Dml%2Ctier%21%3Dx", self.log()[0]["query"])
        # TYPE/NAME as -o name prints it; pflag's "-o=json" and "-n=ns".
        self.setUp()
        self.rules({"method": "GET", "path": BASE + "/team/tfjobs/a", "times": -1, "body": a})
        for arg in ("tfjob.kubeflow.org/a", "tfjobs/a", "tfjob/a"):
            rc, out, err = self.run_ctl("get", arg, "-o=json", "-n=team")
            self.assertEqual(rc, 0, err)
            self.assertEqual(json.loads(out)["metadata"]["name"], "a")
        rc, out, err = self.run_ctl("get", "pods/a", "-n", "team")
        self.assertEqual(rc, 2)
        self.assertIn("pods/a", err)
        self.assertEqual(self.run_ctl("delete", "pod/a")[0], 2)
        self.assertEqual(self.run_ctl("describe", "svc/a")[0], 2)
        self.assertEqual(self.run_ctl("get", "a", "-A")[0], 2)
        self.assertEqual(self.run_ctl("get", "a", "-l", "x=y")[0], 2)

    def test_get_yaml_reads_back(self):
        try:
            import yaml  # noqa: F401
        except ImportError:
            self.skipTest("PyYAML is not installed")
        import yaml
        a = job("a", state="Running")
        a["metadata"]["labels"] = {"v": "1.10", "on": "yes", "t": "2020-01-01", "e": "", "n": "0x1F", "u": "1_000",
                                   "s": "1:20", "inf": ".inf", "m": "a: b", "h": "#x", "q": "'", "lf": "a\nb",
                                   "Y": "YES", "OFF": "NO", "N": "~", "nul": "NULL", "d": "-1.5e3", "amp": "&a", "star": "*a"}
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/a", "body": a})
        rc, out, err = self.run_ctl("get", "a", "-o", "yaml")
        self.assertEqual(rc, 0, err)
        # What a YAML 1.1 reader makes of it is the object itself (timestamps stay strings).
        self.assertEqual(yaml.safe_load(out), a)

    def test_unauthorized_and_foreign_error_bodies(self):
        self.rules({"path": BASE + "/default/tfjobs", "status": 401,
                    "body": status(401, "Unauthorized", "Unauthorized")},
                   {"path": BASE + "/default/tfjobs/h", "status": 502, "times": -1, "content_type": "text/html",
                    "body": "<html><body><h1>502 Bad Gateway</h1></body></html>"},
                   {"path": BASE + "/default/tfjobs/g", "status": 418, "body": "teapot"},
                   {"path": BASE + "/nocrd/tfjobs", "status": 404, "content_type": "text/plain",
                    "body": "404 page not found\n"})
        rc, out, err = self.run_ctl("get")
        self.assertEqual((rc, err), (1, "error: You must be logged in to the server (Unauthorized)\n"))
        rc, out, err = self.run_ctl("get", "h", timeout=60)
        self.assertEqual(rc, 1)
        self.assertTrue(err.startswith("Error from server (InternalError): "), err)
        self.assertIn("502 Bad Gateway", err)
        rc, out, err = self.run_ctl("get", "g")
        self.assertEqual(rc, 1)
        self.assertTrue(err.startswith("Error from server: "), err)
        # A 404 that is not a Status: the CRD is not installed.
        rc, out, err = self.run_ctl("get", "-n", "nocrd")
        self.assertEqual((rc, err), (1, 'error: the server doesn\'t have a resource type "tfjobs"\n'))

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

    def test_request_timeout(self):
        # The first answer comes too late for --request-timeout: given up, read again.
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/a", "delay_ms": 3000, "body": job("a")},
                   {"method": "GET", "path": BASE + "/default/tfjobs/a", "body": job("a")})
        start = time.time()
        rc, out, err = self.run_ctl("get", "a", "--request-timeout", "500ms")
        self.assertEqual(rc, 0, err)
        self.assertLess(time.time() - start, 2.9)
        self.assertEqual(len(self.log()), 2)
        # Nobody listening: reported (exit 2) after 3 quick retries, not after the library's 6 s.
        start = time.time()
        cfg = os.path.join(self.dir, "closed")
        with open(cfg, "w") as f:
            f.write("current-context: c\nclusters:\n- name: k\n  cluster: {server: 'http://127.0.0.1:1'}\n"
                    "contexts:\n- name: c\n  context: {cluster: k}\n")
        p = subprocess.run([TFJOBCTL, "get", "--kubeconfig", cfg], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("127.0.0.1", p.stderr)
        self.assertLess(time.time() - start, 4)
        for bad in ("x", "-1s", "5q", ""):
            self.assertEqual(self.run_ctl("get", "a", "--request-timeout", bad)[0], 2, bad)

    def test_usage_and_config_errors(self):
        rc, _, err = self.run_ctl("get", "-o", "xml")
        self.assertEqual(rc, 2)
        rc, _, err = self.run_ctl("get", "--compat", "nope")
        self.assertEqual(rc, 2)
        p = subprocess.run([TFJOBCTL, "get", "--kubeconfig", os.path.join(self.dir, "missing")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("missing", p.stderr)

    def test_global_flags_before_the_command(self):
        # As kubectl: -n/--namespace, --context, --kubeconfig, --request-timeout before COMMAND.
        lst = {"kind": "TFJobList", "apiVersion": "kubeflow.org/v1", "metadata": {"resourceVersion": "9"},
               "items": [job("a", ns="team", state="Running")]}
        self.rules({"method": "GET", "path": BASE + "/team/tfjobs", "times": -1, "body": lst})
        for pre in (["-n", "team"], ["--namespace=team"], ["-nteam"], ["--context", "other"],
                    ["--request-timeout", "5s", "-n", "team"]):
            p = subprocess.run([TFJOBCTL, "--kubeconfig", self.kubeconfig] + pre + ["get", "-o", "name"],
                               capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stdout), (0, "tfjob.kubeflow.org/a\n"), (pre, p.stderr))
        # After the command as well, and both: the last one wins, as with pflag.
        rc, out, err = self.run_ctl("-n", "nope", "get", "-n", "team", "-o", "name")
        self.assertEqual((rc, out), (0, "tfjob.kubeflow.org/a\n"), err)
        self.assertTrue(all(e["path"].startswith(BASE + "/team/") for e in self.log()), self.log())
        # A flag without its value, or no command after the flags: a usage error, exit 2.
        for argv in (["-n"], ["-n", "team"], ["--kubeconfig"]):
            p = subprocess.run([TFJOBCTL] + argv, capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, argv)
            self.assertIn("tfjobctl --help", p.stderr)

    def test_global_flags_before_an_offline_command(self):
        # Every command accepts the global flags before it, as kubectl's do; those it has no use
        # for are ignored (validate reads no namespace), those it reads are read (render's -n).
        path = os.path.join(ROOT, "examples", "tfjob-simple.yaml")
        plain = subprocess.run([TFJOBCTL, "validate", "-o", "json", path], capture_output=True, text=True)
        for pre in (["-n", "team"], ["--context", "c", "--kubeconfig", "/nonexistent"], ["--request-timeout=5s"]):
            p = subprocess.run([TFJOBCTL] + pre + ["validate", "-o", "json", path], capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stdout), (plain.returncode, plain.stdout), (pre, p.stderr))
        p = subprocess.run([TFJOBCTL, "-n", "team", "exit-code", "0"], capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout), (0, "success\n"), p.stderr)
        # --compat before the command is still read: an unknown mode is an error however it comes.
        p = subprocess.run([TFJOBCTL, "--compat", "bogus", "validate", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("bogus", p.stderr)
        job_doc = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "j"},
                   "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
                       "containers": [{"name": "tensorflow", "image": "i"}]}}}}}}
        p = subprocess.run([TFJOBCTL, "-n", "team", "render", "-"], input=json.dumps(job_doc),
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["pods"][0]["metadata"]["namespace"], "team")

    def test_apply_create_then_configure(self):
        path = os.path.join(ROOT, "examples", "tfjob-simple.yaml")
        # As kubectl apply: read first; NotFound, so create.
        self.rules({"method": "GET", "path": BASE + "/kubeflow/tfjobs/tfjob-simple", "status": 404,
                    "body": status(404, "NotFound", 'tfjobs.kubeflow.org "tfjob-simple" not found')},
                   {"method": "POST", "path": BASE + "/kubeflow/tfjobs", "status": 201,
                    "body": job("tfjob-simple", ns="kubeflow")})
        rc, out, err = self.run_ctl("apply", "-f", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "tfjob.kubeflow.org/tfjob-simple created\n")
        name = "tfjob-simple"
        sent = json.loads(self.log()[1]["body"])
        self.assertEqual(sent["kind"], "TFJob")
        self.assertEqual(sent["metadata"]["name"], name)
        # Exists: PUT at the server's version with FILE's spec, labels and annotations.
        self.setUp()
        server_obj = job(name, ns="kubeflow", rv="41")
        self.rules({"method": "GET", "path": BASE + "/kubeflow/tfjobs/" + name, "body": server_obj},
                   {"method": "PUT", "path": BASE + "/kubeflow/tfjobs/" + name,
                    "body": dict(server_obj, metadata=dict(server_obj["metadata"], resourceVersion="42"))})
        rc, out, err = self.run_ctl("apply", "-f", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "tfjob.kubeflow.org/%s configured\n" % name)
        self.assertEqual([e["method"] for e in self.log()], ["GET", "PUT"])
        put = json.loads(self.log()[1]["body"])
        self.assertEqual(put["metadata"]["resourceVersion"], "41")
        self.assertEqual(put["metadata"]["uid"], "uid-" + name)
        self.assertEqual(put["spec"], sent["spec"])
        self.assertNotIn("labels", put["metadata"])
        # Created by someone else between the read and the create: update instead.
        self.setUp()
        self.rules({"method": "GET", "path": BASE + "/kubeflow/tfjobs/" + name, "status": 404,
                    "body": status(404, "NotFound", "nf")},
                   {"method": "POST", "status": 409, "path": BASE + "/kubeflow/tfjobs",
                    "body": status(409, "AlreadyExists", "exists")},
                   {"method": "GET", "path": BASE + "/kubeflow/tfjobs/" + name, "body": server_obj},
                   {"method": "PUT", "path": BASE + "/kubeflow/tfjobs/" + name, "body": server_obj})
        rc, out, err = self.run_ctl("apply", "-f", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "tfjob.kubeflow.org/%s unchanged\n" % name)  # the server kept its version
        self.assertEqual([e["method"] for e in self.log()], ["GET", "POST", "GET", "PUT"])
        # Nothing to change: unchanged, without a PUT.
        self.setUp()
        same = dict(server_obj, spec=sent["spec"])
        del same["metadata"]["labels"]
        self.rules({"method": "GET", "path": BASE + "/kubeflow/tfjobs/" + name, "body": same})
        rc, out, err = self.run_ctl("apply", "-f", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "tfjob.kubeflow.org/%s unchanged\n" % name)
        self.assertEqual([e["method"] for e in self.log()], ["GET"])
        # A null in FILE where the server has no such field is nothing to change either (a CRD with
        # a pod template schema prunes template.metadata.creationTimestamp: null); a null where
        # the server has a value is a change.
        nulls = json.loads(json.dumps(sent))
        nulls["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"] = {"creationTimestamp": None}
        npath = os.path.join(self.dir, "nulls.json")
        with open(npath, "w") as f:
            json.dump(nulls, f)
        pruned = json.loads(json.dumps(same))
        pruned["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"] = {}
        self.setUp()
        self.rules({"method": "GET", "path": BASE + "/kubeflow/tfjobs/" + name, "body": pruned})
        rc, out, err = self.run_ctl("apply", "-f", npath)
        self.assertEqual((rc, out), (0, "tfjob.kubeflow.org/%s unchanged\n" % name), err)
        self.assertEqual([e["method"] for e in self.log()], ["GET"])
        self.setUp()
        live = json.loads(json.dumps(same))
        live["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"] = {"creationTimestamp": "2020-01-01T00:00:00Z"}
        self.rules({"method": "GET", "path": BASE + "/kubeflow/tfjobs/" + name, "body": live},
                   {"method": "PUT", "path": BASE + "/kubeflow/tfjobs/" + name,
                    "body": dict(same, metadata=dict(same["metadata"], resourceVersion="42"))})
        rc, out, err = self.run_ctl("apply", "-f", npath)
        self.assertEqual((rc, out), (0, "tfjob.kubeflow.org/%s configured\n" % name), err)
        self.assertEqual([e["method"] for e in self.log()], ["GET", "PUT"])

    def test_apply_resource_version_is_a_precondition(self):
        # A resourceVersion in FILE (e.g. from get -o yaml) is sent: a stale one is a Conflict, not retried.
        doc = job("r", rv="3")
        del doc["status"]
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/r", "body": job("r", rv="41")},
                   {"method": "PUT", "path": BASE + "/default/tfjobs/r", "status": 409, "times": -1,
                    "body": status(409, "Conflict", 'Operation cannot be fulfilled on tfjobs.kubeflow.org "r": '
                                   'the object has been modified; please apply your changes to the latest version '
                                   'and try again')})
        rc, out, err = self.run_ctl("apply", "-f", "-", stdin=json.dumps(doc))
        self.assertEqual(rc, 1, err)
        self.assertTrue(err.startswith('Error from server (Conflict): Operation cannot be fulfilled on '
                                       'tfjobs.kubeflow.org "r"'), err)
        log = self.log()
        self.assertEqual([e["method"] for e in log], ["GET", "PUT"])
        self.assertEqual(json.loads(log[1]["body"])["metadata"]["resourceVersion"], "3")

    def test_apply_multi_document_and_generate_name(self):
        docs = []
        for n in ("m1", "m2"):
            d = job(n)
            del d["status"], d["metadata"]["resourceVersion"], d["metadata"]["uid"]
            docs.append(json.dumps(d))
        gen = job("")
        del gen["status"], gen["metadata"]["resourceVersion"], gen["metadata"]["uid"], gen["metadata"]["name"]
        gen["metadata"]["generateName"] = "g-"
        docs.append(json.dumps(gen))
        m2_server = job("m2", rv="7")
        m2_server["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 3
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/m1", "status": 404, "body": status(404, "NotFound", "nf")},
                   {"method": "POST", "path": BASE + "/default/tfjobs", "status": 201, "body": job("m1")},
                   {"method": "GET", "path": BASE + "/default/tfjobs/m2", "body": m2_server},
                   {"method": "PUT", "path": BASE + "/default/tfjobs/m2", "body": job("m2", rv="8")},
                   {"method": "POST", "path": BASE + "/default/tfjobs", "status": 201, "body": job("g-x7k2p")})
        rc, out, err = self.run_ctl("apply", "-f", "-", stdin="---\n" + "\n---\n".join(docs))
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), ["tfjob.kubeflow.org/m1 created", "tfjob.kubeflow.org/m2 configured",
                                            "tfjob.kubeflow.org/g-x7k2p created"])
        # One refused: the others are applied all the same, exit 1.
        self.setUp()
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/m1", "status": 403,
                    "body": status(403, "Forbidden", 'tfjobs.kubeflow.org "m1" is forbidden')},
                   {"method": "GET", "path": BASE + "/default/tfjobs/m2", "status": 404, "body": status(404, "NotFound", "nf")},
                   {"method": "POST", "path": BASE + "/default/tfjobs", "status": 201, "body": job("m2")})
        rc, out, err = self.run_ctl("apply", "-f", "-", stdin="---\n" + "\n---\n".join(docs[:2]))
        self.assertEqual(rc, 1, err)
        self.assertEqual(out, "tfjob.kubeflow.org/m2 created\n")
        self.assertEqual(err, 'Error from server (Forbidden): tfjobs.kubeflow.org "m1" is forbidden\n')

    def test_apply_warnings(self):
        # What the TFJob docs advise against: "Warning: ..." on stderr, applied all the same.
        gpu = job("g")
        del gpu["status"], gpu["metadata"]["resourceVersion"], gpu["metadata"]["uid"]
        w = gpu["spec"]["tfReplicaSpecs"]["Worker"]
        w["restartPolicy"] = "Never"
        w["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}
        ns = {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "default", "labels": {"istio-injection": "enabled"}}}
        rules = ({"method": "GET", "path": "/api/v1/namespaces/default", "times": -1, "body": ns},
                 {"method": "GET", "path": BASE + "/default/tfjobs/g", "status": 404, "body": status(404, "NotFound", "nf")},
                 {"method": "POST", "path": BASE + "/default/tfjobs", "status": 201, "body": job("g")})
        self.rules(*rules)
        rc, out, err = self.run_ctl("apply", "-f", "-", stdin=json.dumps(gpu))
        self.assertEqual((rc, out), (0, "tfjob.kubeflow.org/g created\n"), err)
        lines = err.splitlines()
        self.assertEqual(len(lines), 3, err)
        self.assertTrue(all(l.startswith("Warning: tfjob/g: spec.tfReplicaSpecs[Worker].") for l in lines), err)
        self.assertIn("restartPolicy Never should rarely be used", err)
        self.assertIn("sidecar.istio.io/inject: \"false\"", err)
        self.assertIn("a GPU limit without a cpu or memory request", err)
        self.assertEqual(self.log(namespace_reads=True)[0]["path"], "/api/v1/namespaces/default")
        # The sidecar opted out: no Istio warning. A namespace without the label: none either.
        self.setUp()
        self.rules(*rules)
        w["template"]["metadata"] = {"annotations": {"sidecar.istio.io/inject": "false"}}
        rc, out, err = self.run_ctl("apply", "-f", "-", stdin=json.dumps(gpu))
        self.assertEqual(rc, 0, err)
        self.assertNotIn("istio", err)
        self.assertEqual(len(err.splitlines()), 2, err)
        # --warnings-as-errors: exit 1 and nothing sent.
        self.setUp()
        self.rules(*rules)
        rc, out, err = self.run_ctl("apply", "--warnings-as-errors", "-f", "-", stdin=json.dumps(gpu))
        self.assertEqual((rc, out), (1, ""), err)
        self.assertIn("Warning: ", err)
        self.assertEqual([e["method"] for e in self.log()], [])
        # A namespace that cannot be read is taken as not injecting the sidecar.
        self.setUp()
        self.rules({"method": "GET", "path": "/api/v1/namespaces/default", "status": 403,
                    "body": status(403, "Forbidden", "no")}, *rules[1:])
        del w["template"]["metadata"]
        w["restartPolicy"] = "OnFailure"
        w["template"]["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1", "memory": "1Gi"}
        rc, out, err = self.run_ctl("apply", "-f", "-", stdin=json.dumps(gpu))
        self.assertEqual((rc, out, err), (0, "tfjob.kubeflow.org/g created\n", ""))

    def test_apply_invalid_is_not_sent(self):
        bad = ("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: bad}\nspec:\n  tfReplicaSpecs:\n"
               "    Worker:\n      template:\n        spec:\n          containers: [{name: tensorflow}]\n")
        rc, out, err = self.run_ctl("apply", "-f", "-", stdin=bad)
        self.assertEqual(rc, 1)
        self.assertIn("image", err)
        self.assertEqual(self.log(), [])

    def test_describe(self):
        ev = {"kind": "EventList", "items": [
            {"type": "Warning", "reason": "Later", "message": "second", "reportingComponent": "other-controller",
             "count": 3, "firstTimestamp": "2020-01-01T00:00:02Z", "lastTimestamp": "2020-01-01T00:00:09Z"},
            {"type": "Normal", "reason": "SuccessfulCreatePod", "message": "Created pod: x-worker-0",
             "source": {"component": "tfjob-controller"}, "lastTimestamp": "2020-01-01T00:00:01Z"}]}
        x = job("x", state="Running")
        x["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = [
            {"name": "tensorflow", "image": "tf:2", "command": ["python", "train.py"], "args": ["--lr", "0.1"],
             "ports": [{"name": "tfjob-port", "containerPort": 2222}],
             "env": [{"name": "MODE", "value": "fast"},
                     {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
             "resources": {"limits": {"nvidia.com/gpu": 1}, "requests": {"cpu": "2", "memory": "4Gi"}}},
            {"name": "sidecar", "image": "log:1"}]
        self.rules({"path": BASE + "/default/tfjobs/x", "body": x},
                   {"path": "/api/v1/namespaces/default/events", "body": ev})
        rc, out, err = self.run_ctl("describe", "x")
        self.assertEqual(rc, 0, err)
        for text in ("Name:        x", "Labels:      team=ml", "Kind:        TFJob", "Worker:", "Replicas:        2",
                     "Conditions:", "Running", "now Running",
                     "Active: 2", "Events:", "SuccessfulCreatePod", "Created pod: x-worker-0", "tfjob-controller"):
            self.assertIn(text, out)
        # The pod template's containers, as kubectl describe shows a pod's.
        tmpl = out[out.index("Pod Template:"):out.index("Status:")]
        self.assertIn("""          tensorflow:
            Image:  tf:2
            Port:   2222/TCP (tfjob-port)
            Command:
              python
              train.py
            Args:
              --lr
              0.1
            Limits:
              nvidia.com/gpu:  1
            Requests:
              cpu:  2
              memory:  4Gi
            Environment:
              MODE:  fast
              KEY:  <set to the key 'k' in secret 's'>
              TF_CONFIG:  (set by the operator; replica 0 shown, the other replicas differ in task.index)
                {
                  "cluster": {
                    "worker": [
                      "x-worker-0.default.svc:2222",
                      "x-worker-1.default.svc:2222"
                    ]
                  },
                  "task": {
                    "type": "worker",
                    "index": 0
                  },
                  "environment": "cloud"
                }
          sidecar:
            Image:  log:1
            Environment:  <none>
""", tmpl)
        q = self.log()[1]["query"]
        self.assertIn("fieldSelector=involvedObject.name%3Dx%2CinvolvedObject.kind%3DTFJob", q)
        # Oldest first; repeated events as kubectl shows them; From falls back to the reporter.
        self.assertLess(out.index("SuccessfulCreatePod"), out.index("Later"))
        self.assertRegex(out, r"Later +\S+ \(x3 over \S+\) +other-controller +second")

    def test_run_policy_and_managed_by(self):
        # kubectl describe's style: "Run Policy:" then titled, aligned fields, objects nested.
        x = job("x")
        x["spec"]["runPolicy"] = {"cleanPodPolicy": "Running", "ttlSecondsAfterFinished": 600, "backoffLimit": 3,
                                  "managedBy": "kueue.x-k8s.io/multikueue",
                                  "schedulingPolicy": {"minAvailable": 2, "queue": "q"}}
        lst = {"kind": "TFJobList", "apiVersion": "kubeflow.org/v1", "metadata": {"resourceVersion": "9"},
               "items": [x, job("y", state="Running")]}
        self.rules({"path": BASE + "/default/tfjobs/x", "times": -1, "body": x},
                   {"path": BASE + "/default/tfjobs", "times": -1, "body": lst},
                   {"path": "/api/v1/namespaces/default/events", "body": {"kind": "EventList", "items": []}})
        rc, out, err = self.run_ctl("describe", "x")
        self.assertEqual(rc, 0, err)
        self.assertIn("""  Run Policy:
    Clean Pod Policy:            Running
    TTL Seconds After Finished:  600
    Backoff Limit:               3
    Managed By:                  kueue.x-k8s.io/multikueue
    Scheduling Policy:
      Min Available:  2
      Queue:          q
""", out)
        self.assertIn("Status:\n  Managed By:  kueue.x-k8s.io/multikueue (spec.runPolicy.managedBy): that controller", out)
        self.assertIn("(no status written yet)", out)
        # get: the empty STATE explained on stderr; -o wide has a MANAGED-BY column.
        rc, out, err = self.run_ctl("get")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(out.splitlines()[1].split()), 2, out)  # x: NAME and AGE, no STATE
        self.assertEqual(out.splitlines()[2].split()[:2], ["y", "Running"])
        self.assertIn("Note: tfjob/x is managed by kueue.x-k8s.io/multikueue (spec.runPolicy.managedBy)", err)
        self.assertNotIn("tfjob/y", err)
        rc, out, err = self.run_ctl("get", "-o", "wide")
        self.assertEqual(out.splitlines()[0].split()[-1], "MANAGED-BY")
        self.assertEqual(out.splitlines()[1].split()[-1], "kueue.x-k8s.io/multikueue")
        self.assertEqual(out.splitlines()[2].split()[-1], "<default>")
        # -o name/json stay machine output: no note.
        rc, out, err = self.run_ctl("get", "-o", "name")
        self.assertEqual((rc, err), (0, ""))

    def pod(self, job_name, rtype, index, containers=("tensorflow",)):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "%s-%s-%d" % (job_name, rtype, index), "namespace": "default",
                             "labels": {"training.kubeflow.org/job-name": job_name,
                                        "training.kubeflow.org/replica-type": rtype,
                                        "training.kubeflow.org/replica-index": str(index)}},
                "spec": {"containers": [{"name": c, "image": "tf"} for c in containers]}}

    def test_logs_of_a_cluster_job(self):
        pods = "/api/v1/namespaces/default/pods"
        both = {"kind": "PodList", "apiVersion": "v1", "metadata": {},
                "items": [self.pod("w", "worker", 1), self.pod("w", "worker", 0)]}
        one = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [self.pod("w", "worker", 1)]}
        text = {"content_type": "text/plain"}
        self.rules({"path": BASE + "/default/tfjobs/w", "times": -1, "body": job("w", state="Running")},
                   {"path": BASE + "/default/tfjobs/nope", "times": -1, "status": 404,
                    "body": status(404, "NotFound", 'tfjobs.kubeflow.org "nope" not found')},
                   {"path": pods, "query": "replica-index%3D1", "times": -1, "body": one},
                   {"path": pods, "times": -1, "body": both},
                   dict(text, path=pods + "/w-worker-1/log", query="previous=true", times=1, body="before restart\n"),
                   dict(text, path=pods + "/w-worker-1/log", query="follow=true", times=1,
                        chunks=["b1\nb", "2\n", "b3"], chunk_delay_ms=100),
                   dict(text, path=pods + "/w-worker-0/log", query="follow=true", times=1,
                        chunks=["a1\n", "a2\n"], chunk_delay_ms=150),
                   dict(text, path=pods + "/w-worker-1/log", times=-1, body="step 1\nstep 2\n"),
                   dict(text, path=pods + "/w-worker-0/log", times=1, status=400,
                        body=status(400, "BadRequest",
                                    'container "tensorflow" in pod "w-worker-0" is waiting to start: '
                                    'ContainerCreating')),
                   dict(text, path=pods + "/w-worker-0/log", times=-1, body="zero\n"))
        # One replica by TYPE-INDEX: its log as the server sends it, the options as query parameters.
        rc, out, err = self.run_ctl("logs", "w", "worker-1", "--tail", "5", "--timestamps", "--since", "90s")
        self.assertEqual((rc, out), (0, "step 1\nstep 2\n"), err)
        log = self.log()
        self.assertEqual(log[0]["path"], BASE + "/default/tfjobs/w")
        self.assertIn("labelSelector=training.kubeflow.org%2Fjob-name%3Dw%2Ctraining.kubeflow.org%2F"
                      "replica-type%3Dworker%2Ctraining.kubeflow.org%2Freplica-index%3D1", log[1]["query"])
        self.assertEqual(log[2]["path"], pods + "/w-worker-1/log")
        for q in ("container=tensorflow", "tailLines=5", "timestamps=true", "sinceSeconds=90"):
            self.assertIn(q, log[2]["query"])
        self.assertNotIn("follow", log[2]["query"])
        # The pod's own name, --previous, the global -n before the command.
        rc, out, err = self.run_ctl("-n", "default", "logs", "w", "w-worker-1", "--previous")
        self.assertEqual((rc, out), (0, "before restart\n"), err)
        # Several pods: one must be named, or --all (prefixed, pod name order).
        rc, out, err = self.run_ctl("logs", "w")
        self.assertEqual(rc, 2)
        self.assertIn("TFJob w has 2 pods (worker-0, worker-1)", err)
        rc, out, err = self.run_ctl("logs", "w", "--all")
        self.assertEqual(rc, 1)  # worker-0's container has not started: the server's message, exit 1
        self.assertIn('is waiting to start: ContainerCreating', err)
        self.assertEqual(out, "[pod/w-worker-1/tensorflow] step 1\n[pod/w-worker-1/tensorflow] step 2\n")
        rc, out, err = self.run_ctl("logs", "w", "--replica-type", "Worker")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), ["[pod/w-worker-0/tensorflow] zero", "[pod/w-worker-1/tensorflow] step 1",
                                            "[pod/w-worker-1/tensorflow] step 2"])
        # -f --all: every log streamed at once, whole lines, the last one without its newline too.
        rc, out, err = self.run_ctl("logs", "w", "--all", "-f")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(sorted(lines), ["[pod/w-worker-0/tensorflow] a1", "[pod/w-worker-0/tensorflow] a2",
                                         "[pod/w-worker-1/tensorflow] b1", "[pod/w-worker-1/tensorflow] b2",
                                         "[pod/w-worker-1/tensorflow] b3"])
        self.assertLess(lines.index("[pod/w-worker-1/tensorflow] b1"), lines.index("[pod/w-worker-1/tensorflow] b2"))
        # Errors: no such TFJob (exit 1), a replica that is not TYPE-INDEX (exit 2).
        rc, out, err = self.run_ctl("logs", "nope", "worker-0")
        self.assertEqual(rc, 1)
        self.assertIn('"nope" not found', err)
        rc, out, err = self.run_ctl("logs", "w", "worker")
        self.assertEqual(rc, 2)
        self.assertIn("TYPE-INDEX", err)
        rc, out, err = self.run_ctl("logs", "./no-such-run", "worker-0")
        self.assertEqual(rc, 2)
        self.assertIn("no local run directory", err)
        rc, out, err = self.run_ctl("logs", self.dir, "worker-0")  # a directory, with cluster flags
        self.assertEqual(rc, 2)
        self.assertIn("is a local run directory: --previous, --replica-type", err)

    def test_logs_follow_ctrl_c_exits_130(self):
        pods = "/api/v1/namespaces/default/pods"
        self.rules({"path": BASE + "/default/tfjobs/w", "body": job("w", state="Running")},
                   {"path": pods, "body": {"kind": "PodList", "items": [self.pod("w", "worker", 0)]}},
                   {"path": pods + "/w-worker-0/log", "content_type": "text/plain", "chunks": ["up\n"],
                    "hang_ms": 20000})
        p = subprocess.Popen([TFJOBCTL, "logs", "w", "-f", "--kubeconfig", self.kubeconfig], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.stdout.readline(), "up\n")
        p.send_signal(signal.SIGINT)
        start = time.time()
        rc = p.wait(timeout=10)
        p.stdout.close()
        p.stderr.close()
        self.assertEqual(rc, 130)
        self.assertLess(time.time() - start, 4)

    def diagnose(self, obj, pods=(), events=(), lease=None, lease_status=200):
        """Run diagnose on obj with these pods, Events (of the namespace) and leader Lease."""
        self.setUp()
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        leases = [] if lease is None else [{"metadata": {"name": "1ca428e5.training-operator.kubeflow.org",
                                                         "namespace": "kubeflow"},
                                            "spec": dict({"holderIdentity": "op-1", "leaseDurationSeconds": 15,
                                                          "renewTime": now}, **lease)}]
        self.rules({"path": BASE + "/default/tfjobs/" + obj["metadata"]["name"], "body": obj},
                   {"path": "/apis/coordination.k8s.io/v1/leases", "status": lease_status,
                    "body": {"kind": "LeaseList", "items": leases} if lease_status == 200 else
                    status(lease_status, "Forbidden", "leases is forbidden")},
                   {"path": "/api/v1/namespaces/default/pods", "body": {"kind": "PodList", "items": list(pods)}},
                   {"path": "/api/v1/namespaces/default/events", "body": {"kind": "EventList", "items": list(events)}})
        return self.run_ctl("diagnose", obj["metadata"]["name"])

    def test_diagnose(self):
        # No status and no leader Lease: the operator is not running.
        rc, out, err = self.diagnose(job("d"))
        self.assertEqual(rc, 1, err)
        self.assertIn("[ok]   spec        valid", out)
        self.assertIn("[FAIL] controller  no leader Lease 1ca428e5.training-operator.kubeflow.org: is tfjob-operator "
                      "running", out)
        self.assertIn("Result: the step that fails is controller: no leader Lease", out)
        q = [e["query"] for e in self.log() if "leases" in e["path"]][0]
        self.assertIn("fieldSelector=metadata.name%3D1ca428e5.training-operator.kubeflow.org", q)
        # A Lease not renewed for a minute: nobody leads.
        old = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(time.time() - 70))
        rc, out, err = self.diagnose(job("d"), lease={"renewTime": old})
        self.assertEqual(rc, 1, err)
        self.assertRegex(out, r"\[FAIL\] controller  the leader Lease kubeflow/1ca428e5.training-operator.kubeflow.org "
                              r"is held by op-1, renewed 1m1\ds ago: no operator is leading")
        # A live leader but no status yet.
        rc, out, err = self.diagnose(job("d"), lease={})
        self.assertEqual(rc, 1, err)
        self.assertRegex(out, r"\[ok\]   controller  the leader Lease kubeflow/\S+ is held by op-1, renewed \ds ago")
        self.assertIn("[FAIL] status      none: no operator has taken the job", out)
        # Pods not created: the job's Warning Events say why.
        running = job("d", state="Running")
        ev = [{"type": "Warning", "reason": "FailedCreatePod", "involvedObject": {"kind": "TFJob", "name": "d"},
               "message": 'Error creating: pods "d-worker-0" is forbidden: exceeded quota: q', "count": 4}]
        rc, out, err = self.diagnose(running, events=ev, lease={})
        self.assertEqual(rc, 1, err)
        self.assertIn("[ok]   status      Running (TFJobRunning: now Running)", out)
        self.assertIn("[FAIL] pods        0 of 2 created: the operator could not create the others", out)
        self.assertIn('Event FailedCreatePod TFJob/d: Error creating: pods "d-worker-0" is forbidden: exceeded quota: q (x4)',
                      out)
        # A pod the scheduler cannot place.
        p0, p1 = self.pod("d", "worker", 0), self.pod("d", "worker", 1)
        p0["spec"]["nodeName"] = "n1"
        p0["status"] = {"phase": "Running", "containerStatuses": [{"name": "tensorflow", "restartCount": 0,
                                                                     "state": {"running": {}}}]}
        p1["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                        "reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient cpu."}]}
        rc, out, err = self.diagnose(running, pods=[p0, p1], lease={})
        self.assertEqual(rc, 1, err)
        self.assertIn("[ok]   pods        2 of 2 created", out)
        self.assertIn("[FAIL] scheduling  pod d-worker-1 is not scheduled: Unschedulable: 0/3 nodes are available: "
                      "3 Insufficient cpu.", out)
        self.assertIn("[--]   containers  not judged while a pod waits for a node", out)
        # Image pull errors and a missing Secret: the containers' waiting reasons.
        p1["spec"]["nodeName"] = "n1"
        p1["status"] = {"phase": "Pending", "containerStatuses": [{"name": "tensorflow", "restartCount": 0, "state": {
            "waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "tf:nope"'}}}]}
        p0["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "CreateContainerConfigError",
                                                                     "message": 'secret "creds" not found'}}
        rc, out, err = self.diagnose(running, pods=[p0, p1], lease={})
        self.assertEqual(rc, 1, err)
        self.assertIn("[ok]   scheduling  every pod is on a node", out)
        self.assertIn('[FAIL] containers  pod d-worker-0: container tensorflow is waiting: CreateContainerConfigError: '
                      'secret "creds" not found', out)
        self.assertIn('pod d-worker-1: container tensorflow is waiting: ImagePullBackOff: Back-off pulling image "tf:nope"',
                      out)
        # A volume that cannot be mounted: the pod stays Pending on its node; its Events say why.
        p1["status"] = {"phase": "Pending"}
        p0["status"] = {"phase": "Running", "containerStatuses": [{"name": "tensorflow", "restartCount": 2,
                        "state": {"running": {}}, "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}
        mount = [{"type": "Warning", "reason": "FailedMount", "involvedObject": {"kind": "Pod", "name": "d-worker-1"},
                  "message": 'MountVolume.SetUp failed for volume "data" : configmap "cfg" not found'}]
        rc, out, err = self.diagnose(running, pods=[p0, p1], events=mount, lease={})
        self.assertEqual(rc, 1, err)
        self.assertIn('[FAIL] containers  pod d-worker-1 is Pending: FailedMount: MountVolume.SetUp failed for volume '
                      '"data" : configmap "cfg" not found', out)
        # All well; restarts are noted, exit 0.
        p1["status"] = {"phase": "Running", "containerStatuses": [{"name": "tensorflow", "restartCount": 0,
                                                                     "state": {"running": {}}}]}
        rc, out, err = self.diagnose(running, pods=[p0, p1], lease={})
        self.assertEqual(rc, 0, out + err)
        self.assertIn("pod d-worker-0: 2 restarts, last exit 137 OOMKilled", out)
        self.assertIn("Result: no step fails", out)
        # Leases that cannot be read: said, not fatal.
        rc, out, err = self.diagnose(running, pods=[p1], lease_status=403)
        self.assertIn("[note] controller  cannot read the Lease", out)
        # An invalid spec; a job another controller manages (exit 0, nothing else judged).
        bad = job("d")
        del bad["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["image"]
        rc, out, err = self.diagnose(bad)
        self.assertEqual(rc, 1, err)
        self.assertIn("[FAIL] spec        invalid: the operator will not run it (1 error)", out)
        self.assertIn("spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Required value", out)
        other = job("d")
        other["spec"]["runPolicy"]["managedBy"] = "kueue.x-k8s.io/multikueue"
        rc, out, err = self.diagnose(other)
        self.assertEqual(rc, 0, err)
        self.assertIn("[note] controller  runPolicy.managedBy is kueue.x-k8s.io/multikueue", out)
        self.assertIn("Result: no step fails (the training operator does not run this job)", out)
        # describe points at it when there is no status.
        self.setUp()
        self.rules({"path": BASE + "/default/tfjobs/d", "body": job("d")},
                   {"path": "/api/v1/namespaces/default/events", "body": {"kind": "EventList", "items": []}})
        rc, out, err = self.run_ctl("describe", "d")
        self.assertIn("No status yet: 'tfjobctl diagnose d' says which step fails", out)

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
        # --ignore-not-found; kubectl's legacy --cascade=false is orphan.
        self.setUp()
        self.rules({"method": "DELETE", "path": BASE + "/default/tfjobs/y", "status": 404,
                    "body": status(404, "NotFound", 'tfjobs.kubeflow.org "y" not found')},
                   {"method": "DELETE", "path": BASE + "/default/tfjobs/x", "body": {"kind": "Status", "status": "Success"}})
        rc, out, err = self.run_ctl("delete", "y", "tfjob.kubeflow.org/x", "--ignore-not-found", "--cascade=false")
        self.assertEqual((rc, out, err), (0, 'tfjob.kubeflow.org "x" deleted\n', ""))
        self.assertEqual(json.loads(self.log()[1]["body"])["propagationPolicy"], "Orphan")

    def test_delete_by_file(self):
        # -f: each TFJob of the files by its name, in its own namespace (else -n).
        a, b = job("a", ns="team"), job("b")
        del b["metadata"]["namespace"]
        self.rules({"method": "DELETE", "path": BASE + "/team/tfjobs/a", "body": {"kind": "Status", "status": "Success"}},
                   {"method": "DELETE", "path": BASE + "/other/tfjobs/b", "body": {"kind": "Status", "status": "Success"}})
        rc, out, err = self.run_ctl("delete", "-n", "other", "-f", "-", stdin="---\n" + json.dumps(a) + "\n---\n" + json.dumps(b))
        self.assertEqual((rc, out), (0, 'tfjob.kubeflow.org "a" deleted\ntfjob.kubeflow.org "b" deleted\n'), err)
        self.assertEqual([e["path"] for e in self.log()], [BASE + "/team/tfjobs/a", BASE + "/other/tfjobs/b"])
        rc, out, err = self.run_ctl("delete", "x", "-f", "-", stdin=json.dumps(a))
        self.assertEqual(rc, 2, err)

    def test_get_and_describe_by_file(self):
        # -f, as kubectl get/describe -f: each TFJob of the files by its name, in its own namespace.
        a, b = job("a", ns="team", state="Running"), job("b", state="Succeeded")
        del b["metadata"]["namespace"]
        stream = "---\n" + json.dumps(a) + "\n---\n" + json.dumps(b)
        self.rules({"path": BASE + "/team/tfjobs/a", "body": a, "times": -1},
                   {"path": BASE + "/other/tfjobs/b", "body": b, "times": -1},
                   {"path": "/api/v1/namespaces/team/events", "body": {"kind": "EventList", "items": []}, "times": -1},
                   {"path": "/api/v1/namespaces/other/events", "body": {"kind": "EventList", "items": []}, "times": -1})
        rc, out, err = self.run_ctl("get", "-n", "other", "-f", "-", "-o", "name", stdin=stream)
        self.assertEqual((rc, out), (0, "tfjob.kubeflow.org/a\ntfjob.kubeflow.org/b\n"), err)
        self.assertEqual([e["path"] for e in self.log()], [BASE + "/team/tfjobs/a", BASE + "/other/tfjobs/b"])
        rc, out, err = self.run_ctl("get", "-n", "other", "-f", "-", "-o", "json", stdin=json.dumps(a))
        self.assertEqual((rc, json.loads(out)["metadata"]["name"]), (0, "a"), err)  # one: the object itself
        rc, out, err = self.run_ctl("describe", "-n", "other", "-f", "-", stdin=stream)
        self.assertEqual(rc, 0, err)
        first, second = out.split("\n\n\nName:")
        self.assertIn("Name:        a", first)
        self.assertTrue(second.lstrip().startswith("b"), out)
        self.assertEqual(self.run_ctl("get", "a", "-f", "-", stdin=stream)[0], 2)
        self.assertEqual(self.run_ctl("describe", "a", "-f", "-", stdin=stream)[0], 2)
        self.assertEqual(self.run_ctl("get", "-A", "-f", "-", stdin=stream)[0], 2)
        # A missing one: the others are shown, the status says it.
        self.rules({"path": BASE + "/team/tfjobs/a", "body": a},
                   {"path": BASE + "/team/tfjobs/nope", "status": 404,
                    "body": status(404, "NotFound", 'tfjobs.kubeflow.org "nope" not found')},
                   {"path": "/api/v1/namespaces/team/events", "body": {"kind": "EventList", "items": []}})
        rc, out, err = self.run_ctl("describe", "a", "nope", "-n", "team")
        self.assertEqual(rc, 1)
        self.assertIn("Name:        a", out)
        self.assertIn('"nope" not found', err)

    def children(self, pods=(), job_events=(), pod_events=()):
        """Rules for what watch's text view reads beside the TFJob: its pods and Events."""
        ev = "/api/v1/namespaces/default/events"
        return [{"path": "/api/v1/namespaces/default/pods", "times": -1,
                 "body": {"kind": "PodList", "apiVersion": "v1", "items": list(pods)}},
                {"path": ev, "query": "involvedObject.kind%3DTFJob", "times": -1,
                 "body": {"kind": "EventList", "items": list(job_events)}},
                {"path": ev, "query": "involvedObject.kind%3DPod", "times": -1,
                 "body": {"kind": "EventList", "items": list(pod_events)}}]

    def test_watch_until_succeeded(self):
        def ev(t, obj):
            return json.dumps({"type": t, "object": obj}) + "\n"
        running = job("w", state="Running", rv="7")
        done = job("w", state="Succeeded", rv="9")
        done["status"]["replicaStatuses"] = {"Worker": {"succeeded": 2}}
        done["status"]["completionTime"] = "2020-01-01T00:03:25Z"
        pod = self.pod("w", "worker", 0)
        pod["status"] = {"phase": "Running", "containerStatuses": [
            {"name": "tensorflow", "restartCount": 1, "state": {"running": {}},
             "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}
        pending = self.pod("w", "worker", 1)
        pending["status"] = {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]}
        other = self.pod("x", "worker", 0)
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true",
                    "chunks": [ev("MODIFIED", running)[:50], ev("MODIFIED", running)[50:],
                               ev("BOOKMARK", {"kind": "TFJob", "metadata": {"resourceVersion": "8"}}),
                               ev("MODIFIED", done)],
                    "chunk_delay_ms": 300, "hang_ms": 5000},
                   *self.children([pod, pending], [
                       {"metadata": {"uid": "e1"}, "type": "Normal", "reason": "SuccessfulCreatePod",
                        "involvedObject": {"kind": "TFJob", "name": "w"}, "message": "Created pod: w-worker-0"}], [
                       {"metadata": {"uid": "e2"}, "type": "Warning", "reason": "BackOff", "count": 3,
                        "involvedObject": {"kind": "Pod", "name": "w-worker-0"}, "message": "Back-off restarting"},
                       {"metadata": {"uid": "e3"}, "type": "Warning", "reason": "BackOff",
                        "involvedObject": {"kind": "Pod", "name": "x-worker-0"}, "message": "not ours"}]))
        rc, out, err = self.run_ctl("watch", "w")
        self.assertEqual(rc, 0, err)
        # What the local run view shows, each line after the time (HH:MM:SS).
        lines = [l.split(" ", 1)[1] if re.match(r"\d\d:\d\d:\d\d ", l) else l for l in out.splitlines()]
        for want in ("TFJob default/w: no status yet",
                     "replicas Worker: 0 of 2 active, 0 succeeded, 0 failed",
                     "pod w-worker-0: Running, restarts 1, last exit 137 (OOMKilled)",
                     "pod w-worker-1: Pending (Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.)",
                     "condition Created=True TFJobCreated: created",
                     "condition Running=True TFJobRunning: now Running",
                     "replicas Worker: 2 of 2 active, 0 succeeded, 0 failed",
                     "condition Succeeded=True TFJobSucceeded: now Succeeded",
                     "replicas Worker: 0 of 2 active, 2 succeeded, 0 failed",
                     "TFJob w Succeeded (TFJobSucceeded: now Succeeded) after 3m20s",
                     "  replicas Worker: 0 of 2 active, 2 succeeded, 0 failed"):
            self.assertIn(want, lines, out)
        self.assertIn("Normal  SuccessfulCreatePod  TFJob/w: Created pod: w-worker-0", out)
        self.assertIn("Warning BackOff              Pod/w-worker-0: Back-off restarting (x3)", out)
        self.assertNotIn("not ours", out)
        self.assertEqual(out.count("SuccessfulCreatePod"), 1, out)  # each Event once
        self.assertEqual(out.count("condition Created=True"), 1, out)  # each change once
        self.assertLess(lines.index("condition Running=True TFJobRunning: now Running"),
                        lines.index("condition Succeeded=True TFJobSucceeded: now Succeeded"))
        q = [e["query"] for e in self.log() if "watch=true" in e["query"]][0]
        self.assertIn("resourceVersion=5", q)
        self.assertIn("fieldSelector=metadata.name%3Dw", q)
        pods_q = [e["query"] for e in self.log() if e["path"].endswith("/pods")][0]
        self.assertIn("labelSelector=training.kubeflow.org%2Fjob-name%3Dw", pods_q)
        # -o json: the TFJob's watch events only, one JSON line each (nothing else read).
        self.setUp()
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true",
                    "chunks": [ev("MODIFIED", running), ev("MODIFIED", done)], "hang_ms": 5000})
        rc, out, err = self.run_ctl("watch", "w", "-o", "json")
        self.assertEqual(rc, 0, err)
        self.assertEqual([(l["type"], l["object"]["metadata"]["resourceVersion"]) for l in map(json.loads, out.splitlines())],
                         [("ADDED", "5"), ("MODIFIED", "7"), ("MODIFIED", "9")])
        self.assertEqual([e["path"] for e in self.log()], [BASE + "/default/tfjobs/w", BASE + "/default/tfjobs"])

    def test_watch_deleted(self):
        ev = json.dumps({"type": "DELETED", "object": job("w", state="Running", rv="8")}) + "\n"
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", state="Running", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true", "chunks": [ev],
                    "hang_ms": 5000}, *self.children())
        rc, out, err = self.run_ctl("watch", "w")
        self.assertEqual(rc, 1, err)
        self.assertRegex(out, r"\d\d:\d\d:\d\d TFJob w was deleted\n")
        self.assertIn("\nTFJob w was deleted (last seen: Running)\n", out)

    def test_watch_relists_on_gone_and_times_out(self):
        gone = json.dumps({"type": "ERROR", "object": status(410, "Expired", "too old")}) + "\n"
        failed = job("w", state="Failed", rv="20")
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true",
                    "chunks": [json.dumps({"type": "BOOKMARK", "object": {"kind": "TFJob",
                                                                          "metadata": {"resourceVersion": "6"}}}) + "\n",
                               gone]},
                   {"method": "GET", "path": BASE + "/default/tfjobs/w", "body": failed})
        rc, out, err = self.run_ctl("watch", "w", "-o", "json")
        self.assertEqual(rc, 1, err)
        lines = [json.loads(l) for l in out.splitlines()]
        self.assertEqual(lines[-1]["object"]["metadata"]["resourceVersion"], "20")
        self.assertNotIn("BOOKMARK", [l["type"] for l in lines])
        self.setUp()
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true", "chunks": [],
                    "hang_ms": 10000}, *self.children())
        start = time.time()
        rc, out, err = self.run_ctl("watch", "w", "--timeout", "1")
        self.assertEqual(rc, 1)
        self.assertIn("did not finish", err)
        self.assertLess(time.time() - start, 6)

    def test_watch_ctrl_c_exits_130(self):
        self.rules({"method": "GET", "path": BASE + "/default/tfjobs/w", "body": job("w", state="Running", rv="5")},
                   {"method": "GET", "path": BASE + "/default/tfjobs", "query": "watch=true", "chunks": [],
                    "hang_ms": 20000}, *self.children())
        p = subprocess.Popen([TFJOBCTL, "watch", "w", "--kubeconfig", self.kubeconfig], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        # The first line is printed once the job was read: the watch is then under way.
        first = p.stdout.readline()
        self.assertEqual(first.split()[1:4], ["TFJob", "default/w:", "Running"])
        p.send_signal(signal.SIGINT)
        start = time.time()
        rc = p.wait(timeout=10)
        p.stdout.close()
        p.stderr.close()
        self.assertEqual(rc, 130)
        self.assertLess(time.time() - start, 5)


if __name__ == "__main__":
    unittest.main(verbosity=1)
