#!/usr/bin/env bash
# Live mode's /metrics against a real control plane, counters checked against what happened:
#   - 1 Node (4 CPU); N pods that fit and M that do not (6 CPU each) for kubesched:
#     schedule_attempts_total{scheduled} = N, {unschedulable} >= M, pending_pods{unschedulable}
#     = M once the attempts settle, unschedulable_pods{NodeResourcesFit} = M, SLI count = N, one
#     Bind{Success} duration per bound pod, queue_incoming_pods{UnscheduledPodAdd} = N + M;
#   - a second Node (32 CPU): NodeAdd moves exactly the M pods, they are bound, the counters
#     follow (scheduled = N + M, pending unschedulable 0, SLI count N + M, ...);
#   - every scheduler_* family kubesched serves has the TYPE, HELP and histogram `le` bounds that
#     the upstream kube-scheduler (started with the control plane, scheduling a few pods of its
#     own meanwhile) serves on its /metrics in the same run.
# Usage: tests/e2e/test-metrics.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
e2e_begin --with-scheduler
ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1
N=6 M=3

# The value of one series (exact text before the value), or "absent".
mval() { awk -v s="$2" 'index($0, s " ") == 1 { print $NF; found = 1 } END { if (!found) print "absent" }' <<<"$1"; }
# The sum of a family's samples whose line contains every given fragment.
msum() {
  local text=$1 name=$2; shift 2
  awk -v n="$name" -v frags="$*" '
    BEGIN { k = split(frags, f, " ") }
    { split($0, a, /[{ ]/); if (a[1] != n) next
      for (i = 1; i <= k; i++) if (index($0, f[i]) == 0) next
      s += $NF }
    END { printf "%g\n", s + 0 }' <<<"$text"
}
# expect_val TEXT 'series' WANT WHAT
expect_val() {
  local got; got=$(mval "$1" "$2")
  if [ "$got" = "$3" ]; then ok "$4: $2 = $3"; else bad "$4: $2 = $got, want $3"; fi
}
expect_sum() { # TEXT WANT WHAT NAME FRAGMENTS...
  local text=$1 want=$2 what=$3; shift 3
  local got; got=$(msum "$text" "$@")
  if [ "$got" = "$want" ]; then ok "$what: sum of $* = $want"; else bad "$what: sum of $* = $got, want $want"; fi
}
# metrics_settled COND...: scrapes until every "series=value" holds.
scrape_until() {
  local conds=("$@")
  settled() {
    local m; m=$(ks_metrics main)
    for c in "${conds[@]}"; do [ "$(mval "$m" "${c%=*}")" = "${c##*=}" ] || return 1; done
  }
  wait_for "$E2E_TIMEOUT" settled
}

P='profile="kubesched"'
mk_node metrics-node-1 4 32Gi | kubectl create -f - >/dev/null
for i in $(seq 1 "$N"); do mk_pod "fit-$i" kubesched 500m 100Mi app=metrics; done | kubectl create -f - >/dev/null
for i in $(seq 1 "$M"); do mk_pod "big-$i" kubesched 6 100Mi app=metrics-big; done | kubectl create -f - >/dev/null
# Pods for the upstream scheduler too, so that its /metrics has the same families to compare
# (enough that its 10% sample of plugin durations is very likely to have some).
UP=20
{ for i in $(seq 1 "$UP"); do mk_pod "up-$i" default-scheduler 10m 10Mi app=metrics-up; done
  mk_pod up-big default-scheduler 6 100Mi app=metrics-up; } | kubectl create -f - >/dev/null

if wait_for "$E2E_TIMEOUT" pods_bound app=metrics "$N"; then ok "$N pods that fit are bound"
else bad "only $(kubectl get pods -l app=metrics -o json | jq '[.items[]|select(.spec.nodeName)]|length') of $N pods bound"; fi
if scrape_until "scheduler_pending_pods{queue=\"unschedulable\"}=$M" \
    "scheduler_schedule_attempts_total{$P,result=\"scheduled\"}=$N"; then
  ok "the attempts settled: $M pods wait in unschedulablePods"
else bad "pending_pods / attempts did not settle"; fi
m1=$(ks_metrics main)
expect_val "$m1" "scheduler_schedule_attempts_total{$P,result=\"scheduled\"}" "$N" "attempts"
u=$(mval "$m1" "scheduler_schedule_attempts_total{$P,result=\"unschedulable\"}")
if [ "$u" != absent ] && [ "$u" -ge "$M" ]; then ok "attempts: unschedulable = $u >= $M"
else bad "attempts: unschedulable = $u, want >= $M"; fi
expect_val "$m1" "scheduler_schedule_attempts_total{$P,result=\"error\"}" absent "attempts: no errors"
expect_val "$m1" "scheduler_pending_pods{queue=\"unschedulable\"}" "$M" "pending pods"
expect_val "$m1" "scheduler_pending_pods{queue=\"active\"}" 0 "pending pods"
expect_val "$m1" "scheduler_scheduling_attempt_duration_seconds_count{$P,result=\"scheduled\"}" "$N" "attempt durations"
expect_val "$m1" "scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",$P}" "$M" "unschedulable pods by plugin"
expect_sum "$m1" "$N" "SLI" scheduler_pod_scheduling_sli_duration_seconds_count
expect_val "$m1" "scheduler_pod_scheduling_attempts_count" "$N" "attempts per bound pod"
expect_val "$m1" "scheduler_framework_extension_point_duration_seconds_count{extension_point=\"Bind\",$P,status=\"Success\"}" "$N" "Bind durations"
expect_val "$m1" "scheduler_framework_extension_point_duration_seconds_count{extension_point=\"PostBind\",$P,status=\"Success\"}" "$N" "PostBind durations"
expect_val "$m1" "scheduler_queue_incoming_pods_total{event=\"UnscheduledPodAdd\",queue=\"active\"}" $((N + M)) "incoming pods"
expect_val "$m1" "scheduler_queue_incoming_entities_total{event=\"UnscheduledPodAdd\",queue=\"active\",type=\"pod\"}" $((N + M)) "incoming entities"
expect_val "$m1" "scheduler_queue_incoming_entities_total{event=\"ScheduleAttemptFailure\",queue=\"unschedulable\",type=\"pod\"}" absent "incoming entities: a QueueSkip failure is not counted (upstream)"
expect_val "$m1" "scheduler_queued_entities{queue=\"unschedulable\",type=\"pod\"}" "$M" "queued entities"
expect_val "$m1" "scheduler_pod_scheduled_after_flush_total" 0 "no pod bound after a flush"
expect_val "$m1" "scheduler_goroutines{operation=\"binding\"}" 0 "no binding in flight"
expect_val "$m1" "scheduler_preemption_attempts_total" "$u" "one preemption attempt (DefaultPreemption's PostFilter) per unschedulable attempt"
pf=$(msum "$m1" scheduler_framework_extension_point_duration_seconds_count 'extension_point="PreFilter"' "$P")
sched_unsched=$((N + u))
if [ "$pf" = "$sched_unsched" ]; then ok "one PreFilter duration per attempt ($pf)"
else bad "PreFilter durations: $pf, attempts $sched_unsched"; fi
ev=$(mval "$m1" "scheduler_plugin_evaluation_total{extension_point=\"Filter\",plugin=\"NodeResourcesFit\",$P}")
if [ "$ev" = "$sched_unsched" ]; then ok "NodeResourcesFit Filter evaluated once per attempt on the one node ($ev)"
else bad "NodeResourcesFit Filter evaluations: $ev, attempts $sched_unsched"; fi

