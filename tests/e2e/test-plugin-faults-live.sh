#!/usr/bin/env bash
# A faulty in-process plugin in live mode, end to end against a real etcd + kube-apiserver (issue
# 13): two kubesched replicas with leader election run the same profile with the Faulty fixture
# plugin (tests/loader/fixtures/faulty.c), armed in the leader only (args.faultOnlyWithEnv), which
# misbehaves in Filter for pods named boom-*.
#   - crash: the leader A segfaults on boom-1; its last words name the plugin, its .so, Filter, the
#     pod and a node, with a backtrace; it exits 139. The standby B takes over once the Lease
#     expires (a crashed process cannot release it) and binds every pod, boom-1 included: none
#     lost, none bound twice, none bound by both;
#   - hang: the leader C (Filter never returns for boom-2) is reported by the watchdog past
#     --plugin-call-deadline with the same names; it fails /readyz, releases the Lease and exits 3,
#     so the standby D takes over at once (well before the lease would expire), and binds
#     everything, boom-2 included.
# Timings: retryPeriod 1s; the crash pair has leaseDuration 4s, renewDeadline 3s (as
# test-leader-election.sh), the hang pair upstream's 15s and 10s, so that a release (seconds) and an
# expiry (15 s) cannot be mistaken for each other.
# Usage: tests/e2e/test-plugin-faults-live.sh (env: see lib.sh; the fixture .so is looked for next
# to the kubesched binary, in tests/fixtures/libfix_faulty.so of its build directory)
set -uo pipefail
ulimit -c 0 # the crash below would leave a core file
. "$(dirname "$0")/lib.sh"
so=$(dirname "$KS_BIN")/tests/fixtures/libfix_faulty.so
if [ ! -f "$so" ]; then
  echo "FAIL - $so is missing (build the tests first: cmake --build build)"
  echo "0 passed, 1 failed"
  exit 1
fi
e2e_begin
timeout_s=$E2E_TIMEOUT
LEASE_S=4 RENEW_S=3 RETRY_S=1

