#!/usr/bin/env bash
# The Helm chart (charts/kubesched), against the real API server:
#   - helm lint passes; helm template renders; a bad combination (2 replicas without leader
#     election) is refused with a message;
#   - every rendered object (also with an out-of-tree plugin image and the metrics Service) is
#     accepted by kube-apiserver (server-side dry run); then helm installs the release;
#   - kubesched runs with the rendered configuration and the chart's ServiceAccount token, so
#     with exactly the chart's RBAC: it takes the Lease in the release namespace, binds pods,
#     reports their status and events, writes a PersistentVolume's claimRef from VolumeBinding's
#     PreBind, and no request is forbidden;
#   - the serving port's TokenReviews and SubjectAccessReviews go through the same ServiceAccount;
#   - least privilege: with `patch` taken off the persistentvolumes rule, that PreBind write is
#     refused with 403 and the pod's condition says so; without the subjectaccessreviews rule
#     /flagz fails with 500.
# The Deployment itself cannot run here (no kubelet, no image); kubesched runs as a process.
# Usage: tests/e2e/test-helm-chart.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
chart="$E2E_ROOT/charts/kubesched"
ns=kubesched-system

helm=$("$E2E_HERE/build-helm.sh" | tail -1)
[ -x "$helm" ] || { bad "helm was not built ($helm)"; exit 1; }
e2e_begin

if out=$("$helm" lint "$chart" 2>&1); then ok "helm lint"; else bad "helm lint: $out"; fi
# helm template does not ask a cluster: tell it the version of ours (the chart needs 1.35-1.37).
kv=(--kube-version "$(kubectl version -o json | jq -r .serverVersion.gitVersion)")
"$helm" template kubesched "$chart" -n "$ns" "${kv[@]}" >"$E2E_DIR/rendered.yaml" 2>"$E2E_DIR/helm.err" \
  && ok "helm template renders the defaults" || bad "helm template: $(cat "$E2E_DIR/helm.err")"
# The chart's kubeVersion: the versions kubesched is tested with, v1.35 to v1.37.
for v in v1.34.12 v1.38.0; do
  if out=$("$helm" template kubesched "$chart" -n "$ns" --kube-version "$v" 2>&1); then bad "helm template renders for Kubernetes $v"
  else grep -q "requires kubeVersion: >=1.35.0-0 <1.38.0-0 which is incompatible with Kubernetes $v" <<<"$out" \
    && ok "Kubernetes $v refused: $(head -1 <<<"$out")" || bad "unexpected helm error for $v: $out"; fi
done
for v in v1.35.4 v1.36.3; do
  "$helm" template kubesched "$chart" -n "$ns" --kube-version "$v" >/dev/null 2>&1 && ok "helm template renders for Kubernetes $v" || bad "helm template refuses $v"
done
if out=$("$helm" template kubesched "$chart" -n "$ns" "${kv[@]}" --set scheduler.replicaCount=2 --set scheduler.leaderElect=false 2>&1); then
  bad "2 replicas without leader election were rendered"
else
  grep -q "needs scheduler.leaderElect: true" <<<"$out" && ok "2 replicas without leader election refused: $(head -1 <<<"$out")" \
    || bad "unexpected helm error: $out"
fi
cat >"$E2E_DIR/values-plugins.yaml" <<'YAML'
pluginImages:
- {name: min-resources, image: registry.example.com/plugins/min-resources:1.0, path: /plugins/.}
metricsService: {enabled: true}
profiles:
- schedulerName: kubesched
- schedulerName: kubesched-min
  plugins:
    filter:
      enabled: [{name: NodeMinResources}]
  pluginConfig:
  - name: NodeMinResources
    args: {kubeschedPluginPath: /opt/kubesched/plugins/libnode_min_resources.so, minCPU: "4"}
YAML
"$helm" template kubesched "$chart" -n "$ns" "${kv[@]}" -f "$E2E_DIR/values-plugins.yaml" >"$E2E_DIR/rendered-plugins.yaml" \
  && ok "helm template renders with pluginImages, profiles and the metrics Service" || bad "helm template with plugins"
