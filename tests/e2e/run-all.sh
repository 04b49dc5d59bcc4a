#!/usr/bin/env bash
# Every live-mode end-to-end test (tests/e2e/test-*.sh) against a real etcd + kube-apiserver +
# kube-scheduler, built from their Go modules first (build-control-plane.sh; cached, so only the
# first run on a machine takes minutes). Then version skew: test-live-basic.sh once more against
# the kube-apiserver of each older supported minor (tests/e2e/kube-skew/*/, built with
# build-control-plane.sh --skew all; etcd stays the main version's, and no kube-scheduler runs:
# v1.37's cannot run against an older API server). Exits
# non-zero if a build or any test fails.
# Usage: tests/e2e/run-all.sh [TEST-NAME...]   (e.g. run-all.sh live-basic leader-election;
#        the name "skew" stands for the skew runs: run-all.sh skew runs only those)
# Env: KUBESCHED_BIN (default build/kubesched), KUBESCHED_E2E_SKEW=0 (no skew runs), and those
#      of lib.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/build-control-plane.sh" || { echo "run-all: building the control plane failed"; exit 1; }
tests=()
skew=${KUBESCHED_E2E_SKEW:-1}
if [ $# -gt 0 ]; then
  want_skew=0
  for t in "$@"; do
    if [ "$t" = skew ]; then want_skew=1; else tests+=("$here/test-$t.sh"); fi
  done
  [ "$want_skew" = 1 ] || skew=0
else tests=("$here"/test-*.sh); fi
failed=()
for t in "${tests[@]}"; do
  name=$(basename "$t" .sh)
  echo "== e2e $name"
  t0=$SECONDS
  if bash "$t"; then echo "== e2e $name passed in $((SECONDS - t0)) s"
  else failed+=("$name"); echo "== e2e $name FAILED after $((SECONDS - t0)) s"; fi
done
nrun=${#tests[@]}
if [ "$skew" != 0 ]; then
  if ! "$here/build-control-plane.sh" --skew all; then
    echo "run-all: building the skew API servers failed"; failed+=(skew-build)
  fi
  cache_root=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}
  for m in "$here"/kube-skew/*/go.mod; do
    v=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3; exit}' "$m")
    name="live-basic@kube-apiserver-$v"
    echo "== e2e $name"
    t0=$SECONDS nrun=$((nrun + 1))
    # kubesched alone: kube-scheduler v1.37 cannot run against an older API server (skew policy)
    if KUBESCHED_E2E_APISERVER_BIN_DIR="$cache_root/$v" KUBESCHED_E2E_NO_UPSTREAM=1 \
      bash "$here/test-live-basic.sh"; then
      echo "== e2e $name passed in $((SECONDS - t0)) s"
    else failed+=("$name"); echo "== e2e $name FAILED after $((SECONDS - t0)) s"; fi
  done
fi
if [ ${#failed[@]} -gt 0 ]; then echo "run-all: failed: ${failed[*]}"; exit 1; fi
echo "run-all: all $nrun end-to-end tests passed"
