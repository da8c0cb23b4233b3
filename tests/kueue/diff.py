#!/usr/bin/env python3
"""tests/kueue/diff.py [--compat] [--allow DOC] A B: compares two directories of Kueue scenario
results (tests/kueue/scenarios.py), A being training-operator v1.9.4's, scenario by scenario: the
checks (what was checked and whether it held), the error and the transcript, as unified diffs of
their JSON. Prints one line per scenario and the diffs; exit status 1 when a scenario differs
where it may not, or is missing on either side.

A scenario may differ when B's result lists entries of DOC (--allow; docs/semantics-diff.md) that
explain it, each written there as a bold `**NAME —` heading: its "compat_known" list with
--compat (B is tfjob-operator --compat training-operator-1.9), its "documented" list without
(B is tfjob-operator in its documented mode). The transcripts hold no times, uids, messages or
counts, and every LocalQueue is held until the operator has seen its job, so one normalisation
is left (docs/semantics-diff.md, "Live head-to-head"):
  K3  v1.9's event recorder lets 25 events per job through, then about one per 5 minutes: when
      A/operator.log shows v1.9 recording more than 25 events for a TFJob, B's events for that
      job with reasons A's events lack are dropped."""
import difflib
import json
import os
import re
import sys


def names(*dirs):
    """The scenarios with a result (NAME.json) in any of dirs."""
    out = set()
    for d in dirs:
        out.update(f[:-5] for f in os.listdir(d) if f.endswith(".json"))
    return sorted(out)


def load(d, name):
    p = os.path.join(d, name + ".json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


SPAM_BURST = 25


def recorded_events(a_dir, ns):
    """{TFJob name: how many events v1.9's log (A/operator.log) shows it recording} in ns."""
    counts = {}
    p = os.path.join(a_dir, "operator.log")
    if not os.path.exists(p):
        return counts
    with open(p, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4 or parts[1] != "DEBUG" or parts[2] != "events":
                continue
            try:
                o = json.loads(parts[-1]).get("object") or {}
            except ValueError:
                continue
            if o.get("kind") == "TFJob" and o.get("namespace") == ns:
                counts[o.get("name")] = counts.get(o.get("name"), 0) + 1
    return counts


def spam_filtered(a_dir, ra, rb):
    """K3 on B's transcript (in place); whether it dropped anything."""
    ta, tb = ra.get("transcript") or {}, rb.get("transcript") or {}
    if not ta or not tb:
        return False
    counts = recorded_events(a_dir, "kueue-" + ra["scenario"])
    a_events = {tuple(e) for e in ta.get("events") or []}
    keep = []
    for e in tb.get("events") or []:
        kind, name, component = e[0], e[1], e[4]
        if kind == "TFJob" and component == "tfjob-controller" and counts.get(name, 0) > SPAM_BURST \
                and tuple(e) not in a_events:
            continue
        keep.append(e)
    dropped = len(keep) != len(tb.get("events") or [])
    tb["events"] = keep
    return dropped


def compared(r):
    return {"error": r.get("error"), "checks": r.get("checks"), "transcript": r.get("transcript")}


def main(argv):
    compat = "--compat" in argv
    argv = [x for x in argv if x != "--compat"]
    allow = None
    if "--allow" in argv:
        i = argv.index("--allow")
        with open(argv[i + 1]) as f:
            allow = f.read()
        argv = argv[:i] + argv[i + 2:]
    if len(argv) != 3:
        print("usage: diff.py [--compat] [--allow DOC] A B", file=sys.stderr)
        return 2
    a, b = argv[1], argv[2]
    bad = 0
    for n in names(a, b):
        ra, rb = load(a, n), load(b, n)
        if ra is None or rb is None:
            print(f"MISSING {n}: no result in {a if ra is None else b}")
            bad += 1
            continue
        k3 = spam_filtered(a, ra, rb)
        note = " (normalised: K3)" if k3 else ""
        la = json.dumps(compared(ra), indent=1, sort_keys=True).splitlines()
        lb = json.dumps(compared(rb), indent=1, sort_keys=True).splitlines()
        if la == lb:
            print(f"same    {n}{note}")
            continue
        entries = rb.get("compat_known" if compat else "documented") or []
        missing = [e for e in entries if allow is None or not re.search(r"\*\*" + re.escape(e) + r" —", allow)]
        ok = bool(entries) and not missing
        print(f"{'allowed' if ok else 'DIFFERS'} {n}{note}" + (f" (explained by: {', '.join(entries)})" if ok else "") +
              (f" (entries not in the document: {', '.join(missing)})" if entries and missing else ""))
        sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(la, lb, a, b, n=3, lineterm=""))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
