#!/usr/bin/env bash
# Live mode, end to end: unschedulable pods come back as soon as a cluster event can make them fit
# (upstream's event-driven requeue), not when the unschedulable pods are flushed (after 5 min in
# the queue, checked every 30 s). Against a real API server, with kube-scheduler next to kubesched:
#   A. node add: a kubesched pod too big for every node gets PodScheduled=False, reason
#      Unschedulable, the message upstream writes for its default-scheduler twin (minus the
#      DynamicResources fragment, as in test-live-basic.sh) and a FailedScheduling event; a Node
#      that fits is created and the pod is bound to it within E2E_REQUEUE_LIMIT seconds;
#   B. node update, taint removed: the only node with room has a NoSchedule taint; removing it
#      gets the pod bound within the limit;
#   C. node update, allocatable grows: the node's status grows from 1 to 4 CPU;
#   D. assigned pod delete: a node full with a bound pod, a second pod rejected for lack of CPU;
#      deleting the first gets the second bound within the limit;
#   E. scheduling gates: a gated pod is not scheduled (the gated gauge counts it) until its gate
#      is removed, then it is bound within the limit.
# Each scenario uses its own nodes (label e2e-scenario) and pods with a matching nodeSelector.
# Delays are measured from just before the request that makes the change (curl) to the eventTime
# of the pod's Scheduled event (events.k8s.io/v1, microseconds), so they include the request
# itself, the watch, the scheduling and the binding; they are printed.
# Usage: tests/e2e/test-requeue.sh (env: see lib.sh; E2E_REQUEUE_LIMIT, seconds, default 5)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
e2e_begin --with-scheduler
limit=${E2E_REQUEUE_LIMIT:-5}
ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1

# node NAME CPU SCENARIO [TAINT]: a Ready node labelled e2e-scenario=SCENARIO
node() {
  mk_node "$1" "$2" 16Gi 110 "e2e-scenario=$3"
  [ -n "${4:-}" ] && printf '%s\n' "spec:" "  taints: [{key: ${4%%=*}, value: \"${4#*=}\", effect: NoSchedule}]"
  return 0
}
# pod NAME SCHEDULER CPU SCENARIO: a pod with a nodeSelector for the scenario's nodes
pod() { mk_pod "$1" "$2" "$3" 1Gi "requeue=$4" | sed "s|^spec:|spec:\n  nodeSelector: {e2e-scenario: \"$4\"}|"; }
unschedulable() { case "$(pod_cond "$1")" in "False|Unschedulable|"?*) return 0 ;; esac; return 1; }
now() { date +%s.%N; }
# api METHOD PATH BODY_FILE [CONTENT_TYPE]: one request with curl (the admin token), so that the
# time taken just before it is the time of the change (kubectl's own start-up is much longer on a
# loaded machine); fails unless the answer is 2xx.
api() {
  local code
  code=$(curl -s -o "$E2E_DIR/api.out" -w '%{http_code}' --cacert "$KUBESCHED_E2E_CA" \
    -H "Authorization: Bearer $KUBESCHED_E2E_TOKEN" -H "Content-Type: ${4:-application/json}" \
    -X "$1" --data-binary "@$3" "$KUBESCHED_E2E_APISERVER$2")
  case "$code" in 2??) return 0 ;; esac
  echo "# $1 $2: HTTP $code: $(head -c 300 "$E2E_DIR/api.out")"; return 1
}
# events POD REASON JQ: JQ applied to POD's events.k8s.io/v1 events with REASON (an array)
events() {
  kubectl get events.v1.events.k8s.io -n default -o json |
    jq -r --arg n "$1" --arg r "$2" "[.items[] | select(.regarding.name == \$n and .reason == \$r)] | $3"
}
# scheduled_at POD: the eventTime of its Scheduled event in seconds since the epoch (µs)
scheduled_at() {
  local t; t=$(events "$1" Scheduled '[.[].eventTime // empty] | first // empty')
  [ -n "$t" ] && date -d "$t" +%s.%N
}
# requeued NAME WHAT T0 NODE: NAME was bound to NODE by kubesched within $limit s of T0
requeued() {
  local name=$1 what=$2 t0=$3 want=$4 at delay
  if ! wait_for "$E2E_TIMEOUT" bound_to "$name" "$want"; then
    bad "$what: $name not bound to $want in ${E2E_TIMEOUT}s (node '$(node_of "$name")', $(pod_cond "$name"))"; return
  fi
  wait_for 10 scheduled_at "$name" >/dev/null
  at=$(scheduled_at "$name")
  by=$(events "$name" Scheduled '[.[].reportingController] | join(",")')
  if [ -z "$at" ] || [ "$by" != kubesched ]; then bad "$what: $name's Scheduled event: time '$at', from '$by'"; return; fi
  delay=$(awk -v a="$at" -v b="$t0" 'BEGIN {print a - b}')
  if awk -v d="$delay" -v l="$limit" 'BEGIN {exit !(d <= l)}'; then
    ok "$what: $name bound to $want by kubesched $(printf '%.3f' "$delay") s after the change (limit $limit s)"
    # An attempt that still failed after the change means the pod was moved too early (before the
    # cache had the change) and then waited out a backoff: not wrong, but slower than upstream.
    if [ -n "${PARKED_ATTEMPTS:-}" ] && [ "$(unsched_attempts)" != "$PARKED_ATTEMPTS" ]; then
      note "$what: $(($(unsched_attempts) - PARKED_ATTEMPTS)) more unschedulable attempt(s) between the change and the bind"
    fi
    PARKED_ATTEMPTS=
  else bad "$what: $name bound $(printf '%.3f' "$delay") s after the change (limit $limit s): not event-driven"; fi
}
unsched_attempts() { ks_metrics main | awk '$1 == "scheduler_schedule_attempts_total{profile=\"kubesched\",result=\"unschedulable\"}" {print $2}'; }
# parked NAME WHAT: with nothing changing in the cluster the rejected pod stays in the
# unschedulable pods: no attempt for 2 s (after 1.5 s for a retry that an event during its
# first attempt may have earned). So the bind that follows the change is the change's doing.
parked() {
  sleep 1.5
  local a b; a=$(unsched_attempts); sleep 2; b=$(unsched_attempts)
  PARKED_ATTEMPTS=$b
  if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$2: $1 waits: no scheduling attempt in 2 s while nothing changes"
  else bad "$2: unschedulable attempts went from '$a' to '$b' in 2 s while nothing changed"; fi
}
wait_unschedulable() { # NAME WHAT
  if wait_for "$E2E_TIMEOUT" unschedulable "$1"; then ok "$2: $1 is unschedulable: $(pod_cond "$1" | cut -d'|' -f3)"
  else bad "$2: $1 did not become unschedulable ($(pod_cond "$1"), node '$(node_of "$1")')"; return 1; fi
}

