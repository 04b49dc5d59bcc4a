#!/usr/bin/env bash
# Live mode, end to end: upstream's gang scheduling (KEP-4671, GenericWorkload, Beta, off by
# default in v1.37) in kubesched and in the real kube-scheduler v1.37.2, side by side on one API
# server started with --feature-gates=GenericWorkload=true and
# --runtime-config=scheduling.k8s.io/v1beta1=true; both schedulers with the gate on, each on its
# own three nodes (label side=ks / side=up, 1 CPU each; a member asks 800m: one per node):
#   1. a gang of 4 (scheduling.k8s.io/v1beta1 PodGroup, gang.minCount 4) on room for 3 is never
#      partly bound by either scheduler (polled every 0.3 s for 15 s); meanwhile both queues say
#      the same in scheduler_pending_pods and scheduler_queued_entities (the gang backs off as one
#      podgroup entity of 4 pods) and have the same queue_incoming_pods/entities series;
#   2. the PodScheduled conditions, FailedScheduling messages and PodGroupInitiallyScheduled
#      conditions of both are the same ("pod group is unschedulable, minCount (4) cannot be
#      satisfied: 3 scheduled, 0 remaining, pod group preemption: No preemption victims found
#      for incoming preemptor" for the three that fit, the fit error of the fourth), the last part
#      from both schedulers' workload-aware preemption (DefaultPreemption's PodGroupPostFilter);
#   3. a 4th node on each side: both gangs are bound whole, one member per node, and both
#      PodGroups say PodGroupInitiallyScheduled=True;
#   4. a gang whose PodGroup does not exist yet is held back by both (PreEnqueue) and bound by
#      both once the PodGroup is created (a PodGroup Add event); before that, with a gang short
#      of minCount next to it, both queues' gauges are the same (pending_pods{queue="incomplete"}
#      2; the short gang one gated podgroup entity of 2 pods);
#   5. kubesched lists and watches scheduling.k8s.io/v1beta1 podgroups (its log), and without
#      the gate does not (a second kubesched), serving the queue gauges kube-scheduler serves
#      without the gate;
#   6. with the gate on against an API server that does not serve the group (a second control
#      plane without the flags): one log line, no informer, synced at once, no warning;
#   7. workload-aware preemption (run before 5): a high-priority gang of 2 evicts two
#      low-priority pods on each side; the same victims, DisruptionTarget conditions, Preempted
#      events, nominations and member conditions; bound whole once the victims are gone;
#   8. GenericWorkload's metric families on both /metrics: the same HELP and TYPE, kube-scheduler's
#      series all in kubesched's, the same victims of the one workload preemption.
# Usage: tests/e2e/test-gang-upstream.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
export KUBESCHED_E2E_APISERVER_FLAGS=$GANG_APISERVER_FLAGS
e2e_begin
gang_begin

cfg=$(ks_config kubesched)
ks_start main "$cfg" --feature-gates GenericWorkload=true
ks_wait_synced main || exit 1
grep -q "PodGroup informer" "$(ks_log main)" &&
  ! grep -q "does not serve scheduling.k8s.io/v1beta1" "$(ks_log main)" &&
  ok "kubesched watches podgroups" || note "kubesched's log says nothing of its PodGroup informer at -v 2"

# gang_pod NAME SCHEDULER GROUP SIDE: a member asking 800m on the side's nodes
gang_pod() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {e2e: "1", gang: $3}}
spec:
  schedulerName: $2
  schedulingGroup: {podGroupName: $3}
  nodeSelector: {side: $4}
  containers:
  - {name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 800m, memory: 100Mi}}}
