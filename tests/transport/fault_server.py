#!/usr/bin/env python3
"""A scripted HTTP(S) fault server standing in for a kube-apiserver in the transport tests.

Started by the tests on 127.0.0.1 with a free port (written to --port-file). The test scripts it
through a control API:

  POST /_control/rules   a JSON list of rules, appended; each request uses the first rule that
                         matches and still has uses left:
      {"method": "GET", "path": "/api/v1/namespaces/default/pods/x",   exact, or a prefix ending in *
       "query": "watch=true",            optional substring of the query string
       "times": 1,                       uses (default 1; -1: unlimited)
       "status": 200, "headers": {...}, "body": <JSON value or string>,
       "delay_ms": 0,                    wait before answering
       "require_token": "t1",            answer 401 unless "Authorization: Bearer t1"
       "chunks": ["...", ...],           stream the body as these chunks (chunked encoding)
       "chunk_delay_ms": 0,
       "drop": false,                    close the connection after the chunks, without the last chunk
       "hang_ms": 0,                     after the chunks, keep the stream open this long, then end it
       "encoding": "gzip",               compress the body (or the chunks, as one stream) with gzip
                                         or deflate, with a Content-Encoding header
       "content_type": "text/html"}      instead of application/json
  POST /_control/reset   forget rules and the log
  GET  /_control/log     every request seen: [{"method","path","query","auth","body","client_cn"}]

Requests that match no rule get 599 with a Status body naming the request.
"""
import argparse
import json
import os
import ssl
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
RULES = []
LOG = []


def match(rule, method, path, query):
    if rule.get("method", method) != method:
        return False
    want = rule.get("path", "*")
    if want.endswith("*"):
        if not path.startswith(want[:-1]):
            return False
    elif want != path:
        return False
    if rule.get("query") and rule["query"] not in query:
        return False
    return rule.get("times", 1) != 0


def take_rule(method, path, query):
    with LOCK:
        for rule in RULES:
            if match(rule, method, path, query):
                if rule.get("times", 1) > 0:
                    rule["times"] = rule.get("times", 1) - 1
                return dict(rule)
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def body_bytes(self, value):
        if isinstance(value, str):
            return value.encode()
        return json.dumps(value).encode()

    @staticmethod
    def compressor(encoding):
        # gzip: a gzip wrapper; deflate: the zlib format (RFC 1950), as HTTP's "deflate" means.
        return zlib.compressobj(wbits=31 if encoding == "gzip" else 15)

    def send_plain(self, status, body, headers=None, encoding=None, content_type=None):
        data = self.body_bytes(body)
        if encoding:
            c = self.compressor(encoding)
            data = c.compress(data) + c.flush()
        self.send_response(status)
        self.send_header("Content-Type", content_type or "application/json")
        if encoding:
            self.send_header("Content-Encoding", encoding)
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def client_cn(self):
        try:
            cert = self.connection.getpeercert()
        except (AttributeError, ValueError):
            return None
        if not cert:
            return None
        for rdn in cert.get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    return value
        return None

    def handle_control(self, path, body):
        global RULES, LOG
        if path == "/_control/rules":
            with LOCK:
                RULES.extend(json.loads(body or b"[]"))
            return self.send_plain(200, {"ok": True})
        if path == "/_control/reset":
            with LOCK:
                RULES = []
                LOG = []
            return self.send_plain(200, {"ok": True})
        if path == "/_control/log":
            with LOCK:
                return self.send_plain(200, LOG)
        return self.send_plain(404, {"kind": "Status", "message": "no such control"})

    def stream(self, rule):
        self.send_response(rule.get("status", 200))
        self.send_header("Content-Type", rule.get("content_type", "application/json"))
        self.send_header("Transfer-Encoding", "chunked")
        encoding = rule.get("encoding")
        comp = self.compressor(encoding) if encoding else None
        if encoding:
            self.send_header("Content-Encoding", encoding)
        for k, v in rule.get("headers", {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        for chunk in rule.get("chunks", []):
            data = chunk.encode()
            if comp:  # each chunk decodable as it arrives
                data = comp.compress(data) + comp.flush(zlib.Z_SYNC_FLUSH)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            time.sleep(rule.get("chunk_delay_ms", 0) / 1000.0)
        if rule.get("drop"):
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        time.sleep(rule.get("hang_ms", 0) / 1000.0)
        if comp:
            data = comp.flush()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def handle_any(self):
        raw = self.path
        proxied = raw.startswith("http://") or raw.startswith("https://")
        if proxied:  # an absolute URI: we are being used as a proxy
            raw = "/" + raw.split("/", 3)[3] if raw.count("/") >= 3 else "/"
        path, _, query = raw.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if path.startswith("/_control/"):
            return self.handle_control(path, body)
        with LOCK:
            LOG.append({"method": self.command, "path": path, "query": query,
                        "auth": self.headers.get("Authorization"),
                        "content_type": self.headers.get("Content-Type"),
                        "body": body.decode(errors="replace"), "client_cn": self.client_cn(),
                        "proxied": proxied, "host": self.headers.get("Host"),
                        "accept_encoding": self.headers.get("Accept-Encoding")})
        rule = take_rule(self.command, path, query)
        if rule is None:
            return self.send_plain(599, {"kind": "Status", "message": "no rule for %s %s" % (self.command, self.path)})
        time.sleep(rule.get("delay_ms", 0) / 1000.0)
        token = rule.get("require_token")
        if token is not None and self.headers.get("Authorization") != "Bearer " + token:
            return self.send_plain(401, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                         "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
        if "chunks" in rule:
            return self.stream(rule)
        return self.send_plain(rule.get("status", 200), rule.get("body", {}), rule.get("headers"),
                               rule.get("encoding"), rule.get("content_type"))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        err = sys.exc_info()[1]
        if isinstance(err, (BrokenPipeError, ConnectionResetError, ssl.SSLError)):
            return  # the tests drop connections on purpose
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--client-ca")
    args = ap.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        if args.client_ca:
            ctx.load_verify_locations(args.client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