# ---- A. node add -------------------------------------------------------------------------
{ node a-1 2 a; node a-2 2 a; } | kubectl create -f - >/dev/null
{ pod ks-big kubesched 3 a; pod def-big default-scheduler 3 a; } | kubectl create -f - >/dev/null
both_failed() { [ -n "$(pod_cond ks-big)" ] && [ -n "$(pod_cond def-big)" ]; }
wait_for "$E2E_TIMEOUT" both_failed || true
ks_c=$(pod_cond ks-big) def_c=$(pod_cond def-big)
echo "kubesched:         $ks_c"
echo "default-scheduler: $def_c"
case "$ks_c" in
  "False|Unschedulable|"?*) ok "node add: ks-big has PodScheduled=False, reason Unschedulable" ;;
  *) bad "node add: ks-big's PodScheduled condition is '$ks_c'" ;;
esac
def_cmp=${def_c/no new claims to deallocate, /} # kubesched's DynamicResources adds none without claims
if [ -n "$def_c" ] && [ "$ks_c" = "$def_cmp" ]; then ok "node add: ks-big's condition and message as default-scheduler's"
else bad "node add: ks-big's condition differs from default-scheduler's"; fi
fs=$(events ks-big FailedScheduling '[.[] | "\(.reportingController)|\(.type)|\(.note)"] | first // ""')
if [ "${fs%%|*}" = kubesched ] && [ "$fs" = "kubesched|Warning|${ks_c#False|Unschedulable|}" ]; then
  ok "node add: FailedScheduling event from kubesched with the same message"
else bad "node add: FailedScheduling event '$fs'"; fi
kubectl delete pod def-big --wait=false >/dev/null # the new node is for ks-big only
parked ks-big "node add"
node a-big 4 a | kubectl create --dry-run=client -o json -f - >"$E2E_DIR/a-big.json"
t0=$(now); api POST /api/v1/nodes "$E2E_DIR/a-big.json" || bad "node add: POST a-big failed"
requeued ks-big "node add" "$t0" a-big

