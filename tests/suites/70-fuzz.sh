#!/usr/bin/env bash
# libFuzzer targets (fuzz/fuzz_*.c: parse, job, render, plan, selector, watch_splitter,
# kubeconfig), each for at least 60 s; fails on any crash, leak, timeout, or a target that
# cannot be built (fuzz_kubeconfig needs libcurl).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${FUZZ_SECONDS:-60}" -lt 60 ]; then
  echo "70-fuzz: FUZZ_SECONDS=${FUZZ_SECONDS} is below the suite's minimum of 60 s per target" >&2
  exit 1
fi
export FUZZ_REQUIRE_ALL=1
exec fuzz/run.sh