# config LEASE MODE: both replicas' configuration: one profile "kubesched" with Faulty everywhere.
config() {
  ks_config kubesched \
    "leaderElection: {leaderElect: true, leaseDuration: ${LEASE_S}s, renewDeadline: ${RENEW_S}s, retryPeriod: ${RETRY_S}s, resourceName: $1, resourceNamespace: kube-system}" \
    "profiles:" \
    "- schedulerName: kubesched" \
    "  plugins: {multiPoint: {enabled: [{name: Faulty}]}}" \
    "  pluginConfig:" \
    "  - name: Faulty" \
    "    args: {kubeschedPluginPath: $so, mode: $2, faultOnlyWithEnv: KS_E2E_FAULTY}"
}
holder() { kubectl get lease -n kube-system "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
identity_of() { sed -n "s/.*campaigning for Lease kube-system\/$2 as \([^ ]*\)\$/\1/p" "$(ks_log "$1")" | head -1; }
holder_is() { [ -n "$2" ] && [ "$(holder "$1")" = "$2" ]; }
has_identity() { [ -n "$(identity_of "$1" "$2")" ]; }
bound_in() { grep -o "apisource\] bound default/[a-z0-9-]*" "$(ks_log "$1")" | sed 's/.*bound default\///' | sort -u; }
now() { date +%s.%N; }
exited() { ! kill -0 "$1" 2>/dev/null; }

# run_pair LEASE MODE LEADER STANDBY: the faulty leader (armed) and a standby (not armed); prints
# nothing, sets id_leader and id_standby.
run_pair() {
  local lease=$1 mode=$2 leader=$3 standby=$4 cfg; cfg=$(config "$lease" "$mode")
  KS_E2E_FAULTY=1 ks_start "$leader" "$cfg" --plugin-call-deadline 2s
  ks_wait_synced "$leader" || exit 1
  wait_for "$timeout_s" has_identity "$leader" "$lease" && id_leader=$(identity_of "$leader" "$lease")
  wait_for "$timeout_s" holder_is "$lease" "$id_leader" && ok "$leader leads ($lease)" || { bad "$leader does not lead"; exit 1; }
  ks_start "$standby" "$cfg" --plugin-call-deadline 2s
  ks_wait_synced "$standby" || exit 1
  wait_for "$timeout_s" has_identity "$standby" "$lease" && id_standby=$(identity_of "$standby" "$lease")
}

# check_all_bound LABEL COUNT LEADER STANDBY BOOM
check_all_bound() {
  local label=$1 count=$2 leader=$3 standby=$4 boom=$5
  if wait_for "$timeout_s" pods_bound "app=$label" "$count"; then ok "all $count pods bound, $boom included"
  else bad "not all $count pods bound"; kubectl get pods -l "app=$label" -o wide; fi
  both=$(comm -12 <(bound_in "$leader") <(bound_in "$standby"))
  [ -z "$both" ] && ok "no pod bound by both replicas" || bad "bound by both: $both"
  bound_in "$standby" | grep -qx "$boom" && ok "the standby bound $boom" || bad "$boom not bound by the standby"
  bound_in "$leader" | grep -qx "$boom" && bad "the faulty leader bound $boom" || ok "the faulty leader did not bind $boom"
  echo "# $leader bound $(bound_in "$leader" | grep -c .) pods, $standby $(bound_in "$standby" | grep -c .)"
}

for n in 1 2 3; do mk_node "fault-node-$n" 16 64Gi; done | kubectl create -f - >/dev/null

# --- crash: SIGSEGV in the leader's Filter ---------------------------------------------------
run_pair ks-crash segv a b
for i in $(seq 1 8); do mk_pod "c1-$i" kubesched 100m 100Mi app=crash; done | kubectl create -f - >/dev/null
wait_for "$timeout_s" pods_bound app=crash 8 && ok "the leader bound the first 8 pods" || bad "first pods not bound"
{ mk_pod boom-1 kubesched 100m 100Mi app=crash; for i in $(seq 1 8); do mk_pod "c2-$i" kubesched 100m 100Mi app=crash; done; } | kubectl create -f - >/dev/null
t0=$(now)
pid_a=${KS_PID[a]}
if wait_for "$timeout_s" exited "$pid_a"; then
  wait "$pid_a" 2>/dev/null; rc=$?; KS_PID[a]=
  [ "$rc" = 139 ] && ok "the leader died of SIGSEGV (exit 139)" || bad "the leader exited $rc"
else bad "the leader survived boom-1"; fi
log_a=$(ks_log a)
grep -q "kubesched: fatal SIGSEGV (address 0x0) in plugin \"Faulty\" ($so) at Filter, pod default/boom-1, node fault-node-" "$log_a" \
  && ok "the crash report names plugin, .so, Filter, pod and node" || { bad "no named crash report"; tail -n 20 "$log_a"; }
grep -q "libfix_faulty.so(+0x" "$log_a" && ok "the backtrace has a frame in the plugin" || bad "no plugin frame in the backtrace"
if wait_for "$timeout_s" holder_is ks-crash "$id_standby"; then
  took=$(echo "$(now) - $t0" | bc)
  limit=$(echo "$LEASE_S + 2 * 2.2 * $RETRY_S + 3" | bc)
  [ "$(echo "$took <= $limit" | bc)" = 1 ] && ok "the standby took over ${took}s after the crash (<= ${limit}s: the Lease expired)" \
    || bad "takeover after the crash took ${took}s (> ${limit}s)"
else bad "the standby did not take over"; fi
check_all_bound crash 17 a b boom-1
ks_stop b TERM

# --- hang: an endless Filter in the leader; the watchdog hands over --------------------------
LEASE_S=15 RENEW_S=10
run_pair ks-hang loop c d
for i in $(seq 1 8); do mk_pod "h1-$i" kubesched 100m 100Mi app=hang; done | kubectl create -f - >/dev/null
wait_for "$timeout_s" pods_bound app=hang 8 && ok "the leader bound the first 8 pods" || bad "first pods not bound"
{ mk_pod boom-2 kubesched 100m 100Mi app=hang; for i in $(seq 1 8); do mk_pod "h2-$i" kubesched 100m 100Mi app=hang; done; } | kubectl create -f - >/dev/null
t0=$(now)
pid_c=${KS_PID[c]}
if wait_for "$timeout_s" exited "$pid_c"; then
  wait "$pid_c" 2>/dev/null; rc=$?; KS_PID[c]=
  [ "$rc" = 3 ] && ok "the hung leader exited 3" || bad "the hung leader exited $rc"
else bad "the hung leader still runs"; fi
log_c=$(ks_log c)
grep -q "kubesched: plugin \"Faulty\" ($so) at Filter, pod default/boom-2, node fault-node-.*past its deadline of 2s (--plugin-call-deadline); exiting" "$log_c" \
  && ok "the watchdog names plugin, .so, Filter, pod and node" || { bad "no named watchdog report"; tail -n 20 "$log_c"; }
grep -q "plugin Faulty hung at Filter: /readyz fails (plugin-watchdog); releasing the Lease" "$log_c" \
  && ok "the leader said it releases the Lease" || bad "no release line"
if wait_for "$timeout_s" holder_is ks-hang "$id_standby"; then
  took=$(echo "$(now) - $t0" | bc)
  # the deadline (2s), the watchdog's tick, then one retryPeriod of the standby, far below the
  # leaseDuration an expiry would take
  limit=$(echo "2 + 2.2 * $RETRY_S + 3" | bc)
  [ "$(echo "$took <= $limit" | bc)" = 1 ] && ok "the standby took over ${took}s after boom-2 arrived (<= ${limit}s: released, not expired)" \
    || bad "takeover after the hang took ${took}s (> ${limit}s)"
else bad "the standby did not take over after the hang"; fi
check_all_bound hang 17 c d boom-2
ks_stop d TERM
[ "$KS_RC" = 0 ] && ok "the standby exited 0 on SIGTERM" || bad "standby D exited $KS_RC"
ks_no_errors b
ks_no_errors d
exit 0
