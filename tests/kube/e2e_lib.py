"""Shared by the end-to-end scripts of tests/kube (controller_e2e.py, official_crd_e2e.py): ok/FAIL
reporting and calls to the harness's kube-apiserver as its admin (KUBE_* from tests/kube/harness.sh)."""
import atexit
import json
import os
import signal
import socket
import ssl
import sys
import time
import urllib.error
import urllib.request

URL = os.environ["KUBE_APISERVER_URL"]
ctx = ssl.create_default_context(cafile=os.environ["KUBE_CA_CERT"])
ctx.load_cert_chain(os.environ["KUBE_ADMIN_CERT"], os.environ["KUBE_ADMIN_KEY"])
failures = 0
RUNNING = []  # processes a script started (tfjob-operator): none outlives the script


@atexit.register
def _kill_running():
    for p in RUNNING:
        if p.poll() is None:
            p.kill()
            p.wait()


signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))


def check(what, cond, detail=None):
    """Print an ok/FAIL line (with detail, shortened, on failure); count failures; return cond."""
    global failures
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1
        if detail is not None:
            print("     " + str(detail)[:2000], flush=True)
    return cond


def api(method, path, body=None, ctype="application/json"):
    """(HTTP status, decoded JSON body) of a request; error answers are returned, not raised."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"{}")
        except ValueError:
            return e.code, {}


def wait(what, fn, timeout=60):
    """Poll fn (exceptions count as not yet) until it is true: one ok line, or FAIL after timeout."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            if fn():
                return check(what, True)
        except Exception:
            pass
        time.sleep(0.1)
    return check(what + " (timed out)", False)


def operator_ports(log_path, timeout=20):
    """The (metrics, health) ports a starting tfjob-operator logs as "ports", or None after timeout."""
    end = time.time() + timeout
    while time.time() < end:
        for line in open(log_path):
            if '"ports"' in line:
                return tuple(int(x) for x in json.loads(line)["ports"].split(","))
        time.sleep(0.05)
    return None


def http_get(port, path, raw=None, timeout=5):
    """(status, body) of one request on a new loopback connection (raw: bytes sent instead of a GET
    of path); status 0 when no HTTP answer came before the server closed, reset or went silent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(raw if raw is not None else f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    code = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return code, body.decode(errors="replace")


def exit_status():
    """1 when any check failed, else 0."""
    return 1 if failures else 0
