#!/usr/bin/env bash
# The whole test suite: builds kubesched twice (plain, and with AddressSanitizer +
# UndefinedBehaviorSanitizer) and runs every Criterion suite and the install/example test in
# both. Exits non-zero on any failure. Usage: tests/run.sh [--no-sanitize]
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

run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKS_SANITIZE=OFF
if [ "${1:-}" != "--no-sanitize" ]; then
  # detect_leaks: every test must free what it allocates.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DKS_SANITIZE=ON
fi
if [ $status -ne 0 ]; then echo "tests/run.sh: FAILED"; else echo "tests/run.sh: all suites passed"; fi
exit $status