YAML
}
pod_group() { # NAME MIN
  printf -- '---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: %s, namespace: default}\nspec: {schedulingPolicy: {gang: {minCount: %s}}}\n' "$1" "$2"
}
bound_count() { kubectl get pods -l "gang=$1" -o json | jq '[.items[] | select((.spec.nodeName // "") != "")] | length'; }
conds() { # GROUP: "pod|status|reason|message" per member
  kubectl get pods -l "gang=$1" -o json | jq -r '.items[] | "\(.metadata.name)|" + ([.status.conditions[]? | select(.type=="PodScheduled") | "\(.status)|\(.reason)|\(.message)"] | first // "-")'
}
failed_events() { # PREFIX: the distinct FailedScheduling messages of pods named PREFIX*
  kubectl get events --field-selector reason=FailedScheduling -o json |
    jq -r --arg p "$1" '.items[] | select(.involvedObject.name | startswith($p)) | .message' | sort -u
}

up_metrics() { curl -sk --cert "$E2E_DIR/pki/admin.crt" --key "$E2E_DIR/pki/admin.key" "https://127.0.0.1:$up_port/metrics"; }
# The queue's gauges of one scheduler's /metrics text: every series of scheduler_pending_pods
# and scheduler_queued_entities, sorted ("name{labels} value").
queue_series() { grep -E '^scheduler_(pending_pods|queued_entities)\{' <<<"$1" | sort; }
# same_queue_gauges WHAT: polls both schedulers' queue gauges for up to 20 s (the two see the
# same kind of state at slightly different moments: a retry in flight, a gauge refreshed each
# second) until they are the same series with the same values; shows them either way.
same_queue_gauges() {
  local what=$1 t0=$SECONDS ksq upq
  while :; do
    ksq=$(queue_series "$(ks_metrics main)"); upq=$(queue_series "$(up_metrics)")
    if [ -n "$upq" ] && [ "$ksq" = "$upq" ]; then
      ok "$what: the same pending_pods and queued_entities series on both sides"
      note "  non-zero: $(sed -E 's/^scheduler_//' <<<"$ksq" | grep -v ' 0$' | tr '\n' ' ')"
      return 0
    fi
    [ $((SECONDS - t0)) -ge 20 ] && break
    sleep 1
  done
  bad "$what: the queue gauges differ (< kubesched, > kube-scheduler):"
  diff <(echo "$ksq") <(echo "$upq") | grep '^[<>]' | sed 's/^/#        /'
  return 1
}

for s in ks up; do for i in 1 2 3; do mk_node "$s-n$i" 1 4Gi 110 "side=$s"; done; done | kubectl create -f - >/dev/null

# ---- 1-2: four members, three slots, both schedulers --------------------------------------------
{ pod_group g-ks 4; pod_group g-up 4
  for i in 1 2 3 4; do gang_pod "ks-$i" kubesched g-ks ks; gang_pod "up-$i" default-scheduler g-up up; done
} | kubectl create -f - >/dev/null
partial_ks=0 partial_up=0 t0=$SECONDS
while [ $((SECONDS - t0)) -lt 15 ]; do
  b=$(bound_count g-ks); if [ "$b" -gt 0 ]; then partial_ks=$b; fi
  b=$(bound_count g-up); if [ "$b" -gt 0 ]; then partial_up=$b; fi
  sleep 0.3
done
[ "$partial_ks" = 0 ] && ok "kubesched: the gang of 4 on 3 slots was never partly bound (15 s)" ||
  bad "kubesched bound $partial_ks of its gang of 4"
[ "$partial_up" = 0 ] && ok "kube-scheduler: the gang of 4 on 3 slots was never partly bound (15 s)" ||
  bad "kube-scheduler bound $partial_up of its gang of 4"
# the gang waits as one pod group entity, its four members counted with it
same_queue_gauges "a gang of 4 waiting on room for 3"
# the entries counted so far, by queue, event and entity type: the same series (the counts
# follow each side's retries, which the two need not have made as often at this moment)
incoming_names() { grep -E '^scheduler_queue_incoming_(pods|entities)_total\{' <<<"$1" | sed 's/ [^ ]*$//' | sort; }
ks_in=$(ks_metrics main); up_in=$(up_metrics)
if [ -n "$(incoming_names "$up_in")" ] && [ "$(incoming_names "$ks_in")" = "$(incoming_names "$up_in")" ]; then
  ok "the same queue_incoming_pods/entities series on both sides: $(incoming_names "$up_in" | grep -c .)"
