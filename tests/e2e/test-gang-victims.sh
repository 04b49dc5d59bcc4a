#!/usr/bin/env bash
# Live mode, end to end: a single pod's preemption when its victims belong to PodGroups
# (GenericWorkload, v1.37.2: DefaultPreemption's victims are preemption units, a PodGroup with
# spec.disruptionMode `all` leaving whole, every unit ranked by its PodGroup's priority). kubesched
# and the real kube-scheduler v1.37.2 side by side on one API server started with
# --feature-gates=GenericWorkload=true and --runtime-config=scheduling.k8s.io/v1beta1=true, both
# with the gate, each on its own nodes (1 CPU each; every pod asks 800m: one per node). The
# victims are created bound (spec.nodeName), the preemptor is a lone pod (no group), and every
# scenario has its own nodes (label side=<scenario>-<ks|up>):
#   A. "lone vs all": n1 holds a lone low-priority pod, n2 and n3 one member each of a
#      disruptionMode-all PodGroup of the same priority: both evict the lone pod and go to n1
#      (evicting on n2 or n3 would take both members);
#   B. "all": n1 and n2 hold one member each of a disruptionMode-all PodGroup: both evict the
#      two members (one unit), whichever node they nominate;
#   C. "single": the same with disruptionMode `single`, the member on n1 of lower own priority
#      than the one on n2: both evict the n1 member only and go to n1;
#   D. "group priority": n1 holds a member (own priority low) of a PodGroup whose priority is
#      above the preemptor's, n2 a lone pod of middle priority: both evict the lone pod (the
#      member ranks with its group's priority, which the preemptor cannot beat).
# For each: the pods each scheduler deletes (DisruptionTarget condition and deletionTimestamp),
# the nominated node, the Preempted events' count, and, after the test removes the terminating
# victims (there is no kubelet), the node the preemptor is bound to.
# Usage: tests/e2e/test-gang-victims.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
export KUBESCHED_E2E_APISERVER_FLAGS=$GANG_APISERVER_FLAGS
e2e_begin
gang_begin
kubectl apply -f - >/dev/null <<'YAML' || bad "could not create the PriorityClasses"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-mid}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-top}
value: 2000
YAML

ks_start main "$(ks_config kubesched)" --feature-gates GenericWorkload=true
ks_wait_synced main || exit 1

# pod_group NAME CLASS PRIORITY MODE: a Basic PodGroup with that priority and disruption mode
pod_group() {
  printf -- '---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: %s, namespace: default}\nspec: {priorityClassName: %s, priority: %s, disruptionMode: {%s: {}}, schedulingPolicy: {basic: {}}}\n' \
    "$1" "$2" "$3" "$4"
}
# bound_pod NAME NODE CLASS SIDE [GROUP]: a pod created on NODE (no scheduler), 800m
bound_pod() {
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, labels: {e2e: "1", side: %s}}\nspec:\n  nodeName: %s\n  priorityClassName: %s\n%s  containers:\n  - {name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 800m, memory: 100Mi}}}\n' \
    "$1" "$4" "$2" "$3" "${5:+  schedulingGroup: {podGroupName: $5\}
}"
}
# preemptor NAME SCHEDULER SIDE: a lone high-priority pod for the side's nodes, 800m
preemptor() {
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, labels: {e2e: "1", side: %s, role: preemptor}}\nspec:\n  schedulerName: %s\n  priorityClassName: e2e-high\n  nodeSelector: {side: %s}\n  containers:\n  - {name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 800m, memory: 100Mi}}}\n' \
    "$1" "$3" "$2" "$3"
}
# preempted SIDE: the side's pods being deleted by a preemption, names without the side suffix
preempted() {
  kubectl get pods -l "side=$1" -o json | jq -r --arg s "-$1" '[.items[] | select(.metadata.deletionTimestamp != null) | select(any(.status.conditions[]?; .type == "DisruptionTarget" and .status == "True" and .reason == "PreemptionByScheduler")) | .metadata.name | sub($s + "$"; "")] | sort | join(",")'
}
nominated() { kubectl get pod "pre-$1" -o json | jq -r '.status.nominatedNodeName // "-"' | sed "s/^$1-//"; }
events_of() { kubectl get events --field-selector reason=Preempted -o json | jq --arg s "-$1" '[.items[] | select(.involvedObject.name | endswith($s))] | length'; }

is_bound() { [ -n "$(node_of "$1")" ]; }
has_nomination() { [ "$(nominated "$1")" != - ]; }
victims_are() { [ "$(preempted "$1")" = "$2" ]; }

