#!/usr/bin/env bash
# Live mode, end to end: hot reload of the configuration and of a plugin .so under a steady
# stream of pods, against the real control plane.
#
# The profile `hot` scores with ReloadPrefer, an out-of-tree plugin built in two versions
# (tests/loader/fixtures/reload_prefer.c): v1 prefers node reload-a, v2 node reload-b. The
# configuration is mounted the way kubelet mounts a ConfigMap: DIR/config.yaml ->
# DIR/..data/config.yaml, ..data -> a timestamped directory, switched atomically.
#   1. kubesched starts with v1 (leader election on: it holds the Lease kube-system/kubesched-hot);
#   2. while a background stream creates pods (batches of 10 every 0.25 s), v2 is installed by
#      rename over the plugin file and a new configuration (ReloadPrefer's weight 10 -> 30) is
#      swapped in through ..data: kubesched reloads on the change; the switch must take under a
#      second (the time from the change it noticed to the swap, printed; and from the swap of
#      ..data to the log line, printed);
#   3. after the stream: every pod is bound exactly once (one binding each: no 409, one Scheduled
#      event each), pods bound before the reload are on reload-a, pods created after it on
#      reload-b; the Lease kept its holder and its transitions (no hand-over) and the process
#      is the same;
#   4. an invalid configuration (a negative weight): nothing changes (generation, placements),
#      the error names file, line and field, kubesched_config_reloads_total{result="failure"}
#      counts it and kubesched_config_last_reload_successful is 0;
#   5. the valid configuration again, without the second profile `hot2`: its pending pod stays,
#      with PodScheduled=False and a FailedScheduling event naming the missing schedulerName;
#      then v1 installed again and SIGHUP: the next pods go to reload-a (a SIGHUP reload of the
#      .so alone).
# Usage: tests/e2e/test-hot-reload.sh (env: see lib.sh; KUBESCHED_BUILD_DIR: the build tree
# holding tests/loader/fixtures/libreload_prefer_v{1,2}.so, default the directory of
# KUBESCHED_BIN)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
build_dir=${KUBESCHED_BUILD_DIR:-$(dirname "$KS_BIN")}
v1=$build_dir/tests/loader/fixtures/libreload_prefer_v1.so
v2=$build_dir/tests/loader/fixtures/libreload_prefer_v2.so
e2e_begin
[ -f "$v1" ] && [ -f "$v2" ] || { bad "no $v1 / $v2 (build the loader fixtures: cmake --build $build_dir)"; exit 1; }
here_py=$(dirname "$0")/create-pods.py

# ---- the plugin file and the ConfigMap-like configuration volume ---------------------------
plugdir=$E2E_DIR/plugins; mkdir -p "$plugdir"
so=$plugdir/reload_prefer.so
install_so() { cp "$1" "$so.tmp" && mv -f "$so.tmp" "$so"; } # a new inode, as install(1)
install_so "$v1"
vol=$E2E_DIR/config-volume; mkdir -p "$vol"
gen=0 HOT2=1
# write_config WEIGHT [BAD]: a new timestamped directory, then ..data switched to it atomically.
# With HOT2=1 a second profile `hot2` (default plugins) is there too.
write_config() {
  local weight=$1 bad_weight=${2:-}
  gen=$((gen + 1))
  local d="$vol/..$(date +%Y_%m_%d_%H_%M_%S).$gen" extra=""
  [ -n "$bad_weight" ] && extra="      - {name: NodeResourcesFit, weight: $bad_weight}"
  mkdir -p "$d"
  cat >"$d/config.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $KUBESCHED_E2E_SCHEDULER_KUBECONFIG, qps: 5000, burst: 5000}
leaderElection: {leaderElect: true, leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s, resourceName: kubesched-hot, resourceNamespace: kube-system}
profiles:
- schedulerName: hot
  plugins:
    score:
      enabled:
      - {name: ReloadPrefer, weight: $weight}
$extra
  pluginConfig:
  - name: ReloadPrefer
    args: {kubeschedPluginPath: $so}
$([ "$HOT2" = 1 ] && echo "- schedulerName: hot2")
YAML
  ln -sfn "$(basename "$d")" "$vol/..data_tmp" && mv -Tf "$vol/..data_tmp" "$vol/..data"
}
write_config 10
ln -sfn ..data/config.yaml "$vol/config.yaml"
cfg=$vol/config.yaml

