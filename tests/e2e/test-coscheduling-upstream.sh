#!/usr/bin/env bash
# Live mode, end to end: gang scheduling with scheduler-plugins' PodGroup CRD, kubesched with the
# out-of-tree plugin examples/coscheduling (a .so) against scheduler-plugins' own kube-scheduler,
# both built from scheduler-plugins' Go module (build-scheduler-plugins.sh; v0.30.6, the release
# the module proxy serves). The CRD is the module's own (config/crd/bases), and scheduler-plugins'
# controller, from the same module, writes the PodGroups' status as it does in a real cluster.
# Side by side on one API server, each scheduler on its own nodes (label side=ks / side=sp, 1 CPU,
# a member asks 800m: one per node), the same groups named <group>-ks / <group>-sp:
#   1. a group of 4 (minMember 4, scheduleTimeoutSeconds 3) on 3 slots is never partly bound by
#      either scheduler (polled every 0.3 s for 12 s); the PreFilter and PostFilter messages of
#      both are the same, up to the side in names, and kubesched's Permit rejections are among
#      scheduler-plugins' (which ones a member sees hangs on timing); no retry storm: kubesched
#      makes no more scheduling attempts than 3x scheduler-plugins' + 30 (the v1.37 queue made
#      upstream's Coscheduling spin: see the plugin's hold);
#   2. a 4th node on each side: both groups are bound whole, one member per node (and how long
#      each scheduler took is printed);
#   3. the controller's PodGroup phases on both sides are the same at every step: Pending, then
#      Scheduling once minMember pods exist, Running once the test, in the kubelet's place,
#      reports the pods running, Finished once they succeed;
#   4. a group whose PodGroup does not exist yet: the same "PodGroup not found" condition from
#      both, and both place it once the PodGroup is created;
#   5. too few members for minMember: the same PreFilter condition from both; lowering minMember
#      lets both place it;
#   6. minResources larger than the side's free room: the same "resource gap" condition from both
#      (the quantities as Go prints them);
#   7. QueueSort: two groups waiting for a node, the newer one's pods created first; a node with
#      room for 3 members arrives: both bind the older group and no member of the newer one.
# Usage: tests/e2e/test-coscheduling-upstream.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
so=${KUBESCHED_COSCHEDULING_SO:-$(dirname "$KS_BIN")/tests/fixtures/libcoscheduling.so}
[ -f "$so" ] || { bad "no $so (cmake --build build builds it)"; exit 1; }
sp_out=$("$E2E_HERE/build-scheduler-plugins.sh") || { echo "$sp_out"; bad "building scheduler-plugins failed"; exit 1; }
sp_dir=$(printf '%s\n' "$sp_out" | sed -n 's/^bin dir: //p' | tail -1)
sp_version=$(awk '$1 == "require" && $2 == "sigs.k8s.io/scheduler-plugins" {print $3; exit}' "$E2E_HERE/scheduler-plugins/go.mod")
e2e_begin

kubectl apply -f "$sp_dir/podgroups-crd.yaml" >/dev/null &&
  kubectl wait --for=condition=Established crd/podgroups.scheduling.x-k8s.io --timeout=30s >/dev/null &&
  ok "scheduler-plugins $sp_version's PodGroup CRD installed from its module" ||
  { bad "could not install the module's PodGroup CRD"; exit 1; }
# both schedulers talk as system:kube-scheduler: read the PodGroups, as the chart grants kubesched
grant_scheduler e2e-podgroups-reader \
  "{apiGroups: [scheduling.x-k8s.io], resources: [podgroups], verbs: [get, list, watch]}"

# scheduler-plugins' controller (PodGroup and ElasticQuota reconcilers) as the admin; its
# ElasticQuota reconciler wants its CRD too. Its pid file makes stop-control-plane.sh stop it (the
# kubeconfig's path names the control plane's dir, which is how it knows the process as ours).
kubectl apply -f "$sp_dir/elasticquotas-crd.yaml" >/dev/null
"$sp_dir/controller" --kubeconfig="$KUBECONFIG" --metricsAddr=0 --probeAddr=0 --qps=100 --burst=200 \
  </dev/null >"$E2E_DIR/logs/sp-controller.log" 2>&1 &