# ---- B. node update: taint removed --------------------------------------------------------
{ node b-small 1 b; node b-tainted 4 b e2e/maintenance=true; } | kubectl create -f - >/dev/null
pod ks-taint kubesched 2 b | kubectl create -f - >/dev/null
if wait_unschedulable ks-taint "taint removed"; then
  case "$(pod_cond ks-taint)" in *"untolerated taint"*) ok "taint removed: the message names the taint" ;;
    *) bad "taint removed: the message does not name the taint" ;; esac
fi
parked ks-taint "taint removed"
echo '[{"op":"remove","path":"/spec/taints"}]' >"$E2E_DIR/untaint.json"
t0=$(now); api PATCH /api/v1/nodes/b-tainted "$E2E_DIR/untaint.json" application/json-patch+json ||
  bad "taint removed: PATCH b-tainted failed"
requeued ks-taint "taint removed" "$t0" b-tainted

# ---- C. node update: allocatable grows -----------------------------------------------------
node c-grow 1 c | kubectl create -f - >/dev/null
pod ks-grow kubesched 2 c | kubectl create -f - >/dev/null
wait_unschedulable ks-grow "allocatable grows"
parked ks-grow "allocatable grows"
echo '{"status":{"capacity":{"cpu":"4"},"allocatable":{"cpu":"4"}}}' >"$E2E_DIR/grow.json"
t0=$(now); api PATCH /api/v1/nodes/c-grow/status "$E2E_DIR/grow.json" application/merge-patch+json ||
  bad "allocatable grows: PATCH c-grow/status failed"
requeued ks-grow "allocatable grows" "$t0" c-grow

# ---- D. assigned pod delete ----------------------------------------------------------------
node d-full 2 d | kubectl create -f - >/dev/null
pod ks-filler kubesched 2 d | kubectl create -f - >/dev/null
if wait_for "$E2E_TIMEOUT" bound_to ks-filler d-full; then ok "pod delete: ks-filler fills d-full"
else bad "pod delete: ks-filler not bound ($(pod_cond ks-filler))"; fi
pod ks-waiter kubesched 1 d | kubectl create -f - >/dev/null
if wait_unschedulable ks-waiter "pod delete"; then
  case "$(pod_cond ks-waiter)" in *"Insufficient cpu"*) ok "pod delete: rejected for Insufficient cpu" ;;
    *) bad "pod delete: ks-waiter was not rejected for lack of cpu" ;; esac
fi
parked ks-waiter "pod delete"
# No kubelet confirms a graceful delete, so force it: the pod leaves etcd at once.
echo '{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0}' >"$E2E_DIR/now.json"
t0=$(now); api DELETE /api/v1/namespaces/default/pods/ks-filler "$E2E_DIR/now.json" || bad "pod delete: DELETE ks-filler failed"
requeued ks-waiter "pod delete" "$t0" d-full

# ---- E. scheduling gates -------------------------------------------------------------------
node e-1 2 e | kubectl create -f - >/dev/null
pod ks-gated kubesched 100m e | sed 's|^spec:|spec:\n  schedulingGates: [{name: example.com/e2e-gate}]|' |
  kubectl create -f - >/dev/null
sleep 3
gauge=$(ks_metrics main | awk '$1 == "scheduler_pending_pods{queue=\"gated\"}" {print $2}')
if [ -z "$(node_of ks-gated)" ] && [ "$gauge" = 1 ]; then
  ok "gates: ks-gated waits unbound ($(pod_cond ks-gated)), scheduler_pending_pods{queue=\"gated\"} 1"
else bad "gates: ks-gated node '$(node_of ks-gated)', gated gauge '$gauge'"; fi
echo '[{"op":"remove","path":"/spec/schedulingGates"}]' >"$E2E_DIR/ungate.json"
t0=$(now); api PATCH /api/v1/namespaces/default/pods/ks-gated "$E2E_DIR/ungate.json" application/json-patch+json ||
  bad "gate removed: PATCH ks-gated failed"
requeued ks-gated "gate removed" "$t0" e-1

# None of this needed the unschedulable pods' flush: the gauge of pods still parked is 0.
left=$(ks_metrics main | awk '$1 == "scheduler_pending_pods{queue=\"unschedulable\"}" {print $2}')
if [ "$left" = 0 ]; then ok "no pod left in the unschedulable queue"; else bad "unschedulable pods left: '$left'"; fi

ks_stop main TERM
if [ "$KS_RC" = 0 ]; then ok "kubesched exited 0 on SIGTERM"; else bad "kubesched exited $KS_RC on SIGTERM"; fi
ks_no_errors main
exit 0
