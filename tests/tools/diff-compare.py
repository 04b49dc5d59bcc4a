#!/usr/bin/env python3
"""The comparing half of the differential test (tests/e2e/test-differential.sh): reads what
tests/tools/diff-run.py recorded (per pod: the snapshot it was decided on, kube-scheduler's
decision, kube-scheduler's log), runs `kubesched simulate --explain` on each snapshot, and
compares the two decisions check by check.

Usage:
  diff-compare.py --self-test               checks the klog parser on canned lines
  diff-compare.py --workdir DIR --kubesched BIN --config SCHED.yaml [--report-json F]
                  [--report-md F] [--min-agreement 99] [--jobs 2]
Exit status: 0 when every check agrees on at least --min-agreement percent of the pods it
applies to, 1 otherwise, 2 on a usage or input error.

kube-scheduler's log (--vmodule=schedule_one=10) gives, per scheduling attempt of a pod:
"About to try and schedule pod" (start), "Plugin scored node for pod" (plugin, node, score
after NormalizeScore and after the plugin's weight: frameworkImpl.normalizeScores multiplies
before RunScorePlugins returns), "Calculated node's final score for pod" (the weighted sum),
then "Successfully bound pod to node" or "Unable to schedule pod; no fit; waiting" (err = the
FitError message). With exactly one feasible node there is no scoring and so no score line
(schedulePod returns that node at once). Plugins whose PreScore returned Skip are not logged.

The checks, on each pod's first attempt (kubesched's first entry for the pod):
  outcome   both scheduled it, or both found it unschedulable
  feasible  the same feasible nodes (scored nodes; the chosen node when one was feasible;
            none when unschedulable)
  scores    every plugin's weighted score on every node both scored (kubesched's `score` is
            before the weight, so it is multiplied by the profile's weight); a plugin one side
            did not log counts as 0 there (a skipped plugin adds nothing); a plugin kubesched
            does not ship that kube-scheduler scored 0 on every node is not a disagreement
            (it changed nothing) and is listed in the report
  final     the final score of every node both scored
  chosen    kube-scheduler's node is one of kubesched's highest-scoring nodes and kubesched's
            node one of kube-scheduler's (which of equal nodes each side takes is not compared:
            kube-scheduler's pick depends on the order its parallel Filter found them in)
  message   the failure message (kube-scheduler: the PodScheduled condition's message); a
            PreFilter rejection's " not found" tail from DynamicResources' PostFilter, which
            kubesched does not ship, is accepted for kubesched's "preemption: ... not helpful"
            tail and counted in the report (dra_postfilter_tail)
  preemption the nominated node and the victims, and where the preemptor was bound after it
Each check's denominator is the pods it applies to; a pod counts once per check."""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

CHECKS = ["outcome", "feasible", "scores", "final", "chosen", "message", "preemption",
          "volume binding"]
WFFC = "volume: claim unbound WaitForFirstConsumer"

HEAD = re.compile(r'^([IWEF])\d{4} [0-9:.]+\s+\d+ ([^\]]+)\] "((?:[^"\\]|\\.)*)"(.*)$')
KV = re.compile(r'\s*([A-Za-z0-9_.-]+)=')


def unquote(s):
    try:
        return json.loads(s)
    except ValueError:
        return s[1:-1]


def parse_kvs(rest):
    """klog text key/value pairs: key="Go-quoted", key=bare, key=<multi-line block (first line)."""
    out = {}
    i = 0
    while i < len(rest):
        m = KV.match(rest, i)
        if not m:
            break
        key, i = m.group(1), m.end()
        if i < len(rest) and rest[i] == '"':
            j = i + 1
            while j < len(rest) and rest[j] != '"':
                j += 2 if rest[j] == "\\" else 1
            out[key] = unquote(rest[i:j + 1])
            i = j + 1
        else:
            j = rest.find(" ", i)
            j = len(rest) if j < 0 else j
            out[key] = rest[i:j]
            i = j
    return out


def klog_records(lines):
    """Joins klog's multi-line values (`key=<` newline, tab-indented lines, ` >`) into one
    quoted value, so that every record is one line for HEAD/parse_kvs."""
    buf = None
    for line in lines:
        line = line.rstrip("\n")
        if buf is not None:
            if line == " >":
                yield buf[0] + json.dumps("\n".join(buf[1])) + buf[2]
                buf = None
            else:
                buf[1].append(line[1:] if line.startswith("\t") else line)
            continue
        if line.endswith("=<") and HEAD.match(line[:-1] + '""'):
            buf = (line[:-1], [], "")
            continue
        yield line


def parse_log(path):
    """{ "ns/name": [attempt, ...] }, attempt = {"scores": {node: {plugin: int}},
    "final": {node: int}, "bound": node|None, "err": str|None, "nominated": node|None}."""
    with open(path, errors="replace") as f:
        return parse_log_lines(f)


