#!/usr/bin/env python3
"""The live half of the differential test (tests/e2e/test-differential.sh): for each random
cluster of tests/tools/diff-gen.py, creates it on a running API server, starts the real
kube-scheduler on it (its own process per cluster, with the given configuration and the
verbosity that logs per-plugin scores), then creates the pending pods one at a time and records,
for each, the snapshot it was decided on and what kube-scheduler decided.

Usage:
  diff-run.py --workdir DIR --config SCHED.yaml --scheduler BIN --seed N --clusters C --pods P
              [--first K]
Env (from start-control-plane.sh's env file): KUBESCHED_E2E_APISERVER, KUBESCHED_E2E_CA,
  KUBESCHED_E2E_TOKEN, KUBESCHED_E2E_DIR (the scheduler's pid goes to DIR/pids so that
  stop-control-plane.sh stops it if this script dies), KUBESCHED_E2E_SCHEDULER_KUBECONFIG.

The control plane runs kube-controller-manager's PersistentVolume controller and the e2e dynamic
provisioner (test-differential.sh starts them; --no-wffc for a control plane without them):
kube-scheduler is started once the controller has settled on the cluster's claims and PVs, which
are listed again before every pod. A pod with unbound WaitForFirstConsumer claims counts as
decided once bound, i.e. once its PreBind saw the PV controller complete the binding; the
record's volume_binding says what each claim was bound to, and the next pod waits until the
controller is quiet again.

Per pod: the snapshot is the API server's Nodes, Pods, Namespaces, Services, PDBs and storage
objects (PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers,
CSIStorageCapacities, VolumeAttachments) just before the pod is created, plus the pod as the API
server stored it (defaults and admission applied: priority from its PriorityClass, RuntimeClass
overhead); kube-scheduler's decision is the pod's spec.nodeName, or its first PodScheduled=False
condition. A pod that preempted (nominatedNodeName set) is waited for until it is bound, and the
pods that disappeared meanwhile are its victims (a bound pod that shares a host port with a
victim on its node is deleted after the preemptor is bound: see port_ghosts). A pod left
unschedulable is deleted at once, before kube-scheduler can retry it, so each pod is decided on
exactly the snapshot recorded for it.

Writes DIR/cK/records.json (one entry per pending pod), DIR/cK/snap-NAME.json (the snapshot, a
List that `kubesched simulate --cluster` reads) and DIR/cK/kube-scheduler.log."""
import argparse
import http.client
import importlib.util
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))


def load_gen():
    spec = importlib.util.spec_from_file_location("diff_gen", os.path.join(HERE, "diff-gen.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class API:
    """A small keep-alive HTTPS client for the test API server (bearer token, test CA)."""

    def __init__(self, url, ca, token):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=ca)
        self.token = token
        self.conn = None

    def req(self, method, path, body=None, ok=(200, 201, 202), retries=3,
            content_type="application/json"):
        data = None if body is None else json.dumps(body).encode()
        for attempt in range(retries + 1):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                            timeout=30)
                self.conn.request(method, path, body=data, headers={
                    "Authorization": "Bearer " + self.token, "Content-Type": content_type,
                    "Accept": "application/json"})
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, OSError):
                self.conn = None
                if attempt == retries:
                    raise
                time.sleep(0.2)
        out = json.loads(raw) if raw else {}
        if ok is not None and resp.status not in ok:
            raise RuntimeError("%s %s: HTTP %d: %s" % (method, path, resp.status,
                                                        out.get("message", raw[:300])))
        out["_status"] = resp.status
        return out

    def items(self, path, kind, api_version):
        lst = self.req("GET", path)
        out = []
        for it in lst.get("items", []):
            it["kind"], it["apiVersion"] = kind, api_version
            it.get("metadata", {}).pop("managedFields", None)
            out.append(it)
        return out


