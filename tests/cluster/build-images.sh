#!/usr/bin/env bash
# Builds the container images of the one-node cluster (tests/cluster) with Debian's buildah and no
# registry, and exports each one as a docker-archive that up.sh imports into containerd:
#
#   docker.io/library/debian:bookworm, :bookworm-slim   debootstrap --variant=minbase (the
#                                                       Dockerfile's FROM lines; tarball cached)
#   kubesched-cluster.local/pause:3.10                  pause.c, static, FROM scratch
#   kubesched-cluster.local/workload:1.0                workload.c, static, FROM scratch
#   docker.io/library/kubesched:<chart appVersion>      the repository's Dockerfile
#   kubesched-cluster.local/one-pod-per-node:1.0        images/plugin/Dockerfile: the example
#                                                       plugin against the SDK header
#
# The Dockerfile is built from the repository's tracked files only (`git ls-files`, as a clean
# clone has them, with the working tree's content): build/ and anything untracked never reaches
# it. buildah runs with --storage-driver vfs --isolation chroot, `bud --pull-never`, its storage
# in the cache. No layer cache (with vfs every cached layer is a full copy of the root file
# system: a build where nothing changed still took 3.5 minutes); instead an image is rebuilt only
# when the hash of its inputs changed (the base image, the Dockerfile and what its COPY lines
# copy; for the others their own files), and old images are pruned. So:
#
#   ${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/cluster/
#     debian-bookworm-minbase.tar   buildah/{storage,run}   images/<name>.{tar,id,name,key}
#
# Prints the time of each step and, last, the image folder ("images: DIR").
# Usage: tests/cluster/build-images.sh [--force]   (--force: debootstrap again, rebuild all)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${KUBESCHED_E2E_CACHE:-$HOME/.cache/kubesched-e2e}/cluster
force=0
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "build-images: unknown argument $a" >&2; exit 2 ;;
  esac
