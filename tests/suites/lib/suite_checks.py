"""check() and finish() for the Python bodies of the suites: a failed check prints a FAIL line and
is counted; finish() prints the verdict and exits 1 if any check failed."""
import sys

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, flush=True)
    return cond


def finish(suite):
    if failures:
        print(f"{suite}: {failures} failure(s)")
        sys.exit(1)
    print(f"{suite}: ok")
