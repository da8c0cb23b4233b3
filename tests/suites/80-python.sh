#!/usr/bin/env bash
# Python bindings: install the package, type-check it (mypy), run its pytest suite (with
# hypothesis) against the freshly built library. The tests against a real kube-apiserver are
# skipped here; tests/suites/86-bindings-kube.sh runs them.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
python3 -m pip install -q --disable-pip-version-check pytest hypothesis mypy 2>&1 | grep -v 'Running pip as' || true
target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
python3 -m pip install -q --disable-pip-version-check --no-deps --target "$target" ./bindings/python 2>&1 | grep -v 'Running pip as' || true
( cd bindings/python && python3 -m mypy --ignore-missing-imports --no-error-summary tfjob )
cd bindings/python/tests
TFJOB_LIBRARY="$OLDPWD/build/lib/libtfjob.so.0" PYTHONPATH="$target" \
  python3 -m pytest -q -p no:warnings -p no:cacheprovider .
# The Ctrl-C test again with SIGINT ignored, as a command started in the background (nohup,
# `cmd &`, some CI runners) inherits it: the test must install its own handler.
( trap '' INT
  TFJOB_LIBRARY="$OLDPWD/build/lib/libtfjob.so.0" PYTHONPATH="$target" \
    python3 -m pytest -q -p no:warnings -p no:cacheprovider test_local.py -k ctrl_c )
# The README's Python snippet, as a reader runs it from a checkout: PYTHONPATH=bindings/python and
# nothing else (the package finds build/lib/ by itself); its run directory goes to a scratch
# directory's ./tfjob-runs.
root=$OLDPWD
snippet=$(python3 - "$root/README.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text.split("## From Python and Go", 1)[1]
print(re.search(r"```python\n(.*?)```", section, re.S).group(1))
PY
)
scratch=$(mktemp -d)
ln -s "$root/examples" "$scratch/examples"
out=$(cd "$scratch" && env -u TFJOB_LIBRARY PYTHONPATH="$root/bindings/python" python3 -c "$snippet")
rm -rf "$scratch"
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -qx "Failed \['worker-1 failed with exit 1'\]" || { echo "FAIL: the README's Python snippet" >&2; exit 1; }
