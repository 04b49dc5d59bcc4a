#!/usr/bin/env bash
# Builds the libFuzzer harnesses (build-fuzz, clang-16, -DKS_FUZZ=ON) and runs each for a bounded
# time over a copy of its committed corpus (tests/fuzz/corpus/<name>, never grown by a run), with
# the dictionary tests/fuzz/kube.dict. Prints per harness the executions, execs/s and libFuzzer's
# cov/ft figures; exits 1 if any harness crashed, leaked or timed out, naming the reproducer.
# Usage: tests/fuzz/run.sh [SECONDS_PER_HARNESS] [HARNESS...]   (default 30 s, every harness)
#        tests/fuzz/run.sh --replay HARNESS FILE                  (runs FILE once, full report)
# HARNESS is the name without fuzz_: quantity config kubeconfig manifest watch simulate.
set -euo pipefail
cd "$(dirname "$0")/../.."

src=tests/fuzz
build=build-fuzz
work=$build/fuzz-work
all=(quantity config kubeconfig manifest watch simulate)
# -max_len: what each input format needs; bigger inputs only make executions slower.
declare -A max_len=([quantity]=64 [config]=8192 [kubeconfig]=8192 [manifest]=16384
                    [watch]=16384 [simulate]=20000)
# Leaks fail the run (libFuzzer's -detect_leaks needs LeakSanitizer on); UBSan stops at the first
# report (the code is also built with -fno-sanitize-recover=undefined).
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

build_harnesses() {
  if ! grep -qs '^KS_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    echo "fuzz: configuring $build (clang-16, -DKS_FUZZ=ON)"
    CC=clang-16 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKS_FUZZ=ON \
      -DKS_BUILD_TESTS=OFF >/dev/null
  fi
  # -j2: the machine's two cores are shared (docs/FUZZING.md).
  cmake --build "$build" -j2 --target ks_fuzz >/dev/null
}

known() {
  local h
  for h in "${all[@]}"; do [ "$h" = "$1" ] && return 0; done
  echo "tests/fuzz/run.sh: unknown harness $1 (known: ${all[*]})" >&2
  return 1
}

if [ "${1:-}" = --replay ]; then
  [ $# -eq 3 ] || { echo "usage: tests/fuzz/run.sh --replay HARNESS FILE" >&2; exit 2; }
  known "$2" || exit 2
  build_harnesses
  exec "$build/tests/fuzz/fuzz_$2" -timeout=10 -rss_limit_mb=2048 "$3" </dev/null
fi

seconds=${1:-30}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "tests/fuzz/run.sh: SECONDS must be a number" >&2; exit 2; }
shift $(($# > 0 ? 1 : 0))
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")
for h in "${harnesses[@]}"; do known "$h" || exit 2; done
build_harnesses

# One harness: a fresh copy of the corpus, a run, the summary; returns libFuzzer's status.
run_one() {
  local h=$1 dir=$work/$1 rc=0
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$src/corpus/$h"/* "$dir/corpus/"
  # -close_fd_mask=2: the code's own warnings on stderr are dropped (they would be most of the
  # log); libFuzzer and the sanitizers keep writing their reports to a duplicate of stderr.
  # </dev/null: an input naming a file relative to its memfd path (/proc/self/fd/N) can name
  # fd 0; it must read an empty file, never wait on a terminal.
  "$build/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -max_len="${max_len[$h]}" \
    -dict="$src/kube.dict" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -close_fd_mask=2 -artifact_prefix="$dir/artifacts/" "$dir/corpus" </dev/null >"$dir/log" 2>&1 ||
    rc=$?
  local done execs rate
  done=$(grep -E '^#[0-9]+' "$dir/log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [^ ]+' || true)
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$dir/log" | grep -oE '[0-9]+$' || true)
  rate=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$dir/log" | grep -oE '[0-9]+$' || true)
  printf 'fuzz_%-11s %4ss  %9s execs  %7s exec/s  %s\n' "$h" "$seconds" "${execs:-?}" \
    "${rate:-?}" "${done:-(no coverage line)}"
  if [ $rc -ne 0 ]; then
    echo "fuzz_$h: FAILED (exit $rc); the end of $dir/log:"
    tail -n 60 "$dir/log" | sed 's/^/    /'
    local unit
    unit=$(grep -oE 'Test unit written to [^ ]+' "$dir/log" | tail -1 | sed 's/Test unit written to //' || true)
    echo "fuzz_$h: reproducer: ${unit:-none written}; replay: tests/fuzz/run.sh --replay $h ${unit:-FILE}"
  fi
  return $rc
}

status=0
for h in "${harnesses[@]}"; do
  run_one "$h" || status=1
done
exit $status
