#!/usr/bin/env bash
# Cluster test 5: the chart's RBAC is least privilege. For every rule of the installed ClusterRole
# and leader-election Role, one at a time: the rule is taken out of the live object, and every
# operation it grants (verb x resource x apiGroup) becomes forbidden for kubesched's
# ServiceAccount (the API server's authorizer, asked with `kubectl auth can-i --as`, the answer a
# request gets as 403) while it was allowed before -- no rule is redundant -- then the rule is put
# back. Four of them are also shown failing with 403 in kubesched itself, live: pods/binding (a
# pod is not bound until the rule is back), pods/status (the Unschedulable condition of a pod that
# fits nowhere), tokenreviews and subjectaccessreviews (a /metrics request with a token allowed
# `get /metrics` is refused while the rule is missing, served once it is back).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
sa=system:serviceaccount:$NS:$REL

# ops RULE-JSON: "verb resource group" lines (one per verb x resource x group).
# A rule limited to resourceNames gives "verb resource=name group" lines, one per name.
ops() { jq -r '.apiGroups[] as $g | .resources[] as $r | .verbs[] as $v | (.resourceNames // [null])[] as $n
  | "\($v) \($r)\(if $n then "=" + $n else "" end) \(if $g == "" then "core" else $g end)"' <<<"$1"; }
can() { # verb resource group [ns]: yes/no for the ServiceAccount
  local v=$1 r=${2%%=*} g=$3 ns=${4:-} args=() name=
  [ "$g" != core ] || g=
  case "$2" in *=*) name=/${2#*=} ;; esac
  case "$r" in */*) args+=(--subresource "${r#*/}"); r=${r%%/*} ;; esac
  [ -z "$g" ] || r=$r.$g
  [ -z "$ns" ] || args+=(-n "$ns")
  kubectl auth can-i "$v" "$r$name" "${args[@]}" --as="$sa" 2>/dev/null
}
denied_now() { [ "$(can "$@")" = no ]; }
allowed_now() { [ "$(can "$@")" = yes ]; }
# check_object KIND NAME [NS]: the per-rule removal over one RBAC object.
check_object() {
  local kind=$1 name=$2 ns=${3:-} nsargs=() orig n i rule o denied allowed_before
  [ -z "$ns" ] || nsargs=(-n "$ns")
  orig=$(kubectl get "$kind" "$name" "${nsargs[@]}" -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)')
  n=$(jq '.rules | length' <<<"$orig")
  for i in $(seq 0 $((n - 1))); do
    rule=$(jq -c ".rules[$i]" <<<"$orig")
    allowed_before=1
    while read -r o; do [ "$(can $o $ns)" = yes ] || { allowed_before=0; bad "$kind $name rule $i: '$o' not allowed even with the rule"; }; done < <(ops "$rule")
    jq "del(.rules[$i])" <<<"$orig" | kubectl replace -f - >/dev/null || { bad "could not replace $kind $name"; return; }
    first=$(ops "$rule" | head -1)
    wait_for 10 denied_now $first $ns # RBAC's authorizer sees the change through a watch
    denied=() still=()
    while read -r o; do if [ "$(can $o $ns)" = no ]; then denied+=("$o"); else still+=("$o"); fi; done < <(ops "$rule")
    if [ ${#still[@]} -eq 0 ] && [ "$allowed_before" = 1 ]; then
      ok "$kind $name without rule $i ($(jq -r '[.verbs | join(",")] + [.resources | join(",")] | join(" ")' <<<"$rule")): ${#denied[@]} operations forbidden (e.g. ${denied[0]})"
    else bad "$kind $name without rule $i: still allowed: ${still[*]}"; fi
    kubectl replace -f - >/dev/null <<<"$orig" || bad "could not restore $kind $name"
    wait_for 10 allowed_now $first $ns || bad "$kind $name rule $i: '$first' not allowed again after the restore"
  done
}

leader() { local h p; h=$(lease_holder); for p in $(ks_pods); do case "$h" in "$p"*) echo "$p"; return 0 ;; esac; done; return 1; }
wait_for 60 leader || { bad "no kubesched leader"; exit 1; }
L=$(leader)
note "leader: $L"
check_object clusterrole "$REL"
check_object role "$REL-leader-election" "$NS"

# Live: a rule taken out, kubesched's own request refused with 403, then the rule back.
orig=$(kubectl get clusterrole "$REL" -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)')
without() { # resource: replace the ClusterRole without the rule(s) naming it
  jq --arg r "$1" '.rules |= map(select((.resources | index($r)) | not))' <<<"$orig" | kubectl replace -f - >/dev/null
}
restore() { kubectl replace -f - >/dev/null <<<"$orig"; }
logged_403() { kubectl logs -n "$NS" -c kubesched "$L" 2>/dev/null | grep -F "$1" | grep -qiE "403|forbidden"; }

without pods/binding
sleep 1
workload rb1 "$REL" | kubectl create -f - >/dev/null
if wait_for 30 logged_403 "default/rb1"; then ok "without pods/binding: kubesched's binding of rb1 is refused: $(kubectl logs -n "$NS" -c kubesched "$L" | grep -F default/rb1 | grep -iE -m1 '403|forbidden' | cut -c1-200)"
else bad "no 403 for rb1's binding in $L's log"; fi
[ -z "$(node_of rb1)" ] && ok "rb1 stays unbound" || bad "rb1 bound to $(node_of rb1) without pods/binding"
restore
wait_for "$T" running rb1 && ok "pods/binding back: rb1 is bound and runs" || bad "rb1 after the rule came back: $(pod_phase rb1)"

without pods/status
sleep 1
kubectl create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: rs1, namespace: default, labels: {cluster-test: "1"}}
spec:
  schedulerName: $REL
  nodeSelector: {cluster-test/nowhere: "1"}
  containers: [{name: w, image: $KUBESCHED_CLUSTER_WORKLOAD_IMAGE, imagePullPolicy: Never}]
