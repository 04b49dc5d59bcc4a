#!/usr/bin/env bash
# Live mode, end to end: kubesched (schedulerName kubesched) and the upstream kube-scheduler
# (default-scheduler) side by side on one cluster, and the pods/s each reaches in the same run.
#
# Phase 1, correctness: 10 nodes (5 CPU, 10Gi, 24 pods each); both schedulers running; 200 pods,
# 100 per scheduler, in three sizes (100m/200Mi, 200m/400Mi, 300m/600Mi), created concurrently
# (create-pods.py) in four waves of 50: default-scheduler, kubesched, default-scheduler,
# kubesched, each wave bound before the next is created. They need 80% of the cluster's CPU, 78%
# of its memory and 83% of its pod slots. kubesched's profile scores with NodeResourcesFit
# MostAllocated (it packs nodes full) while upstream keeps LeastAllocated (it spreads), so they
# share nodes and fill some to 100%: had kubesched not counted upstream's pods, its waves would
# stack pods on nodes upstream had filled; had upstream not counted kubesched's, its second wave
# would spread onto nodes kubesched had packed. Checked: every pod bound; exactly one Scheduled
# event per pod (events.k8s.io/v1), reported by the scheduler the pod names (reportingController)
# and naming the node the pod is bound to; on every node the sum of requests <= allocatable for
# cpu, memory and pods; some node shared by both is >= 90% full; no FailedScheduling event.
# Why waves: two schedulers that do not coordinate race by design. Each sees the other's pods
# only once their binding has been written and watched, so when both bind into the same nearly
# full node at once, a node can end up over-committed. That race is the same between any two
# schedulers, upstream's included; in a real cluster the kubelet's admission rejects the extra
# pods. Seen here with all 200 pods created at once (binds then took up to ~1 s on this loaded
# machine): 4-5 of the 10 nodes over by up to 5 pods, the late pods from both schedulers. The
# waves keep the check about accounting (each counts the other's bound pods), not about the race.
#
# Phase 2, throughput: both schedulers are stopped, E2E_THROUGHPUT_PODS pods per scheduler
# (default 300) are created while nobody schedules, then kubesched is started alone until it has
# bound its pods, then kube-scheduler alone (restarted with the command line it had), both with
# the same client qps/burst (5000/5000: kubesched's clientConnection, kube-scheduler's
# --kube-api-qps/--kube-api-burst through KUBESCHED_E2E_SCHEDULER_QPS). Each works off a full
# queue, so the figure is the scheduler's, not the pod creator's, and neither takes the small
# machine's CPU from the other. Rate = (N - 1) / (time from its first to its last Scheduled
# event's eventTime).
# Usage: tests/e2e/test-side-by-side.sh (env: see lib.sh; E2E_THROUGHPUT_PODS, pods per scheduler
# in phase 2, default 300, 0 skips it)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
export KUBESCHED_E2E_SCHEDULER_QPS=5000 KUBESCHED_E2E_SCHEDULER_BURST=5000
tp_pods=${E2E_THROUGHPUT_PODS:-300}
e2e_begin --with-scheduler
creator=$E2E_HERE/create-pods.py
if tr '\0' ' ' <"/proc/$(cat "$E2E_DIR/pids/kube-scheduler")/cmdline" | grep -q -- '--kube-api-qps=5000 --kube-api-burst=5000'; then
  ok "kube-scheduler runs with --kube-api-qps=5000 --kube-api-burst=5000, kubesched with clientConnection qps 5000, burst 5000"
else bad "kube-scheduler's command line lacks --kube-api-qps=5000 --kube-api-burst=5000"; fi
cfg=$(ks_config kubesched "profiles:" "- schedulerName: kubesched" "  pluginConfig:" \
  "  - name: NodeResourcesFit" "    args: {scoringStrategy: {type: MostAllocated}}")
ks_start main "$cfg"
ks_wait_synced main || exit 1

