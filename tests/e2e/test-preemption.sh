#!/usr/bin/env bash
# Live mode, end to end: preemption by kubesched, side by side with the upstream kube-scheduler
# doing the same on its own nodes (nodeSelector keeps the two schedulers apart).
#   basic: a full node (2 CPU) runs a low-priority victim (1500m); a high-priority pod (1500m)
#     preempts it. Checked for each scheduler, and kubesched against default-scheduler:
#     - the victim gets DisruptionTarget=True, reason PreemptionByScheduler, message
#       "<schedulerName>: preempting to accommodate a higher priority pod", then is deleted
#       (deletionTimestamp: it is bound, so it stays Terminating until its kubelet confirms);
#     - a Normal Preempted event (action Preempting) on the victim, no related object (none
#       from kube-scheduler v1.37.2, see below), note
#       "Preempted by pod <preemptor uid> on node <node>", reported by the scheduler;
#     - the preemptor gets status.nominatedNodeName = that node and PodScheduled=False;
#     - the preemptor is NOT bound while the victim is terminating (the node is still full);
#     - then the test acts as the kubelet (there is none): `kubectl delete --grace-period=0
#       --force` removes the victim; the scheduler sees it go and binds the preemptor to the
#       nominated node, with a Scheduled event.
#   pdb: two low-priority pods (1000m each) fill a 2-CPU node, one guarded by a
#     PodDisruptionBudget (minAvailable 1; no disruption controller runs, so disruptionsAllowed
#     stays 0 and evicting it would violate the budget); a high-priority 1000m pod preempts the
#     unguarded one only. Same for both schedulers.
# Usage: tests/e2e/test-preemption.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
e2e_begin --with-scheduler
ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1
T=$E2E_TIMEOUT

kubectl create -f - >/dev/null <<YAML
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-high}
value: 1000
YAML
{ for s in ks def; do mk_node "$s-basic" 2 8Gi 110 e2e-node="$s-basic"; mk_node "$s-pdb" 2 8Gi 110 e2e-node="$s-pdb"; done; } |
  kubectl create -f - >/dev/null

sched_of() { [ "$1" = ks ] && echo kubesched || echo default-scheduler; }
# pod NAME SCHEDULER_PREFIX NODE PRIORITYCLASS CPU [LABEL=VALUE]
pod() {
  local name=$1 s=$2 node=$3 pc=$4 cpu=$5 label=${6:-}
  local labels="e2e: \"1\""; [ -n "$label" ] && labels+=", ${label%%=*}: \"${label#*=}\""
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: default, labels: {$labels}}
spec:
  schedulerName: $(sched_of "$s")
  priorityClassName: $pc
  nodeSelector: {e2e-node: $node}
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: "$cpu", memory: 100Mi}}
YAML
}
exists() { kubectl get pod "$1" >/dev/null 2>&1; }
gone() { ! exists "$1"; }
terminating() { [ -n "$(kubectl get pod "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]; }
nominated() { kubectl get pod "$1" -o jsonpath='{.status.nominatedNodeName}' 2>/dev/null; }
is_nominated() { [ "$(nominated "$1")" = "$2" ]; }
# cond NAME TYPE: "Status|Reason|Message" of that condition; cond_gen NAME TYPE: the pod's
# metadata.generation minus the condition's observedGeneration (the DELETE bumps the generation).
cond() {
  kubectl get pod "$1" -o json 2>/dev/null |
    jq -r --arg t "$2" '.status.conditions[]? | select(.type==$t) | "\(.status)|\(.reason)|\(.message)"'
}
cond_gen() {
  kubectl get pod "$1" -o json 2>/dev/null |
    jq -r --arg t "$2" '.metadata.generation as $g | .status.conditions[]? | select(.type==$t) | "observedGeneration \(.observedGeneration // "absent"), generation \($g)"'
}
# notes REASON POD: the distinct notes of those events, sorted, one line.
notes() {
  kubectl get events.v1.events.k8s.io -n default -o json |
    jq -r --arg r "$1" --arg n "$2" '[.items[] | select(.reason==$r and .regarding.name==$n) | .note] | unique | join(" / ")'
}
# event REASON POD: "type|action|reportingController|note|related.name" of the first such event.
event() {
  kubectl get events.v1.events.k8s.io -n default -o json |
    jq -r --arg r "$1" --arg n "$2" '[.items[] | select(.reason==$r and .regarding.name==$n) | "\(.type)|\(.action)|\(.reportingController)|\(.note)|\(.related.name // "")"] | first // ""'
}
has_event() { [ -n "$(event "$1" "$2")" ]; }
uid_of() { kubectl get pod "$1" -o jsonpath='{.metadata.uid}'; }

