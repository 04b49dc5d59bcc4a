#!/usr/bin/env bash
# Dynamic Resource Allocation (resource.k8s.io/v1) in live mode, end to end, kubesched next to
# the real kube-scheduler v1.37.2, against a control plane with kube-controller-manager's
# ResourceClaim controller (it makes each pod's claim from its ResourceClaimTemplate, writes
# pod.status.resourceClaimStatuses, drops reservedFor entries of deleted pods and deallocates
# what nobody uses any more). No DRA driver and no kubelet: DeviceClasses and ResourceSlices
# (spec.nodeName, one pool per slice) are written as the admin, Nodes are plain objects, pods
# never run. For each scheduler s in {ks (kubesched), def (default-scheduler)} the same objects,
# each scheduler's own (nodes labelled owner=s, pods with nodeSelector owner=s, names s-...):
# nodes s-small (one GPU, memory 40Gi), s-big (two GPUs, 80Gi), s-big2 (its one 80Gi GPU only
# appears in 3), s-away (owner=s-away: no pod of s may go there; one FPGA), and an FPGA on
# s-small; one node `shared` (owner=shared) with a pool of six 80Gi GPUs for 5.
#   1. a pod with a claim template asking for >= 80Gi: the controller makes the claim, the
#      scheduler allocates it (driver, pool, device, the node selector of the allocation),
#      reserves it for the pod, adds the finalizer resource.kubernetes.io/delete-protection
#      and binds the pod to s-big; the claim of ks and that of def are the same but for the
#      prefix s and the pod's uid;
#   2. a claim nothing satisfies (>= 160Gi): PodScheduled=False, the same reason and message
#      from both, word for word, and a FailedScheduling event from each;
#   3. s-big2's GPU appears and four more pods ask for >= 80Gi: exactly two fit (s-big's second
#      GPU, s-big2's), two stay pending with the same condition from both; one bound pod is
#      force-deleted: the controller deallocates its claim and exactly one waiting pod is bound
#      within seconds (requeued by the claim/pod events), on the device that was freed;
#   4. PostFilter: a claim (of its own, not from a template) that the test allocates itself,
#      through the status subresource, to the FPGA of s-away, reserved for nobody: its pod may
#      not go to s-away, so every node fails, DynamicResources' PostFilter deallocates the claim
#      ("deallocation of ResourceClaim completed" in the FailedScheduling event, the same from
#      both), and the pod is then allocated the FPGA of s-small and bound there;
#   5. both schedulers on the six GPUs of `shared`, eight pods each (each with a claim of its
#      own, made by the test), coming in turns, ks, def, ks, ...: no device in two claims, six
#      pods bound, each on its claim's node, the other ten pending with an Unschedulable
#      condition and an unallocated claim, the same condition from both. (In turns and not at
#      once: see the comment at 5.)
#   6. binding conditions: a device whose slice lists bindingConditions is allocated and the
#      claim reserved in PreBind, which posts BindingConditionsPending (the same note from both)
#      and does not bind the pod until the test, in the driver's place, reports the device
#      attached in the claim's status.devices; then it is bound within the 5 s poll;
#   7. an extended resource backed by DRA (a DeviceClass's extendedResourceName, no node with it
#      in allocatable): the scheduler creates the claim for the pod's extended resources,
#      allocates and reserves the device, writes the pod's extendedResourceClaimStatus and binds
#      it; the claim and the status the same from both.
# Then no unexpected error in kubesched's log.
# Usage: tests/e2e/test-dra-live.sh
# Env: those of lib.sh, but LIVE_TIMEOUT (each wait) defaults to 20 s here;
#      DRA_E2E_SCHEDULERS=def or =ks checks the pods of one scheduler only, without the
#      comparisons (default "ks def"); DRA_E2E_POKE=1 labels each template pod once the
#      controller has named its claim, for both schedulers: a pod update that is more than a
#      status update, to look past a scheduler that misses the status update itself.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
"$E2E_HERE/build-control-plane.sh" kube-controller-manager >/dev/null ||
  { bad "could not build kube-controller-manager"; exit 1; }
