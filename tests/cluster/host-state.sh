#!/usr/bin/env bash
# What a one-node cluster changes on the machine, saved before it starts and put back after it
# stops (tests/cluster/up.sh saves, down.sh restores and compares):
#
#   sysctls     `sysctl -a` (the kubelet sets vm.overcommit_memory, kernel.panic,
#               kernel.panic_on_oops; the CNI bridge net.ipv4.ip_forward; kube-proxy
#               route_localnet ...): every writable value that differs is written back
#   netfilter   `nft list ruleset` (iptables-nft: the kubelet's KUBE-FIREWALL/canary chains,
#               kube-proxy's KUBE-*, the bridge plugin's CNI-* masquerade): flushed and reloaded
#               exactly as it was, tables included
#   mounts      mount points of /proc/self/mountinfo (overlay rootfs, shm, netns, the kubelet's
#               bind mount and volumes): every new one unmounted, deepest first
#   cgroups     the directories of every cgroup hierarchy (kubepods/...): new ones removed,
#               deepest first, after killing what still runs in them (only ever processes
#               started inside cgroups the cluster created)
#   links       network interfaces (cni0, the pods' veths): new ones deleted
#   paths       a fixed list of paths runtimes use outside their configured folders
#               (/run/netns, /run/containerd, /var/lib/cni, /etc/cni, /opt/cni, /var/log/pods,
#               /var/lib/kubelet, ...): one that did not exist is removed
#
# Usage: host-state.sh save DIR | restore DIR | compare DIR
#   save     writes the snapshot into DIR (must exist)
#   restore  puts back what differs from DIR's snapshot, then compares
#   compare  prints each difference from DIR's snapshot; exit 1 if there is one
# Needs root (it writes sysctls, netfilter, mounts and cgroups). Nothing here stops processes the
# cluster did not start: the caller (down.sh) stops its own first.
set -uo pipefail
export LC_ALL=C # sort and comm must agree

watched_paths=(/run/netns /run/containerd /run/runc /var/lib/containerd /var/lib/cni /etc/cni /opt/cni
               /var/log/pods /var/log/containers /var/lib/kubelet /etc/kubernetes /run/xtables.lock
               /var/lib/kube-proxy /run/flannel /var/run/secrets)

# Keys whose values change by themselves (counters, entropy, per-boot ids) or that belong to
# interfaces: never compared, never written.
volatile_keys='^(kernel\.random\.|fs\.(dentry-state|file-nr|inode-nr|inode-state|aio-nr|quota\.)|kernel\.(ns_last_pid|pty\.nr|sched_domain|perf_event_max|core_modes)|net\.netfilter\.nf_conntrack_count|net\.ipv[46]\.(conf|neigh)\.[^.]*(veth|cni|vxlan|flannel)|vm\.(stat|nr_|drop_caches)|fs\.binfmt_misc)'

snap_sysctl() { sysctl -a 2>/dev/null | grep -Ev "$volatile_keys" | sort; }
snap_nft() { nft list ruleset 2>/dev/null | sed -E 's/counter packets [0-9]+ bytes [0-9]+/counter/'; }
snap_mounts() { awk '{print $5}' /proc/self/mountinfo | sort -u; }
cgroup_roots() { awk '$3 == "cgroup" || $3 == "cgroup2" {print $2}' /proc/mounts; }
snap_cgroups() { local r; for r in $(cgroup_roots); do find "$r" -mindepth 1 -type d 2>/dev/null; done | sort; }
snap_links() { ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort; }
snap_paths() { local p; for p in "${watched_paths[@]}"; do if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi; done | sort; }

save() {
  local d=$1
  snap_sysctl >"$d/sysctl"
  snap_nft >"$d/nft"
  snap_mounts >"$d/mounts"
  snap_cgroups >"$d/cgroups"
  snap_links >"$d/links"
  snap_paths >"$d/paths"
}

# new FILE CMD...: lines CMD prints now that FILE does not have.
new_lines() { local f=$1; shift; comm -13 "$f" <("$@"); }

restore() {
  local d=$1 m c l p k v now
  # Mounts: deepest first, lazily (a netns or rootfs still held by a dying process goes when it does).
  for m in $(new_lines "$d/mounts" snap_mounts | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "host-state: cannot unmount $m" >&2
  done
  # cgroups: whatever still runs in a new one is the cluster's; kill it, then remove deepest first.
  local newcg; newcg=$(new_lines "$d/cgroups" snap_cgroups)
  if [ -n "$newcg" ]; then
    local i pids
    for i in 1 2 3 4 5; do
      pids=$(for c in $newcg; do cat "$c/cgroup.procs" 2>/dev/null; done | sort -u)
      [ -n "$pids" ] || break
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null
      sleep 0.5
    done
    for c in $(awk '{print length, $0}' <<<"$newcg" | sort -rn | cut -d' ' -f2-); do
      rmdir "$c" 2>/dev/null || { [ -d "$c" ] && echo "host-state: cannot remove cgroup $c" >&2; }
    done
  fi
  for l in $(new_lines "$d/links" snap_links); do ip link delete "$l" 2>/dev/null; done
  # netfilter exactly as it was (nft tables the iptables-nft front end made included).
  if ! diff -q "$d/nft" <(snap_nft) >/dev/null; then
    { echo "flush ruleset"; cat "$d/nft"; } | nft -f - || echo "host-state: nft could not reload the saved ruleset" >&2
  fi
  # sysctls: write back each writable value that differs.
  while IFS= read -r line; do
    k=${line%% = *}; v=${line#* = }
    now=$(sysctl -n "$k" 2>/dev/null | tr '\t' ' ') || continue
    [ "$now" = "$(tr '\t' ' ' <<<"$v")" ] && continue
    sysctl -q -w "$k=$v" >/dev/null 2>&1 || echo "host-state: cannot restore sysctl $k = $v (now $now)" >&2
  done < <(comm -23 "$d/sysctl" <(snap_sysctl))
  for p in $(new_lines "$d/paths" snap_paths); do rm -rf "$p"; done
  compare "$d"
}

compare() {
  local d=$1 rc=0 what out
  for what in sysctl nft mounts cgroups links paths; do
    case "$what" in
      sysctl|mounts|cgroups|links|paths)
        # sysctl keys of interfaces that came or went are not a difference in the value of a key
        # that was there before: compare the keys present on both sides.
        if [ "$what" = sysctl ]; then
          out=$(join -t'|' <(sed 's/ = /|/' "$d/sysctl" | sort -t'|' -k1,1) <(snap_sysctl | sed 's/ = /|/' | sort -t'|' -k1,1) \
            | awk -F'|' '$2 != $3 {print "sysctl " $1 ": was " $2 ", now " $3}')
        else
          out=$(diff <(cat "$d/$what") <("snap_$what") | grep '^[<>]' | sed "s/^</$what gone:/; s/^>/$what new:/")
        fi ;;
      nft) out=$(diff "$d/nft" <(snap_nft) | grep '^[<>]' | head -20 | sed 's/^/nft: /') ;;
    esac
    if [ -n "$out" ]; then echo "$out"; rc=1; fi
  done
  return $rc
}

case "${1:-}" in
  save|restore|compare)
    [ -d "${2:-}" ] || { echo "host-state: $1 needs an existing DIR" >&2; exit 2; }
    "$1" "$2" ;;
  *) sed -n '2,28p' "$0"; exit 2 ;;
esac
