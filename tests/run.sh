#!/usr/bin/env bash
# The whole test suite: checks the house format (tests/check-format.sh) and the layers
# (tests/check-layers.sh), builds kubesched twice (plain, and with AddressSanitizer +
# UndefinedBehaviorSanitizer) and runs every Criterion suite and the install/example test in
# both; then the live-mode end-to-end tests (tests/e2e/run-all.sh) against a real etcd +
# kube-apiserver + kube-scheduler built from their Go modules (cached in ~/.cache/kubesched-e2e;
# the first build on a machine takes about 15 minutes), with the plain binary, and the basic live
# test once more with the sanitizer binary, and the cluster tests (tests/cluster/run.sh: the
# Dockerfile's image deployed by the Helm chart on a real one-node cluster). Exits non-zero on any
# failure.
# After the sanitizer suite, the libFuzzer harnesses run 30 s each (tests/fuzz/run.sh,
# docs/FUZZING.md; build-fuzz with clang-16).
# Usage: tests/run.sh [--no-sanitize] [--no-fuzz] [--no-e2e]
set -euo pipefail
cd "$(dirname "$0")/.."

"$(dirname "$0")/install-deps.sh"

jobs=$(nproc 2>/dev/null || echo 2)
status=0
run_suite() {
  local dir=$1; shift
  echo "== build $dir ($*)"
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  echo "== test $dir"
  if ! ctest --test-dir "$dir" --output-on-failure; then status=1; fi
}

sanitize=1 fuzz=1 e2e=1
for a in "$@"; do
  case "$a" in
    --no-sanitize) sanitize=0 ;;
    --no-fuzz) fuzz=0 ;;
    --no-e2e) e2e=0 ;;
    *) echo "tests/run.sh: unknown argument $a (use --no-sanitize, --no-fuzz, --no-e2e)"; exit 2 ;;
  esac
done

echo "== format (tests/check-format.sh: clang-format-16 with .clang-format)"
if ! tests/check-format.sh; then status=1; fi
run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKS_SANITIZE=OFF
echo "== layers (tests/check-layers.sh build: the includes, then the symbols of the libraries)"
if ! tests/check-layers.sh build; then status=1; fi
if [ $sanitize = 1 ]; then
  # detect_leaks: every test must free what it allocates.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DKS_SANITIZE=ON
fi
if [ $fuzz = 1 ]; then
  echo "== fuzz (tests/fuzz/run.sh 30)"
  if ! tests/fuzz/run.sh 30; then status=1; fi
fi
if [ $e2e = 1 ]; then
  echo "== e2e (tests/e2e/run-all.sh, build/kubesched)"
  if ! KUBESCHED_BIN="$PWD/build/kubesched" tests/e2e/run-all.sh; then status=1; fi
  if [ $sanitize = 1 ]; then
    echo "== e2e live-basic with the sanitizer binary (build-asan/kubesched)"
    if ! KUBESCHED_BIN="$PWD/build-asan/kubesched" LIVE_TIMEOUT=120 tests/e2e/run-all.sh live-basic; then status=1; fi
  fi
  echo "== cluster (tests/cluster/run.sh: the image from the Dockerfile, the chart on a real one-node cluster)"
  if ! tests/cluster/run.sh; then status=1; fi
fi
if [ $status -ne 0 ]; then echo "tests/run.sh: FAILED"; else echo "tests/run.sh: all suites passed"; fi
exit $status
