#!/usr/bin/env bash
# Cluster test 3: `helm upgrade` with a changed profile takes effect. From test 2's release
# (profile one-per-node, OnePodPerNode without args): pods a1 (app=a) and b1 (app=b) of that
# profile -- b1 is turned away, the plugin counts every pod of the profile. Upgrade the profile to
# `labelKey: app` (only pods with the same app conflict): b1 is scheduled and runs next to a1,
# while a2 (app=a) is still turned away. The chart's reloadInPlace (default) keeps the pods: the
# kubelet updates the mounted ConfigMap and kubesched reloads it without a restart.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

before=$(ks_pods | sort | tr '\n' ' ')
workload a1 one-per-node app=a | kubectl create -f - >/dev/null
wait_for "$T" running a1 || bad "a1 not Running: $(pod_cond a1)"
workload b1 one-per-node app=b | kubectl create -f - >/dev/null
turned_away() { pod_cond "$1" | grep -q "^False|Unschedulable|.*already had a pod"; }
wait_for 30 turned_away b1 && ok "before the upgrade: b1 (app=b) is turned away by a1 (app=a)" || bad "b1 before: $(pod_phase b1) $(pod_cond b1)"

sed 's/args: {kubeschedPluginPath: \(.*\)}$/args: {kubeschedPluginPath: \1, labelKey: app}/' "$WORK/values-plugin.yaml" >"$WORK/values-labelkey.yaml"
grep -q 'labelKey: app' "$WORK/values-labelkey.yaml" || { bad "could not write the changed values"; exit 1; }
t0=$SECONDS
if out=$("$HELM" upgrade "$REL" "$CHART" -n "$NS" "${helm_args[@]}" -f "$WORK/values-labelkey.yaml" --wait --timeout "${T}s" 2>&1); then
  ok "helm upgrade: profile one-per-node now with labelKey: app"
else bad "helm upgrade: $out"; exit 1; fi
kubectl get configmap "$REL-config" -n "$NS" -o jsonpath='{.data.config\.yaml}' | grep -q 'labelKey: app' \
  && ok "the ConfigMap has the new profile" || bad "ConfigMap without labelKey"
if wait_for "$T" running b1; then ok "b1 is scheduled and runs after the upgrade ($((SECONDS - t0)) s after helm upgrade began)"
else bad "b1 after the upgrade: $(pod_phase b1) $(pod_cond b1)"; fi
workload a2 one-per-node app=a | kubectl create -f - >/dev/null
wait_for 30 turned_away a2 && ok "a2 (app=a) is still turned away by a1: the new profile, not no filter" || bad "a2: $(pod_phase a2) $(pod_cond a2)"
after=$(ks_pods | sort | tr '\n' ' ')
[ "$before" = "$after" ] && ok "kubesched was not restarted ($after): the profile was reloaded in place" \
  || bad "kubesched pods changed: $before-> $after"
line=$(kubectl logs -n "$NS" "${after%% *}" -c kubesched 2>/dev/null | grep -m1 "configuration reloaded from")
[ -n "$line" ] && ok "its log: ${line:0:200}" || bad "no 'configuration reloaded' line in the kubesched log"
cleanup_workloads
exit 0
