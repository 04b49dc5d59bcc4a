#!/usr/bin/env bash
# Builds tests/tools/cel-oracle (upstream's DRA CEL: k8s.io/dynamic-resource-allocation/cel v0.37.2,
# cel-go v0.29.2) with tests/tools/build-go-tool.sh (cached in ~/.cache/kubesched-e2e). Prints
# the binary's path on the last line; exit 77 when no Go.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../build-go-tool.sh" cel-oracle "$here" 77
