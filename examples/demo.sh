#!/usr/bin/env bash
# The README's demo: builds kubesched, installs its SDK into build/install, builds the
# out-of-tree example plugin against that installed SDK (a separate CMake project), then
# simulates examples/cluster.yaml with examples/config.yaml (two profiles; example-scheduler
# enables the plugin). Run from anywhere; it works in the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target kubesched
cmake --install build --prefix "$PWD/build/install" >/dev/null
cmake -S examples/min-resources -B examples/min-resources/build -G Ninja \
      -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
cmake --build examples/min-resources/build

echo
echo "\$ kubesched validate-config examples/config.yaml   (excerpt)"
build/install/bin/kubesched validate-config examples/config.yaml | sed -n '1,12p'
echo
echo "\$ kubesched simulate --config examples/config.yaml --cluster examples/cluster.yaml"
build/install/bin/kubesched simulate --config examples/config.yaml --cluster examples/cluster.yaml