if grep -q "name: plugin-min-resources" "$E2E_DIR/rendered-plugins.yaml" && grep -q "schedulerName: kubesched-min" "$E2E_DIR/rendered-plugins.yaml"; then
  ok "the plugin's init container and the second profile are in the rendering"
else bad "init container or profile missing from the rendering"; fi
# scheduler.featureGates: the flag, sorted; GenericWorkload adds the PodGroup rules and nothing
# else; a quoted bool is refused.
"$helm" template kubesched "$chart" -n "$ns" "${kv[@]}" --set scheduler.featureGates.OpportunisticBatching=false \
  --set scheduler.featureGates.GenericWorkload=true >"$E2E_DIR/rendered-gates.yaml" 2>"$E2E_DIR/helm.err" \
  && ok "helm template renders with featureGates" || bad "helm template with featureGates: $(cat "$E2E_DIR/helm.err")"
grep -q -- '- --feature-gates=GenericWorkload=true,OpportunisticBatching=false$' "$E2E_DIR/rendered-gates.yaml" &&
  ok "featureGates rendered as --feature-gates=GenericWorkload=true,OpportunisticBatching=false" || bad "no --feature-gates flag"
pg_rules=$(grep -A2 'apiGroups: \[scheduling.k8s.io\]' "$E2E_DIR/rendered-gates.yaml" | tr -d ' \n')
[ "$pg_rules" = "-apiGroups:[scheduling.k8s.io]resources:[podgroups]verbs:[list,watch]-apiGroups:[scheduling.k8s.io]resources:[podgroups/status]verbs:[patch]" ] &&
  ok "GenericWorkload: podgroups list, watch and podgroups/status patch" || bad "PodGroup rules: $pg_rules"
grep -q 'scheduling.k8s.io' "$E2E_DIR/rendered.yaml" && bad "the default rendering grants scheduling.k8s.io" ||
  ok "without the gate, no scheduling.k8s.io rule"
if out=$("$helm" template kubesched "$chart" -n "$ns" "${kv[@]}" --set-string scheduler.featureGates.GenericWorkload=true 2>&1); then
  bad "a quoted GenericWorkload was rendered"
else grep -q 'is a string, not a bool' <<<"$out" && ok "a quoted gate value refused: $(head -1 <<<"$out")" || bad "unexpected helm error: $out"; fi
# reloadInPlace (default): a change of the profiles keeps the pod template (kubesched reloads the
# mounted ConfigMap), a change of the leader-election settings rolls it; false rolls on any change.
annot() { "$helm" template kubesched "$chart" -n "$ns" "${kv[@]}" "$@" | grep -E '^ +checksum/' | tr -d ' '; }
a_default=$(annot) a_profiles=$(annot -f "$E2E_DIR/values-plugins.yaml" --set pluginImages=null)
a_lease=$(annot --set scheduler.leaseDuration=30s)
if [ -n "$a_default" ] && [ "$a_default" = "$a_profiles" ] && [ "$a_default" != "$a_lease" ]; then
  ok "reloadInPlace: new profiles keep the pod template ($a_default), a new leaseDuration rolls it"
else bad "reloadInPlace annotations: default '$a_default', profiles '$a_profiles', lease '$a_lease'"; fi
r_default=$(annot --set scheduler.reloadInPlace=false)
r_profiles=$(annot --set scheduler.reloadInPlace=false -f "$E2E_DIR/values-plugins.yaml" --set pluginImages=null)
if [ -n "$r_default" ] && [ "$r_default" != "$r_profiles" ]; then ok "reloadInPlace=false: new profiles roll the pods"
else bad "reloadInPlace=false annotations: '$r_default' '$r_profiles'"; fi

# The dry run goes to a namespace of its own (no namespace controller here to delete one).
kubectl create namespace dry-run >/dev/null
for f in rendered rendered-plugins rendered-gates; do
  if out=$(kubectl apply --dry-run=server -n dry-run -f <(sed "s/namespace: $ns\$/namespace: dry-run/" "$E2E_DIR/$f.yaml") 2>&1); then ok "kube-apiserver accepts every object of $f.yaml (dry run): $(grep -c . <<<"$out") objects"
  else bad "server-side dry run of $f.yaml: $out"; fi
