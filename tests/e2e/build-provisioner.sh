#!/usr/bin/env bash
# Builds the volume tests' dynamic provisioner (tests/e2e/provisioner: a hostPath provisioner on
# the sig-storage external-provisioner library, pinned in its own go.mod) with
# tests/tools/build-go-tool.sh (cached in ~/.cache/kubesched-e2e/provisioner-<hash>). Prints the
# binary's path on the last line.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../tools/build-go-tool.sh" provisioner "$here/provisioner"