else bad "the queue_incoming series differ (< kubesched, > kube-scheduler):"
  diff <(incoming_names "$ks_in") <(incoming_names "$up_in") | grep '^[<>]' | sed 's/^/#        /'; fi
note "kubesched's podgroup entries: $(grep -E '^scheduler_queue_incoming_entities_total.*podgroup' <<<"$ks_in" | sed -E 's/^scheduler_queue_incoming_entities_total//' | tr '\n' ' ')"
note "kube-scheduler's podgroup entries: $(grep -E '^scheduler_queue_incoming_entities_total.*podgroup' <<<"$up_in" | sed -E 's/^scheduler_queue_incoming_entities_total//' | tr '\n' ' ')"
note "kube-scheduler's PodScheduled conditions:"; conds g-up | sed 's/^/#        /'
note "kube-scheduler's FailedScheduling messages:"; failed_events up- | sed 's/^/#        /'
note "kubesched's PodScheduled conditions:"; conds g-ks | sed 's/^/#        /'
note "kubesched's FailedScheduling messages:"; failed_events ks- | sed 's/^/#        /'
note "kube-scheduler's PodGroup status: $(kubectl get podgroup g-up -o json | jq -c '.status.conditions // []')"
note "kubesched's PodGroup status: $(kubectl get podgroup g-ks -o json | jq -c '.status.conditions // []')"
# Both: the PodGroup cycle turns the whole group away; the members that fit carry
# PlacementFeasible's message, then their PodGroupPostFilter's (DefaultPreemption's
# workload-aware preemption: nothing of lower priority to evict)
group_msg="pod group is unschedulable, minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"
failed_events up- | grep -qxF "$group_msg" &&
  ok "kube-scheduler: '$group_msg'" || bad "kube-scheduler said no '$group_msg'"
failed_events ks- | grep -qxF "$group_msg" &&
  ok "kubesched: '$group_msg'" || bad "kubesched said no '$group_msg'"
failed_events ks- | grep -qx "0/6 nodes are available: 3 Insufficient cpu, 3 node(s) didn.t match Pod.s node affinity/selector." &&
  ok "kubesched: the member that does not fit says why, without a per-pod preemption message" ||
  bad "kubesched: no 'Insufficient cpu' message for the member that does not fit"
up_msgs=$(conds g-up | cut -d'|' -f2- | sort | uniq -c)
ks_msgs=$(conds g-ks | cut -d'|' -f2- | sort | uniq -c)
if [ "$up_msgs" = "$ks_msgs" ]; then
  ok "the same PodScheduled conditions on both sides"
else bad "the PodScheduled conditions differ"; diff <(echo "$up_msgs") <(echo "$ks_msgs") | sed 's/^/#        /'; fi
cond_of() { kubectl get podgroup "$1" -o json | jq -r '.status.conditions[]? | select(.type=="PodGroupInitiallyScheduled") | "\(.status)|\(.reason)|\(.message)"'; }
if wait_for 10 bash -c "kubectl get podgroup g-ks -o json | jq -e '.status.conditions[]? | select(.type==\"PodGroupInitiallyScheduled\" and .status==\"False\" and .reason==\"Unschedulable\")' >/dev/null"; then
  ok "kubesched: PodGroup g-ks is PodGroupInitiallyScheduled=False (Unschedulable): $(cond_of g-ks | cut -d'|' -f3)"
else bad "kubesched wrote no PodGroupInitiallyScheduled=False condition ($(cond_of g-ks))"; fi
[ "$(cond_of g-up)" = "$(cond_of g-ks)" ] &&
  ok "the same PodGroup condition on both sides" ||
  bad "the PodGroup conditions differ: '$(cond_of g-up)' vs '$(cond_of g-ks)'"

