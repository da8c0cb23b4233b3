"""A small Kubernetes API client for the head-to-head rig (tests/h2h): one keep-alive HTTPS
connection per thread, the harness's admin certificate (KUBE_* from tests/kube/harness.sh's env),
and a user agent per role, so that the API server's audit log tells the stand-in kubelet and the
scripted user apart from the operator under test."""
import http.client
import json
import os
import ssl
import threading
import urllib.parse


class Kube:
    def __init__(self, user_agent):
        url = urllib.parse.urlsplit(os.environ["KUBE_APISERVER_URL"])
        self.host, self.port = url.hostname, url.port
        self.user_agent = user_agent
        self.ctx = ssl.create_default_context(cafile=os.environ["KUBE_CA_CERT"])
        self.ctx.load_cert_chain(os.environ["KUBE_ADMIN_CERT"], os.environ["KUBE_ADMIN_KEY"])
        self.local = threading.local()

    def _conn(self, fresh=False):
        c = getattr(self.local, "conn", None)
        if c is None or fresh:
            if c is not None:
                c.close()
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
            self.local.conn = c
        return c

    def request(self, method, path, body=None, ctype="application/json"):
        """(status, decoded JSON or {}) of one request; error answers are returned, not raised."""
        return self.request_raw(method, path, json.dumps(body).encode() if body is not None else None, ctype)

    def request_raw(self, method, path, data, ctype):
        """request() with the body given as bytes (or None)."""
        headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = ctype
        for attempt in range(2):
            c = self._conn(fresh=attempt > 0)
            try:
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                raw = r.read()
                break
            except (http.client.HTTPException, OSError):
                if attempt:
                    raise
        try:
            return r.status, json.loads(raw or b"{}")
        except ValueError:
            return r.status, {}

    def get(self, path):
        return self.request("GET", path)

    def items(self, path):
        code, body = self.get(path)
        return body.get("items") or [] if code == 200 else []

    def discovered(self, group, version, plural):
        """Whether API discovery lists the resource: the API server publishes a new CRD there
        apart from marking it Established and serving it, and a controller-runtime manager that
        starts before fails with "no matches for kind"."""
        code, body = self.get(f"/apis/{group}/{version}")
        return code == 200 and any(r.get("name") == plural for r in body.get("resources") or [])

    def watch(self, path, on_event):
        """Start a daemon thread that lists path, then watches it from that list's
        resourceVersion, calling on_event(type, object) for every item listed ("ADDED") and every
        event; it ends when the server ends the watch or close() is called on the result."""
        return Watcher(self, path, on_event)


class Watcher(threading.Thread):
    def __init__(self, kube, path, on_event):
        super().__init__(daemon=True)
        self.kube, self.path, self.on_event = kube, path, on_event
        self.conn = None
        self.closed = False
        self.synced = threading.Event()
        self.start()
        self.synced.wait(30)

    def run(self):
        code, body = self.kube.get(self.path)
        for item in body.get("items") or []:
            self.on_event("ADDED", item)
        rv = (body.get("metadata") or {}).get("resourceVersion", "0")
        sep = "&" if "?" in self.path else "?"
        self.conn = http.client.HTTPSConnection(self.kube.host, self.kube.port, context=self.kube.ctx)
        self.conn.request("GET", f"{self.path}{sep}watch=1&resourceVersion={rv}",
                          headers={"User-Agent": self.kube.user_agent})
        r = self.conn.getresponse()
        self.synced.set()
        try:
            while not self.closed:
                line = r.readline()
                if not line:
                    return
                ev = json.loads(line)
                if ev["type"] in ("ADDED", "MODIFIED", "DELETED"):
                    self.on_event(ev["type"], ev["object"])
        except (OSError, ValueError, http.client.HTTPException):
            if not self.closed:
                raise

    def close(self):
        self.closed = True
        if self.conn is not None and self.conn.sock is not None:
            try:
                self.conn.sock.shutdown(2)
            except OSError:
                pass
        self.join(5)
