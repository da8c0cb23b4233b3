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