e2e_begin --with-scheduler --with-resourceclaim-controller
ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1
T=${LIVE_TIMEOUT:-20}   # each wait; a decision takes well under a second here
t_begin=$SECONDS
scheds=${DRA_E2E_SCHEDULERS:-ks def}

sched_of() { [ "$1" = ks ] && echo kubesched || echo default-scheduler; }
# slice NAME NODE DRIVER POOL DEVICE-NAMES [MEMORY]: a ResourceSlice with one pool of its own.
slice() {
  local name=$1 node=$2 driver=$3 pool=$4 devs=$5 mem=${6:-}
  printf -- '---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: %s}\n' "$name"
  printf 'spec:\n  driver: %s\n  nodeName: %s\n  pool: {name: %s, generation: 1, resourceSliceCount: 1}\n  devices:\n' \
    "$driver" "$node" "$pool"
  for d in $devs; do
    printf '  - name: %s\n' "$d"
    [ -z "$mem" ] || printf '    attributes: {model: {string: "e2e-%s"}}\n    capacity: {memory: {value: %s}}\n' "$mem" "$mem"
  done
}
gpu_slice() { slice "$1" "$2" gpu.e2e.example.com "$3" "$4" "$5"; }
# dra_pod NAME SCHEDULER OWNER (template TEMPLATE | claim CLAIM): a pod whose one container uses
# the claim "dev", made from a template or an existing claim, on the nodes labelled owner=OWNER.
dra_pod() {
  local name=$1 sched=$2 owner=$3 kind=$4 src=$5 field=resourceClaimTemplateName
  [ "$kind" = template ] || field=resourceClaimName
  mk_pod "$name" "$sched" 100m 64Mi app=dra |
    sed 's|resources: {requests: {cpu: "100m", memory: 64Mi}}|resources: {requests: {cpu: "100m", memory: 64Mi}, claims: [{name: dev}]}|'
  printf '  nodeSelector: {owner: %s}\n  resourceClaims:\n  - {name: dev, %s: %s}\n' "$owner" "$field" "$src"
}
is_bound() { [ -n "$(node_of "$1")" ]; }
# poke POD...: with DRA_E2E_POKE=1, once the controller has named each pod's claim, label the pod.
poke() {
  [ "${DRA_E2E_POKE:-0}" = 1 ] || return 0
  local p
  for p in "$@"; do wait_for "$T" claim_named "$p" || true; done
  kubectl label pod "$@" e2e-poke=1 >/dev/null
}
claim_named() { [ -n "$(claim_of "$1")" ]; }
has_cond() { [ -n "$(pod_cond "$1")" ]; }
# claim_of POD: the name of the claim the controller made for it (pod.status.resourceClaimStatuses).
claim_of() { kubectl get pod "$1" -o json 2>/dev/null | jq -r '[.status.resourceClaimStatuses[]? | select(.name=="dev") | .resourceClaimName][0] // empty'; }
# claim_view CLAIM S: the claim as JSON, with what differs by construction between ks and def
# made equal: the prefix S- in names, uids, the allocation's timestamp (kept as "set").
claim_view() {
  kubectl get resourceclaim "$1" -o json | jq -S -c --arg p "$2-" '
    def unp: if type == "string" and startswith($p) then "S-" + ltrimstr($p) else . end;
    {finalizers: .metadata.finalizers,
     owner: [.metadata.ownerReferences[]? | {kind, name: (.name | unp), controller}],
     allocation: (.status.allocation // null
       | if . == null then null else
           (.allocationTimestamp |= (if . == null then null else "set" end))
           | .devices.results |= map(.pool |= unp)
           | .nodeSelector.nodeSelectorTerms |= map(.matchFields |= map(.values |= map(unp)))
         end),
     reservedFor: [.status.reservedFor[]? | {apiGroup, resource, name: (.name | unp), uid: (if .uid then "UID" else null end)}]}'
}
# device_of CLAIM: "pool/device" of its first allocated device, empty when not allocated.
device_of() { kubectl get resourceclaim "$1" -o json 2>/dev/null | jq -r '.status.allocation.devices.results[0] // empty | "\(.pool)/\(.device)"'; }
# event_note REASON POD [TEXT]: the note of the first such event (of the events.k8s.io API).
event_note() {
  kubectl get events.v1.events.k8s.io -o json | jq -r --arg r "$1" --arg p "$2" --arg t "${3:-}" \
    '[.items[] | select(.reason==$r and .regarding.name==$p and (.note | contains($t))) | .note][0] // empty'
}
event_from() { # REASON POD CONTROLLER: such an event was reported by CONTROLLER
  kubectl get events.v1.events.k8s.io -o json | jq -e --arg r "$1" --arg p "$2" --arg c "$3" \
    '[.items[] | select(.reason==$r and .regarding.name==$p and .reportingController==$c)] | length > 0' >/dev/null
}
# same NAME KS DEF: the two views agree (else both are printed).
same() {
  [ "$scheds" = "ks def" ] || return 0
  if [ "$2" = "$3" ]; then ok "$1: the same from kubesched and default-scheduler"; note "$2"
  else bad "$1: kubesched and default-scheduler differ"; note "kubesched:         $2"; note "default-scheduler: $3"; fi
}

