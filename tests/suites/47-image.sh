#!/usr/bin/env bash
# The operator image (scripts/build-image.sh, docs/image.md), with no container tool: built twice
# from scratch (two release builds in fresh build directories) to the same digests; pushed with
# skopeo, from the archive and from the layout, to a registry on loopback that then serves the
# manifest under the digest the build printed; then its root
# filesystem unpacked from the OCI archive and tfjob-operator run from it as a container would
# run it (namespaces, chroot, uid 65532, read-only root, in-cluster ServiceAccount token and CA,
# KUBERNETES_SERVICE_HOST/PORT only) against tests/kube/harness.sh's kube-apiserver: its pods are
# created and the TFJob reaches Succeeded (tests/kube/image_e2e.py). Needs root (mounts, chroot).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "47-image: needs root (unshare --mount, chroot)" >&2; exit 1; }
# skopeo and a registry (Debian's docker-registry) check that the image pushes as docs/image.md says.
if ! command -v skopeo >/dev/null || ! command -v docker-registry >/dev/null; then
  echo "47-image: installing skopeo and docker-registry" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq skopeo docker-registry; } >/dev/null ||
    { echo "47-image: could not install skopeo and docker-registry" >&2; exit 1; }
fi
for tool in unshare chroot mount python3 gzip skopeo docker-registry; do
  command -v "$tool" >/dev/null || { echo "47-image: '$tool' is missing (scripts/setup.sh)" >&2; exit 1; }
done
python3 -c 'import yaml' 2>/dev/null || { echo "47-image: python3-yaml is missing (scripts/setup.sh)" >&2; exit 1; }

H="$PWD/tests/kube/harness.sh"
work="$(mktemp -d)"
# Both build directories sit at the same depth inside the checkout, as the compiler sees paths
# relative to them; the builds are removed at the end.
builds="$(mktemp -d "$PWD/build-image-suite.XXXXXX")"
registry_pid=""
cleanup() {
  [ -z "$registry_pid" ] || { kill "$registry_pid" 2>/dev/null; wait "$registry_pid" 2>/dev/null; } || true
  "$H" stop "$work/kube" >/dev/null 2>&1 || true
  rm -rf "$work" "$builds"
}
trap cleanup EXIT

# 1. Reproducible: two builds from scratch give the same manifest, config and layer digests.
for n in 1 2; do
  start=$SECONDS
  scripts/build-image.sh --clean --build-dir "$builds/b$n" --out "$builds/o$n" >"$builds/o$n.out" 2>"$builds/o$n.err" ||
    { cat "$builds/o$n.err" >&2; echo "FAIL build-image.sh (run $n)"; exit 1; }
  echo "ok   build $n in $((SECONDS - start)) s: $(grep '^manifest' "$builds/o$n.out")"
done
if cmp -s "$builds/o1/digests.txt" "$builds/o2/digests.txt" &&
   cmp -s "$builds/o1/tfjob-operator-"*.oci.tar "$builds/o2/tfjob-operator-"*.oci.tar; then
  echo "ok   two builds: the same digests and byte-identical archives"
else
  echo "FAIL two builds differ:"; diff "$builds/o1/digests.txt" "$builds/o2/digests.txt" || true
  exit 1
fi
archive="$(ls "$builds"/o1/tfjob-operator-*.oci.tar)"
size="$(grep '^layer' "$builds/o1/digests.txt")"
echo "ok   image: $(stat -c %s "$archive") bytes archive; $size"

# 2. Pushed to a registry as docs/image.md says (skopeo, from the archive and from the layout):
# the registry serves the very manifest the build wrote, under its digest.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mkdir -p "$work/registry"
printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\nlog:\n  level: error\n' \
  "$work/registry/data" "$port" >"$work/registry/config.yml"
docker-registry serve "$work/registry/config.yml" >"$work/registry/log" 2>&1 &
registry_pid=$!
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/v2/" >/dev/null && break; sleep 0.1; done
manifest="$(sed -n 's/^manifest //p' "$builds/o1/digests.txt")"
reg="127.0.0.1:$port/ml/tfjob-operator"
skopeo copy -q --dest-tls-verify=false "oci-archive:$archive" "docker://$reg:0.1.0" ||
  { echo "FAIL skopeo copy oci-archive:$archive docker://$reg:0.1.0"; exit 1; }
skopeo copy -q --dest-tls-verify=false "oci:$builds/o1/oci:localhost/tfjob-operator:0.1.0" "docker://$reg:layout" ||
  { echo "FAIL skopeo copy oci:$builds/o1/oci:localhost/tfjob-operator:0.1.0 docker://$reg:layout"; exit 1; }
for tag in 0.1.0 layout; do
  got="$(curl -fs -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://127.0.0.1:$port/v2/ml/tfjob-operator/manifests/$tag" | sha256sum | cut -d' ' -f1)"
  if [ "sha256:$got" = "$manifest" ]; then
    echo "ok   skopeo copy to a registry ($tag): it serves manifest $manifest"
  else
    echo "FAIL skopeo copy to a registry ($tag): manifest sha256:$got, built $manifest"; exit 1
  fi
done
kill "$registry_pid"; wait "$registry_pid" 2>/dev/null || true; registry_pid=""

# 3. Run it against a real kube-apiserver.
"$H" build >/dev/null
"$H" start "$work/kube" 2>&1 | tail -n 1
set -a
# shellcheck disable=SC1091
. "$work/kube/env"
set +a
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
python3 tests/kube/image_e2e.py "$archive" "$epoch" "$work"
