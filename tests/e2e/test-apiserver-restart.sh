#!/usr/bin/env bash
# Live mode survives its API server going away, and a watch that expired (410 Gone), against a
# real etcd + kube-apiserver (no kube-scheduler: kubesched is the only scheduler here).
#   0. Pagination: 520 pods are already bound to a tainted node "bulk" (pods capacity 522) when
#      kubesched starts, more than one page (500) of the informer's list: its cache must hold
#      all of them, so exactly 2 more pods fit on "bulk" and a third does not.
#   1. Restart: kube-apiserver gets SIGTERM while kubesched runs (with pods created just before,
#      so some may be mid-binding); kubesched stays up, /healthz stays ok, it logs which request
#      failed and why, with a backoff that doubles (not a flood); the API server starts again
#      with the same flags (DIR/start-apiserver), pods created right after are scheduled, and
#      every kubesched pod is bound exactly once (at most one Scheduled event, no conflicts).
#   2. 410 Gone: a second kube-apiserver on the same etcd takes the changes while the first is
#      down (a bound pod and a pending pod deleted, new pods created, a node deleted and
#      re-created under its name with more CPU), then etcd is compacted past everything
#      kubesched saw, and the first API server starts again: kubesched's watches get 410 Gone,
#      it relists and reconciles. Checked through the cache: a pod that fits only if the deleted
#      pod's CPU was freed (and nothing counted twice) is scheduled, a pod that would fit only if
#      the cache had lost pods is not, and a pod that fits only on the re-created node is
#      scheduled there.
# Usage: tests/e2e/test-apiserver-restart.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
e2e_begin
T=$E2E_TIMEOUT

api_pid() { cat "$E2E_DIR/pids/kube-apiserver"; }
# stop_apiserver: SIGTERM to the first kube-apiserver, then SIGKILL once it has had 10 s, and
# wait until it is gone. kube-apiserver v1.37 stops listening at once but, with watch clients
# connected (kubesched's or kube-scheduler's alike), takes about 60 s more to exit; the outage
# the clients see starts at the SIGTERM either way.
stop_apiserver() {
  local pid; pid=$(api_pid)
  kill -TERM "$pid"
  wait_for 10 bash -c "! kill -0 $pid 2>/dev/null" && return 0
  kill -KILL "$pid" 2>/dev/null
  wait_for 30 bash -c "! kill -0 $pid 2>/dev/null" || bad "kube-apiserver (pid $pid) still there 30 s after SIGKILL"
}
start_apiserver() { "$E2E_DIR/start-apiserver" "$@" 2>&1 | tail -n 3; }
healthz() { curl -sk --max-time 5 "https://127.0.0.1:${KS_PORT[main]}/healthz"; }
all_bound() { local p; for p in "$@"; do [ -n "$(node_of "$p")" ] || return 1; done; }
# pod_yaml NAME CPU [nodeSelector-zone] [toleration]: a kubesched Pod.
pod_yaml() {
  local sel="" tol=""
  [ -n "${3:-}" ] && sel="  nodeSelector: {zone: \"$3\"}"
  [ -n "${4:-}" ] && tol="  tolerations: [{key: bulk, operator: Exists, effect: NoSchedule}]"
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {e2e: restart}}
spec:
  schedulerName: kubesched
$sel
$tol
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: "$2", memory: 10Mi}}
YAML
}
node_yaml() { # NAME CPU ZONE [PODS] [taint]
  local taint=""
  [ -n "${5:-}" ] && taint="spec: {taints: [{key: bulk, value: \"1\", effect: NoSchedule}]}"
  cat <<YAML
---
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {kubernetes.io/hostname: $1, zone: "$3"}}
$taint
status:
  capacity: {cpu: "$2", memory: 64Gi, pods: "${4:-110}"}
  allocatable: {cpu: "$2", memory: 64Gi, pods: "${4:-110}"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "no kubelet: a plain object"}
