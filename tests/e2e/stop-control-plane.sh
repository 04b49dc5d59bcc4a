#!/usr/bin/env bash
# Stops a control plane started by start-control-plane.sh and removes its dir.
# Usage: tests/e2e/stop-control-plane.sh [--keep] [DIR]
#   DIR     the dir start-control-plane.sh printed (default: $KUBESCHED_E2E_DIR)
#   --keep  stop the processes but keep DIR (logs, certs)
# Stops a test's own processes (other pid files in DIR/pids; their command lines must name DIR),
# then kube-scheduler, then the kube-apiserver(s), then etcd (SIGTERM, SIGKILL after 10 s), only the
# pids recorded in DIR/pids and only while they still run the expected binary. Then checks
# that no process whose command line names DIR is left, and fails if one is.
set -uo pipefail

keep=0
dir=
for a in "$@"; do
  case "$a" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) dir=$a ;;
  esac
done
dir=${dir:-${KUBESCHED_E2E_DIR:-}}
if [ -z "$dir" ] || [ ! -d "$dir/pids" ]; then
  echo "stop-control-plane: no control plane dir given (or no $dir/pids)" >&2
  exit 1
fi

ours() { # pid binary: is pid still our process?
  [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -- "$2"
}

stop_one() {
  local name=$1 f="$dir/pids/$1" pid i bin=$1
  [ -f "$f" ] || return 0
  case "$name" in
    kube-apiserver*) bin=kube-apiserver ;; # DIR/start-apiserver --name
    provisioner|kube-scheduler|kube-controller-manager|etcd) ;;
    *) bin="$dir/" ;; # a test's own process (e.g. sp-scheduler): its command line names DIR
  esac
  pid=$(cat "$f")
  if ours "$pid" "$bin"; then
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 1 100); do ours "$pid" "$bin" || break; sleep 0.1; done
    if ours "$pid" "$bin"; then
      echo "stop-control-plane: $name ($pid) ignored SIGTERM; SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null
      sleep 0.2
    fi
  fi
  # Reap it when it is our child (the start script's CMD mode).
  wait "$pid" 2>/dev/null
  rm -f "$f"
}

# Extra API servers (DIR/start-apiserver --name kube-apiserver-2) go with the first one.
extra=$(cd "$dir/pids" && ls -d kube-apiserver?* 2>/dev/null || true)
# A test's own processes (pid files of other names) go first: they are clients of the API server.
own=$(cd "$dir/pids" && ls 2>/dev/null | grep -vxE 'provisioner|kube-scheduler|kube-controller-manager|kube-apiserver.*|etcd' || true)
for name in $own provisioner kube-scheduler kube-controller-manager $extra kube-apiserver etcd; do stop_one "$name"; done

left=
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  [ "$pid" != $$ ] || continue
  if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "$dir/"; then
    case "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" in
      *stop-control-plane.sh*|*start-control-plane.sh*) continue ;;
    esac
    left+=" $pid"
  fi
done
if [ -n "$left" ]; then
  echo "stop-control-plane: still running after stop:$left" >&2
  exit 1
fi

if [ "$keep" = 1 ]; then
  echo "== control plane stopped; kept $dir" >&2
else
  rm -rf "$dir"
  echo "== control plane stopped; removed $dir" >&2
fi
