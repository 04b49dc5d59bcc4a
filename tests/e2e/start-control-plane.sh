#!/usr/bin/env bash
# Starts a real, throw-away Kubernetes control plane on loopback for the end-to-end tests:
# etcd + kube-apiserver (RBAC, no admission ServiceAccount, no inflight limits, no APF, no
# endpoint reconciler: since v1.37 it refuses a loopback --advertise-address), and
# with --with-scheduler the upstream kube-scheduler as default-scheduler. No kubelet and no
# controller-manager unless asked for: Nodes are plain objects that tests create. Admission TaintNodesByCondition
# is off: it taints every new Node node.kubernetes.io/not-ready:NoSchedule, and with no node
# lifecycle controller nothing would ever remove that taint.
#
# Binaries come from tests/e2e/build-control-plane.sh (run it first; this script does not
# build). Everything lives in one temp dir (certs, keys, token file, etcd data, logs, pids,
# kubeconfigs); stop-control-plane.sh DIR stops every process and removes it.
#
# Usage:
#   tests/e2e/start-control-plane.sh [--with-scheduler] [--keep] [--dir DIR] [-- CMD ARGS...]
#     without CMD: starts, prints `export ...` lines and the env file, and returns with the
#                  control plane running; stop it later with
#                  tests/e2e/stop-control-plane.sh DIR   (or: . DIR/env; stop-control-plane.sh)
#     with CMD:    starts, runs CMD with the env exported, then stops everything (a trap) and
#                  exits with CMD's status.
#   --with-scheduler  also start kube-scheduler (leader election off, own kubeconfig as
#                     system:kube-scheduler)
#   --with-controller-manager  also start kube-controller-manager with only its PersistentVolume
#                     controller (persistentvolume-binder: binds claims, asks external
#                     provisioners; leader election off, as system:kube-controller-manager;
#                     build it with build-control-plane.sh kube-controller-manager)
#   --with-resourceclaim-controller  also start kube-controller-manager with its ResourceClaim
#                     controller (resourceclaim-controller: makes a pod's claims from its
#                     ResourceClaimTemplates, writes pod.status.resourceClaimStatuses, drops the
#                     reservedFor entries of pods that are gone, deallocates and deletes claims
#                     no longer used); with --with-controller-manager too, one
#                     kube-controller-manager runs both controllers
#   --keep            with CMD: keep DIR (logs) after stopping
#   --dir DIR         use DIR (must not exist or be empty) instead of a new mktemp dir
# Env: KUBESCHED_E2E_BIN_DIR (default: the cache dir build-control-plane.sh uses),
#      KUBESCHED_E2E_APISERVER_BIN_DIR (where kube-apiserver comes from; default the bin dir:
#      version skew runs point it at an older minor's, e.g. ~/.cache/kubesched-e2e/v1.35.4,
#      built by build-control-plane.sh --skew 1.35; etcd and kube-scheduler stay the main ones),
#      KUBESCHED_E2E_APISERVER_FLAGS (extra kube-apiserver flags, space-separated, e.g.
#      --runtime-config=policy/v1=false),
#      KUBESCHED_E2E_APISERVER_BIND (--bind-address, default 127.0.0.1) and
#      KUBESCHED_E2E_APISERVER_ADVERTISE (--advertise-address, default 127.0.0.1; another address
#      also goes into the serving certificate): tests/cluster binds 0.0.0.0 and advertises the
#      node's address so that pods reach the API server through the `kubernetes` Service,
#      KUBESCHED_E2E_DISABLED_ADMISSION (--disable-admission-plugins, default
#      ServiceAccount,TaintNodesByCondition; tests/cluster runs kube-controller-manager and
#      pods with ServiceAccount tokens, so it keeps ServiceAccount on),
#      KUBESCHED_E2E_CACHE, KUBESCHED_E2E_START_TIMEOUT (seconds, default 90),
#      KUBESCHED_E2E_APISERVER_V (apiserver --v, default 0),
#      KUBESCHED_E2E_SCHEDULER_QPS / KUBESCHED_E2E_SCHEDULER_BURST (kube-scheduler's client
#      qps/burst, --kube-api-qps/--kube-api-burst; default upstream's 50/100; BURST defaults to QPS)
#
# The env file DIR/env exports: KUBECONFIG (admin, group system:masters, client cert),
# KUBESCHED_E2E_DIR, KUBESCHED_E2E_APISERVER (https URL), KUBESCHED_E2E_CA (CA file),
# KUBESCHED_E2E_TOKEN (bearer token, also system:masters), KUBESCHED_E2E_ETCD (http URL),
# KUBESCHED_E2E_SCHEDULER_KUBECONFIG (a client cert kubeconfig as user system:kube-scheduler),
# and with --with-scheduler KUBESCHED_E2E_SCHEDULER_URL (kube-scheduler's secure port, https).
# DIR/start-apiserver starts kube-apiserver again with the same flags (after a test stopped it
# with SIGTERM to DIR/pids/kube-apiserver), or a second one: see its header.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