# ---- the cluster -------------------------------------------------------------------------------
kubectl create -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-e2e}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.e2e.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fpga-e2e}
spec:
  selectors:
  - cel: {expression: 'device.driver == "fpga.e2e.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-80, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu-e2e
          selectors:
          - cel: {expression: 'device.capacity["gpu.e2e.example.com"].memory.compareTo(quantity("80Gi")) >= 0'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-160, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu-e2e
          selectors:
          - cel: {expression: 'device.capacity["gpu.e2e.example.com"].memory.compareTo(quantity("160Gi")) >= 0'}
YAML
{
  for s in ks def; do
    mk_node "$s-small" 4 32Gi 110 "owner=$s"; mk_node "$s-big" 4 32Gi 110 "owner=$s"
    mk_node "$s-big2" 4 32Gi 110 "owner=$s"; mk_node "$s-away" 4 32Gi 110 "owner=$s-away"
    gpu_slice "$s-small-gpu" "$s-small" "$s-small" gpu-0 40Gi
    gpu_slice "$s-big-gpu" "$s-big" "$s-big" "gpu-0 gpu-1" 80Gi
    slice "$s-small-fpga" "$s-small" fpga.e2e.example.com "$s-small-fpga" fpga-0
    slice "$s-away-fpga" "$s-away" fpga.e2e.example.com "$s-away-fpga" fpga-0
  done
  mk_node shared 16 64Gi 110 owner=shared
} | kubectl create -f - >/dev/null || { bad "could not create the nodes and slices"; exit 1; }

# ---- 1. a claim from a template, allocated, reserved, bound -------------------------------------
for s in $scheds; do dra_pod "$s-one" "$(sched_of $s)" "$s" template gpu-80; done | kubectl create -f - >/dev/null
poke $(for s in $scheds; do echo "$s-one"; done)
declare -A view=()
for s in $scheds; do
  if wait_for "$T" is_bound "$s-one" && bound_to "$s-one" "$s-big"; then ok "$s-one: bound to $s-big by $(sched_of $s)"
  elif [ -z "$(pod_cond "$s-one")" ] && claim_named "$s-one"; then
    bad "$s-one: never tried by $(sched_of $s) in $T s (no PodScheduled condition, no event), though the controller named its claim in pod.status.resourceClaimStatuses"
  else bad "$s-one: node '$(node_of "$s-one")', condition '$(pod_cond "$s-one")'"; fi
  c=$(claim_of "$s-one")
  if [ -z "$c" ]; then bad "$s-one: no claim in pod.status.resourceClaimStatuses"; view[$s]=none; continue; fi
  ok "$s-one: the controller made its claim $c"
  view[$s]=$(claim_view "$c" "$s")
  uid=$(kubectl get pod "$s-one" -o jsonpath='{.metadata.uid}')
  got=$(kubectl get resourceclaim "$c" -o json | jq -r --arg u "$uid" '
    [ (.status.allocation.devices.results | length == 1 and .[0].driver == "gpu.e2e.example.com" and .[0].request == "gpu"),
      ((.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values // []) == [.status.allocation.devices.results[0].pool]),
      ((.metadata.finalizers // []) | index("resource.kubernetes.io/delete-protection") != null),
      ([.status.reservedFor[]? | .uid] == [$u]) ] | map(tostring) | join(" ")')
  if [ "$got" = "true true true true" ] && [ "$(device_of "$c")" = "$s-big/gpu-0" ]; then
    ok "$s-one: claim allocated $s-big/gpu-0 of gpu.e2e.example.com on $s-big, reserved for the pod, finalizer delete-protection"
  else bad "$s-one: claim $c not as expected (driver+request, nodeSelector, finalizer, reservedFor: $got; device '$(device_of "$c")')"; fi
done
same "the claim of s-one (allocation, node selector, finalizers, reservedFor)" "${view[ks]:-}" "${view[def]:-}"

# ---- 2. a claim nothing satisfies ------------------------------------------------------------------
for s in $scheds; do dra_pod "$s-none" "$(sched_of $s)" "$s" template gpu-160; done | kubectl create -f - >/dev/null
poke $(for s in $scheds; do echo "$s-none"; done)
for s in $scheds; do wait_for "$T" has_cond "$s-none" || true; done
declare -A cond=()
for s in $scheds; do
  cond[$s]=$(pod_cond "$s-none")
  case "${cond[$s]}" in
    "False|Unschedulable|"*"cannot allocate all claims"*) ok "$s-none: PodScheduled=False, Unschedulable, 'cannot allocate all claims'" ;;
    *) bad "$s-none: condition '${cond[$s]}'" ;;
  esac
done
same "the PodScheduled condition of s-none (status|reason|message)" "${cond[ks]:-}" "${cond[def]:-}"
for s in $scheds; do
  if event_from FailedScheduling "$s-none" "$(sched_of $s)"; then ok "$s-none: FailedScheduling event from $(sched_of $s)"
  else bad "$s-none: no FailedScheduling event from $(sched_of $s)"; fi
done

# ---- 3. devices run out, then one is freed ---------------------------------------------------------
{ for s in ks def; do gpu_slice "$s-big2-gpu" "$s-big2" "$s-big2" gpu-0 80Gi; done
  for i in 1 2 3 4; do for s in $scheds; do dra_pod "$s-m$i" "$(sched_of $s)" "$s" template gpu-80; done; done
} | kubectl create -f - >/dev/null
poke $(for i in 1 2 3 4; do for s in $scheds; do echo "$s-m$i"; done; done)
nbound() { # S: how many of S-m1..4 are bound
  kubectl get pods -l app=dra -o json | jq --arg p "$1-m" '[.items[] | select((.metadata.name | startswith($p)) and (.spec.nodeName // "") != "")] | length'
}
settled() { # S: two bound and the others with a condition
  [ "$(nbound "$1")" = 2 ] && [ "$(kubectl get pods -l app=dra -o json | jq --arg p "$1-m" '[.items[] | select((.metadata.name | startswith($p)) and (.spec.nodeName // "") == "" and ([.status.conditions[]? | select(.type=="PodScheduled" and .reason=="Unschedulable")] | length > 0))] | length')" = 2 ]
}
declare -A pend=()
for s in $scheds; do
  wait_for "$T" settled "$s" || true
  sleep 1   # nothing more may get bound
  bound=() pending=()
  for i in 1 2 3 4; do if is_bound "$s-m$i"; then bound+=("$s-m$i"); else pending+=("$s-m$i"); fi; done
  devs=$(for p in "${bound[@]}"; do device_of "$(claim_of "$p")"; done | sort | tr '\n' ' ')
  if [ ${#bound[@]} = 2 ] && [ "$devs" = "$s-big/gpu-1 $s-big2/gpu-0 " ]; then
    ok "$s-m*: exactly two of four bound by $(sched_of $s) (${bound[*]}) on $devs; ${pending[*]} pending"
  else bad "$s-m*: bound ${bound[*]:-none} with devices '$devs', pending ${pending[*]:-none}"; fi
  pend[$s]=$(pod_cond "${pending[0]:-$s-m4}")
  for p in "${pending[@]}"; do
    c=$(claim_of "$p")
    [ -z "$(device_of "$c")" ] || bad "$p: pending, yet its claim $c is allocated $(device_of "$c")"
  done
done
same "the condition of a waiting s-m* pod" "${pend[ks]:-}" "${pend[def]:-}"
# free one device of each scheduler: force-delete its first bound s-m pod (no kubelet to wait for)
declare -A victim=() vdev=() vclaim=() t_del=()
for s in $scheds; do
  for i in 1 2 3 4; do is_bound "$s-m$i" && { victim[$s]=$s-m$i; break; }; done
  [ -n "${victim[$s]:-}" ] || continue
  vclaim[$s]=$(claim_of "${victim[$s]}") vdev[$s]=$(device_of "$(claim_of "${victim[$s]}")")
done
for s in $scheds; do
  [ -n "${victim[$s]:-}" ] || { bad "$s-m*: no bound pod to delete"; continue; }
  t_del[$s]=$(date +%s.%N)
  kubectl delete pod "${victim[$s]}" --force --grace-period=0 >/dev/null 2>&1
done
# the victim is gone: two bound again (the other one and the one that got the freed device)
two_bound() { [ "$(nbound "$1")" = 2 ]; }
for s in $scheds; do
  [ -n "${victim[$s]:-}" ] || continue
  if wait_for 30 two_bound "$s"; then
    dt=$(echo "$(date +%s.%N) - ${t_del[$s]}" | bc)
    newp=
    for i in 1 2 3 4; do
      p=$s-m$i; [ "$p" != "${victim[$s]}" ] && is_bound "$p" && [ "$(device_of "$(claim_of "$p")")" = "${vdev[$s]}" ] && newp=$p
    done
    if [ -n "$newp" ] && [ "$(echo "$dt < 10" | bc)" = 1 ]; then
      ok "$s-m*: ${victim[$s]} deleted, its ${vdev[$s]} freed and given to $newp, bound by $(sched_of $s) after $(printf '%.1f' "$dt") s"
    else bad "$s-m*: after deleting ${victim[$s]} (${vdev[$s]}): a pod bound after $(printf '%.1f' "$dt") s, none with ${vdev[$s]}"; fi
  else bad "$s-m*: deleting ${victim[$s]} freed nothing: $(nbound "$s") bound; its claim: $(kubectl get resourceclaim "${vclaim[$s]}" -o json | jq -c '.status')"; fi
  a=$(kubectl get resourceclaim "${vclaim[$s]}" -o json 2>/dev/null | jq -c '[.status.allocation // null, .status.reservedFor // []]')
  [ -z "$a" ] || [ "$a" = '[null,[]]' ] && ok "$s-m*: the deleted pod's claim ${vclaim[$s]} deallocated by the controller" ||
    bad "$s-m*: the deleted pod's claim ${vclaim[$s]} still $a"
done
sleep 1
for s in $scheds; do
  [ "$(nbound "$s")" = 2 ] && ok "$s-m*: the last one stays pending" || bad "$s-m*: $(nbound "$s") of the three left bound, want 2"
done

# ---- 4. PostFilter deallocates a claim allocated where the pod cannot go ---------------------------
for s in $scheds; do
  kubectl create -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $s-pf, namespace: default, finalizers: [resource.kubernetes.io/delete-protection]}
spec:
  devices:
    requests:
    - name: fpga
      exactly: {deviceClassName: fpga-e2e}
YAML
  # allocated to s-away's FPGA, as a scheduler would have done for an earlier pod, reserved for none
  kubectl patch resourceclaim "$s-pf" --subresource=status --type=merge -p "$(jq -n -c --arg n "$s-away" '
    {status: {allocation: {devices: {results: [{request: "fpga", driver: "fpga.e2e.example.com", pool: ($n + "-fpga"), device: "fpga-0"}]},
      nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: "metadata.name", operator: "In", values: [$n]}]}]}}}}')" >/dev/null ||
    bad "$s-pf: could not write its allocation"
done
for s in $scheds; do
  [ "$(device_of "$s-pf")" = "$s-away-fpga/fpga-0" ] && ok "$s-pf: allocated $s-away-fpga/fpga-0 (by the test), reserved for none" ||
    bad "$s-pf: allocation '$(device_of "$s-pf")'"
done
for s in $scheds; do dra_pod "$s-pf" "$(sched_of $s)" "$s" claim "$s-pf"; done | kubectl create -f - >/dev/null
declare -A pf=()
for s in $scheds; do
  if wait_for "$T" is_bound "$s-pf" && bound_to "$s-pf" "$s-small" && [ "$(device_of "$s-pf")" = "$s-small-fpga/fpga-0" ]; then
    ok "$s-pf: its claim reallocated to $s-small-fpga/fpga-0, bound to $s-small by $(sched_of $s)"
  else bad "$s-pf: node '$(node_of "$s-pf")', claim on '$(device_of "$s-pf")', condition '$(pod_cond "$s-pf")'"; fi
  pf[$s]=$(event_note FailedScheduling "$s-pf" "deallocation of ResourceClaim completed")
  [ -n "${pf[$s]}" ] && ok "$s-pf: FailedScheduling says 'deallocation of ResourceClaim completed'" ||
    bad "$s-pf: no FailedScheduling event with 'deallocation of ResourceClaim completed' ($(event_note FailedScheduling "$s-pf"))"
done
same "the FailedScheduling message of s-pf's PostFilter" "${pf[ks]:-}" "${pf[def]:-}"

# ---- 5. both schedulers on the same six devices ----------------------------------------------------
N=6
# In turns, not at once: two schedulers that allocate at the same moment both allocate every
# device (two kube-scheduler v1.37.2 do: nothing in the API keeps a device from being in two
# claims; DRA expects one scheduler per pool). So the slice is there first and the pods come one
# by one, alternating ks and def, each decided (bound, or Unschedulable) before the next: each
# scheduler must count the devices that the other allocated, seen only through its informers.
# Each pod has a claim of its own (made by the test, not from a template).
gpu_slice shared-gpu shared shared "$(seq -f 'gpu-%g' 0 $((N - 1)) | tr '\n' ' ')" 80Gi | kubectl create -f - >/dev/null
decided() { is_bound "$1" || [ "$(pod_cond "$1" | cut -d'|' -f2)" = Unschedulable ]; }
undecided=()
for i in 1 2 3 4 5 6 7 8; do for s in $scheds; do
  { printf -- '---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: sh-%s-%s, namespace: default}\n' "$s" "$i"
    printf 'spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu-e2e}\n'
    dra_pod "sh-$s-$i" "$(sched_of $s)" shared claim "sh-$s-$i"
  } | kubectl create -f - >/dev/null
  wait_for 15 decided "sh-$s-$i" || undecided+=("sh-$s-$i")
done; done
[ ${#undecided[@]} = 0 ] && ok "shared: each pod decided (bound or Unschedulable) before the next came" ||
  bad "shared: not decided within 15 s: ${undecided[*]}"
race_state() { # "bound pending-with-Unschedulable total"
  kubectl get pods -l app=dra -o json | jq -r '[.items[] | select(.metadata.name | startswith("sh-"))] |
    "\([.[] | select((.spec.nodeName // "") != "")] | length) \([.[] | select((.spec.nodeName // "") == "" and ([.status.conditions[]? | select(.type=="PodScheduled" and .reason=="Unschedulable")] | length > 0))] | length) \(length)"'
}
M=$((8 * $(echo $scheds | wc -w)))
race_done() { [ "$(race_state)" = "$N $((M - N)) $M" ]; }
wait_for "$T" race_done || true
sleep 1
st=$(race_state)
if [ "$st" = "$N $((M - N)) $M" ]; then ok "shared: $N of $M pods bound, the other $((M - N)) pending and Unschedulable"
else bad "shared: bound / pending-Unschedulable / pods: $st, want $N $((M - N)) $M"; fi
report=$(kubectl get pods,resourceclaims -o json | jq -r '
  (.items | map(select(.kind == "Pod" and (.metadata.name | startswith("sh-"))))) as $pods
  | (.items | map(select(.kind == "ResourceClaim"))) as $claims
  | [ $pods[] | . as $p
      | ($claims | map(select(.metadata.name == $p.metadata.name))[0]) as $c
      | if $c == null then "\($p.metadata.name): no claim"
        elif ($p.spec.nodeName // "") != "" then
          (if $c.status.allocation == null then "\($p.metadata.name): bound, its claim not allocated"
           elif $c.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values != [$p.spec.nodeName] then "\($p.metadata.name): bound to \($p.spec.nodeName), its claim elsewhere"
           elif ([$c.status.reservedFor[]? | .uid] != [$p.metadata.uid]) then "\($p.metadata.name): its claim not reserved for it"
           else empty end)
        elif $c.status.allocation != null then "\($p.metadata.name): pending, its claim allocated"
        else empty end ]
  + ([$claims[] | .status.allocation.devices.results[]? | "\(.driver)/\(.pool)/\(.device)"] | group_by(.) | map(select(length > 1) | "\(.[0]) allocated \(length) times"))
  | join("; ")')
if [ -z "$report" ]; then ok "shared: no device in two claims; each bound pod on its claim's node, reserved for it; no pending pod's claim allocated"
else bad "shared: $report"; fi
[ "$scheds" != "ks def" ] || same "the condition of the last shared pod" "$(pod_cond sh-ks-8)" "$(pod_cond sh-def-8)"
note "shared: kubesched bound $(kubectl get pods -o json | jq '[.items[] | select((.metadata.name | startswith("sh-ks-")) and (.spec.nodeName // "") != "")] | length'), default-scheduler $(kubectl get pods -o json | jq '[.items[] | select((.metadata.name | startswith("sh-def-")) and (.spec.nodeName // "") != "")] | length')"

# ---- 6. binding conditions: PreBind waits until the driver says the device is attached --------
# A device whose slice lists bindingConditions (a fabric-attached device, DRADeviceBindingConditions,
# on in v1.37): the scheduler allocates and reserves the claim in PreBind, posts
# BindingConditionsPending and keeps the pod unbound until status.devices says attached=True,
# which the test writes in the driver's place.
kubectl create -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fab-e2e}
spec:
  selectors:
  - cel: {expression: 'device.driver == "fab.e2e.example.com"'}
YAML
for s in $scheds; do
  mk_node "$s-fab" 4 32Gi 110 "owner=$s-bc"
  cat <<YAML
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $s-fab-slice}
spec:
  driver: fab.e2e.example.com
  nodeName: $s-fab
  pool: {name: $s-fab, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: fab-0, bindsToNode: true, bindingConditions: [attached], bindingFailureConditions: [failed]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $s-bc, namespace: default}
spec:
  devices:
    requests:
    - {name: fab, exactly: {deviceClassName: fab-e2e}}
YAML
  dra_pod "$s-bc" "$(sched_of $s)" "$s-bc" claim "$s-bc"
done | kubectl create -f - >/dev/null || bad "could not create the binding-conditions objects"
reserved() { [ "$(kubectl get resourceclaim "$1" -o json | jq '[.status.reservedFor[]?] | length')" = 1 ]; }
declare -A bcnote=()
for s in $scheds; do
  if wait_for "$T" reserved "$s-bc" && [ "$(device_of "$s-bc")" = "$s-fab/fab-0" ]; then
    ok "$s-bc: claim allocated $s-fab/fab-0 and reserved in PreBind"
  else bad "$s-bc: claim on '$(device_of "$s-bc")', reservedFor $(kubectl get resourceclaim "$s-bc" -o json | jq -c '.status.reservedFor')"; fi
  bcnote[$s]=$(event_note BindingConditionsPending "$s-bc")
  [ -n "${bcnote[$s]}" ] && ok "$s-bc: BindingConditionsPending event: ${bcnote[$s]}" || bad "$s-bc: no BindingConditionsPending event"
  bcnote[$s]=${bcnote[$s]//$s-fab/S-fab}
done
same "the BindingConditionsPending note" "${bcnote[ks]:-}" "${bcnote[def]:-}"
sleep 2
for s in $scheds; do
  is_bound "$s-bc" && bad "$s-bc: bound before its device was attached" || ok "$s-bc: not bound while the device is not attached"
done
for s in $scheds; do
  kubectl patch resourceclaim "$s-bc" --subresource=status --type=merge -p "$(jq -n -c --arg n "$s-fab" \
    '{status: {devices: [{driver: "fab.e2e.example.com", pool: $n, device: "fab-0",
      conditions: [{type: "attached", status: "True", reason: "Attached", message: "attached by the test", lastTransitionTime: "2026-01-01T00:00:00Z"}]}]}}')" >/dev/null ||
    bad "$s-bc: could not write the device's condition"
