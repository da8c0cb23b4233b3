#!/usr/bin/env bash
# libFuzzer targets (fuzz/), each for at least 60 s; fails on any crash, leak or timeout.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec fuzz/run.sh
