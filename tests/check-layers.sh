#!/usr/bin/env bash
# The one-way layers of core/ (docs/ARCHITECTURE.md), checked on the sources:
#
#   sdk  <-  core/util  <-  core/cel  <-  core/api  <-  core/config  <-  core/sched  <-  core/live  <-  core/cli
#
# - a file in core/<layer>/ includes core headers by their layer-qualified path ("api/objects.h")
#   and only from its own layer or a lower one;
# - no file outside plugins/ includes a plugin's header (plugins/*/*.h), and plugins include
#   nothing of core/ (they are written against sdk/ only; their white-box tests in
#   plugins/<name>/tests/ may use the core's test harness);
# - the in-tree module's declaration (plugins/include/in_tree.h) is included only by
#   plugins/module.c, core/cli/main.c (the program, in no layer library) and tests/: no core
#   library names it;
# - with a build folder as argument, the same order is checked on the symbols of the layer
#   libraries (an `extern` declaration cannot get around it), and ks_plugins and the core layers
#   must not reference each other's symbols.
# Usage: tests/check-layers.sh [BUILD_DIR]     Exit status 1 on any violation, listing each.
set -euo pipefail
cd "$(dirname "$0")/.."
layers=(util cel api config sched live cli)
declare -A rank
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done
bad=0
fail() { echo "check-layers: $*"; bad=1; }

# Every core header, by base name -> its layer (to catch an unqualified include).
declare -A header_layer
for h in core/*/*.h; do
  l=${h#core/}; l=${l%%/*}; header_layer[$(basename "$h")]=$l
done
for l in $(ls core); do
  [ -n "${rank[$l]+x}" ] || fail "core/$l/ is not a known layer (known: ${layers[*]}); add it to tests/check-layers.sh and docs/ARCHITECTURE.md"
done
[ -z "$(find core -maxdepth 1 -type f -name '*.[ch]')" ] || fail "files directly under core/: $(find core -maxdepth 1 -type f -name '*.[ch]' | tr '\n' ' ')(each belongs to a layer folder)"

plugin_headers=$(cd plugins && ls */*.h | xargs -n1 basename | sort -u)
while IFS=: read -r file line inc; do
  inc=${inc#*\"}; inc=${inc%%\"*}
  if [ "$(basename "$inc")" = in_tree.h ]; then
    case "$file" in
      core/cli/main.c | tests/* | plugins/module.c) ;;
      *) fail "$file:$line: includes the in-tree module \"$inc\" (only core/cli/main.c and tests/ register it)" ;;
    esac
    continue
  fi
  case "$file" in
    core/*)
      own=${file#core/}; own=${own%%/*}
      first=${inc%%/*}
      if [ "$first" = "$inc" ]; then
        if [ -n "${header_layer[$inc]+x}" ]; then
          fail "$file:$line: includes \"$inc\" unqualified; write \"${header_layer[$inc]}/$inc\""
        fi
        continue
      fi
      [ "$first" = kubesched ] && continue
      if [ -z "${rank[$first]+x}" ]; then
        fail "$file:$line: includes \"$inc\", which is neither the SDK nor a core layer"
      elif [ "${rank[$first]}" -gt "${rank[$own]}" ]; then
        fail "$file:$line: core/$own includes \"$inc\" of the higher layer core/$first"
      fi ;;
  esac
  base=$(basename "$inc")
  case "$file" in
    plugins/*/tests/*) ;; # a plugin's white-box tests drive it through the core's test harness
    plugins/*)
      if [ -n "${header_layer[$base]+x}" ] && [ "$inc" != "kubesched/$base" ]; then
        fail "$file:$line: a plugin includes the core header \"$inc\" (plugins see sdk/ only)"
      fi ;;
    *)
      if [[ "$inc" == *plugins/* ]] || { grep -qx "$base" <<<"$plugin_headers" && [[ "$inc" != */* || "$inc" == ../* ]]; }; then
        fail "$file:$line: includes the plugin header \"$inc\" from outside plugins/"
      fi ;;
  esac
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' core plugins sdk tests examples \
           --include='*.c' --include='*.h' | sed -E 's/^([^:]+):([0-9]+):/\1:\2:/')

# Symbols: a layer library may only use what it or a lower layer defines.
build=${1:-}
if [ -n "$build" ]; then
  for l in "${layers[@]}" plugins; do
    [ -f "$build/libks_$l.a" ] || { fail "$build/libks_$l.a is missing (build first)"; continue; }
  done
  if [ $bad = 0 ]; then
    declare -A def_layer
    for l in "${layers[@]}" plugins; do
      while read -r sym; do def_layer[$sym]=$l; done < <(nm -g --defined-only "$build/libks_$l.a" 2>/dev/null | awk 'NF==3 {print $3}')
    done
    for l in "${layers[@]}" plugins; do
      while read -r obj sym; do
        d=${def_layer[$sym]:-}
        [ -n "$d" ] && [ "$d" != "$l" ] || continue
        if [ "$l" = plugins ] || [ "$d" = plugins ]; then
          fail "libks_$l.a ($obj) uses $sym of libks_$d.a: in-tree plugins and core meet only through the SDK's module and host table"
        elif [ "${rank[$d]}" -gt "${rank[$l]}" ]; then
          fail "libks_$l.a ($obj) uses $sym of the higher layer libks_$d.a"
        fi
      done < <(nm -A -u "$build/libks_$l.a" 2>/dev/null | awk '{sub(/:$/, "", $1); n=split($1, p, ":"); print p[n], $NF}')
    done
  fi
fi
if [ $bad = 0 ]; then echo "check-layers: ok (${layers[*]}; plugins apart)"; fi
exit $bad
