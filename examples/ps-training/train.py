#!/usr/bin/env python3
"""Parameter-server training of a linear model, in plain Python (standard library only).

Reads TF_CONFIG as a TFJob replica does. Parameter servers ("ps") each hold one shard of the
weights and serve it over TCP on their TF_CONFIG address (one JSON object per line:
{"op": "pull"}, {"op": "push", "grad": [...]}, {"op": "ready", "wait_for": N} (answered once N
workers are ready), {"op": "done"}, {"op": "count"}, {"op": "stop"}).
Workers connect to every PS (retrying until it is up), wait until every worker is connected, pull the weights, compute the gradient of
the mean squared error on a mini-batch of synthetic data (seeded), and push it; each logs
"step N loss L". The coordinator (the chief if the job has one, else worker 0) waits until every
worker is done, writes the checkpoint and the final loss, tells the PSs to stop, and every process
exits 0.

Environment: TF_CONFIG (required for a distributed job), TFJOB_RUN_DIR (checkpoint directory;
default: the current directory), STEPS (default 60), LR (default 0.05).
"""
import json
import os
import random
import socket
import socketserver
import sys
import threading
import time

DIM = 16
SAMPLES = 512
BATCH = 64
SEED = 42


def log(*args):
    print(*args, flush=True)


def shard_of(i, num_ps):
    return i % num_ps


def shard_indices(shard, num_ps):
    return [i for i in range(DIM) if shard_of(i, num_ps) == shard]


# ---- parameter server ----

class PS:
    def __init__(self, shard, num_ps, lr):
        self.indices = shard_indices(shard, num_ps)
        self.w = [0.0] * len(self.indices)
        self.lr = lr
        self.lock = threading.Lock()
        self.all_ready = threading.Condition(self.lock)
        self.updates = 0
        self.ready = 0
        self.done = 0


