#!/usr/bin/env bash
# Live mode, end to end: kubesched as a second scheduler (schedulerName "kubesched") next to the
# upstream kube-scheduler, against a real etcd + kube-apiserver (start-control-plane.sh).
#   - 2 Nodes, 20 Pods (10 schedulerName kubesched, 10 default-scheduler): all bound;
#   - each Pod's Scheduled event (events.k8s.io/v1) comes from its own scheduler;
#   - an unschedulable kubesched Pod gets PodScheduled=False, reason Unschedulable, with the same
#     message upstream writes for its default-scheduler twin, and a FailedScheduling event;
#   - SIGTERM: kubesched exits 0; the control plane is stopped, nothing is left running.
# Not wired into any suite. Usage: tests/e2e/test-live-basic.sh
# Env: KUBESCHED_BIN (default build-live/kubesched), LIVE_TIMEOUT (seconds per wait, default 60)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${KUBESCHED_BIN:-$root/build-live/kubesched}
timeout_s=${LIVE_TIMEOUT:-60}
pass=0 fail=0 ks_pid= e2e_dir= started=0
ok() { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }

finish() {
  local rc=$?
  if [ -n "$ks_pid" ] && kill -0 "$ks_pid" 2>/dev/null; then
    kill -TERM "$ks_pid" 2>/dev/null; sleep 2; kill -KILL "$ks_pid" 2>/dev/null
  fi
  if [ "$started" = 1 ]; then
    if [ "$fail" -gt 0 ] && [ -f "$e2e_dir/kubesched.log" ]; then
      echo "--- tail of kubesched.log"; tail -n 40 "$e2e_dir/kubesched.log"
    fi
    if "$here/stop-control-plane.sh" "$e2e_dir" >/dev/null 2>&1; then ok "control plane stopped, nothing left"
    else bad "stop-control-plane.sh failed for $e2e_dir"; fi
  fi
  if pgrep -f "$bin --config" >/dev/null 2>&1; then bad "a kubesched process is still running"; fi
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ] && [ "$rc" -eq 0 ] && exit 0
  exit 1
}
trap finish EXIT
trap 'exit 130' INT TERM

[ -x "$bin" ] || { bad "no kubesched binary at $bin (cmake --build build-live)"; exit 1; }
out=$("$here/start-control-plane.sh" --with-scheduler) || { echo "$out"; bad "control plane did not start"; exit 1; }
e2e_dir=$(printf '%s\n' "$out" | sed -n 's/^export KUBESCHED_E2E_DIR=//p' | tr -d "'\"" | head -1)
[ -n "$e2e_dir" ] || e2e_dir=$(printf '%s\n' "$out" | grep -o '/tmp/kubesched-e2e\.[A-Za-z0-9]*' | head -1)
started=1
# shellcheck disable=SC1091
. "$e2e_dir/env"
echo "control plane in $e2e_dir"

cat >"$e2e_dir/kubesched.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $KUBESCHED_E2E_SCHEDULER_KUBECONFIG
leaderElection:
  leaderElect: false
profiles:
- schedulerName: kubesched
YAML
ks_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" --config "$e2e_dir/kubesched.yaml" --bind-address 127.0.0.1 --secure-port "$ks_port" -v 2 \
  >"$e2e_dir/kubesched.log" 2>&1 &
ks_pid=$!

wait_for() { # seconds, command...
  local t=$1; shift; local t0=$SECONDS
  while [ $((SECONDS - t0)) -lt "$t" ]; do "$@" && return 0; sleep 0.3; done
  return 1
}
if wait_for "$timeout_s" grep -q "caches synced" "$e2e_dir/kubesched.log"; then ok "kubesched synced its informers"
else bad "kubesched did not sync"; exit 1; fi

for n in 1 2; do
  kubectl create -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: live-node-$n
  labels: {kubernetes.io/hostname: live-node-$n}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "no kubelet: a plain object"}
YAML
done
pod() { # name schedulerName cpu
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {app: live}}
spec:
  schedulerName: $2
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: $3, memory: 500Mi}}
YAML
}
{ for i in $(seq 1 10); do pod "ks-$i" kubesched 100m; pod "def-$i" default-scheduler 100m; done; } | kubectl create -f - >/dev/null

all_bound() {
  [ "$(kubectl get pods -n default -l app=live -o json | jq '[.items[] | select(.spec.nodeName != null and .spec.nodeName != "")] | length')" = 20 ]
}
if wait_for "$timeout_s" all_bound; then ok "all 20 pods bound"; else bad "not all pods bound"; kubectl get pods -o wide; fi
ks_nodes=$(kubectl get pods -n default -l app=live -o json | jq -r '[.items[] | select(.spec.schedulerName=="kubesched") | .spec.nodeName] | unique | join(",")')
echo "kubesched pods went to: $ks_nodes"

