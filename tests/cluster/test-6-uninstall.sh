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
kinds=deployments,replicasets,pods,configmaps,services,serviceaccounts,roles,rolebindings,secrets,endpoints
left=$(kubectl get "$kinds" -n "$NS" -l app.kubernetes.io/instance="$REL" -o name 2>&1)
[ -z "$left" ] && ok "no namespaced object labelled app.kubernetes.io/instance=$REL" || bad "left: $left"
left=$(kubectl get clusterroles,clusterrolebindings -o name | grep -E "/$REL(-|$)")
[ -z "$left" ] && ok "no ClusterRole or ClusterRoleBinding $REL" || bad "left: $left"
left=$(kubectl get "$kinds" -n "$NS" -o name | grep -v -e '^configmap/kube-root-ca.crt$' -e '^serviceaccount/default$')
[ -z "$left" ] && ok "namespace $NS holds nothing but its default ServiceAccount and kube-root-ca.crt" || bad "left in $NS: $left"
leases=$(kubectl get leases -n "$NS" -o name)
note "left by kubesched itself (not by the chart): ${leases:-no Lease}"
kubectl delete namespace "$NS" --wait=true --timeout="${T}s" >/dev/null 2>&1 && ok "namespace $NS deleted" || bad "namespace $NS not deleted"
c=$($KUBESCHED_CLUSTER_CTR containers ls 2>/dev/null | grep -c -e "$KUBESCHED_CLUSTER_IMAGE" -e "$KUBESCHED_CLUSTER_PLUGIN_IMAGE" || true)
[ "$c" = 0 ] && ok "no kubesched container in containerd" || bad "$c kubesched containers left in containerd"
no_ks_proc() { [ -z "$(kubepods_procs kubesched)" ]; }
wait_for 30 no_ks_proc && ok "no kubesched process in the node's pods" || bad "kubesched processes in kubepods: $(kubepods_procs kubesched)"
left=$(kubectl get secrets -A -l owner=helm,name="$REL" -o name)
[ -z "$left" ] && ok "no helm release Secret left" || bad "release secrets left: $left"
exit 0