# ---- nodes, kubesched ---------------------------------------------------------------------
{ mk_node reload-a 64 256Gi 1000; mk_node reload-b 64 256Gi 1000; } | kubectl create -f - >/dev/null \
  && ok "nodes reload-a and reload-b" || { bad "could not create the nodes"; exit 1; }
ks_start main "$cfg"
ks_wait_synced main || exit 1
lease() { kubectl get lease -n kube-system kubesched-hot -o json 2>/dev/null; }
holder() { lease | jq -r '.spec.holderIdentity // ""'; }
has_holder() { [ -n "$(holder)" ]; }
wait_for "$E2E_TIMEOUT" has_holder || { bad "kubesched does not hold the Lease"; exit 1; }
holder0=$(holder) trans0=$(lease | jq -r '.spec.leaseTransitions // 0') pid0=${KS_PID[main]}
ok "kubesched leads: Lease kube-system/kubesched-hot held by $holder0 (transitions $trans0)"

# a pod of profile hot2 that fits nowhere: parked as Unschedulable (it is orphaned in step 5)
mk_pod orphan-1 hot2 1000 1Gi | kubectl create -f - >/dev/null
orphan_unsched() { [[ "$(pod_cond orphan-1)" == "False|Unschedulable|0/2 nodes are available"* ]]; }
wait_for "$E2E_TIMEOUT" orphan_unsched && ok "orphan-1 (profile hot2) is Unschedulable: $(pod_cond orphan-1)" \
  || bad "orphan-1: '$(pod_cond orphan-1)'"

# ---- the stream ------------------------------------------------------------------------
# batch B: pods s-B-0..9, created by create-pods.py; "B EPOCH" appended to $E2E_DIR/batches
pods_jsonl() { # $1 batch, $2 count
  for i in $(seq 0 $(($2 - 1))); do
    printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"s-%s-%s","namespace":"default","labels":{"stream":"1"}},"spec":{"schedulerName":"hot","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}\n' "$1" "$i"
  done
}
stream() { # $1 first batch, $2 last batch
  for b in $(seq "$1" "$2"); do
    echo "$b $(date +%s.%N)" >>"$E2E_DIR/batches"
    pods_jsonl "$b" 10 | python3 "$here_py" --workers 4 >>"$E2E_DIR/stream.log" 2>&1 || echo "batch $b failed" >>"$E2E_DIR/stream.err"
    sleep 0.25
  done
}
stream 1 40 &
stream_pid=$!
sleep 3 # the stream runs under v1
reloads_before=$(grep -c "configuration reloaded" "$(ks_log main)")
t_change=$(date +%s.%N)
install_so "$v2"
write_config 30
reloaded() { [ "$(grep -c "configuration reloaded" "$(ks_log main)")" -gt "$reloads_before" ]; }
if wait_for 10 reloaded; then
  line=$(grep "configuration reloaded" "$(ks_log main)" | tail -1)
  note "$line"
  switch_ms=$(sed -n 's/.*switched \([0-9.]*\) ms after the file change.*/\1/p' <<<"$line")
  ts=$(awk '{print $2}' <<<"$line")
  t_log=$(date -u -d "$(date -u +%Y-%m-%d) $ts" +%s.%N)
  outside_ms=$(echo "($t_log - $t_change) * 1000" | bc -l | xargs printf '%.0f')
  echo "# switch: ${switch_ms} ms from the change kubesched saw to the swap; ${outside_ms} ms from the ..data swap to the log line (inotify, 200 ms settling, load, build, swap)"
  if [ -n "$switch_ms" ] && [ "$(echo "$switch_ms < 1000" | bc -l)" = 1 ]; then ok "the switch took ${switch_ms} ms (under a second)"
  else bad "the switch took '${switch_ms}' ms"; fi
  grep -q "profiles generation 2," <<<"$line" && ok "profiles generation 2" || bad "not generation 2: $line"
else bad "no reload within 10 s of the configuration change"; tail -n 20 "$(ks_log main)"; fi
t_reloaded=${t_log:-$(date +%s.%N)}
wait "$stream_pid"
[ -s "$E2E_DIR/stream.err" ] && bad "stream: $(cat "$E2E_DIR/stream.err")"
total=$(grep -o '"created": [0-9]*' "$E2E_DIR/stream.log" | awk '{s+=$2} END {print s+0}')
[ "$total" -eq 400 ] && ok "the stream created 400 pods" || bad "the stream created $total pods of 400"

