#!/usr/bin/env bash
# Install everything libtfjob needs to build and test, on Debian (root or sudo).
# Idempotent: packages already present are skipped quickly.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(
  build-essential pkg-config meson ninja-build
  libyaml-dev libjansson-dev libcurl4-openssl-dev check
  clang llvm lld valgrind abigail-tools python3 python3-pip
  openssl curl util-linux iproute2
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "setup: system packages ready"
