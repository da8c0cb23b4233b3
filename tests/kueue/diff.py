#!/usr/bin/env python3
"""tests/kueue/diff.py [--compat] [--allow DOC] A B: compares two directories of Kueue scenario
results (tests/kueue/scenarios.py), A being training-operator v1.9.4's, scenario by scenario: the
checks (what was checked and whether it held), the error and the transcript, as unified diffs of
their JSON. Prints one line per scenario and the diffs; exit status 1 when a scenario differs
where it may not, or is missing on either side.

A scenario may differ when B's result lists entries of DOC (--allow; docs/semantics-diff.md) that
explain it, each written there as a bold `**NAME —` heading: its "compat_known" list with
--compat (B is tfjob-operator --compat training-operator-1.9), its "documented" list without
(B is tfjob-operator in its documented mode). Nothing is normalised: the transcripts hold no
times, uids, messages or counts, and every LocalQueue is held until the operator has seen its
job, so what is left is what the operators did."""
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
        la = json.dumps(compared(ra), indent=1, sort_keys=True).splitlines()
        lb = json.dumps(compared(rb), indent=1, sort_keys=True).splitlines()
        if la == lb:
            print(f"same    {n}")
            continue
        entries = rb.get("compat_known" if compat else "documented") or []
        missing = [e for e in entries if allow is None or not re.search(r"\*\*" + re.escape(e) + r" —", allow)]
        ok = bool(entries) and not missing
        print(f"{'allowed' if ok else 'DIFFERS'} {n}" + (f" (explained by: {', '.join(entries)})" if ok else "") +
              (f" (entries not in the document: {', '.join(missing)})" if entries and missing else ""))
        sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(la, lb, a, b, n=3, lineterm=""))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