YAML
}
# scheduled_events NAME: how many Scheduled events name the pod.
scheduled_events() {
  jq --arg n "$1" '[.items[] | select(.reason=="Scheduled" and .regarding.name==$n)] | length' "$E2E_DIR/events.json"
}
# exactly_once NAME...: each pod is bound, and has at most one Scheduled event (a binding whose
# event was lost while the API server was down has none; two would mean two bindings).
exactly_once() {
  kubectl get events.v1.events.k8s.io -n default -o json >"$E2E_DIR/events.json"
  local p n bad_=0 none=()
  for p in "$@"; do
    n=$(scheduled_events "$p")
    if [ -z "$(node_of "$p")" ] || [ "$n" -gt 1 ]; then bad_=1; echo "#      $p: node '$(node_of "$p")', $n Scheduled events"; fi
    [ "$n" = 0 ] && none+=("$p")
  done
  [ ${#none[@]} -eq 0 ] || note "no Scheduled event (bound while the API server went away?): ${none[*]}"
  return $bad_
}

# ---- 0. pagination: 520 pods bound to "bulk" before kubesched starts --------------------------
node_yaml bulk 1000 bulk 522 taint | kubectl create -f - >/dev/null
{ node_yaml n1 4 main; node_yaml n2 4 main; } | kubectl create -f - >/dev/null
t0=$SECONDS
# One keep-alive connection, one POST per pod (kubectl takes over a minute for these on a
# loaded machine).
python3 - "$KUBESCHED_E2E_APISERVER" "$E2E_DIR/pki" <<'PY' || bad "creating the bulk pods failed"
import http.client, json, ssl, sys, urllib.parse
url, pki = urllib.parse.urlparse(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=pki + "/ca.crt")
ctx.load_cert_chain(pki + "/admin.crt", pki + "/admin.key")
c = http.client.HTTPSConnection(url.hostname, url.port, context=ctx)
for i in range(1, 521):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "bulk-%d" % i, "namespace": "default", "labels": {"e2e": "bulk"}},
           "spec": {"nodeName": "bulk", "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "1m"}}}]}}
    c.request("POST", "/api/v1/namespaces/default/pods", json.dumps(pod), {"Content-Type": "application/json"})
    r = c.getresponse(); body = r.read()
    if r.status != 201:
        sys.exit("POST bulk-%d: %d %s" % (i, r.status, body[:200]))
PY
nbulk=$(kubectl get pods -l e2e=bulk -o name | wc -l)
note "520 bulk pods created in $((SECONDS - t0)) s ($nbulk exist)"

ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1
log=$(ks_log main)
listed=$(sed -n 's/.*Pod informer synced (\([0-9]*\) objects.*/\1/p' "$log" | head -1)
if [ "${listed:-0}" -ge 520 ]; then ok "the Pod informer's first list went past one page (500): $listed pods"
else bad "the Pod informer listed ${listed:-?} pods, want >= 520"; fi
kubectl create -f - >/dev/null < <(for i in 1 2 3; do pod_yaml "page-$i" 1m bulk tol; done)
if wait_for "$T" all_bound page-1 page-2; then ok "2 more pods fit on bulk (522 pods capacity, 520 in the cache)"
else bad "page-1/page-2 not bound: $(node_of page-1)/$(node_of page-2)"; fi
sleep 3
if [ -z "$(node_of page-3)" ] && wait_for "$T" bash -c "kubectl get pod page-3 -o json | jq -e '.status.conditions[]? | select(.type==\"PodScheduled\" and .reason==\"Unschedulable\")' >/dev/null"; then
  ok "page-3 is unschedulable: the cache counts all 522 pods on bulk ($(pod_cond page-3 | cut -d'|' -f3 | cut -c1-80))"
else bad "page-3: node '$(node_of page-3)', condition '$(pod_cond page-3)' (the cache lost pods of the second page?)"; fi

# ---- 1. restart -----------------------------------------------------------------------------
kubectl create -f - >/dev/null < <(for i in 1 2 3 4 5 6; do pod_yaml "a-$i" 500m main; done)
if wait_for "$T" all_bound a-1 a-2 a-3 a-4 a-5 a-6; then ok "a-1..a-6 bound before the restart"; else bad "a-* not bound"; fi

# Pods created just before the stop: some may be bound, some mid-binding, some not yet seen.
kubectl create -f - >/dev/null < <(for i in 1 2 3 4; do pod_yaml "c-$i" 100m main; done)
down_line=$(wc -l <"$log")
stop_apiserver
t_down=$SECONDS
note "kube-apiserver stopped"
sleep 12
if ks_running main; then ok "kubesched still running 12 s after the API server went away"; else bad "kubesched exited while the API server was down"; fi
if [ "$(healthz)" = ok ]; then ok "/healthz is ok while the API server is down"; else bad "/healthz: '$(healthz)'"; fi
tail -n +"$down_line" "$log" >"$E2E_DIR/down.log"
nwarn=$(grep -c "informer: .* failed (attempt" "$E2E_DIR/down.log")
pod_delays=$(grep -o "Pod informer: [a-z]* /api/v1/pods failed (attempt [0-9]*, [a-z]* in [0-9]* ms)" "$E2E_DIR/down.log" | sed 's/.* in \([0-9]*\) ms)/\1/' | tr '\n' ' ')
ninf=$(grep -o "[A-Za-z]* informer: .* failed (attempt" "$E2E_DIR/down.log" | awk '{print $1}' | sort -u | wc -l)
note "$nwarn reconnect warnings in 12 s ($ninf informers); Pod informer delays: $pod_delays"
if grep -q "cannot connect to $KUBESCHED_E2E_APISERVER (server of kubeconfig $KUBESCHED_E2E_SCHEDULER_KUBECONFIG)" "$E2E_DIR/down.log"; then
  ok "the reconnect message names the server and the kubeconfig: $(grep -m1 -o "[A-Za-z]* informer: .*cannot connect to $KUBESCHED_E2E_APISERVER.*" "$E2E_DIR/down.log" | cut -c1-330)"
else bad "no 'cannot connect to $KUBESCHED_E2E_APISERVER' message"; head -5 "$E2E_DIR/down.log"; fi
case "$pod_delays" in
  "1000 2000 4000"*) ok "backoff doubles from 1 s: $pod_delays" ;;
  *) bad "Pod informer reconnect delays '$pod_delays', want 1000 2000 4000 ..." ;;
