#!/usr/bin/env bash
# Leader election, end to end, against a real etcd + kube-apiserver (no upstream scheduler):
# kubesched replicas with leaderElection on share the Lease kube-system/kubesched.
#   - A leads (Lease holderIdentity = A's identity), B waits: only A binds the first pods;
#     /metrics leader_election_master_status 1 on A, 0 on B; /healthz and /readyz list the
#     leaderElection check;
#   - pods are created, A is SIGKILLed, more pods are created during the takeover: B takes over
#     (the time from the kill to B holding the Lease is measured and printed, and must be within
#     leaseDuration + 2 x 2.2 x retryPeriod + 2 s of slack); every pod is bound exactly once (one
#     binder per pod in the logs, no bind conflicts, no pod with two Scheduled events);
#   - a standby (C) exits 0 promptly on SIGTERM;
#   - B loses the Lease (another holder is written into it): B exits 1 at once with
#     "Leaderelection lost"; the standby A2 takes over once that holder's lease expires;
#   - SIGTERM of the leader A2: exit 0 and the Lease is released (holderIdentity "",
#     leaseDurationSeconds 1, leaseTransitions kept);
#   - the default Lease kube-system/kube-scheduler draws a warning.
# Timings: leaseDuration 4s, renewDeadline 3s, retryPeriod 1s instead of upstream's 15s/10s/2s,
# so that a takeover takes seconds; the checks derive their bounds from these values.
# Usage: tests/e2e/test-leader-election.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
e2e_begin
timeout_s=$E2E_TIMEOUT
LEASE_S=4 RENEW_S=3 RETRY_S=1
LE="leaderElection: {leaderElect: true, leaseDuration: ${LEASE_S}s, renewDeadline: ${RENEW_S}s, retryPeriod: ${RETRY_S}s, resourceName: kubesched, resourceNamespace: kube-system}"
cfg=$(ks_config kubesched "$LE")

lease_field() { kubectl get lease -n kube-system kubesched -o json 2>/dev/null | jq -r ".spec.$1 // \"\""; }
holder() { lease_field holderIdentity; }
identity_of() { sed -n 's/.*campaigning for Lease kube-system\/kubesched as \([^ ]*\)$/\1/p' "$(ks_log "$1")" | head -1; }
holder_is() { [ -n "$1" ] && [ "$(holder)" = "$1" ]; }
has_identity() { [ -n "$(identity_of "$1")" ]; }
now() { date +%s.%N; }
# log_time ID TEXT: the time (epoch seconds) of the first log line of ID containing TEXT.
log_time() {
  local ts; ts=$(grep -m1 -F "$2" "$(ks_log "$1")" | awk '{print $2}')
  [ -n "$ts" ] && date -u -d "$(date -u +%Y-%m-%d) $ts" +%s.%N
}
bound_in() { grep -o "apisource\] bound default/[a-z0-9-]*" "$(ks_log "$1")" | sed 's/.*bound default\///' | sort -u; }
gauge() { ks_metrics "$1" | sed -n 's/^leader_election_master_status{name="kube-scheduler"} //p'; }

# --- A leads, B waits ------------------------------------------------------------------------
ks_start a "$cfg"
ks_wait_synced a || exit 1
wait_for "$timeout_s" has_identity a || { bad "A logged no identity"; exit 1; }
id_a=$(identity_of a)
if wait_for "$timeout_s" holder_is "$id_a"; then ok "A holds the Lease ($id_a)"; else bad "A does not hold the Lease (holder '$(holder)')"; exit 1; fi
case "$id_a" in "$(hostname)"_????????-????-4???-????-????????????) ok "identity is <hostname>_<uuid v4>" ;;
  *) bad "identity '$id_a' is not <hostname>_<uuid v4>" ;; esac
grep -q "successfully acquired lease kube-system/kubesched" "$(ks_log a)" && ok "A logged: successfully acquired lease" || bad "A did not log the acquisition"
ks_start b "$cfg"
ks_wait_synced b || exit 1
wait_for "$timeout_s" has_identity b && id_b=$(identity_of b) || { bad "B logged no identity"; exit 1; }
grep -q "attempting to acquire leader lease kube-system/kubesched..." "$(ks_log b)" && ok "B is campaigning" || bad "B does not campaign"
[ "$id_a" != "$id_b" ] && ok "A and B have different identities" || bad "A and B share identity $id_a"

for n in 1 2; do mk_node "le-node-$n" 8 64Gi; done | kubectl create -f - >/dev/null
for i in $(seq 1 10); do mk_pod "p1-$i" kubesched 100m 100Mi app=le; done | kubectl create -f - >/dev/null
if wait_for "$timeout_s" pods_bound app=le 10; then ok "first 10 pods bound"; else bad "first pods not bound"; fi
sleep $((2 * RETRY_S)) # B has had time to try (and fail) a few times
holder_is "$id_a" && ok "A still holds the Lease while alive" || bad "holder changed to '$(holder)' while A was alive"
grep -q "successfully acquired" "$(ks_log b)" && bad "B acquired the Lease while A was alive" || ok "B never acquired while A was alive"
[ -z "$(bound_in b)" ] && ok "B bound nothing while following" || bad "B bound pods while following: $(bound_in b | tr '\n' ' ')"
[ "$(bound_in a | grep -c '^p1-')" = 10 ] && ok "A bound all 10 first pods" || bad "A bound $(bound_in a | grep -c '^p1-') of the first pods"
[ "$(gauge a)" = 1 ] && [ "$(gauge b)" = 0 ] && ok "leader_election_master_status{name=\"kube-scheduler\"}: A 1, B 0" \
  || bad "leader_election_master_status: A '$(gauge a)', B '$(gauge b)'"
