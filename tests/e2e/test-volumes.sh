#!/usr/bin/env bash
# Pods with volumes, end to end, kubesched next to the real kube-scheduler v1.37.2, against a
# control plane with a real kube-controller-manager (its PersistentVolume controller binds
# claims and hands WaitForFirstConsumer claims to provisioners) and a real dynamic provisioner
# built from the sig-storage external-provisioner library (tests/e2e/provisioner). Two zones:
# node va (zone a) and vb (zone b). For each scheduler s in {ks (kubesched), def
# (default-scheduler)} the same objects, each scheduler's own (labels owner=s keep the PV
# controller from crossing them):
#   1. a static PV pinned to zone b by its nodeAffinity, bound by the PV controller to claim
#      zonal-s (Immediate class): the pod using it is bound to vb, by both;
#   2. a claim no PV can satisfy (Immediate class, selector matching none): the pod gets
#      PodScheduled=False with the same reason and message from both, and a FailedScheduling event;
#   3. a claim of a WaitForFirstConsumer class of the provisioner: each scheduler's PreBind
#      annotates the claim with the node it picked, the provisioner makes a PV pinned there, the
#      PV controller binds the claim, and only then is the pod bound, to that node;
#   4. the same with a claim the provisioner refuses once (ProvisioningReschedule: it removes the
#      selected-node annotation): the binding cycle fails with upstream's "provisioning failed"
#      (the same message from both), the pod is unreserved, retried and bound, nothing lost;
#   5. side by side on six static WaitForFirstConsumer PVs (three per node) and six claims, three
#      per scheduler: both bind PVs at the same time through conditional writes, every pod ends
#      bound on its PV's node, and no PV is claimed twice;
#   6. a pod waiting in PreBind (its claim's class names a provisioner nobody runs) is preempted
#      in memory by a higher-priority pod (v1.37): not deleted, the same Preempted event
#      ("... (in kube-scheduler memory).") and FailedScheduling message ('running PreBind plugin
#      "VolumeBinding": preempted by DefaultPreemption') from both schedulers.
# Usage: tests/e2e/test-volumes.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
"$E2E_HERE/build-control-plane.sh" kube-controller-manager >/dev/null ||
  { bad "could not build kube-controller-manager"; exit 1; }
prov_bin=$("$E2E_HERE/build-provisioner.sh" | tail -1) || { bad "could not build the provisioner"; exit 1; }
e2e_begin --with-scheduler --with-controller-manager
"$prov_bin" -kubeconfig "$KUBECONFIG" -root "$E2E_DIR/hostpath" -v 2 \
  </dev/null >"$E2E_DIR/logs/provisioner.log" 2>&1 &
echo $! >"$E2E_DIR/pids/provisioner"
ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1
T=$E2E_TIMEOUT

# va is the bigger node: without the PV's node affinity both schedulers would score it higher.
{ mk_node va 16 32Gi 110 topology.kubernetes.io/zone=a; mk_node vb 4 8Gi 110 topology.kubernetes.io/zone=b; } |
  kubectl create -f - >/dev/null
kubectl create -f - >/dev/null <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: static-imm}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: wffc}
provisioner: kubesched.e2e/hostpath
volumeBindingMode: WaitForFirstConsumer
YAML

sched_of() { [ "$1" = ks ] && echo kubesched || echo default-scheduler; }
claim() { # name class [selector owner]
  local sel=
  [ -z "${3:-}" ] || sel="  selector: {matchLabels: {owner: $3}}"
  cat <<YAML
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $2
  resources: {requests: {storage: 1Gi}}
$sel
YAML
}
pod_with_claim() { # name scheduler claim
  mk_pod "$1" "$2" 100m 64Mi app=vol
  printf '  volumes:\n  - name: data\n    persistentVolumeClaim: {claimName: %s}\n' "$3"
}
claim_phase() { kubectl get pvc "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
is_bound_claim() { [ "$(claim_phase "$1")" = Bound ]; }
has_cond() { [ -n "$(pod_cond "$1")" ]; }
is_bound() { [ -n "$(node_of "$1")" ]; }

# ---- 1. a zonal static PV --------------------------------------------------------------------
for s in ks def; do
  kubectl create -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: zonal-$s, labels: {owner: $s}}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: static-imm
  hostPath: {path: /tmp/zonal-$s}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [b]}]
