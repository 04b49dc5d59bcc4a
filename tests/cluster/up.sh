#!/usr/bin/env bash
# Starts a real one-node Kubernetes cluster on this machine, where pods actually run:
#
#   containerd (Debian's 1.6, runc, its own root/state/socket in DIR) + a CNI bridge (cni0,
#   10.244.0.0/24, Debian's containernetworking-plugins), the images of build-images.sh imported
#   into its k8s.io namespace (nothing is pulled: there is no registry);
#   etcd + kube-apiserver + kube-scheduler from tests/e2e/start-control-plane.sh, the API server
#   bound to 0.0.0.0 and advertising the node's address (pods reach it through the `kubernetes`
#   Service), ServiceAccount admission on;
#   kube-controller-manager (every default controller: Deployments, ServiceAccounts and their
#   tokens, kube-root-ca.crt, namespaces, garbage collection, node lifecycle);
#   kubelet (cgroupfs, cgroup v1 allowed) and kube-proxy (iptables), built by
#   tests/e2e/build-control-plane.sh kubelet kube-proxy from the same k8s.io/kubernetes module.
#
# Before touching anything it saves the machine's state (host-state.sh: sysctls, netfilter,
# mounts, cgroups, links, a few paths); down.sh DIR stops everything and puts the machine back,
# and fails if anything differs. A failure here tears down what was started and says which step
# failed with the tail of that component's log.
#
# Usage: tests/cluster/up.sh [--keep] [--dir DIR] [-- CMD ARGS...]
#   without CMD: starts, prints `export ...` lines, leaves the cluster running:
#                  eval "$(tests/cluster/up.sh | grep ^export)"    (or: . DIR/env)
#                  kubectl get nodes
#                  tests/cluster/down.sh "$KUBESCHED_CLUSTER_DIR"
#   with CMD:    starts, runs CMD with the env exported, then tears down (a trap, also on
#                failure or ^C) and exits with CMD's status (or 1 if the teardown failed).
#   --keep       keep DIR (logs) after the teardown
#   --dir DIR    use DIR (must not exist; keep the path short: containerd's sockets live there)
# Env: KUBESCHED_E2E_CACHE (binaries and images), KUBESCHED_CLUSTER_TIMEOUT (seconds per wait,
#      default 120).
# The env file DIR/env exports start-control-plane.sh's variables (KUBECONFIG, admin) and
# KUBESCHED_CLUSTER_DIR, KUBESCHED_CLUSTER_NODE (the Node's name), KUBESCHED_CLUSTER_CTR (a ctr
# command line for this containerd), KUBESCHED_CLUSTER_IMAGE (the kubesched image the chart
# uses), KUBESCHED_CLUSTER_PLUGIN_IMAGE, KUBESCHED_CLUSTER_WORKLOAD_IMAGE.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
e2e=$(cd "$here/../e2e" && pwd)
keep=0 dir= cmd=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --dir) dir=$2; shift ;;
    --) shift; cmd=("$@"); break ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "cluster/up: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "cluster/up: run as root (containerd, kubelet, netfilter, cgroups)" >&2; exit 1; }
cache=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$e2e/kube/go.mod")
bin=$cache/$k8s_version
images=$cache/cluster/images
for b in etcd kube-apiserver kube-scheduler kube-controller-manager kubelet kube-proxy; do
  [ -x "$bin/$b" ] || { echo "cluster/up: $bin/$b missing: run tests/e2e/build-control-plane.sh $b" >&2; exit 1; }
done
for i in pause workload kubesched one-pod-per-node; do
  [ -s "$images/$i.tar" ] || { echo "cluster/up: image $images/$i.tar missing: run tests/cluster/build-images.sh" >&2; exit 1; }
done
for t in containerd containerd-shim-runc-v2 runc ctr nft ip sysctl kubectl curl jq openssl; do
  command -v "$t" >/dev/null || { echo "cluster/up: $t is not installed (tests/install-deps.sh --cluster)" >&2; exit 1; }
done
[ -x /usr/lib/cni/bridge ] || { echo "cluster/up: /usr/lib/cni/bridge missing (containernetworking-plugins)" >&2; exit 1; }
if pgrep -x kubelet >/dev/null || pgrep -x containerd >/dev/null; then
  echo "cluster/up: a kubelet or containerd already runs here (pids $(pgrep -x kubelet) $(pgrep -x containerd)): one cluster at a time" >&2
  exit 1
fi
timeout_s=${KUBESCHED_CLUSTER_TIMEOUT:-120}