echo $! >"$E2E_DIR/pids/sp-controller"

# scheduler-plugins' kube-scheduler with Coscheduling as its documentation configures it
sp_port=$(free_port)
cat >"$E2E_DIR/sp-scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {kubeconfig: $KUBESCHED_E2E_SCHEDULER_KUBECONFIG}
profiles:
- schedulerName: sp-scheduler
  plugins:
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
    preFilter: {enabled: [{name: Coscheduling}]}
    postFilter: {enabled: [{name: Coscheduling}]}
    permit: {enabled: [{name: Coscheduling}]}
    reserve: {enabled: [{name: Coscheduling}]}
  pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 10}
YAML
"$sp_dir/kube-scheduler" --config="$E2E_DIR/sp-scheduler.yaml" \
  --authentication-kubeconfig="$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" \
  --authorization-kubeconfig="$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" \
  --bind-address=127.0.0.1 --secure-port="$sp_port" --cert-dir="$E2E_DIR/sp-certs" -v=2 \
  </dev/null >"$E2E_DIR/logs/sp-scheduler.log" 2>&1 &
echo $! >"$E2E_DIR/pids/sp-scheduler"
if wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(curl -sk https://127.0.0.1:$sp_port/healthz)\" = ok ]"; then
  ok "scheduler-plugins' kube-scheduler $sp_version runs ($("$sp_dir/kube-scheduler" --version 2>&1 | head -1))"
else bad "scheduler-plugins' kube-scheduler did not start"; tail -20 "$E2E_DIR/logs/sp-scheduler.log"; exit 1; fi

cfg=$(ks_config ks-scheduler \
  "profiles:" \
  "- schedulerName: ks-scheduler" \
  "  plugins:" \
  "    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: \"*\"}]}" \
  "    preFilter: {enabled: [{name: Coscheduling}]}" \
  "    postFilter: {enabled: [{name: Coscheduling}]}" \
  "    permit: {enabled: [{name: Coscheduling}]}" \
  "    reserve: {enabled: [{name: Coscheduling}]}" \
  "  pluginConfig:" \
  "  - name: Coscheduling" \
  "    args: {kubeschedPluginPath: $so, permitWaitingTimeSeconds: 10}")
ks_start main "$cfg"
ks_wait_synced main || exit 1

sides=(ks sp)
# member NAME GROUP SIDE [CPU] [POOL]: a pod of the group for that side's scheduler, on the nodes
# labelled side=POOL (default: the side)
member() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  labels: {scheduling.x-k8s.io/pod-group: $2, gang: $2, e2e: "1"}
spec:
  schedulerName: $3-scheduler
  nodeSelector: {side: ${5:-$3}}
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: "${4:-800m}", memory: 100Mi}}
YAML
}
# pod_group NAME MIN [TIMEOUT] [MINRESOURCES-JSON]
pod_group() {
  printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: %s, namespace: default}\nspec: {minMember: %s%s%s}\n' \
    "$1" "$2" "${3:+, scheduleTimeoutSeconds: $3}" "${4:+, minResources: $4}"
}
bound_count() { kubectl get pods -l "gang=$1" -o json | jq '[.items[] | select((.spec.nodeName // "") != "")] | length'; }
phase_of() { kubectl get podgroup "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
# same_phase GROUP PHASE WHAT: both sides' PodGroups reach PHASE (the controller writes it)
same_phase() {
  local ks sp
  wait_for 30 bash -c "[ \"\$(kubectl get podgroup $1-ks -o jsonpath='{.status.phase}')\" = $2 ] && [ \"\$(kubectl get podgroup $1-sp -o jsonpath='{.status.phase}')\" = $2 ]"
  ks=$(phase_of "$1-ks") sp=$(phase_of "$1-sp")
  [ "$ks" = "$2" ] && [ "$sp" = "$2" ] && ok "PodGroup phase $2 on both sides $3" ||
    bad "PodGroup phases $3: kubesched's group $ks, scheduler-plugins' $sp (want $2)"
}
# cond_msg POD: its PodScheduled condition's message, the side made neutral in names
cond_msg() { kubectl get pod "$1" -o json | jq -r '.status.conditions[]? | select(.type=="PodScheduled") | .message' | sed -E 's/-(ks|sp)\b/-SIDE/g'; }
# same_cond GROUP INDEX PATTERN WHAT: both sides' pods GROUP-SIDE-INDEX get a condition matching
# PATTERN, with the same text
same_cond() {
  local ks sp s
  for s in "${sides[@]}"; do
    wait_for "$E2E_TIMEOUT" bash -c "kubectl get pod $1-$s-$2 -o json | jq -r '.status.conditions[]? | .message' | grep -q '$3'"
  done
  ks=$(cond_msg "$1-ks-$2") sp=$(cond_msg "$1-sp-$2")
  if [ -n "$ks" ] && [ "$ks" = "$sp" ]; then ok "$4, the same from both: $(cut -c1-160 <<<"$ks")"
  else bad "$4: kubesched says '$ks', scheduler-plugins '$sp'"; fi
}
# events SIDE GROUP: the distinct FailedScheduling messages of the group's pods, side made neutral
events() {
  kubectl get events --field-selector reason=FailedScheduling -o json |
    jq -r --arg g "$2-$1-" '.items[] | select(.involvedObject.name | startswith($g)) | .message' |
    sed -E 's/-(ks|sp)\b/-SIDE/g; s/big-SIDE-[1-4]/big-SIDE-N/g' | sort -u
}

for s in "${sides[@]}"; do
  for i in 1 2 3; do mk_node "$s-n$i" 1 4Gi 110 "side=$s" | kubectl create -f - >/dev/null; done
done

# ---- 1-3: four members, three slots --------------------------------------------------------
for s in "${sides[@]}"; do
  pod_group "big-$s" 4 3 | kubectl create -f - >/dev/null
done
same_phase big Pending "with no members"
for s in "${sides[@]}"; do
  for i in 1 2 3 4; do member "big-$s-$i" "big-$s" "$s"; done | kubectl create -f - >/dev/null
done
declare -A partial=([ks]=0 [sp]=0)
t0=$SECONDS
while [ $((SECONDS - t0)) -lt 12 ]; do
  for s in "${sides[@]}"; do
    b=$(bound_count "big-$s")
    if [ "$b" -gt 0 ] && [ "$b" -lt 4 ]; then partial[$s]=$b; fi
  done
  sleep 0.3
done
for s in "${sides[@]}"; do
  [ "$(bound_count "big-$s")" = 0 ] && [ "${partial[$s]}" = 0 ] &&
    ok "$s: a group of 4 on 3 slots was never partly bound (12 s, polled every 0.3 s)" ||
    bad "$s: the group of 4 was partly bound (${partial[$s]}, now $(bound_count "big-$s"))"
done
same_phase big Scheduling "once 4 members exist (minMember 4)"
# The messages that do not hang on timing are the same from both: PreFilter's count of the
# members as they were created, and the member that fits nowhere rejecting the group. Which
# Permit rejections the waiting members see ("optimistic rejection in PostFilter", "rejection in
# Unreserve", a timeout after the group's 3 s) depends on who retries when, so those only have
# to be among the ones scheduler-plugins' Coscheduling and its framework write.
ev_ks=$(events ks big) ev_sp=$(events sp big)
note "kubesched's FailedScheduling messages:"; while read -r l; do note "  $l"; done <<<"$ev_ks"
note "scheduler-plugins' FailedScheduling messages:"; while read -r l; do note "  $l"; done <<<"$ev_sp"
fixed() { grep -v '^0/1 nodes are available: 1 ' <<<"$1"; }
permit() { grep '^0/1 nodes are available: 1 ' <<<"$1"; }
[ -n "$(fixed "$ev_ks")" ] && [ "$(fixed "$ev_ks")" = "$(fixed "$ev_sp")" ] &&
  ok "the same PreFilter and PostFilter messages from both ($(fixed "$ev_ks" | wc -l))" ||
  bad "the PreFilter and PostFilter messages differ"
unknown=$(permit "$ev_ks" | grep -vxE '0/1 nodes are available: 1 (optimistic rejection in PostFilter|rejection in Unreserve|rejected due to timeout after waiting 3s at plugin Coscheduling)\.')
[ -n "$(permit "$ev_ks")" ] && [ -z "$unknown" ] &&
  ok "kubesched's Permit rejections are scheduler-plugins' ($(permit "$ev_ks" | wc -l) kinds)" ||
  bad "Permit rejections: none, or not scheduler-plugins': $unknown"
# No retry storm: scheduler_schedule_attempts_total of each profile, 12 s of a group that
# cannot fit. Since v1.33 an idle scheduler pops backoffQ early, and upstream's Coscheduling
# then spins (thousands of attempts a second here, before kubesched's hold in the plugin).
attempts() { awk -v p="profile=\"$2\"" '/^scheduler_schedule_attempts_total\{/ && index($0, p) {n += $NF} END {print n + 0}' <<<"$1"; }
a_ks=$(attempts "$(ks_metrics main)" ks-scheduler)
a_sp=$(attempts "$(curl -sk --cert "$E2E_DIR/pki/admin.crt" --key "$E2E_DIR/pki/admin.key" "https://127.0.0.1:$sp_port/metrics")" sp-scheduler)
note "scheduling attempts so far: kubesched $a_ks, scheduler-plugins' kube-scheduler $a_sp"
[ "$a_ks" -gt 0 ] && [ "$a_sp" -gt 0 ] && [ "$a_ks" -le $((3 * a_sp + 30)) ] &&
  ok "no retry storm: $a_ks attempts in kubesched, $a_sp in scheduler-plugins' $sp_version" ||
  bad "retry storm: $a_ks attempts in kubesched, $a_sp in scheduler-plugins' $sp_version"

declare -A t_bound
for s in "${sides[@]}"; do mk_node "$s-n4" 1 4Gi 110 "side=$s" | kubectl create -f - >/dev/null; done
t_add=$SECONDS
while [ $((SECONDS - t_add)) -lt 90 ]; do
  for s in "${sides[@]}"; do
    [ -z "${t_bound[$s]:-}" ] && [ "$(bound_count "big-$s")" = 4 ] && t_bound[$s]=$((SECONDS - t_add))
  done
  [ -n "${t_bound[ks]:-}" ] && [ -n "${t_bound[sp]:-}" ] && break
  sleep 0.3
done
for s in "${sides[@]}"; do
  if [ -n "${t_bound[$s]:-}" ]; then
    ok "$s: all 4 members bound ${t_bound[$s]} s after a 4th node appeared"
    [ "$(kubectl get pods -l "gang=big-$s" -o json | jq -r '[.items[].spec.nodeName] | unique | length')" = 4 ] &&
      ok "$s: one member per node" || bad "$s: members share a node"
  else bad "$s: the group was not bound within 90 s of a 4th node ($(bound_count "big-$s")/4)"; fi
done
for s in "${sides[@]}"; do
  for i in 1 2 3 4; do
    kubectl patch pod "big-$s-$i" --subresource=status --type=merge -p '{"status":{"phase":"Running"}}' >/dev/null
  done
done
same_phase big Running "once the members run"
[ "$(kubectl get podgroup big-ks -o jsonpath='{.status.running}')" = 4 ] &&
  [ "$(kubectl get podgroup big-sp -o jsonpath='{.status.running}')" = 4 ] &&
  ok "status.running is 4 on both" || bad "status.running: $(kubectl get podgroups -o json | jq -c '[.items[] | {(.metadata.name): .status.running}]')"
for s in "${sides[@]}"; do
  for i in 1 2 3 4; do
    kubectl patch pod "big-$s-$i" --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null
  done
done
same_phase big Finished "once the members succeed"

# ---- 4: a PodGroup that does not exist yet -------------------------------------------------
for s in "${sides[@]}"; do
  for i in 5 6; do mk_node "$s-n$i" 2 4Gi 110 "side=$s" | kubectl create -f - >/dev/null; done
  for i in 1 2; do member "late-$s-$i" "late-$s" "$s" 100m; done | kubectl create -f - >/dev/null
done
same_cond late 1 "PodGroup not found" "a member of a missing PodGroup is refused"
for s in "${sides[@]}"; do pod_group "late-$s" 2 | kubectl create -f - >/dev/null; done
for s in "${sides[@]}"; do
  wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l gang=late-$s -o json | jq '[.items[] | select((.spec.nodeName // \"\") != \"\")] | length')\" = 2 ]" &&
    ok "$s: creating the PodGroup let the group be placed" ||
    bad "$s: the group was not placed after its PodGroup was created ($(bound_count "late-$s")/2)"
done

# ---- 5: too few members ---------------------------------------------------------------------
for s in "${sides[@]}"; do
  pod_group "solo-$s" 3 | kubectl create -f - >/dev/null
  member "solo-$s-1" "solo-$s" "$s" 100m | kubectl create -f - >/dev/null
done
same_cond solo 1 "cannot find enough sibling pods" "PreFilter counts the group's pods"
same_phase solo Pending "with 1 of minMember 3"
for s in "${sides[@]}"; do kubectl patch podgroup "solo-$s" --type merge -p '{"spec":{"minMember":1}}' >/dev/null; done
for s in "${sides[@]}"; do
  wait_for "$E2E_TIMEOUT" bash -c "[ -n \"\$(kubectl get pod solo-$s-1 -o jsonpath='{.spec.nodeName}')\" ]" &&
    ok "$s: lowering minMember placed solo-$s-1" || bad "$s: solo-$s-1 was not placed after minMember was lowered"
done

# ---- 6: minResources beyond the side's room -------------------------------------------------
for s in "${sides[@]}"; do
  pod_group "rich-$s" 2 "" '{cpu: "40", memory: 1Gi, nvidia.com/gpu: "2"}' | kubectl create -f - >/dev/null
  for i in 1 2; do member "rich-$s-$i" "rich-$s" "$s" 100m; done | kubectl create -f - >/dev/null
done
same_cond rich 1 "resource gap" "minResources beyond the free room"

# ---- 7: QueueSort, the older group first --------------------------------------------------
# Two groups of 2 whose pods wait for a node of their own pool; the newer group's pods are
# created first. One node with room for 3 members arrives (one event, all four pods back in the
# queue together): Coscheduling's QueueSort puts the older PodGroup's members first, so the
# older group is bound and the newer one, with one slot for two members, not at all.
for s in "${sides[@]}"; do pod_group "older-$s" 2 | kubectl create -f - >/dev/null; done
sleep 1.1 # creationTimestamp has whole seconds
for s in "${sides[@]}"; do
  pod_group "newer-$s" 2 | kubectl create -f - >/dev/null
  for g in newer older; do
    for i in 1 2; do member "$g-$s-$i" "$g-$s" "$s" 800m "$s-q"; done | kubectl create -f - >/dev/null
  done
done
for s in "${sides[@]}"; do
  for p in newer-$s-1 newer-$s-2 older-$s-1 older-$s-2; do
    wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pod $p -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].status}')\" = False ]" ||
      bad "$p was never tried"
  done
done
# Past every member's backoff (2 s after its 2nd attempt, at most), so that the node's event moves
# all four to activeQ at once and QueueSort orders them. (Still backing off, they would come
# back through backoffQ, which v1.37's queue pops early by backoff time first: the newer group's
# members, tried first, would lead, in kubesched as in a v1.37 kube-scheduler.)
sleep 3.5
for s in "${sides[@]}"; do mk_node "$s-q" 2500m 4Gi 110 "side=$s-q" | kubectl create -f - >/dev/null; done
for s in "${sides[@]}"; do
  wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(kubectl get pods -l gang=older-$s -o json | jq '[.items[] | select((.spec.nodeName // \"\") != \"\")] | length')\" = 2 ]" &&
    ok "$s: the older group is bound whole on the new node" ||
    bad "$s: the older group was not bound ($(bound_count "older-$s")/2)"
done
sleep 3
[ "$(bound_count newer-ks)" = 0 ] && [ "$(bound_count newer-sp)" = 0 ] &&
  ok "neither side bound a member of the newer group (one slot left for two)" ||
  bad "newer group bound: kubesched $(bound_count newer-ks), scheduler-plugins $(bound_count newer-sp)"

ks_no_errors main
exit 0