done
if out=$("$helm" install kubesched "$chart" -n "$ns" --create-namespace 2>&1); then ok "helm install into $ns"
else bad "helm install: $out"; fi
grep -q 'schedulerName: kubesched' <<<"$out" && ok "the install notes name the schedulerName" || bad "install notes: $out"

# kubesched as the chart's ServiceAccount, with the chart's configuration.
kubectl get configmap kubesched-config -n "$ns" -o jsonpath='{.data.config\.yaml}' >"$E2E_DIR/chart-config.yaml"
if out=$("$KS_BIN" validate-config "$E2E_DIR/chart-config.yaml" 2>&1); then ok "kubesched validate-config accepts the chart's configuration"
else bad "validate-config: $out"; fi
token=$(kubectl create token kubesched -n "$ns" --duration 1h) || { bad "kubectl create token"; exit 1; }
cat >"$E2E_DIR/sa.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: $KUBESCHED_E2E_APISERVER, certificate-authority: $KUBESCHED_E2E_CA}
users:
- name: kubesched-sa
  user: {token: $token}
contexts:
- name: e2e
  context: {cluster: e2e, user: kubesched-sa}
current-context: e2e
YAML
# In the cluster kubesched would use the pod's service-account token (in-cluster config); here the
# same token comes in a kubeconfig, the one line added to the chart's configuration.
sed "s|^clientConnection:|clientConnection:\n  kubeconfig: $E2E_DIR/sa.kubeconfig|" "$E2E_DIR/chart-config.yaml" >"$E2E_DIR/chart-config-sa.yaml"
# The serving port's TokenReviews and SubjectAccessReviews as that ServiceAccount too.
ks_start chart "$E2E_DIR/chart-config-sa.yaml" --authentication-kubeconfig "$E2E_DIR/sa.kubeconfig" \
  --authorization-kubeconfig "$E2E_DIR/sa.kubeconfig"
ks_wait_synced chart || exit 1
# The admin token is reviewed (TokenReview) and allowed (system:masters); no token is reviewed by
# a SubjectAccessReview and refused: 403, not 500 (a review the chart's RBAC refused).
if [ "$(ks_get chart /metrics -o /dev/null -w '%{http_code}')" = 200 ]; then ok "/metrics for the admin token: the chart's ServiceAccount may create TokenReviews"
else bad "/metrics for the admin token: $(ks_get chart /metrics -w ' %{http_code}' | tail -c 300)"; fi
anon=$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:${KS_PORT[chart]}/metrics")
[ "$anon" = 403 ] && ok "/metrics without a token: 403, the chart's ServiceAccount may create SubjectAccessReviews" || bad "/metrics without a token: $anon (want 403)"

{ mk_node chart-node-1 4 32Gi; mk_node chart-node-2 4 32Gi; } | kubectl create -f - >/dev/null
{ for i in 1 2 3 4 5; do mk_pod chart-$i kubesched 500m 1Gi app=chart; done
  mk_pod chart-big kubesched 64 1Gi app=chart-big; } | kubectl create -f - >/dev/null
if wait_for "$E2E_TIMEOUT" pods_bound app=chart 5; then ok "5 pods bound by kubesched running as the chart's ServiceAccount"
else bad "pods not bound"; kubectl get pods -o wide; fi
holder=$(kubectl get lease kubesched -n "$ns" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)
if [ -n "$holder" ]; then ok "Lease $ns/kubesched held by $holder"; else bad "no Lease $ns/kubesched with a holder"; fi
if wait_for "$E2E_TIMEOUT" bash -c '[ -n "$(kubectl get pod chart-big -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].reason}")" ]'; then
  ok "chart-big got its PodScheduled condition ($(pod_cond chart-big | cut -d'|' -f2))"
