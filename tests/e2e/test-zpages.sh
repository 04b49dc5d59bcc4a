#!/usr/bin/env bash
# /statusz and /flagz (kube-scheduler v1.37's ComponentStatusz / ComponentFlagz, beta and on by
# default since v1.36), kubesched's next to the real kube-scheduler's on the same control plane:
#   - text/plain by default: the same header and the same lines in the same order (kubesched says
#     "Compiler version" where upstream says "Go version"), Binary version 0.1.0, Emulation
#     version 1.37 (upstream: 1.37 too), Paths a subset of upstream's;
#   - the structured config.k8s.io/v1beta1 Statusz: the same keys but goVersion, metadata.name;
#   - /flagz: every kubesched flag, with the values it was started with, under a name that
#     kube-scheduler's /flagz lists too; the JSON Flagz object;
#   - an Accept neither offers: 406 with the same Status message start.
# kube-scheduler is asked with the admin client certificate (system:masters): upstream authorizes
# /statusz and /flagz (system:monitoring grants them); kubesched is asked with the admin token
# (lib.sh ks_get), behind the same delegated authorization.
# Usage: tests/e2e/test-zpages.sh (env: see lib.sh)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
e2e_begin --with-scheduler
ks_start main "$(ks_config kubesched)"
ks_wait_synced main || exit 1
pki="$E2E_DIR/pki"
up() { curl -sk --cert "$pki/admin.crt" --key "$pki/admin.key" "$@"; }
json_accept() { echo "Accept: application/json;as=$1;g=config.k8s.io;v=v1beta1"; }

ks_text=$(ks_get main /statusz) up_text=$(up "$KUBESCHED_E2E_SCHEDULER_URL/statusz")
echo "--- kubesched /statusz:"; echo "$ks_text"; echo "--- kube-scheduler /statusz:"; echo "$up_text"
# The labels of each line, with the delimiter (one of ":", ": ", "=", " ", then a space) cut.
labels() { sed -nE 's/^(Started|Up|Go version|Compiler version|Binary version|Emulation version|Paths)(: |:|=| ) .*/\1/p'; }
ks_labels=$(labels <<<"$ks_text" | tr '\n' ',') up_labels=$(labels <<<"$up_text" | sed 's/^Go version$/Compiler version/' | tr '\n' ',')
if [ -n "$up_labels" ] && [ "$ks_labels" = "$up_labels" ]; then ok "statusz text: the same lines as kube-scheduler's ($ks_labels Go version named Compiler version)"
else bad "statusz lines: kubesched '$ks_labels', kube-scheduler '$up_labels'"; fi
if [ "$(sed -n 2p <<<"$ks_text")" = "kubesched statusz" ] && [ "$(sed -n 2p <<<"$up_text")" = "kube-scheduler statusz" ] &&
   [ "$(sed -n 3p <<<"$ks_text")" = "$(sed -n 3p <<<"$up_text")" ]; then ok "statusz text: the same header and warning line"
else bad "statusz header differs"; fi
val() { sed -nE "s/^$1(: |:|=| ) (.*)/\\2/p" <<<"$2"; }
[ "$(val 'Binary version' "$ks_text")" = 0.1.0 ] && ok "statusz: Binary version 0.1.0" || bad "statusz: Binary version '$(val 'Binary version' "$ks_text")'"
ks_emu=$(val 'Emulation version' "$ks_text") up_emu=$(val 'Emulation version' "$up_text")
[ "$ks_emu" = 1.37 ] && [ "$up_emu" = 1.37 ] && ok "statusz: Emulation version 1.37, as kube-scheduler v1.37.2's" || bad "statusz: Emulation version kubesched '$ks_emu', kube-scheduler '$up_emu'"
ks_paths=$(val Paths "$ks_text") up_paths=$(val Paths "$up_text") missing=
for p in $ks_paths; do grep -qw -- "$p" <<<"$up_paths" || missing+=" $p"; done
[ -n "$ks_paths" ] && [ -z "$missing" ] && ok "statusz: Paths '$ks_paths' all among kube-scheduler's '$up_paths'" || bad "statusz: Paths not upstream's:$missing"

