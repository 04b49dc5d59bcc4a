#!/usr/bin/env python3
"""A `kubesched simulate` cluster file for timing DynamicResources: NODES nodes with one
ResourceSlice of GPUS devices each (memory 16Gi..80Gi by node), one DeviceClass, and PODS pending
pods, each with its own ResourceClaim asking for one device with at least 40Gi (CEL). About half
the devices qualify, so the claims fill the cluster's qualifying GPUs and the rest stay pending.

usage: gen-dra-cluster.py NODES GPUS PODS > cluster.yaml"""
import sys

nodes, gpus, pods = (int(a) for a in sys.argv[1:4])
out = []
out.append("""apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}""")
for n in range(nodes):
    mem = 16 + 16 * (n % 5)  # 16, 32, 48, 64, 80 Gi
    out.append(f"""apiVersion: v1
kind: Node
metadata: {{name: node-{n}, labels: {{kubernetes.io/hostname: node-{n}}}}}
status: {{allocatable: {{cpu: "64", memory: 256Gi, pods: "110"}}}}""")
    devs = "\n".join(f"""  - name: gpu-{d}
    attributes: {{index: {{int: {d}}}}}
    capacity: {{memory: {{value: {mem}Gi}}}}""" for d in range(gpus))
    out.append(f"""apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: node-{n}-gpus}}
spec:
  driver: gpu.example.com
  nodeName: node-{n}
  pool: {{name: node-{n}, generation: 1, resourceSliceCount: 1}}
  devices:
{devs}""")
for p in range(pods):
    out.append(f"""apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: claim-{p}, namespace: default, uid: uid-claim-{p}}}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel: {{expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}}""")
    out.append(f"""apiVersion: v1
kind: Pod
metadata: {{name: pod-{p}, namespace: default, uid: uid-pod-{p}}}
spec:
  containers: [{{name: c, image: train, resources: {{requests: {{cpu: 100m}}}}}}]
  resourceClaims: [{{name: gpu, resourceClaimName: claim-{p}}}]""")
print("\n---\n".join(out))