# Collections: kind -> (path, namespaced). The storage kinds are what kube-scheduler's volume
# plugins list (PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
# CSIStorageCapacity, VolumeAttachment), in the snapshot too.
COLLECTIONS = {
    "Node": ("/api/v1/nodes", False),
    "Namespace": ("/api/v1/namespaces", False),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1/priorityclasses", False),
    "RuntimeClass": ("/apis/node.k8s.io/v1/runtimeclasses", False),
    "Pod": ("/api/v1/pods", True),
    "Service": ("/api/v1/services", True),
    "PodDisruptionBudget": ("/apis/policy/v1/poddisruptionbudgets", True),
    "PersistentVolume": ("/api/v1/persistentvolumes", False),
    "PersistentVolumeClaim": ("/api/v1/persistentvolumeclaims", True),
    "StorageClass": ("/apis/storage.k8s.io/v1/storageclasses", False),
    "CSINode": ("/apis/storage.k8s.io/v1/csinodes", False),
    "CSIDriver": ("/apis/storage.k8s.io/v1/csidrivers", False),
    "CSIStorageCapacity": ("/apis/storage.k8s.io/v1/csistoragecapacities", True),
    "VolumeAttachment": ("/apis/storage.k8s.io/v1/volumeattachments", False),
}
STORAGE_KINDS = ["StorageClass", "CSIDriver", "PersistentVolumeClaim", "PersistentVolume", "CSINode",
                 "VolumeAttachment", "CSIStorageCapacity"]


def api_version(path):
    return "v1" if path.startswith("/api/v1/") else "/".join(path.split("/")[2:4])


def coll_path(obj):
    """The collection an object is created in: /api/v1/namespaces/NS/pods for a Pod."""
    path, namespaced = COLLECTIONS[obj["kind"]]
    if not namespaced:
        return path
    i = path.rindex("/")
    return "%s/namespaces/%s%s" % (path[:i], obj["metadata"]["namespace"], path[i:])


def list_kind(api, kind):
    path = COLLECTIONS[kind][0]
    return api.items(path, kind, api_version(path))


def create(api, obj, tolerate_exists=False):
    ok = (200, 201, 202, 409) if tolerate_exists else (200, 201, 202)
    return api.req("POST", coll_path(obj), obj, ok=ok)


def cond(pod, typ="PodScheduled"):
    for c in pod.get("status", {}).get("conditions", []) or []:
        if c.get("type") == typ:
            return c
    return None


class Scheduler:
    """One kube-scheduler process for one cluster (start, then stop)."""

    def __init__(self, binary, config, logfile, e2e_dir):
        self.binary, self.config, self.logfile = binary, config, logfile
        self.proc = self.log = None
        # DIR/pids/kube-scheduler: stop-control-plane.sh stops it if this script dies
        self.pidfile = os.path.join(e2e_dir, "pids", "kube-scheduler") if e2e_dir else None

    def start(self):
        kc = os.environ["KUBESCHED_E2E_SCHEDULER_KUBECONFIG"]
        port = free_port()
        certdir = os.path.join(os.path.dirname(self.logfile), "scheduler-certs")
        # --v=2 plus --vmodule=schedule_one=10: schedule_one.go's V(10) lines (per-plugin and
        # final scores) and V(4) "About to try and schedule pod", without client-go's
        # request/response dumps that --v=10 would add everywhere; eventhandlers=3: "Add event
        # for node", the order in which the cache got the nodes (see node_order).
        args = [self.binary, "--config=" + self.config,
                "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
                "--bind-address=127.0.0.1", "--secure-port=%d" % port, "--cert-dir=" + certdir,
                "--v=2", "--vmodule=schedule_one=10,eventhandlers=3"]
        self.log = open(self.logfile, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        if self.pidfile:
            with open(self.pidfile, "w") as f:
                f.write("%d\n" % self.proc.pid)
        ctx = ssl._create_unverified_context()
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("kube-scheduler exited (rc %s); log %s" % (self.proc.returncode,
                                                                             self.logfile))
            try:
                c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=2)
                c.request("GET", "/healthz")
                if c.getresponse().read() == b"ok":
                    break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            raise RuntimeError("kube-scheduler not healthy after 60 s; log %s" % self.logfile)
        return port

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.pidfile and os.path.exists(self.pidfile):
            os.unlink(self.pidfile)
        if self.log:
            self.log.close()
            self.log = None