# ---- 3: a 4th slot on each side ------------------------------------------------------------------
t_add=$SECONDS
{ mk_node ks-n4 1 4Gi 110 side=ks; mk_node up-n4 1 4Gi 110 side=up; } | kubectl create -f - >/dev/null
for s in ks up; do
  who=kubesched; [ $s = up ] && who=kube-scheduler
  if wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l gang=g-$s -o json | jq '[.items[] | select((.spec.nodeName // \"\") != \"\")] | length')\" = 4 ]"; then
    ok "$who: all 4 members bound $((SECONDS - t_add)) s after a 4th node appeared"
    [ "$(kubectl get pods -l gang=g-$s -o json | jq -r '[.items[].spec.nodeName] | unique | length')" = 4 ] &&
      ok "$who: one member per node" || bad "$who: members share a node"
  else bad "$who: the gang was not bound after a 4th node appeared ($(bound_count g-$s)/4)"; fi
done
for s in ks up; do
  who=kubesched; [ $s = up ] && who=kube-scheduler
  if wait_for 10 bash -c "kubectl get podgroup g-$s -o json | jq -e '.status.conditions[]? | select(.type==\"PodGroupInitiallyScheduled\" and .status==\"True\" and .reason==\"Scheduled\")' >/dev/null"; then
    ok "$who: PodGroup g-$s is PodGroupInitiallyScheduled=True (Scheduled)"
  else bad "$who: PodGroup g-$s is not PodGroupInitiallyScheduled=True ($(cond_of g-$s))"; fi
done

# ---- 4: a gang whose PodGroup comes later --------------------------------------------------------
for s in ks up; do for i in 1 2; do mk_node "$s-m$i" 1 4Gi 110 "side=$s-late"; done; done | kubectl create -f - >/dev/null
{ for i in 1 2; do gang_pod "ksl-$i" kubesched late-ks ks-late; gang_pod "upl-$i" default-scheduler late-up up-late; done
  # and a gang with its PodGroup but fewer members than minCount (2 of 3)
  pod_group few-ks 3; pod_group few-up 3
  for i in 1 2; do gang_pod "ksf-$i" kubesched few-ks ks-late; gang_pod "upf-$i" default-scheduler few-up up-late; done
} | kubectl create -f - >/dev/null
sleep 5
# members without their PodGroup: pending_pods{queue="incomplete"}; the group short of minCount:
# gated as one pod group
same_queue_gauges "a gang without its PodGroup, a gang short of minCount"
kubectl delete pod ksf-1 ksf-2 upf-1 upf-2 --wait=false >/dev/null
kubectl delete podgroup few-ks few-up --wait=false >/dev/null
[ "$(bound_count late-ks)" = 0 ] && ok "kubesched holds back a gang whose PodGroup does not exist" ||
  bad "kubesched bound members of a gang without PodGroup"
[ "$(bound_count late-up)" = 0 ] && ok "kube-scheduler holds back a gang whose PodGroup does not exist" ||
  bad "kube-scheduler bound members of a gang without PodGroup"
note "kube-scheduler, no PodGroup yet: $(conds late-up | head -1)"
note "kubesched, no PodGroup yet: $(conds late-ks | head -1)"
{ pod_group late-ks 2; pod_group late-up 2; } | kubectl create -f - >/dev/null
for s in ks up; do
  who=kubesched; [ $s = up ] && who=kube-scheduler
  if wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l gang=late-$s -o json | jq '[.items[] | select((.spec.nodeName // \"\") != \"\")] | length')\" = 2 ]"; then
    ok "$who: the gang is bound once its PodGroup is created"
  else bad "$who: the gang was not bound after its PodGroup was created ($(bound_count late-$s)/2)"; fi
done

