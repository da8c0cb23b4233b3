#!/usr/bin/env python3
"""The table of bench/failover.sh: per kind and operator, the median and range (min-max) of each
measure over the trials of the JSON-lines FILE(s) (bench/failover.py's output), and the problems
found.  failover_table.py FILE..."""
import json
import statistics
import sys

MEASURES = (("lease_s", "lease to standby"), ("act_s", "first pod of the new job"),
            ("back_s", "API server back"), ("after_back_s", "first pod after the API server is back"),
            ("stood_down_s", "old leader exits after SIGCONT"))


def fmt(vals):
    if not vals:
        return "-"
    return f"{statistics.median(vals):.1f} ({min(vals):.1f}-{max(vals):.1f})"


def main():
    rows = []
    for path in sys.argv[1:]:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    for r in rows:
        if "act_s" in r and "back_s" in r:
            r["after_back_s"] = round(r["act_s"] - r["back_s"], 3)
    keys = []
    for r in rows:
        k = (r["kind"], r["agent"])
        if k not in keys:
            keys.append(k)
    keys.sort(key=lambda k: (["kill9", "stop", "term", "apiserver", "compact"].index(k[0]), k[1]))
    used = [m for m in MEASURES if any(m[0] in r for r in rows)]
    head = ["kind", "operator", "n"] + [f"{label}, s" for _, label in used] + ["problems"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for kind, agent in keys:
        rs = [r for r in rows if (r["kind"], r["agent"]) == (kind, agent)]
        cells = [kind, agent, str(len(rs))]
        cells += [fmt([r[m] for r in rs if m in r]) for m, _ in used]
        probs = sum(len(r["problems"]) for r in rs)
        cells.append(str(probs) if probs else "none")
        print("| " + " | ".join(cells) + " |")
    for r in rows:
        for p in r["problems"]:
            print(f"problem: {r['kind']} {r['agent']}: {p}")
        extra = {k: r[k] for k in ("act_by", "leader_after", "relists", "exited", "pods") if k in r}
        if extra:
            print(f"trial: {r['kind']} {r['agent']}: {extra}")


if __name__ == "__main__":
    main()