def serve_ps(addr, shard, num_ps, lr):
    state = PS(shard, num_ps, lr)
    stop = threading.Event()

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            for line in self.rfile:
                req = json.loads(line)
                op = req.get("op")
                with state.lock:
                    if op == "pull":
                        resp = {"w": state.w}
                    elif op == "push":
                        state.w = [w - state.lr * g for w, g in zip(state.w, req["grad"])]
                        state.updates += 1
                        resp = {"ok": True}
                    elif op == "ready":
                        state.ready += 1
                        state.all_ready.notify_all()
                        # The barrier: every worker is answered at once, so they start together.
                        state.all_ready.wait_for(lambda: state.ready >= req.get("wait_for", 0))
                        resp = {"ready": state.ready}
                    elif op == "done":
                        state.done += 1
                        resp = {"done": state.done}
                    elif op == "count":
                        resp = {"ready": state.ready, "done": state.done, "updates": state.updates}
                    elif op == "stop":
                        resp = {"ok": True, "updates": state.updates}
                    else:
                        resp = {"error": "unknown op %r" % op}
                self.wfile.write((json.dumps(resp) + "\n").encode())
                self.wfile.flush()
                if op == "stop":
                    stop.set()
                    return

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True

    port = int(addr.rsplit(":", 1)[1])
    with Server(("", port), Handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        log("ps %d: serving shard %d (%d weights) on %s" % (shard, shard, len(state.w), addr))
        stop.wait()
        log("ps %d: stopped after %d updates" % (shard, state.updates))
    # Leaving the block closes the socket; the serving thread is a daemon: the process exits now.


# ---- worker ----

class Conn:
    def __init__(self, addr, timeout=60.0):
        host, port = addr.rsplit(":", 1)
        deadline = time.time() + timeout
        while True:
            try:
                self.sock = socket.create_connection((host, int(port)), timeout=30)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        self.f = self.sock.makefile("rwb")

    def call(self, **req):
        self.f.write((json.dumps(req) + "\n").encode())
        self.f.flush()
        line = self.f.readline()
        if not line:
            raise ConnectionError("parameter server closed the connection")
        return json.loads(line)


def make_data(index):
    truth = random.Random(SEED)
    w_true = [truth.uniform(-1, 1) for _ in range(DIM)]
    rng = random.Random(SEED + 1 + index)
    xs = [[rng.gauss(0, 1) for _ in range(DIM)] for _ in range(SAMPLES)]
    ys = [sum(a * b for a, b in zip(x, w_true)) + rng.gauss(0, 0.01) for x in xs]
    return xs, ys


def loss_and_grad(w, xs, ys):
    grad = [0.0] * DIM
    loss = 0.0
    for x, y in zip(xs, ys):
        err = sum(a * b for a, b in zip(x, w)) - y
        loss += err * err
        for i in range(DIM):
            grad[i] += 2 * err * x[i]
    n = len(xs)
    return loss / n, [g / n for g in grad]


def pull(conns, num_ps):
    w = [0.0] * DIM
    for shard, c in enumerate(conns):
        for i, v in zip(shard_indices(shard, num_ps), c.call(op="pull")["w"]):
            w[i] = v
    return w


def run_worker(cluster, task_type, index, steps, coordinator):
    ps_addrs = cluster.get("ps", [])
    if not ps_addrs:
        sys.exit("this example needs at least one parameter server")
    num_ps = len(ps_addrs)
    conns = [Conn(a) for a in ps_addrs]
    xs, ys = make_data(index)
    rng = random.Random(SEED + 100 + index)
    name = "%s %d" % (task_type, index)
    workers = len(cluster.get("worker", [])) + len(cluster.get("chief", [])) + len(cluster.get("master", []))
    # Start together, so that every worker's log shows the whole loss curve.
    conns[0].call(op="ready", wait_for=workers)
    for step in range(1, steps + 1):
        w = pull(conns, num_ps)
        batch = rng.sample(range(SAMPLES), BATCH)
        loss, grad = loss_and_grad(w, [xs[i] for i in batch], [ys[i] for i in batch])
        for shard, c in enumerate(conns):
            c.call(op="push", grad=[grad[i] for i in shard_indices(shard, num_ps)])
        log("%s: step %d loss %.6f" % (name, step, loss))
    conns[0].call(op="done")
    if not coordinator:
        log("%s: done" % name)
        return
    while conns[0].call(op="count")["done"] < workers:
        time.sleep(0.05)
    w = pull(conns, num_ps)
    final, _ = loss_and_grad(w, xs, ys)
    out_dir = os.environ.get("TFJOB_RUN_DIR", ".")
    path = os.path.join(out_dir, "checkpoint.json")
    with open(path, "w") as f:
        json.dump({"weights": w, "loss": final, "steps": steps, "workers": workers}, f)
    log("%s: checkpoint written to %s" % (name, path))
    log("%s: final loss %.6f" % (name, final))
    for c in conns:
        c.call(op="stop")
    time.sleep(0.5)  # let the other replicas finish exiting before the job is marked Succeeded
    log("%s: done" % name)


def main():
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    cluster = tf_config.get("cluster", {})
    task = tf_config.get("task", {})
    task_type, index = task.get("type", "worker"), int(task.get("index", 0))
    steps = int(os.environ.get("STEPS", "60"))
    lr = float(os.environ.get("LR", "0.05"))
    log("%s %d: cluster %s" % (task_type, index, json.dumps(cluster, sort_keys=True)))
    if task_type == "ps":
        serve_ps(cluster["ps"][index], index, len(cluster["ps"]), lr)
    elif task_type in ("worker", "chief", "master"):
        has_chief = bool(cluster.get("chief") or cluster.get("master"))
        coordinator = task_type in ("chief", "master") or (not has_chief and index == 0)
        run_worker(cluster, task_type, index, steps, coordinator)
    else:
        log("%s %d: nothing to do for this replica type" % (task_type, index))


if __name__ == "__main__":
    main()
