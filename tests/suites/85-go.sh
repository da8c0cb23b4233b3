#!/usr/bin/env bash
# Go bindings: install the library into a private prefix, then go vet, go test (with the race
# detector) and a bounded fuzz run, all through pkg-config as a user of the package would.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# shellcheck source=tests/suites/lib/go-env.bash
. tests/suites/lib/go-env.bash
cd bindings/go
go vet ./...
go test -count=1 -race ./...
go test -count=1 -run='^$' -fuzz=FuzzParse -fuzztime="${GO_FUZZ_SECONDS:-20}s" ./tfjob
go test -count=1 -run='^$' -fuzz=FuzzPlan -fuzztime="${GO_FUZZ_SECONDS:-20}s" ./tfjob
# The example Go operator runs a job to success on its fake cluster (its own loop on PlanStep).
cd ../../examples/go-operator
go vet .
# run_example ARGS...: prints the example's output; fails unless its last line says it succeeded.
run_example() {
  local out
  out="$(go run . "$@")"
  printf '%s\n' "$out"
  [ "$(printf '%s\n' "$out" | tail -n 1)" = "TFJob succeeded" ]
}
run_example
# The same job run by the library's controller (tfjob.Controller) on the in-memory API store.
run_example -controller