hz=$(ks_get a "/healthz?verbose") rz=$(ks_get b "/readyz?verbose")
[ "$hz" = $'[+]leaderElection ok\nhealthz check passed' ] && ok "/healthz of the leader lists leaderElection" || bad "/healthz?verbose of A: $hz"
[ "$rz" = $'[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync ok\n[+]plugin-watchdog ok\nreadyz check passed' ] && ok "/readyz of the standby: leaderElection, shutdown, sched-handler-sync, plugin-watchdog" || bad "/readyz?verbose of B: $rz"
[ "$(lease_field leaseDurationSeconds)" = "$LEASE_S" ] && [ "$(lease_field leaseTransitions)" = 0 ] \
  && ok "Lease: leaseDurationSeconds $LEASE_S, leaseTransitions 0" || bad "Lease spec: $(kubectl get lease -n kube-system kubesched -o json | jq -c .spec)"
rt=$(lease_field renewTime)
[[ "$rt" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$ ]] && ok "renewTime is a MicroTime ($rt)" || bad "renewTime '$rt'"

# --- SIGKILL the leader; pods before and during the takeover --------------------------------
for i in $(seq 1 10); do mk_pod "p2-$i" kubesched 100m 100Mi app=le; done | kubectl create -f - >/dev/null
t0=$(now)
ks_stop a KILL
for i in $(seq 1 10); do mk_pod "p3-$i" kubesched 100m 100Mi app=le; done | kubectl create -f - >/dev/null
if wait_for "$timeout_s" holder_is "$id_b"; then
  t1=$(log_time b "successfully acquired lease kube-system/kubesched") # B's clock, not kubectl's polling
  [ -n "$t1" ] || t1=$(now)
  takeover=$(echo "$t1 - $t0" | bc)
  limit=$(echo "$LEASE_S + 2 * 2.2 * $RETRY_S + 2" | bc)
  echo "# takeover: B holds the Lease ${takeover}s after A was killed (leaseDuration ${LEASE_S}s; bound ${limit}s)"
  if [ "$(echo "$takeover <= $limit" | bc)" = 1 ]; then ok "B took over in ${takeover}s (<= ${limit}s)"; else bad "takeover took ${takeover}s (> ${limit}s)"; fi
else bad "B did not take over (holder '$(holder)')"; fi
[ "$(lease_field leaseTransitions)" = 1 ] && ok "leaseTransitions 1 after the takeover" || bad "leaseTransitions '$(lease_field leaseTransitions)'"
if wait_for "$timeout_s" pods_bound app=le 30; then ok "all 30 pods bound"; else bad "not all pods bound"; kubectl get pods -l app=le -o wide; fi
both=$(comm -12 <(bound_in a) <(bound_in b))
[ -z "$both" ] && ok "no pod was bound by both replicas" || bad "bound by both: $both"
echo "# A bound $(bound_in a | wc -l) pods, B bound $(bound_in b | wc -l)"
[ "$(bound_in b | grep -c '^p3-')" -ge 1 ] && ok "B bound pods created during the takeover" || bad "B bound none of the p3 pods"
if grep -hE "apisource\] bind .* POST" "$(ks_log a)" "$(ks_log b)"; then bad "bind requests failed (conflicts?)"; else ok "no bind request failed (no 409 conflict)"; fi
ev_twice() {
  kubectl get events.v1.events.k8s.io -n default -o json |
    jq -r '[.items[] | select(.reason=="Scheduled")] | group_by(.regarding.name) | map(select((length > 1) or ((.[0].series.count // 1) > 1))) | map(.[0].regarding.name) | join(" ")'
}
ev_count() { kubectl get events.v1.events.k8s.io -n default -o json | jq '[.items[] | select(.reason=="Scheduled")] | length'; }
wait_for 15 bash -c "[ \$(kubectl get events.v1.events.k8s.io -n default -o json | jq '[.items[] | select(.reason==\"Scheduled\")] | length') -ge 28 ]" || true
twice=$(ev_twice)
[ -z "$twice" ] && ok "no pod has two Scheduled events ($(ev_count) Scheduled events for 30 pods)" || bad "pods with two Scheduled events: $twice"

