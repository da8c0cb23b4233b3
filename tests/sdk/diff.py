#!/usr/bin/env python3
"""tests/sdk/diff.py [--compat] [--allow DOC] [--only NAME,...] A.json B.json: compares two Kubeflow
Training SDK sessions (tests/sdk/session.py), A being training-operator v1.9.4's and B
tfjob-operator's (--compat: in `--compat training-operator-1.9`; without: in its documented mode).

The sessions are compared call by call (the SDK call, then what it returned or raised, already
normalised by session.py: no uids, resourceVersions or times). Every value that differs is named
by its path (scenario / call number and name / keys...), and must match an entry of EXPECTED
or EXPECTED_UNTIL_FIXED below, for this mode, or the comparison fails; an entry may also look at
A's operator log (A.operator.log beside A.json, which tests/sdk/record.sh writes). Each entry has
an id (S1, U1, ...) that docs/semantics-diff.md ("Kubeflow Training SDK") must name (--allow
DOC: an entry DOC does not name fails too) and a reason. The entries of EXPECTED_UNTIL_FIXED are
expected only until a change in progress is merged (`until` says which); one that matched
nothing in a whole comparison is reported, so that it can be dropped.

Prints one line per scenario (same / allowed, with the entries used / DIFFERS), then the
unexplained differences; exit status 1 when there is one, or a scenario is missing or failed on
either side."""
import fnmatch
import json
import os
import re
import sys

COMPAT, DOCUMENTED = "compat", "documented"
MISSING = object()  # a key one side does not have
BOTH = (COMPAT, DOCUMENTED)


class Expected:
    def __init__(self, ident, modes, scenario, call, path, reason, until=None, values=None, when=None):
        """A difference allowed in modes, in scenarios matching scenario (fnmatch), at calls whose
        name matches call (regex, searched) and values whose path below the call's result matches
        path (regex, searched); values(a, b), when given, must hold of the two values too, and
        when(log, scenario), when given, of A's operator log (its lines)."""
        self.ident, self.modes, self.scenario, self.reason, self.until = ident, modes, scenario, reason, until
        self.call, self.path, self.values, self.when = re.compile(call), re.compile(path), values, when

    def allows(self, mode, scenario, call, path, a, b, log):
        return (mode in self.modes and fnmatch.fnmatchcase(scenario, self.scenario) and self.call.search(call)
                and self.path.search(path) and (self.values is None or self.values(a, b))
                and (self.when is None or self.when(log, scenario)))


def not_chronological(a, b):
    """B's events are listed out of time order, A's in order."""
    return a is True and b is False


def only_in_a(a, b):
    """A has the value, B has none."""
    return a is not MISSING and b is MISSING


def podgroup_cache_race(log, scenario):
    """v1.9.4's log shows it read the PodGroup it had just created from its cache before the
    cache had it, in the scenario's namespace (sdk-NAME)."""
    needle = f"Sync PodGroup sdk-{scenario}/"
    return any(needle in line and "unable to get PodGroup after success creation" in line for line in log)


def fewer(a, b):
    """B holds some of A's items (pods or names), not all: a list, or the list at "pods"."""
    return isinstance(a, list) and isinstance(b, list) and len(b) < len(a) and all(x in a for x in b)


# The message of a warning Event of documented mode: "FIELD: text" of tfjob_job_warnings().
WARNING_MESSAGE = re.compile(r"^spec\.\S+: ")


def more_deletions(a, b):
    """B's event messages are A's and more, the extra ones all deletions (Deleted pod / service)
    or documented mode's warnings (S4)."""
    return (isinstance(a, list) and isinstance(b, list) and set(a) < set(b)
            and all(m.startswith(("Deleted pod: ", "Deleted service: ")) or WARNING_MESSAGE.match(m)
                    for m in set(b) - set(a)))


def more_warnings(a, b):
    """B's event messages are A's and more, the extra ones all warnings ("FIELD: text")."""
    return (isinstance(a, list) and isinstance(b, list) and set(a) < set(b)
            and all(WARNING_MESSAGE.match(m) for m in set(b) - set(a)))


def not_counted(a, b):
    """A counts pods (a number), B has no count there."""
    return isinstance(a, int) and b is MISSING


def no_second_failed_event(a, b):
    """A's event messages are B's and one TFJobFailed "TFJob NS/NAME has failed because N TYPE
    replica(s) failed." more."""
    extra = set(a) - set(b) if isinstance(a, list) and isinstance(b, list) else None
    return (extra is not None and set(b) < set(a) and len(extra) == 1
            and re.fullmatch(r"TFJob \S+ has failed because \d+ \w+ replica\(s\) failed\.", extra.pop()) is not None)