YAML
if wait_for 30 logged_403 "rs1"; then ok "without pods/status: the Unschedulable condition of rs1 is refused: $(kubectl logs -n "$NS" -c kubesched "$L" | grep -F rs1 | grep -iE -m1 '403|forbidden' | cut -c1-200)"
else bad "no 403 for rs1's status in $L's log"; fi
[ -z "$(pod_cond rs1)" ] && ok "rs1 has no PodScheduled condition" || bad "rs1's condition: $(pod_cond rs1)"
restore

# tokenreviews and subjectaccessreviews: /metrics with a token of a ServiceAccount that may get it.
kubectl create serviceaccount metrics-reader -n default >/dev/null 2>&1
kubectl create clusterrolebinding cluster-test-metrics-reader --clusterrole=system:monitoring --serviceaccount=default:metrics-reader >/dev/null 2>&1
tok=$(kubectl create token metrics-reader -n default --duration 10m)
ip=$(kubectl get pod "$L" -n "$NS" -o jsonpath='{.status.podIP}')
metrics_code() { curl -sk -o /dev/null -w '%{http_code}' --max-time 5 -H "Authorization: Bearer $tok" "https://$ip:10259/metrics"; }
code=$(metrics_code)
[ "$code" = 200 ] && ok "with every rule: /metrics with the reader's token: 200" || bad "/metrics with the reader's token: $code"
for r in tokenreviews subjectaccessreviews; do
  without "$r"
  sleep 1
  # The delegated authenticator and authorizer cache their answers (10 s/2 min as upstream): a new token.
  tok=$(kubectl create token metrics-reader -n default --duration 10m)
  code=$(metrics_code)
  if [ "$code" != 200 ] && wait_for 10 logged_403 "$r"; then ok "without $r: /metrics refused ($code), kubesched logs the 403 of its $r request"
  elif [ "$code" != 200 ]; then ok "without $r: /metrics refused ($code)"; note "(kubesched's log does not name the $r 403)"
  else bad "without $r: /metrics still 200"; fi
  restore
  sleep 1
  tok=$(kubectl create token metrics-reader -n default --duration 10m)
  wait_for 10 test "$(metrics_code)" = 200 && ok "$r back: /metrics 200 again" || bad "/metrics after $r came back: $(metrics_code)"
done
kubectl delete clusterrolebinding cluster-test-metrics-reader >/dev/null 2>&1
kubectl delete serviceaccount metrics-reader -n default >/dev/null 2>&1
cleanup_workloads
exit 0
