#!/usr/bin/env bash
# Build the tfjob-operator container image from this repository with no container daemon, no
# builder and no registry (docs/image.md): a release meson build, `meson install` into a staging
# root, the shared libraries the programs load (as the dynamic loader resolves them), CA
# certificates and a non-root user, written as an OCI image layout (a directory and a .tar
# archive) named localhost/tfjob-operator:<project version>. Needs meson, ninja, a C compiler and
# the -dev packages of scripts/setup.sh, python3, ldd, gzip, sha256sum; on Debian, dpkg-query.
#
#   scripts/build-image.sh [--clean] [--build-dir DIR] [--out DIR]
#   scripts/build-image.sh --rootfs DIR       the root filesystem only (deploy/image/Containerfile)
#
#   --build-dir DIR  meson build directory of the release build (default build-release)
#   --out DIR        where the image goes (default build-image): DIR/oci/ (the layout),
#                    DIR/tfjob-operator-VERSION.oci.tar (the same as an archive), DIR/rootfs/
#   --clean          remove the build directory first (a build from scratch)
#
# Reproducible: every mtime is SOURCE_DATE_EPOCH (default: the time of the checked-out commit),
# entries are sorted, owned by 0:0, gzip -n; two builds of one commit give the same digests.
# Environment: SOURCE_DATE_EPOCH, TFJOB_IMAGE_NAME (default localhost/tfjob-operator),
# TFJOB_IMAGE_SOURCE (org.opencontainers.image.source; default https://github.com/libtfjob/libtfjob),
# TFJOB_IMAGE_REVISION (org.opencontainers.image.revision; default: git rev-parse HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT_DIR="$PWD"

die() { echo "build-image: error: $*" >&2; exit 1; }
log() { echo "build-image: $*" >&2; }
# quietly CMD...: run CMD with its output kept, shown on standard error only if it fails.
quietly() {
  local out
  if ! out="$("$@" 2>&1)"; then
    printf '%s\n' "$out" >&2
    return 1
  fi
}
# ours DIR WHAT: DIR is absent, empty, or holds WHAT (a file this script makes there): safe to remove.
ours() {
  [ ! -e "$1" ] || [ -z "$(ls -A "$1" 2>/dev/null)" ] || [ -e "$1/$2" ]
}

BUILD_DIR=build-release
OUT=build-image
ROOTFS_ONLY=""
CLEAN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) [ $# -ge 2 ] || die "--build-dir needs a directory"; BUILD_DIR="$2"; shift 2 ;;
    --build-dir=*) BUILD_DIR="${1#*=}"; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; OUT="$2"; shift 2 ;;
    --out=*) OUT="${1#*=}"; shift ;;
    --rootfs) [ $# -ge 2 ] || die "--rootfs needs a directory"; ROOTFS_ONLY="$2"; shift 2 ;;
    --rootfs=*) ROOTFS_ONLY="${1#*=}"; shift ;;
    --clean) CLEAN=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
{ [ -n "$BUILD_DIR" ] && [ -n "$OUT" ]; } || die "empty --build-dir or --out"

# Where the root filesystem goes: replaced, so it must be ours (or nothing yet).
ROOTFS="${ROOTFS_ONLY:-$OUT/rootfs}"
case "$ROOTFS" in /|//|/.|.|./) die "--rootfs $ROOTFS: not the root directory" ;; esac
if ! ours "$ROOTFS" usr/local/bin/tfjob-operator; then
  die "$ROOTFS is not empty and is no root filesystem this script made; not replacing it"
fi
if [ -z "$ROOTFS_ONLY" ] && ! ours "$OUT" digests.txt && ! ours "$OUT" rootfs; then
  die "--out $OUT is not empty and holds no image this script made; not writing into it"
fi

for tool in meson ninja python3 ldd gzip sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found (scripts/setup.sh installs the build tools)"
done

# ---------------------------------------------------------------------------- reproducibility

have_git() { command -v git >/dev/null 2>&1 && git -C "$ROOT_DIR" rev-parse --git-dir >/dev/null 2>&1; }
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  if have_git; then
    SOURCE_DATE_EPOCH="$(git -C "$ROOT_DIR" log -1 --format=%ct)"
  elif [ -n "$ROOTFS_ONLY" ]; then
    SOURCE_DATE_EPOCH=0  # the root filesystem alone carries no timestamp of ours
  else
    die "not a git checkout (or no git): set SOURCE_DATE_EPOCH (seconds since 1970) for the image's timestamps"
  fi