YAML
  claim "zonal-$s" static-imm "$s" | kubectl create -f - >/dev/null
done
for s in ks def; do
  if wait_for "$T" is_bound_claim "zonal-$s"; then ok "claim zonal-$s bound to its PV by kube-controller-manager"
  else bad "claim zonal-$s not bound (phase '$(claim_phase "zonal-$s")')"; fi
done
for s in ks def; do pod_with_claim "zonal-$s" "$(sched_of $s)" "zonal-$s"; done | kubectl create -f - >/dev/null
for s in ks def; do
  if wait_for "$T" bound_to "zonal-$s" vb; then ok "zonal-$s: bound to vb, the PV's zone, by $(sched_of $s)"
  else bad "zonal-$s: node '$(node_of "zonal-$s")', condition '$(pod_cond "zonal-$s")'"; fi
done

# ---- 2. a claim nothing satisfies --------------------------------------------------------------
for s in ks def; do claim "nopv-$s" static-imm "nobody-$s"; pod_with_claim "nopv-$s" "$(sched_of $s)" "nopv-$s"; done |
  kubectl create -f - >/dev/null
for s in ks def; do wait_for "$T" has_cond "nopv-$s" || true; done
ks_c=$(pod_cond nopv-ks) def_c=$(pod_cond nopv-def)
echo "# kubesched:         $ks_c"
echo "# default-scheduler: $def_c"
# The whole message must be the same: v1.37's default profile has DynamicResources before
# DefaultPreemption, and when an earlier PreFilter (here VolumeBinding's) rejects the pod,
# DynamicResources' PostFilter finds no state of its own and ends PostFilter with the Error
# "not found" (so no preemption is tried), in kube-scheduler and in kubesched alike.
want_pre="False|Unschedulable|0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."
if [ "${ks_c%% not found}" = "$want_pre" ] && [ "${def_c%% not found}" = "$want_pre" ] &&
  [ "$ks_c" = "$def_c" ]; then
  ok "nopv: the same reason and PreFilter message as default-scheduler ($want_pre)"
else bad "nopv: kubesched '$ks_c', default-scheduler '$def_c'"; fi
if kubectl get events.v1.events.k8s.io -o json | jq -e '[.items[] | select(.reason=="FailedScheduling" and .regarding.name=="nopv-ks" and .reportingController=="kubesched")] | length > 0' >/dev/null
then ok "nopv-ks: FailedScheduling event from kubesched"; else bad "nopv-ks: no FailedScheduling event from kubesched"; fi

# ---- 3. WaitForFirstConsumer with the provisioner ----------------------------------------------
selected() { kubectl get pvc "$1" -o jsonpath='{.metadata.annotations.volume\.kubernetes\.io/selected-node}'; }
check_provisioned() { # pod/claim name, what
  local sel pv pv_node
  sel=$(selected "$1") pv=$(kubectl get pvc "$1" -o jsonpath='{.spec.volumeName}')
  pv_node=$(kubectl get pv "$pv" -o jsonpath='{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}' 2>/dev/null)
  if [ -n "$sel" ] && [ "$pv_node" = "$sel" ] && bound_to "$1" "$sel"; then
    ok "$1: $2 selected $sel, the provisioner made $pv there, the pod is bound there"
  else bad "$1: selected-node '$sel', PV '$pv' on '$pv_node', pod on '$(node_of "$1")', claim '$(claim_phase "$1")'"; fi
}
for s in ks def; do claim "wffc-$s" wffc; pod_with_claim "wffc-$s" "$(sched_of $s)" "wffc-$s"; done |
  kubectl create -f - >/dev/null
