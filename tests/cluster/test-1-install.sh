#!/usr/bin/env bash
# Cluster test 1: `helm install` of charts/kubesched with the image built from the repository's
# Dockerfile. kubesched runs as a pod -- checked on the running process itself, not only in the
# spec: a non-root uid, a read-only root mount, seccomp filter mode, no capabilities,
# no_new_privs -- becomes Ready, takes its Lease, and schedules pods that the kubelet then runs
# (Running, their logs readable, the Scheduled event from kubesched). Then the kubesched pod's
# memory (its cgroup's usage and peak) with 400 pods bound to 20 more Nodes.
# Leaves the release installed (1 replica, default values) for the next test.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

t0=$SECONDS
if out=$("$HELM" install "$REL" "$CHART" -n "$NS" --create-namespace "${helm_args[@]}" 2>&1); then
  ok "helm install $REL $CHART -n $NS (image $KUBESCHED_CLUSTER_IMAGE)"
else bad "helm install: $out"; exit 1; fi
if wait_for "$T" ready_ge 1; then
  ok "the kubesched pod is Ready"
  figure kubesched_ready_s $((SECONDS - t0))
else
  bad "the kubesched pod is not Ready after $T s"; kubectl describe pods -n "$NS" | tail -n 30; exit 1
fi
pod=$(ks_pods | head -1)
if wait_for 30 lease_held; then
  h=$(lease_holder)
  case "$h" in "$pod"*) ok "it holds Lease $NS/$REL ($h)" ;; *) bad "Lease holder $h is not $pod" ;; esac
else bad "no Lease $NS/$REL"; fi

# The process as the kubelet runs it.
if pid=$(ks_host_pid "$pod"); then
  st=/proc/$pid/status
  uid=$(awk '/^Uid:/ {print $3}' "$st") gid=$(awk '/^Gid:/ {print $3}' "$st")
  [ "$uid" = 65532 ] && [ "$gid" = 65532 ] && ok "kubesched runs as uid/gid 65532 (not root)" || bad "kubesched's effective uid/gid: $uid/$gid"
  [ "$(awk '/^Seccomp:/ {print $2}' "$st")" = 2 ] && ok "seccomp filter mode (RuntimeDefault)" || bad "Seccomp: $(grep Seccomp: "$st")"
  [ "$(awk '/^NoNewPrivs:/ {print $2}' "$st")" = 1 ] && ok "no_new_privs set" || bad "NoNewPrivs: $(grep NoNewPrivs: "$st")"
  [ "$(awk '/^CapEff:/ {print $2}' "$st")" = 0000000000000000 ] && ok "no effective capabilities" || bad "CapEff: $(grep CapEff: "$st")"
  rootopts=$(awk '$5 == "/" {print $6}' "/proc/$pid/mountinfo" | tail -1)
  case ",$rootopts," in *,ro,*) ok "its root filesystem is mounted read-only ($rootopts)" ;; *) bad "root mount options: $rootopts" ;; esac
else bad "no kubesched process found in the pod's cgroup"; fi

# Pods that kubesched schedules and the kubelet runs.
for i in 1 2 3; do workload "w$i" "$REL" app=w; done | kubectl create -f - >/dev/null
t1=$SECONDS
if wait_for "$T" bash -c 'for i in 1 2 3; do [ "$(kubectl get pod w$i -o jsonpath={.status.phase})" = Running ] || exit 1; done'; then
  ok "3 pods scheduled by kubesched are Running on $KUBESCHED_CLUSTER_NODE ($((SECONDS - t1)) s after create)"
else bad "pods not Running: $(kubectl get pods -l app=w -o wide --no-headers 2>&1 | tr '\n' ';')"; fi
for i in 1 2 3; do
  [ "$(node_of w$i)" = "$KUBESCHED_CLUSTER_NODE" ] || bad "w$i is on '$(node_of w$i)'"