ks_json=$(ks_get main /statusz -H "$(json_accept Statusz)") up_json=$(up "$KUBESCHED_E2E_SCHEDULER_URL/statusz" -H "$(json_accept Statusz)")
echo "--- kubesched JSON: $ks_json"; echo "--- kube-scheduler JSON: $(jq -c . <<<"$up_json")"
ks_keys=$(jq -c 'keys' <<<"$ks_json" 2>/dev/null) up_keys=$(jq -c 'keys - ["goVersion"]' <<<"$up_json" 2>/dev/null)
[ -n "$up_keys" ] && [ "$ks_keys" = "$up_keys" ] && ok "statusz JSON: the same keys as kube-scheduler's but goVersion: $ks_keys" || bad "statusz JSON keys: kubesched $ks_keys, kube-scheduler $up_keys"
[ "$(jq -r '.kind + " " + .apiVersion + " " + .metadata.name' <<<"$ks_json")" = "Statusz config.k8s.io/v1beta1 kubesched" ] \
  && ok "statusz JSON: Statusz config.k8s.io/v1beta1 named kubesched" || bad "statusz JSON: $ks_json"
age=$(( $(date -u +%s) - $(date -u -d "$(jq -r .startTime <<<"$ks_json")" +%s) ))
[ "$age" -ge 0 ] && [ "$age" -lt 600 ] && ok "statusz JSON: startTime $age s ago" || bad "statusz JSON: startTime $(jq -r .startTime <<<"$ks_json")"

ks_flagz=$(ks_get main /flagz) up_flagz=$(up "$KUBESCHED_E2E_SCHEDULER_URL/flagz" -H "$(json_accept Flagz)")
echo "--- kubesched /flagz:"; echo "$ks_flagz"
fl=$(ks_get main /flagz -H "$(json_accept Flagz)")
if [ "$(jq -r '.flags["secure-port"] + " " + .flags["bind-address"] + " " + .flags.v + " " + .flags["leader-elect"]' <<<"$fl")" = "${KS_PORT[main]} 127.0.0.1 2 true" ]; then
  ok "flagz JSON: secure-port ${KS_PORT[main]}, bind-address 127.0.0.1, v 2, leader-elect true (its default)"
else bad "flagz JSON: $fl"; fi
grep -Eq "^secure-port(: |:|=| )${KS_PORT[main]}\$" <<<"$ks_flagz" && ok "flagz text: secure-port=${KS_PORT[main]}" || bad "flagz text lacks secure-port"
not_upstream=$(jq -r --argjson up "$(jq '.flags // {}' <<<"$up_flagz")" '.flags | keys[] | select(. as $k | $up | has($k) | not)' <<<"$fl" | tr '\n' ' ')
n_up=$(jq '.flags | length' <<<"$up_flagz" 2>/dev/null)
[ "${n_up:-0}" -gt 0 ] && [ -z "$not_upstream" ] && ok "flagz: every kubesched flag ($(jq '.flags | length' <<<"$fl")) is one of kube-scheduler's ($n_up)" || bad "flagz: not kube-scheduler flags: '$not_upstream' (upstream lists $n_up)"

ks_406=$(ks_get main /statusz -H 'Accept: application/xml' -w ' %{http_code}') up_406=$(up "$KUBESCHED_E2E_SCHEDULER_URL/statusz" -H 'Accept: application/xml' -w ' %{http_code}')
m406() { jq -r '.reason + ": " + (.message | sub(": .*"; ":"))' <<<"${1% *}" 2>/dev/null; }
if [ "${ks_406##* }" = 406 ] && [ "${up_406##* }" = 406 ] && [ "$(m406 "$ks_406")" = "$(m406 "$up_406")" ]; then ok "Accept: application/xml is 406 from both ($(m406 "$ks_406"))"
else bad "406: kubesched '$ks_406', kube-scheduler '$up_406'"; fi
ks_stop main TERM
ks_no_errors main
exit 0
