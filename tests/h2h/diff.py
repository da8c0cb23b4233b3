#!/usr/bin/env python3
"""tests/h2h/diff.py [--compat] [--allow DOC] [--only NAME,...] A B: compares two directories of head-to-head
transcripts (tests/h2h/scenarios.py), A being training-operator v1.9's (v1.9.4 by default), scenario by scenario,
as unified diffs of their JSON. Prints one line per scenario and the diffs; exit status 1 when a
scenario differs where it may not, or is missing on either side.

These differences in how the two operators talk to the API server are normalised first, and
each scenario names those that changed anything (docs/semantics-diff.md, "Live head-to-head"):
  H1  v1.9 reads (GET) a pod or service before each delete, and again while it terminates: its
      `get pods` / `get services` are dropped when B made none;
  H2  v1.9's recorder aggregates a repeated event into one Event whose count it raises (PATCH);
      tfjob-operator creates an Event per occurrence: events of one key are merged, and
      `create events` + `patch events` become `write events`;
  H3  how often an event repeats, and how many status writes and event writes there are, depends
      on how many reconciles run, which timing decides: events are compared without counts, and
      the numbers of `update tfjobs/status`, `write events` and `delete podgroups` are printed,
      not compared (v1.9 records `JobTerminated` at every reconcile of a finished gang-scheduled
      job and deletes the PodGroup when its GET finds one: a PodGroup that comes back, e.g. from
      a stale cache, is deleted again);
  H4  v1.9 reads and rewrites (GET, PUT) the PodGroup on every reconcile of a gang-scheduled job:
      its `get podgroups` / `update podgroups` are dropped when B made none;
  H5  v1.9 may read the PodGroup it has just created from its informer cache before the cache
      has it ("unable to get PodGroup after success creation" in its log, A/operator.log), and
      then sets status.lastReconcileTime to retry: dropped from A's job states when B never sets
      it and A's log shows that race in the scenario's namespace.
A scenario may still differ when its file lists entries of DOC (--allow) that explain it: under
"compat_known" with --compat (B is tfjob-operator --compat training-operator-1.9), under
"documented" without (B is tfjob-operator in its documented mode)."""
import difflib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(d, name):
    p = os.path.join(d, name + ".json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


def merge_events(t, with_counts):
    """H2 (and H3 when not with_counts) on one transcript."""
    merged = {}
    for e in t["events"]:
        k = json.dumps({x: v for x, v in e.items() if x != "count"}, sort_keys=True)
        merged[k] = merged.get(k, 0) + e["count"]
    t["events"] = sorted((dict(json.loads(k), **({"count": n} if with_counts else {})) for k, n in merged.items()),
                         key=lambda e: json.dumps(e, sort_keys=True))
    writes = t["requests"].pop("create events", 0) + t["requests"].pop("patch events", 0)
    if writes:
        t["requests"]["write events"] = writes


PODGROUP_CACHE_RACE = "unable to get PodGroup after success creation"


def podgroup_cache_race(a_dir, name):
    """Whether v1.9's log in a_dir shows H5 in scenario name's namespace (h2h-NAME)."""
    p = os.path.join(a_dir, "operator.log")
    if not os.path.exists(p):
        return False
    needle = f"Sync PodGroup h2h-{name}/"
    with open(p, errors="replace") as f:
        return any(needle in line and PODGROUP_CACHE_RACE in line for line in f)


def job_states(t):
    return [s["state"]["job"] for s in t["steps"] if (s.get("state") or {}).get("job")]


def drop_reconcile_time(a, b, race):
    """H5: whether lastReconcileTime was taken out of a's job states."""
    if not race or any("lastReconcileTime" in j.get("set", []) for j in job_states(b)):
        return False
    changed = False
    for j in job_states(a):
        if "lastReconcileTime" in j.get("set", []):
            j["set"].remove("lastReconcileTime")
            changed = True
    return changed


def normalise(a, b, race=False):
    """Apply H1-H5 (above) to transcripts a (v1.9) and b (race: v1.9's log shows H5's race
    in this scenario); return (names of those that changed anything, a line with the counts H3
    takes out of the comparison)."""
    applied = set()
    if drop_reconcile_time(a, b, race):
        applied.add("H5")
    for h, rs in (("H1", ("get pods", "get services")), ("H4", ("get podgroups", "update podgroups"))):
        for r in rs:
            if r in a["requests"] and r not in b["requests"]:
                del a["requests"][r]
                applied.add(h)
    for with_counts, h in ((True, "H2"), (False, "H3")):
        before = json.dumps([a["events"], b["events"], a["requests"], b["requests"]], sort_keys=True)
        merge_events(a, with_counts)
        merge_events(b, with_counts)
        after_ab = json.dumps([a["events"], b["events"]], sort_keys=True)
        if h == "H2" and (json.loads(before)[0] != json.loads(before)[1]) and a["events"] == b["events"]:
            applied.add(h)
        if h == "H3" and json.loads(before)[0] != json.loads(before)[1] and json.loads(after_ab)[0] == json.loads(after_ab)[1]:
            applied.add(h)
    counts = []
    for r in ("update tfjobs/status", "write events", "delete podgroups"):
        x, y = a["requests"].pop(r, 0), b["requests"].pop(r, 0)
        counts.append(f"{r} {x}/{y}")
        if x != y:
            applied.add("H3")
    return sorted(applied), "; ".join(counts)


def main(argv):
    compat = "--compat" in argv
    argv = [x for x in argv if x != "--compat"]
    allow = None
    if "--allow" in argv:
        i = argv.index("--allow")
        with open(argv[i + 1]) as f:
            allow = f.read()
        argv = argv[:i] + argv[i + 2:]
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        only = set(argv[i + 1].split(","))
        argv = argv[:i] + argv[i + 2:]
    a, b = argv[1], argv[2]
    names = sorted(f[:-5] for f in os.listdir(os.path.join(HERE, "scenarios")) if f.endswith(".json")
                   if only is None or f[:-5] in only)
    bad = 0
    for n in names:
        ta, tb = load(a, n), load(b, n)
        if ta is None or tb is None:
            print(f"MISSING {n}: {'no transcript in ' + (a if ta is None else b)}")
            bad += 1
            continue
        applied, counts = normalise(ta, tb, podgroup_cache_race(a, n))
        la = json.dumps(ta, indent=1, sort_keys=True).splitlines()
        lb = json.dumps(tb, indent=1, sort_keys=True).splitlines()
        if la == lb:
            print(f"same    {n}" + (f" (normalised: {', '.join(applied)})" if applied else "") +
                  (f" [v1.9/ours: {counts}]" if counts else ""))
            continue
        with open(os.path.join(HERE, "scenarios", n + ".json")) as f:
            documented = json.load(f).get("compat_known" if compat else "documented") or []
        ok = allow is not None and documented and all(
            re.search(r"\b" + re.escape(e) + r"\b", allow) for e in documented)
        print(f"{'allowed' if ok else 'DIFFERS'} {n}" + (f" (explained by: {', '.join(documented)})" if ok else "") +
              (f" (normalised: {', '.join(applied)})" if applied else "") + (f" [v1.9/ours: {counts}]" if counts else ""))
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(la, lb, a, b, n=3, lineterm=""))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
