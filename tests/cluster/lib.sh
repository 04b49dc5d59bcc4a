# Shared by the cluster tests (tests/cluster/test-*.sh); source it, do not run it. The tests run
# on the cluster tests/cluster/run.sh started (its env loaded: KUBECONFIG, KUBESCHED_CLUSTER_*),
# one after the other, each leaving the release as the next one expects (see run.sh).
# Results are "ok   - ..." / "FAIL - ..." lines and a last line "N passed, M failed"; the exit
# status is 0 only without failures. Figures go to $KUBESCHED_CLUSTER_DIR/figures as "name value".

CL_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CL_ROOT=$(cd "$CL_HERE/../.." && pwd)
CHART=$CL_ROOT/charts/kubesched
NS=kubesched-system
REL=kubesched
T=${KUBESCHED_CLUSTER_TIMEOUT:-120}
cl_pass=0 cl_fail=0
: "${KUBESCHED_CLUSTER_DIR:?run the cluster tests through tests/cluster/run.sh (or up.sh -- ...)}"
HELM=${HELM:-$("$CL_ROOT/tests/e2e/build-helm.sh" | tail -1)}
WORK=$KUBESCHED_CLUSTER_DIR/work
mkdir -p "$WORK"

ok() { cl_pass=$((cl_pass + 1)); echo "ok   - $*"; }
bad() { cl_fail=$((cl_fail + 1)); echo "FAIL - $*"; }
note() { echo "#      $*"; }
figure() { echo "$1 $2" >>"$KUBESCHED_CLUSTER_DIR/figures"; note "$1 = $2"; }
cl_finish() {
  local rc=$?
  if [ "$cl_fail" -gt 0 ]; then
    note "kubesched pods:"; kubectl get pods -n "$NS" -o wide 2>&1 | sed 's/^/#      /'
    for p in $(kubectl get pods -n "$NS" -o name 2>/dev/null); do
      note "--- tail of $p's log"; kubectl logs -n "$NS" -c kubesched "${p#pod/}" --tail=25 2>&1 | sed 's/^/#      /'
    done
  fi
  echo "$cl_pass passed, $cl_fail failed"
  [ "$cl_fail" -eq 0 ] && [ "$rc" -eq 0 ] && exit 0
  exit 1
}
trap cl_finish EXIT

# wait_for SECONDS CMD ARGS...: polls CMD every 0.3 s; 0 as soon as it succeeds.
wait_for() {
  local t=$1 t0=$SECONDS; shift
  while [ $((SECONDS - t0)) -lt "$t" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.3; done
  return 1
}

# The chart as the tests install it: the image built from the Dockerfile, already in containerd.
helm_args=(--set scheduler.image.pullPolicy=Never --set scheduler.verbosity=2)

# ks_pods: names of the release's running kubesched pods (not terminating).
ks_pods() {
  kubectl get pods -n "$NS" -l app.kubernetes.io/name=kubesched -o json \
    | jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name'
}
ks_ready_count() {
  kubectl get pods -n "$NS" -l app.kubernetes.io/name=kubesched -o json \
    | jq '[.items[] | select(.metadata.deletionTimestamp == null) | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length'
}
ready_ge() { [ "$(ks_ready_count)" -ge "$1" ]; }
lease_held() { [ -n "$(lease_holder)" ]; }
lease_holder() { kubectl get lease "$REL" -n "$NS" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

# workload NAME SCHEDULER [LABEL=VALUE...]: a Pod of the workload image in namespace default.
workload() {
  local name=$1 sched=$2; shift 2
  local labels="cluster-test: \"1\""
  for l in "$@"; do labels+=", ${l%%=*}: \"${l#*=}\""; done
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: default, labels: {$labels}}
spec:
  schedulerName: $sched
  terminationGracePeriodSeconds: 2
  containers:
  - name: w
    image: $KUBESCHED_CLUSTER_WORKLOAD_IMAGE
    imagePullPolicy: Never
    resources: {requests: {cpu: 10m, memory: 8Mi}, limits: {memory: 16Mi}}
    env:
    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    securityContext: {runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
YAML
}
pod_phase() { kubectl get pod "$1" -n "${2:-default}" -o jsonpath='{.status.phase}' 2>/dev/null; }
running() { [ "$(pod_phase "$@")" = Running ]; }
node_of() { kubectl get pod "$1" -n "${2:-default}" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
# pod_cond NAME: "Status|Reason|Message" of its PodScheduled condition (namespace default).
pod_cond() { kubectl get pod "$1" -o json 2>/dev/null | jq -r '.status.conditions[]? | select(.type=="PodScheduled") | "\(.status)|\(.reason)|\(.message)"'; }
# scheduled_by POD: the reportingController/source of its Scheduled event(s), one per line.
scheduled_by() {
  kubectl get events -n default --field-selector "involvedObject.name=$1,reason=Scheduled" -o json \
    | jq -r '.items[] | (.reportingComponent // "") + (if (.reportingComponent // "") == "" then .source.component else "" end)'
}
# logs_say POD TEXT: its container log has TEXT (so the kubelet ran it and its log is readable).
logs_say() { kubectl logs "$1" -n "${3:-default}" 2>/dev/null | grep -qF "$2"; }
cleanup_workloads() { kubectl delete pods -n default -l cluster-test=1 --grace-period=1 --wait=true --timeout=60s >/dev/null 2>&1; }

# pod_cgroup_mem POD NS: "usage max_usage" in bytes of the pod's memory cgroup (v1), read from
# /sys/fs/cgroup/memory/kubepods/<qos>/pod<uid>/.
pod_cgroup_mem() {
  local uid d
  uid=$(kubectl get pod "$1" -n "$2" -o jsonpath='{.metadata.uid}')
  d=$(find /sys/fs/cgroup/memory/kubepods -maxdepth 2 -type d -name "pod$uid" | head -1)
  [ -n "$d" ] || return 1
  echo "$(cat "$d/memory.usage_in_bytes") $(cat "$d/memory.max_usage_in_bytes")"
}
# kubepods_procs COMM: pids of the processes named COMM that run in the kubelet's pods (other
# kubesched processes on this machine, e.g. tests/e2e's, are not the cluster's).
kubepods_procs() {
  local p
  for p in $(find /sys/fs/cgroup/pids/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$1" ] && echo "$p"
  done
}
# ks_host_pid POD: the host pid of that pod's kubesched process (its container's cgroup).
ks_host_pid() {
  local uid d
  uid=$(kubectl get pod "$1" -n "$NS" -o jsonpath='{.metadata.uid}')
  for d in $(find /sys/fs/cgroup/pids/kubepods -maxdepth 3 -type d -path "*pod$uid/*"); do
    for p in $(cat "$d/cgroup.procs"); do
      [ "$(cat "/proc/$p/comm" 2>/dev/null)" = kubesched ] && { echo "$p"; return 0; }
    done
  done
  return 1
}
