#!/usr/bin/env bash
# Bad input gives a clear error and never a crash, against a real etcd + kube-apiserver.
#   - An unreachable server (a kubeconfig naming a closed port): kubesched keeps retrying its
#     informers' lists with a backoff, as kube-scheduler does, logging the request, the server
#     URL, the kubeconfig and the cause; /readyz is not ready, /healthz is ok; SIGTERM exits 0.
#   - A bad kubeconfig (missing file, YAML syntax error, a context that does not exist, a missing
#     client certificate file): exit status 1 at once, the message names the file, the line or
#     field, and what to fix.
#   - A kubeconfig with another CA: the TLS verification failure names the server and the CA and
#     says to set certificate-authority; kubesched keeps retrying.
#   - An identity without RBAC rights (client certificate CN=nobody signed by the cluster CA):
#     the 403 names the request, the resource, the user and the permission.
#   - Pods the API server accepts with requests kubesched may not take (100Ei of memory, an
#     extended resource, an exponent quantity): no crash, and the other pods are scheduled.
# Every kubesched run must end by itself with the expected status or on SIGTERM with 0; a
# signal (a crash) or a timeout fails the check.
# Usage: tests/e2e/test-bad-input.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
e2e_begin
T=$E2E_TIMEOUT
pki="$E2E_DIR/pki"
work="$E2E_DIR/bad-input"
mkdir -p "$work"

# cfg_with KUBECONFIG: a KubeSchedulerConfiguration naming that kubeconfig.
cfg_with() {
  local f="$work/cfg-$RANDOM.yaml"
  printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: "%s"}\nleaderElection: {leaderElect: false}\nprofiles:\n- schedulerName: kubesched\n' "$1" >"$f"
  echo "$f"
}
# mk_kc FILE SERVER CA CERT KEY: a kubeconfig with embedded CA and client certificate.
mk_kc() {
  local f=$1
  KUBECONFIG="$f" kubectl config set-cluster e2e --server="$2" --certificate-authority="$3" --embed-certs=true >/dev/null
  KUBECONFIG="$f" kubectl config set-credentials u --client-certificate="$4" --client-key="$5" --embed-certs=true >/dev/null
  KUBECONFIG="$f" kubectl config set-context e2e --cluster=e2e --user=u >/dev/null
  KUBECONFIG="$f" kubectl config use-context e2e >/dev/null
}
readyz_code() { curl -sk -o /dev/null -w '%{http_code}' --max-time 5 "https://127.0.0.1:${KS_PORT[$1]}/readyz"; }
healthz() { curl -sk --max-time 5 "https://127.0.0.1:${KS_PORT[$1]}/healthz"; }
# still_retrying ID WHAT PATTERN: kubesched ID keeps running, logs PATTERN (a fixed string),
# is not ready, is healthy, and exits 0 on SIGTERM.
still_retrying() {
  local id=$1 what=$2 pat=$3 log; log=$(ks_log "$1")
  if wait_for "$T" grep -qF -- "$pat" "$log"; then ok "$what: the log says: $(grep -F -- "$pat" "$log" | head -1 | cut -c1-400)"
  else bad "$what: no '$pat' in the log"; tail -n 5 "$log"; fi
  if wait_for 20 grep -q "attempt 2, retrying in 2000 ms" "$log"; then ok "$what: retried after 1 s, then 2 s (backoff)"
  else bad "$what: no second attempt with a 2 s backoff"; fi
  if ks_running "$id"; then ok "$what: kubesched keeps running"; else bad "$what: kubesched exited"; fi
  local rc; rc=$(readyz_code "$id")
  if [ "$rc" != 200 ] && [ "$rc" != 000 ]; then ok "$what: /readyz is not ready ($rc)"; else bad "$what: /readyz answered $rc"; fi
  if [ "$(healthz "$id")" = ok ]; then ok "$what: /healthz is ok"; else bad "$what: /healthz '$(healthz "$id")'"; fi
  if grep -q "caches synced" "$log"; then bad "$what: kubesched says its caches synced"; fi
  local t0=$SECONDS
  ks_stop "$id" TERM
  if [ "$KS_RC" = 0 ] && [ $((SECONDS - t0)) -lt 10 ]; then ok "$what: SIGTERM exits 0 in $((SECONDS - t0)) s"
  else bad "$what: SIGTERM: exit status $KS_RC after $((SECONDS - t0)) s"; fi
}
# fails_at_once WHAT KUBECONFIG PATTERN...: kubesched exits 1 within 10 s and its stderr holds
# every fixed-string PATTERN.
fails_at_once() {
  local what=$1 kc=$2; shift 2
  local out="$work/out-$RANDOM.txt" rc t0=$SECONDS
  timeout 30 "$KS_BIN" --config "$(cfg_with "$kc")" --secure-port 0 >"$out" 2>&1
  rc=$?
  local msg; msg=$(grep -m1 '^kubesched: ' "$out")
  if [ "$rc" = 1 ] && [ $((SECONDS - t0)) -le 10 ]; then ok "$what: exit status 1 in $((SECONDS - t0)) s"
  else bad "$what: exit status $rc after $((SECONDS - t0)) s (want 1 at once; >128 is a signal, 124 a hang)"; fi
  local p missing=
  for p in "$@"; do grep -qF -- "$p" "$out" || missing+=" [$p]"; done
  if [ -z "$missing" ]; then ok "$what: $msg"; else bad "$what: the message lacks$missing: $(cat "$out")"; fi
}