for s in ks def; do
  if wait_for 90 is_bound_claim "wffc-$s" && wait_for "$T" is_bound "wffc-$s"; then check_provisioned "wffc-$s" "$(sched_of $s)"
  else bad "wffc-$s: claim '$(claim_phase "wffc-$s")', pod on '$(node_of "wffc-$s")' (provisioner log: $(tail -n 3 "$E2E_DIR/logs/provisioner.log" | tr '\n' ' '))"; fi
done

# ---- 4. a provisioning that fails once ----------------------------------------------------------
for s in ks def; do
  claim "retry-$s" wffc | sed 's|^metadata: {name: \(.*\), namespace: default}|metadata: {name: \1, namespace: default, annotations: {kubesched.e2e/fail-once: "true"}}|'
  pod_with_claim "retry-$s" "$(sched_of $s)" "retry-$s"
done | kubectl create -f - >/dev/null
failed_msg() { # the FailedScheduling message of pod $1 that names the failed provisioning
  kubectl get events.v1.events.k8s.io -o json | jq -r --arg p "$1" \
    '[.items[] | select(.reason=="FailedScheduling" and .regarding.name==$p) | .note | select(test("provisioning failed"))][0] // empty'
}
for s in ks def; do
  if wait_for 120 is_bound "retry-$s" && is_bound_claim "retry-$s"; then check_provisioned "retry-$s" "$(sched_of $s) (after a failed provisioning)"
  else bad "retry-$s: pod on '$(node_of "retry-$s")', claim '$(claim_phase "retry-$s")', condition '$(pod_cond "retry-$s")'"; fi
done
ks_m=$(failed_msg retry-ks) def_m=$(failed_msg retry-def)
echo "# kubesched:         $ks_m"
echo "# default-scheduler: $def_m"
want='running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "retry-'
if [ "$ks_m" = "${want}ks\"" ] && [ "$def_m" = "${want}def\"" ]; then
  ok "retry: the failed PreBind gave the same FailedScheduling message from both"
else bad "retry: kubesched '$ks_m', default-scheduler '$def_m'"; fi

# ---- 5. both schedulers on the same static WaitForFirstConsumer PVs ----------------------------
kubectl create -f - >/dev/null <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: static-wffc}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
YAML
for i in 1 2 3 4 5 6; do
  n=$([ $((i % 2)) = 1 ] && echo va || echo vb)
  cat <<YAML
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: shared-$i}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: static-wffc
  hostPath: {path: /tmp/shared-$i}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$n]}]
YAML
done | kubectl create -f - >/dev/null
for i in 1 2 3; do for s in ks def; do
  claim "race-$s-$i" static-wffc; pod_with_claim "race-$s-$i" "$(sched_of $s)" "race-$s-$i"
done; done | kubectl create -f - >/dev/null
all_race_bound() {
  [ "$(kubectl get pods -l app=vol -o json | jq '[.items[] | select((.metadata.name | startswith("race-")) and .spec.nodeName != null)] | length')" = 6 ]
}
if wait_for 120 all_race_bound; then ok "race: the six pods are bound"
else bad "race: bound: $(kubectl get pods -o json | jq -c '[.items[] | select(.metadata.name | startswith("race-")) | [.metadata.name, .spec.nodeName]]')"; fi
# every claim bound to its own PV, whose claimRef names it back, on its pod's node
report=$(kubectl get pv,pvc,pods -o json | jq -r '
  (.items | map(select(.kind=="PersistentVolume" and (.metadata.name | startswith("shared-"))))) as $pvs
  | (.items | map(select(.kind=="PersistentVolumeClaim" and (.metadata.name | startswith("race-"))))) as $pvcs
  | (.items | map(select(.kind=="Pod" and (.metadata.name | startswith("race-"))))) as $pods
  | [ $pvcs[] | . as $c
      | ($pvs | map(select(.metadata.name == $c.spec.volumeName)) | .[0]) as $pv
      | ($pods | map(select(.metadata.name == $c.metadata.name)) | .[0]) as $pod
      | if $pv == null then "\($c.metadata.name): no PV"
        elif $pv.spec.claimRef.name != $c.metadata.name then "\($pv.metadata.name) names \($pv.spec.claimRef.name), not \($c.metadata.name)"
        elif $pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0] != $pod.spec.nodeName then "\($c.metadata.name) on \($pod.spec.nodeName), its PV elsewhere"
        else empty end ]
  + (if ([$pvcs[].spec.volumeName] | unique | length) != ($pvcs | length) then ["a PV bound to two claims"] else [] end)
  | join("; ")')
