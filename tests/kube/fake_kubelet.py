#!/usr/bin/env python3
"""A kubelet's log endpoint, alone, for the tests of `tfjobctl logs` against a real kube-apiserver.

kube-apiserver answers GET /api/v1/namespaces/NS/pods/POD/log by asking the kubelet of the pod's
node: HTTPS to the node's address at status.daemonEndpoints.kubeletEndpoint.Port, path
/containerLogs/NS/POD/CONTAINER with the same query (follow, previous, timestamps, tailLines,
sinceSeconds, sinceTime, limitBytes). This serves that path from a JSON file of logs:

  {"NS/POD/CONTAINER": {"current": ["line", ...], "previous": ["line", ...]}}

- timestamps=true: each line begins with an RFC 3339 time (2026-01-01T00:00:0N.000000000Z, N its
  index), as the runtime writes them;
- tailLines=N: the last N lines;
- follow=true: the lines one every 0.2 s, then the stream ends (the container has ended);
- an unknown container: 400 with a Status, as the kubelet says a container is not there.

Every request is appended to --requests (one JSON line: path and query). Usage:
  fake_kubelet.py --port-file F --cert C --key K --logs LOGS.json --requests R.jsonl
"""
import argparse
import json
import os
import ssl
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ARGS = None


def stamp(i):
    return "2026-01-01T00:00:%02d.000000000Z" % (i % 60)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, code, body, content_type):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        with open(ARGS.requests, "a") as f:
            f.write(json.dumps({"path": url.path, "query": q}) + "\n")
        parts = url.path.split("/")
        if len(parts) != 5 or parts[1] != "containerLogs":
            return self.send(404, "404 page not found\n", "text/plain")
        with open(ARGS.logs) as f:
            logs = json.load(f)
        entry = logs.get("/".join(parts[2:5]))
        if entry is None:
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 400, "reason": "BadRequest",
                      "message": 'container "%s" in pod "%s" is not available' % (parts[4], parts[3])}
            return self.send(400, json.dumps(status), "application/json")
        lines = entry.get("previous" if q.get("previous") == "true" else "current", [])
        numbered = list(enumerate(lines))
        if "tailLines" in q:
            n = int(q["tailLines"])
            numbered = numbered[len(numbered) - n:] if n else []
        out = [(stamp(i) + " " if q.get("timestamps") == "true" else "") + line + "\n" for i, line in numbered]
        if q.get("follow") != "true":
            return self.send(200, "".join(out), "text/plain")
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for text in out:
            data = text.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            time.sleep(0.2)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for flag in ("--port-file", "--cert", "--key", "--logs", "--requests"):
        ap.add_argument(flag, required=True)
    ARGS = ap.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, ARGS.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
