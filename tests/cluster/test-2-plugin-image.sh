#!/usr/bin/env bash
# Cluster test 2: an out-of-tree plugin delivered as an image through the chart's init container
# (values pluginImages) changes live placements. The image (images/plugin/Dockerfile) holds
# examples/one-pod-per-node built against the SDK of the Dockerfile's build stage; `helm upgrade`
# adds it with a second profile, one-per-node, that enables its Filter OnePodPerNode. On the
# one real node: two pods of profile kubesched both run there; of two pods of profile
# one-per-node the first runs and the second is turned away by the plugin ("node(s) already had
# a pod of this profile") until the first is deleted, then runs.
# Leaves the release with both profiles (values in $WORK/values-plugin.yaml) for test 3.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

cat >"$WORK/values-plugin.yaml" <<YAML
pluginImages:
- {name: one-pod-per-node, image: $KUBESCHED_CLUSTER_PLUGIN_IMAGE, path: /plugins/.}
profiles:
- schedulerName: $REL
- schedulerName: one-per-node
  plugins:
    filter:
      enabled: [{name: OnePodPerNode}]
  pluginConfig:
  - name: OnePodPerNode
    args: {kubeschedPluginPath: /opt/kubesched/plugins/libone_pod_per_node.so}
YAML
if out=$("$HELM" upgrade "$REL" "$CHART" -n "$NS" "${helm_args[@]}" -f "$WORK/values-plugin.yaml" --wait --timeout "${T}s" 2>&1); then
  ok "helm upgrade with pluginImages ($KUBESCHED_CLUSTER_PLUGIN_IMAGE) and profile one-per-node"
else bad "helm upgrade: $out"; exit 1; fi
pod=$(ks_pods | head -1)
init=$(kubectl get pod "$pod" -n "$NS" -o json | jq -r '.status.initContainerStatuses[]? | "\(.name) \(.state.terminated.reason // "-") \(.state.terminated.exitCode // "-")"')
[ "$init" = "plugin-one-pod-per-node Completed 0" ] && ok "the init container copied the plugin ($init)" || bad "init container: '$init'"
wait_for 30 lease_held || bad "no leader after the upgrade"

workload k1 "$REL" | kubectl create -f - >/dev/null
workload k2 "$REL" | kubectl create -f - >/dev/null
workload o1 one-per-node | kubectl create -f - >/dev/null
wait_for "$T" running o1 || bad "o1 not Running: $(pod_phase o1) $(pod_cond o1)"
workload o2 one-per-node | kubectl create -f - >/dev/null
if wait_for "$T" running k1 && wait_for "$T" running k2; then ok "profile $REL: k1 and k2 both run on $KUBESCHED_CLUSTER_NODE"
else bad "k1/k2: $(pod_phase k1) $(pod_phase k2)"; fi
rejected() { pod_cond o2 | grep -q "^False|Unschedulable|.*node(s) already had a pod of this profile"; }
if running o1 && wait_for 30 rejected; then ok "profile one-per-node: o1 runs, o2 is turned away by the plugin: $(pod_cond o2 | cut -d'|' -f3)"
else bad "o2's condition: $(pod_cond o2); o1 $(pod_phase o1)"; fi
sleep 2
[ -z "$(node_of o2)" ] && ok "o2 stays unbound while o1 runs" || bad "o2 bound to $(node_of o2)"
kubectl delete pod o1 --grace-period=1 --wait=true >/dev/null
if wait_for "$T" running o2; then ok "o1 deleted: o2 is scheduled and runs on $(node_of o2)"
else bad "o2 after o1's deletion: $(pod_phase o2) $(pod_cond o2)"; fi
cleanup_workloads
exit 0
