#!/usr/bin/env bash
# Cluster test 6: `helm uninstall` leaves nothing behind: no object the chart made (any kind, by
# the release's labels and names, cluster-wide objects included), no kubesched pod, container or
# process on the node. The Lease is kubesched's own (as kube-scheduler's): it goes with the
# namespace, which is deleted last; then nothing is left of the release at all.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if out=$("$HELM" uninstall "$REL" -n "$NS" --wait --timeout "${T}s" 2>&1); then ok "helm uninstall $REL"
else bad "helm uninstall: $out"; fi
gone() { [ -z "$(ks_pods)" ] && [ -z "$(kubectl get pods -n "$NS" -o name 2>/dev/null)" ]; }
wait_for "$T" gone && ok "no kubesched pod left" || bad "pods left: $(kubectl get pods -n "$NS" -o name | tr '\n' ' ')"
kinds=deployments,replicasets,pods,configmaps,services,serviceaccounts,roles,rolebindings,secrets
left=$(kubectl get "$kinds" -n "$NS" -l app.kubernetes.io/instance="$REL" -o name)
[ -z "$left" ] && ok "no namespaced object labelled app.kubernetes.io/instance=$REL" || bad "left: $left"
left=$(kubectl get clusterroles,clusterrolebindings -o name | grep -E "/$REL(-|$)")
[ -z "$left" ] && ok "no ClusterRole or ClusterRoleBinding $REL" || bad "left: $left"
left=$(kubectl get "$kinds" -n "$NS" -o name | grep -v -e '^configmap/kube-root-ca.crt$' -e '^serviceaccount/default$')
[ -z "$left" ] && ok "namespace $NS holds nothing but its default ServiceAccount and kube-root-ca.crt" || bad "left in $NS: $left"
leases=$(kubectl get leases -n "$NS" -o name)
note "left by kubesched itself (not by the chart): ${leases:-no Lease}"
kubectl delete namespace "$NS" --wait=true --timeout="${T}s" >/dev/null 2>&1 && ok "namespace $NS deleted" || bad "namespace $NS not deleted"
# Running tasks of containers of the kubesched or plugin image (the kubelet removes the records of
# exited containers later, by its container garbage collection).
ks_tasks() {
  local ids id
  ids=$($KUBESCHED_CLUSTER_CTR containers ls 2>/dev/null | awk -v a="$KUBESCHED_CLUSTER_IMAGE" -v b="$KUBESCHED_CLUSTER_PLUGIN_IMAGE" '$2 == a || $2 == b {print $1}')
  for id in $ids; do $KUBESCHED_CLUSTER_CTR tasks ls 2>/dev/null | awk -v i="$id" '$1 == i && $3 == "RUNNING"'; done
}
no_ks_tasks() { [ -z "$(ks_tasks)" ]; }
wait_for 30 no_ks_tasks && ok "no kubesched container runs in containerd" || bad "kubesched tasks still running: $(ks_tasks)"
no_ks_proc() { [ -z "$(kubepods_procs kubesched)" ]; }
wait_for 30 no_ks_proc && ok "no kubesched process in the node's pods" || bad "kubesched processes in kubepods: $(kubepods_procs kubesched)"
left=$(kubectl get secrets -A -l owner=helm,name="$REL" -o name)
[ -z "$left" ] && ok "no helm release Secret left" || bad "release secrets left: $left"
exit 0
