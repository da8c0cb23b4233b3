#!/usr/bin/env bash
# tfjobctl tf-config and render: outputs, flags and exit codes.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
python3 tests/cli/test_tfjobctl_tf_config.py build/src/tfjobctl/tfjobctl
# Every public function of include/tfjob/graph.h is documented in docs/cluster.md.
missing=0
for fn in $(grep -o 'TFJOB_EXTERN [^(]*(' include/tfjob/graph.h | grep -o 'tfjob_[a-z0-9_]*' ); do
  if ! grep -q "\`$fn(" docs/cluster.md; then echo "not in docs/cluster.md: $fn"; missing=1; fi
done
[ "$missing" -eq 0 ] && echo "docs/cluster.md documents every function of cluster.h"
