#!/usr/bin/env bash
# tfjobctl contract tests (tests/cli/test_tfjobctl.sh) against a fresh build, and its shell
# completion scripts (tests/cli/test_tfjobctl_completion.sh) and man pages (tests/cli/test_man.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
bash tests/cli/test_tfjobctl.sh build/src/tfjobctl/tfjobctl
bash tests/cli/test_tfjobctl_kubectl.sh build/src/tfjobctl/tfjobctl
bash tests/cli/test_tfjobctl_completion.sh build/src/tfjobctl/tfjobctl
bash tests/cli/test_man.sh build
