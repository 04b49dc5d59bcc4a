#!/usr/bin/env bash
# Builds scheduler-plugins' two programs for the coscheduling comparison
# (tests/e2e/test-coscheduling-upstream.sh) from its Go module with the machine's Go, into
#   ${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/scheduler-plugins-<version>/
#     kube-scheduler   kube-scheduler built with scheduler-plugins' plugins (Coscheduling among them)
#     controller       its controller manager, whose PodGroup controller writes PodGroup status
#     podgroups-crd.yaml, elasticquotas-crd.yaml  its CRDs, copied from the module (config/crd/bases;
#                      the controller reconciles both kinds and wants both served)
# The version is pinned in tests/e2e/scheduler-plugins/go.mod, a module of its own (Kubernetes
# v1.30 libraries) next to ../kube (v1.37). A cached build of the pinned version is not redone.
# Prints the folder on the last line ("bin dir: ...").
# Env: KUBESCHED_E2E_CACHE, KUBESCHED_E2E_GO_P (go build -p, default: nproc, max 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mod="$here/scheduler-plugins"
version=$(awk '$1 == "require" && $2 == "sigs.k8s.io/scheduler-plugins" {print $3; exit}' "$mod/go.mod")
[ -n "$version" ] || { echo "build-scheduler-plugins: cannot read the version from $mod/go.mod" >&2; exit 1; }
bin_dir=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/scheduler-plugins-$version
stamp="$bin_dir/.built"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ] && [ -x "$bin_dir/kube-scheduler" ] &&
   [ -x "$bin_dir/controller" ] && [ -f "$bin_dir/podgroups-crd.yaml" ] && [ -f "$bin_dir/elasticquotas-crd.yaml" ]; then
  echo "== scheduler-plugins $version: cached"; echo "bin dir: $bin_dir"; exit 0
fi
command -v go >/dev/null || { echo "build-scheduler-plugins: go is not installed" >&2; exit 1; }
cpus=$(nproc 2>/dev/null || echo 2); [ "$cpus" -le 2 ] || cpus=2
export GOMAXPROCS=${GOMAXPROCS:-$cpus} GOTOOLCHAIN=${GOTOOLCHAIN:-local}
# -mod=mod: go.sum is complete; let go fill in a line it misses rather than fail.
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"
mkdir -p "$bin_dir"
rm -f "$stamp"
trap 'rm -f "$bin_dir"/.*.tmp.$$' EXIT
t0=$SECONDS
# scheduler-plugins' Makefile stamps its version into component-base the same way.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version"
for prog in scheduler controller; do
  out=$prog; [ "$prog" = scheduler ] && out=kube-scheduler
  echo "== building scheduler-plugins $version cmd/$prog ..."
  (cd "$mod" && CGO_ENABLED=0 go build -p "${KUBESCHED_E2E_GO_P:-$cpus}" -trimpath -ldflags "$ldflags" \
     -o "$bin_dir/.$out.tmp.$$" "sigs.k8s.io/scheduler-plugins/cmd/$prog")
  mv -f "$bin_dir/.$out.tmp.$$" "$bin_dir/$out"
done
src=$(cd "$mod" && go list -m -f '{{.Dir}}' sigs.k8s.io/scheduler-plugins)
for kind in podgroups elasticquotas; do
  cp "$src/config/crd/bases/scheduling.x-k8s.io_$kind.yaml" "$bin_dir/$kind-crd.yaml"
  chmod u+w "$bin_dir/$kind-crd.yaml"
done
echo "$version" >"$stamp"
echo "== built scheduler-plugins $version in $((SECONDS - t0)) s"
echo "bin dir: $bin_dir"
