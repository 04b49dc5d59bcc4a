#!/usr/bin/env python3
"""Creates many pods fast: POSTs pod manifests (one JSON object per stdin line) to the API server
over several keep-alive HTTPS connections at once, in stdin order as far as the workers allow.

kubectl create -f creates one object after another (one round trip each, plus its own start-up),
which is slower than a scheduler binds; a throughput figure taken while pods trickle in measures
the creator, not the scheduler. This keeps creation ahead of scheduling.

Usage: create-pods.py [--workers N] < pods.jsonl
Env: KUBESCHED_E2E_APISERVER (https URL), KUBESCHED_E2E_CA (CA file), KUBESCHED_E2E_TOKEN
     (bearer token), as start-control-plane.sh's env file exports them.
Prints one JSON line: {"created": N, "failed": N, "seconds": S, "per_second": R, "errors": [...]}
and exits 1 when any POST failed.
"""
import argparse
import http.client
import json
import os
import queue
import ssl
import sys
import threading
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()
    try:
        url = urllib.parse.urlparse(os.environ["KUBESCHED_E2E_APISERVER"])
        ca, token = os.environ["KUBESCHED_E2E_CA"], os.environ["KUBESCHED_E2E_TOKEN"]
    except KeyError as e:
        sys.exit(f"create-pods.py: {e.args[0]} is not set; source the control plane's env file")
    ctx = ssl.create_default_context(cafile=ca)
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

    work = queue.Queue()
    for n, line in enumerate(sys.stdin, 1):
        if line.strip():
            pod = json.loads(line)
            ns = pod.get("metadata", {}).get("namespace", "default")
            work.put((n, ns, line.encode()))
    total = work.qsize()
    errors, lock = [], threading.Lock()

    def worker():
        conn = None
        while True:
            try:
                n, ns, body = work.get_nowait()
            except queue.Empty:
                break
            for attempt in (1, 2):  # one retry on a dropped keep-alive connection
                try:
                    if conn is None:
                        conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=60)
                    conn.request("POST", f"/api/v1/namespaces/{ns}/pods", body, headers)
                    resp = conn.getresponse()
                    text = resp.read()
                    if resp.status != 201:
                        with lock:
                            errors.append(f"line {n}: HTTP {resp.status}: {text[:300].decode(errors='replace')}")
                    break
                except (OSError, http.client.HTTPException) as e:
                    conn = None
                    if attempt == 2:
                        with lock:
                            errors.append(f"line {n}: {type(e).__name__}: {e}")

    t0 = time.time()
    threads = [threading.Thread(target=worker) for _ in range(max(1, args.workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dt = time.time() - t0
    print(json.dumps({"created": total - len(errors), "failed": len(errors), "start": t0,
                      "seconds": round(dt, 3), "per_second": round(total / dt, 1) if dt > 0 else None,
                      "errors": errors[:5]}))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
