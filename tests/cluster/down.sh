#!/usr/bin/env bash
# Tears down a cluster that tests/cluster/up.sh started and puts the machine back as it was:
#   1. kube-controller-manager stops (nothing recreates pods), every pod is deleted and the
#      kubelet stops its containers and sandboxes (CNI DEL: veths, IPAM, masquerade rules);
#   2. the kubelet and kube-proxy stop (`kube-proxy --cleanup` removes its rules);
#   3. containerd kills and deletes whatever task is left, then stops; a shim of this containerd
#      that is still there (its command line names DIR's socket) is killed;
#   4. kube-scheduler, kube-apiserver and etcd stop (tests/e2e/stop-control-plane.sh);
#   5. host-state.sh restore: mounts, cgroups, links, netfilter, sysctls, paths as they were
#      saved before up.sh changed anything, then compared: any difference fails.
# Only processes whose pids up.sh recorded in DIR/pids (and still run the expected binary), and
# processes in cgroups the cluster created, are ever signalled.
# Usage: tests/cluster/down.sh [--keep] [DIR]     (DIR default: $KUBESCHED_CLUSTER_DIR)
#   --keep  keep DIR (logs) afterwards
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
keep=0 dir=
for a in "$@"; do
  case "$a" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) dir=$a ;;
  esac
done
dir=${dir:-${KUBESCHED_CLUSTER_DIR:-}}
[ -n "$dir" ] && [ -d "$dir/host-before" ] || { echo "cluster/down: no cluster dir (DIR/host-before) given" >&2; exit 1; }
cache=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$here/../e2e/kube/go.mod")
bin=$cache/$k8s_version
t0=$SECONDS
rc=0

ours() { [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -q -- "$2"; }
stop_proc() { # name binary [seconds]
  local name=$1 b=$2 secs=${3:-15} f="$dir/pids/$1" pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  ours "$pid" "$b" || { rm -f "$f"; return 0; }
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 $((secs * 10))); do ours "$pid" "$b" || break; sleep 0.1; done
  if ours "$pid" "$b"; then echo "cluster/down: $name ($pid) ignored SIGTERM; SIGKILL" >&2; kill -KILL "$pid" 2>/dev/null; sleep 0.2; fi
  rm -f "$f"
}
alive() { [ -f "$dir/pids/$1" ] && ours "$(cat "$dir/pids/$1")" "$2"; }

CTR="timeout 10 ctr --address $dir/containerd.sock --namespace k8s.io" # a dead containerd: ctr would wait forever
export KUBECONFIG=$dir/cp/admin.kubeconfig

# 1. pods away through the kubelet, while the API server, the kubelet and containerd still run.
stop_proc kube-controller-manager kube-controller-manager
if alive kubelet kubelet && [ -f "$KUBECONFIG" ] && kubectl get --raw /readyz >/dev/null 2>&1; then
  kubectl delete pods --all -A --grace-period=1 --wait=false >/dev/null 2>&1
  for i in $(seq 1 150); do
    [ -z "$(kubectl get pods -A -o name 2>/dev/null)" ] && break; sleep 0.2
  done
  [ -z "$(kubectl get pods -A -o name 2>/dev/null)" ] || echo "cluster/down: pods left after 30 s: $(kubectl get pods -A -o name | tr '\n' ' ')" >&2
  # The kubelet stops the sandboxes of the pods it no longer has (CNI DEL) a moment later.
  for i in $(seq 1 100); do
    [ -z "$($CTR tasks ls -q 2>/dev/null)" ] && break; sleep 0.3
  done
fi
# 2. node agents
stop_proc kubelet kubelet
stop_proc kube-proxy kube-proxy
[ -x "$bin/kube-proxy" ] && "$bin/kube-proxy" --cleanup >"$dir/logs/kube-proxy-cleanup.log" 2>&1
# 3. containerd: what is left of the containers, then containerd itself
if alive containerd containerd; then
  for t in $($CTR tasks ls -q 2>/dev/null); do $CTR tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
  for i in $(seq 1 50); do
    [ -z "$($CTR tasks ls 2>/dev/null | awk 'NR > 1 && $3 != "STOPPED"')" ] && break; sleep 0.2
  done
  for t in $($CTR tasks ls -q 2>/dev/null); do $CTR tasks delete "$t" >/dev/null 2>&1; done
  for c in $($CTR containers ls -q 2>/dev/null); do $CTR containers delete "$c" >/dev/null 2>&1; done
  stop_proc containerd containerd
fi
for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $dir/containerd.sock" 2>/dev/null); do
  echo "cluster/down: killing a shim of this containerd left behind ($pid)" >&2
  kill -KILL "$pid" 2>/dev/null
done
# 4. control plane
if [ -d "$dir/cp/pids" ]; then "$here/../e2e/stop-control-plane.sh" --keep "$dir/cp" >&2 || rc=1; fi
# 5. the machine as it was
if ! out=$("$here/host-state.sh" restore "$dir/host-before" 2>&1); then
  echo "cluster/down: the machine differs from before the cluster:" >&2; echo "$out" >&2; rc=1
elif [ -n "$out" ]; then echo "$out" >&2; fi
left=$(pgrep -af -- "$dir" 2>/dev/null | grep -Ev "^[0-9]+ (\S*/)?(bash|sh|pgrep) " || true)
[ -z "$left" ] || { echo "cluster/down: processes naming $dir are left: $left" >&2; rc=1; }
if [ "$rc" = 0 ]; then
  echo "== cluster down, machine restored ($((SECONDS - t0)) s)" >&2
  [ "$keep" = 1 ] || rm -rf "$dir"
else
  echo "cluster/down: FAILED; $dir kept (logs)" >&2
fi
exit $rc