# Differences that stay (docs/semantics-diff.md, "Kubeflow Training SDK", S1...). A path is
# written as the keys below the call's result joined by "/", list indexes as numbers ("" is the
# whole result).
EXPECTED = [
    Expected("S1", (DOCUMENTED,), "builders", r"^settled after the chief's success$", r"^pods$",
             "documented mode's cleanPodPolicy default is Running (v1.9's None): the job the SDK's builder "
             "makes has no cleanPodPolicy, so when the chief succeeds documented mode deletes the PS and "
             "the workers that still run; v1.9 keeps them", values=fewer),
    Expected("S1", (DOCUMENTED,), "builders", r"^get_job_pod_names\(from-image\)$", r"^$",
             "as above: the deleted pods are no longer the job's", values=fewer),
    Expected("S1", (DOCUMENTED,), "builders", r"^get_job_logs\(from-image, verbose=True\)$",
             r"^events/tfjob/from-image/messages$", "as above: each deletion has its Event",
             values=more_deletions),
    Expected("S2", (DOCUMENTED,), "restart-fail", r"^get_job_logs\(restart-fail, verbose=True\)$",
             r"^events/tfjob/restart-fail/messages$",
             "a permanent exit code (ExitCode, exit 1) fails the job with the Warning TFJobFailed "
             "'job \"NAME\" is failing because \"Worker\" replica(s) failed.'; in the same reconcile v1.9's "
             "status update records the Normal TFJobFailed 'TFJob NS/NAME has failed because 1 Worker "
             "replica(s) failed.' for the job it has just failed; documented mode does not fail a "
             "finished job again (the conditions are the same)", values=no_second_failed_event),
    Expected("S4", (DOCUMENTED,), "*", r"verbose=True\)$", r"^events/tfjob/.+/messages$",
             "documented mode records a Warning Event per warning of tfjob_job_warnings() when it first "
             "sees a job that validates (L5 above): the SDK's jobs set restartPolicy Never explicitly, "
             "which draws the RestartPolicyNever warning; v1.9 records none", values=more_warnings),
    Expected("S5", (DOCUMENTED,), "builders", r"^settled after the chief's success$|^get_job\(from-image\)$",
             r"(^|/)status/replicaStatuses/\w+/succeeded$",
             "documented mode counts a finished job's replicas as the Kubeflow docs page defines them "
             "(L4 above): the PS and workers still running when the chief succeeds, deleted by the "
             "cleanup (S1), did not succeed; v1.9 moves them into succeeded", values=not_counted),
    Expected("S3", BOTH, "gang", r"", r"(^|/)status/lastReconcileTime$",
             "v1.9.4 may read the PodGroup it has just created from its informer cache before the cache "
             "has it ('unable to get PodGroup after success creation' in its log); it then sets "
             "status.lastReconcileTime to be called again, and the field stays; tfjob-operator creates "
             "the PodGroup and the pods in one reconcile and never sets it (H5 above)",
             values=only_in_a, when=podgroup_cache_race),
]

# Differences expected only until a change in progress is merged: drop the entry then. (U1, event
# names that did not sort by time, and U2, the missing runPolicy.suspend default, are fixed.)
EXPECTED_UNTIL_FIXED = []


def leaves(a, b, path=""):
    """(path, a value, b value) for every place where a and b differ; a list of another length,
    or a value of another type, is one difference at its path."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from leaves(a.get(k, MISSING), b.get(k, MISSING), f"{path}/{k}" if path else str(k))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from leaves(x, y, f"{path}/{i}" if path else str(i))
    elif a != b:
        yield path, a, b


def show(v):
    return "(absent)" if v is MISSING else json.dumps(v, sort_keys=True)


def compare(mode, name, sa, sb, entries, log):
    """(entries used, unexplained difference lines) of scenario name."""
    used, bad = set(), []
    for side, s in (("A", sa), ("B", sb)):
        if s.get("error"):
            bad.append(f"  session {side} did not run to its end: {s['error']}")
    ca, cb = sa.get("calls", []), sb.get("calls", [])
    for i in range(max(len(ca), len(cb))):
        x = ca[i] if i < len(ca) else None
        y = cb[i] if i < len(cb) else None
        if x is None or y is None or x["call"] != y["call"]:
            bad.append(f"  call {i}: A {x and x['call']!r}, B {y and y['call']!r}: the sessions went apart")
            break
        for path, va, vb in leaves(x["result"], y["result"]):
            hit = [e for e in entries if e.allows(mode, name, x["call"], path, va, vb, log)]
            if hit:
                used.update(e.ident for e in hit)
            else:
                bad.append(f"  {i} {x['call']}: {path or '(result)'}: A {show(va)}  B {show(vb)}")
    return used, bad


def main(argv):
    mode = COMPAT if "--compat" in argv else DOCUMENTED
    argv = [x for x in argv if x != "--compat"]
    doc = doc_path = None
    if "--allow" in argv:
        i = argv.index("--allow")
        doc_path = argv[i + 1]
        with open(doc_path) as f:
            doc = f.read()
        argv = argv[:i] + argv[i + 2:]
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        only = set(argv[i + 1].split(","))
        argv = argv[:i] + argv[i + 2:]
    if len(argv) != 3:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        a = json.load(f)
    with open(argv[2]) as f:
        b = json.load(f)
    log_path = os.path.splitext(argv[1])[0] + ".operator.log"
    log = []
    if os.path.exists(log_path):
        with open(log_path, errors="replace") as f:
            log = f.readlines()
    entries = EXPECTED + EXPECTED_UNTIL_FIXED
    status = 0
    if doc is not None:
        for e in entries:
            if not re.search(r"\b" + re.escape(e.ident) + r"\b", doc):
                print(f"FAIL: expected difference {e.ident} is not named in {doc_path}")
                status = 1
    used_all = set()
    for n in sorted(set(a) | set(b)):
        if only is not None and n not in only:
            continue
        if n not in a or n not in b:
            print(f"MISSING {n}: no session in {argv[1] if n not in a else argv[2]}")
            status = 1
            continue
        used, bad = compare(mode, n, a[n], b[n], entries, log)
        used_all |= used
        if bad:
            print(f"DIFFERS {n}" + (f" (expected: {', '.join(sorted(used))})" if used else ""))
            sys.stdout.writelines(line + "\n" for line in bad)
            status = 1
        elif used:
            print(f"allowed {n} (expected: {', '.join(sorted(used))})")
        else:
            print(f"same    {n}")
    seen_note = set()
    for e in EXPECTED_UNTIL_FIXED:
        if mode in e.modes and e.ident not in used_all and only is None and e.ident not in seen_note:
            seen_note.add(e.ident)
            print(f"note: {e.ident} (expected until {e.until}) matched nothing in this comparison")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
