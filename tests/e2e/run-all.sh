#!/usr/bin/env bash
# Every live-mode end-to-end test (tests/e2e/test-*.sh) against a real etcd + kube-apiserver +
# kube-scheduler, built from their Go modules first (build-control-plane.sh; cached, so only the
# first run on a machine takes minutes). Exits non-zero if the build or any test fails.
# Usage: tests/e2e/run-all.sh [TEST-NAME...]   (e.g. run-all.sh live-basic leader-election)
# Env: KUBESCHED_BIN (default build/kubesched), and those of lib.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/build-control-plane.sh" || { echo "run-all: building the control plane failed"; exit 1; }
tests=()
if [ $# -gt 0 ]; then for t in "$@"; do tests+=("$here/test-$t.sh"); done
else tests=("$here"/test-*.sh); fi
failed=()
for t in "${tests[@]}"; do
  name=$(basename "$t" .sh)
  echo "== e2e $name"
  t0=$SECONDS
  if bash "$t"; then echo "== e2e $name passed in $((SECONDS - t0)) s"
  else failed+=("$name"); echo "== e2e $name FAILED after $((SECONDS - t0)) s"; fi
done
if [ ${#failed[@]} -gt 0 ]; then echo "run-all: failed: ${failed[*]}"; exit 1; fi
echo "run-all: all ${#tests[@]} end-to-end tests passed"
