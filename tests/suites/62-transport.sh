#!/usr/bin/env bash
# The transport layer: the Kubernetes REST backend against the scripted fault server
# (tests/transport/fault_server.py, plain HTTP and HTTPS with generated certificates), plus the
# memory backend and watch-splitter unit tests, and tfjobctl's cluster commands.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
command -v python3 >/dev/null || { echo "62-transport: python3 is required" >&2; exit 1; }
command -v openssl >/dev/null || { echo "62-transport: openssl is required" >&2; exit 1; }
meson test -C build --print-errorlogs --suite transport
meson test -C build --print-errorlogs test_memory test_watch_splitter
if [ -f tests/transport/test_tfjobctl.py ]; then
  TFJOBCTL="$PWD/build/src/tfjobctl/tfjobctl" python3 tests/transport/test_tfjobctl.py
fi
# Every public function of the transport headers is documented in docs/transport.md.
missing=0
for fn in $(grep -ho 'TFJOB_EXTERN [^(]*(' include/tfjob/transport.h include/tfjob/sys/transport.h \
            include/tfjob/memstore.h include/tfjob/kube.h | grep -o 'tfjob_[a-z0-9_]*($' | tr -d '('); do
  if ! grep -q "\`$fn(" docs/transport.md; then echo "not in docs/transport.md: $fn"; missing=1; fi
done
[ "$missing" -eq 0 ] && echo "docs/transport.md documents every function of the transport headers"
