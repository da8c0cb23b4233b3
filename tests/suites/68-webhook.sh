#!/usr/bin/env bash
# tfjob-operator's validating admission webhook on a real kube-apiserver (tests/kube/harness.sh),
# registered by URL with the names, failurePolicy and least-privilege RBAC of
# examples/deploy/webhook.yaml: certificates made, stored in the Secret and injected as caBundle
# (/readyz waits for them); every tests/kube/fixtures/webhook/invalid TFJob denied with the message
# v1.9 gives (every field error tfjobctl validate reports), every example accepted, a change of the
# immutable managedBy denied; 2,000 idle connections, a 1 MiB header, garbage, slow loris and slow
# readers while probes and admissions keep answering within 1 s and RSS stays bounded; the operator
# stopped (creates refused) and restarted with 24 s certificates that rotate under a stream of
# admissions (none may fail); --webhook-cert-dir served and reloaded. tests/kube/webhook_e2e.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/suites/lib/kube-env.bash
. tests/suites/lib/kube-env.bash
OP="${TFJOB_OPERATOR:-$PWD/build/src/tfjob-operator/tfjob-operator}"
TFJOBCTL="${TFJOBCTL:-$PWD/build/src/tfjobctl/tfjobctl}"
python3 tests/kube/webhook_e2e.py "$OP" "$TFJOBCTL" "$dir"
