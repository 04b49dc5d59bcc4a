#!/usr/bin/env bash
# Builds the helm CLI for the chart test (test-helm-chart.sh) from its Go module with the machine's
# Go (no release binary can be downloaded here), into
#   ${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/helm-<version>/helm
# A cached binary that reports the pinned version is not rebuilt. The version is pinned in
# tests/e2e/helm/go.mod, a module of its own so that helm's dependencies never move those of
# kube-apiserver and kube-scheduler (tests/e2e/kube). Prints the binary's path on the last line.
# Env: KUBESCHED_E2E_CACHE, KUBESCHED_E2E_GO_P (go build -p, default: nproc, max 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mod="$here/helm"
version=$(grep -oE "helm.sh/helm/v3 v[0-9][^ ]*" "$mod/go.mod" | head -1 | cut -d" " -f2)
[ -n "$version" ] || { echo "build-helm: cannot read helm's version from $mod/go.mod" >&2; exit 1; }
bin_dir=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/helm-$version
bin="$bin_dir/helm"
if [ -x "$bin" ] && "$bin" version --template '{{.Version}}' 2>/dev/null | grep -qx "$version"; then
  echo "== helm $version: cached"; echo "$bin"; exit 0
fi
command -v go >/dev/null || { echo "build-helm: go is not installed" >&2; exit 1; }
cpus=$(nproc 2>/dev/null || echo 2); [ "$cpus" -le 2 ] || cpus=2
export GOMAXPROCS=${GOMAXPROCS:-$cpus} GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"
mkdir -p "$bin_dir"
tmp="$bin_dir/.helm.tmp.$$"
trap 'rm -f "$tmp"' EXIT
t0=$SECONDS
echo "== building helm $version ..."
(cd "$mod" && CGO_ENABLED=0 go build -p "${KUBESCHED_E2E_GO_P:-$cpus}" -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$version" -o "$tmp" helm.sh/helm/v3/cmd/helm)
mv -f "$tmp" "$bin"
echo "== built helm in $((SECONDS - t0)) s: $("$bin" version --short)"
echo "$bin"