# A node the big pods fit on.
mk_node metrics-node-2 32 64Gi | kubectl create -f - >/dev/null
if wait_for "$E2E_TIMEOUT" pods_bound app=metrics-big "$M"; then ok "NodeAdd: the $M big pods are bound"
else bad "the big pods were not bound after the node was added"; fi
if scrape_until "scheduler_pending_pods{queue=\"unschedulable\"}=0" \
    "scheduler_schedule_attempts_total{$P,result=\"scheduled\"}=$((N + M))"; then
  ok "the attempts settled after NodeAdd"
else bad "pending_pods / attempts did not settle after NodeAdd"; fi
m2=$(ks_metrics main)
expect_val "$m2" "scheduler_schedule_attempts_total{$P,result=\"scheduled\"}" $((N + M)) "attempts after NodeAdd"
expect_val "$m2" "scheduler_schedule_attempts_total{$P,result=\"unschedulable\"}" "$u" "no new unschedulable attempt"
expect_sum "$m2" "$M" "NodeAdd moved each big pod once" scheduler_queue_incoming_pods_total 'event="NodeAdd"'
expect_val "$m2" "scheduler_queueing_hint_execution_duration_seconds_count{event=\"NodeAdd\",hint=\"Queue\",plugin=\"NodeResourcesFit\"}" "$M" "queueing hints"
expect_val "$m2" "scheduler_pending_pods{queue=\"unschedulable\"}" 0 "pending pods after NodeAdd"
expect_val "$m2" "scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",$P}" 0 "unschedulable pods by plugin after NodeAdd"
expect_sum "$m2" $((N + M)) "SLI after NodeAdd" scheduler_pod_scheduling_sli_duration_seconds_count
expect_sum "$m2" "$M" "SLI of pods bound on their second attempt" scheduler_pod_scheduling_sli_duration_seconds_count 'attempts="2"'
expect_val "$m2" "scheduler_framework_extension_point_duration_seconds_count{extension_point=\"Bind\",$P,status=\"Success\"}" $((N + M)) "Bind durations after NodeAdd"
expect_val "$m2" "scheduler_pod_scheduling_attempts_sum" $((N + 2 * M)) "attempts per bound pod after NodeAdd"
expect_val "$m2" "scheduler_inflight_events{event=\"PodPopped\"}" 0 "no pod in flight"
# Informer events handed to the scheduler, labelled as upstream's event handlers do.
expect_val "$m2" "scheduler_event_handling_duration_seconds_count{event=\"NodeAdd\"}" 2 "event handling"
expect_val "$m2" "scheduler_event_handling_duration_seconds_count{event=\"UnscheduledPodAdd\"}" $((N + M)) "event handling"
expect_val "$m2" "scheduler_event_handling_duration_seconds_count{event=\"UnscheduledPodDelete\"}" $((N + M)) "event handling: bound pods leave the pending view"
a=$(mval "$m2" "scheduler_event_handling_duration_seconds_count{event=\"AssignedPodAdd\"}")
if [ "$a" != absent ] && [ "$a" -ge $((N + M)) ]; then ok "event handling: AssignedPodAdd = $a >= $((N + M))"
else bad "event handling: AssignedPodAdd = $a, want >= $((N + M))"; fi

