#!/usr/bin/env bash
# Acceptance test of the plugin SDK (ctest: loader_install):
#   1. `cmake --install` the build tree into a fresh prefix;
#   2. build examples/min-resources as a SEPARATE project against it (find_package(kubesched)),
#      and once more by hand with pkg-config's flags;
#   3. run `kubesched simulate` with examples/config.yaml (its kubeschedPluginPath pointed at the
#      plugin just built) and examples/cluster.yaml, and check that example-scheduler pods avoided
#      the nodes NodeMinResources rejects while default-scheduler pods did not;
#   4. build examples/one-pod-per-node the same way and simulate its cluster.yaml with its
#      config.yaml: one one-per-node pod per node, the fifth Unschedulable.
# Usage: install_example.sh CMAKE BUILD_DIR SOURCE_DIR WORK_DIR KUBESCHED CC GENERATOR
set -euo pipefail

cmake=$1 build=$2 src=$3 work=$4 kubesched=$5 cc=$6 generator=$7
python=${KS_PYTHON3:-python3}

step() { printf '\n=== %s\n' "$*"; }
die() { printf 'install_example: FAIL: %s\n' "$*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

step "install the SDK into $prefix"
"$cmake" --install "$build" --prefix "$prefix"
for f in include/kubesched/plugin.h share/cmake/kubesched/kubeschedConfig.cmake \
         share/cmake/kubesched/kubeschedConfigVersion.cmake \
         share/cmake/kubesched/kubeschedTargets.cmake share/cmake/kubesched/kubeschedPlugin.cmake \
         share/pkgconfig/kubesched.pc; do
    [ -f "$prefix/$f" ] || die "installed tree lacks $f"
done

step "build examples/min-resources against the installed CMake package"
"$cmake" -S "$src/examples/min-resources" -B "$work/example" -G "$generator" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
"$cmake" --build "$work/example"
so=$work/example/libnode_min_resources.so
[ -f "$so" ] || die "the example build did not produce $so"
# The package must not leak the source tree into the plugin's build.
if grep -rq -- "$src/sdk" "$work/example/CMakeCache.txt" "$prefix/share/cmake/kubesched"; then
    die "the installed package refers to the source tree $src/sdk"
fi
if command -v nm >/dev/null; then
    exported=$(nm -D --defined-only "$so" | awk '$2 ~ /[A-Z]/ && $2 != "w" {print $3}' | sort)
    echo "exported: $exported"
    grep -qx ks_module_info <<<"$exported" || die "$so does not export ks_module_info"
    if grep -qx ks_host <<<"$exported"; then die "$so exports ks_host (must be hidden)"; fi
fi

if command -v pkg-config >/dev/null; then
    step "build it again with pkg-config --cflags kubesched"
    cflags=$(PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --cflags kubesched)
    echo "cflags: $cflags"
    # shellcheck disable=SC2086
    "$cc" -std=c11 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC -fvisibility=hidden \
        $cflags -o "$work/libnode_min_resources_pc.so" "$src/examples/min-resources/min_resources.c"
fi

step "simulate examples/cluster.yaml with examples/config.yaml using $so"
# The same configuration, with its relative kubeschedPluginPath replaced by the plugin built above.
sed "s|kubeschedPluginPath: .*|kubeschedPluginPath: $so|" "$src/examples/config.yaml" \
    > "$work/config.yaml"
grep -q "kubeschedPluginPath: $so" "$work/config.yaml" || die "could not rewrite the plugin path"
"$kubesched" validate-config "$work/config.yaml" > "$work/validate.txt" 2>&1 \
    || die "kubesched validate-config refused the example configuration: $(cat "$work/validate.txt")"
"$kubesched" simulate --config "$work/config.yaml" --cluster "$src/examples/cluster.yaml" \
    --output json > "$work/simulate.json" || die "kubesched simulate failed"

step "validate-config refuses a misspelt NodeMinResources arg (the plugin's args schema), at its line and column"
sed "s|minCPU:|minCPUU:|" "$work/config.yaml" > "$work/typo.yaml"
if "$kubesched" validate-config "$work/typo.yaml" > "$work/typo.txt" 2>&1; then
    die "validate-config accepted minCPUU: $(cat "$work/typo.txt")"
fi
grep -q 'typo.yaml:27:7: profiles\[1\].pluginConfig\[0\].args: unknown field "minCPUU" (valid: minCPU, minMemory, requiredLabel)' \
    "$work/typo.txt" || die "unexpected message for minCPUU: $(cat "$work/typo.txt")"

"$python" - "$work/simulate.json" <<'PY'
import json, sys

out = json.load(open(sys.argv[1]))
last = {}
for p in out["pods"]:
    last[(p["namespace"], p["name"])] = p

# examples/cluster.yaml: nodes NodeMinResources (minCPU 4, minMemory 16Gi, tier=large) rejects.
rejected = {"small-1", "medium-1", "big-2"}
errors = []
def expect(cond, msg):
    if not cond:
        errors.append(msg)

for name in ("web-1", "web-2", "batch-1", "batch-2", "batch-3"):
    expect(("default", name) in last, f"pod default/{name} missing from the output")
for (ns, name), p in sorted(last.items()):
    print(f"{ns}/{name}: profile={p['profile']} result={p['result']} node={p.get('node')} "
          f"message={p.get('message')!r}")
    if p["profile"] == "example-scheduler":
        if p["result"] == "Scheduled":
            expect(p["node"] not in rejected,
                   f"{name} (example-scheduler) landed on {p['node']}, which NodeMinResources rejects")
        else:
            expect(p["result"] == "Unschedulable", f"{name}: result {p['result']}")
    elif p["profile"] == "default-scheduler":
        expect(p["result"] == "Scheduled", f"{name} (default-scheduler) was not scheduled")

for name in ("batch-1", "batch-2"):
    p = last.get(("default", name), {})
    expect(p.get("profile") == "example-scheduler", f"{name} ran in profile {p.get('profile')}")
    expect(p.get("result") == "Scheduled" and p.get("node") == "big-1",
           f"{name} should be Scheduled on big-1, got {p.get('result')} on {p.get('node')}")
p = last.get(("default", "batch-3"), {})
expect(p.get("result") == "Unschedulable",
       f"batch-3 should be Unschedulable (big-1 full, the rest rejected), got {p.get('result')}")
msg = p.get("message") or ""
for reason in ("node(s) had less than 4 CPU allocatable",
               "node(s) had less than 16Gi memory allocatable",
               "node(s) did not have label example.com/tier=large"):
    expect(reason in msg, f"batch-3's message lacks {reason!r}: {msg!r}")
# The plugin only acts in its profile: default-scheduler pods still use the small nodes.
default_nodes = [last[k]["node"] for k in last if last[k]["profile"] == "default-scheduler"]
expect(default_nodes and all(n in rejected for n in default_nodes),
       f"default-scheduler pods should land on the emptier nodes NodeMinResources would reject, "
       f"got {default_nodes}")

if errors:
    print("\n".join("FAIL: " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print("ok: example-scheduler pods avoided", sorted(rejected), "; default pods used", default_nodes)
PY

step "build examples/one-pod-per-node against the installed CMake package"
"$cmake" -S "$src/examples/one-pod-per-node" -B "$work/one-pod-per-node" -G "$generator" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
"$cmake" --build "$work/one-pod-per-node"
so=$work/one-pod-per-node/libone_pod_per_node.so
[ -f "$so" ] || die "the example build did not produce $so"

step "simulate examples/one-pod-per-node/cluster.yaml with its config.yaml using $so"
sed "s|kubeschedPluginPath: .*|kubeschedPluginPath: $so|" "$src/examples/one-pod-per-node/config.yaml" \
    > "$work/one-pod-per-node.yaml"
grep -q "kubeschedPluginPath: $so" "$work/one-pod-per-node.yaml" || die "could not rewrite the plugin path"
"$kubesched" simulate --config "$work/one-pod-per-node.yaml" \
    --cluster "$src/examples/one-pod-per-node/cluster.yaml" --output json \
    > "$work/one-pod-per-node.json" || die "kubesched simulate failed for one-pod-per-node"

"$python" - "$work/one-pod-per-node.json" <<'PY'
import json, sys

last = {p["name"]: p for p in json.load(open(sys.argv[1]))["pods"]}
# cluster.yaml's table: each pod takes the emptiest node without a one-per-node pod (pre-0 is on
# node-e; other-0 on node-d belongs to another profile), and the fifth finds none left.
want = {"p01": "node-c", "p02": "node-d", "p03": "node-b", "p04": "node-a", "p05": None}
got = {n: (p["node"] if p["result"] == "Scheduled" else None) for n, p in last.items()}
errors = [f"{n}: want {w}, got {got.get(n, 'missing')}" for n, w in want.items() if got.get(n, "missing") != w]
msg = last.get("p05", {}).get("message", "")
if "5 node(s) already had a pod of this profile" not in msg:
    errors.append(f"p05's message lacks the plugin's reason: {msg!r}")
if errors:
    print("\n".join("FAIL: " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print("ok: one-per-node pods spread one per node:", got)
PY

step "build examples/coscheduling (scheduler-plugins' Coscheduling, plugin ABI 1.8) against the installed package"
"$cmake" -S "$src/examples/coscheduling" -B "$work/coscheduling" -G "$generator" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
"$cmake" --build "$work/coscheduling"
so=$work/coscheduling/libcoscheduling.so
[ -f "$so" ] || die "the example build did not produce $so"
sed "s|kubeschedPluginPath: .*|kubeschedPluginPath: $so|" "$src/examples/coscheduling/config.yaml" \
    > "$work/coscheduling.yaml"
"$kubesched" simulate --config "$work/coscheduling.yaml" \
    --cluster "$src/examples/coscheduling/cluster.yaml" --output json > "$work/coscheduling.json" \
    || die "kubesched simulate failed with the Coscheduling plugin"
"$python" - "$work/coscheduling.json" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
last = {}
for p in out["pods"]:
    last[p["name"]] = p
errors = []
nodes = sorted(last[f"resnet-{i}"].get("node") or "-" for i in range(3))
if nodes != ["gpu-1", "gpu-2", "gpu-3"]:
    errors.append(f"resnet's 3 workers should be bound one per node, got {nodes}")
for i in range(4):
    p = last[f"llama-{i}"]
    if p["result"] != "Unschedulable" or "resource gap: map[nvidia.com/gpu:" not in p["message"]:
        errors.append(f"llama-{i}: {p['result']} {p.get('message')!r}")
if any(p["result"] == "Scheduled" and p["name"].startswith("llama") for p in out["pods"]):
    errors.append("a llama worker was bound (the group cannot fit)")
if errors:
    print("\n".join("FAIL: " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print("ok: resnet bound together on", nodes, "; llama refused by its minResources")
PY

step "simulate examples/gang-upstream (the Workload API's PodGroups, GenericWorkload on)"
"$kubesched" simulate --feature-gates GenericWorkload=true --config "$src/examples/gang-upstream/config.yaml" \
    --cluster "$src/examples/gang-upstream/cluster.yaml" --output json > "$work/gang-upstream.json" \
    || die "kubesched simulate failed on examples/gang-upstream"
"$python" - "$work/gang-upstream.json" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
last = {p["name"]: p for p in out["pods"]}
errors = []
nodes = sorted(last[f"resnet-{i}"].get("node") or "-" for i in range(3))
if nodes != ["gpu-1", "gpu-2", "gpu-3"]:
    errors.append(f"resnet's 3 workers should be bound one per node, got {nodes}")
for i in range(1, 4):
    p = last[f"llama-{i}"]
    if p["result"] != "Unschedulable" or "minCount (4) cannot be satisfied" not in p["message"]:
        errors.append(f"llama-{i}: {p['result']} {p.get('message')!r}")
if any(p["result"] == "Scheduled" and p["name"].startswith("llama") for p in out["pods"]):
    errors.append("a llama worker was bound (the gang cannot fit)")
if errors:
    print("\n".join("FAIL: " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print("ok: resnet's gang bound together on", nodes, "; llama's gang of 4 refused whole")
PY