# ---- an unreachable server ------------------------------------------------------------------
closed=$(free_port)
mk_kc "$work/closed.kubeconfig" "https://127.0.0.1:$closed" "$pki/ca.crt" "$pki/scheduler.crt" "$pki/scheduler.key"
ks_start closed "$(cfg_with "$work/closed.kubeconfig")"
still_retrying closed "unreachable server" \
  "Node informer: list /api/v1/nodes failed (attempt 1, retrying in 1000 ms): GET /api/v1/nodes: cannot connect to https://127.0.0.1:$closed (server of kubeconfig $work/closed.kubeconfig): "
if grep -q "Connection refused\|Could not connect\|Failed to connect" "$(ks_log closed)"; then ok "unreachable server: the cause (connection refused) is in the message"
else bad "unreachable server: no cause in '$(grep -m1 'cannot connect' "$(ks_log closed)")'"; fi

# ---- bad kubeconfigs ------------------------------------------------------------------------
fails_at_once "missing kubeconfig file" "$work/no-such.kubeconfig" \
  "kubeconfig $work/no-such.kubeconfig: No such file or directory" "clientConnection.kubeconfig"
printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster: {server: https://127.0.0.1:1\n  bad: [\n' >"$work/syntax.kubeconfig"
fails_at_once "YAML syntax error" "$work/syntax.kubeconfig" "kubeconfig $work/syntax.kubeconfig:" ":6:"
sed 's/^current-context: .*/current-context: nope/' "$KUBESCHED_E2E_SCHEDULER_KUBECONFIG" >"$work/context.kubeconfig"
fails_at_once "unknown context" "$work/context.kubeconfig" \
  "kubeconfig $work/context.kubeconfig: context \"nope\" not found (contexts: e2e)"
KUBECONFIG="$work/nocert.kubeconfig" kubectl config set-cluster e2e --server="$KUBESCHED_E2E_APISERVER" --certificate-authority="$pki/ca.crt" >/dev/null
KUBECONFIG="$work/nocert.kubeconfig" kubectl config set-credentials u --client-certificate="$work/gone.crt" --client-key="$work/gone.key" >/dev/null
KUBECONFIG="$work/nocert.kubeconfig" kubectl config set-context e2e --cluster=e2e --user=u >/dev/null
KUBECONFIG="$work/nocert.kubeconfig" kubectl config use-context e2e >/dev/null
fails_at_once "missing client certificate file" "$work/nocert.kubeconfig" \
  "kubeconfig $work/nocert.kubeconfig: user \"u\": client-certificate $work/gone.crt: No such file or directory"

# ---- a CA that did not sign the API server's certificate ------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=another-ca" -keyout "$work/other-ca.key" -out "$work/other-ca.crt" 2>/dev/null
mk_kc "$work/other-ca.kubeconfig" "$KUBESCHED_E2E_APISERVER" "$work/other-ca.crt" "$pki/scheduler.crt" "$pki/scheduler.key"
ks_start otherca "$(cfg_with "$work/other-ca.kubeconfig")"
still_retrying otherca "wrong CA" \
  "GET /api/v1/nodes: TLS: the server's certificate is not signed by the CA in certificate-authority-data of cluster \"e2e\" in kubeconfig $work/other-ca.kubeconfig (server $KUBESCHED_E2E_APISERVER)"
if grep -qF "set certificate-authority (or -data) of cluster \"e2e\" in kubeconfig $work/other-ca.kubeconfig to the CA that signed the API server's serving certificate" "$(ks_log otherca)"; then
  ok "wrong CA: the message says which setting to fix"
else bad "wrong CA: no hint to set certificate-authority"; fi

# ---- 403: an identity without RBAC rights ---------------------------------------------------
openssl req -newkey rsa:2048 -nodes -subj "/CN=nobody" -keyout "$work/nobody.key" -out "$work/nobody.csr" 2>/dev/null
printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n' >"$work/nobody.ext"
openssl x509 -req -in "$work/nobody.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 1 \
  -extfile "$work/nobody.ext" -out "$work/nobody.crt" 2>/dev/null
mk_kc "$work/nobody.kubeconfig" "$KUBESCHED_E2E_APISERVER" "$pki/ca.crt" "$work/nobody.crt" "$work/nobody.key"
ks_start nobody "$(cfg_with "$work/nobody.kubeconfig")"
still_retrying nobody "no RBAC rights" \
  "GET /api/v1/nodes: 403 Forbidden: nodes is forbidden: User \"nobody\" cannot list resource \"nodes\" in API group \"\" at the cluster scope; grant it with RBAC (ClusterRole system:kube-scheduler)"

# ---- pods with requests kubesched may not take ----------------------------------------------
ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1
mk_node n1 4 32Gi | kubectl create -f - >/dev/null
odd_pod() { # NAME RESOURCE VALUE
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, labels: {e2e: odd}}
spec:
  schedulerName: kubesched
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {requests: {$2: "$3"}, limits: {$2: "$3"}}
YAML
}
{
  odd_pod odd-huge memory 100Ei
  odd_pod odd-ext example.com/widget 1
  odd_pod odd-exp cpu 1e-1
  odd_pod odd-tiny memory 1n
} >"$work/odd.yaml"
if kubectl create -f "$work/odd.yaml" >"$work/odd.out" 2>&1; then ok "the API server took the odd pods: $(kubectl get pods -l e2e=odd -o json | jq -c '[.items[] | {(.metadata.name): .spec.containers[0].resources.requests}] | add')"
else note "the API server refused some odd pods: $(tr '\n' ' ' <"$work/odd.out")"; fi
{ for i in 1 2 3; do mk_pod "ok-$i" kubesched 100m 100Mi; done; } | kubectl create -f - >/dev/null
if wait_for "$T" pods_bound e2e=1 3; then ok "ok-1..ok-3 bound next to the odd pods"; else bad "ok-* not bound"; fi
sleep 3
if ks_running main; then ok "kubesched still running after the odd pods"; else bad "kubesched exited after the odd pods"; tail -n 20 "$(ks_log main)"; fi
for p in $(kubectl get pods -l e2e=odd -o jsonpath='{.items[*].metadata.name}'); do
  node=$(kubectl get pod "$p" -o jsonpath='{.spec.nodeName}')
  skipped=$(grep -F "Pod default/$p:" "$(ks_log main)" | head -1 | cut -c1-250)
  case "$p" in
    odd-huge|odd-ext)
      if [ -z "$node" ] && { [ -n "$skipped" ] || pod_cond "$p" | grep -q "^False|Unschedulable|"; }; then
        ok "$p is not bound: ${skipped:-$(pod_cond "$p" | cut -c1-150)}"
      else bad "$p: node '$node', condition '$(pod_cond "$p")', log '$skipped'"; fi ;;
    *)
      if [ -n "$node" ]; then ok "$p bound to $node"
      elif [ -n "$skipped" ]; then ok "$p skipped with a message: $skipped"
      else bad "$p: neither bound nor a message: '$(pod_cond "$p")'"; fi ;;
  esac
done
ks_stop main TERM
if [ "$KS_RC" = 0 ]; then ok "kubesched exited 0 on SIGTERM"; else bad "kubesched exited $KS_RC on SIGTERM"; fi
exit 0
