#!/usr/bin/env bash
# The operator image (scripts/build-image.sh, docs/image.md), with no container tool: built twice
# from scratch (two release builds in fresh build directories) to the same digests; then its root
# filesystem unpacked from the OCI archive and tfjob-operator run from it as a container would
# run it (namespaces, chroot, uid 65532, read-only root, in-cluster ServiceAccount token and CA,
# KUBERNETES_SERVICE_HOST/PORT only) against tests/kube/harness.sh's kube-apiserver: its pods are
# created and the TFJob reaches Succeeded (tests/kube/image_e2e.py). Needs root (mounts, chroot).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "47-image: needs root (unshare --mount, chroot)" >&2; exit 1; }
for tool in unshare chroot mount python3 gzip; do
  command -v "$tool" >/dev/null || { echo "47-image: '$tool' is missing (scripts/setup.sh)" >&2; exit 1; }
done
python3 -c 'import yaml' 2>/dev/null || { echo "47-image: python3-yaml is missing (scripts/setup.sh)" >&2; exit 1; }

H="$PWD/tests/kube/harness.sh"
work="$(mktemp -d)"
# Both build directories sit at the same depth inside the checkout, as the compiler sees paths
# relative to them; the builds are removed at the end.
builds="$(mktemp -d "$PWD/build-image-suite.XXXXXX")"
cleanup() {
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

# 2. Run it against a real kube-apiserver.
"$H" build >/dev/null
"$H" start "$work/kube" 2>&1 | tail -n 1
set -a
# shellcheck disable=SC1091
. "$work/kube/env"
set +a
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
python3 tests/kube/image_e2e.py "$archive" "$epoch" "$work"
