#!/usr/bin/env bash
# TensorFlow itself reads the TF_CONFIG that tfjobctl renders (TFConfigClusterResolver).
# Installs tensorflow-cpu from PyPI when it is missing (2.15.1: has wheels for Python 3.9-3.11).
set -euo pipefail
cd "$(dirname "$0")/../.."
TF_VERSION="${TF_VERSION:-2.15.1}"
BUILD_DIR=build scripts/build.sh >/dev/null
if ! python3 -c 'import tensorflow' >/dev/null 2>&1; then
  python3 -m pip install --quiet "tensorflow-cpu==${TF_VERSION}"
fi
TF_CPP_MIN_LOG_LEVEL=3 python3 tests/python/test_tf_config_tensorflow.py build/src/tfjobctl/tfjobctl
