#!/usr/bin/env bash
# The TFJob schema has one source: scripts/gen-schema.py writes examples/deploy/crd-tfjob.yaml
# and lib/core/schema_table.c from scripts/schema/ and the Kubernetes OpenAPI document of the
# pinned k8s.io/kubernetes module. Both committed files must be exactly what it writes now, and
# carry the same digest of its inputs. Then strict validation of every example: no unknown field.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 scripts/gen-schema.py --check-digest
command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"; }
if command -v go >/dev/null 2>&1; then
  python3 scripts/gen-schema.py --check
  echo "44-schema: the committed CRD and table are what scripts/gen-schema.py generates"
else
  echo "44-schema: no 'go' to fetch k8s.io/kubernetes: regeneration not checked"
fi
BUILD_DIR=build scripts/build.sh >/dev/null
C=build/src/tfjobctl/tfjobctl
fail=0
for f in examples/*.yaml examples/*/tfjob*.yaml examples/failures/*.yaml; do
  [ -f "$f" ] || continue
  out="$("$C" validate "$f" || true)"
  if grep -q 'unknown field' <<<"$out"; then
    echo "FAIL $f has fields the schema does not declare:"; grep 'unknown field' <<<"$out"; fail=1
  fi
done
[ "$fail" -eq 0 ] && echo "44-schema: no example has an unknown field"
exit "$fail"
