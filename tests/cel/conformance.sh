#!/usr/bin/env bash
# Runs the cel-spec conformance tests (cel.dev/expr, the version Kubernetes v1.37 pins) on core/cel.
# The test data comes from the Go module cache, fetched through the Go module proxy when missing
# (`go mod download`, cached for later runs). Exit 77 (skipped) only when neither the module nor
# a Go toolchain to fetch it is there.
# Usage: tests/cel/conformance.sh PATH/TO/cel_conformance [-v]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runner=$1; shift
version=v0.25.1 # cel.dev/expr in k8s.io/kubernetes v1.37.2's go.mod
# The sections DRA's environment covers (docs/CEL.md explains the choice and the files left out).
files=(basic comparisons conversions fp_math integer_math lists logic macros macros2 optionals parse
       plumbing string string_ext bindings_ext)
moddir=""
if command -v go >/dev/null; then
  cache=$(go env GOMODCACHE 2>/dev/null || true)
  [ -n "$cache" ] && [ -d "$cache/cel.dev/expr@$version" ] && moddir="$cache/cel.dev/expr@$version"
  if [ -z "$moddir" ]; then
    moddir=$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "cel.dev/expr@$version" 2>/dev/null |
             sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' || true)
  fi
else
  for d in "${GOMODCACHE:-}" "${GOPATH:-$HOME/go}/pkg/mod" /root/go/pkg/mod; do
    [ -n "$d" ] && [ -d "$d/cel.dev/expr@$version" ] && { moddir="$d/cel.dev/expr@$version"; break; }
  done
fi
if [ -z "$moddir" ] || [ ! -d "$moddir/tests/simple/testdata" ]; then
  echo "cel conformance: cel.dev/expr@$version is not in the module cache and cannot be fetched (no go or no proxy); skipped"
  exit 77
fi
echo "cel conformance: cel.dev/expr@$version from $moddir"
exec "$runner" "$@" "$moddir/tests/simple/testdata" "$here/exclusions.txt" "${files[@]}"
