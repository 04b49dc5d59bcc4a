#!/usr/bin/env bash
# Differential fuzzing of core/cel against upstream's DRA CEL (docs/CEL.md): builds (or reuses)
# tests/tools/cel-oracle, then runs CASES random selectors and devices from SEED.
# Usage: tests/cel/difffuzz.sh PATH/TO/cel_difffuzz CASES SEED     (exit 77: no Go to build the oracle)
# A longer campaign: tests/cel/difffuzz.sh build/tests/cel_difffuzz 100000 $RANDOM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fuzz=$1 cases=$2 seed=$3
out=$("$here/../tools/cel-oracle/build.sh") || { rc=$?; [ $rc = 77 ] && { echo "cel difffuzz: no go; skipped"; exit 77; }; echo "$out"; exit $rc; }
oracle=$(tail -1 <<<"$out")
exec "$fuzz" "$oracle" "$cases" "$seed"
