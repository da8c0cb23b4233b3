#!/usr/bin/env bash
# The layers of lib/ (docs/architecture.md) from the #include lines and the calls: no folder includes a header
# of a layer above or beside it or calls its functions, no include cycle between folders, public headers, programs and
# bindings include only public headers (tests/layers/check_layers.py). Then a self-check: the same
# script must refuse a copy of the tree with one planted upward include. Last, the length of
# functions (at most 80 lines), with a self-check of its own.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 tests/layers/check_layers.py .
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/tree"
cp -r lib include src "$TMP/tree/"
mkdir -p "$TMP/tree/bindings"
printf '#include "plan/planner.h"\n' >>"$TMP/tree/lib/graph/graph.c"
grep -q '"plan/planner.h"' "$TMP/tree/lib/graph/graph.c" || { echo "FAIL: self-check could not plant an include" >&2; exit 1; }
if python3 tests/layers/check_layers.py "$TMP/tree" >"$TMP/out"; then
  echo "FAIL: an upward include (graph -> plan) was not reported" >&2; exit 1
fi
grep -q 'lib/graph/ must not include lib/plan/' "$TMP/out" || { cat "$TMP/out" >&2; exit 1; }
echo "self-check: the planted upward include was reported"
# The call check: a helper of lib/plan/ called from lib/graph/ (an upward call with no include).
rm -rf "$TMP/tree" && mkdir -p "$TMP/tree/bindings" && cp -r lib include src "$TMP/tree/"
printf 'void tfjob__planted_call(void);\nvoid tfjob__planted_call(void) { tfjob_plan_free(0); }\n' >>"$TMP/tree/lib/graph/graph.c"
if python3 tests/layers/check_layers.py "$TMP/tree" >"$TMP/out"; then
  echo "FAIL: an upward call (graph -> plan) was not reported" >&2; exit 1
fi
grep -q 'lib/graph/graph.c: calls tfjob_plan_free() of lib/plan/' "$TMP/out" || { cat "$TMP/out" >&2; exit 1; }
echo "self-check: the planted upward call was reported"
# No function over 80 lines (tests/layers/check_function_length.py), and its self-check: a
# planted 90-line function must be reported.
python3 tests/layers/check_function_length.py .
rm -rf "$TMP/tree" && mkdir -p "$TMP/tree" && cp -r lib src "$TMP/tree/"
{ printf 'int tfjob__planted_long(void);\nint tfjob__planted_long(void)\n{\n\tint x = 0;\n'
  for _ in $(seq 90); do printf '\tx++;\n'; done
  printf '\treturn x;\n}\n'; } >>"$TMP/tree/lib/graph/graph.c"
if python3 tests/layers/check_function_length.py "$TMP/tree" >"$TMP/out"; then
  echo "FAIL: a 94-line function was not reported" >&2; exit 1
fi
grep -q 'tfjob__planted_long() is 94 lines' "$TMP/out" || { cat "$TMP/out" >&2; exit 1; }
echo "self-check: the planted long function was reported"
