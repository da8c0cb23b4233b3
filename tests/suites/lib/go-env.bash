# Sourced by the Go suites (85-go.sh, 86-bindings-kube.sh) from the repository root, with $root
# set to it: builds and installs the library into a private prefix (build-go, .cache/go-prefix)
# and exports what cgo needs to find it through pkg-config, as a user of the package would.
# Not a suite itself: scripts/test-all.sh runs only tests/suites/*.sh.
prefix="$root/.cache/go-prefix"
if [ ! -f build-go/build.ninja ]; then
  meson setup build-go --prefix="$prefix" --libdir=lib -Dtests=false -Dbench=false >/dev/null
fi
ninja -C build-go >/dev/null
meson install -C build-go --quiet >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CGO_ENABLED=1