done
if wait_for 20 logs_say w1 "workload: pod w1 running on node $KUBESCHED_CLUSTER_NODE"; then ok "w1's log is readable: $(kubectl logs w1 | head -1)"
else bad "w1's log: $(kubectl logs w1 2>&1 | head -3)"; fi
by=$(scheduled_by w2 | sort -u | tr '\n' ' ')
[ "$by" = "$REL " ] && ok "w2's Scheduled event comes from $REL" || bad "w2's Scheduled event from '$by'"
if kubectl logs -n "$NS" -c kubesched "$pod" | grep -q "bound default/w1 to $KUBESCHED_CLUSTER_NODE"; then ok "kubesched's log (kubectl logs) has the binding of w1"
else bad "kubesched's log has no binding of w1: $(kubectl logs -n "$NS" -c kubesched "$pod" | grep -m2 w1)"; fi
forb=$(kubectl logs -n "$NS" -c kubesched "$pod" | grep -ci forbidden)
[ "$forb" = 0 ] && ok "no request of kubesched was forbidden" || bad "$forb forbidden requests in kubesched's log: $(kubectl logs -n "$NS" -c kubesched "$pod" | grep -i -m3 forbidden)"
cleanup_workloads

# Memory under load: 20 more Nodes (objects only, no kubelet) and 400 pods that bind to them.
mem0=$(pod_cgroup_mem "$pod" "$NS") && figure kubesched_pod_memory_idle_bytes "${mem0% *}"
{
  for n in $(seq 1 20); do
    cat <<YAML
---
apiVersion: v1
kind: Node
metadata: {name: load-$n, labels: {kubernetes.io/hostname: load-$n, cluster-test-load: "1"}}
spec:
  taints: [{key: cluster-test/no-kubelet, effect: NoExecute}]
status:
  capacity: {cpu: "32", memory: 128Gi, pods: "110"}
  allocatable: {cpu: "32", memory: 128Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "no kubelet: a plain object"}
YAML
  done
} | kubectl create -f - >/dev/null
# A Node's status is the kubelet's: write it through the status subresource (create may drop it).
for n in $(seq 1 20); do
  kubectl patch node "load-$n" --subresource=status --type=merge -p '{"status":{"capacity":{"cpu":"32","memory":"128Gi","pods":"110"},"allocatable":{"cpu":"32","memory":"128Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"no kubelet: a plain object","lastHeartbeatTime":"'"$(date -u +%Y-%m-%dT%H:%M:%SZ)"'"}]}}' >/dev/null
done
python3 - "$REL" >"$WORK/load-pods.yaml" <<'PY'
import sys
sched = sys.argv[1]
for i in range(400):
    print(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: load-{i}, namespace: default, labels: {{cluster-test-load: "1", app: load-{i % 10}}}}}
spec:
  schedulerName: {sched}
  nodeSelector: {{cluster-test-load: "1"}}
  tolerations: [{{operator: Exists}}]
  containers:
  - {{name: c, image: none.invalid/none, resources: {{requests: {{cpu: 100m, memory: 100Mi}}}}}}
""")
PY
t2=$SECONDS
kubectl create -f "$WORK/load-pods.yaml" >/dev/null
bound() { [ "$(kubectl get pods -n default -l cluster-test-load=1 -o json | jq '[.items[] | select(.spec.nodeName != null)] | length')" -ge 400 ]; }
if wait_for "$T" bound; then ok "400 pods bound to 20 Nodes by the kubesched pod in $((SECONDS - t2)) s"
else
  bad "not all 400 load pods bound: $(kubectl get pods -l cluster-test-load=1 -o json | jq '[.items[] | select(.spec.nodeName != null)] | length') bound"
  kubectl get pods -l cluster-test-load=1 -o json | jq -r '[.items[] | select(.spec.nodeName == null)][0] | .metadata.name + ": " + ([.status.conditions[]? | .message] | join("; "))'
  kubectl get nodes -o wide | head -5
fi
if mem=$(pod_cgroup_mem "$pod" "$NS"); then
  figure kubesched_pod_memory_bytes_400pods_21nodes "${mem% *}"
  figure kubesched_pod_memory_peak_bytes "${mem#* }"
  ok "kubesched pod memory (cgroup): usage $(( ${mem% *} / 1048576 )) MiB, peak $(( ${mem#* } / 1048576 )) MiB"
else bad "no memory cgroup for $pod"; fi
kubectl delete pods -n default -l cluster-test-load=1 --grace-period=0 --force --wait=false >/dev/null 2>&1
kubectl delete nodes -l cluster-test-load=1 --wait=false >/dev/null 2>&1
wait_for 60 bash -c '[ -z "$(kubectl get pods -n default -l cluster-test-load=1 -o name)" ]' || bad "load pods not gone"
exit 0