# The same families as upstream's: TYPE, HELP and bucket bounds.
wait_for "$E2E_TIMEOUT" pods_bound app=metrics-up "$UP" || true
up_port=$(tr '\0' '\n' <"/proc/$(cat "$E2E_DIR/pids/kube-scheduler")/cmdline" | sed -n 's/^--secure-port=//p')
# kube-scheduler serves HTTPS with delegated authn/authz: the admin client cert (system:masters).
up=$(curl -sk --cert "$E2E_DIR/pki/admin.crt" --key "$E2E_DIR/pki/admin.key" "https://127.0.0.1:$up_port/metrics")
if grep -q '^# TYPE scheduler_schedule_attempts_total counter' <<<"$up"; then ok "upstream kube-scheduler's /metrics scraped (port $up_port)"
else bad "could not scrape upstream kube-scheduler's /metrics on port $up_port: $(head -c 200 <<<"$up")"; fi
# The entity counters as the real binary keeps them: our reading of recordIncomingEntitiesMetrics
# (a failure whose hint is QueueSkip names the unschedulable queue: no entity counted).
if [ "$(mval "$up" 'scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue="unschedulable"}')" != absent ]; then
  expect_val "$up" 'scheduler_queue_incoming_entities_total{event="ScheduleAttemptFailure",queue="unschedulable",type="pod"}' absent "upstream too"