esac
# Backoff 1, 2, 4, 8 s: at most some 4-5 warnings per informer in 12 s (6 allowed), and at least one.
if [ "$ninf" -ge 8 ] && [ "$nwarn" -ge "$ninf" ] && [ "$nwarn" -le $((6 * ninf)) ]; then
  ok "no flood: $nwarn warnings in 12 s for $ninf informers"
else bad "$nwarn reconnect warnings in 12 s for $ninf informers (want at least 8 informers, $ninf..$((6 * ninf)) warnings)"; fi

start_apiserver
note "kube-apiserver back after $((SECONDS - t_down)) s"
kubectl create -f - >/dev/null < <(for i in 1 2 3 4 5 6; do pod_yaml "b-$i" 100m main; done)
if wait_for "$T" all_bound c-1 c-2 c-3 c-4 b-1 b-2 b-3 b-4 b-5 b-6; then ok "c-* (created before the stop) and b-* (after the restart) all bound"
else bad "not all of c-*, b-* bound"; kubectl get pods -l e2e=restart -o wide | head -20; fi
if grep -q "Pod informer: listed /api/v1/pods after [0-9]* failed attempt(s)\|Pod informer: watching /api/v1/pods again after\|Pod informer: resourceVersion .* (410 Gone): relisting" "$log"; then
  ok "kubesched says it reconnected: $(grep -o 'Pod informer: \(listed /api/v1/pods after\|watching\|resourceVersion\).*' "$log" | tail -1 | cut -c1-150)"
else bad "no reconnect message for the Pod informer"; fi
sleep 2
if exactly_once a-1 a-2 a-3 a-4 a-5 a-6 c-1 c-2 c-3 c-4 b-1 b-2 b-3 b-4 b-5 b-6; then ok "every pod bound once, at most one Scheduled event each"
else bad "a pod was not bound or has several Scheduled events"; fi
if grep -qE ": 409 Conflict|already assigned|is already" "$log"; then bad "bind conflicts in the log: $(grep -E ': 409 Conflict|already assigned|is already' "$log" | head -3)"
else ok "no bind conflict in kubesched's log"; fi
used_main=$(kubectl get pods -l e2e=restart -o json | jq '[.items[] | select(.spec.nodeName=="n1" or .spec.nodeName=="n2")] | length')
note "$used_main pods on n1/n2"

# ---- 2. 410 Gone: changes through a second API server, etcd compaction ----------------------
pb=$(free_port)
start_apiserver --name kube-apiserver-2 --port "$pb"
kb="$E2E_DIR/admin-2.kubeconfig"
sed "s#$KUBESCHED_E2E_APISERVER#https://127.0.0.1:$pb#" "$KUBECONFIG" >"$kb"
KB() { kubectl --kubeconfig "$kb" "$@"; }
if KB get ns default >/dev/null 2>&1; then ok "a second kube-apiserver on the same etcd (port $pb)"; else bad "second kube-apiserver not answering"; fi

{ node_yaml m1 4 m; node_yaml m2 2 m2; } | kubectl create -f - >/dev/null
kubectl create -f - >/dev/null < <(for i in a b c; do pod_yaml "m-$i" 1 m; done; pod_yaml u-1 100 main)
if wait_for "$T" all_bound m-a m-b m-c; then ok "m-a, m-b, m-c bound to m1 (3 of its 4 CPUs)"; else bad "m-* not bound"; fi
wait_for "$T" bash -c "kubectl get pod u-1 -o json | jq -e '.status.conditions[]? | select(.type==\"PodScheduled\" and .reason==\"Unschedulable\")' >/dev/null" || true

gone_line=$(wc -l <"$log")
stop_apiserver
note "kube-apiserver stopped again; changing the cluster through the second one"
if grep -q "Pod informer: [a-z]* /api/v1/pods failed (attempt 1, [a-z]* in 1000 ms)" <(tail -n +"$gone_line" "$log"); then
  ok "after a success the backoff starts at 1 s again"
