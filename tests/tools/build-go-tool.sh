#!/usr/bin/env bash
# Builds a test-only Go program of this repository (a folder with its own go.mod, go.sum and
# main.go: tests/tools/cel-oracle, tests/tools/dra-alloc-oracle, tests/e2e/provisioner) with the
# machine's Go through the module proxy, into
#   ${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/NAME-<hash of go.mod, go.sum, main.go>/NAME
# A binary built from the same sources is not rebuilt. Prints the binary's path on the last line.
# Usage: tests/tools/build-go-tool.sh NAME DIR [NO_GO_EXIT]
#   NO_GO_EXIT: the exit status when go is not installed (default 1; the oracles' callers skip
#   on 77).
# Env: KUBESCHED_E2E_CACHE, KUBESCHED_E2E_GO_P (go build -p, default: nproc, max 2)
set -euo pipefail
name=$1 mod=$2 no_go=${3:-1}
hash=$(cat "$mod/go.mod" "$mod/go.sum" "$mod/main.go" | sha256sum | cut -c1-12)
dir=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/$name-$hash
bin="$dir/$name"
if [ -x "$bin" ]; then echo "== $name $hash: cached"; echo "$bin"; exit 0; fi
command -v go >/dev/null || { echo "$name: go is not installed" >&2; exit "$no_go"; }
cpus=$(nproc 2>/dev/null || echo 2); [ "$cpus" -le 2 ] || cpus=2
export GOMAXPROCS=${GOMAXPROCS:-$cpus} GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"
mkdir -p "$dir"
tmp="$dir/.$name.tmp.$$"
trap 'rm -f "$tmp"' EXIT
t0=$SECONDS
echo "== building $name ($hash) ..."
(cd "$mod" && CGO_ENABLED=0 go build -p "${KUBESCHED_E2E_GO_P:-$cpus}" -trimpath -ldflags "-s -w" -o "$tmp" .)
mv -f "$tmp" "$bin"
echo "== built $name in $((SECONDS - t0)) s"
echo "$bin"
