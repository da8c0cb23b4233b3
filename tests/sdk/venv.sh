#!/usr/bin/env bash
# tests/sdk/venv.sh: prints the path of a Python with the Kubeflow Training SDK (kubeflow-training
# and the versions tests/sdk/requirements.txt pins), making it first if needed: a venv in
# $TFJOB_SDK_CACHE (~/.cache/libtfjob/sdk) installed with `pip --no-index` from the wheel cache
# there, which is filled from PyPI only when a pinned wheel is missing (a fresh machine).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REQ="$HERE/requirements.txt"
CACHE="${TFJOB_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libtfjob/sdk}"
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || { echo "sdk: error: no $PY" >&2; exit 1; }
# One venv per requirements file and Python (its version and where it lives).
key="$({ cat "$REQ"; "$PY" -c 'import sys; print(sys.version, sys.base_prefix)'; } | sha256sum | cut -c1-12)"
venv="$CACHE/venv-$key"
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$CACHE/wheels"
  exec 9>"$CACHE/.lock"
  flock 9
  if [ ! -x "$venv/bin/python" ]; then
    pip=("$PY" -m pip --disable-pip-version-check -q)
    if ! "${pip[@]}" download --no-deps --only-binary=:all: -d "$CACHE/wheels" --no-index \
         --find-links "$CACHE/wheels" -r "$REQ" >/dev/null 2>&1; then
      echo "sdk: downloading the pinned wheels into $CACHE/wheels (first time only)" >&2
      "${pip[@]}" download --no-deps --only-binary=:all: -d "$CACHE/wheels" -r "$REQ" >&2
    fi
    rm -rf "$venv.tmp"
    "$PY" -m venv "$venv.tmp" >&2 ||
      { echo "sdk: error: '$PY -m venv' failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
    "$venv.tmp/bin/python" -m pip --disable-pip-version-check -q install --no-index \
      --find-links "$CACHE/wheels" --no-deps -r "$REQ" >&2
    "$venv.tmp/bin/python" -m pip --disable-pip-version-check -q check >&2
    mv "$venv.tmp" "$venv"
  fi
  exec 9>&-
fi
echo "$venv/bin/python"
