#!/usr/bin/env bash
# Installing and linking as a packager or a user would: meson install into a scratch prefix, then
# with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig and nothing else (no LD_LIBRARY_PATH, no ldconfig):
# the installed tfjobctl runs (a local run supervised by the installed tfjob-supervise); its man
# pages and shell completions are installed where man and the shells look; a C
# program built with pkg-config builds and runs; the Python package installed with pip (pip
# install ./bindings/python) loads the installed library; a Go program using the module builds
# (cgo, pkg-config) and runs (docs/install.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
scratch=$(mktemp -d)
# The prefix is emptied and installed anew on each run, at a fixed path: Go's build cache keeps
# the link flags pkg-config gave for a package, so a new path each time would link the old one.
prefix="$root/.cache/install-prefix"
rm -rf "$prefix"
trap 'rm -rf "$scratch" "$prefix"' EXIT
build=build-install
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dtests=false -Dbench=false >/dev/null
fi
meson configure "$build" --prefix="$prefix" --libdir=lib >/dev/null
ninja -C "$build" >/dev/null
meson install -C "$build" --quiet >/dev/null
unset LD_LIBRARY_PATH TFJOB_LIBRARY
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. the installed tools find libtfjob.so.0 (RPATH)
[ "$("$prefix/bin/tfjobctl" exit-code 137)" = retryable ] || fail "installed tfjobctl does not run"
readelf -d "$prefix/bin/tfjobctl" | grep "R.*PATH.*\[$prefix/lib\]" >/dev/null || fail "tfjobctl has no RPATH to $prefix/lib"
echo "tfjobctl: runs from $prefix/bin"

# 1b. its local runs supervise each replica with the installed program tfjob-supervise
cat >"$scratch/sup.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: sup}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - {name: tensorflow, image: none, command: [sh, -c, 'readlink /proc/$PPID/exe']}
YAML
"$prefix/bin/tfjobctl" run --run-dir "$scratch/sup" "$scratch/sup.yaml" >"$scratch/sup.out" 2>&1 ||
  { cat "$scratch/sup.out" >&2; fail "installed tfjobctl run"; }
sup=$(cat "$scratch/sup/sup-worker-0.log")
[ "$sup" = "$prefix/libexec/tfjob/tfjob-supervise" ] || fail "the replica's supervisor is '$sup'"
echo "tfjobctl run: supervised by $sup"

# 1c. the man pages and the shell completions, where man and the shells look in the prefix
for f in share/man/man1/tfjobctl.1 share/man/man8/tfjob-operator.8 share/bash-completion/completions/tfjobctl \
         share/zsh/site-functions/_tfjobctl share/fish/vendor_completions.d/tfjobctl.fish; do
  [ -s "$prefix/$f" ] || fail "meson install did not install $f"
done
[ "$(MANPATH="$prefix/share/man" man -w tfjobctl)" = "$prefix/share/man/man1/tfjobctl.1" ] ||
  fail "man does not find tfjobctl(1) with MANPATH=$prefix/share/man"
[ "$(MANPATH="$prefix/share/man" man -w 8 tfjob-operator)" = "$prefix/share/man/man8/tfjob-operator.8" ] ||
  fail "man does not find tfjob-operator(8) with MANPATH=$prefix/share/man"
out=$(bash -c 'source "$1"; COMP_WORDS=(tfjobctl validate -o ""); COMP_CWORD=3; _tfjobctl; echo "${COMPREPLY[*]}"' \
  _ "$prefix/share/bash-completion/completions/tfjobctl")
[ "$out" = "text json" ] || fail "the installed bash completion offers '$out' for 'tfjobctl validate -o '"
echo "man pages and completions: in $prefix/share"

# 2. a C program: pkg-config --cflags --libs tfjob, and it runs
cat >"$scratch/prog.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <tfjob/tfjob.h>

int main(int argc, char **argv)
{
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	const char *text = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: c}\nspec:\n  tfReplicaSpecs:\n"
	                   "    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
	                   "          - {name: tensorflow, image: tf}\n";
	if (argc != 1 || tfjob_job_parse(&job, text, strlen(text), NULL, &err) != 0) {
		fprintf(stderr, "%s\n", err ? tfjob_error_message(err) : "usage");
		return 1;
	}
	printf("libtfjob %s: job %s\n", tfjob_version(), tfjob_job_name(job));
	tfjob_job_free(job);
	return 0;
}
C
# shellcheck disable=SC2046
cc -o "$scratch/prog" "$scratch/prog.c" $(pkg-config --cflags --libs tfjob) || fail "C program does not build"
"$scratch/prog" | grep -x "libtfjob [0-9.]*: job c" >/dev/null || fail "C program does not run"
ldd "$scratch/prog" | grep "libtfjob.so.0 => $prefix/lib/" >/dev/null || fail "C program does not use $prefix/lib"
echo "C: $("$scratch/prog")"

# 3. the Python package, installed with pip, loads the installed library (through pkg-config)
python3 -m pip install -q --disable-pip-version-check --no-deps --target "$scratch/py" ./bindings/python 2>&1 |
  grep -v 'Running pip as' || true
out=$(cd "$scratch" && PYTHONPATH="$scratch/py" python3 -c '
import tfjob, tfjob._lib as l
job = tfjob.Job.from_dict({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "py"},
    "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "tensorflow", "image": "tf"}]}}}}}})
print(l.lib._name, job.name, job.validate())')
case "$out" in
  "$prefix/lib/libtfjob.so.0 py []") echo "Python: $out" ;;
  *) fail "Python package: $out" ;;
esac

# 4. a Go program: a module that requires the bindings (here from this checkout), cgo through
#    pkg-config; built and run with no other setting
mkdir "$scratch/gouser"
cat >"$scratch/gouser/go.mod" <<GOMOD
module example.com/gouser

go 1.21

require github.com/libtfjob/libtfjob/bindings/go v0.0.0

replace github.com/libtfjob/libtfjob/bindings/go => $root/bindings/go
GOMOD
cat >"$scratch/gouser/main.go" <<'GO'
package main

import (
	"fmt"

	"github.com/libtfjob/libtfjob/bindings/go/tfjob"
)

func main() {
	job, err := tfjob.Parse([]byte(`{"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "go"},
		"spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
		{"name": "tensorflow", "image": "tf"}]}}}}}}`), "job.json")
	if err != nil {
		panic(err)
	}
	defer job.Close()
	fmt.Println("libtfjob", tfjob.LibraryVersion(), "job", job.Name())
}
GO
# Go's build cache keys a cgo package without the flags pkg-config gave it: a shared cache that
# built the bindings against another prefix would link that one. So a cache of the suite's own
# (a user who moves the library to another prefix runs `go clean -cache` once, docs/install.md).
export GOCACHE="$root/.cache/go-build-install"
(cd "$scratch/gouser" && CGO_ENABLED=1 go build -o "$scratch/gouser/gouser" .) || fail "Go program does not build"
"$scratch/gouser/gouser" | grep -x "libtfjob [0-9.]* job go" >/dev/null || fail "Go program does not run"
ldd "$scratch/gouser/gouser" | grep "libtfjob.so.0 => $prefix/lib/" >/dev/null || fail "Go program does not use $prefix/lib"
echo "Go: $("$scratch/gouser/gouser")"
echo "45-install: ok"
