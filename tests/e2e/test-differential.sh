#!/usr/bin/env bash
# Differential test: the real kube-scheduler against `kubesched simulate`, pod by pod, on random
# clusters (docs/DIFFERENTIAL.md). For each of DIFF_CLUSTERS seeded clusters
# (tests/tools/diff-gen.py: 5-40 nodes, taints, images, bound pods, storage classes, PVs, claims,
# CSINodes with attach limits, ...; about a quarter of the pending pods use volumes, about 12% have
# unbound WaitForFirstConsumer claims that kube-scheduler's VolumeBinding PreBind binds to static
# PVs or has provisioned, with the real PV controller and the e2e provisioner running), the cluster
# is created on the test API server, kube-scheduler is started on it with the configuration below
# at a verbosity that logs per-plugin scores, and DIFF_PODS pending pods are created one at a time;
# each is decided by kube-scheduler, and `kubesched simulate --explain` decides the same pod on
# the snapshot it was decided on (tests/tools/diff-run.py). tests/tools/diff-compare.py then
# compares the outcome, the feasible nodes, every plugin's score, the final scores, the chosen
# node (within the highest-scoring set), the failure message, the preemption (nominated node,
# victims) and the volume binding (the PV or the provisioning PreBind chose for each unbound
# WaitForFirstConsumer claim), prints agreement per check and per plugin, and writes a JSON and a
# Markdown report.
# The test fails when any check agrees on fewer than DIFF_MIN_AGREEMENT percent of the pods it
# applies to.
#
# Usage: tests/e2e/test-differential.sh
# Env: DIFF_SEED (default 1037), DIFF_CLUSTERS (10), DIFF_PODS (pods per cluster, 30),
#      DIFF_MIN_AGREEMENT (99), DIFF_REPORT_DIR (where differential.{json,md} and the per-pod
#      snapshots go; default $E2E_DIR/diff, which is removed at the end unless E2E_KEEP=1),
#      DIFF_PROFILE (a file of extra profile fields, see below; default: the default profile),
#      KUBESCHED_E2E_BIN_DIR (the control plane's binaries), and those of lib.sh.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
seed=${DIFF_SEED:-1037}
clusters=${DIFF_CLUSTERS:-10}
pods=${DIFF_PODS:-30}
min=${DIFF_MIN_AGREEMENT:-99}
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$E2E_HERE/kube/go.mod")
bin_dir=${KUBESCHED_E2E_BIN_DIR:-${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/$k8s_version}
tools=$E2E_ROOT/tests/tools

# The comparison's own parser and rules first (canned klog lines and decisions).
if python3 "$tools/diff-compare.py" --self-test >/dev/null; then ok "diff-compare.py self-test"
else bad "diff-compare.py self-test:"; python3 "$tools/diff-compare.py" --self-test; fi

# The control plane without its kube-scheduler: diff-run.py starts one per cluster, with the
# configuration below, after the cluster's objects exist (so its first list sees all of them).
# With kube-controller-manager (its PersistentVolume controller) and the e2e dynamic provisioner
# (tests/e2e/provisioner, named hostpath.e2e.kubesched.io as diff-gen.py's PROVISIONER, a name a
# CSIDriver can have: capacity tracking): kube-scheduler's VolumeBinding PreBind binds
# the pending pods' unbound WaitForFirstConsumer claims and waits for them (both cached in
# ~/.cache/kubesched-e2e once built).
"$E2E_HERE/build-control-plane.sh" kube-controller-manager >/dev/null ||
  { bad "could not build kube-controller-manager"; exit 1; }
prov_bin=$("$E2E_HERE/build-provisioner.sh" | tail -1) || { bad "could not build the provisioner"; exit 1; }
e2e_begin --with-controller-manager
"$prov_bin" -kubeconfig "$KUBECONFIG" -name hostpath.e2e.kubesched.io -root "$E2E_DIR/hostpath" -v 2 \
  </dev/null >"$E2E_DIR/logs/provisioner.log" 2>&1 &
echo $! >"$E2E_DIR/pids/provisioner"
work=${DIFF_REPORT_DIR:-$E2E_DIR/diff}
mkdir -p "$work"
if [ ! -x "$bin_dir/kube-scheduler" ]; then
  bad "no kube-scheduler at $bin_dir (tests/e2e/build-control-plane.sh builds it)"; exit 1
fi
note "kube-scheduler: $("$bin_dir/kube-scheduler" --version 2>&1); kubesched: $KS_BIN"

# One configuration for both: the default profile, every node scored (percentageOfNodesToScore
# 100, so that the feasible sets are comparable whatever the cluster size).
cfg=$E2E_DIR/diff-scheduler.yaml
cat >"$cfg" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $KUBESCHED_E2E_SCHEDULER_KUBECONFIG, qps: 500, burst: 1000}
leaderElection: {leaderElect: false}
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
EOF
# DIFF_PROFILE: more of the profile (plugins, pluginConfig), as YAML lines indented for the
# profile's mapping (two spaces), e.g. another scoring strategy or other weights.
if [ -n "${DIFF_PROFILE:-}" ]; then
  cat "$DIFF_PROFILE" >>"$cfg" || { bad "cannot read DIFF_PROFILE=$DIFF_PROFILE"; exit 1; }
  note "profile: $(tr '\n' ' ' <"$DIFF_PROFILE" | tr -s ' ' | cut -c1-300)"
fi

# Kept with the report, so that diff-compare.py can be run again on it with another kubesched
# (the kubeconfig it names is not read by simulate).
cp "$cfg" "$work/scheduler-config.yaml"

t0=$SECONDS
if python3 "$tools/diff-run.py" --workdir "$work" --config "$cfg" \
  --scheduler "$bin_dir/kube-scheduler" --seed "$seed" --clusters "$clusters" --pods "$pods"; then
  ok "kube-scheduler decided $((clusters * pods)) pods in $clusters clusters (seed $seed) in $((SECONDS - t0)) s"
else
  bad "diff-run.py failed (seed $seed); see above"
  exit 1
fi
t1=$SECONDS
python3 "$tools/diff-compare.py" --workdir "$work" --kubesched "$KS_BIN" --config "$cfg" \
  --report-json "$work/differential.json" --report-md "$work/differential.md" \
  --min-agreement "$min"
rc=$?
note "compared in $((SECONDS - t1)) s; report: $work/differential.md (and .json)"
case $rc in
  0) ok "every check agrees on at least $min% of the pods" ;;
  1) bad "some check agrees on fewer than $min% of the pods (failing: $(jq -r '.failing_checks | join(", ")' "$work/differential.json"))"
     jq -r '.disagreements[:15][] | "#      \(.pod): \([.checks | to_entries[] | select(.value == false) | .key] | join(",")) \(.details | tostring | .[0:400])"' \
       "$work/differential.json" ;;
  *) bad "diff-compare.py failed (rc $rc)" ;;
esac
exit 0
