#!/usr/bin/env bash
# Live mode, end to end, with an out-of-tree plugin: a pod-per-node profile whose Filter is the
# shared object examples/one-pod-per-node builds (OnePodPerNode), built here against the INSTALLED
# SDK (cmake --install, then find_package(kubesched) in a separate project). The same cluster
# (examples/one-pod-per-node/cluster.yaml: 5 nodes, 2 running pods, 5 pending pods) goes through
#   1. `kubesched simulate --cluster FILE --config CFG --output json`, and
#   2. kubesched in live mode against a real API server (objects created before it starts),
# and the node of every pod must be the same in both; the pod simulate finds Unschedulable must
# be unbound in the cluster with the same PodScheduled message. So that the comparison can fail:
# simulate without the plugin must place the pods differently, and live every node must hold at
# most one pod of the profile.
#
# Order: simulate tries pending pods of equal priority in file order; the live queue sorts by
# priority, then by the time each pod entered the queue, i.e. the informer's list order, which is
# by name. The pending pods p01..p05 have equal priority and names in file order, so both try
# them in the same order. Ties: every pod requests 1 CPU / 4Gi and the nodes' sizes differ, so
# NodeResourcesFit's scores never tie among the nodes the plugin lets through (cluster.yaml's
# table); selectHost's random tie-break never comes into play.
# Usage: tests/e2e/test-plugin-so.sh (env: see lib.sh; KUBESCHED_BUILD_DIR, the build tree to
# install the SDK from, default the directory of KUBESCHED_BIN)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
example=$E2E_ROOT/examples/one-pod-per-node
build_dir=${KUBESCHED_BUILD_DIR:-$(dirname "$KS_BIN")}
e2e_begin
profile=one-per-node

# ---- the plugin, built against the installed SDK -------------------------------------------
prefix=$E2E_DIR/sdk
if cmake --install "$build_dir" --prefix "$prefix" >"$E2E_DIR/install.log" 2>&1 &&
   cmake -S "$example" -B "$E2E_DIR/plugin" -DCMAKE_PREFIX_PATH="$prefix" \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >"$E2E_DIR/plugin.log" 2>&1 &&
   cmake --build "$E2E_DIR/plugin" >>"$E2E_DIR/plugin.log" 2>&1 &&
   [ -f "$E2E_DIR/plugin/libone_pod_per_node.so" ]; then
  so=$E2E_DIR/plugin/libone_pod_per_node.so
  ok "built examples/one-pod-per-node against the SDK installed in $prefix"
else
  bad "could not install the SDK from $build_dir or build the plugin"; tail -n 20 "$E2E_DIR"/install.log "$E2E_DIR"/plugin.log
  exit 1
fi

# One configuration for both runs: the example's, with the plugin path made absolute and the
# client connection of a live scheduler added (simulate does not connect).
cfg=$E2E_DIR/one-per-node.yaml
{
  sed "s|kubeschedPluginPath: .*|kubeschedPluginPath: $so|" "$example/config.yaml"
  echo "clientConnection: {kubeconfig: $KUBESCHED_E2E_SCHEDULER_KUBECONFIG, qps: 5000, burst: 5000}"
} >"$cfg"
grep -q "kubeschedPluginPath: $so" "$cfg" || { bad "could not point $cfg at $so"; exit 1; }
plain=$(ks_config "$profile") # the same profile name, upstream's defaults, no plugin

