#!/usr/bin/env bash
# Builds tests/tools/dra-alloc-oracle (upstream's structured allocator:
# k8s.io/dynamic-resource-allocation/structured v0.37.2) with tests/tools/build-go-tool.sh (cached
# in ~/.cache/kubesched-e2e). Prints the binary's path on the last line; exit 77 when no Go.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../build-go-tool.sh" dra-alloc-oracle "$here" 77
