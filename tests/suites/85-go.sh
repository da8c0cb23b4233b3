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
# The fuzz budget is a number of inputs, not a time: with a time (-fuzztime=20s), Go 1.26's fuzz
# coordinator can end a run that found nothing with "context deadline exceeded" when the machine
# is loaded (its deadline races the workers' shutdown; fixed in Go 1.27). A count has no deadline
# to race: a loaded machine only takes longer. 150000 inputs take about 15 s here. A failure is
# then a real one, and its input is kept under tfjob/testdata/fuzz/ to replay with go test.
# GO_FUZZ_TIME overrides the budget (e.g. 10m for a long local run, or 1000000x).
fuzz_budget="${GO_FUZZ_TIME:-150000x}"
go test -count=1 -run='^$' -fuzz=FuzzParse -fuzztime="$fuzz_budget" ./tfjob
go test -count=1 -run='^$' -fuzz=FuzzPlan -fuzztime="$fuzz_budget" ./tfjob
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
