#!/usr/bin/env bash
# Live mode, end to end: gang scheduling with scheduler-plugins' PodGroup CRD through the
# out-of-tree plugin examples/coscheduling (built as a .so; kubesched lists and watches
# podgroups.scheduling.x-k8s.io for it). On a real API server:
#   1. a group of 4 (minMember 4) on 3 nodes that hold one member each is never partly bound,
#      while its members wait at Permit, are rejected and retried (polled every 0.3 s);
#   2. its pods' FailedScheduling events carry scheduler-plugins' messages;
#   3. it is bound, all 4, as soon as a 4th node appears;
#   4. a group whose PodGroup does not exist is refused at Permit ("PodGroup not found"), and a
#      group created later (a PodGroup Add event) is then placed;
#   5. a PodGroup update (minMember lowered) requeues the pods it blocked at PreFilter;
#   6. a plugin's non-blocking writes (SDK 1.8, the test plugin tests/loader/fixtures/writer.c):
#      ks_object_patch on a custom resource's status subresource and ks_pod_event reach the API
#      server from PostBind.
# The comparison with scheduler-plugins' own kube-scheduler and controller is
# test-coscheduling-upstream.sh.
# Usage: tests/e2e/test-coscheduling.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
so=${KUBESCHED_COSCHEDULING_SO:-$(dirname "$KS_BIN")/tests/fixtures/libcoscheduling.so}
e2e_begin
profile=gang-scheduler

[ -f "$so" ] || { bad "no $so (cmake --build build builds it)"; exit 1; }
kubectl apply -f "$E2E_ROOT/examples/coscheduling/podgroup-crd.yaml" >/dev/null &&
  kubectl wait --for=condition=Established crd/podgroups.scheduling.x-k8s.io --timeout=30s >/dev/null &&
  ok "PodGroup CRD installed" || { bad "could not install the PodGroup CRD"; exit 1; }
# what the chart grants kubesched for the plugin: read the PodGroups
grant_scheduler e2e-podgroups-reader \
  "{apiGroups: [scheduling.x-k8s.io], resources: [podgroups], verbs: [get, list, watch]}"

cfg=$(ks_config "$profile" \
  "profiles:" \
  "- schedulerName: $profile" \
  "  plugins:" \
  "    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: \"*\"}]}" \
  "    preFilter: {enabled: [{name: Coscheduling}]}" \
  "    postFilter: {enabled: [{name: Coscheduling}]}" \
  "    permit: {enabled: [{name: Coscheduling}]}" \
  "    reserve: {enabled: [{name: Coscheduling}]}" \
  "  pluginConfig:" \
  "  - name: Coscheduling" \
  "    args: {kubeschedPluginPath: $so, permitWaitingTimeSeconds: 10}")
for i in 1 2 3; do mk_node "n$i" 1 4Gi | kubectl create -f - >/dev/null; done
ks_start main "$cfg"
ks_wait_synced main || exit 1

gang_pod() { # NAME GROUP
  mk_pod "$1" "$profile" 1 100Mi "scheduling.x-k8s.io/pod-group=$2" "gang=$2"
}
pod_group() { # NAME MIN [TIMEOUT]
  printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: %s, namespace: default}\nspec: {minMember: %s%s}\n' \
    "$1" "$2" "${3:+, scheduleTimeoutSeconds: $3}"
}
bound_count() { kubectl get pods -l "gang=$1" -o json | jq '[.items[] | select((.spec.nodeName // "") != "")] | length'; }

# ---- 1-3: four members, three slots --------------------------------------------------------
pod_group big 4 3 | kubectl create -f - >/dev/null
for i in 1 2 3 4; do gang_pod "big-$i" big; done | kubectl create -f - >/dev/null
partial=0 t0=$SECONDS
while [ $((SECONDS - t0)) -lt 12 ]; do
  b=$(bound_count big)
  if [ "$b" -gt 0 ] && [ "$b" -lt 4 ]; then partial=$b; fi
  sleep 0.3
done
[ "$(bound_count big)" = 0 ] && [ "$partial" = 0 ] &&
  ok "a group of 4 on 3 slots was never partly bound (12 s, polled every 0.3 s)" ||
  bad "the group of 4 was partly bound ($partial, now $(bound_count big))"
events=$(kubectl get events --field-selector reason=FailedScheduling -o json |
  jq -r '.items[] | select(.involvedObject.name | startswith("big-")) | .message' | sort -u)
grep -q "PodGroup default/big gets rejected due to Pod big-[1-4] is unschedulable even after PostFilter" <<<"$events" &&
  ok "FailedScheduling says the group was rejected after PostFilter" ||
  { bad "no PostFilter rejection event"; printf '%s\n' "$events" | head -5; }
grep -qE "0/1 nodes are available: 1 (optimistic rejection in PostFilter|rejection in Unreserve|rejected due to timeout after waiting 3s at plugin Coscheduling)\." <<<"$events" &&
  ok "the waiting members' FailedScheduling events carry the Permit rejection" ||
  { bad "no Permit rejection event"; printf '%s\n' "$events" | head -5; }
