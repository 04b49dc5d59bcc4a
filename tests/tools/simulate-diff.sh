#!/usr/bin/env bash
# Compares the decisions of two kubesched binaries (`simulate --output json --explain`: results,
# nodes, messages, per-plugin filter verdicts and scores, victims) on every cluster fixture of
# tests/fixtures/sim and on random clusters from tests/tools/gen-cluster.py (small ones below and
# large ones above the 100-node sampling threshold), each under the default configuration and
# under the extra configurations of this script (node sampling, no Score plugins, weights).
# For a change that must not change behaviour: build the old tree and the new one, then
#   tests/tools/simulate-diff.sh OLD/build/kubesched NEW/build/kubesched [RANDOM_CASES]
# Prints one line per case and "N same, M different"; exit 1 when any differs.
# (Nothing here is run by tests/run.sh: it needs two builds.)
set -euo pipefail
old=$1 new=$2 cases=${3:-12}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cat > "$work/sampling.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 10
YAML
cat > "$work/noscore.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: "*"}]
YAML
cat > "$work/weights.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled: [{name: ImageLocality, weight: 7}, {name: NodeResourcesFit, weight: 3}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
YAML
same=0 diff=0 varies=0
compare() { # name cluster [config]
  local name=$1 cluster=$2 cfg=${3:-} a b
  local args=(simulate --cluster "$cluster" --output json --explain --seed 7)
  [ -z "$cfg" ] || args+=(--config "$cfg")
  a=$(run "$old" "${args[@]}")
  b=$(run "$new" "${args[@]}")
  if [ "$a" = "$b" ]; then same=$((same + 1)); echo "same  $name ($(grep -o '"result"' <<<"$a" | wc -l) attempts)"; return; fi
  # simulate binds on a thread pool, and whether a bind's pod-add event lands before or during
  # the next pod's cycle can move an unschedulable pod (upstream's in-flight events): the old
  # binary itself may vary there. The new output counts as the same when the old binary gives
  # it too within a few runs.
  for _ in $(seq 1 20); do
    if [ "$(run "$old" "${args[@]}")" = "$b" ]; then
      same=$((same + 1)); varies=$((varies + 1)); echo "same  $name (the old binary varies between runs)"; return
    fi
  done
  diff=$((diff + 1)); echo "DIFF  $name"; diff <(echo "$a") <(echo "$b") | head -5 || true
}
run() { local bin=$1; shift; "$bin" "$@" 2>&1 | grep -v '^[IWE][0-9]' || true; }
for f in "$here"/../fixtures/sim/*.yaml "$here"/../fixtures/sim/*.json; do
  case "$f" in *config*) continue ;; esac
  compare "$(basename "$f")" "$f"
done
for i in $(seq 1 "$cases"); do
  if [ $((i % 3)) = 0 ]; then n=$((150 + i * 7)); p=400; else n=$((5 + i * 3)); p=60; fi
  python3 "$here/gen-cluster.py" "$i" "$n" "$p" > "$work/c$i.yaml"
  compare "random seed $i ($n nodes)" "$work/c$i.yaml"
  for c in sampling noscore weights; do compare "random seed $i ($n nodes) + $c" "$work/c$i.yaml" "$work/$c.yaml"; done
done
echo "simulate-diff: $same same ($varies of them only after reruns: the old binary varies), $diff different"
[ "$diff" = 0 ]
