#!/usr/bin/env bash
# Builds tests/tools/dra-alloc-oracle (upstream's structured allocator:
# k8s.io/dynamic-resource-allocation/structured v0.37.2) with the machine's Go through the module
# proxy, into
#   ${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/dra-alloc-oracle-<hash of go.mod, go.sum, main.go>/dra-alloc-oracle
# A cached binary is not rebuilt. Prints the binary's path on the last line; exit 77 when no Go.
# Env: KUBESCHED_E2E_CACHE, KUBESCHED_E2E_GO_P (go build -p, default: nproc, max 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null || { echo "dra-alloc-oracle: go is not installed" >&2; exit 77; }
hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
dir=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/dra-alloc-oracle-$hash
bin="$dir/dra-alloc-oracle"
if [ -x "$bin" ]; then echo "== dra-alloc-oracle: cached"; echo "$bin"; exit 0; fi
cpus=$(nproc 2>/dev/null || echo 2); [ "$cpus" -le 2 ] || cpus=2
export GOMAXPROCS=${GOMAXPROCS:-$cpus} GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"
mkdir -p "$dir"
tmp="$dir/.dra-alloc-oracle.tmp.$$"
trap 'rm -f "$tmp"' EXIT
t0=$SECONDS
echo "== building dra-alloc-oracle ..."
(cd "$here" && CGO_ENABLED=0 go build -p "${KUBESCHED_E2E_GO_P:-$cpus}" -trimpath -ldflags "-s -w" -o "$tmp" .)
mv -f "$tmp" "$bin"
echo "== built dra-alloc-oracle in $((SECONDS - t0)) s"
echo "$bin"
