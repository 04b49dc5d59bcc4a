#!/usr/bin/env bash
# kubesched against an API server that does not serve some groups it watches: kube-apiserver with
# --runtime-config=apps/v1=false,policy/v1=false (no ReplicaSets, StatefulSets, PDBs), as an
# older or trimmed API server would be. kubesched finds that out from discovery, says so once at
# -v=2 per informer with what it turns off, counts those informers as synced, and schedules.
# Usage: tests/e2e/test-api-groups.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
KUBESCHED_E2E_APISERVER_FLAGS="${KUBESCHED_E2E_APISERVER_FLAGS:-} --runtime-config=apps/v1=false,policy/v1=false" \
  e2e_begin
if kubectl get --raw /apis | jq -e '[.groups[].versions[].groupVersion] | (index("policy/v1") == null and index("apps/v1") == null)' >/dev/null; then
  ok "the API server does not serve apps/v1 and policy/v1 (discovery)"
else bad "apps/v1 or policy/v1 still served: $(kubectl get --raw /apis | jq -c '[.groups[].versions[].groupVersion]')"; fi
ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1
log=$(ks_log main)
for k in "ReplicaSet apps/v1 PodTopologySpread's system default constraints do not see ReplicaSet selectors" \
         "StatefulSet apps/v1 PodTopologySpread's system default constraints do not see StatefulSet selectors" \
         "PodDisruptionBudget policy/v1 preemption does not respect PodDisruptionBudgets"; do
  kind=${k%% *} rest=${k#* } gv=${rest%% *} what=${rest#* }
  n=$(grep -c "$kind informer: the API server does not serve $gv .*not in the API server's discovery.*without it $what" "$log")
  [ "$n" = 1 ] && ok "$kind: said once that $gv is not served and that $what" || bad "$kind: $n lines about $gv not served"
done
{ mk_node groups-node-1 4 32Gi; for i in 1 2 3; do mk_pod groups-$i kubesched 100m 100Mi app=groups; done; } | kubectl create -f - >/dev/null
if wait_for "$E2E_TIMEOUT" pods_bound app=groups 3; then ok "3 pods bound without apps/v1 and policy/v1"
else bad "pods not bound"; kubectl get pods -o wide; fi
if grep -E "^W" "$log" | grep -Eq "informer|apis/"; then bad "warnings about the missing groups:"; grep -E "^W" "$log" | head -3
else ok "no warning about the groups that are not served"; fi
ks_stop main TERM
[ "$KS_RC" = 0 ] && ok "kubesched exited 0 on SIGTERM" || bad "kubesched exited $KS_RC"
ks_no_errors main
exit 0