else bad "chart-big has no PodScheduled condition (pods/status patch forbidden?)"; fi
n_ev=$(kubectl get events.v1.events.k8s.io -o json | jq '[.items[] | select(.reportingController=="kubesched")] | length')
if [ "$n_ev" -ge 6 ]; then ok "$n_ev events reported by kubesched"; else bad "only $n_ev events from kubesched"; fi
# VolumeBinding's PreBind: a WaitForFirstConsumer claim and a matching static PV on chart-node-1.
# No PV controller runs here, so the claim is never completed and the pod waits in PreBind; what
# is checked is the write the chart's RBAC must allow.
vol_objects() { # index
  cat <<YAML
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: chart-pv-$1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: chart-wffc
  hostPath: {path: /tmp/chart-pv-$1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [chart-node-1]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: chart-claim-$1, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: chart-wffc
  resources: {requests: {storage: 1Gi}}
YAML
  mk_pod chart-vol-$1 kubesched 100m 64Mi app=chart-vol
  printf '  volumes:\n  - name: data\n    persistentVolumeClaim: {claimName: chart-claim-%s}\n' "$1"
}
claim_ref_of() { kubectl get pv "$1" -o jsonpath='{.spec.claimRef.name}' 2>/dev/null; }
kubectl create -f - >/dev/null <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: chart-wffc}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
YAML
# No PV controller marks the PVs Available (VolumeBinding takes only those): the status by hand.
available() { kubectl patch pv "$1" --subresource=status --type=merge -p '{"status":{"phase":"Available"}}' >/dev/null; }
vol_objects 1 | kubectl create -f - >/dev/null && available chart-pv-1
if wait_for "$E2E_TIMEOUT" bash -c '[ "$(kubectl get pv chart-pv-1 -o jsonpath={.spec.claimRef.name})" = chart-claim-1 ]'; then
  ok "VolumeBinding's PreBind patched chart-pv-1's claimRef with the chart's RBAC"
else bad "chart-pv-1's claimRef is '$(claim_ref_of chart-pv-1)'"; fi
# 403 as a status, not as digits of a klog timestamp (22:19:52.403622).
forbidden_re='forbidden|(^|[^0-9.])403([^0-9]|$)'
if grep -Eiq "$forbidden_re" "$(ks_log chart)"; then bad "a request was forbidden:"; grep -Ei "$forbidden_re" "$(ks_log chart)" | head -3
else ok "no request was forbidden by the chart's RBAC"; fi
ks_no_errors chart

# Least privilege: the chart's rule is needed. Without `patch` on persistentvolumes the same write
# is refused (403), the binding cycle fails, and the pod's condition carries the API's message.
role=$(kubectl get clusterrole -l app.kubernetes.io/instance=kubesched -o name | head -1)
kubectl get "$role" -o json |
  jq '(.rules[] | select(.resources == ["persistentvolumes"]) | .verbs) |= map(select(. != "patch"))' |
  kubectl replace -f - >/dev/null
# (chart-pv-1 names chart-claim-1 now: chart-claim-2 can only take chart-pv-2)
vol_objects 2 | kubectl create -f - >/dev/null && available chart-pv-2
forbidden_cond() { pod_cond chart-vol-2 | grep -q 'forbidden'; }
if wait_for "$E2E_TIMEOUT" forbidden_cond; then
  ok "without patch on persistentvolumes, PreBind's write is refused: $(pod_cond chart-vol-2 | cut -c1-200)"
else bad "chart-vol-2: condition '$(pod_cond chart-vol-2)', PV claimRef '$(claim_ref_of chart-pv-2)'"; fi
# Without the subjectaccessreviews rule a request that needs a review fails (500: the review was
# refused); /flagz, not yet asked, so no cached answer stands in.
kubectl get "$role" -o json |
  jq '.rules |= map(select(.resources != ["subjectaccessreviews"]))' | kubectl replace -f - >/dev/null
sar_refused() { [ "$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:${KS_PORT[chart]}/flagz")" = 500 ]; }
if wait_for "$E2E_TIMEOUT" sar_refused && grep -q "subjectaccessreviews.*forbidden\|forbidden.*subjectaccessreviews" "$(ks_log chart)"; then
  ok "without create on subjectaccessreviews, /flagz is 500 and the log names the refused review"
else bad "without the subjectaccessreviews rule: /flagz $(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:${KS_PORT[chart]}/flagz")"; fi
ks_stop chart TERM
[ "$KS_RC" = 0 ] && ok "kubesched exited 0 on SIGTERM" || bad "kubesched exited $KS_RC"
exit 0
