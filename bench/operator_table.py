#!/usr/bin/env python3
"""The table of bench/operator.sh from its JSON lines (one measurement of bench/operator.py per
line, as BENCH_JSON=FILE keeps them), one row per shape, qps/burst, threads and operator:
median (min-max) over the runs.

  operator_table.py [--note TEXT] FILE...

Several files make one table (e.g. sets measured one after the other)."""
import argparse
import json
from collections import defaultdict

COLUMNS = [("pods exist s", "pods_exist_s", "{:.1f}"),
           ("stand-in lag s", "standin_lag_s", "{:.1f}"),
           ("stand-in ends workers s", "standin_end_workers_s", "{:.1f}"),
           ("Running after marked s", "running_after_marked_s", "{:.1f}"),
           ("Succeeded after marked s", "succeeded_after_marked_s", "{:.1f}"),
           ("operator CPU s", "operator_cpu_s", "{:.2f}"),
           ("CPU ms/job", "cpu_ms_per_job", "{:.1f}"),
           ("idle RSS MiB", "operator_idle_rss_mib", "{:.1f}"),
           ("idle CPU ms/min", "operator_idle_cpu_ms_per_min", "{:.1f}"),
           ("VmHWM MiB", "operator_vmhwm_mib", "{:.1f}"),
           ("growth KiB/job", "rss_growth_kib_per_job", "{:.0f}"),
           ("apiserver CPU s", "apiserver_cpu_s", "{:.1f}"),
           ("status writes / changes", "status_writes", "{:.0f}")]


def span(rs, key, fmt):
    """The median of key over the runs rs, and (min-max) when they differ."""
    v = sorted(x[key] for x in rs if key in x)
    if not v:
        return "-"
    mid = len(v) // 2
    middle = v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2  # an even count: the mean of the middle two
    med, lo, hi = fmt.format(middle), fmt.format(v[0]), fmt.format(v[-1])
    return med if lo == hi else f"{med} ({lo}-{hi})"


def row_key(r):
    shape = f"1 job x {r['wide']} workers" if r.get("wide") else f"{r['jobs']} jobs"
    if r["operator"] == "standin":
        return (shape, "-", "-", "standin")
    return (shape, f"{r['qps']}/{r['burst']}", str(r["threads"]), r["operator"])


def row(key, rs):
    for x in rs:
        if "operator_cpu_s" in x:
            x["cpu_ms_per_job"] = 1000 * x["operator_cpu_s"] / x["jobs"]
    cells = [span(rs, k, f) for _, k, f in COLUMNS]
    if any("status_changes" in x for x in rs):
        cells[-1] += " / " + span(rs, "status_changes", "{:.0f}")
    med = sorted(rs, key=lambda x: x.get("requests_total", 0))[len(rs) // 2]
    reqs = "-"
    if "requests" in med:
        reqs = f"{med['requests_total']}: " + ", ".join(f"{k} {v}" for k, v in med["requests"].items())
    return "| " + " | ".join(list(key) + [str(len(rs))] + cells + [reqs]) + " |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--note", default="")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    rows = defaultdict(list)
    for name in a.files:
        with open(name) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    rows[row_key(r)].append(r)
    print("| jobs | qps/burst | threads | operator | runs | " + " | ".join(c[0] for c in COLUMNS)
          + " | requests (median run) |")
    print("|---" * (len(COLUMNS) + 6) + "|")
    for key in sorted(rows):
        print(row(key, rows[key]))
    print("\nmedian (min-max) over the runs; times in seconds of wall clock; CPU from /proc/PID/stat; "
          "RSS from /proc/PID/status" + (f"; {a.note}" if a.note else ""))


if __name__ == "__main__":
    main()