else bad "the second outage's first Pod informer retry: $(tail -n +"$gone_line" "$log" | grep -m1 'Pod informer: .*failed' | cut -c1-200)"; fi
KB delete pod m-a u-1 --grace-period=0 --force >/dev/null 2>&1 # no kubelet: a bound pod would stay Terminating
KB create -f - >/dev/null < <(for i in 1 2 3; do pod_yaml "d-$i" 100m main; done)
old_m2=$(KB get node m2 -o jsonpath='{.metadata.uid}')
KB delete node m2 >/dev/null
node_yaml m2 3 m2 | KB create -f - >/dev/null
new_m2=$(KB get node m2 -o jsonpath='{.metadata.uid}')
note "node m2 re-created: uid $old_m2 -> $new_m2"
# Compact etcd at its current revision: kubesched's resourceVersions are all older now.
rev=$(curl -s -X POST "$KUBESCHED_E2E_ETCD/v3/kv/range" -d '{"key":"AA=="}' | jq -r '.header.revision')
comp=$(curl -s -X POST "$KUBESCHED_E2E_ETCD/v3/kv/compaction" -d "{\"revision\": \"$rev\", \"physical\": true}")
if [ -n "$rev" ] && [ "$rev" != null ] && ! grep -q error <<<"$comp"; then ok "etcd compacted at revision $rev"
else bad "etcd compaction at '$rev': $comp"; fi
start_apiserver
# log_since LINE PATTERN: the log from LINE on has PATTERN (a basic regex).
log_since() { tail -n +"$1" "$log" | grep -q -- "$2"; }
if wait_for "$T" log_since "$gone_line" "Pod informer: resourceVersion .* is too old (410 Gone): relisting"; then
  ok "kubesched got 410 Gone and relisted: $(tail -n +"$gone_line" "$log" | grep -o 'Pod informer: resourceVersion .*relisting' | head -1)"
else bad "no 410 Gone relist in kubesched's log"; tail -n +"$gone_line" "$log" | grep -i "informer" | tail -5; fi
if wait_for "$T" log_since "$gone_line" "Pod informer: 2 object(s) deleted while not watching"; then
  ok "the relist removed the 2 pods deleted meanwhile (m-a bound, u-1 pending)"
else bad "the relist did not report 2 deleted pods: $(tail -n +"$gone_line" "$log" | grep 'deleted while not watching')"; fi
if log_since "$gone_line" "Node m2 (uid $old_m2) was deleted and re-created under the same name"; then
  ok "the relist saw node m2 re-created under its name"
else bad "no message about node m2 being re-created"; fi

if wait_for "$T" all_bound d-1 d-2 d-3; then ok "d-1..d-3 (created while kubesched was not watching) bound"; else bad "d-* not bound"; fi
kubectl create -f - >/dev/null < <(pod_yaml m-exact 2 m; pod_yaml m2-fit 3 m2)
if wait_for "$T" all_bound m-exact; then ok "m-exact (2 CPUs) bound to $(node_of m-exact): m-a's CPU was freed and m-b, m-c counted once"
else bad "m-exact (2 CPUs) not bound: the cache still counts m-a or counts a pod twice ($(pod_cond m-exact))"; fi
if wait_for "$T" all_bound m2-fit; then ok "m2-fit (3 CPUs) bound to $(node_of m2-fit): the re-created m2 is in the cache with 3 CPUs"
else bad "m2-fit not bound ($(pod_cond m2-fit)): the cache lost node m2 or kept the old one"; fi
pod_yaml m-over 100m m | kubectl create -f - >/dev/null
if wait_for "$T" bash -c "kubectl get pod m-over -o json | jq -e '.status.conditions[]? | select(.type==\"PodScheduled\" and .reason==\"Unschedulable\")' >/dev/null" && [ -z "$(node_of m-over)" ]; then
  ok "m-over (100m) is unschedulable: m1 is full (4/4 CPUs), no pod lost by the cache"
else bad "m-over: node '$(node_of m-over)', condition '$(pod_cond m-over)'"; fi
sleep 2
if exactly_once m-b m-c d-1 d-2 d-3 m-exact m2-fit; then ok "each pod of phase 2 bound once, at most one Scheduled event"
else bad "a phase-2 pod was not bound or has several Scheduled events"; fi
if grep -qE ": 409 Conflict|already assigned|is already" "$log"; then bad "bind conflicts in the log: $(grep -E ': 409 Conflict|already assigned|is already' "$log" | head -3)"
else ok "no bind conflict in kubesched's log"; fi

ks_stop main TERM
if [ "$KS_RC" = 0 ]; then ok "kubesched exited 0 on SIGTERM"; else bad "kubesched exited $KS_RC on SIGTERM"; fi
exit 0
