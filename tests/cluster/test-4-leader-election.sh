#!/usr/bin/env bash
# Cluster test 4: two replicas with leader election. `helm upgrade --set
# scheduler.replicaCount=2`: both pods Ready, one holds the Lease. Five pods are scheduled; the
# leader pod is deleted and five more pods are created at once: the other replica takes the
# Lease, and nothing is lost -- all ten run, each bound once (one Scheduled event each).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if out=$("$HELM" upgrade "$REL" "$CHART" -n "$NS" "${helm_args[@]}" -f "$WORK/values-labelkey.yaml" \
      --set scheduler.replicaCount=2 --wait --timeout "${T}s" 2>&1); then
  ok "helm upgrade --set scheduler.replicaCount=2"
else bad "helm upgrade: $out"; exit 1; fi
wait_for "$T" ready_ge 2 && ok "two kubesched pods Ready: $(ks_pods | tr '\n' ' ')" || bad "Ready replicas: $(ks_ready_count)"
wait_for 30 lease_held || bad "no Lease holder"
holder=$(lease_holder)
leader=
for p in $(ks_pods); do case "$holder" in "$p"*) leader=$p ;; esac; done
[ -n "$leader" ] && ok "leader: $leader (Lease holder $holder)" || { bad "Lease holder $holder is none of $(ks_pods | tr '\n' ' ')"; exit 1; }
standby=$(ks_pods | grep -vx "$leader" | head -1)
trans0=$(kubectl get lease "$REL" -n "$NS" -o jsonpath='{.spec.leaseTransitions}')

for i in 1 2 3 4 5; do workload "le$i" "$REL" app=le; done | kubectl create -f - >/dev/null
all_running() { local i; for i in "$@"; do running "le$i" || return 1; done; }
wait_for "$T" all_running 1 2 3 4 5 && ok "le1..le5 run (scheduled by $leader)" || bad "le1..le5 not all Running"

t0=$SECONDS
kubectl delete pod "$leader" -n "$NS" --wait=false >/dev/null
for i in 6 7 8 9 10; do workload "le$i" "$REL" app=le; done | kubectl create -f - >/dev/null
new_holder() { local h; h=$(lease_holder); [ -n "$h" ] && case "$h" in "$leader"*) return 1 ;; *) return 0 ;; esac; }
if wait_for 60 new_holder; then
  h=$(lease_holder)
  ok "the Lease moved to $h $((SECONDS - t0)) s after the leader pod's deletion"
  figure leader_takeover_s $((SECONDS - t0))
  case "$h" in "$standby"*) ok "the standby replica $standby took over" ;; *) note "the new holder is a replacement pod, not the standby $standby" ;; esac
  trans1=$(kubectl get lease "$REL" -n "$NS" -o jsonpath='{.spec.leaseTransitions}')
  [ "${trans1:-0}" -gt "${trans0:-0}" ] && ok "leaseTransitions $trans0 -> $trans1" || bad "leaseTransitions $trans0 -> $trans1"
else bad "nobody took the Lease from $leader (holder: $(lease_holder))"; fi
if wait_for "$T" all_running 1 2 3 4 5 6 7 8 9 10; then ok "all ten pods run: none lost across the takeover"
else bad "not Running: $(kubectl get pods -l app=le --no-headers 2>&1 | awk '$3 != "Running"' | tr '\n' ';')"; fi
twice=
for i in $(seq 1 10); do
  n=$(scheduled_by "le$i" | grep -c .)
  [ "$n" = 1 ] || twice+="le$i:$n "
done
[ -z "$twice" ] && ok "each pod has exactly one Scheduled event" || bad "Scheduled events per pod: $twice"
cleanup_workloads
exit 0