done
t_att=$SECONDS
for s in $scheds; do
  if wait_for "$T" is_bound "$s-bc" && bound_to "$s-bc" "$s-fab"; then
    ok "$s-bc: bound to $s-fab by $(sched_of $s) once attached ($((SECONDS - t_att)) s; the wait polls every 5 s)"
  else bad "$s-bc: not bound after its device was attached: node '$(node_of "$s-bc")', condition '$(pod_cond "$s-bc")'"; fi
done

# ---- 7. an extended resource backed by DRA --------------------------------------------------------
# A DeviceClass maps ext.e2e.example.com/gpu (DRAExtendedResource, GA in v1.37); the pod asks for
# one in its limits and names no claim; no node has it in allocatable. The scheduler creates the
# claim in PreBind (generateName <pod>-extended-resources-, annotated, owned by the pod),
# allocates and reserves the node's device, names it in the pod's
# status.extendedResourceClaimStatus and binds the pod there.
kubectl create -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: ext-e2e}
spec:
  extendedResourceName: ext.e2e.example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "ext.e2e.example.com"'}
YAML
for s in $scheds; do
  mk_node "$s-ext" 4 32Gi 110 "owner=$s-ext"
  slice "$s-ext-slice" "$s-ext" ext.e2e.example.com "$s-ext" "ext-0 ext-1"
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $s-er, namespace: default, labels: {app: dra}}
spec:
  schedulerName: $(sched_of $s)
  nodeSelector: {owner: $s-ext}
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {limits: {ext.e2e.example.com/gpu: "1"}}
YAML
done | kubectl create -f - >/dev/null || bad "could not create the extended-resource objects"
# er_view POD S: the pod's extendedResourceClaimStatus and its claim, names made comparable
er_view() {
  local claim; claim=$(kubectl get pod "$1" -o json | jq -r '.status.extendedResourceClaimStatus.resourceClaimName // empty')
  [ -n "$claim" ] || { echo "no extendedResourceClaimStatus"; return; }
  { kubectl get pod "$1" -o json | jq -c --arg p "$2-" '.status.extendedResourceClaimStatus
      | .resourceClaimName |= (sub("^" + $p; "S-") | sub("-[a-z0-9]{5}$"; "-XXXXX"))'
    kubectl get resourceclaim "$claim" -o json | jq -S -c --arg p "$2-" '
      def unp: if type == "string" and startswith($p) then "S-" + ltrimstr($p) else . end;
      {generateName: (.metadata.generateName | unp), annotations: .metadata.annotations,
       owner: [.metadata.ownerReferences[]? | {kind, name: (.name | unp), controller}],
       finalizers: .metadata.finalizers, requests: .spec.devices.requests,
       results: [.status.allocation.devices.results[]? | .pool |= unp],
       reservedFor: [.status.reservedFor[]? | .name | unp]}'; } | tr '\n' ' '
}
declare -A er=()
for s in $scheds; do
  if wait_for "$T" is_bound "$s-er" && bound_to "$s-er" "$s-ext"; then
    ok "$s-er: bound to $s-ext by $(sched_of $s), its extended resource allocated through DRA"
  else bad "$s-er: node '$(node_of "$s-er")', condition '$(pod_cond "$s-er")'"; fi
  er[$s]=$(er_view "$s-er" "$s")
  grep -q '"resource.kubernetes.io/extended-resource-claim":"true"' <<<"${er[$s]}" &&
    grep -q '"pool":"S-ext"' <<<"${er[$s]}" && grep -q '"reservedFor":\["S-er"\]' <<<"${er[$s]}" &&
    ok "$s-er: the claim it made: annotated, owned by the pod, allocated on $s-ext, reserved for the pod" ||
    bad "$s-er: ${er[$s]}"
done
same "the extended-resource claim and the pod's extendedResourceClaimStatus" "${er[ks]:-}" "${er[def]:-}"

note "scenarios took $((SECONDS - t_begin)) s"
ks_stop main
[ "$KS_RC" = 0 ] && ok "kubesched exited 0 on SIGTERM" || bad "kubesched exit status $KS_RC"
ks_no_errors main
exit 0