def parse_log_lines(lines):
    pods = {}
    for line in klog_records(lines):
        m = HEAD.match(line)
        if not m:
            continue
        msg = unquote('"%s"' % m.group(3))
        if msg not in ("About to try and schedule pod", "Plugin scored node for pod",
                       "Calculated node's final score for pod", "Successfully bound pod to node",
                       "Unable to schedule pod; no fit; waiting",
                       "Updating pod condition and nominated node name"):
            continue
        kv = parse_kvs(m.group(4))
        key = kv.get("pod")
        if not key:
            continue
        attempts = pods.setdefault(key, [])
        if msg == "About to try and schedule pod" or not attempts:
            attempts.append({"scores": {}, "final": {}, "bound": None, "err": None,
                             "nominated": None})
            if msg == "About to try and schedule pod":
                continue
        a = attempts[-1]
        if msg == "Plugin scored node for pod":
            a["scores"].setdefault(kv["node"], {})[kv["plugin"]] = int(kv["score"])
        elif msg == "Calculated node's final score for pod":
            a["final"][kv["node"]] = int(kv["score"])
        elif msg == "Successfully bound pod to node":
            a["bound"] = kv.get("node")
        elif msg == "Unable to schedule pod; no fit; waiting":
            a["err"] = kv.get("err")
        elif kv.get("nominatedNodeName") and kv.get("conditionType"):
            # (with the PodScheduled=False condition: a preemption's nomination)
            a["nominated"] = kv["nominatedNodeName"]
        elif kv.get("nominatedNodeName"):
            # Without a condition: v1.37's binding cycle (NominatedNodeNameForExpectation)
            # nominates the chosen node before a PreBind that will work (VolumeBinding with
            # claims to bind) -- no preemption. Kept apart for the report.
            a["expected"] = kv["nominatedNodeName"]
    return pods


def profile_weights(kubesched, config):
    """Score plugin weights of the default-scheduler profile, from `kubesched validate-config`
    (the same effective profile simulate uses)."""
    out = subprocess.run([kubesched, "validate-config", config], capture_output=True, text=True)
    w = {}
    prof = None
    for line in out.stdout.splitlines():
        m = re.match(r'^Profile "([^"]+)"', line)
        if m:
            prof = m.group(1)
        m = re.match(r"^\s+Score\s+(.*)$", line)
        if m and prof == "default-scheduler":
            for name, weight in re.findall(r"([A-Za-z0-9_.-]+) \(weight (\d+)\)", m.group(1)):
                w[name] = int(weight)
    if not w:
        raise SystemExit("diff-compare: no Score plugins found in `%s validate-config %s`:\n%s%s"
                         % (kubesched, config, out.stdout, out.stderr))
    return w