# Scheduled events (events.k8s.io/v1): who reported each pod's binding.
events_ok() {
  kubectl get events.v1.events.k8s.io -n default -o json >"$e2e_dir/events.json" || return 1
  [ "$(jq '[.items[] | select(.reason=="Scheduled" and (.regarding.name|test("^(ks|def)-")))] | length' "$e2e_dir/events.json")" -ge 20 ]
}
wait_for "$timeout_s" events_ok || true
for i in $(seq 1 10); do
  for p in "ks-$i:kubesched" "def-$i:default-scheduler"; do
    name=${p%%:*} want=${p#*:}
    got=$(jq -r --arg n "$name" '[.items[] | select(.reason=="Scheduled" and .regarding.name==$n) | .reportingController] | join(",")' "$e2e_dir/events.json")
    node=$(kubectl get pod "$name" -o jsonpath='{.spec.nodeName}')
    note=$(jq -r --arg n "$name" '[.items[] | select(.reason=="Scheduled" and .regarding.name==$n) | .note] | first // ""' "$e2e_dir/events.json")
    if [ "$got" = "$want" ] && [ "$note" = "Successfully assigned default/$name to $node" ]; then ok "$name: Scheduled event from $got ($note)"
    else bad "$name: Scheduled event reportingController='$got' note='$note' (want $want, node $node)"; fi
  done
done

# An unschedulable pod for each scheduler: the same condition and message.
{ pod ks-big kubesched 100; pod def-big default-scheduler 100; } | sed 's/app: live/app: live-big/' | kubectl create -f - >/dev/null
cond() { kubectl get pod "$1" -o json | jq -r '.status.conditions[]? | select(.type=="PodScheduled") | "\(.status)|\(.reason)|\(.message)"'; }
both_failed() { [ -n "$(cond ks-big)" ] && [ -n "$(cond def-big)" ]; }
wait_for "$timeout_s" both_failed || true
ks_c=$(cond ks-big) def_c=$(cond def-big)
echo "kubesched:         $ks_c"
echo "default-scheduler: $def_c"
case "$ks_c" in
  "False|Unschedulable|"?*) ok "ks-big: PodScheduled=False, reason Unschedulable" ;;
  *) bad "ks-big: PodScheduled condition '$ks_c'" ;;
esac
# kube-scheduler 1.34 runs DynamicResources (DRA is GA) whose PostFilter adds "no new claims to
# deallocate, "; kubesched has no DynamicResources plugin yet, so that fragment is set aside
# unless LIVE_STRICT_MESSAGE=1.
def_cmp=$def_c
if [ "${LIVE_STRICT_MESSAGE:-0}" != 1 ]; then
  def_cmp=${def_c/no new claims to deallocate, /}
  [ "$def_cmp" != "$def_c" ] && echo "note: compared without default-scheduler's DynamicResources fragment 'no new claims to deallocate, ' (kubesched has no DynamicResources plugin)"
fi
if [ -n "$def_c" ] && [ "$ks_c" = "$def_cmp" ]; then ok "ks-big: condition and message as default-scheduler's"
else bad "ks-big: condition differs from default-scheduler's"; fi
fs=$(kubectl get events.v1.events.k8s.io -n default -o json | jq -r '[.items[] | select(.reason=="FailedScheduling" and .regarding.name=="ks-big") | "\(.reportingController)|\(.type)|\(.action)"] | first // ""')
if [ "$fs" = "kubesched|Warning|Scheduling" ]; then ok "ks-big: FailedScheduling event from kubesched"; else bad "ks-big: FailedScheduling event '$fs'"; fi

# Endpoints: ready after sync; /metrics counts what happened (10 bound pods of profile kubesched,
# at least one unschedulable attempt, the pending gauges present).
if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ks_port/readyz")" = 200 ]; then ok "/readyz is 200 after sync"
else bad "/readyz is not 200"; fi
if [ "$(curl -s "http://127.0.0.1:$ks_port/healthz")" = ok ]; then ok "/healthz says ok"; else bad "/healthz"; fi
metrics=$(curl -s "http://127.0.0.1:$ks_port/metrics")
if grep -qx 'scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"} 10' <<<"$metrics"; then
  ok "/metrics: 10 scheduled attempts for profile kubesched"
else bad "/metrics: scheduled attempts: $(grep '^scheduler_schedule_attempts_total' <<<"$metrics" | tr '\n' ' ')"; fi
if grep -Eq '^scheduler_schedule_attempts_total\{profile="kubesched",result="unschedulable"\} [1-9]' <<<"$metrics"; then
  ok "/metrics: unschedulable attempts counted"
else bad "/metrics: no unschedulable attempts"; fi
if grep -q '^scheduler_pending_pods{queue="unschedulable"} ' <<<"$metrics"; then ok "/metrics: scheduler_pending_pods present"
else bad "/metrics: no scheduler_pending_pods"; fi

# SIGTERM: stop taking pods, finish bindings, exit 0.
kill -TERM "$ks_pid"
if wait_for 15 bash -c "! kill -0 $ks_pid 2>/dev/null"; then
  wait "$ks_pid"; rc=$?
  if [ "$rc" = 0 ]; then ok "kubesched exited 0 on SIGTERM"; else bad "kubesched exited $rc on SIGTERM"; fi
else bad "kubesched still running 15 s after SIGTERM"; fi
ks_pid=
if grep -qE "^[EF][0-9]" "$e2e_dir/kubesched.log"; then
  bad "kubesched logged errors:"; grep -E "^[EF][0-9]" "$e2e_dir/kubesched.log" | head -5
else ok "no errors in kubesched's log"; fi
exit 0
