#!/usr/bin/env bash
# Regenerate abi/libtfjob.symbols from the library as built now. Run it after adding a public
# function on purpose, review `git diff abi/libtfjob.symbols`, and commit the list with the
# function (docs/abi.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/abi/common.sh
abi_build
abi_symbols >abi/libtfjob.symbols
echo "abi/libtfjob.symbols: $(wc -l <abi/libtfjob.symbols) symbols"
git --no-pager diff --stat -- abi/libtfjob.symbols 2>/dev/null || true