# ---- 7: workload-aware preemption: a high-priority gang evicts low-priority pods ---------------
# Two 1-CPU nodes per side, each running a low-priority pod (800m); a gang of 2 (800m each) at
# high priority fits only without them. Both schedulers preempt both, with the same victims,
# DisruptionTarget condition, events and nominations; acting as the kubelet (there is none), the
# test then removes the terminating victims and both gangs are bound whole.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-gang-low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-gang-high}
value: 1000
YAML
prio_pod() { # NAME SCHEDULER SIDE CLASS [GROUP]
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, labels: {e2e: "1", pre: "%s"}}\nspec:\n  schedulerName: %s\n  priorityClassName: %s\n%s  nodeSelector: {side: %s}\n  containers:\n  - {name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 800m, memory: 100Mi}}}\n' \
    "$1" "$3" "$2" "$4" "${5:+  schedulingGroup: {podGroupName: $5\}
}" "$3"
}
for s in ks up; do for i in 1 2; do mk_node "$s-p$i" 1 4Gi 110 "side=$s-pre"; done; done | kubectl create -f - >/dev/null
{ for i in 1 2; do prio_pod "low-ks-$i" kubesched ks-pre e2e-gang-low; prio_pod "low-up-$i" default-scheduler up-pre e2e-gang-low; done; } |
  kubectl create -f - >/dev/null
for s in ks up; do
  wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l pre=$s-pre -o json | jq '[.items[] | select((.spec.nodeName // \"\") != \"\")] | length')\" = 2 ]" ||
    bad "the low-priority pods of side $s were not bound"
done
{ for s in ks up; do
    printf -- '---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: hi-%s, namespace: default}\nspec: {priorityClassName: e2e-gang-high, priority: 1000, schedulingPolicy: {gang: {minCount: 2}}}\n' "$s"
  done
  for i in 1 2; do prio_pod "hi-ks-$i" kubesched ks-pre e2e-gang-high hi-ks; prio_pod "hi-up-$i" default-scheduler up-pre e2e-gang-high hi-up; done
} | kubectl create -f - >/dev/null 2>"$E2E_DIR/hi.err" || bad "could not create the high-priority gangs: $(cat "$E2E_DIR/hi.err")"
terminating() { kubectl get pods -l "pre=$1" -o json | jq -r '[.items[] | select(.metadata.name | startswith("low-")) | select(.metadata.deletionTimestamp != null) | .metadata.name] | sort | join(",")'; }
for s in ks up; do
  who=kubesched; [ $s = up ] && who=kube-scheduler
  if wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l pre=$s-pre -o json | jq -r '[.items[] | select(.metadata.name | startswith(\"low-\")) | select(.metadata.deletionTimestamp != null)] | length')\" = 2 ]"; then
    ok "$who: both low-priority pods are preempted ($(terminating $s-pre))"
  else bad "$who: the low-priority pods were not both preempted: '$(terminating $s-pre)'"; fi
done
victim_view() { # SIDE: per victim "condition|event", the side's names taken out
  for i in 1 2; do
    c=$(kubectl get pod "low-$1-$i" -o json 2>/dev/null | jq -r '.status.conditions[]? | select(.type=="DisruptionTarget") | "\(.status)|\(.reason)|\(.message)"')
    e=$(kubectl get events --field-selector "involvedObject.name=low-$1-$i,reason=Preempted" -o json | jq -r '.items[0].message // "-"' | sed 's/[0-9a-f]\{8\}-[0-9a-f-]\{27\}/UID/; s/node [a-z]*-p[0-9]/node N/')
    echo "$c|$e" | sed "s/kubesched:/SCHED:/; s/default-scheduler:/SCHED:/"
  done | sort
}
note "kube-scheduler's victims: $(victim_view up | tr '\n' ' ')"
note "kubesched's victims: $(victim_view ks | tr '\n' ' ')"
[ "$(victim_view up)" = "$(victim_view ks)" ] && ok "the same DisruptionTarget conditions and Preempted events on both sides" ||
  bad "the victims' conditions or events differ"