node_ip=$(ip -4 -o route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
[ -n "$node_ip" ] || node_ip=$(ip -4 -o addr show scope global | awk '{sub("/.*", "", $4); print $4; exit}')
[ -n "$node_ip" ] || { echo "cluster/up: no global IPv4 address to advertise" >&2; exit 1; }
node=$(hostname | tr '[:upper:]' '[:lower:]')

if [ -z "$dir" ]; then dir=$(mktemp -d /tmp/ksc.XXXXXX)
else [ ! -e "$dir" ] || { echo "cluster/up: $dir exists" >&2; exit 1; }; mkdir -p "$dir"; dir=$(cd "$dir" && pwd); fi
chmod 700 "$dir"
mkdir -p "$dir/host-before" "$dir/logs" "$dir/pids" "$dir/cni/net.d" "$dir/kubelet" "$dir/pod-logs"
"$here/host-state.sh" save "$dir/host-before"
echo "$node_ip" >"$dir/node-ip"

t_start=$SECONDS
up_ok=0
on_exit() {
  local rc=$?
  if [ "$up_ok" = 0 ]; then
    echo "cluster/up: FAILED (rc $rc) after $((SECONDS - t_start)) s; logs in $dir/logs:" >&2
    for f in "$dir"/logs/*.log "$dir"/cp/logs/*.log; do
      [ -s "$f" ] && [ "${f##*/}" != openssl.log ] || continue
      echo "---- tail $f" >&2; tail -n 8 "$f" | cut -c1-400 >&2
    done
    echo "cluster/up: FAILED (rc $rc): see the first lines above the logs" >&2
    "$here/down.sh" --keep "$dir" >&2 || true
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_proc() { # name command...
  local name=$1; shift
  "$@" </dev/null >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name"
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
alive() { kill -0 "$(cat "$dir/pids/$1")" 2>/dev/null; }
# until NAME WHAT CMD...: polls CMD until it succeeds; fails if NAME's process died or on timeout.
until_ok() {
  local name=$1 what=$2 t0=$SECONDS; shift 2
  while ! "$@" >/dev/null 2>&1; do
    if [ -n "$name" ] && ! alive "$name"; then echo "cluster/up: $name exited while waiting for $what" >&2; return 1; fi
    [ $((SECONDS - t0)) -lt "$timeout_s" ] || { echo "cluster/up: $what: not after $timeout_s s" >&2; return 1; }
    sleep 0.3
  done
  echo "== $what: $((SECONDS - t0)) s" >&2
}

# ---- containerd ----------------------------------------------------------------------------
sock=$dir/containerd.sock
pause_image=$(cat "$images/pause.name")
cat >"$dir/containerd.toml" <<EOF
# containerd for tests/cluster: everything of its own in $dir. restrict_oom_score_adj: root here
# lacks CAP_SYS_RESOURCE, so runc cannot write the negative oom_score_adj the kubelet asks for
# (every sandbox failed with "can't get final child's PID from pipe: EOF"); sandbox_image: the
# locally built pause (nothing can be pulled).
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = "$sock.debug"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
  sandbox_image = "$pause_image"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$dir/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
EOF
cat >"$dir/cni/net.d/10-kubesched-cluster.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "kubesched-cluster",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$dir/cni/ipam",
              "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
CTR="ctr --address $sock --namespace k8s.io"
start_proc containerd containerd --config "$dir/containerd.toml"
until_ok containerd "containerd answers" $CTR version
t0=$SECONDS
for i in pause workload kubesched one-pod-per-node; do
  $CTR images import "$images/$i.tar" >"$dir/logs/import-$i.log" 2>&1 \
    || { echo "cluster/up: ctr images import $images/$i.tar failed: $(tail -n 3 "$dir/logs/import-$i.log")" >&2; exit 1; }
done
echo "== images imported into containerd (k8s.io): $((SECONDS - t0)) s" >&2
have=$($CTR images ls -q)
for i in pause workload kubesched one-pod-per-node; do
  n=$(cat "$images/$i.name")
  grep -qx "$n" <<<"$have" || { echo "cluster/up: $n is not in containerd after the import ($(tr '\n' ' ' <<<"$have"))" >&2; exit 1; }
done

# ---- control plane: etcd, kube-apiserver, kube-scheduler --------------------------------------
cp=$dir/cp
KUBESCHED_E2E_APISERVER_BIND=0.0.0.0 KUBESCHED_E2E_APISERVER_ADVERTISE=$node_ip \
KUBESCHED_E2E_DISABLED_ADMISSION=TaintNodesByCondition \
KUBESCHED_E2E_APISERVER_FLAGS="--endpoint-reconciler-type=lease --kubelet-preferred-address-types=InternalIP --kubelet-client-certificate=$cp/pki/admin.crt --kubelet-client-key=$cp/pki/admin.key ${KUBESCHED_E2E_APISERVER_FLAGS:-}" \
  "$e2e/start-control-plane.sh" --with-scheduler --dir "$cp" >"$dir/logs/start-control-plane.log" 2>&1 \
  || { echo "cluster/up: start-control-plane.sh failed:" >&2; cat "$dir/logs/start-control-plane.log" >&2; exit 1; }
# shellcheck disable=SC1091
. "$cp/env"
kc=$cp/admin.kubeconfig

# ---- kube-controller-manager: all default controllers -----------------------------------------
start_proc kube-controller-manager "$bin/kube-controller-manager" \
  --kubeconfig="$cp/kcm.kubeconfig" \
  --authentication-kubeconfig="$cp/kcm.kubeconfig" --authorization-kubeconfig="$cp/kcm.kubeconfig" \
  --leader-elect=false --use-service-account-credentials=true \
  --service-account-private-key-file="$cp/pki/sa.key" --root-ca-file="$cp/pki/ca.crt" \
  --bind-address=127.0.0.1 --secure-port=0 --cert-dir="$dir/kcm-certs" \
  --node-monitor-grace-period=40s
until_ok kube-controller-manager "ServiceAccount default/default (kube-controller-manager)" \
  kubectl get serviceaccount default -n default

# ---- kubelet ------------------------------------------------------------------------------
cat >"$dir/kubelet.yaml" <<EOF
# The kubelet of tests/cluster. cgroupfs and failCgroupV1: false: this machine's cgroups are
# hybrid v1; failSwapOn: false; image GC never (every image is local and cannot be pulled again);
# the API server reaches the kubelet with the admin client certificate (x509 against the CA) and
# the kubelet asks it whether that user may (webhook).
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$sock
podLogsDir: $dir/pod-logs
address: $node_ip
healthzBindAddress: 127.0.0.1
healthzPort: 0
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $cp/pki/ca.crt}
authorization: {mode: Webhook}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
resolvConf: /etc/resolv.conf
serializeImagePulls: false
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
fileCheckFrequency: 20s
EOF
t_kubelet=$SECONDS
start_proc kubelet "$bin/kubelet" --config="$dir/kubelet.yaml" --kubeconfig="$kc" \
  --root-dir="$dir/kubelet" --cert-dir="$dir/kubelet/pki" --hostname-override="$node" --node-ip="$node_ip" -v=1
node_ready() { [ "$(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; }
until_ok kubelet "Node $node Ready (from the kubelet's start)" node_ready
echo "$((SECONDS - t_kubelet))" >"$dir/node-ready-s"

# ---- kube-proxy ---------------------------------------------------------------------------
cat >"$dir/kube-proxy.yaml" <<EOF
# kube-proxy of tests/cluster, iptables mode. Its kubeconfig is read from here (the flag is
# ignored with --config). Conntrack limits and timeouts 0: left as they are; no localhost
# NodePorts: route_localnet is left alone.
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $kc}
hostnameOverride: $node
clusterCIDR: 10.244.0.0/16
bindAddress: $node_ip
healthzBindAddress: 127.0.0.1:$(free_port)
metricsBindAddress: 127.0.0.1:$(free_port)
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
start_proc kube-proxy "$bin/kube-proxy" --config="$dir/kube-proxy.yaml" -v=1
svc_rule() { iptables-save -t nat 2>/dev/null | grep -q "default/kubernetes:https cluster IP"; }
until_ok kube-proxy "kube-proxy's rules for Service default/kubernetes" svc_rule
until_ok "" "ConfigMap default/kube-root-ca.crt" kubectl get configmap kube-root-ca.crt -n default

app_version=$(awk -F'"' '/^appVersion:/ {print $2}' "$here/../../charts/kubesched/Chart.yaml")
cat >"$dir/env" <<EOF
$(cat "$cp/env")
export KUBESCHED_CLUSTER_DIR='$dir'
export KUBESCHED_CLUSTER_NODE='$node'
export KUBESCHED_CLUSTER_NODE_IP='$node_ip'
export KUBESCHED_CLUSTER_CTR='$CTR'
export KUBESCHED_CLUSTER_IMAGE='$(cat "$images/kubesched.name")'
export KUBESCHED_CLUSTER_APP_VERSION='$app_version'
export KUBESCHED_CLUSTER_PLUGIN_IMAGE='$(cat "$images/one-pod-per-node.name")'
export KUBESCHED_CLUSTER_WORKLOAD_IMAGE='$(cat "$images/workload.name")'
EOF
echo "== cluster up in $((SECONDS - t_start)) s (node $node, $node_ip; Node Ready $(cat "$dir/node-ready-s") s after the kubelet started)" >&2
up_ok=1
trap - EXIT INT TERM

if [ ${#cmd[@]} -eq 0 ]; then
  cat "$dir/env"
  echo "# env file: $dir/env"
  echo "# tear down and restore the machine: $here/down.sh $dir"
  exit 0
fi
teardown() {
  local rc=$? k=()
  [ "$keep" = 0 ] || k=(--keep)
  "$here/down.sh" "${k[@]}" "$dir" >&2 || { echo "cluster/up: the teardown failed (see above)" >&2; [ "$rc" != 0 ] || rc=1; }
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# shellcheck disable=SC1091
. "$dir/env"
"${cmd[@]}"
