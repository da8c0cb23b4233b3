#!/usr/bin/env python3
"""tests/h2h/diff.py [--compat] [--allow DOC] A B: compares two directories of head-to-head
transcripts (tests/h2h/scenarios.py), A being training-operator v1.9.2's, scenario by scenario,
as unified diffs of their JSON. With --compat, two known differences of how the two operators
talk to the API server are normalised first, and every scenario where one was is named (see
docs/semantics-diff.md, "Live head-to-head"):
  H1  v1.9 reads (GET) a pod or service before each delete, and again while it terminates: its
      `get pods` / `get services` are dropped when B made none;
  H2  v1.9's event recorder aggregates a repeated event (same object, type, reason, message)
      into one Event whose count it raises (PATCH); tfjob-operator creates one Event per
      occurrence: on both sides, events of one key are summed into one, and `create events` +
      `patch events` become `write events`.
With --allow,
a scenario whose "documented" list (in its file under tests/h2h/scenarios/) names entries of
docs/semantics-diff.md may differ, and each named entry must exist in DOC; without it, every
scenario must be identical. Prints one line per scenario and the diffs; exit status 1 when a
scenario differs where it may not, or is missing on either side."""
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


def sum_events(t):
    """H2 on one transcript: events of one key summed into one; event writes counted together."""
    summed = {}
    for e in t["events"]:
        k = json.dumps({x: v for x, v in e.items() if x != "count"}, sort_keys=True)
        summed[k] = summed.get(k, 0) + e["count"]
    t["events"] = sorted((dict(json.loads(k), count=n) for k, n in summed.items()),
                         key=lambda e: json.dumps(e, sort_keys=True))
    writes = t["requests"].pop("create events", 0) + t["requests"].pop("patch events", 0)
    if writes:
        t["requests"]["write events"] = writes


def normalise(a, b):
    """Apply H1 and H2 (above) to transcripts a (v1.9.2) and b; return the names of those that
    changed anything."""
    applied = []
    for r in ("get pods", "get services"):
        if r in a["requests"] and r not in b["requests"]:
            del a["requests"][r]
            applied.append("H1")
    before = json.dumps([a["events"], b["events"], a["requests"], b["requests"]], sort_keys=True)
    sum_events(a)
    sum_events(b)
    raw_events_differ = json.loads(before)[0] != json.loads(before)[1] or \
        {k: v for k, v in json.loads(before)[2].items() if "events" in k} != \
        {k: v for k, v in json.loads(before)[3].items() if "events" in k}
    if raw_events_differ:
        applied.append("H2")
    return sorted(set(applied))


def main(argv):
    compat = "--compat" in argv
    argv = [x for x in argv if x != "--compat"]
    allow = None
    if "--allow" in argv:
        i = argv.index("--allow")
        with open(argv[i + 1]) as f:
            allow = f.read()
        argv = argv[:i] + argv[i + 2:]
    a, b = argv[1], argv[2]
    names = sorted(f[:-5] for f in os.listdir(os.path.join(HERE, "scenarios")) if f.endswith(".json"))
    bad = 0
    for n in names:
        ta, tb = load(a, n), load(b, n)
        if ta is None or tb is None:
            print(f"MISSING {n}: {'no transcript in ' + (a if ta is None else b)}")
            bad += 1
            continue
        applied = []
        if compat:
            raw_same = ta == tb
            applied = [] if raw_same else normalise(ta, tb)
        la = json.dumps(ta, indent=1, sort_keys=True).splitlines()
        lb = json.dumps(tb, indent=1, sort_keys=True).splitlines()
        if la == lb:
            print(f"same    {n}" + (f" (normalised: {', '.join(applied)})" if applied else ""))
            continue
        with open(os.path.join(HERE, "scenarios", n + ".json")) as f:
            documented = json.load(f).get("documented") or []
        ok = allow is not None and documented and all(
            re.search(r"\b" + re.escape(e) + r"\b", allow) for e in documented)
        print(f"{'allowed' if ok else 'DIFFERS'} {n}" + (f" (documented: {', '.join(documented)})" if ok else ""))
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(la, lb, a, b, n=3, lineterm=""))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
