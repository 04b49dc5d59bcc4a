#!/usr/bin/env bash
# Differential fuzzing of core/sched/dra_allocator against upstream's structured allocator:
# builds (or reuses) tests/tools/dra-alloc-oracle, then runs CASES random cases from SEED.
# Usage: tests/tools/dra-alloc-oracle/difffuzz.sh PATH/TO/dra_alloc_difffuzz CASES SEED
#        (exit 77: no Go to build the oracle)
# A longer campaign: tests/tools/dra-alloc-oracle/difffuzz.sh build/tests/dra_alloc_difffuzz 200000 $RANDOM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fuzz=$1 cases=$2 seed=$3
out=$("$here/build.sh") || { rc=$?; [ $rc = 77 ] && { echo "dra-alloc difffuzz: no go; skipped"; exit 77; }; echo "$out"; exit $rc; }
oracle=$(tail -1 <<<"$out")
exec "$fuzz" "$oracle" "$cases" "$seed"