else note "upstream's big pod did not fail into unschedulablePods in this run"; fi
up_new=$(mval "$up" 'scheduler_queue_incoming_entities_total{event="UnscheduledPodAdd",queue="active",type="pod"}')
up_new_pods=$(mval "$up" 'scheduler_queue_incoming_pods_total{event="UnscheduledPodAdd",queue="active"}')
if [ "$up_new" != absent ] && [ "$up_new" = "$up_new_pods" ]; then ok "upstream too: every new pod is a new entity ($up_new)"
else bad "upstream: incoming entities $up_new, incoming pods $up_new_pods for UnscheduledPodAdd"; fi
ks_text=$(ks_metrics main)
cmp=$(python3 - <(printf '%s\n' "$ks_text") <(printf '%s\n' "$up") <<'PY'
import re, sys
# The arguments are pipes: read each once.
LINES = {p: open(p).read().splitlines(True) for p in sys.argv[1:3]}
def families(path):
    fams = {}
    for line in LINES[path]:
        line = line.rstrip("\n")
        m = re.match(r"# (HELP|TYPE) (\S+) (.*)", line)
        if m:
            fams.setdefault(m.group(2), {"le": []})[m.group(1)] = m.group(3)
            continue
        m = re.match(r"(\S+?)_bucket\{(.*)\} ", line)
        if m and m.group(1) in fams:
            le = re.search(r'(?:^|,)le="([^"]*)"', m.group(2)).group(1)
            if le not in fams[m.group(1)]["le"]:
                fams[m.group(1)]["le"].append(le)
    return fams
ks, up = families(sys.argv[1]), families(sys.argv[2])
# Both schedulers watch the same pods and nodes: every informer event kubesched names must be one
# upstream names in this run too (event labels are upstream's ClusterEvent labels, which v1.37
# renamed: UnschedulablePod* became UnscheduledPod*).
def event_labels(path):
    return {m.group(1) for line in LINES[path]
            for m in [re.match(r'scheduler_event_handling_duration_seconds_count\{event="([^"]*)"\}', line)] if m}
ks_ev, up_ev = event_labels(sys.argv[1]), event_labels(sys.argv[2])
if ks_ev - up_ev:
    print("BAD event_handling_duration: kubesched's events %s are not among upstream's %s" % (sorted(ks_ev - up_ev), sorted(up_ev)))
else:
    print("OK event labels: kubesched's %s are all upstream's" % sorted(ks_ev))
for name in sorted(ks):
    if not name.startswith("scheduler_"):
        continue
    if name not in up:
        print("NOTE %s: upstream serves no series of it in this run" % name)
        continue
    for what in ("TYPE", "HELP", "le"):
        if ks[name].get(what) != up[name].get(what):
            print("BAD %s: %s differs: kubesched %r, upstream %r" % (name, what, ks[name].get(what), up[name].get(what)))
            break
    else:
        print("OK %s: %s%s" % (name, ks[name]["TYPE"], ", %d bounds" % len(ks[name]["le"]) if ks[name]["le"] else ""))
PY
)
while IFS= read -r line; do
  case "$line" in
    OK*) ok "same as upstream: ${line#OK }" ;;
    BAD*) bad "${line#BAD }" ;;
    NOTE*) note "${line#NOTE }" ;;
  esac
done <<<"$cmp"
[ -n "$cmp" ] || bad "no scheduler_* family compared"

ks_stop main
[ "$KS_RC" = 0 ] && ok "kubesched exited 0 on SIGTERM" || bad "kubesched exit status $KS_RC"
ks_no_errors main
exit 0