# --- a standby exits 0 promptly on SIGTERM --------------------------------------------------
ks_start c "$cfg"
ks_wait_synced c
wait_for "$timeout_s" grep -q "attempting to acquire leader lease" "$(ks_log c)"
sleep 1
tc0=$(now); ks_stop c TERM; tc=$(echo "$(now) - $tc0" | bc)
[ "$KS_RC" = 0 ] && ok "standby C exited 0 on SIGTERM in ${tc}s" || bad "standby C exited $KS_RC"
[ "$(echo "$tc < 3" | bc)" = 1 ] && ok "C stopped promptly (< 3s)" || bad "C took ${tc}s to stop"
holder_is "$id_b" && ok "the Lease is still B's" || bad "holder '$(holder)' after C stopped"

# --- the leader loses the Lease: exit 1 at once; the standby takes over ----------------------
ks_start a2 "$cfg"
ks_wait_synced a2
wait_for "$timeout_s" has_identity a2 && id_a2=$(identity_of a2)
sleep 1
# Another holder is written into the Lease (retried: B's renewals move its resourceVersion).
intrude() {
  kubectl get lease -n kube-system kubesched -o json |
    jq --arg now "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)" '.spec.holderIdentity = "intruder" | .spec.renewTime = $now | .spec.leaseDurationSeconds = '"$LEASE_S" |
    kubectl replace -f - >/dev/null 2>&1
}
wait_for 20 intrude && tl=$(now) || { bad "could not write another holder into the Lease"; tl=$(now); }
pid_b=${KS_PID[b]}
if wait_for "$timeout_s" bash -c "! kill -0 $pid_b 2>/dev/null"; then
  wait "$pid_b" 2>/dev/null; rc_b=$?; KS_PID[b]=
  tb=$(echo "$(now) - $tl" | bc)
  [ "$rc_b" = 1 ] && ok "B exited 1 ${tb}s after losing the Lease" || bad "B exited $rc_b"
  [ "$(echo "$tb <= $RENEW_S + 2 * $RETRY_S + 2" | bc)" = 1 ] && ok "B gave up within renewDeadline (+ slack)" || bad "B gave up only after ${tb}s"
else bad "B still runs after losing the Lease"; fi
grep -q "failed to renew lease kube-system/kubesched: timed out waiting for the condition" "$(ks_log b)" && ok "B logged: failed to renew lease" || bad "B did not log the failed renewal"
grep -qE "^E.*Leaderelection lost" "$(ks_log b)" && ok "B logged: Leaderelection lost" || bad "B did not log Leaderelection lost"
if wait_for "$timeout_s" holder_is "$id_a2"; then ok "A2 took over after the intruder's lease expired"; else bad "A2 did not take over (holder '$(holder)')"; fi
for i in $(seq 1 5); do mk_pod "p4-$i" kubesched 100m 100Mi app=le; done | kubectl create -f - >/dev/null
wait_for "$timeout_s" pods_bound app=le 35 && [ "$(bound_in a2 | grep -c '^p4-')" = 5 ] && ok "A2 schedules (5 more pods bound)" || bad "A2 did not bind the p4 pods"

# --- SIGTERM the leader: exit 0, Lease released ---------------------------------------------
transitions=$(lease_field leaseTransitions)
ks_stop a2 TERM
[ "$KS_RC" = 0 ] && ok "leader A2 exited 0 on SIGTERM" || bad "A2 exited $KS_RC"
h=$(holder) d=$(lease_field leaseDurationSeconds) t=$(lease_field leaseTransitions)
[ -z "$h" ] && [ "$d" = 1 ] && [ "$t" = "$transitions" ] && ok "Lease released: holderIdentity \"\", leaseDurationSeconds 1, leaseTransitions $t kept" \
  || bad "after SIGTERM: holder '$h', leaseDurationSeconds '$d', leaseTransitions '$t' (was $transitions)"
grep -q "Requested to terminate, exiting" "$(ks_log a2)" && ok "A2 logged: Requested to terminate, exiting" || bad "A2 did not log the termination"
kubectl get events -n kube-system -o json | jq -e --arg id "$id_a2" '[.items[] | select(.reason=="LeaderElection" and .message==($id + " became leader") and .involvedObject.kind=="Lease")] | length == 1' >/dev/null \
  && ok "LeaderElection event: \"<id> became leader\" on the Lease" || bad "no LeaderElection event for A2"

# --- the default Lease name draws a warning ---------------------------------------------------
cfg_default=$(ks_config kubesched "leaderElection: {leaderElect: true, leaseDuration: ${LEASE_S}s, renewDeadline: ${RENEW_S}s, retryPeriod: ${RETRY_S}s}")
ks_start d "$cfg_default"
wait_for "$timeout_s" grep -q "successfully acquired lease kube-system/kube-scheduler" "$(ks_log d)"
grep -q "^W.*Lease kube-system/kube-scheduler is the one the cluster's default scheduler campaigns for" "$(ks_log d)" \
  && ok "the default Lease name draws a warning" || bad "no warning about kube-system/kube-scheduler"
ks_stop d TERM
[ "$KS_RC" = 0 ] && ok "D exited 0" || bad "D exited $KS_RC"
for id in a a2 c d; do ks_no_errors "$id"; done
exit 0
