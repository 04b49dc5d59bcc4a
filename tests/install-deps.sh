#!/usr/bin/env bash
# Installs the Debian packages kubesched needs to build and test, when they are missing.
# Safe to run again: it only calls apt-get when something is not installed.
set -euo pipefail

packages=(gcc make cmake ninja-build pkg-config python3 libcjson-dev libyaml-dev
          libcurl4-openssl-dev libssl-dev libmicrohttpd-dev libgnutls28-dev libpcre2-dev
          libcriterion-dev clang-format-16
          clang-16 libclang-rt-16-dev  # tests/fuzz: the compiler and its libFuzzer/ASan runtimes
          jq openssl curl ca-certificates iproute2   # these five: tests/e2e
          # tests/cluster (a real one-node cluster): container runtime, CNI, image builds, netfilter
          containerd runc buildah debootstrap containernetworking-plugins iptables nftables)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present (${packages[*]})"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
