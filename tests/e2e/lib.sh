# Shared by the live-mode end-to-end tests (tests/e2e/test-*.sh); source it, do not run it.
#
#   . "$(dirname "$0")/lib.sh"
#   e2e_begin --with-scheduler        # control plane up, env loaded, cleanup trap set
#   ks_start main "$(ks_config kubesched)"   # kubesched in the background, log in $E2E_DIR
#   ks_wait_synced main
#   mk_node n1 4 32Gi | kubectl create -f - ; mk_pod p1 kubesched 100m 500Mi | kubectl create -f -
#   wait_for 60 pods_bound default app=x 10 && ok "..." || bad "..."
#   exit 0                            # the trap stops everything and prints the tally
#
# Every test starts its own control plane (start-control-plane.sh, about 5 s) so tests do not
# depend on each other. Results are "ok   - ..." / "FAIL - ..." lines and a last line
# "N passed, M failed"; the exit status is 0 only without failures. On exit every kubesched this
# test started is stopped, the control plane too, and a leftover process is a failure.
#
# Env: KUBESCHED_BIN (default build/kubesched), LIVE_TIMEOUT (seconds per wait, default 60),
#      E2E_KEEP=1 keeps the control plane's temp dir (logs) after the test.

E2E_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_ROOT=$(cd "$E2E_HERE/../.." && pwd)
KS_BIN=${KUBESCHED_BIN:-$E2E_ROOT/build/kubesched}
case "$KS_BIN" in /*) ;; *) KS_BIN=$PWD/$KS_BIN ;; esac
E2E_TIMEOUT=${LIVE_TIMEOUT:-60}
E2E_DIR=
e2e_pass=0 e2e_fail=0 e2e_started=0
declare -A KS_PID=() KS_PORT=()

ok() { e2e_pass=$((e2e_pass + 1)); echo "ok   - $*"; }
bad() { e2e_fail=$((e2e_fail + 1)); echo "FAIL - $*"; }
note() { echo "#      $*"; }

# wait_for SECONDS CMD ARGS...: polls CMD every 0.3 s; 0 as soon as it succeeds.
wait_for() {
  local t=$1 t0=$SECONDS; shift
  while [ $((SECONDS - t0)) -lt "$t" ]; do "$@" && return 0; sleep 0.3; done
  return 1
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ks_config SCHEDULER_NAME [extra top-level YAML lines...]: a KubeSchedulerConfiguration file in
# $E2E_DIR for one profile, talking as system:kube-scheduler, leader election off, qps 5000.
# Prints the file's path. Extra lines are appended as they are (e.g. a leaderElection block).
ks_config() {
  local name=$1; shift
  local f="$E2E_DIR/ks-$name-$RANDOM.yaml"
  {
    echo "apiVersion: kubescheduler.config.k8s.io/v1"
    echo "kind: KubeSchedulerConfiguration"
    echo "clientConnection: {kubeconfig: $KUBESCHED_E2E_SCHEDULER_KUBECONFIG, qps: 5000, burst: 5000}"
    if ! printf '%s\n' "$@" | grep -q '^leaderElection:'; then echo "leaderElection: {leaderElect: false}"; fi
    if ! printf '%s\n' "$@" | grep -q '^profiles:'; then echo "profiles:"; echo "- schedulerName: $name"; fi
    printf '%s\n' "$@"
  } >"$f"
  echo "$f"
}

# ks_start ID CONFIG [ARGS...]: starts kubesched (log $E2E_DIR/ks-ID.log, port ${KS_PORT[ID]}),
# with delegated authentication and authorization through the scheduler's kubeconfig, as
# start-control-plane.sh starts kube-scheduler.
ks_start() {
  local id=$1 cfg=$2; shift 2
  local port; port=$(free_port)
  "$KS_BIN" --config "$cfg" --bind-address 127.0.0.1 --secure-port "$port" -v 2 \
    --authentication-kubeconfig "$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" \
    --authorization-kubeconfig "$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" "$@" \
    >"$E2E_DIR/ks-$id.log" 2>&1 &
  KS_PID[$id]=$! KS_PORT[$id]=$port
}
ks_log() { echo "$E2E_DIR/ks-$1.log"; }
ks_running() { [ -n "${KS_PID[$1]:-}" ] && kill -0 "${KS_PID[$1]}" 2>/dev/null; }
ks_wait_synced() {
  if wait_for "$E2E_TIMEOUT" grep -q "caches synced" "$(ks_log "$1")"; then ok "kubesched $1 synced its informers"
  else bad "kubesched $1 did not sync"; tail -n 20 "$(ks_log "$1")"; return 1; fi
}
# ks_get ID PATH [CURL-ARGS...]: GET https://127.0.0.1:PORT/PATH of that kubesched (self-signed:
# -k), e.g. ks_get main /statusz -H 'Accept: ...'. As the admin token (system:masters) except on
# the health paths, which are asked without credentials, as a kubelet probes them.
ks_get() {
  local id=$1 path=$2; shift 2
  case "$path" in /healthz*|/readyz*|/livez*) ;; *) set -- -H "Authorization: Bearer $KUBESCHED_E2E_TOKEN" "$@" ;; esac
  curl -sk "$@" "https://127.0.0.1:${KS_PORT[$id]}$path"
}
ks_metrics() { ks_get "$1" /metrics; }
# ks_stop ID [SIGNAL]: signals it (TERM by default), waits up to 20 s (then SIGKILL) and sets
# KS_RC to its exit status. Not in $(...): only this shell can wait for its child.
ks_stop() {
  local id=$1 sig=${2:-TERM} pid=${KS_PID[$1]:-}
  KS_RC=
  [ -n "$pid" ] || return 0
  kill -"$sig" "$pid" 2>/dev/null
  if ! wait_for 20 bash -c "! kill -0 $pid 2>/dev/null"; then kill -KILL "$pid" 2>/dev/null; fi
  wait "$pid" 2>/dev/null; KS_RC=$?
  KS_PID[$id]=
}
# ks_no_errors ID: no E/F lines in its log.
ks_no_errors() {
  if grep -qE "^[EF][0-9]" "$(ks_log "$1")"; then
    bad "kubesched $1 logged errors:"; grep -E "^[EF][0-9]" "$(ks_log "$1")" | head -5
  else ok "no errors in kubesched $1's log"; fi
}

# mk_node NAME CPU MEMORY [PODS] [LABEL=VALUE...]: a Ready Node object (no kubelet) as YAML.
mk_node() {
  local name=$1 cpu=$2 mem=$3 pods=${4:-110}; shift 4 2>/dev/null || shift $#
  local labels="kubernetes.io/hostname: $name"
  for l in "$@"; do labels+=", ${l%%=*}: \"${l#*=}\""; done
  cat <<YAML
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  labels: {$labels}
status:
  capacity: {cpu: "$cpu", memory: $mem, pods: "$pods"}
  allocatable: {cpu: "$cpu", memory: $mem, pods: "$pods"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "no kubelet: a plain object"}
YAML
}
# mk_pod NAME SCHEDULER CPU MEMORY [LABEL=VALUE...]: a Pod in namespace default as YAML.
mk_pod() {
  local name=$1 sched=$2 cpu=$3 mem=$4; shift 4
  local labels="e2e: \"1\""
  for l in "$@"; do labels+=", ${l%%=*}: \"${l#*=}\""; done
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: default, labels: {$labels}}
spec:
  schedulerName: $sched
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: "$cpu", memory: $mem}}
YAML
}
# grant_scheduler NAME RULE...: a ClusterRole NAME with these rules (each a flow mapping, e.g.
# "{apiGroups: [x.io], resources: [widgets], verbs: [get]}") bound to system:kube-scheduler, as
# which kubesched and kube-scheduler talk here: what a chart or bootstrap role would grant them.
grant_scheduler() {
  local name=$1 r; shift
  {
    printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: %s}\nrules:\n' "$name"
    for r in "$@"; do printf -- '- %s\n' "$r"; done
    printf -- '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: %s}\n' "$name"
    printf 'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %s}\n' "$name"
    printf 'subjects:\n- {apiGroup: rbac.authorization.k8s.io, kind: User, name: system:kube-scheduler}\n'
  } | kubectl apply -f - >/dev/null
}
# gang_begin: for the tests of upstream's gang scheduling (GenericWorkload): grants
# system:kube-scheduler what upstream's bootstrap role gives it when the API server has the gate
# (read PodGroups, patch their status), checks that the API server serves the PodGroups (started
# with GANG_APISERVER_FLAGS, which the test exports as KUBESCHED_E2E_APISERVER_FLAGS before
# e2e_begin), and starts kube-scheduler with the gate as start-control-plane.sh starts it (its pid
# file makes stop-control-plane.sh stop it). Sets up_port and k8s_version.
GANG_APISERVER_FLAGS="--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true"
gang_begin() {
  k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$E2E_HERE/kube/go.mod")
  local up_bin=${KUBESCHED_E2E_BIN_DIR:-${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/$k8s_version}/kube-scheduler
  grant_scheduler e2e-podgroups \
    "{apiGroups: [scheduling.k8s.io], resources: [podgroups, workloads], verbs: [get, list, watch]}" \
    "{apiGroups: [scheduling.k8s.io], resources: [podgroups/status], verbs: [patch, update]}" ||
    bad "could not grant system:kube-scheduler the PodGroups"
  # (discovery may lag the API server's start by a moment)
  if wait_for 30 bash -c "kubectl api-resources --api-group=scheduling.k8s.io 2>/dev/null | grep -q '^podgroups '"; then
    ok "the API server serves scheduling.k8s.io/v1beta1 podgroups"
  else bad "the API server does not serve podgroups (GenericWorkload, runtime-config)"; exit 1; fi
  up_port=$(free_port)
  "$up_bin" --kubeconfig="$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" \
    --authentication-kubeconfig="$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" \
    --authorization-kubeconfig="$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port="$up_port" \
    --cert-dir="$E2E_DIR/scheduler-certs" --feature-gates=GenericWorkload=true -v=2 \
    </dev/null >"$E2E_DIR/logs/kube-scheduler.log" 2>&1 &
  echo $! >"$E2E_DIR/pids/kube-scheduler"
  if wait_for "$E2E_TIMEOUT" bash -c "[ \"\$(curl -sk https://127.0.0.1:$up_port/healthz)\" = ok ]"; then
    ok "kube-scheduler $k8s_version runs with --feature-gates=GenericWorkload=true"
  else bad "kube-scheduler did not start"; tail -20 "$E2E_DIR/logs/kube-scheduler.log"; exit 1; fi
}
# pods_bound SELECTOR N: at least N pods matching the label selector have spec.nodeName.
pods_bound() {
  [ "$(kubectl get pods -A -l "$1" -o json | jq '[.items[] | select((.spec.nodeName // "") != "")] | length')" -ge "$2" ]
}
# node_of POD: its spec.nodeName (namespace default); bound_to POD NODE: it is bound there.
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
bound_to() { [ "$(node_of "$1")" = "$2" ]; }
# pod_cond NAME: "Status|Reason|Message" of its PodScheduled condition (namespace default).
pod_cond() { kubectl get pod "$1" -o json | jq -r '.status.conditions[]? | select(.type=="PodScheduled") | "\(.status)|\(.reason)|\(.message)"'; }

e2e_finish() {
  local rc=$?
  for id in "${!KS_PID[@]}"; do
    if ks_running "$id"; then kill -TERM "${KS_PID[$id]}" 2>/dev/null; sleep 1; kill -KILL "${KS_PID[$id]}" 2>/dev/null; fi
  done
  if [ "$e2e_started" = 1 ]; then
    if [ "$e2e_fail" -gt 0 ]; then
      for f in "$E2E_DIR"/ks-*.log; do [ -f "$f" ] && { echo "--- tail of $f"; tail -n 30 "$f"; }; done
    fi
    local keep=(); [ "${E2E_KEEP:-0}" = 1 ] && keep=(--keep)
    if "$E2E_HERE/stop-control-plane.sh" "${keep[@]}" "$E2E_DIR" >/dev/null 2>&1; then ok "control plane stopped, nothing left"
    else bad "stop-control-plane.sh failed for $E2E_DIR"; fi
  fi
  if pgrep -f "$KS_BIN --config $E2E_DIR" >/dev/null 2>&1; then bad "a kubesched process is still running"; fi
  echo "$e2e_pass passed, $e2e_fail failed"
  [ "$e2e_fail" -eq 0 ] && [ "$rc" -eq 0 ] && exit 0
  exit 1
}

# e2e_begin [--with-scheduler]: starts the control plane, loads its env, sets the exit trap.
e2e_begin() {
  trap e2e_finish EXIT
  trap 'exit 130' INT TERM
  [ -x "$KS_BIN" ] || { bad "no kubesched binary at $KS_BIN (build it: cmake --build build)"; exit 1; }
  local out
  out=$("$E2E_HERE/start-control-plane.sh" "$@") || { echo "$out"; bad "control plane did not start"; exit 1; }
  E2E_DIR=$(printf '%s\n' "$out" | sed -n 's/^export KUBESCHED_E2E_DIR=//p' | tr -d "'\"" | head -1)
  [ -n "$E2E_DIR" ] || { echo "$out"; bad "start-control-plane.sh printed no KUBESCHED_E2E_DIR"; exit 1; }
  e2e_started=1
  # shellcheck disable=SC1091
  . "$E2E_DIR/env"
  echo "# control plane in $E2E_DIR"
}