with_scheduler=0
with_kcm=0
with_rc=0
keep=0
dir=
cmd=()
while [ $# -gt 0 ]; do
  case "$1" in
    --with-scheduler) with_scheduler=1 ;;
    --with-controller-manager) with_kcm=1 ;;
    --with-resourceclaim-controller) with_rc=1 ;;
    --keep) keep=1 ;;
    --dir) dir=$2; shift ;;
    --) shift; cmd=("$@"); break ;;
    -h|--help) sed -n '2,51p' "$0"; exit 0 ;;
    *) echo "start-control-plane: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$here/kube/go.mod")
bin_dir=${KUBESCHED_E2E_BIN_DIR:-${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/$k8s_version}
api_bin_dir=${KUBESCHED_E2E_APISERVER_BIN_DIR:-$bin_dir}
need=("$bin_dir/etcd" "$api_bin_dir/kube-apiserver")
[ "$with_scheduler" = 0 ] || need+=("$bin_dir/kube-scheduler")
[ "$with_kcm$with_rc" = 00 ] || need+=("$bin_dir/kube-controller-manager")
for b in "${need[@]}"; do
  if [ ! -x "$b" ]; then
    echo "start-control-plane: $b missing; run tests/e2e/build-control-plane.sh first" \
      "(--skew MINOR for an older kube-apiserver)" >&2
    exit 1
  fi
done
for t in openssl curl kubectl; do
  command -v "$t" >/dev/null || { echo "start-control-plane: $t is not installed" >&2; exit 1; }
done
timeout_s=${KUBESCHED_E2E_START_TIMEOUT:-90}

if [ -z "$dir" ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/kubesched-e2e.XXXXXX")
else
  mkdir -p "$dir"
  [ -z "$(ls -A "$dir")" ] || { echo "start-control-plane: $dir is not empty" >&2; exit 1; }
  dir=$(cd "$dir" && pwd)
fi
mkdir -p "$dir/pki" "$dir/logs" "$dir/pids"
chmod 700 "$dir"

started=0
cleanup_on_error() {
  local rc=$?
  if [ "$started" = 0 ]; then
    echo "start-control-plane: failed (rc $rc); logs in $dir/logs:" >&2
    for f in "$dir"/logs/*.log; do
      [ -f "$f" ] || continue
      n=25; [ "${f##*/}" != openssl.log ] || n=3
      echo "---- tail $f" >&2; tail -n "$n" "$f" >&2
    done
    "$here/stop-control-plane.sh" --keep "$dir" >&2 || true
  fi
}
trap cleanup_on_error EXIT

# ---- free loopback ports ------------------------------------------------------------------
used_ports=" "
port_busy() {
  if command -v ss >/dev/null; then
    [ -n "$(ss -Htan "sport = :$1" 2>/dev/null)" ]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
free_port() {
  local p i
  for i in $(seq 1 200); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
    case "$used_ports" in *" $p "*) continue ;; esac
    if ! port_busy "$p"; then used_ports+="$p "; echo "$p"; return 0; fi
  done
  echo "start-control-plane: no free port found" >&2
  return 1
}
etcd_port=$(free_port)
etcd_peer_port=$(free_port)
api_port=$(free_port)
sched_port=$(free_port)

# ---- keys and certificates (openssl) --------------------------------------------------------
pki="$dir/pki"
ossl() { openssl "$@" 2>>"$dir/logs/openssl.log"; }
ossl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=kubesched-e2e-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt"
sign() { # name subject [extfile-contents]
  local name=$1 subj=$2 ext=$3
  ossl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$pki/$name.key" -out "$pki/$name.csr"
  printf '%s\n' "$ext" > "$pki/$name.ext"
  ossl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/$name.ext" -out "$pki/$name.crt"
}
api_bind=${KUBESCHED_E2E_APISERVER_BIND:-127.0.0.1}
api_advertise=${KUBESCHED_E2E_APISERVER_ADVERTISE:-127.0.0.1}
extra_san=; [ "$api_advertise" = 127.0.0.1 ] || extra_san="IP:$api_advertise,"
sign apiserver "/CN=kube-apiserver" \
  "$(printf 'subjectAltName=%sIP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment' "$extra_san")"
sign admin "/O=system:masters/CN=kubesched-e2e-admin" \
  "$(printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment')"
sign scheduler "/CN=system:kube-scheduler" \
  "$(printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment')"
sign kcm "/CN=system:kube-controller-manager" \
  "$(printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment')"
ossl genrsa -out "$pki/sa.key" 2048
ossl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
token=$(openssl rand -hex 24)
printf '%s,kubesched-e2e-admin,kubesched-e2e-admin,"system:masters"\n' "$token" > "$pki/tokens.csv"
chmod 600 "$pki"/*.key "$pki/tokens.csv"

# ---- process helpers ----------------------------------------------------------------------
start_proc() { # name binary args...
  local name=$1; shift
  "$@" </dev/null >"$dir/logs/$name.log" 2>&1 &
  echo $! > "$dir/pids/$name"
}
alive() { kill -0 "$(cat "$dir/pids/$1")" 2>/dev/null; }
wait_for() { # name url curl-args...
  local name=$1 url=$2; shift 2
  local deadline=$(( $(date +%s) + timeout_s )) t0
  t0=$(date +%s)
  while :; do
    if ! alive "$name"; then echo "start-control-plane: $name exited" >&2; return 1; fi
    if [ "$(curl -s --max-time 2 "$@" "$url" 2>/dev/null)" = ok ]; then
      echo "== $name ready in $(( $(date +%s) - t0 )) s" >&2
      return 0
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "start-control-plane: $name not ready after ${timeout_s}s ($url)" >&2; return 1
    fi
    sleep 0.3
  done
}

# ---- etcd ---------------------------------------------------------------------------------
etcd_url="http://127.0.0.1:$etcd_port"
peer_url="http://127.0.0.1:$etcd_peer_port"
start_proc etcd "$bin_dir/etcd" \
  --name=e2e --data-dir="$dir/etcd" \
  --listen-client-urls="$etcd_url" --advertise-client-urls="$etcd_url" \
  --listen-peer-urls="$peer_url" --initial-advertise-peer-urls="$peer_url" \
  --initial-cluster="e2e=$peer_url" --initial-cluster-state=new \
  --unsafe-no-fsync --quota-backend-bytes=$((4 * 1024 * 1024 * 1024)) \
  --log-level=warn
# /readyz-like for etcd: /health answers {"health":"true",...}
deadline=$(( $(date +%s) + timeout_s ))
t0=$(date +%s)
until curl -s --max-time 2 "$etcd_url/health" 2>/dev/null | grep -q '"health":"true"'; do
  alive etcd || { echo "start-control-plane: etcd exited" >&2; exit 1; }
  [ "$(date +%s)" -lt "$deadline" ] || { echo "start-control-plane: etcd not healthy" >&2; exit 1; }
  sleep 0.2
done
echo "== etcd ready in $(( $(date +%s) - t0 )) s ($etcd_url)" >&2

# ---- kube-apiserver -----------------------------------------------------------------------
# Its command line goes into DIR/start-apiserver, a script that starts it (again) with the same
# flags, so that tests can stop kube-apiserver and restart it, or run a second one on the same
# etcd (see the script's header). The first start goes through it too.
api_url="https://127.0.0.1:$api_port"
cat > "$dir/start-apiserver" <<EOF_START
#!/usr/bin/env bash
# Starts this control plane's kube-apiserver with the flags start-control-plane.sh gave it, in
# the background (pid in $dir/pids/NAME, log appended to $dir/logs/NAME.log), and waits up to
# $timeout_s s for /readyz. Written by start-control-plane.sh; stop-control-plane.sh stops it.
# Usage: $dir/start-apiserver [--name NAME] [--port PORT] [EXTRA-APISERVER-FLAG...]
#   --name NAME  pid/log name (default kube-apiserver; another name, e.g. kube-apiserver-2,
#                runs a second API server on the same etcd)
#   --port PORT  secure port (default $api_port, the one in the kubeconfigs)
#   extra flags are appended (a later flag wins), e.g. --watch-cache=false
set -euo pipefail
name=kube-apiserver port=$api_port
while [ \$# -gt 0 ]; do
  case "\$1" in
    --name) name=\$2; shift 2 ;;
    --port) port=\$2; shift 2 ;;
    *) break ;;
  esac
done
if [ -f "$dir/pids/\$name" ] && kill -0 "\$(cat "$dir/pids/\$name")" 2>/dev/null; then
  echo "start-apiserver: \$name is already running (pid \$(cat "$dir/pids/\$name"))" >&2; exit 1
fi
"$api_bin_dir/kube-apiserver" \\
  --etcd-servers="$etcd_url" \\
  --bind-address=$api_bind --advertise-address=$api_advertise --secure-port="\$port" \\
  --endpoint-reconciler-type=none \\
  --cert-dir="$dir/apiserver-certs" \\
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \\
  --client-ca-file="$pki/ca.crt" --token-auth-file="$pki/tokens.csv" \\
  --authorization-mode=RBAC \\
  --disable-admission-plugins=${KUBESCHED_E2E_DISABLED_ADMISSION-ServiceAccount,TaintNodesByCondition} \\
  --service-cluster-ip-range=10.0.0.0/24 \\
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \\
  --service-account-key-file="$pki/sa.pub" \\
  --service-account-signing-key-file="$pki/sa.key" \\
  --max-requests-inflight=0 --max-mutating-requests-inflight=0 \\
  --enable-priority-and-fairness=false \\
  --allow-privileged=true \\
  --v="${KUBESCHED_E2E_APISERVER_V:-0}" ${KUBESCHED_E2E_APISERVER_FLAGS:-} "\$@" </dev/null >>"$dir/logs/\$name.log" 2>&1 &
pid=\$!
echo \$pid > "$dir/pids/\$name"
t0=\$(date +%s)
while :; do
  kill -0 \$pid 2>/dev/null || { echo "start-apiserver: \$name exited; tail of its log:" >&2; tail -n 20 "$dir/logs/\$name.log" >&2; exit 1; }
  if [ "\$(curl -s --max-time 2 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://127.0.0.1:\$port/readyz" 2>/dev/null)" = ok ]; then
    echo "== \$name ready in \$(( \$(date +%s) - t0 )) s (https://127.0.0.1:\$port)" >&2
    exit 0
  fi
  [ \$(( \$(date +%s) - t0 )) -lt $timeout_s ] || { echo "start-apiserver: \$name not ready after $timeout_s s" >&2; exit 1; }
  sleep 0.3
done
EOF_START
chmod 700 "$dir/start-apiserver"
"$dir/start-apiserver"

# ---- kubeconfigs --------------------------------------------------------------------------
mkkubeconfig() { # file user cert key
  local f=$1 user=$2 cert=$3 key=$4
  KUBECONFIG="$f" kubectl config set-cluster e2e --server="$api_url" \
    --certificate-authority="$pki/ca.crt" --embed-certs=true >/dev/null
  KUBECONFIG="$f" kubectl config set-credentials "$user" \
    --client-certificate="$cert" --client-key="$key" --embed-certs=true >/dev/null
  KUBECONFIG="$f" kubectl config set-context e2e --cluster=e2e --user="$user" >/dev/null
  KUBECONFIG="$f" kubectl config use-context e2e >/dev/null
  chmod 600 "$f"
}
mkkubeconfig "$dir/admin.kubeconfig" admin "$pki/admin.crt" "$pki/admin.key"
mkkubeconfig "$dir/scheduler.kubeconfig" system:kube-scheduler "$pki/scheduler.crt" "$pki/scheduler.key"
mkkubeconfig "$dir/kcm.kubeconfig" system:kube-controller-manager "$pki/kcm.crt" "$pki/kcm.key"

# ---- kube-scheduler (optional) ------------------------------------------------------------
if [ "$with_scheduler" = 1 ]; then
  start_proc kube-scheduler "$bin_dir/kube-scheduler" \
    --kubeconfig="$dir/scheduler.kubeconfig" \
    --authentication-kubeconfig="$dir/scheduler.kubeconfig" \
    --authorization-kubeconfig="$dir/scheduler.kubeconfig" \
    --leader-elect=false \
    --bind-address=127.0.0.1 --secure-port="$sched_port" \
    --cert-dir="$dir/scheduler-certs" \
    ${KUBESCHED_E2E_SCHEDULER_QPS:+--kube-api-qps="$KUBESCHED_E2E_SCHEDULER_QPS"} \
    ${KUBESCHED_E2E_SCHEDULER_QPS:+--kube-api-burst="${KUBESCHED_E2E_SCHEDULER_BURST:-$KUBESCHED_E2E_SCHEDULER_QPS}"}
  wait_for kube-scheduler "https://127.0.0.1:$sched_port/healthz" -k
fi

# ---- kube-controller-manager (optional): the PersistentVolume and/or ResourceClaim controller --
# Without service account credentials every controller talks as system:kube-controller-manager,
# which the bootstrap policy does not let run these controllers: bind that user each
# controller's own ClusterRole.
kcm_controllers=()
if [ "$with_kcm" = 1 ]; then
  KUBECONFIG="$dir/admin.kubeconfig" kubectl create clusterrolebinding e2e-kcm-pv-binder \
    --clusterrole=system:controller:persistent-volume-binder \
    --user=system:kube-controller-manager >/dev/null
  kcm_controllers+=(persistentvolume-binder)
fi
if [ "$with_rc" = 1 ]; then
  KUBECONFIG="$dir/admin.kubeconfig" kubectl create clusterrolebinding e2e-kcm-resource-claim \
    --clusterrole=system:controller:resource-claim-controller \
    --user=system:kube-controller-manager >/dev/null
  kcm_controllers+=(resourceclaim-controller)
fi
if [ ${#kcm_controllers[@]} -gt 0 ]; then
  kcm_port=$(free_port)
  start_proc kube-controller-manager "$bin_dir/kube-controller-manager" \
    --kubeconfig="$dir/kcm.kubeconfig" \
    --authentication-kubeconfig="$dir/kcm.kubeconfig" \
    --authorization-kubeconfig="$dir/kcm.kubeconfig" \
    --leader-elect=false --use-service-account-credentials=false \
    --controllers="$(IFS=,; echo "${kcm_controllers[*]}")" \
    --pvclaimbinder-sync-period=2s \
    --bind-address=127.0.0.1 --secure-port="$kcm_port" \
    --cert-dir="$dir/kcm-certs"
  wait_for kube-controller-manager "https://127.0.0.1:$kcm_port/healthz" -k
fi

# ---- env file -----------------------------------------------------------------------------
cat > "$dir/env" <<EOF
export KUBECONFIG='$dir/admin.kubeconfig'
export KUBESCHED_E2E_DIR='$dir'
export KUBESCHED_E2E_APISERVER='$api_url'
export KUBESCHED_E2E_CA='$pki/ca.crt'
export KUBESCHED_E2E_TOKEN='$token'
export KUBESCHED_E2E_ETCD='$etcd_url'
export KUBESCHED_E2E_SCHEDULER_KUBECONFIG='$dir/scheduler.kubeconfig'
EOF
[ "$with_scheduler" = 0 ] || echo "export KUBESCHED_E2E_SCHEDULER_URL='https://127.0.0.1:$sched_port'" >>"$dir/env"
started=1
trap - EXIT

if [ ${#cmd[@]} -eq 0 ]; then
  cat "$dir/env"
  echo "# env file: $dir/env"
  echo "# stop with: $here/stop-control-plane.sh $dir"
  exit 0
fi

# Run CMD against it, then stop everything whatever happens.
stop_all() {
  local rc=$?
  if [ "$keep" = 1 ]; then
    "$here/stop-control-plane.sh" --keep "$dir" >&2 || true
  else
    "$here/stop-control-plane.sh" "$dir" >&2 || true
  fi
  exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# shellcheck disable=SC1091
. "$dir/env"
"${cmd[@]}"
