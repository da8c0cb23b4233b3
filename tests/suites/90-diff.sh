#!/usr/bin/env bash
# Differential test against training-operator v1.9.4 itself (from the Go module proxy): install
# libtfjob into a private prefix (as 85-go.sh does), then run tests/diff with a fixed seed and a
# bounded count. Fails on any disagreement that docs/semantics-diff.md does not explain. The
# admission webhook too: v1.9.4's controller-runtime handler and tfjob-operator's answer the same
# AdmissionReviews alike (tests/diff/webhook_test.go).
#   DIFF_SEED (default 1), DIFF_COUNT (default 5000), DIFF_STRICT (default 1: known-bug classes fail too; 0 lists them only).
# The harness must also *see* differences: in the documented mode it has to fail (self-check).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
prefix="$root/.cache/diff-prefix"
build=build-diff
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --prefix="$prefix" --libdir=lib -Dtests=false -Dbench=false >/dev/null
fi
ninja -C "$build" >/dev/null
meson install -C "$build" --quiet >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TFJOBCTL="$prefix/bin/tfjobctl"
# TestWebhookResponses: tfjob-operator's admission webhook against v1.9.4's handler.
export TFJOB_OPERATOR="$prefix/bin/tfjob-operator"
export CGO_ENABLED=1
export DIFF_SEED="${DIFF_SEED:-1}" DIFF_COUNT="${DIFF_COUNT:-5000}"
report="$root/$build/diff-report.txt"
rm -f "$report"
cd tests/diff
go vet ./...
status=0
# Validation (with v1.9's CRD schema), defaults, TF_CONFIG, limits and cleanup, the YAML loader.
DIFF_STRICT="${DIFF_STRICT:-1}" DIFF_REPORT="$report" go test -count=1 -v . 2>&1 | grep -v '^\s*>' | tail -n 200 || status=1
# The condition state machine links the internal archive (tfjob__cond_set is not exported).
CGO_LDFLAGS="$root/$build/lib/libtfjob_internal.a" go test -count=1 -v ./conditions 2>&1 | tail -n 20 || status=1
# Self-check: with libtfjob in its documented mode the harness must report disagreements.
if DIFF_COMPAT=documented DIFF_COUNT=300 DIFF_REPORT=/dev/null go test -count=1 -run 'TestDifferential' . >/dev/null 2>&1; then
  echo "90-diff: self-check failed: the documented mode shows no difference from v1.9" >&2
  status=1
fi
if DIFF_COMPAT=documented DIFF_COUNT=300 CGO_LDFLAGS="$root/$build/lib/libtfjob_internal.a" \
   go test -count=1 ./conditions >/dev/null 2>&1; then
  echo "90-diff: self-check failed: the documented condition rules show no difference from v1.9" >&2
  status=1
fi
echo "90-diff: report in $report"
exit $status