def simulate(kubesched, config, snapshot):
    p = subprocess.run([kubesched, "simulate", "--cluster", snapshot, "--config", config,
                        "--output", "json", "--explain"], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    try:
        return json.loads(p.stdout), p.stderr.strip()
    except ValueError as e:
        return None, "unparsable output: %s" % e


def volume_features(pod, items):
    """What kind of volumes a pending pod uses, classified on its snapshot (the claims and PVs
    kube-scheduler saw)."""
    ns = pod["metadata"]["namespace"]
    claims = {it["metadata"]["name"]: it for it in items
              if it["kind"] == "PersistentVolumeClaim" and it["metadata"].get("namespace") == ns}
    pvs = {it["metadata"]["name"]: it for it in items if it["kind"] == "PersistentVolume"}
    classes = {it["metadata"]["name"]: it for it in items if it["kind"] == "StorageClass"}
    out = set()
    for v in pod["spec"].get("volumes") or []:
        if "persistentVolumeClaim" in v:
            c = claims.get(v["persistentVolumeClaim"]["claimName"])
            if c is None:
                out.add("volume: claim missing")
                continue
            vn = c["spec"].get("volumeName")
            if (c.get("status") or {}).get("phase") == "Lost":
                out.add("volume: claim Lost")
            elif vn and "pv.kubernetes.io/bind-completed" in (c["metadata"].get("annotations") or {}):
                pv = pvs.get(vn)
                if pv is None:
                    out.add("volume: claim bound to a missing PV")
                else:
                    out.add("volume: claim bound (%s PV)" % ("CSI" if "csi" in pv["spec"] else "in-tree"))
                    if "ReadWriteOncePod" in c["spec"].get("accessModes", []):
                        out.add("volume: ReadWriteOncePod claim")
            else:
                sc = classes.get(c["spec"].get("storageClassName") or "")
                if not vn and sc and sc.get("volumeBindingMode") == "WaitForFirstConsumer":
                    out.add(WFFC + (" (static PVs)" if sc.get("provisioner") ==
                                    "kubernetes.io/no-provisioner" else " (provisioner)"))
                    out.add(WFFC)
                else:
                    out.add("volume: claim unbound Immediate or pre-bound")
        elif "ephemeral" in v:
            out.add("volume: generic ephemeral")
        elif set(v) & {"gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd"}:
            out.add("volume: in-line disk")
    if out:
        out.add("volumes (any of the below)")
    return out


def features(pod, items=()):
    """What a pending pod uses, for the report's coverage table."""
    sp = pod["spec"]
    aff = sp.get("affinity") or {}
    cs = sp.get("containers", []) + sp.get("initContainers", [])
    out = set()
    if sp.get("nodeSelector"):
        out.add("nodeSelector")
    na = aff.get("nodeAffinity") or {}
    if na.get("requiredDuringSchedulingIgnoredDuringExecution"):
        out.add("nodeAffinity required")
    if na.get("preferredDuringSchedulingIgnoredDuringExecution"):
        out.add("nodeAffinity preferred")
    for kind in ("podAffinity", "podAntiAffinity"):
        a = aff.get(kind) or {}
        if a.get("requiredDuringSchedulingIgnoredDuringExecution"):
            out.add(kind + " required")
        if a.get("preferredDuringSchedulingIgnoredDuringExecution"):
            out.add(kind + " preferred")
    # (DefaultTolerationSeconds admission gives every pod not-ready/unreachable tolerations)
    if any(t.get("key") not in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
           for t in sp.get("tolerations") or []):
        out.add("tolerations")
    if any(p.get("hostPort") for c in cs for p in c.get("ports", [])):
        out.add("hostPorts")
    tsc = sp.get("topologySpreadConstraints") or []
    for c in tsc:
        out.add("topologySpread " + c["whenUnsatisfiable"])
        if c.get("minDomains"):
            out.add("topologySpread minDomains")
    if sp.get("initContainers"):
        out.add("initContainers")
    if any(c.get("restartPolicy") == "Always" for c in sp.get("initContainers", [])):
        out.add("sidecars")
    if sp.get("overhead"):
        out.add("overhead")
    if sp.get("resources"):
        out.add("pod-level resources")
    if any(EXT_RES in (c.get("resources") or {}).get("requests", {}) for c in cs):
        out.add("extended resource")
    if not sp.get("resources") and not any((c.get("resources") or {}).get("requests") for c in cs):
        out.add("best effort")
    if sp.get("priority", 0) != 0:
        out.add("priority != 0")
    return out | volume_features(pod, items)


EXT_RES = "example.com/foo"


def maxset(scores):
    if not scores:
        return set()
    top = max(scores.values())
    return {n for n, s in scores.items() if s == top}


DRA_TAIL = " not found"
PREEMPTION_TAIL = " preemption: "


def dra_postfilter_tail(up_msg, ks_msg, ks_nominated=None):
    """True when the messages differ only in what DynamicResources' PostFilter did upstream.
    In v1.37's default profile DynamicResources' PostFilter runs before DefaultPreemption's;
    when an earlier PreFilter rejected the pod, DynamicResources' PreFilter never ran, its
    PostFilter finds no cycle state and ends PostFilter with the Error "not found"
    (getStateData), which FitError.Error() appends: "0/N nodes are available: <PreFilter
    message>. not found". kubesched does not ship DynamicResources, so its DefaultPreemption
    speaks instead: "... <PreFilter message>. preemption: 0/N nodes are available: N Preemption
    is not helpful for scheduling." (or "preemption: not eligible due to preemptionPolicy=Never."
    for such a pod). Accepted when both have the same PreFilter message and kubesched nominated
    no node (after a PreFilter rejection there is nothing to preempt for)."""
    if not up_msg or not ks_msg or not up_msg.endswith("." + DRA_TAIL) or ks_nominated:
        return False
    return ks_msg.startswith(up_msg[:-len(DRA_TAIL)] + PREEMPTION_TAIL)


def compare_volume_binding(rec, ks, items):
    """The "volume binding" check: what VolumeBinding's PreBind bound the pod's unbound
    WaitForFirstConsumer claims to (diff-run.py's volume_binding: per claim the PV the PV
    controller bound it to after kube-scheduler's PreBind, the selected-node annotation, whether
    the PV was provisioned) against kubesched's "volumes" (PreBind's writes: a PV's claimRef, or
    a claim's selected node). Applies when both bound the pod (a preemptor: after its
    preemption; the attempt that bound it wrote the volumes), on the same node (on different nodes of equal score the PV choice follows the node: the chosen
    check judges the tie). A provisioned claim agrees when kubesched selected the same node for
    it; a statically bound one when kubesched bound it to the same PV, or to a PV of the same
    capacity: upstream's FindMatchingVolume keeps the first smallest match in the order of the
    assume cache's index, a Go map, so among equal-capacity PVs its choice is not determined
    (kubesched takes name order). Returns (True|False|None, details)."""
    claims = rec.get("wffc_claims")
    entries = [e for e in ks["pods"] if e["namespace"] == rec["namespace"] and e["name"] == rec["name"]]
    if not claims or not entries or not rec.get("node"):
        return None, None
    k1 = entries[-1]
    if k1.get("result") != "Scheduled":
        return None, None
    if k1.get("node") != rec["node"]:
        return None, {"different_nodes": [rec["node"], k1.get("node")]}
    cap = {it["metadata"]["name"]: (it["spec"].get("capacity") or {}).get("storage")
           for it in items if it["kind"] == "PersistentVolume"}
    ksw = {}
    for w in k1.get("volumes") or []:
        ksw.setdefault(w["claim"], {}).update({k: v for k, v in w.items() if k != "claim"})
    up = rec.get("volume_binding") or {}
    det = {"upstream": up, "kubesched": ksw}
    ok = set(ksw) <= set(claims)
    for c in claims:
        u, k = up.get(c) or {}, ksw.get(c, {})
        if u.get("provisioned"):
            ok = ok and k.get("selectedNode") == u.get("selectedNode") == rec["node"] and \
                "persistentVolume" not in k
        elif u.get("pv") and u["pv"] == k.get("persistentVolume"):
            pass
        elif u.get("pv") and k.get("persistentVolume") in cap and \
                cap[k["persistentVolume"]] == cap.get(u["pv"]) and "selectedNode" not in k:
            det.setdefault("equal_capacity_ties", []).append(c)
        else:
            ok = False
    return ok, det


def compare_pod(rec, up_attempts, ks, weights):
    """Returns {check: True|False|None (n/a)}, details, per-plugin {plugin: True|False}."""
    res = {c: None for c in CHECKS}
    det = {}
    plug = {}
    key = "%s/%s" % (rec["namespace"], rec["name"])
    entries = [e for e in ks["pods"] if e["namespace"] == rec["namespace"] and e["name"] == rec["name"]]
    if not entries:
        det["error"] = "kubesched printed no entry for the pod"
        res["outcome"] = False
        return res, det, plug
    k1 = entries[0]
    if not up_attempts:
        det["error"] = "kube-scheduler's log has no attempt for %s" % key
        res["outcome"] = False
        return res, det, plug
    u1 = up_attempts[0]
    # kube-scheduler's first attempt: bound (first attempt succeeded) or failed.
    up_first_ok = bool(u1["bound"]) or (not u1["err"] and rec.get("node") and not rec.get("message"))
    up_node = u1["bound"] or (rec.get("node") if up_first_ok else None)
    ks_ok = k1["result"] == "Scheduled"
    res["outcome"] = (up_first_ok == ks_ok)
    up_msg = rec.get("message") if rec.get("message") is not None else u1.get("err")
    det["upstream"] = {"result": "Scheduled" if up_first_ok else "Unschedulable", "node": up_node,
                       "message": up_msg}
    det["kubesched"] = {"result": k1["result"], "node": k1.get("node"),
                        "message": k1.get("message")}
    # feasible
    if up_first_ok:
        up_feas = set(u1["final"]) if u1["final"] else {up_node}
    else:
        up_feas = set()
    if ks_ok:
        ks_feas = set(k1.get("finalScore") or {}) or {k1["node"]}
    else:
        ks_feas = set()
    res["feasible"] = up_feas == ks_feas
    if not res["feasible"]:
        det["feasible"] = {"upstream_only": sorted(up_feas - ks_feas),
                           "kubesched_only": sorted(ks_feas - up_feas)}
        # why kubesched dropped / kept each differing node
        filt = k1.get("filter") or {}
        det["feasible"]["kubesched_filter"] = {n: filt.get(n) for n in sorted(up_feas ^ ks_feas)}
    # scores and final
    ks_scores = k1.get("score") or {}
    ks_final = k1.get("finalScore") or {}
    common = sorted(set(u1["final"]) & set(ks_final))
    if common:
        plugins = set(weights)
        for n in common:
            plugins |= set(u1["scores"].get(n, {}))
        bad_scores = {}
        ignored = set()
        for pl in sorted(plugins):
            ups = {n: u1["scores"].get(n, {}).get(pl, 0) for n in common}
            if pl not in weights:
                # a plugin kubesched does not ship: agrees only while it scored 0 everywhere
                if all(v == 0 for v in ups.values()):
                    ignored.add(pl)
                    continue
            w = weights.get(pl, 0)
            kss = {n: (ks_scores.get(n, {}).get(pl, 0)) * w for n in common}
            ok = ups == kss
            plug[pl] = ok
            if not ok:
                bad_scores[pl] = {n: [ups[n], kss[n]] for n in common if ups[n] != kss[n]}
        res["scores"] = not bad_scores
        if bad_scores:
            det["scores"] = bad_scores  # plugin -> node -> [kube-scheduler, kubesched] (weighted)
        if ignored:
            det["ignored_plugins"] = sorted(ignored)
        badf = {n: [u1["final"][n], ks_final[n]] for n in common if u1["final"][n] != ks_final[n]}
        res["final"] = not badf
        if badf:
            det["final"] = badf
    # chosen
    if up_first_ok and ks_ok:
        up_max = maxset(u1["final"]) if u1["final"] else {up_node}
        ks_max = maxset(ks_final) if ks_final else {k1["node"]}
        res["chosen"] = up_node in ks_max and k1["node"] in up_max
        if not res["chosen"]:
            det["chosen"] = {"upstream_max": sorted(up_max), "kubesched_max": sorted(ks_max)}
    # message
    if not up_first_ok and not ks_ok:
        res["message"] = (up_msg == k1.get("message"))
        if not res["message"] and dra_postfilter_tail(up_msg, k1.get("message"),
                                                      k1.get("nominatedNode")):
            res["message"] = True
            det["dra_postfilter_tail"] = True
    # preemption
    up_nominated = u1.get("nominated") or rec.get("nominated")
    if up_nominated or k1.get("nominatedNode"):
        final_ks = entries[-1]
        ks_victims = sorted("%s/%s" % (v["namespace"], v["name"]) for v in k1.get("victims") or [])
        ok = (up_nominated == k1.get("nominatedNode") and
              sorted(rec.get("victims") or []) == ks_victims and
              rec.get("node") == (final_ks.get("node") if final_ks["result"] == "Scheduled" else None))
        res["preemption"] = ok
        det["preemption"] = {"upstream": {"nominated": up_nominated,
                                          "victims": rec.get("victims"), "node": rec.get("node")},
                             "kubesched": {"nominated": k1.get("nominatedNode"), "victims": ks_victims,
                                           "node": final_ks.get("node")}}
    return res, det, plug


SELF_TEST_LOG = r'''I1201 20:48:14.000001   1 schedule_one.go:101] "About to try and schedule pod" pod="ns/p"
I1201 20:48:14.000002   1 schedule_one.go:984] "Plugin scored node for pod" pod="ns/p" plugin="TaintToleration" node="n1" score=300
I1201 20:48:14.000003   1 schedule_one.go:984] "Plugin scored node for pod" pod="ns/p" plugin="ImageLocality" node="n1" score=0
I1201 20:48:14.000004   1 schedule_one.go:1052] "Calculated node's final score for pod" pod="ns/p" node="n1" score=300
I1201 20:48:14.000005   1 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="ns/p" err="0/2 nodes are available: 1 node(s) had untolerated taint(s), 1 \"quoted\" reason."
I1201 20:48:14.000006   1 schedule_one.go:1293] "Updating pod condition and nominated node name" pod="ns/p" conditionType="PodScheduled" nominatedNodeName="n2" nominatingMode=1
I1201 20:48:14.000007   1 schedule_one.go:101] "About to try and schedule pod" pod="ns/p"
I1201 20:48:14.000008   1 other.go:1] "Something else" pod="ns/p" node="n9"
I1201 20:48:14.000009   1 schedule_one.go:483] "Successfully bound pod to node" pod="ns/p" node="n2" evaluatedNodes=1 feasibleNodes=1
I1201 20:48:14.000010   1 schedule_one.go:101] "About to try and schedule pod" pod="ns/q"
I1201 20:48:14.000010   1 schedule_one.go:1293] "Updating pod condition and nominated node name" pod="ns/q" nominatedNodeName="n3" nominatingMode=1
I1201 20:48:14.000011   1 schedule_one.go:1194] "Unable to schedule pod; no fit; waiting" pod="ns/q" err=<
	line one
	line two
 >
'''


def self_test():
    """Checks the log parser on canned klog lines; returns a list of problems."""
    got = parse_log_lines(SELF_TEST_LOG.splitlines(True))
    want = {"ns/p": [{"scores": {"n1": {"TaintToleration": 300, "ImageLocality": 0}},
                      "final": {"n1": 300}, "bound": None, "nominated": "n2",
                      "err": '0/2 nodes are available: 1 node(s) had untolerated taint(s), '
                             '1 "quoted" reason.'},
                     {"scores": {}, "final": {}, "bound": "n2", "err": None, "nominated": None}],
            "ns/q": [{"scores": {}, "final": {}, "bound": None, "err": "line one\nline two",
                      "nominated": None, "expected": "n3"}]}
    problems = [] if got == want else ["parse_log: got %s, want %s" % (
        json.dumps(got, sort_keys=True), json.dumps(want, sort_keys=True))]
    # compare_pod: kube-scheduler's logged scores are weighted, kubesched's are not; a plugin
    # kubesched lacks that scored 0 everywhere is ignored; ties: either max node is fine.
    weights = {"TaintToleration": 3, "ImageLocality": 1}
    rec = {"namespace": "ns", "name": "p", "node": "n1", "message": None}
    up = [{"scores": {"n1": {"TaintToleration": 300, "DynamicResources": 0, "ImageLocality": 5},
                      "n2": {"TaintToleration": 300, "DynamicResources": 0, "ImageLocality": 5}},
           "final": {"n1": 305, "n2": 305}, "bound": "n1", "err": None, "nominated": None}]
    ks = {"pods": [{"namespace": "ns", "name": "p", "result": "Scheduled", "node": "n2",
                    "message": "", "score": {"n1": {"TaintToleration": 100, "ImageLocality": 5},
                                             "n2": {"TaintToleration": 100, "ImageLocality": 5}},
                    "finalScore": {"n1": 305, "n2": 305}}]}
    res, det, plug = compare_pod(rec, up, ks, weights)
    want = {"outcome": True, "feasible": True, "scores": True, "final": True, "chosen": True,
            "message": None, "preemption": None, "volume binding": None}
    if res != want or det.get("ignored_plugins") != ["DynamicResources"]:
        problems.append("compare_pod (agreeing): got %s %s" % (res, det))
    ks["pods"][0]["score"]["n2"]["ImageLocality"] = 6
    ks["pods"][0]["finalScore"]["n2"] = 306
    res, det, plug = compare_pod(rec, up, ks, weights)
    if (res["scores"], res["final"], res["chosen"], plug.get("ImageLocality"),
            plug.get("TaintToleration")) != (False, False, False, False, True):
        problems.append("compare_pod (ImageLocality off by one on n2): got %s %s" % (res, det))
    # the DynamicResources PostFilter tail: accepted only after the same PreFilter message
    pre = '0/3 nodes are available: persistentvolumeclaim "c" not found.'
    ks_tail = pre + " preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    checks = [(pre + " not found", ks_tail, True),
              (pre + " not found", pre + " preemption: not eligible due to preemptionPolicy=Never.",
               True),
              ('0/3 nodes are available: persistentvolumeclaim "d" not found. not found', ks_tail, False),
              (pre, ks_tail, False), (pre + " not found", pre + " not found.", False)]
    for up_msg, ks_msg, want_ok in checks:
        if dra_postfilter_tail(up_msg, ks_msg) != want_ok:
            problems.append("dra_postfilter_tail(%r, %r) != %s" % (up_msg, ks_msg, want_ok))
    if dra_postfilter_tail(pre + " not found", ks_tail, "n1"):
        problems.append("dra_postfilter_tail accepted a kubesched nomination")
    # volume classification on the snapshot (the report's coverage table)
    items = [{"kind": "PersistentVolume", "metadata": {"name": "pv1"}, "spec": {"csi": {}}},
             {"kind": "PersistentVolumeClaim", "metadata": {"name": "b", "namespace": "ns",
              "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
              "spec": {"volumeName": "pv1", "accessModes": ["ReadWriteOncePod"]}},
             {"kind": "PersistentVolumeClaim", "metadata": {"name": "g", "namespace": "ns",
              "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
              "spec": {"volumeName": "gone"}},
             {"kind": "PersistentVolumeClaim", "metadata": {"name": "u", "namespace": "ns"},
              "spec": {"volumeName": "pv1"}},
             {"kind": "PersistentVolumeClaim", "metadata": {"name": "b", "namespace": "other"},
              "spec": {}}]
    vpod = {"metadata": {"namespace": "ns", "name": "v"}, "spec": {"volumes": [
        {"persistentVolumeClaim": {"claimName": n}} for n in ("b", "g", "u", "x")] + [
        {"ephemeral": {}}, {"rbd": {}}, {"emptyDir": {}}]}}
    want_v = {"volumes (any of the below)", "volume: claim bound (CSI PV)",
              "volume: ReadWriteOncePod claim", "volume: claim bound to a missing PV",
              "volume: claim unbound Immediate or pre-bound", "volume: claim missing",
              "volume: generic ephemeral", "volume: in-line disk"}
    if volume_features(vpod, items) != want_v:
        problems.append("volume_features: got %s" % sorted(volume_features(vpod, items)))
    if volume_features({"metadata": {"namespace": "ns"}, "spec": {"volumes": [{"emptyDir": {}}]}},
                       items):
        problems.append("volume_features: an emptyDir-only pod counted as a volume pod")
    rec2 = {"namespace": "ns", "name": "p", "node": None, "message": pre + " not found"}
    up2 = [{"scores": {}, "final": {}, "bound": None, "err": pre + " not found", "nominated": None}]
    ks2 = {"pods": [{"namespace": "ns", "name": "p", "result": "Unschedulable", "message": ks_tail}]}
    res, det, _ = compare_pod(rec2, up2, ks2, weights)
    if res["message"] is not True or not det.get("dra_postfilter_tail"):
        problems.append("compare_pod (DynamicResources tail): got %s %s" % (res, det))
    # unbound WaitForFirstConsumer claims: classification and the volume binding check
    witems = [{"kind": "StorageClass", "metadata": {"name": "st"},
               "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
              {"kind": "StorageClass", "metadata": {"name": "pr"}, "provisioner": "x/y",
               "volumeBindingMode": "WaitForFirstConsumer"},
              {"kind": "PersistentVolumeClaim", "metadata": {"name": "ws", "namespace": "ns"},
               "spec": {"storageClassName": "st"}},
              {"kind": "PersistentVolumeClaim", "metadata": {"name": "wp", "namespace": "ns"},
               "spec": {"storageClassName": "pr"}}] + [
              {"kind": "PersistentVolume", "metadata": {"name": n}, "spec": {"capacity": {"storage": c}}}
              for n, c in (("a", "2Gi"), ("b", "2Gi"), ("c", "5Gi"))]
    wpod = {"metadata": {"namespace": "ns", "name": "w"}, "spec": {"volumes": [
        {"persistentVolumeClaim": {"claimName": n}} for n in ("ws", "wp")]}}
    want_w = {"volumes (any of the below)", WFFC, WFFC + " (static PVs)", WFFC + " (provisioner)"}
    if volume_features(wpod, witems) != want_w:
        problems.append("volume_features (WaitForFirstConsumer): got %s" % sorted(volume_features(wpod, witems)))
    wrec = {"namespace": "ns", "name": "w", "node": "n1", "wffc_claims": ["ws", "wp"],
            "volume_binding": {"ws": {"pv": "a", "provisioned": False},
                               "wp": {"pv": "pvc-1", "selectedNode": "n1", "provisioned": True}}}

    def wks(pv, sel, node="n1"):
        return {"pods": [{"namespace": "ns", "name": "w", "result": "Scheduled", "node": node,
                          "volumes": [{"claim": "ws", "persistentVolume": pv},
                                      {"claim": "wp", "selectedNode": sel}]}]}
    for ks_w, want_ok in ((wks("a", "n1"), True), (wks("b", "n1"), True), (wks("c", "n1"), False),
                          (wks("a", "n2"), False), (wks("a", "n1", "n2"), None)):
        got, _ = compare_volume_binding(wrec, ks_w, witems)
        if got is not want_ok:
            problems.append("compare_volume_binding(%s) = %s, want %s" % (ks_w, got, want_ok))
    extra = wks("a", "n1")
    extra["pods"][0]["volumes"].append({"claim": "other", "persistentVolume": "c"})
    if compare_volume_binding(wrec, extra, witems)[0] is not False:
        problems.append("compare_volume_binding accepted a write for a claim the pod has not")
    return problems


def main():
    if sys.argv[1:] == ["--self-test"]:
        problems = self_test()
        for p in problems:
            print("diff-compare self-test: " + p, file=sys.stderr)
        print("diff-compare self-test: %s" % ("ok" if not problems else "FAILED"))
        return 1 if problems else 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--kubesched", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--report-json")
    ap.add_argument("--report-md")
    ap.add_argument("--min-agreement", type=float, default=99.0)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    weights = profile_weights(args.kubesched, args.config)
    recs = []
    logs = {}
    for d in sorted(os.listdir(args.workdir)):
        rp = os.path.join(args.workdir, d, "records.json")
        if os.path.isfile(rp):
            with open(rp) as f:
                recs.extend(json.load(f))
            logs[d] = parse_log(os.path.join(args.workdir, d, "kube-scheduler.log"))
    if not recs:
        print("diff-compare: no records under %s" % args.workdir, file=sys.stderr)
        return 2
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        sims = list(ex.map(lambda r: simulate(args.kubesched, args.config, r["snapshot"]), recs))
    counts = {c: [0, 0] for c in CHECKS}  # agree, applicable
    plug_counts = {}
    feat_counts = {}
    pods_all = 0
    rows = []
    for rec, (ks, err) in zip(recs, sims):
        key = "%s/%s" % (rec["namespace"], rec["name"])
        up = logs["c%d" % rec["cluster"]].get(key, [])
        if ks is None:
            res, det, plug = {c: None for c in CHECKS}, {"error": "kubesched simulate failed: " + err}, {}
            res["outcome"] = False
        else:
            res, det, plug = compare_pod(rec, up, ks, weights)
            if err:
                det["kubesched_stderr"] = err[:500]
        try:
            with open(rec["snapshot"]) as f:
                snap = json.load(f)
        except (OSError, ValueError):
            snap = {"items": []}
        if ks is not None:
            res["volume binding"], vdet = compare_volume_binding(rec, ks, snap["items"])
            if vdet:
                det["volume binding"] = vdet
        if rec.get("timeout"):
            det["timeout"] = True
        for c, v in res.items():
            if v is not None:
                counts[c][1] += 1
                counts[c][0] += bool(v)
        for p, v in plug.items():
            pc = plug_counts.setdefault(p, [0, 0])
            pc[1] += 1
            pc[0] += bool(v)
        allok = all(v is not False for v in res.values())
        pods_all += allok
        try:
            pod = [it for it in snap["items"] if it["kind"] == "Pod" and
                   it["metadata"]["namespace"] == rec["namespace"] and
                   it["metadata"]["name"] == rec["name"]][0]
            for ft in features(pod, snap["items"]):
                fc = feat_counts.setdefault(ft, [0, 0])
                fc[1] += 1
                fc[0] += allok
        except IndexError:
            pass
        rows.append({"pod": key, "cluster": rec["cluster"], "snapshot": rec["snapshot"],
                     "checks": res, "agree": allok, "details": det})
    n = len(recs)
    report = {"pods": n, "clusters": len(logs), "pods_agreeing_on_every_check": pods_all,
              "checks": {c: {"agree": a, "applicable": t,
                             "percent": round(100.0 * a / t, 2) if t else None}
                         for c, (a, t) in counts.items()},
              "plugins": {p: {"agree": a, "compared": t, "percent": round(100.0 * a / t, 2)}
                          for p, (a, t) in sorted(plug_counts.items())},
              "features": {f: {"pods": t, "agree_on_every_check": a}
                           for f, (a, t) in sorted(feat_counts.items())},
              "outcomes": outcome_counts(rows),
              "dra_postfilter_tail": sum(1 for r in rows if r["details"].get("dra_postfilter_tail")),
              "weights": weights,
              "disagreements": [r for r in rows if not r["agree"]]}
    failing = [c for c, (a, t) in counts.items() if t and 100.0 * a / t < args.min_agreement]
    report["failing_checks"] = failing
    print("differential: %d pods in %d clusters; %d (%.1f%%) agree on every check"
          % (n, len(logs), pods_all, 100.0 * pods_all / n))
    for c, (a, t) in counts.items():
        print("  check %-14s %4d/%-4d %s" % (c, a, t, ("%.1f%%" % (100.0 * a / t)) if t else "n/a"))
    for p, (a, t) in sorted(plug_counts.items()):
        print("  plugin %-32s %4d/%-4d %.1f%%" % (p, a, t, 100.0 * a / t))
    vol = feat_counts.get("volumes (any of the below)", [0, 0])
    print("  volume pods %d (%d agree on every check); messages with DynamicResources' PostFilter "
          "tail accepted: %d" % (vol[1], vol[0], report["dra_postfilter_tail"]))
    wf = feat_counts.get(WFFC, [0, 0])
    ties = sum(len(r["details"].get("volume binding", {}).get("equal_capacity_ties", []))
               for r in rows)
    report["volume_binding_equal_capacity_ties"] = ties
    print("  pods with unbound WaitForFirstConsumer claims %d (%d agree on every check; static %d, "
          "provisioner %d); claims bound to another PV of equal capacity (accepted): %d"
          % (wf[1], wf[0], feat_counts.get(WFFC + " (static PVs)", [0, 0])[1],
             feat_counts.get(WFFC + " (provisioner)", [0, 0])[1], ties))
    if args.report_json:
        with open(args.report_json, "w") as f:
            json.dump(report, f, indent=1)
    if args.report_md:
        with open(args.report_md, "w") as f:
            f.write(markdown(report))
    return 1 if failing else 0


def outcome_counts(rows):
    out = {}
    for r in rows:
        u = r["details"].get("upstream", {})
        key = u.get("result", "error")
        if r["details"].get("preemption"):
            key += " (preempting)"
        out[key] = out.get(key, 0) + 1
    return out


def markdown(rep):
    out = ["# Differential test: kube-scheduler vs kubesched simulate", "",
           "%d pods in %d clusters; **%d (%.1f%%) agree on every check**." %
           (rep["pods"], rep["clusters"], rep["pods_agreeing_on_every_check"],
            100.0 * rep["pods_agreeing_on_every_check"] / rep["pods"]), "",
           "| check | agree | applicable | % |", "| --- | --- | --- | --- |"]
    for c, v in rep["checks"].items():
        out.append("| %s | %d | %d | %s |" % (c, v["agree"], v["applicable"],
                                              "n/a" if v["percent"] is None else v["percent"]))
    out += ["", "| plugin (scores) | agree | compared | % |", "| --- | --- | --- | --- |"]
    for p, v in rep["plugins"].items():
        out.append("| %s | %d | %d | %s |" % (p, v["agree"], v["compared"], v["percent"]))
    out += ["", "kube-scheduler's first attempts: " +
            ", ".join("%s %d" % kv for kv in sorted(rep["outcomes"].items())) + ".", "",
            "Messages that differ only by DynamicResources' PostFilter tail (kube-scheduler: "
            "`<PreFilter message>. not found`; kubesched, which does not ship DynamicResources: "
            "`<PreFilter message>. preemption: ... not helpful`), counted as agreeing: %d." %
            rep["dra_postfilter_tail"], "",
            "| pending pods with | pods | agree on every check |", "| --- | --- | --- |"]
    for f, v in rep["features"].items():
        out.append("| %s | %d | %d |" % (f, v["pods"], v["agree_on_every_check"]))
    out += ["", "## Disagreements", ""]
    for r in rep["disagreements"]:
        bad = [c for c, v in r["checks"].items() if v is False]
        out.append("- `%s` (%s): %s" % (r["pod"], ", ".join(bad),
                                         json.dumps(r["details"], sort_keys=True)[:1500]))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