t_add=$SECONDS
mk_node n4 1 4Gi | kubectl create -f - >/dev/null
if wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l gang=big -o json | jq '[.items[] | select((.spec.nodeName // \"\") != \"\")] | length')\" = 4 ]"; then
  ok "all 4 members bound $((SECONDS - t_add)) s after a 4th node appeared"
  [ "$(kubectl get pods -l gang=big -o json | jq -r '[.items[].spec.nodeName] | unique | length')" = 4 ] &&
    ok "one member per node" || bad "members share a node"
else bad "the group was not bound after a 4th node appeared ($(bound_count big)/4)"; fi

# ---- 4: a PodGroup that does not exist yet -------------------------------------------------
for i in 1 2; do mk_node "m$i" 2 4Gi | kubectl create -f - >/dev/null; done
for i in 1 2; do gang_pod "late-$i" late; done | kubectl create -f - >/dev/null
if wait_for "$E2E_TIMEOUT" bash -c "kubectl get pod late-1 -o json | jq -r '.status.conditions[]? | select(.type==\"PodScheduled\") | .message' | grep -q 'PodGroup not found'"; then
  ok "a member of a missing PodGroup is refused: $(pod_cond late-1 | cut -d'|' -f3)"
else bad "late-1: no 'PodGroup not found' condition ($(pod_cond late-1))"; fi
pod_group late 2 | kubectl create -f - >/dev/null
wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l gang=late -o json | jq '[.items[] | select((.spec.nodeName // \"\") != \"\")] | length')\" = 2 ]" &&
  ok "creating the PodGroup (an Add event of the watched resource) let the group be placed" ||
  bad "the group was not placed after its PodGroup was created ($(bound_count late)/2)"

# ---- 5: a PodGroup update -------------------------------------------------------------------
pod_group solo 3 | kubectl create -f - >/dev/null
gang_pod solo-1 solo | kubectl create -f - >/dev/null
if wait_for "$E2E_TIMEOUT" bash -c "kubectl get pod solo-1 -o json | jq -r '.status.conditions[]? | .message' | grep -q 'cannot find enough sibling pods, current pods number: 1, minMember of group: 3'"; then
  ok "PreFilter counts the group's pods: $(pod_cond solo-1 | cut -d'|' -f3 | cut -c1-110)"
else bad "solo-1: no sibling-count condition ($(pod_cond solo-1))"; fi
kubectl patch podgroup solo --type merge -p '{"spec":{"minMember":1}}' >/dev/null
wait_for "$E2E_TIMEOUT" bash -c "[ -n \"\$(kubectl get pod solo-1 -o jsonpath='{.spec.nodeName}')\" ]" &&
  ok "lowering minMember (an Update event of the watched resource) requeued and placed solo-1" ||
  bad "solo-1 was not placed after its PodGroup's minMember was lowered"
grep -q "podgroups.v1alpha1.scheduling.x-k8s.ioUpdate" <(ks_metrics main) &&
  ok "the PodGroup events are timed under upstream's custom event label" ||
  bad "no podgroups.v1alpha1.scheduling.x-k8s.ioUpdate in /metrics"
ks_no_errors main

# ---- 6: a plugin writes: a Widget's status and an Event ------------------------------------
writer=$(dirname "$so")/libfix_writer.so
kubectl apply -f - >/dev/null <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.e2e.kubesched.io}
spec:
  group: e2e.kubesched.io
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
grant_scheduler e2e-widgets-writer \
  "{apiGroups: [e2e.kubesched.io], resources: [widgets], verbs: [get, list, watch]}" \
  "{apiGroups: [e2e.kubesched.io], resources: [widgets/status], verbs: [patch]}"
kubectl wait --for=condition=Established crd/widgets.e2e.kubesched.io --timeout=30s >/dev/null
printf 'apiVersion: e2e.kubesched.io/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {size: 1}\n' |
  kubectl create -f - >/dev/null
wcfg=$(ks_config writer-scheduler \
  "profiles:" \
  "- schedulerName: writer-scheduler" \
  "  plugins:" \
  "    postBind: {enabled: [{name: Writer}]}" \
  "  pluginConfig:" \
  "  - name: Writer" \
  "    args: {kubeschedPluginPath: $writer}")
ks_start writer "$wcfg"
ks_wait_synced writer || exit 1
mk_pod written writer-scheduler 100m 100Mi widget=w1 | kubectl create -f - >/dev/null
if wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get widget w1 -o jsonpath='{.status.boundPod}')\" = written ]"; then
  ok "ks_object_patch wrote the Widget's status (boundPod=written, node=$(kubectl get widget w1 -o jsonpath='{.status.node}'))"
  [ "$(kubectl get widget w1 -o jsonpath='{.spec.size}')" = 1 ] && ok "the status write left the spec alone" ||
    bad "the Widget's spec changed"
else bad "the Widget's status was not written ($(kubectl get widget w1 -o json | jq -c .status))"; fi
if wait_for "$E2E_TIMEOUT" bash -c "kubectl get events.events.k8s.io --field-selector reason=WriterBound -o json | jq -e '.items[] | select(.regarding.name == \"written\" and .reportingController == \"kubesched\" and (.note | startswith(\"bound to \")))' >/dev/null"; then
  ok "ks_pod_event recorded a WriterBound event about the pod, reported by kubesched"
else bad "no WriterBound event for the pod"; fi
ks_no_errors writer
exit 0
