#!/usr/bin/env python3
"""Seeded generator of random clusters and pending pods for the differential test
(tests/e2e/test-differential.sh): what the real kube-scheduler decides on a real API server is
compared with what `kubesched simulate` decides on the same snapshot.

Usage:
  diff-gen.py SEED CLUSTER PENDING          one cluster as JSON on stdout
  diff-gen.py --globals                     the cluster-scoped objects every cluster shares
                                            (PriorityClasses, RuntimeClass), as JSON

A cluster is {"seed", "cluster", "namespaces", "setup": [objects to create before the scheduler
starts, in this order: the storage objects (StorageClasses, CSIDrivers, PersistentVolumeClaims,
PersistentVolumes, CSINodes, VolumeAttachments, CSIStorageCapacities), Services,
PodDisruptionBudgets, Nodes, pods bound with spec.nodeName], "pending": [pods to create one at a
time]}. An object's "status" is written through the status subresource after it is created
(diff-run.py); a PersistentVolume's claimRef is given without a uid, which diff-run.py fills in
from the claim it created before. Everything is drawn from random.Random(f"{SEED}/{CLUSTER}"), so a
(seed, cluster) pair always gives the same cluster, whatever Python runs it.

What is drawn covers what the default profile's plugins read: node size (cpu, memory, pods,
ephemeral-storage, an extended resource), labels (hostname, zone, region, rack, disk, a numeric
generation for Gt/Lt; some nodes have the beta zone key too or instead, a few no zone or
region), taints of the three effects, cordoned nodes, node images with sizes; bound pods with
labels, requests, host ports, priorities and their own (anti-)affinity terms; pending pods with
container/init/sidecar requests, limits-only and best-effort containers, RuntimeClass overhead,
pod-level resources, nodeSelector, required/preferred node affinity (all operators,
matchFields), tolerations, host ports, topology spread constraints (both whenUnsatisfiable
values, minDomains, node inclusion policies, matchLabelKeys), required and preferred pod
affinity/anti-affinity (namespaces, namespaceSelector), PriorityClasses (one with
preemptionPolicy Never), images; Services and PDBs (system default spreading, preemption).

Volumes (the default profile's VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone):
StorageClasses (Immediate, WaitForFirstConsumer, the defaulted mode; kubernetes.io/no-provisioner
and CSI provisioners; allowedTopologies), CSIDrivers (one sometimes with
preventPodSchedulingIfMissing), CSINodes with per-driver allocatable counts (attach limits, also
for the GCE PD and AWS EBS CSI drivers that in-line disks migrate to), PersistentVolumes (CSI,
local, hostPath, in-tree GCE PD / AWS EBS) with hostname / zone / region node affinity (a
matchFields term too; now and then two of one CSI volume handle) and zone labels (the beta key,
multi-zone "a__b" values, "a____b" with an empty zone), claims bound to
them (volumeName, the bind-completed annotation, phase Bound; the PV's claimRef and phase Bound),
ReadWriteOncePod claims, unbound Immediate claims (also of a missing class), pre-bound claims
(volumeName without the annotation), claims bound to missing PVs, Lost claims, unbound
WaitForFirstConsumer claims (bound pods only), VolumeAttachments (half of those whose PV a bound
pod uses on that pod's node), CSIStorageCapacities. Bound pods
and about 30% of the pending pods use them: claims, missing claims, generic ephemeral
volumes without their claim, in-line GCE PD / AWS EBS / iSCSI / RBD disks (disk conflicts),
emptyDir. Those draws never give a pending pod an unbound WaitForFirstConsumer claim; the
claims VolumeBinding's PreBind binds or has provisioned come from their own stream (wffc(), drawn
from random.Random(f"wffc/{SEED}/{CLUSTER}") after everything else, so that the rest of a
cluster is what it was without them): about 12% of the pending pods get an unbound
WaitForFirstConsumer claim of their own (sometimes two of different sizes), (a) of a
kubernetes.io/no-provisioner class with static Available PVs of several sizes, access modes,
labels (claim selectors) and hostname / zone / no node affinity, (b) of a class of the e2e
dynamic provisioner (PROVISIONER, allowedTopologies half of the time; half of the time its
CSIDriver opts into capacity tracking and some zones have a CSIStorageCapacity for the class),
(c) one that nothing
satisfies (too big, or a selector no PV matches), (d) one claim shared by two pending pods (the
second follows the node the first one's PreBind chose). Placing them needs the PV controller
(kube-controller-manager) and the provisioner, which test-differential.sh runs;
Gen(..., wffc=False) leaves them out.
The probabilities are fixed here, not tuned to either scheduler: nothing is left out because
one side is known to get it wrong.

Every pod has terminationGracePeriodSeconds 0, so a preemption victim is deleted at once
(there is no kubelet to confirm a graceful deletion). A bound pod carries the status.startTime a
kubelet would have reported (diff-run.py writes it through the status subresource)."""
import json
import random
import sys

APPS = ["web", "db", "cache", "batch", "api"]
TIERS = ["front", "back"]
# The same image under several spellings (ImageLocality normalizes docker.io/library/ and :latest).
IMAGES = [
    ("nginx:1.27", ["docker.io/library/nginx:1.27", "nginx:1.27"]),
    ("redis:7", ["docker.io/library/redis:7", "redis:7"]),
    ("postgres:16", ["docker.io/library/postgres:16"]),
    ("busybox", ["docker.io/library/busybox:latest"]),
    ("registry.k8s.io/pause:3.10", ["registry.k8s.io/pause:3.10"]),
    ("quay.io/ml/trainer:v2", ["quay.io/ml/trainer:v2"]),
    ("ghcr.io/acme/api:1.0", ["ghcr.io/acme/api:1.0"]),
]
PRIORITY_CLASSES = [("diff-low", -10, None), ("diff-mid", 100, None), ("diff-high", 1000, None),
                    ("diff-high-never", 1000, "Never")]