def node_order(logfile):
    """The nodes in the order kube-scheduler's cache added them ("Add event for node", V(3) in
    eventhandlers.go). That order is not the API server's (name) order, and it is observable:
    the cache keeps one ImageStateSummary per image name whose size is that of the first node
    that reported the name (cacheImpl.addNodeImageStates), which ImageLocality scores with. The
    snapshot lists the nodes in this order so that a reader taking "first reported" in file
    order sees what kube-scheduler saw."""
    out = []
    with open(logfile, errors="replace") as f:
        for line in f:
            if '"Add event for node"' in line:
                i = line.find(' node="')
                if i >= 0:
                    out.append(line[i + 7:line.index('"', i + 7)])
    return out


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def pod_key(p):
    return "%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"])


def live_pods(api):
    return [p for p in api.items("/api/v1/pods", "Pod", "v1")
            if not p["metadata"].get("deletionTimestamp")]


def count_failures(logfile, key):
    """How many times kube-scheduler logged that it could not schedule the pod KEY (ns/name)."""
    needle = '"pod"="%s"' % key
    n = 0
    with open(logfile, errors="replace") as f:
        for line in f:
            if "Unable to schedule pod" in line and needle in line:
                n += 1
    return n


def wait_decision(api, pod, timeout, logfile):
    """Polls the pod until kube-scheduler decided: bound, or PodScheduled=False without a
    nomination, or (after a preemption) bound or failed again. Returns the record's fields."""
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    path = "/api/v1/namespaces/%s/pods/%s" % (ns, name)
    t0 = time.time()
    first_msg = first_reason = None
    nominated = None
    while time.time() - t0 < timeout:
        p = api.req("GET", path)
        node = p["spec"].get("nodeName")
        if node:
            return {"node": node, "message": first_msg, "reason": first_reason,
                    "nominated": nominated, "seconds": round(time.time() - t0, 3)}
        c = cond(p)
        nnn = p.get("status", {}).get("nominatedNodeName")
        if c and c.get("status") == "False":
            if first_msg is None:
                first_msg, first_reason = c.get("message", ""), c.get("reason", "")
            # The condition and the nomination are written by one patch (updatePod).
            if nnn:
                nominated = nnn
            if not nominated:
                return {"node": None, "message": first_msg, "reason": first_reason,
                        "nominated": None, "seconds": round(time.time() - t0, 3)}
            if count_failures(logfile, "%s/%s" % (ns, name)) >= 2:
                return {"node": None, "message": first_msg, "reason": first_reason,
                        "nominated": nominated, "retry_message": c.get("message"),
                        "seconds": round(time.time() - t0, 3)}
        time.sleep(0.02)
    return {"node": None, "message": first_msg, "reason": first_reason, "nominated": nominated,
            "timeout": True, "seconds": round(time.time() - t0, 3)}