# ---- every pod bound once; placements before and after ------------------------------------
if wait_for "$E2E_TIMEOUT" pods_bound stream=1 "$total"; then ok "all $total stream pods bound (none lost)"
else bad "stream pods bound: $(kubectl get pods -l stream=1 -o json | jq '[.items[] | select(.spec.nodeName != null)] | length') of $total"; fi
dups=$(grep -o "bound default/s-[0-9]*-[0-9]* to" "$(ks_log main)" | sort | uniq -d | head -3)
[ -z "$dups" ] && ok "no pod bound twice (kubesched's bind log)" || bad "bound twice: $dups"
kubectl get events.v1.events.k8s.io -n default -o json >"$E2E_DIR/events.json"
multi=$(jq -r '[.items[] | select(.reason=="Scheduled") | .regarding.name] | group_by(.) | map(select(length > 1) | .[0]) | join(" ")' "$E2E_DIR/events.json")
[ -z "$multi" ] && ok "one Scheduled event per pod" || bad "several Scheduled events: $multi"
grep -qE " 409[ :]|Conflict|already assigned|AlreadyExists" "$(ks_log main)" && bad "a bind conflict was logged" || ok "no bind conflict logged"

kubectl get pods -l stream=1 -o json | jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName // "-") \(.metadata.creationTimestamp)"' >"$E2E_DIR/placements"
# created after the reload was logged (batch start times from the stream): must be on reload-b
after_batches=$(awk -v t="$t_reloaded" '$2 > t + 0.3 {print $1}' "$E2E_DIR/batches" | tr '\n' ' ')
n_after=0 wrong_after=0
for b in $after_batches; do
  while read -r name node _; do
    n_after=$((n_after + 1)); [ "$node" = reload-b ] || wrong_after=$((wrong_after + 1))
  done < <(grep "^s-$b-" "$E2E_DIR/placements")
done
if [ "$n_after" -ge 50 ] && [ "$wrong_after" -eq 0 ]; then ok "all $n_after pods created after the reload went to reload-b (ReloadPrefer v2)"
else bad "pods created after the reload: $n_after, $wrong_after not on reload-b"; fi
# bound before the change (the log's bind lines before the first reload line): reload-a
before=$(awk '/configuration reloaded/ {exit} /apisource\] bound default\/s-/ {print $NF}' "$(ks_log main)" | sort | uniq -c | tr '\n' ' ')
if [ -n "$before" ] && ! grep -q reload-b <<<"$before"; then ok "pods bound before the reload: $before(ReloadPrefer v1)"
else bad "pods bound before the reload: '$before'"; fi

[ "$(holder)" = "$holder0" ] && ok "the Lease kept its holder" || bad "Lease holder changed: $(holder)"
trans1=$(lease | jq -r '.spec.leaseTransitions // 0')
[ "$trans1" = "$trans0" ] && ok "no leader hand-over (leaseTransitions $trans1)" || bad "leaseTransitions $trans0 -> $trans1"
ks_running main && [ "${KS_PID[main]}" = "$pid0" ] && ok "the same kubesched process" || bad "kubesched is not running"
m=$(ks_metrics main)
grep -q '^kubesched_config_reloads_total{result="success"} 1$' <<<"$m" && ok "kubesched_config_reloads_total{result=\"success\"} 1" \
  || bad "reload metrics: $(grep '^kubesched_config' <<<"$m" | tr '\n' ' ')"
grep -q '^kubesched_config_generation 2$' <<<"$m" && ok "kubesched_config_generation 2" || bad "generation: $(grep '^kubesched_config_generation' <<<"$m")"
# the old set drained: its .so was closed (v1 no longer mapped)
# (the kernel shows a mapped file whose name was renamed over as "PATH (deleted)")
drained() { ! grep -q "reload_prefer.so (deleted)" "/proc/${KS_PID[main]}/maps"; }
if wait_for 10 drained; then ok "the replaced module was closed once drained (the first version is no longer mapped)"
else bad "the first version of the .so is still mapped: $(grep reload_prefer "/proc/${KS_PID[main]}/maps" | awk '{print $6, $7}' | sort -u | tr '\n' ' ')"; fi

# ---- an invalid configuration changes nothing ------------------------------------------------
fails_before=$(grep -c "configuration reload failed" "$(ks_log main)")
write_config 30 -3
failed_logged() { [ "$(grep -c "configuration reload failed" "$(ks_log main)")" -gt "$fails_before" ]; }
if wait_for 10 failed_logged; then
  l=$(grep "configuration reload failed" "$(ks_log main)" | tail -1); note "$l"
  grep -qE "config.yaml:[0-9]+:[0-9]+: profiles\[0\]\.plugins\.score\.enabled\[1\]\.weight: Invalid value: -3" <<<"$l" \
    && ok "the error names file, line and field" || bad "error message: $l"