nominated() { kubectl get pods -l "pre=$1" -o json | jq -r '[.items[] | select(.metadata.name | startswith("hi-")) | (.status.nominatedNodeName // "-")] | map(sub("^[a-z]+-"; "")) | sort | join(",")'; }
wait_for 10 bash -c "[ \"\$(kubectl get pods -l pre=ks-pre -o json | jq '[.items[] | select(.metadata.name | startswith(\"hi-\")) | select(.status.nominatedNodeName)] | length')\" = 2 ]" || true
note "nominated nodes: kube-scheduler $(nominated up-pre), kubesched $(nominated ks-pre)"
[ "$(nominated up-pre)" = "$(nominated ks-pre)" ] && [ "$(nominated ks-pre)" = "p1,p2" ] &&
  ok "both nominate the gang's members to the victims' two nodes" || bad "nominations differ or are missing"
hi_conds() { kubectl get pods -l "pre=$1" -o json | jq -r '.items[] | select(.metadata.name | startswith("hi-")) | [.status.conditions[]? | select(.type=="PodScheduled") | "\(.status)|\(.reason)|\(.message)"] | first // "-"' | sort; }
note "kube-scheduler's members: $(hi_conds up-pre | head -1)"
note "kubesched's members: $(hi_conds ks-pre | head -1)"
[ "$(hi_conds up-pre)" = "$(hi_conds ks-pre)" ] && ok "the members' PodScheduled conditions are the same on both sides" ||
  bad "the members' conditions differ"
# the kubelet's part: the terminating victims go
kubectl delete pod low-ks-1 low-ks-2 low-up-1 low-up-2 --grace-period=0 --force >/dev/null 2>&1
for s in ks up; do
  who=kubesched; [ $s = up ] && who=kube-scheduler
  if wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l pre=$s-pre -o json | jq '[.items[] | select(.metadata.name | startswith(\"hi-\")) | select((.spec.nodeName // \"\") != \"\")] | length')\" = 2 ]"; then
    ok "$who: the high-priority gang is bound whole once its victims are gone"
  else bad "$who: the high-priority gang was not bound after its victims went"; fi
done

# ---- 8: GenericWorkload's metric families, next to kube-scheduler's -----------------------------
# The families kubesched declares (not preemption_execution_duration_seconds nor
# preemption_pdb_violations_total): the same HELP and TYPE, the same series (results; the profile
# label dropped, the two profiles are named differently), and the one preemption's victims.
ksm=$(ks_metrics main)
upm=$(curl -sk --cert "$E2E_DIR/pki/admin.crt" --key "$E2E_DIR/pki/admin.key" "https://127.0.0.1:$up_port/metrics")
wl='scheduler_(podgroup_schedule|podgroup_scheduling|workload_preemption|preemption_workload|preemption_evaluation)'
heads() { grep -E "^# (HELP|TYPE) $wl" <<<"$1" | sort; }
series() { grep -E "^$wl[a-z_]*(_total|_count)\{" <<<"$1" | sed -E 's/ [^ ]+$//; s/,?profile="[^"]*"//; s/\{,/{/' | sort -u; }
mval() { awk -v s="$2" 'index($0, s " ") == 1 { print $NF; found = 1 } END { if (!found) print "absent" }' <<<"$1"; }
if [ -n "$(heads "$upm")" ] && diff <(heads "$ksm") <(heads "$upm" | grep -vE 'preemption_execution_duration|preemption_pdb_violations') >/dev/null; then
  ok "GenericWorkload's families: the same HELP and TYPE as kube-scheduler's ($(heads "$ksm" | grep -c '^# TYPE'))"