def host_ports(pod):
    """A pod's host ports as upstream's HostPortInfo keys them: (hostIP, protocol, port), an
    empty hostIP read as 0.0.0.0 and an empty protocol as TCP (HostPortInfo.sanitize)."""
    return {(p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", p["hostPort"])
            for c in pod["spec"].get("containers", []) + pod["spec"].get("initContainers", [])
            for p in c.get("ports", []) if p.get("hostPort")}


def port_ghosts(victims, live):
    """The live pods whose host port upstream's cache no longer counts. NodeInfo.UsedPorts is a
    set: when a victim is removed, so is its (hostIP, protocol, port) on its node, although
    another pod there still uses it (two bound pods with one host port on one node: the
    generator binds pods with spec.nodeName, no kubelet refuses the second). kube-scheduler then
    sees the port free for every later pod, which no snapshot can say (`kubesched simulate`
    builds its cache from the objects, with the port in use). Deleting those pods too, right
    after the preemptor is bound, gives both sides the same node again: the port is free for
    both. (Within one scheduling cycle the quirk is compared as is: a preemption dry run that
    removes one of two such pods frees the port on both sides.)"""
    freed = {}
    for v in victims:
        node = v["spec"].get("nodeName")
        if node:
            freed.setdefault(node, set()).update(host_ports(v))
    return [p for p in live if freed.get(p["spec"].get("nodeName")) and
            host_ports(p) & freed[p["spec"]["nodeName"]]]


def set_status(api, obj, status):
    """Writes what a controller would (a claim's and a PV's phase, a pod's start time): the
    status in a create is dropped, the status subresource takes it."""
    api.req("PATCH", "%s/%s/status" % (coll_path(obj), obj["metadata"]["name"]),
            {"status": status}, content_type="application/merge-patch+json")


def purge(api, obj):
    """Deletes an object for good: claims and PVs get the pvc-/pv-protection finalizers at
    create (admission StorageObjectInUseProtection), which only the controllers this control
    plane does not run would remove."""
    path = "%s/%s" % (coll_path(obj), obj["metadata"]["name"])
    if obj["kind"] in ("PersistentVolumeClaim", "PersistentVolume"):
        api.req("PATCH", path, {"metadata": {"finalizers": None}}, ok=(200, 404),
                content_type="application/merge-patch+json")
    api.req("DELETE", path, ok=(200, 202, 404))


def set_start_time(api, pod, start):
    """Acts as the pod's kubelet: status.startTime (the status on create is dropped)."""
    api.req("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (pod["metadata"]["namespace"],
                                                              pod["metadata"]["name"]),
            {"status": {"startTime": start}}, content_type="application/merge-patch+json")


def delete_pod(api, ns, name):
    return api.req("DELETE", "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0" % (ns, name),
                   ok=(200, 202, 404))


