#!/usr/bin/env bash
# Builds the volume tests' dynamic provisioner (tests/e2e/provisioner: a hostPath provisioner on
# the sig-storage external-provisioner library, pinned in its own go.mod) with the machine's Go,
# into
#   ${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/provisioner-<hash of its sources>/provisioner
# A binary built from the same sources is not rebuilt. Prints the binary's path on the last line.
# Env: KUBESCHED_E2E_CACHE, KUBESCHED_E2E_GO_P (go build -p, default: nproc, max 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mod="$here/provisioner"
hash=$(cat "$mod/go.mod" "$mod/go.sum" "$mod/main.go" | sha256sum | cut -c1-12)
bin_dir=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/provisioner-$hash
bin="$bin_dir/provisioner"
if [ -x "$bin" ]; then echo "== provisioner $hash: cached"; echo "$bin"; exit 0; fi
command -v go >/dev/null || { echo "build-provisioner: go is not installed" >&2; exit 1; }
cpus=$(nproc 2>/dev/null || echo 2); [ "$cpus" -le 2 ] || cpus=2
export GOMAXPROCS=${GOMAXPROCS:-$cpus} GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"
mkdir -p "$bin_dir"
tmp="$bin_dir/.provisioner.tmp.$$"
trap 'rm -f "$tmp"' EXIT
t0=$SECONDS
echo "== building the e2e provisioner ($hash) ..."
(cd "$mod" && CGO_ENABLED=0 go build -p "${KUBESCHED_E2E_GO_P:-$cpus}" -trimpath -ldflags "-s -w" -o "$tmp" .)
mv -f "$tmp" "$bin"
echo "== built the provisioner in $((SECONDS - t0)) s"
echo "$bin"
