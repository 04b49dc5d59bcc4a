#!/usr/bin/env bash
# Smoke check of the harness: against the control plane in $KUBECONFIG (with kube-scheduler
# running), create a Node (4 CPU, 32Gi, 110 pods, Ready) and a Pod (100m, 500Mi; the
# scheduler_perf templates) with kubectl, and wait until the Pod is bound to the Node.
# Usage: tests/e2e/start-control-plane.sh --with-scheduler -- tests/e2e/smoke-bind.sh
# Env: SMOKE_SCHEDULER_NAME (pod spec.schedulerName, default default-scheduler),
#      SMOKE_TIMEOUT (seconds, default 30)
set -euo pipefail
: "${KUBECONFIG:?start-control-plane.sh sets KUBECONFIG}"
sched=${SMOKE_SCHEDULER_NAME:-default-scheduler}
timeout_s=${SMOKE_TIMEOUT:-30}

kubectl create -f - <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: smoke-node-1
  labels: {kubernetes.io/hostname: smoke-node-1}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "no kubelet: a plain object"}
EOF
kubectl create -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: smoke-pod-1, namespace: default}
spec:
  schedulerName: $sched
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: 100m, memory: 500Mi}}
EOF

t0=$(date +%s)
node=
while [ $(( $(date +%s) - t0 )) -lt "$timeout_s" ]; do
  node=$(kubectl get pod smoke-pod-1 -o jsonpath='{.spec.nodeName}')
  [ -z "$node" ] || break
  sleep 0.2
done
kubectl get nodes -o wide
kubectl get pod smoke-pod-1 -o wide
if [ "$node" = smoke-node-1 ]; then
  echo "smoke-bind: smoke-pod-1 bound to $node by $sched in $(( $(date +%s) - t0 )) s"
  echo "1 passed, 0 failed"
else
  echo "smoke-bind: smoke-pod-1 not bound after ${timeout_s}s (nodeName='$node')" >&2
  kubectl get events -A >&2 || true
  echo "0 passed, 1 failed"
  exit 1
fi
