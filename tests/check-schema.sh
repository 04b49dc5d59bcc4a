#!/usr/bin/env bash
# Whether the committed Kubernetes field schema (core/api/kube_schema.c) is what its generator
# (core/api/schema-gen) writes now: regenerates it into a temporary file and diffs the two. Needs Go
# and the k8s.io modules go.mod names (module cache or proxy), so it is not part of the test
# suite; run it after changing the generator or its go.mod, and commit the regenerated file.
# Usage: tests/check-schema.sh          exit 1 and show the diff when they differ
#        tests/check-schema.sh --fix    rewrite core/api/kube_schema.c
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "check-schema: go is not installed"; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
(cd core/api/schema-gen && GOFLAGS=-mod=mod go run .) >"$tmp"
if [ "${1:-}" = --fix ]; then
  cp "$tmp" core/api/kube_schema.c
  echo "check-schema: core/api/kube_schema.c regenerated"
  exit 0
fi
if ! diff -u core/api/kube_schema.c "$tmp"; then
  echo "check-schema: core/api/kube_schema.c is not what core/api/schema-gen writes;"
  echo "check-schema: run tests/check-schema.sh --fix (and commit)"
  exit 1
fi
echo "check-schema: ok"