def run_cluster(api, gen, args, k):
    cdir = os.path.join(args.workdir, "c%d" % k)
    os.makedirs(cdir, exist_ok=True)
    doc = gen.Gen(args.seed, k, args.pods, wffc=not args.no_wffc).cluster_doc()
    with open(os.path.join(cdir, "cluster.json"), "w") as f:
        json.dump(doc, f, indent=1)
    # Nothing may be left from another cluster (a previous run that died): kube-scheduler
    # would see those nodes and storage objects too.
    for kind in ["Node"] + STORAGE_KINDS:
        for o in list_kind(api, kind):
            purge(api, o)
    t0 = time.time()
    for ns in doc["namespaces"]:
        create(api, ns, tolerate_exists=True)
    claim_uids = {}
    for obj in doc["setup"]:
        ref = obj.get("spec", {}).get("claimRef") if obj["kind"] == "PersistentVolume" else None
        if ref and (ref["namespace"], ref["name"]) in claim_uids:
            obj = json.loads(json.dumps(obj))
            obj["spec"]["claimRef"]["uid"] = claim_uids[(ref["namespace"], ref["name"])]
        created = create(api, obj)
        if obj["kind"] == "PersistentVolumeClaim":
            claim_uids[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = \
                created["metadata"]["uid"]
        if obj["kind"] == "Pod" and obj.get("status", {}).get("startTime"):
            set_start_time(api, created, obj["status"]["startTime"])
    # The claims' and PVs' phases once every PV exists: a bound claim synced by the PV
    # controller before its PV was created turns Lost, and the controller looks at it again
    # only on its next change (or the periodic resync, 15 s later); this write is that change.
    volstatus = [o for o in doc["setup"]
                 if o["kind"] in ("PersistentVolume", "PersistentVolumeClaim") and o.get("status")]
    for obj in volstatus:
        set_status(api, obj, obj["status"])
    # The PV controller acts on the new claims and PVs (phases, pre-bound claims, the
    # provisioner annotation of Immediate claims, Lost for a claim whose PV is missing): the
    # snapshots start from what it left. A claim generated Bound to a PV that exists must be
    # Bound then (else the controller synced it while its PV was not in its cache yet).
    t_settle, rewritten = 0.0, 0
    if not args.no_wffc:
        pv_names = {o["metadata"]["name"] for o in doc["setup"] if o["kind"] == "PersistentVolume"}
        for _ in range(3):
            t_settle += settle(api, 0.5)
            phases = {(c["metadata"]["namespace"], c["metadata"]["name"]): c["status"].get("phase")
                      for c in list_kind(api, "PersistentVolumeClaim")}
            lost = [o for o in volstatus if o["kind"] == "PersistentVolumeClaim" and
                    o["status"].get("phase") == "Bound" and o["spec"].get("volumeName") in pv_names
                    and phases.get((o["metadata"]["namespace"], o["metadata"]["name"])) != "Bound"]
            if not lost:
                break
            rewritten += len(lost)
            for obj in lost:
                set_status(api, obj, obj["status"])
    t_setup = time.time() - t0
    nodes = list_kind(api, "Node")
    # What the snapshot has besides nodes and pods. Only PVs and claims change while the
    # cluster's pods are decided (PreBind binds or has provisioned a pod's WaitForFirstConsumer
    # claims, the PV controller completes it): those are listed again before each pod, below.
    others = [o for kind in ["Namespace", "Service", "PodDisruptionBudget"] + STORAGE_KINDS
              for o in list_kind(api, kind)]
    sched = Scheduler(args.scheduler, args.config, os.path.join(cdir, "kube-scheduler.log"),
                      os.environ.get("KUBESCHED_E2E_DIR"))
    records = []
    seq = 0
    try:
        t1 = time.time()
        sched.start()
        # Wait until its cache has every node: then the first pod is decided on all of them.
        names = {n["metadata"]["name"] for n in nodes}
        deadline = time.time() + 30
        while set(node_order(sched.logfile)) != names:
            if time.time() > deadline:
                raise RuntimeError("kube-scheduler's cache did not get all %d nodes in 30 s (%s)"
                                   % (len(names), sched.logfile))
            time.sleep(0.05)
        rank = {n: i for i, n in enumerate(node_order(sched.logfile))}
        nodes.sort(key=lambda n: rank[n["metadata"]["name"]])
        t_sched = time.time() - t1
        for pod in doc["pending"]:
            # PVs and claims again before each pod: what the PV controller wrote meanwhile (its
            # periodic resync) is what kube-scheduler sees too
            others = [o for o in others if o["kind"] not in ("PersistentVolume",
                                                              "PersistentVolumeClaim")] + \
                [o for kind in ("PersistentVolumeClaim", "PersistentVolume") for o in list_kind(api, kind)]
            before = live_pods(api)
            created = create(api, pod)
            created.pop("_status", None)
            created["kind"], created["apiVersion"] = "Pod", "v1"
            created["metadata"].pop("managedFields", None)
            snap = {"apiVersion": "v1", "kind": "List", "items": nodes + others + before + [created]}
            snapfile = os.path.join(cdir, "snap-%s.json" % pod["metadata"]["name"])
            with open(snapfile, "w") as f:
                json.dump(snap, f)
            wclaims = wffc_claims(created, others)
            rec = wait_decision(api, created, args.timeout, sched.logfile)
            rec.update({"namespace": created["metadata"]["namespace"],
                        "name": created["metadata"]["name"], "cluster": k, "snapshot": snapfile,
                        "priority": created["spec"].get("priority", 0)})
            if wclaims:
                # Bound means PreBind is done (it waited for the PV controller / provisioner);
                # what it bound each claim to is compared with kubesched's "volumes".
                rec["wffc_claims"] = wclaims
                if rec["node"]:
                    rec["volume_binding"], done = binding_outcome(api, rec["namespace"], wclaims,
                                                                  args.timeout)
                    if not done:
                        rec["volume_binding_incomplete"] = True
            # Only kube-scheduler deletes pods meanwhile (preemption): whatever is gone from
            # the pods the snapshot had was a victim. The log says whether and where the pod
            # was nominated even when the retry bound it before the poll saw the nomination.
            live = live_pods(api)
            after = {pod_key(p) for p in live}
            rec["victims"] = sorted(pod_key(p) for p in before if pod_key(p) not in after)
            # (not the preemptor: it was added after its victims were removed, port and all)
            ghosts = port_ghosts([p for p in before if pod_key(p) not in after],
                                 [p for p in live if pod_key(p) != pod_key(created)])
            if ghosts:
                for g in ghosts:
                    delete_pod(api, g["metadata"]["namespace"], g["metadata"]["name"])
                rec["port_ghosts_deleted"] = sorted(pod_key(g) for g in ghosts)
            if rec["node"]:
                # started after every pod before it (one second apart: unique start times)
                seq += 1
                set_start_time(api, {"metadata": {"namespace": rec["namespace"],
                                                  "name": rec["name"]}},
                               "2026-01-02T%02d:%02d:%02dZ" % (seq // 3600, seq // 60 % 60, seq % 60))
            else:
                # Unschedulable: out of the way before kube-scheduler retries it.
                d = delete_pod(api, rec["namespace"], rec["name"])
                if d.get("spec", {}).get("nodeName"):
                    rec["bound_while_deleting"] = d["spec"]["nodeName"]
            if wclaims and (rec["node"] or "PreBind" in (rec.get("message") or "")):
                # the PV controller's last writes (phases) before the next pod's snapshot; a
                # pod that failed before PreBind wrote nothing
                rec["settle_s"] = settle(api, 0.2)
            records.append(rec)
    finally:
        sched.stop()
        with open(os.path.join(cdir, "records.json"), "w") as f:
            json.dump(records, f, indent=1)
        cleanup(api, doc, nodes)
    return records, {"cluster": k, "nodes": len(nodes), "setup_objects": len(doc["setup"]),
                     "volume_pods": doc["volume_pods"], "wffc_pods": doc.get("wffc_pods", 0),
                     "settle_s": t_settle, "lost_claims_rewritten": rewritten,
                     "setup_s": round(t_setup, 2), "scheduler_start_s": round(t_sched, 2),
                     "pods_s": round(time.time() - t0 - t_setup - t_sched, 2)}


def cleanup(api, doc, nodes):
    """Removes a cluster for the next one: pods (grace 0: no kubelet), nodes, Services, PDBs, the
    storage objects (also the PVs the provisioner made). Namespaces stay: without a namespace
    controller a deleted one would stay Terminating."""
    for ns in doc["namespaces"]:
        api.req("DELETE", "/api/v1/namespaces/%s/pods?gracePeriodSeconds=0" % ns["metadata"]["name"])
    for n in nodes:
        api.req("DELETE", "/api/v1/nodes/%s" % n["metadata"]["name"], ok=(200, 202, 404))
    for obj in doc["setup"]:
        if obj["kind"] in ["Service", "PodDisruptionBudget"]:
            purge(api, obj)
    for kind in STORAGE_KINDS:
        for o in list_kind(api, kind):
            purge(api, o)


def storage_rvs(api):
    return {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]):
            o["metadata"]["resourceVersion"]
            for kind in ("PersistentVolume", "PersistentVolumeClaim") for o in list_kind(api, kind)}


def settle(api, quiet, limit=20.0):
    """Waits until the PV controller (kube-controller-manager) and the provisioner have nothing
    left to write: no PV or claim changed for `quiet` seconds. Returns the seconds waited."""
    t0 = since = time.time()
    last = None
    while True:
        cur = storage_rvs(api)
        now = time.time()
        if cur != last:
            last, since = cur, now
        elif now - since >= quiet or now - t0 > limit:
            return round(now - t0, 2)
        time.sleep(0.1)


def wffc_claims(pod, others):
    """The pod's claims that VolumeBinding's PreBind must bind or have provisioned: unbound (no
    volumeName) claims of a WaitForFirstConsumer class, on the snapshot's objects."""
    modes = {o["metadata"]["name"]: o.get("volumeBindingMode", "Immediate")
             for o in others if o["kind"] == "StorageClass"}
    ns = pod["metadata"]["namespace"]
    claims = {o["metadata"]["name"]: o for o in others
              if o["kind"] == "PersistentVolumeClaim" and o["metadata"]["namespace"] == ns}
    out = []
    for v in pod["spec"].get("volumes") or []:
        c = claims.get((v.get("persistentVolumeClaim") or {}).get("claimName"))
        if c and not c["spec"].get("volumeName") and \
                modes.get(c["spec"].get("storageClassName") or "") == "WaitForFirstConsumer":
            out.append(c["metadata"]["name"])
    return out


def binding_outcome(api, ns, claims, timeout):
    """What PreBind and the PV controller made of the pod's claims once the pod is bound: per
    claim the PV it is bound to, the selected-node annotation, whether the PV was provisioned.
    Waits (up to timeout) for the claims and their PVs to reach phase Bound: the PV controller
    writes the phases after the bind that PreBind waited for."""
    t0 = time.time()
    while True:
        out, done = {}, True
        for name in claims:
            c = api.req("GET", "/api/v1/namespaces/%s/persistentvolumeclaims/%s" % (ns, name),
                        ok=(200, 404))
            vn = c.get("spec", {}).get("volumeName")
            pv = api.req("GET", "/api/v1/persistentvolumes/%s" % vn, ok=(200, 404)) if vn else {}
            out[name] = {"pv": vn, "selectedNode": (c.get("metadata", {}).get("annotations") or {})
                         .get("volume.kubernetes.io/selected-node"),
                         "provisioned": "pv.kubernetes.io/provisioned-by" in
                         (pv.get("metadata", {}).get("annotations") or {}),
                         "capacity": (pv.get("spec", {}).get("capacity") or {}).get("storage")}
            done = done and (c.get("status") or {}).get("phase") == "Bound" and \
                (pv.get("status") or {}).get("phase") == "Bound"
        if done or time.time() - t0 > timeout:
            return out, done
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--scheduler", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--clusters", type=int, default=10)
    ap.add_argument("--pods", type=int, default=30)
    ap.add_argument("--first", type=int, default=0, help="index of the first cluster")
    ap.add_argument("--timeout", type=float, default=15.0, help="seconds to wait per pod")
    ap.add_argument("--no-wffc", action="store_true",
                    help="no pending pod with an unbound WaitForFirstConsumer claim (for a control "
                         "plane without kube-controller-manager and the e2e provisioner)")
    args = ap.parse_args()
    api = API(os.environ["KUBESCHED_E2E_APISERVER"], os.environ["KUBESCHED_E2E_CA"],
              os.environ["KUBESCHED_E2E_TOKEN"])
    gen = load_gen()
    for obj in gen.globals_():
        create(api, obj, tolerate_exists=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    timings = []
    for k in range(args.first, args.first + args.clusters):
        recs, t = run_cluster(api, gen, args, k)
        timings.append(t)
        print("cluster %d: %d nodes, %d pods decided, %d with volumes, %d with unbound "
              "WaitForFirstConsumer claims (setup %.1f s, of it PV controller %.1f s, scheduler "
              "start %.1f s, pods %.1f s)" % (k, t["nodes"], len(recs), t["volume_pods"],
                                              t["wffc_pods"], t["setup_s"], t["settle_s"],
                                              t["scheduler_start_s"], t["pods_s"]), flush=True)
    with open(os.path.join(args.workdir, "timings.json"), "w") as f:
        json.dump(timings, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
