#!/usr/bin/env bash
# Install everything libtfjob needs to build and test, on Debian (root or sudo).
# Idempotent: packages already present are skipped quickly.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(
  build-essential pkg-config meson ninja-build
  libyaml-dev libjansson-dev libcurl4-openssl-dev check openssl
  # tfjob-operator's HTTP(S) servers and webhook certificates
  libmicrohttpd-dev libgnutls28-dev
  # what `pkg-config --static libcurl` names, for static links of libtfjob (tests/suites/40-abi.sh)
  libnghttp2-dev libidn2-dev librtmp-dev libssh2-1-dev libpsl-dev libkrb5-dev libldap-dev
  libzstd-dev libbrotli-dev zlib1g-dev
  clang llvm lld valgrind abigail-tools python3 python3-pip
  openssl curl util-linux iproute2
  # scripts/build-image.sh puts the CA bundle into the operator image; tests/suites/47-image.sh
  # pushes that image to a registry on loopback
  ca-certificates skopeo docker-registry
  # tests/kube/controller_e2e.py reads examples/deploy/rbac.yaml (64-controller-kube.sh);
  # tests/kube/official_crd_e2e.py reads v1.9.2's manifests and the examples (66-official-crd.sh)
  python3-yaml
  # tests/sdk/venv.sh: the Kubeflow Training SDK's venv (69-sdk.sh)
  python3-venv
  # tfjobctl completion zsh|fish is checked by those shells (tests/cli/test_tfjobctl_completion.sh)
  zsh fish
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