else bad "the invalid configuration was not reported"; fi
m=$(ks_metrics main)
grep -q '^kubesched_config_reloads_total{result="failure"} 1$' <<<"$m" && ok "kubesched_config_reloads_total{result=\"failure\"} 1" || bad "failure not counted: $(grep '^kubesched_config_reloads' <<<"$m" | tr '\n' ' ')"
grep -q '^kubesched_config_last_reload_successful 0$' <<<"$m" && ok "kubesched_config_last_reload_successful 0" || bad "$(grep '^kubesched_config_last_reload_successful' <<<"$m")"
grep -q '^kubesched_config_generation 2$' <<<"$m" && ok "generation still 2" || bad "generation changed: $(grep '^kubesched_config_generation' <<<"$m")"
pods_jsonl 90 10 | sed 's/"stream":"1"/"stream":"2"/' | python3 "$here_py" >/dev/null
wait_for "$E2E_TIMEOUT" pods_bound stream=2 10 && [ "$(kubectl get pods -l stream=2 -o json | jq -r '[.items[].spec.nodeName] | unique | join(",")')" = reload-b ] \
  && ok "after the invalid configuration, pods still go to reload-b" || bad "after the invalid configuration: $(kubectl get pods -l stream=2 -o wide --no-headers | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"

# ---- a valid configuration without hot2: its pending pod stays, with a clear condition ---------
reloads_before=$(grep -c "configuration reloaded" "$(ks_log main)")
HOT2=0 write_config 30
wait_for 10 reloaded || bad "the valid configuration again was not reloaded"
want_msg='no profile with schedulerName "hot2" since the configuration was reloaded; the pod stays pending until a profile of that name is configured again'
orphan_cond() { [ "$(pod_cond orphan-1)" = "False|Unschedulable|$want_msg" ]; }
wait_for "$E2E_TIMEOUT" orphan_cond && ok "orphan-1, whose profile went away: PodScheduled=False, Unschedulable, \"$want_msg\"" \
  || bad "orphan-1 after its profile went away: '$(pod_cond orphan-1)'"
kubectl get events.v1.events.k8s.io -n default -o json | jq -r --arg m "$want_msg" \
  '[.items[] | select(.regarding.name=="orphan-1" and .reason=="FailedScheduling" and .note==$m)] | length' >"$E2E_DIR/orphan-events"
[ "$(cat "$E2E_DIR/orphan-events")" = 1 ] && ok "one FailedScheduling event names the missing schedulerName" \
  || bad "FailedScheduling events for the missing profile: $(cat "$E2E_DIR/orphan-events")"

# ---- SIGHUP reloads a replaced .so with the configuration unchanged --------------------------
reloads_before=$(grep -c "configuration reloaded" "$(ks_log main)")
install_so "$v1"
kill -HUP "${KS_PID[main]}"
if wait_for 10 reloaded; then ok "SIGHUP reloaded: $(grep "configuration reloaded" "$(ks_log main)" | tail -1 | sed 's/.*reload\] //')"
else bad "SIGHUP did not reload"; fi
pods_jsonl 91 10 | sed 's/"stream":"1"/"stream":"3"/' | python3 "$here_py" >/dev/null
wait_for "$E2E_TIMEOUT" pods_bound stream=3 10 && [ "$(kubectl get pods -l stream=3 -o json | jq -r '[.items[].spec.nodeName] | unique | join(",")')" = reload-a ] \
  && ok "after SIGHUP with v1 installed again, pods go to reload-a" || bad "after SIGHUP: $(kubectl get pods -l stream=3 -o wide --no-headers | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
[ "$(holder)" = "$holder0" ] && [ "$(lease | jq -r '.spec.leaseTransitions // 0')" = "$trans0" ] \
  && ok "still no leader hand-over" || bad "the Lease changed hands"

ks_stop main TERM
[ "$KS_RC" = 0 ] && ok "kubesched exited 0 on SIGTERM" || bad "kubesched exited $KS_RC on SIGTERM"
# the one E line expected is the invalid configuration's
if grep -E "^[EF][0-9]" "$(ks_log main)" | grep -v "configuration reload failed" | grep -q .; then
  bad "kubesched logged errors:"; grep -E "^[EF][0-9]" "$(ks_log main)" | grep -v "configuration reload failed" | head -5
else ok "no other errors in kubesched's log"; fi
exit 0
