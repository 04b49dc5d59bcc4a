#!/usr/bin/env bash
# The cluster tests: kubesched deployed by its Helm chart on a real one-node cluster, its image
# built from the repository's Dockerfile, the pods it schedules run by a real kubelet.
#
#   1. build (cached): etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubelet,
#      kube-proxy (tests/e2e/build-control-plane.sh), helm (tests/e2e/build-helm.sh), the images
#      (build-images.sh: Debian base, pause, workload, kubesched from the Dockerfile, plugin);
#   2. one cluster (up.sh) for all six tests, in order, each starting from what the previous left:
#        test-1-install.sh          helm install; kubesched as a hardened pod: Ready, Lease, pods run
#        test-2-plugin-image.sh     an out-of-tree plugin from an image (init container) places pods
#        test-3-upgrade-profile.sh  helm upgrade with a changed profile takes effect
#        test-4-leader-election.sh  two replicas; the leader pod deleted; the other takes over
#        test-5-rbac.sh             each RBAC rule removed: its operations 403
#        test-6-uninstall.sh        helm uninstall leaves nothing behind
#   3. teardown (down.sh, a trap: also when a test fails or on ^C): every process stopped, the
#      machine restored (sysctls, netfilter, mounts, cgroups, links, paths) and compared with
#      before; a difference fails the run.
# A setup step that fails stops the run with what went wrong (exit 1). The figures measured (time
# to Ready, memory of the kubesched pod, takeover time ...) are printed at the end.
#
# Usage: tests/cluster/run.sh [N ...]   (N: test numbers to run, default all; tests after the
#        first that is run start from whatever state the skipped ones would have left -- run a
#        prefix, e.g. `run.sh 1 2`)
# Needs root and tests/install-deps.sh's packages (containerd, runc, buildah, debootstrap,
# containernetworking-plugins, nftables). Env: KUBESCHED_E2E_CACHE, KUBESCHED_CLUSTER_TIMEOUT.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
e2e=$(cd "$here/../e2e" && pwd)

if [ "${1:-}" = --in-cluster ]; then
  # Inside up.sh: the env is loaded; run the tests and print the figures.
  shift
  pass=0 fail=0 failed=()
  for t in "$@"; do
    f=$(ls "$here"/test-"$t"-*.sh 2>/dev/null | head -1)
    [ -n "$f" ] || { echo "cluster/run: no test $t"; fail=$((fail + 1)); continue; }
    echo "== $(basename "$f")"
    t0=$SECONDS
    "$f" 2>&1 | tee "$KUBESCHED_CLUSTER_DIR/$(basename "$f" .sh).out"
    rc=${PIPESTATUS[0]}
    echo "== $(basename "$f"): rc $rc, $((SECONDS - t0)) s"
    echo "test_$(basename "$f" .sh)_s $((SECONDS - t0))" >>"$KUBESCHED_CLUSTER_DIR/figures"
    if [ "$rc" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$(basename "$f")"); fi
  done
  echo "== figures:"; sed 's/^/   /' "$KUBESCHED_CLUSTER_DIR/figures" 2>/dev/null
  cp "$KUBESCHED_CLUSTER_DIR/figures" "${KUBESCHED_CLUSTER_FIGURES:-/dev/null}" 2>/dev/null || true
  echo "== cluster tests: $pass passed, $fail failed${failed:+ (${failed[*]})}"
  [ "$fail" = 0 ]
  exit
fi

tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(1 2 3 4 5 6)
[ "$(id -u)" = 0 ] || { echo "cluster/run: FAILED: needs root (containerd, kubelet, netfilter, cgroups)"; exit 1; }
t_all=$SECONDS
step() { # label command...: a setup step; its failure ends the run loudly
  local label=$1 t0=$SECONDS log; shift
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    echo "cluster/run: FAILED at setup step '$label' (rc $?):"; tail -n 40 "$log"; rm -f "$log"; exit 1
  fi
  grep -E '^== ' "$log" | sed 's/^/   /'
  rm -f "$log"
  echo "== $label: $((SECONDS - t0)) s"
}
step "node and control-plane binaries" "$e2e/build-control-plane.sh" etcd kube-apiserver kube-scheduler kube-controller-manager kubelet kube-proxy
step "helm" "$e2e/build-helm.sh"
step "images" "$here/build-images.sh"
export KUBESCHED_CLUSTER_FIGURES
KUBESCHED_CLUSTER_FIGURES=$(mktemp)
t_up=$SECONDS
"$here/up.sh" -- "$0" --in-cluster "${tests[@]}"
rc=$?
echo "== cluster/run: rc $rc, $((SECONDS - t_all)) s in all ($((SECONDS - t_up)) s cluster up + tests + teardown)"
rm -f "$KUBESCHED_CLUSTER_FIGURES"
exit $rc
