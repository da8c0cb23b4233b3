# Sourced, after kube-env.bash, by the suites that run the Python binding's Kubernetes tests
# against the harness's API server (66 against v1.9.2's CRD, 86 against ours). Not a suite itself.
# python_kube_tests: install the package as a user would (against ./build), run
# bindings/python/tests/test_kube.py; fails when any of those tests was skipped.
python_kube_tests() {
  local target lib="$PWD/build/lib/libtfjob.so.0"
  target="$(mktemp -d)"
  KUBE_ENV_CLEANUP+=("$target")
  python3 -m pip install -q --disable-pip-version-check pytest 2>&1 | grep -v 'Running pip as' || true
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$target" ./bindings/python 2>&1 |
    grep -v 'Running pip as' || true
  ( cd bindings/python/tests &&
    TFJOB_LIBRARY="$lib" PYTHONPATH="$target" \
      python3 -m pytest -q -p no:warnings -p no:cacheprovider -rs test_kube.py ) | tee "$dir/pytest.out"
  if grep -q skipped "$dir/pytest.out"; then
    echo "FAIL: the Python bindings' kube tests were skipped"
    return 1
  fi
}