fi
case "$SOURCE_DATE_EPOCH" in
  ''|*[!0-9]*) die "SOURCE_DATE_EPOCH='$SOURCE_DATE_EPOCH' is not a number of seconds" ;;
esac
export SOURCE_DATE_EPOCH
REVISION="${TFJOB_IMAGE_REVISION:-}"
if [ -z "$REVISION" ] && have_git; then
  REVISION="$(git -C "$ROOT_DIR" rev-parse HEAD)"
  if [ -n "$(git -C "$ROOT_DIR" status --porcelain --untracked-files=no)" ]; then
    log "warning: the working tree has uncommitted changes; the image is labelled $REVISION all the same"
  fi
fi
# The compiler sees file names relative to the build directory; map the absolute ones too so
# that the binaries do not depend on where the checkout is.
export CFLAGS="${CFLAGS:-} -ffile-prefix-map=$ROOT_DIR=."

# ---------------------------------------------------------------------------- release build

if [ -n "$CLEAN" ]; then
  ours "$BUILD_DIR" meson-private || die "--clean: $BUILD_DIR is not a meson build directory; not removing it"
  rm -rf "$BUILD_DIR"
fi
PREFIX=/usr/local
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  log "meson setup --buildtype=release $BUILD_DIR"
  quietly meson setup "$BUILD_DIR" --buildtype=release --prefix="$PREFIX" -Dtests=false -Dbench=false \
    -Dtransport=enabled || die "meson setup failed (its output is above)"
fi
buildtype="$(meson introspect --buildoptions "$BUILD_DIR" |
  python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"))')"
[ "$buildtype" = release ] || die "$BUILD_DIR is a '$buildtype' build, not release (use another --build-dir or --clean)"
log "ninja -C $BUILD_DIR"
quietly ninja -C "$BUILD_DIR" || die "the release build failed (its output is above)"
VERSION="$(meson introspect --projectinfo "$BUILD_DIR" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')"
LICENSE="$(sed -n "s/^ *license *: *'\([^']*\)'.*/\1/p" meson.build | head -n 1)"
NAME="${TFJOB_IMAGE_NAME:-localhost/tfjob-operator}"
REF="$NAME:$VERSION"

# ---------------------------------------------------------------------------- root filesystem

[ -n "$ROOTFS_ONLY" ] || mkdir -p "$OUT"
mkdir -p "$(dirname "$ROOTFS")"
ROOTFS="$(cd "$(dirname "$ROOTFS")" && pwd)/$(basename "$ROOTFS")"
rm -rf "$ROOTFS" "$ROOTFS.staging"
# The runtime install tag: programs and the shared library, no headers, no pkg-config file;
# stripped (a release build has no debug information; this drops the symbol tables).
quietly meson install -C "$BUILD_DIR" --destdir "$ROOTFS.staging" --tags runtime --no-rebuild --strip ||
  die "meson install --destdir $ROOTFS.staging failed (its output is above)"
mv "$ROOTFS.staging" "$ROOTFS"
OPERATOR="$ROOTFS$PREFIX/bin/tfjob-operator"
[ -x "$OPERATOR" ] || die "$OPERATOR was not installed (is libmicrohttpd/gnutls missing? scripts/setup.sh)"
[ -x "$ROOTFS$PREFIX/bin/tfjobctl" ] || die "tfjobctl was not installed"

