#!/usr/bin/env bash
# Builds the real control plane used by the end-to-end tests -- etcd, kube-apiserver and
# kube-scheduler -- from their Go modules (through the Go module proxy) with the machine's Go
# toolchain, into a cache folder that lives outside the work tree:
#
#   ${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/v<k8s version>/{etcd,kube-apiserver,kube-scheduler}
#
# A binary that is already there and reports the pinned version is not rebuilt. The versions
# are read from tests/e2e/kube/go.mod (the only place they are pinned). Prints the time each
# build took, then the folder ("bin dir: ...") on the last line.
#
# Usage: tests/e2e/build-control-plane.sh [--force] [etcd|kube-apiserver|kube-scheduler ...]
#   --force   rebuild even when the cached binary has the pinned version
#   names     build only these (default: all three)
# Env: KUBESCHED_E2E_CACHE (cache root), KUBESCHED_E2E_GO_P (go build -p, default: nproc, max 2)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
mod="$here/kube"

k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$mod/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/ {print $2; exit}' "$mod/go.mod")
if [ -z "$k8s_version" ] || [ -z "$etcd_version" ]; then
  echo "build-control-plane: cannot read the pinned versions from $mod/go.mod" >&2
  exit 1
fi
cache_root=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}
bin_dir="$cache_root/$k8s_version"

force=0
want=()
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    etcd|kube-apiserver|kube-scheduler) want+=("$a") ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build-control-plane: unknown argument: $a" >&2; exit 2 ;;
  esac
done
[ ${#want[@]} -gt 0 ] || want=(etcd kube-apiserver kube-scheduler)

command -v go >/dev/null || { echo "build-control-plane: go is not installed" >&2; exit 1; }

# 2-core machines: one package compiled at a time per core, and no more.
cpus=$(nproc 2>/dev/null || echo 2)
[ "$cpus" -le 2 ] || cpus=2
par=${KUBESCHED_E2E_GO_P:-$cpus}
export GOMAXPROCS=${GOMAXPROCS:-$cpus}
# -mod=mod: let go fill in a go.sum line it misses instead of failing (go.sum is complete).
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"
# The go line of go.mod is below the installed Go; never go looking for another toolchain.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

mkdir -p "$bin_dir"

# Does the cached binary report the pinned version?
have_version() {
  local name=$1 bin="$bin_dir/$1" out
  [ -x "$bin" ] || return 1
  out=$("$bin" --version 2>/dev/null) || return 1
  case "$name" in
    etcd) grep -q "^etcd Version: ${etcd_version#v}\$" <<<"$out" ;;
    *) grep -q "^Kubernetes ${k8s_version}\$" <<<"$out" ;;
  esac
}

build_one() {
  local name=$1 pkg ldflags
  local kv=${k8s_version#v} build_date
  build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  case "$name" in
    etcd)
      pkg=go.etcd.io/etcd/server/v3
      ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${etcd_version}"
      ;;
    kube-apiserver|kube-scheduler)
      pkg=k8s.io/kubernetes/cmd/$name
      ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${k8s_version}"
      ldflags+=" -X k8s.io/component-base/version.gitMajor=${kv%%.*}"
      kv=${kv#*.}
      ldflags+=" -X k8s.io/component-base/version.gitMinor=${kv%%.*}"
      ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
      ldflags+=" -X k8s.io/component-base/version.buildDate=${build_date}"
      ;;
  esac
  local tmp="$bin_dir/.$name.tmp.$$"
  local t0 t1
  t0=$(date +%s)
  echo "== building $name ($pkg, -p $par) ..."
  (cd "$mod" && CGO_ENABLED=0 go build -p "$par" -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg")
  mv -f "$tmp" "$bin_dir/$name"
  t1=$(date +%s)
  echo "== built $name in $((t1 - t0)) s: $("$bin_dir/$name" --version 2>&1 | head -1)"
}

trap 'rm -f "$bin_dir"/.*.tmp.$$' EXIT
total0=$(date +%s)
for name in "${want[@]}"; do
  if [ "$force" = 0 ] && have_version "$name"; then
    echo "== $name: cached at the pinned version, not rebuilt"
  else
    build_one "$name"
  fi
done
echo "== total $(( $(date +%s) - total0 )) s (k8s $k8s_version, etcd $etcd_version)"
echo "bin dir: $bin_dir"
