#!/usr/bin/env bash
# The bindings as their users get them (docs/bindings.md, "Installing the Python package" and
# "Using the Go module"), away from the checkout:
# - libtfjob built and installed (meson install) into a scratch prefix;
# - Go: a module of its own in a scratch directory, requiring the bindings' module through a
#   replace directive, with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig only: builds and runs the
#   README's Go program;
# - Python: `python -m build --wheel` of bindings/python, pure and with the library bundled
#   (TFJOB_WHEEL_LIBRARY); each installed into a fresh venv. The pure one finds the installed
#   library through pkg-config; the bundled one, with the prefix gone and no setting at all, runs
#   the binding's tests (bindings/python/tests) from a directory outside the checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
scratch=$(mktemp -d)
# A fixed prefix, emptied on each run: Go's build cache keeps the link flags pkg-config gave a cgo
# package, so a new path each time would link the previous one (docs/install.md).
prefix="$root/.cache/bindings-prefix"
trap 'rm -rf "$scratch" "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset LD_LIBRARY_PATH TFJOB_LIBRARY PKG_CONFIG_PATH PYTHONPATH

build=build-bindings
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --prefix="$prefix" --libdir=lib -Dtests=false -Dbench=false >/dev/null
fi
ninja -C "$build" >/dev/null
rm -rf "$prefix"
meson install -C "$build" --quiet >/dev/null

# ---- Go: a user's module outside the repository ----
mkdir "$scratch/gouser"
cat >"$scratch/gouser/go.mod" <<GOMOD
module example.com/gouser

go 1.21

require github.com/libtfjob/libtfjob/bindings/go v0.0.0

replace github.com/libtfjob/libtfjob/bindings/go => $root/bindings/go
GOMOD
# the README's Go program, as it is written there
python3 - "$root/README.md" >"$scratch/gouser/main.go" <<'PY'
import re, sys
section = open(sys.argv[1]).read().split("## From Python and Go", 1)[1]
print(re.search(r"```go\n(.*?)```", section, re.S).group(1), end="")
PY
[ -z "$(gofmt -l "$scratch/gouser/main.go")" ] || fail "the README's Go program is not gofmt'ed"
ln -s "$root/examples" "$scratch/gouser/examples"
export GOCACHE="$root/.cache/go-build-bindings"
(cd "$scratch/gouser" && PKG_CONFIG_PATH="$prefix/lib/pkgconfig" CGO_ENABLED=1 go build -o gouser .) ||
  fail "the README's Go program does not build as a module of its own"
out=$(cd "$scratch/gouser" && ./gouser) || fail "the README's Go program: $out"
printf 'Go: %s\n' "$out"
grep -q '^\[\] {"cluster":{"worker":\[' <<<"$out" || fail "Go: Validate and TFConfig: $out"
grep -qx '2 pods' <<<"$out" || fail "Go: the controller made no 2 pods: $out"
ldd "$scratch/gouser/gouser" | grep -q "libtfjob.so.0 => $prefix/lib/" || fail "the Go program does not use $prefix/lib"

# ---- Python: wheels ----
python3 -m venv "$scratch/buildenv"
"$scratch/buildenv/bin/pip" install -q --disable-pip-version-check build
# wheel OUTDIR: python -m build --wheel, its output shown only when it fails
wheel() {
  local out
  out=$("$scratch/buildenv/bin/python" -m build --wheel --outdir "$1" bindings/python 2>&1) ||
    { printf '%s\n' "$out" >&2; fail "python -m build --wheel bindings/python${TFJOB_WHEEL_LIBRARY:+ (TFJOB_WHEEL_LIBRARY=$TFJOB_WHEEL_LIBRARY)}"; }
}
wheel "$scratch/pure"
TFJOB_WHEEL_LIBRARY="$prefix/lib/libtfjob.so.0" wheel "$scratch/bundled"
pure=$(echo "$scratch"/pure/*.whl)
bundled=$(echo "$scratch"/bundled/*.whl)
case "$(basename "$pure")" in tfjob-0.1.0-py3-none-any.whl) ;; *) fail "pure wheel: $(basename "$pure")" ;; esac
case "$(basename "$bundled")" in tfjob-0.1.0-py3-none-linux_*.whl) ;; *) fail "bundling wheel: $(basename "$bundled")" ;; esac
python3 - "$pure" "$bundled" <<'PY' || fail "the wheels' contents"
import sys, zipfile
pure, bundled = (set(zipfile.ZipFile(p).namelist()) for p in sys.argv[1:])
assert "tfjob/_lib.py" in pure and "tfjob/py.typed" in pure, sorted(pure)
assert not any(n.endswith(("libtfjob.so.0", "tfjob-supervise")) for n in pure), sorted(pure)
info = zipfile.ZipFile(sys.argv[2]).getinfo("tfjob/tfjob-supervise")
assert "tfjob/libtfjob.so.0" in bundled and (info.external_attr >> 16) & 0o111, "supervise not executable"
PY
echo "wheels: $(basename "$pure"), $(basename "$bundled")"

# The pure wheel in a fresh venv finds the installed library through pkg-config.
python3 -m venv "$scratch/venv-pure"
"$scratch/venv-pure/bin/pip" install -q --disable-pip-version-check "$pure"
out=$(cd "$scratch" && PKG_CONFIG_PATH="$prefix/lib/pkgconfig" "$scratch/venv-pure/bin/python" -c \
  'import tfjob, tfjob._lib as l; print(l.lib._name, tfjob.library_version(), tfjob.exit_code_retryable(137))')
[ "$out" = "$prefix/lib/libtfjob.so.0 0.1.0 True" ] || fail "pure wheel: $out"
echo "pure wheel: loads $out"

# The bundling wheel, with the installed library gone: its own copy, and its tfjob-supervise.
rm -rf "$prefix"
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install -q --disable-pip-version-check "$bundled" pytest hypothesis
site=$("$scratch/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir "$scratch/elsewhere"
cd "$scratch/elsewhere"
out=$("$scratch/venv/bin/python" -c 'import tfjob, tfjob._lib as l; print(tfjob.__file__, l.lib._name)')
[ "$out" = "$site/tfjob/__init__.py $site/tfjob/libtfjob.so.0" ] || fail "bundled wheel: imports $out"
echo "bundled wheel: loads $site/tfjob/libtfjob.so.0"
# pytest puts bindings/python/tests (not bindings/python) on sys.path for its conftest: the tests
# import the installed tfjob. The parity tests compare with the tfjobctl of the same sources.
TFJOBCTL="$root/$build/src/tfjobctl/tfjobctl" "$scratch/venv/bin/python" -m pytest -q -rs -p no:warnings -p no:cacheprovider --rootdir "$scratch/elsewhere" \
  "$root/bindings/python/tests"
echo "49-bindings-install: ok"