# The shared libraries, as the dynamic loader resolves them (libtfjob from the staging root,
# the rest from the system), with the loader itself.
mapfile -t elves < <(find "$ROOTFS$PREFIX" -type f \( -perm -u+x -o -name '*.so*' \) | sort)
libdir="$(dirname "$(find "$ROOTFS$PREFIX" -name 'libtfjob.so.*' -type f | head -n 1)")"
[ -d "$libdir" ] || die "libtfjob.so was not installed under $ROOTFS$PREFIX"
libs=()
for f in "${elves[@]}"; do
  out="$(LD_LIBRARY_PATH="$libdir" ldd "$f" 2>&1)" || die "ldd $f failed: $out"
  if grep -q 'not found' <<<"$out"; then
    die "$f: libraries not found: $(grep 'not found' <<<"$out" | tr -s ' \t\n' ' ')"
  fi
  while read -r lib; do
    case "$lib" in "$ROOTFS"/*) ;; /*) libs+=("$lib") ;; esac
  done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out")
done
mapfile -t libs < <(printf '%s\n' "${libs[@]}" | sort -u)
[ "${#libs[@]}" -gt 0 ] || die "ldd found no shared library at all (a static build?)"
interp="$(printf '%s\n' "${libs[@]}" | grep -E '/ld-linux|/ld64[.]so' | head -n 1 || true)"
[ -n "$interp" ] || die "no dynamic loader among the libraries ldd listed"
CA=/etc/ssl/certs/ca-certificates.crt
[ -s "$CA" ] || die "$CA is missing (apt-get install ca-certificates)"
python3 scripts/oci_image.py copy "$ROOTFS" "${libs[@]}" "$CA"

# Users: root and nonroot (65532, as distroless images), no login shell, no home.
mkdir -p "$ROOTFS/etc" "$ROOTFS/tmp"
chmod 1777 "$ROOTFS/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n' >"$ROOTFS/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$ROOTFS/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$ROOTFS/etc/nsswitch.conf"

# What scanners need to name the Debian packages the libraries come from, and their licences.
if command -v dpkg-query >/dev/null 2>&1; then
  [ -f /etc/os-release ] && python3 scripts/oci_image.py copy "$ROOTFS" /etc/os-release
  python3 scripts/oci_image.py debian-packages "$ROOTFS" "${libs[@]}" package:ca-certificates >"$ROOTFS.packages" ||
    die "could not record the Debian packages of the libraries"
  npkg="$(wc -l <"$ROOTFS.packages")"
  rm -f "$ROOTFS.packages"
  log "root filesystem: ${#libs[@]} system libraries from $npkg Debian packages"
else
  log "warning: no dpkg-query: the image records no package versions (scanners will not see them)"
fi
# The programs run in it with nothing else (as root only: chroot).
if [ "$(id -u)" = 0 ] && command -v chroot >/dev/null 2>&1 && chroot / true 2>/dev/null; then
  env -i "$(command -v chroot)" "$ROOTFS" "$PREFIX/bin/tfjob-operator" --version >/dev/null 2>&1 ||
    die "chroot $ROOTFS $PREFIX/bin/tfjob-operator --version fails: a file is missing from the image"
else
  log "warning: not checked that the programs run in the root filesystem (that needs root and chroot)"
fi
log "root filesystem: $ROOTFS ($(du -sk "$ROOTFS" | cut -f1) KiB)"
[ -z "$ROOTFS_ONLY" ] || exit 0

# ---------------------------------------------------------------------------- OCI layout

case "$(uname -m)" in
  x86_64) ARCH=amd64 ;;
  aarch64) ARCH=arm64 ;;
  armv7l) ARCH=arm ;;
  ppc64le) ARCH=ppc64le ;;
  s390x) ARCH=s390x ;;
  riscv64) ARCH=riscv64 ;;
  *) die "unknown machine $(uname -m) for the image's architecture" ;;
esac
SOURCE="${TFJOB_IMAGE_SOURCE:-https://github.com/libtfjob/libtfjob}"
CREATED="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
ARCHIVE="$OUT/tfjob-operator-$VERSION.oci.tar"
annotations=(
  --annotation "org.opencontainers.image.title=tfjob-operator"
  --annotation "org.opencontainers.image.description=Kubeflow TFJob operator (libtfjob)"
  --annotation "org.opencontainers.image.version=$VERSION"
  --annotation "org.opencontainers.image.created=$CREATED"
  --annotation "org.opencontainers.image.source=$SOURCE"
  --annotation "org.opencontainers.image.licenses=$LICENSE"
)
[ -z "$REVISION" ] || annotations+=(--annotation "org.opencontainers.image.revision=$REVISION")
python3 scripts/oci_image.py layout "$ROOTFS" "$OUT/oci" "$ARCHIVE" \
  --epoch "$SOURCE_DATE_EPOCH" --ref "$REF" --arch "$ARCH" "${annotations[@]}" \
  --entrypoint "$PREFIX/bin/tfjob-operator" --user 65532:65532 \
  --env "PATH=$PREFIX/bin:/usr/bin:/bin" --env "SSL_CERT_FILE=$CA" \
  --port 8080 --port 8081 --port 9443 \
  --history "scripts/build-image.sh (meson release build of $VERSION${REVISION:+ at $REVISION})" \
  >"$OUT/digests.txt" || die "writing the OCI layout failed"
echo "image $REF"
cat "$OUT/digests.txt"
echo "layout $OUT/oci"
echo "archive $ARCHIVE $(stat -c %s "$ARCHIVE") bytes, sha256 $(sha256sum "$ARCHIVE" | cut -d' ' -f1)"