# ---- helpers -------------------------------------------------------------------------------
# jq definitions: quantities ("300m", "600Mi", "5") as numbers; eventTime (RFC 3339 with
# microseconds) as seconds since the epoch.
JQ_DEFS='
def qty: tostring | capture("^(?<n>[0-9.]+)(?<u>[a-zA-Z]*)$")
  | (.n | tonumber) * ({"": 1, "m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024,
                        "Mi": 1048576, "Gi": 1073741824, "Ti": 1099511627776}[.u]);
def etime: capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?(?<z>Z|[+-].*)$")
  | ((.s + "Z") | fromdateiso8601) + (("0." + (.f // "0")) | tonumber);
'
# pod_json NAME SCHEDULER CPU MEMORY PHASE: one pod as a JSON line
pod_json() {
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default","labels":{"e2e-phase":"%s"}},"spec":{"schedulerName":"%s","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"%s","memory":"%s"}}}]}}\n' \
    "$1" "$5" "$2" "$3" "$4"
}
# gen_pods PHASE N: N pods per scheduler, alternating, sizes cycling through three shapes
gen_pods() {
  local phase=$1 n=$2 i cpu=(100m 200m 300m) mem=(200Mi 400Mi 600Mi)
  for ((i = 0; i < n; i++)); do
    pod_json "$(printf 'ks-%s-%04d' "$phase" "$i")" kubesched "${cpu[i % 3]}" "${mem[i % 3]}" "$phase"
    pod_json "$(printf 'def-%s-%04d' "$phase" "$i")" default-scheduler "${cpu[i % 3]}" "${mem[i % 3]}" "$phase"
  done
}
bound_count() { # PHASE
  kubectl get pods -n default -l "e2e-phase=$1" -o json | jq '[.items[] | select((.spec.nodeName // "") != "")] | length'
}
all_bound() { [ "$(bound_count "$1")" -ge "$2" ]; }
bound_by() { # PHASE SCHEDULER [N]: prints how many of SCHEDULER's pods are bound; with N, at least N?
  local c
  c=$(kubectl get pods -n default -l "e2e-phase=$1" -o json |
      jq --arg s "$2" '[.items[] | select(.spec.schedulerName == $s and (.spec.nodeName // "") != "")] | length')
  if [ $# -ge 3 ]; then [ "$c" -ge "$3" ]; else echo "$c"; fi
}
snapshot() { # PHASE: pods, nodes and events into $E2E_DIR/PHASE-*.json
  kubectl get pods -n default -l "e2e-phase=$1" -o json >"$E2E_DIR/$1-pods.json"
  kubectl get nodes -o json >"$E2E_DIR/$1-nodes.json"
  kubectl get events.v1.events.k8s.io -n default -o json >"$E2E_DIR/$1-events.json"
}
events_complete() { # PHASE N: N Scheduled events for the phase's pods
  kubectl get events.v1.events.k8s.io -n default -o json >"$E2E_DIR/$1-events.json" || return 1
  [ "$(jq --arg p "$1-" '[.items[] | select(.reason == "Scheduled" and (.regarding.name | contains($p)))] | length' \
        "$E2E_DIR/$1-events.json")" -ge "$2" ]
}

# check_events PHASE TOTAL: exactly one Scheduled event per pod, from its own scheduler, naming
# the node it is bound to.
check_events() {
  local phase=$1 total=$2 wrong
  wrong=$(jq -r -n --slurpfile pods "$E2E_DIR/$phase-pods.json" --slurpfile ev "$E2E_DIR/$phase-events.json" '
    ($ev[0].items | map(select(.reason == "Scheduled")) | group_by(.regarding.name)
      | map({key: .[0].regarding.name, value: .}) | from_entries) as $by
    | $pods[0].items[] | .metadata.name as $n | ($by[$n] // []) as $e
    | if ($e | length) != 1 then "\($n): \($e | length) Scheduled events"
      elif $e[0].reportingController != .spec.schedulerName then
        "\($n): schedulerName \(.spec.schedulerName) but Scheduled by \($e[0].reportingController)"
      elif $e[0].note != "Successfully assigned default/\($n) to \(.spec.nodeName)" then
        "\($n): bound to \(.spec.nodeName) but the event says \($e[0].note)"
      else empty end')
  if [ -z "$wrong" ]; then
    ok "phase ${phase#p}: each of the $total pods has exactly one Scheduled event, from the scheduler it names, for the node it is bound to"
  else bad "phase ${phase#p}: $(wc -l <<<"$wrong") pods with wrong Scheduled events:"; head -n 5 <<<"$wrong"; fi
}

# check_capacity PHASE: per node, the requests of the pods bound there against allocatable.
check_capacity() {
  local phase=$1 table over
  table=$(jq -r -n --slurpfile pods "$E2E_DIR/$phase-pods.json" --slurpfile nodes "$E2E_DIR/$phase-nodes.json" "$JQ_DEFS"'
    ($pods[0].items | map(select((.spec.nodeName // "") != ""))) as $bound
    | $nodes[0].items[] | .metadata.name as $node | .status.allocatable as $a
    | [$bound[] | select(.spec.nodeName == $node)] as $on
    | [$on[] | {cpu: ([.spec.containers[].resources.requests.cpu // "0" | qty] | add),
        mem: ([.spec.containers[].resources.requests.memory // "0" | qty] | add),
        ks: (if .spec.schedulerName == "kubesched" then 1 else 0 end)}] as $r
    | ($r | map(.cpu) | add // 0) as $cpu | ($r | map(.mem) | add // 0) as $mem
    | ($r | map(.ks) | add // 0) as $ks
    | [$node, $ks, (($on | length) - $ks), ($cpu * 1000 | round), (($a.cpu | qty) * 1000 | round),
       ($mem / 1048576 | round), (($a.memory | qty) / 1048576 | round), ($on | length), ($a.pods | qty)]
    | @tsv')
  printf '#      %-14s %5s %5s %14s %16s %8s\n' node ks def "cpu m/alloc" "memory Mi/alloc" pods
  awk -F'\t' '{printf "#      %-14s %5d %5d %6d/%-7d %7d/%-8d %3d/%-4d\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}' <<<"$table"
  over=$(awk -F'\t' '$4 > $5 || $6 > $7 || $8 > $9 {print $1}' <<<"$table" | tr '\n' ' ')
  counted=$(awk -F'\t' '{n += $8} END {print n + 0}' <<<"$table")
  bound=$(jq '[.items[] | select((.spec.nodeName // "") != "")] | length' "$E2E_DIR/$phase-pods.json")
  if [ "$counted" != "$bound" ] || [ "$bound" = 0 ]; then
    bad "phase ${phase#p}: the capacity table counts $counted pods on nodes, $bound are bound"
  elif [ -z "$over" ]; then ok "phase ${phase#p}: no node over-committed (cpu, memory and pods within allocatable on every node)"
  else bad "phase ${phase#p}: over-committed nodes: $over"; fi
  SHARED=$(awk -F'\t' '$2 > 0 && $3 > 0' <<<"$table" | wc -l)
  FULLEST=$(awk -F'\t' '$2 > 0 && $3 > 0 {f = 100 * $4 / $5; if (100 * $8 / $9 > f) f = 100 * $8 / $9; if (f > m) m = f} END {printf "%d", m}' <<<"$table")
}

# rates PHASE: per scheduler, the number of Scheduled events, the first and last eventTime, the
# pods/s between them. Prints "name count first last rate" lines.
rates() {
  jq -r "$JQ_DEFS"' .items | map(select(.reason == "Scheduled" and (.regarding.name | contains("-'"$1"'-"))))
    | group_by(.reportingController)[] | (map(.eventTime | etime) | sort) as $t
    | [.[0].reportingController, ($t | length), $t[0], $t[-1],
       (if ($t | length) > 1 and $t[-1] > $t[0] then (($t | length) - 1) / ($t[-1] - $t[0]) else 0 end)]
    | @tsv' "$E2E_DIR/$1-events.json"
}

# ---- phase 1: side by side, 200 pods -----------------------------------------------------
for i in $(seq -w 0 9); do mk_node "ss-node-$i" 5 10Gi 24; done | kubectl create -f - >/dev/null
gen_pods p1 100 >"$E2E_DIR/p1-all.jsonl"
# wave K (0..3): pods 50K..50K+49 of one scheduler (def for even K, ks for odd K)
wave=0
for who in def ks def ks; do
  grep "\"name\":\"$who-p1-" "$E2E_DIR/p1-all.jsonl" | sed -n "$((wave / 2 * 50 + 1)),$((wave / 2 * 50 + 50))p" >"$E2E_DIR/p1-wave$wave.jsonl"
  if ! created=$(python3 "$creator" --workers 16 <"$E2E_DIR/p1-wave$wave.jsonl"); then
    bad "phase 1: creating wave $wave failed: $created"; exit 1
  fi
  want=$((50 * (wave + 1)))
  if wait_for "$E2E_TIMEOUT" all_bound p1 "$want"; then ok "phase 1, wave $wave: 50 $who pods created and bound ($want in all)"
  else bad "phase 1, wave $wave: $(bound_count p1) of $want pods bound in ${E2E_TIMEOUT}s"; fi
  wave=$((wave + 1))
done
wait_for 30 events_complete p1 200 || true
snapshot p1
check_events p1 200
check_capacity p1
if [ "$SHARED" -ge 1 ] && [ "$FULLEST" -ge 90 ]; then
  ok "phase 1: $SHARED nodes hold pods of both schedulers, the fullest of them at $FULLEST% of cpu or pods"
else bad "phase 1: $SHARED nodes hold pods of both schedulers, the fullest at $FULLEST%: the schedulers did not share full nodes"; fi
failed=$(jq '[.items[] | select(.reason == "FailedScheduling")] | length' "$E2E_DIR/p1-events.json")
if [ "$failed" = 0 ]; then ok "phase 1: no FailedScheduling events"; else bad "phase 1: $failed FailedScheduling events"; fi

# ---- phase 2: throughput from a full queue ----------------------------------------------
if [ "$tp_pods" -gt 0 ]; then
  ks_stop main TERM
  [ "$KS_RC" = 0 ] || bad "kubesched exited $KS_RC on SIGTERM before phase 2"
  ksched_pid=$(cat "$E2E_DIR/pids/kube-scheduler")
  mapfile -d '' ksched_cmd <"/proc/$ksched_pid/cmdline"
  kill -TERM "$ksched_pid"
  wait_for 20 bash -c "! kill -0 $ksched_pid 2>/dev/null" || kill -KILL "$ksched_pid"
  kubectl delete pods -n default -l e2e-phase=p1 --grace-period=0 --force >/dev/null 2>&1
  # room for 2N pods of at most 300m/600Mi next to the emptied phase-1 nodes: 100 pods per node
  n_nodes=$(((2 * tp_pods + 99) / 100))
  for ((i = 0; i < n_nodes; i++)); do mk_node "$(printf 'tp-node-%03d' "$i")" 32 64Gi 110; done | kubectl create -f - >/dev/null
  gen_pods p2 "$tp_pods" >"$E2E_DIR/p2-pods.jsonl"
  if created=$(python3 "$creator" --workers 16 <"$E2E_DIR/p2-pods.jsonl"); then
    ok "phase 2: $((2 * tp_pods)) pods created while no scheduler runs: $created"
  else bad "phase 2: creating pods failed: $created"; exit 1; fi

  # One scheduler at a time, so that neither takes CPU from the other on a small machine: first
  # kubesched alone (the default-scheduler pods wait, unassigned), then kube-scheduler alone.
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  # CPU seconds (user + system) a process has used so far: where the time of each phase went.
  cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || echo "?"; }
  apiserver_pid=$(cat "$E2E_DIR/pids/kube-apiserver")
  api_cpu0=$(cpu_s "$apiserver_pid")
  t_ks=$(date +%s.%N)
  ks_start tp "$cfg"
  if wait_for "$((E2E_TIMEOUT * 2))" bound_by p2 kubesched "$tp_pods"; then ok "phase 2: kubesched bound its $tp_pods pods"
  else bad "phase 2: kubesched bound $(bound_by p2 kubesched) of $tp_pods pods"; fi
  ks_cpu=$(cpu_s "${KS_PID[tp]}") api_cpu1=$(cpu_s "$apiserver_pid")
  ks_stop tp TERM
  if [ "$KS_RC" = 0 ]; then ok "kubesched (phase 2) exited 0 on SIGTERM"; else bad "kubesched (phase 2) exited $KS_RC on SIGTERM"; fi
  t_def=$(date +%s.%N)
  api_cpu2=$(cpu_s "$apiserver_pid")
  "${ksched_cmd[@]}" </dev/null >>"$E2E_DIR/logs/kube-scheduler.log" 2>&1 &
  echo $! >"$E2E_DIR/pids/kube-scheduler"
  if wait_for "$((E2E_TIMEOUT * 2))" bound_by p2 default-scheduler "$tp_pods"; then ok "phase 2: kube-scheduler bound its $tp_pods pods"
  else bad "phase 2: kube-scheduler bound $(bound_by p2 default-scheduler) of $tp_pods pods"; fi
  def_cpu=$(cpu_s "$(cat "$E2E_DIR/pids/kube-scheduler")") api_cpu3=$(cpu_s "$apiserver_pid")

  wait_for 60 events_complete p2 "$((2 * tp_pods))" || true
  snapshot p2
  check_events p2 "$((2 * tp_pods))"
  check_capacity p2
  rates p2 >"$E2E_DIR/p2-rates.tsv"
  note "phase 2: $tp_pods pods per scheduler from a full queue, each scheduler alone, client qps/burst 5000/5000 for both,"
  note "         rate = (N - 1) / (last - first Scheduled eventTime); times from the scheduler's start;"
  note "         load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs; etcd,"
  note "         kube-apiserver and the scheduler share them, so the figures move with the machine's load):"
  while IFS=$'\t' read -r who n first last rate; do
    t0=$t_ks; [ "$who" = kubesched ] || t0=$t_def
    printf '#      %-18s %5d pods bound from +%.3f s to +%.3f s after its start: %.1f pods/s\n' "$who" "$n" \
      "$(awk -v a="$first" -v b="$t0" 'BEGIN {print a - b}')" "$(awk -v a="$last" -v b="$t0" 'BEGIN {print a - b}')" "$rate"
    if [ "$n" -eq "$tp_pods" ]; then ok "phase 2: $n Scheduled events from $who"
    else bad "phase 2: $n Scheduled events from $who, want $tp_pods"; fi
  done <"$E2E_DIR/p2-rates.tsv"
  note "CPU seconds from start until its pods were bound: kubesched $ks_cpu (kube-apiserver meanwhile"
  note "  $(awk -v a="$api_cpu1" -v b="$api_cpu0" 'BEGIN {print a - b}')), kube-scheduler $def_cpu (kube-apiserver meanwhile $(awk -v a="$api_cpu3" -v b="$api_cpu2" 'BEGIN {print a - b}'))"
  ks_no_errors tp
else
  ks_stop main TERM
  if [ "$KS_RC" = 0 ]; then ok "kubesched exited 0 on SIGTERM"; else bad "kubesched exited $KS_RC on SIGTERM"; fi
fi
ks_no_errors main
exit 0
