#!/usr/bin/env python3
"""A random cluster file for `kubesched simulate`: nodes with zones, labels, taints, images and
mixed sizes; running and pending pods with requests, priorities, node selectors and affinity,
pod (anti-)affinity, topology spread constraints, tolerations, host ports, nominations and a PDB.
Deterministic for a seed. Used by tests/tools/simulate-diff.sh to compare two builds on inputs
neither was tuned for.

Usage: gen-cluster.py SEED NODES PENDING_PODS > cluster.yaml"""
import json
import random
import sys

seed, nnodes, npending = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
zones = ["z1", "z2", "z3"][: r.randint(1, 3)]
apps = ["web", "db", "cache", "batch"]
images = ["nginx:1.27", "redis:7", "postgres:16", "busybox:1.36"]
docs = []


def doc(o):
    docs.append(json.dumps(o))


doc({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}})
nodes = []
for i in range(nnodes):
    name = "n%03d" % i
    nodes.append(name)
    cpu = r.choice(["2", "4", "8", "16"])
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": r.choice(zones),
              "disk": r.choice(["ssd", "hdd"])}
    spec = {}
    if r.random() < 0.1:
        spec["taints"] = [{"key": "dedicated", "value": r.choice(["gpu", "infra"]),
                           "effect": r.choice(["NoSchedule", "PreferNoSchedule"])}]
    if r.random() < 0.03:
        spec["unschedulable"] = True
    status = {"allocatable": {"cpu": cpu, "memory": "%dGi" % (int(cpu) * 4), "pods": "110"}}
    if r.random() < 0.5:
        status["images"] = [{"names": [img], "sizeBytes": r.randint(10, 900) * 1024 * 1024}
                            for img in r.sample(images, r.randint(1, 3))]
    doc({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
         "spec": spec, "status": status})


def pod(name, node=None):
    app = r.choice(apps)
    ns = r.choice(["default", "shop"])
    c = {"name": "c", "image": r.choice(images),
         "resources": {"requests": {"cpu": "%dm" % r.choice([100, 250, 500, 1000, 1500]),
                                    "memory": "%dMi" % r.choice([128, 512, 1024, 2048])}}}
    if r.random() < 0.1:
        c["ports"] = [{"containerPort": 80, "hostPort": r.choice([8080, 9090])}]
    spec = {"containers": [c]}
    if node:
        spec["nodeName"] = node
    if r.random() < 0.3:
        spec["priority"] = r.choice([0, 10, 100, 1000])
    if r.random() < 0.15:
        spec["nodeSelector"] = {"disk": r.choice(["ssd", "hdd"])}
    if r.random() < 0.15:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    aff = {}
    if r.random() < 0.15:
        aff["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": r.randint(1, 100), "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [r.choice(zones)]}]}}]}
    if r.random() < 0.15:
        kind = r.choice(["podAffinity", "podAntiAffinity"])
        term = {"labelSelector": {"matchLabels": {"app": r.choice(apps)}},
                "topologyKey": r.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"])}
        if r.random() < 0.5:
            aff[kind] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": r.randint(1, 100), "podAffinityTerm": term}]}
        else:
            aff[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    if aff:
        spec["affinity"] = aff
    if r.random() < 0.15:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": r.randint(1, 3),
            "topologyKey": r.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]),
            "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"]),
            "labelSelector": {"matchLabels": {"app": app}}}]
    o = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": ns, "labels": {"app": app}}, "spec": spec}
    if node:
        o["status"] = {"phase": "Running", "startTime": "2026-11-%02dT10:00:00Z" % r.randint(1, 28)}
    elif r.random() < 0.03:
        o["status"] = {"nominatedNodeName": r.choice(nodes)}
    doc(o)


for i in range(nnodes * 2):
    pod("run-%04d" % i, r.choice(nodes))
for i in range(npending):
    pod("pend-%04d" % i)
doc({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
     "metadata": {"name": "web-pdb", "namespace": "default"},
     "spec": {"selector": {"matchLabels": {"app": "web"}}},
     "status": {"disruptionsAllowed": 1}})
# A YAML stream (each document in JSON flow style, which YAML reads as it is).
print("# gen-cluster.py %d %d %d\n" % (seed, nnodes, npending) + "\n---\n".join(docs))