else bad "GenericWorkload's families differ:"; diff <(heads "$ksm") <(heads "$upm") | head -10; fi
# Every series of kube-scheduler's is kubesched's too. A retry that meets a transient state (a
# victim not yet gone) may add a result on one side only: an extra one of kubesched's is shown.
up_series=$(series "$upm" | grep -vE 'preemption_execution_duration|preemption_pdb_violations')
missing=$(comm -13 <(series "$ksm") <(echo "$up_series"))
if [ -n "$up_series" ] && [ -z "$missing" ]; then
  ok "kube-scheduler's series are kubesched's: $(sed -E 's/^scheduler_//' <<<"$up_series" | tr '\n' ' ')"
else bad "series of kube-scheduler's that kubesched lacks: $missing"; fi
extra=$(comm -23 <(series "$ksm") <(echo "$up_series"))
[ -z "$extra" ] || note "kubesched's only (a retry in a transient state): $extra"
for m in scheduler_workload_preemption_victims_count scheduler_workload_preemption_victims_sum; do
  [ "$(mval "$ksm" "$m")" = "$(mval "$upm" "$m")" ] && [ "$(mval "$ksm" "$m")" != absent ] &&
    ok "$m: $(mval "$ksm" "$m") on both sides" || bad "$m: kubesched $(mval "$ksm" "$m"), kube-scheduler $(mval "$upm" "$m")"
done

# ---- 5: the gate off: no PodGroup informer -------------------------------------------------------
cfg2=$(ks_config other)
ks_start nogate "$cfg2"
ks_wait_synced nogate || true
# kube-scheduler v1.37.2 without the gate serves the six pending_pods series at 0 (its queue
# makes podGroupMemberPods' two either way) and no queued_entities before an entity comes
want_off=$(printf 'scheduler_pending_pods{queue="%s"} 0\n' active backoff gated incomplete pending unschedulable)
nogate_gauges_off() { [ "$(queue_series "$(ks_metrics nogate)")" = "$want_off" ]; }
if wait_for 5 nogate_gauges_off; then
  ok "kubesched without the gate: the queue gauges kube-scheduler serves without it (6 pending_pods series at 0)"
else bad "kubesched without the gate: queue gauges $(queue_series "$(ks_metrics nogate)" | tr '\n' ' ')"; fi
if grep -qi "podgroup" "$(ks_log nogate)"; then bad "kubesched without the gate mentions PodGroups: $(grep -i podgroup "$(ks_log nogate)" | head -2)"
else ok "kubesched without the gate does not watch PodGroups"; fi
ks_stop nogate 2>/dev/null || true
ks_no_errors main

# ---- 6: the gate on, but an API server that does not serve scheduling.k8s.io/v1beta1 ----------
# (a second, throw-away control plane without the flags): no informer, one line, synced at once
absent_out=$(KUBESCHED_E2E_APISERVER_FLAGS= "$E2E_HERE/start-control-plane.sh" -- bash -c '
  printf "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: %s}\nleaderElection: {leaderElect: false}\nprofiles:\n- schedulerName: kubesched\n" "$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" >"$KUBESCHED_E2E_DIR/ks.yaml"
  "$0" --config "$KUBESCHED_E2E_DIR/ks.yaml" --bind-address 127.0.0.1 --secure-port 0 -v 2 \
    --feature-gates GenericWorkload=true >"$KUBESCHED_E2E_DIR/ks.log" 2>&1 &
  pid=$!; sleep 8; kill $pid; wait $pid; cat "$KUBESCHED_E2E_DIR/ks.log"' "$KS_BIN" 2>&1)
if grep -q "PodGroup informer: the API server does not serve scheduling.k8s.io/v1beta1" <<<"$absent_out" &&
  grep -q "caches synced" <<<"$absent_out" && [ "$(grep -c "PodGroup informer" <<<"$absent_out")" = 1 ] &&
  ! grep -qE "^[EW][0-9]" <<<"$absent_out"; then
  ok "the gate on, the group not served: one line, no PodGroup informer, synced, no warning"
else bad "the gate on, the group not served:"; grep -iE "podgroup|synced|^[EW][0-9]" <<<"$absent_out" | head -5; fi
exit 0