# scenario NAME WANT_VICTIMS WANT_NODE(or "any"): runs the side's preemptor for both schedulers
# (objects already created) and compares.
scenario() {
  local name=$1 want=$2 want_node=$3 s side who
  for s in ks up; do
    side=$name-$s
    local sched=kubesched; [ $s = up ] && sched=default-scheduler
    preemptor "pre-$side" "$sched" "$side" | kubectl create -f - >/dev/null
    # the victims' deletions come with the nomination (kube-scheduler's asynchronously); a
    # second more lets a scheduler that deletes too much show it
    wait_for "$E2E_TIMEOUT" has_nomination "$side" &&
      { wait_for 10 victims_are "$side" "$want" || true; sleep 1; }
  done
  local v_ks v_up n_ks n_up
  v_ks=$(preempted "$name-ks") v_up=$(preempted "$name-up")
  n_ks=$(nominated "$name-ks") n_up=$(nominated "$name-up")
  note "$name: kube-scheduler deletes '$v_up', nominates $n_up; kubesched deletes '$v_ks', nominates $n_ks"
  [ "$v_up" = "$want" ] && ok "$name: kube-scheduler deletes $want" || bad "$name: kube-scheduler deletes '$v_up', expected '$want'"
  [ "$v_ks" = "$v_up" ] && ok "$name: kubesched deletes the same pods ($v_ks)" || bad "$name: kubesched deletes '$v_ks', kube-scheduler '$v_up'"
  if [ "$want_node" = any ]; then
    [ "$n_ks" != - ] && [ "$n_up" != - ] && ok "$name: both nominate a node" || bad "$name: a nomination is missing"
  else
    [ "$n_up" = "$want_node" ] && [ "$n_ks" = "$want_node" ] && ok "$name: both nominate $want_node" ||
      bad "$name: nominations differ from $want_node: kube-scheduler $n_up, kubesched $n_ks"
  fi
  local e_ks e_up
  e_ks=$(events_of "$name-ks") e_up=$(events_of "$name-up")
  [ "$e_ks" = "$e_up" ] && ok "$name: $e_ks Preempted events on each side" ||
    bad "$name: Preempted events: kubesched $e_ks, kube-scheduler $e_up"
  # the kubelet's part: the terminating victims go; the preemptor is then bound where nominated
  for s in ks up; do
    side=$name-$s who=kubesched; [ $s = up ] && who=kube-scheduler
    kubectl get pods -l "side=$side" -o json |
      jq -r '.items[] | select(.metadata.deletionTimestamp != null) | .metadata.name' |
      xargs -r kubectl delete pod --grace-period=0 --force >/dev/null 2>&1
    if wait_for "$E2E_TIMEOUT" is_bound "pre-$side"; then
      local at; at=$(node_of "pre-$side"); at=${at#"$side"-}
      # (the binding clears status.nominatedNodeName; with victims on two nodes the pod may be
      # retried after the first deletion, on the node that freed first: either is fine there)
      if [ "$want_node" = any ]; then ok "$name: $who binds the preemptor (to $at) once its victims are gone"
      elif [ "$at" = "$want_node" ]; then ok "$name: $who binds the preemptor to its nominated node $at"
      else bad "$name: $who binds the preemptor to $at, nominated $want_node"; fi
    else bad "$name: $who did not bind the preemptor after its victims went"; fi
  done
}

# every scenario's nodes and victims, both sides, before any preemptor
for s in ks up; do
  for sc in lone all single prio; do
    n=3; [ $sc = lone ] || n=2
    for i in $(seq 1 $n); do mk_node "$sc-$s-n$i" 1 4Gi 110 "side=$sc-$s"; done
  done
done | kubectl create -f - >/dev/null
{ for s in ks up; do
    # A: a lone pod on n1, a disruptionMode-all group's members on n2 and n3
    pod_group "ga-$s" e2e-low 10 all
    bound_pod "lone-lone-$s" "lone-$s-n1" e2e-low "lone-$s"
    bound_pod "ga1-lone-$s" "lone-$s-n2" e2e-low "lone-$s" "ga-$s"
    bound_pod "ga2-lone-$s" "lone-$s-n3" e2e-low "lone-$s" "ga-$s"
    # B: a disruptionMode-all group across n1 and n2
    pod_group "gb-$s" e2e-low 10 all
    bound_pod "gb1-all-$s" "all-$s-n1" e2e-low "all-$s" "gb-$s"
    bound_pod "gb2-all-$s" "all-$s-n2" e2e-low "all-$s" "gb-$s"
    # C: a disruptionMode-single group across n1 and n2, the n2 member of higher own priority
    pod_group "gc-$s" e2e-low 10 single
    bound_pod "gc1-single-$s" "single-$s-n1" e2e-low "single-$s" "gc-$s"
    bound_pod "gc2-single-$s" "single-$s-n2" e2e-mid "single-$s" "gc-$s"
    # D: a member of a group above the preemptor (own priority low) on n1, a lone mid pod on n2
    pod_group "gd-$s" e2e-top 2000 all
    bound_pod "gd1-prio-$s" "prio-$s-n1" e2e-low "prio-$s" "gd-$s"
    bound_pod "mid-prio-$s" "prio-$s-n2" e2e-mid "prio-$s"
  done
} | kubectl create -f - >/dev/null 2>"$E2E_DIR/objects.err" ||
  { bad "could not create the victims: $(cat "$E2E_DIR/objects.err")"; exit 1; }
ok "nodes, PodGroups and bound victims created for 4 scenarios on each side"

scenario lone lone n1
scenario all gb1,gb2 any
scenario single gc1 n1
scenario prio mid n2
ks_no_errors main
exit 0
