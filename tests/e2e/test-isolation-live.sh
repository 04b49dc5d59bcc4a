#!/usr/bin/env bash
# An isolated plugin that crashes, in live mode, end to end against a real etcd + kube-apiserver
# (issue 13): kubesched runs the Faulty fixture plugin (tests/loader/fixtures/faulty.c, SIGSEGV in
# Filter for pods named boom-*) with kubeschedIsolation: process, kubeschedFailurePolicy: ignore,
# kubeschedErrorBudget: 3, under a stream of 500 pods with 5 boom pods among them:
#   - kubesched never dies; every one of the 505 pods is bound exactly once (one binder, one
#     Scheduled event each);
#   - each crash costs a boom pod an attempt: its FailedScheduling event and PodScheduled
#     condition name the plugin, its .so, Filter, the pod and the node; the log counts the
#     failures; after the third the plugin is taken out and the boom pods are bound without it;
#   - /metrics: kubesched_plugin_isolation_failures_total{reason="crash"} 3 and
#     kubesched_plugin_isolation_taken_out 1.
# Usage: tests/e2e/test-isolation-live.sh (env: see lib.sh; the fixture .so is looked for next to
# the kubesched binary, in tests/fixtures/libfix_faulty.so of its build directory)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
so=$(dirname "$KS_BIN")/tests/fixtures/libfix_faulty.so
if [ ! -f "$so" ]; then
  echo "FAIL - $so is missing (build the tests first: cmake --build build)"
  echo "0 passed, 1 failed"
  exit 1
fi
e2e_begin
timeout_s=$((E2E_TIMEOUT * 2))
export KUBESCHED_E2E_SCHEDULER_QPS=5000 KUBESCHED_E2E_SCHEDULER_BURST=5000
cfg=$(ks_config kubesched \
  "profiles:" \
  "- schedulerName: kubesched" \
  "  plugins: {multiPoint: {enabled: [{name: Faulty}]}}" \
  "  pluginConfig:" \
  "  - name: Faulty" \
  "    args: {kubeschedPluginPath: $so, mode: segv, kubeschedIsolation: process, kubeschedFailurePolicy: ignore, kubeschedErrorBudget: 3}")
ks_start main "$cfg"
ks_wait_synced main || exit 1
for n in $(seq 1 10); do mk_node "iso-node-$n" 64 256Gi 110; done | kubectl create -f - >/dev/null

pod_json() {
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default","labels":{"app":"iso"}},"spec":{"schedulerName":"kubesched","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"100m","memory":"100Mi"}}}]}}\n' "$1"
}
{
  for i in $(seq 0 499); do
    pod_json "$(printf 'iso-%04d' "$i")"
    if [ $((i % 100)) = 50 ]; then pod_json "boom-$((i / 100))"; fi
  done
} >"$E2E_DIR/pods.jsonl"
t0=$SECONDS
if out=$("$E2E_HERE/create-pods.py" <"$E2E_DIR/pods.jsonl"); then ok "created 505 pods: $out"; else bad "creating pods: $out"; fi
if wait_for "$timeout_s" pods_bound app=iso 505; then ok "all 505 pods bound in $((SECONDS - t0)) s"
else bad "only $(kubectl get pods -l app=iso -o json | jq '[.items[] | select(.spec.nodeName)] | length') of 505 bound"; fi
ks_running main && ok "kubesched is still running" || bad "kubesched died"

log=$(ks_log main)
binds=$(grep -o "apisource\] bound default/[a-z0-9-]*" "$log" | sort | uniq -d)
[ -z "$binds" ] && ok "no pod bound twice" || bad "bound twice: $binds"
[ "$(grep -o "apisource\] bound default/[a-z0-9-]*" "$log" | sort -u | wc -l)" = 505 ] && ok "505 distinct binds in the log" \
  || bad "$(grep -o "apisource\] bound default/[a-z0-9-]*" "$log" | sort -u | wc -l) distinct binds"
want="plugin \"Faulty\" (isolated, $so) crashed with SIGSEGV at Filter, pod default/boom-"
[ "$(grep -cF "$want" "$log")" -ge 3 ] && ok "the log names plugin, .so, Filter, pod and node of each crash" || { bad "no named crash in the log"; grep isolation "$log" | head -5; }
grep -q "(failure 3 of 3 allowed)" "$log" && ok "the log counts the failures (3 of 3)" || bad "no failure count"
grep -q "plugin Faulty is taken out after 3 failures (kubeschedFailurePolicy: ignore): the profile runs without it" "$log" \
  && ok "the plugin is taken out after the budget" || bad "no taken-out line"
grep -q "failure 4 of" "$log" && bad "a fourth failure after the plugin was taken out" || ok "no failure after it was taken out"

ev=$(kubectl get events.v1.events.k8s.io -n default -o json | jq -r --arg w "$want" '[.items[] | select(.reason=="FailedScheduling" and (.note | contains($w)))] | length')
[ "${ev:-0}" -ge 1 ] && ok "FailedScheduling events name the crash ($ev)" || bad "no FailedScheduling event names the crash"
sched=$(kubectl get events.v1.events.k8s.io -n default -o json | jq -r '[.items[] | select(.reason=="Scheduled")] | group_by(.regarding.name) | map(select(length > 1 or ((.[0].series.count // 1) > 1))) | length')
[ "$sched" = 0 ] && ok "no pod has two Scheduled events" || bad "$sched pods have two Scheduled events"
m=$(ks_metrics main)
grep -q '^kubesched_plugin_isolation_failures_total{plugin="Faulty",profile="kubesched",reason="crash"} 3$' <<<"$m" \
  && ok "kubesched_plugin_isolation_failures_total{reason=\"crash\"} 3" || { bad "failures metric"; grep kubesched_plugin <<<"$m"; }
grep -q '^kubesched_plugin_isolation_taken_out{plugin="Faulty",profile="kubesched"} 1$' <<<"$m" \
  && ok "kubesched_plugin_isolation_taken_out 1" || bad "taken-out metric"
ks_stop main TERM
[ "$KS_RC" = 0 ] && ok "kubesched exited 0 on SIGTERM" || bad "kubesched exited $KS_RC"
exit 0
