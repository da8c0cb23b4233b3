# Shared by the ABI scripts: configure and build the library in build-abi (plain debug build,
# no tests), and list its exported symbols. Sourced from the source root.
ABI_BUILD_DIR="${ABI_BUILD_DIR:-build-abi}"

abi_build() {
  if [ ! -f "$ABI_BUILD_DIR/build.ninja" ]; then
    meson setup "$ABI_BUILD_DIR" -Dbuildtype=debug -Dtests=false -Dbench=false >/dev/null
  fi
  ninja -C "$ABI_BUILD_DIR" >/dev/null
}

# Exported (defined, dynamic) symbols, one per line, sorted, version suffix removed.
# The version node itself (an absolute symbol such as tfjob_0) is not a symbol of the API.
abi_symbols() {
  nm -D --defined-only "$ABI_BUILD_DIR/lib/libtfjob.so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | LC_ALL=C sort
}

abi_soname() {
  objdump -p "$1" | awk '$1 == "SONAME" { print $2 }'
}