done
for t in buildah debootstrap gcc git; do
  command -v "$t" >/dev/null || { echo "build-images: $t is not installed (tests/install-deps.sh --cluster)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "build-images: run as root (buildah with chroot isolation, debootstrap)" >&2; exit 1; }

app_version=$(awk -F'"' '/^appVersion:/ {print $2}' "$repo/charts/kubesched/Chart.yaml")
[ -n "$app_version" ] || { echo "build-images: no appVersion in charts/kubesched/Chart.yaml" >&2; exit 1; }
KS_IMAGE=docker.io/library/kubesched:$app_version
mkdir -p "$cache/images" "$cache/buildah/storage" "$cache/buildah/run"
B=(buildah --root "$cache/buildah/storage" --runroot "$cache/buildah/run" --storage-driver vfs)
# buildah's network library creates its CNI config folder (default /etc/cni/net.d) even with
# chroot isolation, which uses the host's network: keep it in the cache, and take away an
# /etc/cni that this run made (nothing of the machine changes but the cache).
mkdir -p "$cache/buildah/cni"
printf '[network]\nnetwork_config_dir = "%s"\n' "$cache/buildah/cni" >"$cache/buildah/containers.conf"
export CONTAINERS_CONF=$cache/buildah/containers.conf
BUD=("${B[@]}" bud --isolation chroot --pull-never)
etc_cni_before=0; [ ! -e /etc/cni ] || etc_cni_before=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kubesched-images.XXXXXX")
cleanup() {
  rm -rf "$tmp"
  if [ "${etc_cni_before:-1}" = 0 ] && [ -d /etc/cni ] && [ -z "$(find /etc/cni -mindepth 1 -not -type d)" ]; then rm -rf /etc/cni; fi
}
trap cleanup EXIT

step() { # label command...: runs it, prints its time; a failure stops with its output
  local label=$1 t0=$SECONDS; shift
  if ! "$@" >"$tmp/step.log" 2>&1; then
    echo "build-images: $label failed; the last lines:" >&2; tail -n 30 "$tmp/step.log" >&2; exit 1
  fi
  echo "== $label: $((SECONDS - t0)) s"
}
image_id() { "${B[@]}" inspect --type image --format '{{.FromImageID}}' "$1" 2>/dev/null; }
# hash_of FILE-OR-DIR...: one sha256 over the content and names of the files (run in the cwd).
hash_of() { find "$@" -type f ! -path 'tests/*' ! -path './tests/*' ! -path 'docs/*' ! -path './docs/*' ! -name '*.md' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-64; }
# build_if_changed NAME IMAGE KEY LABEL BUD-ARGS...: builds unless IMAGE exists with that input KEY.
build_if_changed() {
  local name=$1 img=$2 key=$3 label=$4; shift 4
  if [ "$force" = 0 ] && [ "$(cat "$cache/images/$name.key" 2>/dev/null)" = "$key" ] && [ -n "$(image_id "$img")" ]; then
    echo "== $label: inputs unchanged, not rebuilt"; return 0
  fi
  step "$label" "${BUD[@]}" -t "$img" "$@"
  echo "$key" >"$cache/images/$name.key"
}

# ---- Debian base: debootstrap once, the tarball cached --------------------------------------
base_tar=$cache/debian-bookworm-minbase.tar
mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /^http/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
debootstrap_base() {
  local root=$tmp/rootfs
  debootstrap --variant=minbase bookworm "$root" "$mirror"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" --numeric-owner -cf "$base_tar.tmp" .
  mv -f "$base_tar.tmp" "$base_tar"
  rm -rf "$root"
}
if [ "$force" = 1 ] || [ ! -s "$base_tar" ]; then step "debootstrap bookworm minbase ($mirror)" debootstrap_base
else echo "== debootstrap: cached ($base_tar)"; fi
base_stamp=$(stat -c %Y "$base_tar")
if [ "$force" = 1 ] || [ "$(cat "$cache/images/debian.stamp" 2>/dev/null)" != "$base_stamp" ] || [ -z "$(image_id docker.io/library/debian:bookworm)" ]; then
  commit_base() {
    local c
    c=$("${B[@]}" from scratch)
    "${B[@]}" add "$c" "$base_tar" /
    "${B[@]}" config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
    "${B[@]}" commit --rm "$c" docker.io/library/debian:bookworm
    "${B[@]}" tag docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim
    echo "$base_stamp" >"$cache/images/debian.stamp"
  }
  step "base image debian:bookworm (+ bookworm-slim)" commit_base
else echo "== base image debian:bookworm: cached"; fi

# ---- pause and workload: static C, FROM scratch -----------------------------------------------
for small in pause workload; do
  mkdir -p "$tmp/$small"
  cp "$here/images/$small/Dockerfile" "$tmp/$small/"
  step "$small: gcc -static" gcc -static -O2 -Wall -Wextra -o "$tmp/$small/$small" "$here/images/$small/$small.c"
done
for small in pause workload; do
  img=kubesched-cluster.local/$small:1.0; [ "$small" != pause ] || img=kubesched-cluster.local/pause:3.10
  build_if_changed "$small" "$img" "$(cd "$here/images/$small" && hash_of .)" "image $small" "$tmp/$small"
done

# ---- kubesched from the Dockerfile, in a context of the tracked files only ---------------------
ctx=$cache/context
mkctx() {
  rm -rf "$ctx.new" && mkdir -p "$ctx.new"
  (cd "$repo" && git ls-files -z --cached | xargs -0 -r sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh \
    | tar --null -T - -cf -) | tar -C "$ctx.new" -xf -
  rm -rf "$ctx" && mv "$ctx.new" "$ctx"
}
step "build context (git ls-files of $repo)" mkctx
base_id=$(image_id docker.io/library/debian:bookworm)
# What the Dockerfile copies from the context (its COPY lines without --from), and the Dockerfile.
mapfile -t ks_inputs < <(awk '$1 == "COPY" && $2 !~ /^--/ {for (i = 2; i < NF; i++) print $i}' "$ctx/Dockerfile")
build_if_changed kubesched "$KS_IMAGE" "$base_id $(cd "$ctx" && hash_of Dockerfile "${ks_inputs[@]}")" "image kubesched ($KS_IMAGE, Dockerfile)" \
  -f "$ctx/Dockerfile" "$ctx"
build_if_changed one-pod-per-node kubesched-cluster.local/one-pod-per-node:1.0 \
  "$base_id $(cd "$ctx" && hash_of sdk/kubesched/plugin.h examples/one-pod-per-node/one_pod_per_node.c) $(cd "$here/images/plugin" && hash_of .)" \
  "image one-pod-per-node (images/plugin/Dockerfile)" -f "$here/images/plugin/Dockerfile" "$ctx"

# ---- export what changed --------------------------------------------------------------------
export_one() { # file image
  local f=$1 img=$2 id
  id=$(image_id "$img")
  [ -n "$id" ] || { echo "build-images: no image $img after the build" >&2; exit 1; }
  if [ -s "$cache/images/$f.tar" ] && [ "$(cat "$cache/images/$f.id" 2>/dev/null)" = "$id" ]; then
    echo "== export $img: unchanged"; return 0
  fi
  rm -f "$cache/images/$f.tar"
  step "export $img" "${B[@]}" push "$img" "docker-archive:$cache/images/$f.tar:$img"
  echo "$id" >"$cache/images/$f.id"
  echo "$img" >"$cache/images/$f.name"
}
export_one pause kubesched-cluster.local/pause:3.10
export_one workload kubesched-cluster.local/workload:1.0
export_one kubesched "$KS_IMAGE"
export_one one-pod-per-node kubesched-cluster.local/one-pod-per-node:1.0
# Images that lost their name to a newer build, and build containers left by a failed build.
"${B[@]}" rm --all >/dev/null 2>&1 || true
"${B[@]}" rmi --prune >/dev/null 2>&1 || true
"${B[@]}" images --format '{{.Name}}:{{.Tag}} {{.Size}}' 2>/dev/null | grep -E 'kubesched|pause|workload|one-pod' | sed 's/^/#   /' || true
echo "images: $cache/images"
