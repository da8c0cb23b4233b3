#!/usr/bin/env bash
# Regenerate the ABI baseline abi/libtfjob.abi (abidw's XML) from the library as built now.
# Do this at a release, or after a deliberate incompatible change that bumped the SONAME
# (docs/abi.md); compatible additions do not need a new baseline.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/abi/common.sh
abi_build
abidw --no-corpus-path --no-comp-dir-path --drop-undefined-syms --headers-dir include/tfjob \
  "$ABI_BUILD_DIR/lib/libtfjob.so" >abi/libtfjob.abi
echo "abi/libtfjob.abi written ($(abi_soname "$ABI_BUILD_DIR/lib/libtfjob.so"))"