# ---- basic --------------------------------------------------------------------------------------
{ pod ks-victim ks ks-basic e2e-low 1500m; pod def-victim def def-basic e2e-low 1500m; } | kubectl create -f - >/dev/null
for s in ks def; do
  if wait_for "$T" bound_to "$s-victim" "$s-basic"; then ok "$s-victim bound to $s-basic"; else bad "$s-victim not bound"; fi
done
{ pod ks-preemptor ks ks-basic e2e-high 1500m; pod def-preemptor def def-basic e2e-high 1500m; } | kubectl create -f - >/dev/null

for s in ks def; do
  sn=$(sched_of "$s")
  if wait_for "$T" terminating "$s-victim"; then ok "$s-victim deleted by $sn (deletionTimestamp set; Terminating: no kubelet)"
  else bad "$s-victim has no deletionTimestamp"; fi
  c=$(cond "$s-victim" DisruptionTarget)
  want="True|PreemptionByScheduler|$sn: preempting to accommodate a higher priority pod"
  if [ "$c" = "$want" ]; then ok "$s-victim: DisruptionTarget condition ($c)"; else bad "$s-victim: DisruptionTarget '$c', want '$want'"; fi
  wait_for "$T" has_event Preempted "$s-victim" || true
  ev=$(event Preempted "$s-victim")
  # kube-scheduler v1.37.2 records the event with no `related` object: its executor hands the
  # recorder a podExecutorPreemptor wrapper (executor.go Obj()), of which no object reference can
  # be made. kubesched does the same.
  want="Normal|Preempting|$sn|Preempted by pod $(uid_of "$s-preemptor") on node $s-basic|"
  if [ "$ev" = "$want" ]; then ok "$s-victim: Preempted event ($ev)"
  else bad "$s-victim: Preempted event '$ev', want '$want'"; fi
  if wait_for "$T" is_nominated "$s-preemptor" "$s-basic"; then ok "$s-preemptor: status.nominatedNodeName $s-basic"
  else bad "$s-preemptor: nominatedNodeName '$(nominated "$s-preemptor")'"; fi
done
ks_dt="$(cond ks-victim DisruptionTarget)|$(cond_gen ks-victim DisruptionTarget)"
def_dt="$(cond def-victim DisruptionTarget)|$(cond_gen def-victim DisruptionTarget)"
echo "# kubesched victim:         $ks_dt"
echo "# default-scheduler victim: $def_dt"
if [ "${ks_dt/kubesched:/X:}" = "${def_dt/default-scheduler:/X:}" ]; then ok "DisruptionTarget as default-scheduler's, observedGeneration too (but the scheduler's name)"
else bad "DisruptionTarget differs: '$ks_dt' vs '$def_dt'"; fi
for s in ks def; do
  case "$(cond "$s-preemptor" PodScheduled)" in
    "False|Unschedulable|"*) ok "$s-preemptor: PodScheduled=False, Unschedulable" ;;
    *) bad "$s-preemptor: PodScheduled '$(cond "$s-preemptor" PodScheduled)'" ;;
  esac
done

# The victims are Terminating: their node is still full, so the preemptors wait (upstream too).
sleep 5
for s in ks def; do
  if [ -z "$(node_of "$s-preemptor")" ] && exists "$s-victim"; then ok "$s-preemptor waits while $s-victim is terminating"
  else bad "$s-preemptor bound to '$(node_of "$s-preemptor")' while its victim is still there"; fi
