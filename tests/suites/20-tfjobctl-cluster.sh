#!/usr/bin/env bash
# tfjobctl tf-config and render: outputs, flags and exit codes.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
python3 tests/cli/test_tfjobctl_cluster.py build/src/tfjobctl/tfjobctl