# ---- simulate, with and without the plugin ------------------------------------------------
# last record per pod -> "name node-or-UNSCHEDULED" lines, sorted
placements() { jq -r '[.pods[] | {key: .name, value: .}] | from_entries | to_entries[]
  | "\(.key) \(if .value.result == "Scheduled" then .value.node else "UNSCHEDULED" end)"' "$1" | sort; }
if "$KS_BIN" simulate --cluster "$example/cluster.yaml" --config "$cfg" --output json \
     >"$E2E_DIR/sim.json" 2>"$E2E_DIR/sim.err" &&
   "$KS_BIN" simulate --cluster "$example/cluster.yaml" --config "$plain" --output json \
     >"$E2E_DIR/sim-plain.json" 2>>"$E2E_DIR/sim.err"; then
  ok "kubesched simulate ran with and without the plugin"
else
  bad "kubesched simulate failed: $(head -c 600 "$E2E_DIR/sim.err")"; exit 1
fi
sim=$(placements "$E2E_DIR/sim.json") sim_plain=$(placements "$E2E_DIR/sim-plain.json")
echo "simulate with OnePodPerNode:"; sed 's/^/  /' <<<"$sim"
echo "simulate without it:"; sed 's/^/  /' <<<"$sim_plain"
if [ "$(wc -l <<<"$sim")" -ge 5 ] && [ "$sim" != "$sim_plain" ]; then
  ok "the plugin changes simulate's placements"
else bad "simulate places the pods the same with and without the plugin"; fi
# nodes that get two pods of the profile; pre-0 runs on node-e from the start (cluster.yaml)
dup=$(printf '%s\n' "$sim" "pre-0 node-e" | awk '$2 != "UNSCHEDULED" {print $2}' | sort | uniq -d)
if [ -z "$dup" ]; then ok "simulate with the plugin: at most one $profile pod per node"
else bad "simulate with the plugin put two $profile pods on: $dup"; fi

# ---- live: the same objects, created before kubesched starts ------------------------------
if kubectl create -f "$example/cluster.yaml" >"$E2E_DIR/create.log" 2>&1; then ok "created cluster.yaml's nodes and pods"
else bad "kubectl create -f cluster.yaml: $(tail -n 3 "$E2E_DIR/create.log")"; exit 1; fi
ks_start main "$cfg"
ks_wait_synced main || exit 1
n_pending=$(wc -l <<<"$sim")
n_unsched=$(grep -c ' UNSCHEDULED$' <<<"$sim")
n_sched=$((n_pending - n_unsched))
settled() { # every pod simulate scheduled is bound; every pod it did not has PodScheduled=False
  local pods; pods=$(kubectl get pods -n default -o json) || return 1
  [ "$(jq '[.items[] | select(.spec.schedulerName=="one-per-node" and .metadata.name != "pre-0")
            | select((.spec.nodeName // "") != "" or any(.status.conditions[]?; .type=="PodScheduled" and .status=="False"))]
          | length' <<<"$pods")" -ge "$n_pending" ]
}
if wait_for "$E2E_TIMEOUT" settled; then ok "live: every pending pod was bound or marked unschedulable"
else bad "live: pods not settled in ${E2E_TIMEOUT}s"; kubectl get pods -o wide; fi
sleep 2 # a retry of the unschedulable pod must not change anything either
live=$(kubectl get pods -n default -o json | jq -r '.items[] | select(.spec.schedulerName=="one-per-node" and .metadata.name != "pre-0")
  | "\(.metadata.name) \(if (.spec.nodeName // "") != "" then .spec.nodeName else "UNSCHEDULED" end)"' | sort)
echo "live with OnePodPerNode:"; sed 's/^/  /' <<<"$live"
while read -r name want; do
  got=$(awk -v n="$name" '$1 == n {print $2}' <<<"$live")
  if [ "$got" = "$want" ]; then ok "$name: live $got, as simulate"
  else bad "$name: live '${got:-missing}', simulate $want"; fi
done <<<"$sim"
if [ "$live" = "$sim" ]; then ok "live placements equal simulate's, pod by pod ($n_sched bound, $n_unsched unschedulable)"
else bad "live placements differ from simulate's"; fi
if [ "$live" != "$sim_plain" ]; then ok "live placements differ from simulate without the plugin"
else bad "live placements equal the no-plugin simulation: the plugin had no effect"; fi

# the unschedulable pod(s): the same message as simulate's
for name in $(awk '$2 == "UNSCHEDULED" {print $1}' <<<"$sim"); do
  want=$(jq -r --arg n "$name" '[.pods[] | select(.name == $n)] | last | .message' "$E2E_DIR/sim.json")
  got=$(pod_cond "$name")
  if [ "$got" = "False|Unschedulable|$want" ]; then ok "$name: PodScheduled=False, Unschedulable, simulate's message: $want"
  else bad "$name: PodScheduled '$got', simulate's message '$want'"; fi
done
# the bound ones: bound by kubesched (Scheduled events, events.k8s.io/v1)
kubectl get events.v1.events.k8s.io -n default -o json >"$E2E_DIR/events.json"
for name in $(awk '$2 != "UNSCHEDULED" {print $1}' <<<"$sim"); do
  by=$(jq -r --arg n "$name" '[.items[] | select(.reason=="Scheduled" and .regarding.name==$n) | .reportingController] | join(",")' "$E2E_DIR/events.json")
  if [ "$by" = kubesched ]; then ok "$name: Scheduled event from kubesched"; else bad "$name: Scheduled events from '$by'"; fi
done

ks_stop main TERM
if [ "$KS_RC" = 0 ]; then ok "kubesched exited 0 on SIGTERM"; else bad "kubesched exited $KS_RC on SIGTERM"; fi
ks_no_errors main
exit 0