done
# What each preemptor shows meanwhile: the same condition (observedGeneration included) and the
# same FailedScheduling notes (kube-scheduler's DynamicResources fragment set aside, as in
# test-live-basic.sh, unless LIVE_STRICT_MESSAGE=1).
ks_c="$(cond ks-preemptor PodScheduled)|$(cond_gen ks-preemptor PodScheduled)"
def_c="$(cond def-preemptor PodScheduled)|$(cond_gen def-preemptor PodScheduled)"
ks_n=$(notes FailedScheduling ks-preemptor) def_n=$(notes FailedScheduling def-preemptor)
if [ "${LIVE_STRICT_MESSAGE:-0}" != 1 ]; then def_c=${def_c//no new claims to deallocate, /} def_n=${def_n//no new claims to deallocate, /}; fi
echo "# kubesched preemptor:         $ks_c"
echo "# default-scheduler preemptor: $def_c"
# v1.37 names the nominated node in the message ("... preempting 1 victims"): each side's own.
if [ "${ks_c//ks-basic/N}" = "${def_c//def-basic/N}" ]; then ok "preemptor's PodScheduled condition as default-scheduler's"; else bad "preemptor's PodScheduled condition differs"; fi
if [ -n "$ks_n" ] && [ "${ks_n//ks-basic/N}" = "${def_n//def-basic/N}" ]; then ok "preemptor's FailedScheduling notes as default-scheduler's ($ks_n)"
else bad "FailedScheduling notes differ: '$ks_n' vs '$def_n'"; fi
# As a kubelet would, once the containers are stopped: remove the objects.
t0=$(date +%s%N)
kubectl delete pod ks-victim def-victim --grace-period=0 --force >/dev/null 2>&1
for s in ks def; do
  if wait_for "$T" bound_to "$s-preemptor" "$s-basic"; then
    ok "$s-preemptor bound to its nominated node $s-basic after $s-victim went (seen within $(( ($(date +%s%N) - t0) / 1000000 )) ms of the removal)"
  else bad "$s-preemptor not bound (node '$(node_of "$s-preemptor")')"; fi
  wait_for "$T" has_event Scheduled "$s-preemptor" || true
  ev=$(event Scheduled "$s-preemptor")
  if [ "$ev" = "Normal|Binding|$(sched_of "$s")|Successfully assigned default/$s-preemptor to $s-basic|" ]; then ok "$s-preemptor: Scheduled event"
  else bad "$s-preemptor: Scheduled event '$ev'"; fi
done
n_pre=$(kubectl get events.v1.events.k8s.io -n default -o json | jq '[.items[] | select(.reason=="Preempted" and .reportingController=="kubesched")] | length')
if [ "$n_pre" = 1 ]; then ok "kubesched preempted once (1 Preempted event)"; else bad "kubesched sent $n_pre Preempted events"; fi

# ---- pdb ----------------------------------------------------------------------------------------
kubectl create -f - >/dev/null <<YAML
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {guard: "yes"}}
YAML
{ for s in ks def; do pod "$s-guarded" "$s" "$s-pdb" e2e-low 1000m guard=yes; pod "$s-plain" "$s" "$s-pdb" e2e-low 1000m; done; } |
  kubectl create -f - >/dev/null
for s in ks def; do
  if wait_for "$T" bound_to "$s-guarded" "$s-pdb" && wait_for "$T" bound_to "$s-plain" "$s-pdb"; then ok "$s-guarded and $s-plain bound to $s-pdb"
  else bad "$s-pdb pods not bound"; fi
done
{ pod ks-pdb-preemptor ks ks-pdb e2e-high 1000m; pod def-pdb-preemptor def def-pdb e2e-high 1000m; } | kubectl create -f - >/dev/null
for s in ks def; do
  if wait_for "$T" terminating "$s-plain"; then ok "$s: the unguarded pod is the victim"; else bad "$s-plain was not preempted"; fi
  if ! terminating "$s-guarded" && [ -z "$(cond "$s-guarded" DisruptionTarget)" ]; then ok "$s: the PDB-guarded pod is spared"
  else bad "$s-guarded was touched: $(cond "$s-guarded" DisruptionTarget)"; fi
done
kubectl delete pod ks-plain def-plain --grace-period=0 --force >/dev/null 2>&1
for s in ks def; do
  if wait_for "$T" bound_to "$s-pdb-preemptor" "$s-pdb"; then ok "$s-pdb-preemptor bound to $s-pdb"; else bad "$s-pdb-preemptor not bound"; fi
done

metrics=$(ks_metrics main)
if grep -qx 'scheduler_preemption_attempts_total 2' <<<"$metrics"; then ok "/metrics: 2 preemption attempts"
else bad "/metrics: $(grep '^scheduler_preemption_attempts_total' <<<"$metrics")"; fi

ks_stop main TERM
if [ "$KS_RC" = 0 ]; then ok "kubesched exited 0 on SIGTERM"; else bad "kubesched exited $KS_RC on SIGTERM"; fi
ks_no_errors main
exit 0