if [ -z "$report" ]; then ok "race: six claims on six distinct PVs, each PV naming its claim, each pod on its PV's node"
else bad "race: $report"; fi

# ---- 6. preemption of a pod in PreBind ---------------------------------------------------------
kubectl create -f - >/dev/null <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: nobody}
provisioner: kubesched.e2e/nobody
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: vol-high}
value: 1000
YAML
{ mk_node pre-ks 1 8Gi 110 e2e-pre=ks; mk_node pre-def 1 8Gi 110 e2e-pre=def; } | kubectl create -f - >/dev/null
pinned_pod() { # name scheduler s [priorityClass]
  mk_pod "$1" "$2" 1 64Mi app=pre
  printf '  nodeSelector: {e2e-pre: %s}\n' "$3"
  [ -z "${4:-}" ] || printf '  priorityClassName: %s\n' "$4"
}
for s in ks def; do
  claim "hang-$s" nobody
  pinned_pod "low-$s" "$(sched_of $s)" "$s"
  printf '  volumes:\n  - name: data\n    persistentVolumeClaim: {claimName: hang-%s}\n' "$s"
done | kubectl create -f - >/dev/null
for s in ks def; do
  if wait_for "$T" bash -c "[ \"\$(kubectl get pvc hang-$s -o jsonpath='{.metadata.annotations.volume\.kubernetes\.io/selected-node}')\" = pre-$s ]"; then
    ok "low-$s: $(sched_of $s)'s PreBind selected pre-$s and waits for a provisioner"
  else bad "low-$s: claim hang-$s never got pre-$s as its selected node"; fi
done
for s in ks def; do pinned_pod "high-$s" "$(sched_of $s)" "$s" vol-high; done | kubectl create -f - >/dev/null
event_note() { # reason pod [text the note contains]
  kubectl get events.v1.events.k8s.io -o json | jq -r --arg r "$1" --arg p "$2" --arg t "${3:-}" \
    '[.items[] | select(.reason==$r and .regarding.name==$p and (.note | contains($t))) | .note][0] // empty'
}
for s in ks def; do
  if wait_for "$T" bound_to "high-$s" "pre-$s"; then ok "high-$s: bound to pre-$s by $(sched_of $s), in place of low-$s"
  else bad "high-$s: on '$(node_of "high-$s")', condition '$(pod_cond "high-$s")'"; fi
  if kubectl get pod "low-$s" >/dev/null 2>&1 && [ -z "$(node_of "low-$s")" ]; then ok "low-$s: not deleted, not bound"
  else bad "low-$s: deleted or bound ('$(node_of "low-$s")')"; fi
done
for s in ks def; do
  uid=$(kubectl get pod "high-$s" -o jsonpath='{.metadata.uid}')
  got=$(event_note Preempted "low-$s")
  want="Preempted by pod $uid on node pre-$s (in kube-scheduler memory)."
  [ "$got" = "$want" ] && ok "low-$s: Preempted event '$got'" || bad "low-$s: Preempted event '$got', want '$want'"
done
ks_f=$(event_note FailedScheduling low-ks PreBind) def_f=$(event_note FailedScheduling low-def PreBind)
echo "# kubesched:         $ks_f"
echo "# default-scheduler: $def_f"
if [ -n "$ks_f" ] && [ "$ks_f" = "$def_f" ]; then ok "low: the same FailedScheduling message from both ($ks_f)"
else bad "low: kubesched '$ks_f', default-scheduler '$def_f'"; fi

ks_stop main
[ "$KS_RC" = 0 ] && ok "kubesched exited 0 on SIGTERM" || bad "kubesched exit status $KS_RC"
ks_no_errors main
exit 0