RUNTIME_CLASS = "diff-overhead"
EXT = "example.com/foo"
TOPO_KEYS = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "diff/rack"]
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
CSI_DRIVER = "diff.csi.example.com"
CSI_DRIVER2 = "diff2.csi.example.com"
PD_DRIVER = "pd.csi.storage.gke.io"  # what in-line / in-tree GCE PD volumes migrate to
EBS_DRIVER = "ebs.csi.aws.com"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
# The e2e dynamic provisioner's name as test-differential.sh starts it (tests/e2e/provisioner: a
# hostPath PV pinned to the selected node's kubernetes.io/hostname, which is the node's name
# here). A DNS subdomain, so that a CSIDriver of that name can opt into capacity tracking.
PROVISIONER = "hostpath.e2e.kubesched.io"


def globals_():
    out = []
    for name, value, policy in PRIORITY_CLASSES:
        pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": name}, "value": value}
        if policy:
            pc["preemptionPolicy"] = policy
        out.append(pc)
    out.append({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": RUNTIME_CLASS}, "handler": "runc",
                "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}}})
    return out


class Gen:
    def __init__(self, seed, cluster, npending, wffc=True):
        self.r = random.Random("%s/%s" % (seed, cluster))
        self.seed, self.cluster, self.npending = seed, cluster, npending
        self.with_wffc = wffc
        self.wffc_pods = 0  # pending pods with an unbound WaitForFirstConsumer claim (wffc())
        self.prefix = "c%d" % cluster
        self.namespaces = ["%s-ns%d" % (self.prefix, i) for i in range(3)]
        self.nodes = []
        self.seq = 0
        self.low_share = 0.3  # of bound pods in PriorityClass diff-low
        self.claims = {ns: [] for ns in self.namespaces}  # ns -> [(name, kind)], see storage()
        self.rwop_used = set()  # ReadWriteOncePod claims a bound pod uses already
        self.volume_pods = 0  # pending pods with a claim, ephemeral or in-line disk volume
        self.claim_pv = {}  # (ns, claim) -> the PV it is bound to
        self.vas = []  # PVs with a VolumeAttachment (its name is cK-vaNN of the PV's index)

    # ---- helpers -------------------------------------------------------------------------
    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return self.r.choice(xs)

    def cpu(self, choices):
        return "%dm" % self.pick(choices)

    def mem(self, choices):
        return "%dMi" % self.pick(choices)

    def selector(self, app=None):
        r = self.r
        if self.chance(0.75):
            return {"matchLabels": {"app": app or self.pick(APPS)}}
        exprs = [{"key": "app", "operator": "In", "values": r.sample(APPS, r.randint(1, 3))}]
        if self.chance(0.3):
            exprs.append({"key": "tier", "operator": self.pick(["Exists", "DoesNotExist"])})
        return {"matchExpressions": exprs}

    def pod_labels(self, app):
        labels = {"app": app}
        if self.chance(0.7):
            labels["tier"] = self.pick(TIERS)
        if self.chance(0.2):
            labels["track"] = self.pick(["stable", "canary"])
        return labels

    # ---- namespaces ------------------------------------------------------------------------
    def namespace_objs(self):
        out = []
        for ns in self.namespaces:
            labels = {"team": self.pick(["a", "b"])}
            if self.chance(0.5):
                labels["env"] = self.pick(["prod", "dev"])
            out.append({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": ns, "labels": labels}})
        return out

    # ---- nodes -----------------------------------------------------------------------------
    def node(self, i, zones, racks):
        r = self.r
        name = "%s-n%02d" % (self.prefix, i)
        zone = self.pick(zones)
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                  "topology.kubernetes.io/zone": zone,
                  "topology.kubernetes.io/region": "r1" if zone in zones[:2] else "r2"}
        z = r.random()
        if z < 0.04:  # no topology label at all: VolumeZone lets any PV's zone through
            del labels["topology.kubernetes.io/zone"], labels["topology.kubernetes.io/region"]
        elif z < 0.08:  # only the beta zone key (VolumeZone reads a PV's beta key there)
            del labels["topology.kubernetes.io/zone"]
            labels[BETA_ZONE] = zone
        elif z < 0.2:
            labels[BETA_ZONE] = zone
        if self.chance(0.85):  # some nodes lack the rack label (spread: node not counted)
            labels["diff/rack"] = "%s-%s" % (zone, self.pick(racks))
        if self.chance(0.7):
            labels["disk"] = self.pick(["ssd", "hdd"])
        if self.chance(0.6):
            labels["diff/gen"] = str(r.randint(1, 6))
        if self.chance(0.15):
            labels["gpu"] = "true"
        cpu = self.pick(["2", "4", "4", "8", "8", "16", "3500m", "32"])
        mem = self.pick(["4Gi", "8Gi", "16Gi", "16Gi", "32Gi", "7800Mi", "64Gi"])
        pods = self.pick(["110", "110", "110", "110", "8", "16", "4"])
        alloc = {"cpu": cpu, "memory": mem, "pods": pods}
        if self.chance(0.5):
            alloc["ephemeral-storage"] = self.pick(["20Gi", "100Gi"])
        if labels.get("gpu") or self.chance(0.1):
            alloc[EXT] = str(r.randint(1, 4))
        capacity = dict(alloc)
        spec = {}
        taints = []
        if self.chance(0.15):
            taints.append({"key": "dedicated", "value": self.pick(["gpu", "infra"]),
                           "effect": self.pick(["NoSchedule", "PreferNoSchedule", "NoExecute"])})
        if self.chance(0.15):
            taints.append({"key": "spot", "effect": "PreferNoSchedule"})
        if self.chance(0.05):
            taints.append({"key": "maintenance", "value": "true", "effect": "NoExecute"})
        if taints:
            spec["taints"] = taints
        if self.chance(0.04):
            spec["unschedulable"] = True
        images = []
        for img, names in r.sample(IMAGES, r.randint(0, 4)):
            images.append({"names": list(names),
                           "sizeBytes": self.pick([4, 30, 150, 400, 900, 2500]) * 1024 * 1024 +
                           r.randint(0, 999999)})
        status = {"capacity": capacity, "allocatable": alloc,
                  "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                  "message": "no kubelet: a plain object"}]}
        if images:
            status["images"] = images
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": labels}, "spec": spec, "status": status}

    # ---- pods ------------------------------------------------------------------------------
    def container(self, name, image, big=False):
        r = self.r
        c = {"name": name, "image": image}
        kind = r.random()
        cpus = [50, 100, 250, 500, 1000, 1500] + ([2000, 3000, 6000] if big else [])
        mems = [64, 128, 256, 512, 1024, 2048] + ([4096, 8192, 16384] if big else [])
        if kind < 0.1:
            pass  # best effort: scoring counts it as 100m / 200Mi (non-zero defaults)
        elif kind < 0.2:  # limits only: the API server copies them to requests
            c["resources"] = {"limits": {"cpu": self.cpu(cpus), "memory": self.mem(mems)}}
        else:
            req = {}
            if self.chance(0.9):
                req["cpu"] = self.cpu(cpus)
            if self.chance(0.85):
                req["memory"] = self.mem(mems)
            if self.chance(0.1):
                req["ephemeral-storage"] = self.pick(["1Gi", "10Gi", "50Gi"])
            if self.chance(0.06):
                req[EXT] = str(r.randint(1, 2))
            if req:
                c["resources"] = {"requests": req}
                if EXT in req:
                    c["resources"]["limits"] = {EXT: req[EXT]}
        if self.chance(0.1):
            port = {"containerPort": self.pick([80, 443, 53]),
                    "hostPort": self.pick([8080, 8443, 9000]),
                    "protocol": self.pick(["TCP", "TCP", "UDP"])}
            if self.chance(0.2):
                port["hostIP"] = self.pick(["127.0.0.1", "0.0.0.0"])
            c["ports"] = [port]
        return c

    def node_affinity(self, zones):
        r = self.r

        def expr():
            k = r.random()
            if k < 0.3:
                return {"key": "topology.kubernetes.io/zone", "operator": "In",
                        "values": r.sample(zones, r.randint(1, len(zones)))}
            if k < 0.45:
                return {"key": "disk", "operator": self.pick(["In", "NotIn"]), "values": ["ssd"]}
            if k < 0.6:
                return {"key": "gpu", "operator": self.pick(["Exists", "DoesNotExist"])}
            if k < 0.75:
                return {"key": "diff/gen", "operator": self.pick(["Gt", "Lt"]),
                        "values": [str(r.randint(1, 5))]}
            if k < 0.85:
                return {"key": "diff/rack", "operator": "Exists"}
            return {"key": "topology.kubernetes.io/region", "operator": "NotIn", "values": ["r2"]}

        def term():
            t = {"matchExpressions": [expr() for _ in range(r.randint(1, 2))]}
            if self.nodes and self.chance(0.1):
                # a node field selector takes exactly one value
                t = {"matchFields": [{"key": "metadata.name", "operator": self.pick(["In", "NotIn"]),
                                      "values": [self.pick(self.nodes)]}]}
            return t

        na = {}
        if self.chance(0.5):
            na["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [term() for _ in range(r.randint(1, 2))]}
        if not na or self.chance(0.5):
            na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": r.randint(1, 100), "preference": term()}
                for _ in range(r.randint(1, 3))]
        return na

    def pod_affinity_term(self, ns, app):
        r = self.r
        t = {"labelSelector": self.selector(app if self.chance(0.5) else None),
             "topologyKey": self.pick(TOPO_KEYS)}
        k = r.random()
        if k < 0.15:
            t["namespaces"] = r.sample(self.namespaces, r.randint(1, 2))
        elif k < 0.25:
            t["namespaceSelector"] = {}
        elif k < 0.35:
            t["namespaceSelector"] = {"matchLabels": {"team": self.pick(["a", "b"])}}
        if self.chance(0.1) and "matchLabels" in t["labelSelector"]:
            t["matchLabelKeys"] = ["tier"]
        return t

    def pod_affinity(self, ns, app, bound):
        r = self.r
        aff = {}
        for kind in ("podAffinity", "podAntiAffinity"):
            if not self.chance(0.2 if not bound else 0.1):
                continue
            a = {}
            if self.chance(0.4 if not bound else 0.2):
                a["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    self.pod_affinity_term(ns, app) for _ in range(r.randint(1, 2))]
            else:
                a["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": r.randint(1, 100), "podAffinityTerm": self.pod_affinity_term(ns, app)}
                    for _ in range(r.randint(1, 2))]
            aff[kind] = a
        return aff

    def spread(self, app):
        r = self.r
        out = []
        for _ in range(r.randint(1, 2)):
            c = {"maxSkew": self.pick([1, 1, 2, 3]), "topologyKey": self.pick(TOPO_KEYS),
                 "whenUnsatisfiable": self.pick(["DoNotSchedule", "ScheduleAnyway"]),
                 "labelSelector": self.selector(app if self.chance(0.7) else None)}
            if c["whenUnsatisfiable"] == "DoNotSchedule" and self.chance(0.25):
                c["minDomains"] = r.randint(1, 5)
            if self.chance(0.25):
                c["nodeAffinityPolicy"] = self.pick(["Honor", "Ignore"])
            if self.chance(0.25):
                c["nodeTaintsPolicy"] = self.pick(["Honor", "Ignore"])
            if self.chance(0.1) and "matchLabels" in c["labelSelector"]:
                c["matchLabelKeys"] = ["tier"]
            if all(o["topologyKey"] != c["topologyKey"] or
                   o["whenUnsatisfiable"] != c["whenUnsatisfiable"] for o in out):
                out.append(c)
        return out

    def tolerations(self):
        r = self.r
        out = []
        for _ in range(r.randint(1, 3)):
            k = r.random()
            if k < 0.35:
                t = {"key": "dedicated", "operator": "Equal", "value": self.pick(["gpu", "infra"])}
            elif k < 0.55:
                t = {"key": "dedicated", "operator": "Exists"}
            elif k < 0.8:
                t = {"key": "spot", "operator": "Exists"}
            elif k < 0.95:
                t = {"key": "maintenance", "operator": "Equal", "value": "true"}
            else:
                t = {"operator": "Exists"}  # tolerates everything
            if self.chance(0.5):
                t["effect"] = self.pick(["NoSchedule", "PreferNoSchedule", "NoExecute"])
                if t["effect"] == "NoExecute" and self.chance(0.5):
                    t["tolerationSeconds"] = 300
            out.append(t)
        return out

    def pod(self, bound_to, zones):
        r = self.r
        self.seq += 1
        name = "%s-%s%03d" % (self.prefix, "b" if bound_to else "p", self.seq)
        ns = self.pick(self.namespaces)
        app = self.pick(APPS)
        labels = self.pod_labels(app)
        img = self.pick(IMAGES)[0]
        containers = [self.container("c0", img, big=self.chance(0.3))]
        for i in range(1, r.randint(1, 3) if self.chance(0.3) else 1):
            containers.append(self.container("c%d" % i, self.pick(IMAGES)[0]))
        used = set()  # a pod may not repeat a (protocol, hostIP, hostPort)
        for c in containers:
            ports = [p for p in c.get("ports", [])
                     if (p["protocol"], p.get("hostIP", ""), p["hostPort"]) not in used]
            used.update((p["protocol"], p.get("hostIP", ""), p["hostPort"]) for p in ports)
            if ports:
                c["ports"] = ports
            else:
                c.pop("ports", None)
        spec = {"containers": containers, "terminationGracePeriodSeconds": 0}
        if bound_to:
            spec["nodeName"] = bound_to
        if not bound_to and self.chance(0.15):
            inits = []
            for i in range(r.randint(1, 2)):
                c = self.container("init%d" % i, self.pick(IMAGES)[0], big=self.chance(0.3))
                c.pop("ports", None)
                if self.chance(0.4):
                    c["restartPolicy"] = "Always"  # a sidecar
                inits.append(c)
            spec["initContainers"] = inits
        if not bound_to and self.chance(0.06):
            spec["runtimeClassName"] = RUNTIME_CLASS
        if not bound_to and self.chance(0.05):
            # pod-level requests: at least what the containers request
            spec["resources"] = {"requests": {"cpu": self.cpu([2000, 4000]),
                                              "memory": self.mem([4096, 8192])}}
            for c in containers + spec.get("initContainers", []):
                c.pop("resources", None)
        pc = r.random()
        if bound_to:
            if pc < self.low_share:
                spec["priorityClassName"] = "diff-low"
            elif pc < self.low_share + 0.1:
                spec["priorityClassName"] = "diff-mid"
        else:
            if pc < 0.15:
                spec["priorityClassName"] = "diff-high"
            elif pc < 0.2:
                spec["priorityClassName"] = "diff-high-never"
            elif pc < 0.35:
                spec["priorityClassName"] = "diff-mid"
            elif pc < 0.4:
                spec["priorityClassName"] = "diff-low"
        if not bound_to:
            if self.chance(0.12):
                sel = {}
                if self.chance(0.6):
                    sel["disk"] = self.pick(["ssd", "hdd"])
                if self.chance(0.4):
                    sel["topology.kubernetes.io/zone"] = self.pick(zones)
                if not sel:
                    sel["gpu"] = "true"
                spec["nodeSelector"] = sel
            if self.chance(0.25):
                spec["tolerations"] = self.tolerations()
            if self.chance(0.25):
                spec["topologySpreadConstraints"] = self.spread(app)
        if self.chance(0.3 if not bound_to else 0.2):
            vols = self.volumes(ns, bool(bound_to))
            if vols:
                spec["volumes"] = vols
                if not bound_to and any(set(v) & {"persistentVolumeClaim", "ephemeral",
                                                  "gcePersistentDisk", "awsElasticBlockStore",
                                                  "iscsi", "rbd"} for v in vols):
                    self.volume_pods += 1
        aff = {}
        if not bound_to and self.chance(0.25):
            aff["nodeAffinity"] = self.node_affinity(zones)
        aff.update(self.pod_affinity(ns, app, bool(bound_to)))
        if aff:
            spec["affinity"] = aff
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec}

    # ---- storage ---------------------------------------------------------------------------
    def storage(self, nodes, zones):
        """The cluster's storage objects, in creation order (claims before the PVs whose claimRef
        names them); fills self.claims, the pools the pods' volumes are drawn from."""
        r, p = self.r, self.prefix
        out = []
        node_names = [n["metadata"]["name"] for n in nodes]

        def zone_terms():
            return [{"matchExpressions": [{"key": ZONE, "operator": "In",
                                           "values": r.sample(zones, r.randint(1, len(zones)))}]}]

        # StorageClasses: name -> (provisioner, mode); a missing mode is defaulted to Immediate.
        self.classes = {}
        for suffix, prov, mode in (("local-imm", NO_PROVISIONER, "Immediate"),
                                   ("local-wffc", NO_PROVISIONER, "WaitForFirstConsumer"),
                                   ("csi-imm", CSI_DRIVER, "Immediate"),
                                   ("csi-wffc", CSI_DRIVER, "WaitForFirstConsumer"),
                                   ("csi2", CSI_DRIVER2, None)):
            sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                  "metadata": {"name": "%s-%s" % (p, suffix)}, "provisioner": prov}
            if mode:
                sc["volumeBindingMode"] = mode
            if prov != NO_PROVISIONER and self.chance(0.5):
                sc["allowedTopologies"] = [{"matchLabelExpressions": [
                    {"key": ZONE, "values": r.sample(zones, r.randint(1, len(zones)))}]}]
            self.classes[sc["metadata"]["name"]] = (prov, mode or "Immediate")
            out.append(sc)
        cls = lambda suffix: "%s-%s" % (p, suffix)  # noqa: E731
        prevent = self.chance(0.5)
        out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                    "metadata": {"name": CSI_DRIVER}, "spec": {"attachRequired": True}})
        d2 = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
              "metadata": {"name": CSI_DRIVER2}, "spec": {"attachRequired": True}}
        if prevent:  # VolumeLimitScaling: nodes whose CSINode lacks the driver are refused
            d2["spec"]["preventPodSchedulingIfMissing"] = True
        out.append(d2)

        # PersistentVolumes (created after the claims, below).
        pvs = []
        for i in range(r.randint(4, 8 + len(nodes) // 2)):
            name = "%s-pv%02d" % (p, i)
            k = r.random()
            spec = {"capacity": {"storage": "%dGi" % self.pick([1, 5, 10, 50, 100])},
                    "accessModes": [self.pick(["ReadWriteOnce", "ReadWriteOnce", "ReadWriteMany",
                                               "ReadOnlyMany", "ReadWriteOncePod"])],
                    "persistentVolumeReclaimPolicy": "Retain"}
            labels = {}
            driver = None
            if k < 0.45:
                driver = CSI_DRIVER if self.chance(0.8) else CSI_DRIVER2
                spec["csi"] = {"driver": driver, "volumeHandle": "h-%s" % name}
                same = [o["spec"]["csi"]["volumeHandle"] for o, d in pvs if d == driver]
                if same and self.chance(0.15):
                    # two PVs of one CSI volume: NodeVolumeLimits counts it once per node
                    spec["csi"]["volumeHandle"] = self.pick(same)
                spec["storageClassName"] = (self.pick([cls("csi-imm"), cls("csi-wffc")])
                                            if driver == CSI_DRIVER else cls("csi2"))
                if self.chance(0.6):
                    spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": zone_terms()}}
            elif k < 0.65:
                spec["local"] = {"path": "/mnt/disks/%s" % name}
                spec["storageClassName"] = self.pick([cls("local-imm"), cls("local-wffc")])
                # a local volume must have node affinity: its node (sometimes one that is not
                # in the cluster)
                node = self.pick(node_names) if self.chance(0.9) else "%s-gone" % p
                spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
            elif k < 0.9:
                spec["hostPath"] = {"path": "/data/%s" % name}
                if self.chance(0.6):
                    spec["storageClassName"] = cls("local-imm")
                a = r.random()
                if a < 0.35:
                    spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": zone_terms()}}
                elif a < 0.5:
                    spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": REGION, "operator": "NotIn", "values": ["r2"]},
                                              {"key": "diff/gen", "operator": "Gt", "values": ["2"]}]},
                        {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}
                elif a < 0.58:
                    # matchFields: upstream CheckNodeAffinity matches against a Node with labels
                    # only (no name), so this term never matches
                    spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In",
                         "values": [self.pick(node_names)]}]}]}}
            else:
                if self.chance(0.5):
                    spec["gcePersistentDisk"] = {"pdName": "%s-disk" % name}
                else:
                    spec["awsElasticBlockStore"] = {"volumeID": "vol-%s" % name}
            # VolumeZone reads these labels (GA and beta keys, "a__b" = either zone)
            z = r.random()
            if z < 0.3:
                labels[ZONE] = self.pick(zones) if self.chance(0.9) else "%s-zx" % p
            elif z < 0.4:
                labels[ZONE] = "__".join(r.sample(zones, min(2, len(zones))))
            elif z < 0.45:
                labels[BETA_ZONE] = self.pick(zones)
            elif z < 0.5:
                labels[REGION] = self.pick(["r1", "r2"])
            elif z < 0.52:  # an empty zone in the list: VolumeZone ignores the label
                labels[ZONE] = "____".join(r.sample(zones, min(2, len(zones))))
            pv = {"apiVersion": "v1", "kind": "PersistentVolume",
                  "metadata": {"name": name}, "spec": spec, "status": {"phase": "Available"}}
            if labels:
                pv["metadata"]["labels"] = labels
            pvs.append((pv, driver))

        # Claims: most PVs get one (bound); the others stay Available.
        claims = []
        seq = [0]

        def claim(ns, kind, modes, cls_name, volume=None, bound=False, phase="Pending"):
            seq[0] += 1
            name = "pvc%02d-%s" % (seq[0], kind)
            c = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": name, "namespace": ns},
                 "spec": {"accessModes": modes,
                          "resources": {"requests": {"storage": "%dGi" % self.pick([1, 1, 5])}}}}
            if cls_name is not None:
                c["spec"]["storageClassName"] = cls_name
            if volume:
                c["spec"]["volumeName"] = volume
            if bound:
                c["metadata"]["annotations"] = {BIND_COMPLETED: "yes"}
            if phase != "Pending":
                c["status"] = {"phase": phase}
                if phase == "Bound":
                    c["status"].update({"accessModes": modes,
                                        "capacity": c["spec"]["resources"]["requests"]})
            claims.append(c)
            self.claims[ns].append((name, kind))
            return c

        for pv, driver in pvs:
            if not self.chance(0.75):
                continue
            ns = self.pick(self.namespaces)
            modes = list(pv["spec"]["accessModes"])
            rwop = modes == ["ReadWriteOncePod"] or self.chance(0.15)
            if rwop:
                modes = ["ReadWriteOncePod"]
            c = claim(ns, "rwop" if rwop else ("csi" if driver else "bound"), modes,
                      pv["spec"].get("storageClassName", ""), pv["metadata"]["name"], True, "Bound")
            pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                      "namespace": ns, "name": c["metadata"]["name"]}
            self.claim_pv[(ns, c["metadata"]["name"])] = pv["metadata"]["name"]
            pv["status"] = {"phase": "Bound"}
        available = [pv["metadata"]["name"] for pv, _ in pvs if pv["status"]["phase"] == "Available"]
        for _ in range(r.randint(1, 3)):  # unbound Immediate (or no class, or a missing class)
            claim(self.pick(self.namespaces), "imm", ["ReadWriteOnce"],
                  self.pick([cls("csi-imm"), cls("local-imm"), cls("csi2"), "", "%s-nosuch" % p]))
        for _ in range(r.randint(1, 3)):  # unbound WaitForFirstConsumer: bound pods only
            claim(self.pick(self.namespaces), "wffc", ["ReadWriteOnce"],
                  self.pick([cls("csi-wffc"), cls("local-wffc")]))
        if available and self.chance(0.5):  # pre-bound: volumeName, no bind-completed annotation
            claim(self.pick(self.namespaces), "prebound", ["ReadWriteOnce"],
                  self.pick([cls("local-imm"), cls("csi-wffc"), cls("csi-imm")]), self.pick(available))
        for i in range(r.randint(1, 2)):  # bound to a PV that does not exist
            claim(self.pick(self.namespaces), "gonepv", ["ReadWriteOnce"], cls("csi-imm"),
                  "%s-pv-gone%d" % (p, i), True, "Bound")
        if self.chance(0.6):
            claim(self.pick(self.namespaces), "lost", ["ReadWriteOnce"], cls("csi-imm"),
                  "%s-pv-lost" % p, True, "Lost")
        out.extend(claims)
        out.extend(pv for pv, _ in pvs)

        # CSINodes: attach limits per driver (a driver without allocatable has no limit).
        for node in node_names:
            if not self.chance(0.75):
                continue
            drivers = []
            for drv, pr, hi in ((CSI_DRIVER, 0.85, 5), (CSI_DRIVER2, 0.5, 3), (PD_DRIVER, 0.3, 3),
                                (EBS_DRIVER, 0.2, 2)):
                if not self.chance(pr):
                    continue
                d = {"name": drv, "nodeID": "id-%s" % node, "topologyKeys": [ZONE]}
                if self.chance(0.8):
                    d["allocatable"] = {"count": r.randint(0 if self.chance(0.1) else 1, hi)}
                drivers.append(d)
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                        "metadata": {"name": node}, "spec": {"drivers": drivers}})
        # VolumeAttachments: attached CSI volumes count against the node's limit even with no
        # pod using them there
        for i, (pv, driver) in enumerate(pvs):
            if driver and self.chance(0.3):
                self.vas.append(pv["metadata"]["name"])
                out.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                            "metadata": {"name": "%s-va%02d" % (p, i)},
                            "spec": {"attacher": driver, "nodeName": self.pick(node_names),
                                     "source": {"persistentVolumeName": pv["metadata"]["name"]}}})
        if self.chance(0.3):
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                        "metadata": {"name": "%s-va-gone" % p},
                        "spec": {"attacher": CSI_DRIVER, "nodeName": self.pick(node_names),
                                 "source": {"persistentVolumeName": "%s-pv-gone0" % p}}})
        for z in r.sample(zones, r.randint(0, len(zones))):
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                        "metadata": {"name": "%s-cap-%s" % (p, z), "namespace": self.namespaces[0]},
                        "storageClassName": cls("csi-wffc"),
                        "nodeTopology": {"matchLabels": {ZONE: z}},
                        "capacity": "%dGi" % self.pick([10, 100])})
        return out

    def inline_disk(self):
        """An in-line disk volume source from small pools, so that pods share disks (VolumeRestrictions
        disk conflicts; GCE PD and AWS EBS also migrate to CSI for NodeVolumeLimits)."""
        r, p = self.r, self.prefix
        k = r.random()
        ro = self.chance(0.4)
        if k < 0.35:
            return {"gcePersistentDisk": {"pdName": "%s-pd%d" % (p, r.randint(0, 2)), "readOnly": ro}}
        if k < 0.6:
            return {"awsElasticBlockStore": {"volumeID": "vol-%s-%d" % (p, r.randint(0, 1))}}
        if k < 0.8:
            return {"iscsi": {"targetPortal": "10.0.0.1:3260",
                              "iqn": "iqn.2026-01.com.example:%s-t%d" % (p, r.randint(0, 1)),
                              "lun": 0, "readOnly": ro}}
        return {"rbd": {"monitors": r.sample(["10.0.0.1:6789", "10.0.0.2:6789", "10.0.0.3:6789"],
                                             r.randint(1, 2)),
                        "image": "%s-img%d" % (p, r.randint(0, 1)), "readOnly": ro}}

    # What a pod's volume is drawn from: (share, source); a claim source lists claim kinds (see
    # storage()). Pending pods never get "wffc" (unbound WaitForFirstConsumer) claims.
    PENDING_VOLUMES = [(0.40, ("bound", "csi", "rwop")), (0.08, ("csi",)), (0.07, ("rwop",)),
                       (0.08, ("imm", "prebound")), (0.05, ("gonepv",)), (0.03, ("lost",)),
                       (0.05, "missing"), (0.05, "ephemeral"), (0.13, "disk"), (0.06, "emptyDir")]
    BOUND_VOLUMES = [(0.35, ("bound", "csi")), (0.10, ("rwop",)), (0.10, ("wffc", "imm", "gonepv")),
                     (0.05, "missing"), (0.05, "ephemeral"), (0.27, "disk"), (0.08, "emptyDir")]

    def volumes(self, ns, bound):
        """1-3 volumes for a pod in namespace ns. A pending pod never gets an unbound
        WaitForFirstConsumer claim (see the module's doc); a ReadWriteOncePod claim is used by at
        most one bound pod (as the kubelet would allow)."""
        r = self.r
        out = []
        names = set()
        for i in range(r.randint(2, 3) if self.chance(0.4) else 1):
            k = r.random()
            for share, src in (self.BOUND_VOLUMES if bound else self.PENDING_VOLUMES):
                if k < share:
                    break
                k -= share
            vol = {"name": "v%d" % i}
            if isinstance(src, tuple):
                ok = [c for c in self.claims[ns] if c[1] in src and c[0] not in names and
                      not (bound and c[1] == "rwop" and c[0] in self.rwop_used)]
                if not ok:  # none of that kind here: a bound claim, else a missing one
                    ok = [c for c in self.claims[ns] if c[1] in ("bound", "csi") and c[0] not in names]
                if not ok:
                    src = "missing"
                else:
                    name, kind = self.pick(ok)
                    names.add(name)
                    if bound and kind == "rwop":
                        self.rwop_used.add(name)
                    vol["persistentVolumeClaim"] = {"claimName": name}
                    if self.chance(0.1):
                        vol["persistentVolumeClaim"]["readOnly"] = True
            if src == "missing":
                vol["persistentVolumeClaim"] = {"claimName": "missing-%d" % r.randint(0, 2)}
            elif src == "ephemeral":  # its claim is never created (no ephemeral controller)
                vol["ephemeral"] = {"volumeClaimTemplate": {"spec": {
                    "accessModes": ["ReadWriteOnce"], "storageClassName": "%s-csi-imm" % self.prefix,
                    "resources": {"requests": {"storage": "1Gi"}}}}}
            elif src == "disk":
                vol.update(self.inline_disk())
            elif src == "emptyDir":
                vol["emptyDir"] = {}
            if any(v.get("persistentVolumeClaim", {}).get("claimName") ==
                   vol.get("persistentVolumeClaim", {}).get("claimName", "-") for v in out):
                continue  # the same missing claim twice
            out.append(vol)
        return out

    # ---- the cluster -----------------------------------------------------------------------
    def cluster_doc(self):
        r = self.r
        nnodes = r.randint(5, 40)
        zones = ["%s-z%d" % (self.prefix, i) for i in range(r.randint(1, 4))]
        racks = ["ra", "rb", "rc"][: r.randint(1, 3)]
        nodes = [self.node(i, zones, racks) for i in range(nnodes)]
        self.nodes = [n["metadata"]["name"] for n in nodes]
        setup = self.storage(nodes, zones)
        for i in range(r.randint(0, 2)):
            app = self.pick(APPS)
            setup.append({"apiVersion": "v1", "kind": "Service",
                          "metadata": {"name": "svc-%s-%d" % (app, i),
                                       "namespace": self.pick(self.namespaces)},
                          "spec": {"selector": {"app": app},
                                   "ports": [{"port": 80, "targetPort": 8080}]}})
        if self.chance(0.3):
            setup.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": "pdb-db", "namespace": self.namespaces[0]},
                          "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})
        setup.extend(nodes)
        # Bound pods: from an empty cluster to one that is nearly full.
        # One cluster in four is packed with mostly low-priority pods: preemption ground.
        packed = self.chance(0.25)
        fill = 6 if packed else r.choice([0, 0.5, 1, 2, 3, 4])
        self.low_share = 0.7 if packed else 0.3
        nbound = int(nnodes * fill)
        # What a kubelet would report: when each bound pod started, all different (preemption
        # keeps the longest-running of equal priority; kube-scheduler takes "now" for a pod
        # without a start time, which would make its choice among equal pods arbitrary).
        starts = r.sample(range(86400), nbound)
        for i in range(nbound):
            p = self.pod(self.pick(self.nodes), zones)
            p["status"] = {"startTime": "2026-01-01T%02d:%02d:%02dZ" % (
                starts[i] // 3600, starts[i] // 60 % 60, starts[i] % 60)}
            setup.append(p)
        # Half of the VolumeAttachments whose PV a bound pod uses go to that pod's node:
        # NodeVolumeLimits counts a volume attached there and used there once.
        users = {}
        for o in setup:
            if o["kind"] == "Pod":
                for v in o["spec"].get("volumes", []):
                    pv = self.claim_pv.get((o["metadata"]["namespace"],
                                            v.get("persistentVolumeClaim", {}).get("claimName")))
                    if pv:
                        users.setdefault(pv, []).append(o["spec"]["nodeName"])
        for o in setup:
            if o["kind"] == "VolumeAttachment":
                pv = o["spec"]["source"]["persistentVolumeName"]
                if users.get(pv) and self.chance(0.5):
                    o["spec"]["nodeName"] = self.pick(users[pv])
        pending = [self.pod(None, zones) for _ in range(self.npending)]
        if self.with_wffc:
            # storage objects first: kube-scheduler's informers and the PV controller see them
            # before any pod
            setup[:0] = self.wffc(nodes, zones, pending)
        return {"seed": self.seed, "cluster": self.cluster, "zones": zones,
                "namespaces": self.namespace_objs(), "setup": setup, "pending": pending,
                "volume_pods": self.volume_pods, "wffc_pods": self.wffc_pods}

    # ---- unbound WaitForFirstConsumer claims of pending pods -------------------------------
    def wffc(self, nodes, zones, pending):
        """Unbound WaitForFirstConsumer claims for about 12% of the pending pods (changed in
        place) and what they bind to: two StorageClasses (static, provisioned), static Available
        PVs. Drawn from its own stream (see the module's doc). Returns the objects to create."""
        r = random.Random("wffc/%s/%s" % (self.seed, self.cluster))
        p = self.prefix
        node_names = [n["metadata"]["name"] for n in nodes]
        static_cls, prov_cls = "%s-wffc-static" % p, "%s-wffc-prov" % p
        out = [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": static_cls}, "provisioner": NO_PROVISIONER,
                "volumeBindingMode": "WaitForFirstConsumer"}]
        prov = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": prov_cls}, "provisioner": PROVISIONER,
                "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete"}
        if r.random() < 0.5:  # checkVolumeProvisions: the node must match one term
            prov["allowedTopologies"] = [{"matchLabelExpressions": [
                {"key": ZONE, "values": r.sample(zones, r.randint(1, len(zones)))}]}]
        out.append(prov)
        if r.random() < 0.5:
            # Capacity tracking (VolumeBinding's hasEnoughCapacity, StorageCapacityScoring of a
            # provisioned claim): the provisioner's CSIDriver opts in, and the class has one
            # CSIStorageCapacity per zone for some zones (upstream takes the first sufficient
            # one in lister order: one per node keeps that determined); nodes elsewhere have
            # no capacity for it. Without the CSIDriver there is no check.
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                        "metadata": {"name": PROVISIONER},
                        "spec": {"attachRequired": False, "storageCapacity": True}})
            for z in r.sample(zones, r.randint(1, len(zones))):
                cap = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                       "metadata": {"name": "%s-wcap-%s" % (p, z), "namespace": self.namespaces[0]},
                       "storageClassName": prov_cls, "nodeTopology": {"matchLabels": {ZONE: z}},
                       "capacity": "%dGi" % r.choice([2, 10, 100])}
                if r.random() < 0.3:
                    cap["maximumVolumeSize"] = "%dGi" % r.choice([1, 5])
                out.append(cap)
        # Static PVs: several sizes and modes, so that the smallest match (FindMatchingVolume)
        # and StorageCapacityScoring's utilization differ from node to node.
        for i in range(r.randint(3, 4 + len(nodes) // 3)):
            name = "%s-wpv%02d" % (p, i)
            spec = {"capacity": {"storage": "%dGi" % r.choice([1, 2, 2, 5, 10, 20])},
                    "accessModes": r.choice([["ReadWriteOnce"], ["ReadWriteOnce"], ["ReadWriteOnce"],
                                             ["ReadWriteOnce", "ReadWriteMany"], ["ReadOnlyMany"],
                                             ["ReadWriteOncePod"]]),
                    "storageClassName": static_cls, "persistentVolumeReclaimPolicy": "Retain"}
            a = r.random()
            if a < 0.5:
                spec["local"] = {"path": "/mnt/w/%s" % name}
                spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In",
                     "values": r.sample(node_names, min(len(node_names), r.randint(1, 2)))}]}]}}
            else:
                spec["hostPath"] = {"path": "/data/w/%s" % name}
                if a < 0.8:
                    spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": ZONE, "operator": "In",
                         "values": r.sample(zones, r.randint(1, len(zones)))}]}]}}
            pv = {"apiVersion": "v1", "kind": "PersistentVolume",
                  "metadata": {"name": name, "labels": {"tier": r.choice(["gold", "silver"])}},
                  "spec": spec, "status": {"phase": "Available"}}
            out.append(pv)
        claims = []

        def claim(ns, kind, size):
            name = "wpvc%02d-%s" % (len(claims), kind)
            c = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": name, "namespace": ns},
                 "spec": {"accessModes": ["ReadWriteOnce"],
                          "resources": {"requests": {"storage": "%dGi" % size}},
                          "storageClassName": prov_cls if kind == "prov" else static_cls}}
            if kind == "static":
                c["spec"]["accessModes"] = r.choice([["ReadWriteOnce"]] * 4 + [
                    ["ReadWriteMany"], ["ReadOnlyMany"], ["ReadWriteOncePod"]])
                if r.random() < 0.25:
                    c["spec"]["selector"] = {"matchLabels": {"tier": r.choice(["gold", "silver"])}}
            elif kind == "none":  # nothing matches: too big, or a selector no PV has
                if r.random() < 0.5:
                    c["spec"]["resources"]["requests"]["storage"] = "500Gi"
                else:
                    c["spec"]["selector"] = {"matchLabels": {"tier": "none"}}
            claims.append(c)
            return name

        def use(pod, names):
            vols = [{"name": "w%d" % i, "persistentVolumeClaim": {"claimName": n}}
                    for i, n in enumerate(names)]
            if pod["spec"].get("volumes") and r.random() < 0.3:
                pod["spec"]["volumes"] = pod["spec"]["volumes"] + vols
            else:
                pod["spec"]["volumes"] = vols

        taken = set()
        for i, pod in enumerate(pending):
            if i in taken or r.random() >= 0.12:
                continue
            ns = pod["metadata"]["namespace"]
            k = r.random()
            kind = "static" if k < 0.45 else "prov" if k < 0.75 else "none" if k < 0.87 else "shared"
            if kind == "shared":
                later = [j for j in range(i + 1, len(pending))
                         if j not in taken and pending[j]["metadata"]["namespace"] == ns]
                name = claim(ns, r.choice(["static", "prov"]), r.choice([1, 2, 5]))
                use(pod, [name])
                if later:
                    j = r.choice(later)
                    taken.add(j)
                    use(pending[j], [name])
                    self.wffc_pods += 1
            else:
                size = r.choice([1, 1, 2, 5, 10]) if kind != "prov" else r.choice([1, 5])
                names = [claim(ns, kind, size)]
                if kind == "static" and r.random() < 0.15:
                    # a second claim of another size: sorted by size (byPVCSize), the bigger
                    # one cannot take the PV the smaller one chose
                    names.append(claim(ns, "static", size * 2 + 1))
                use(pod, names)
            self.wffc_pods += 1
        return out + claims


def main(argv):
    if len(argv) == 2 and argv[1] == "--globals":
        json.dump(globals_(), sys.stdout, indent=1)
        return 0
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    seed, cluster, npending = int(argv[1]), int(argv[2]), int(argv[3])
    json.dump(Gen(seed, cluster, npending).cluster_doc(), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
