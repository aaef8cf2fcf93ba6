"""Scheduler throughput at 5 000 nodes: kube-scheduler's scheduler_perf workloads, in-process
and through HTTP, printed next to kube-scheduler's published floors.

    python benchmarks/scheduler_bench.py [--nodes 5000] [--workloads basic,spread,antiaffinity]
                                         [--modes inprocess,http] [--pods N] [--no-explain]

Workloads (test/integration/scheduler_perf; nodes of 4 cpu, 32Gi, 110 pods):

* ``basic`` (SchedulingBasic): pods requesting 100m / 500Mi;
* ``spread`` (TopologySpreading): nodes in three zones, pods with a DoNotSchedule zone
  constraint (maxSkew 5) over their own label, 5 000 plain pods already running;
* ``antiaffinity`` (SchedulingPodAntiAffinity): pods with required anti-affinity to their own
  label per hostname, 1 000 such pods already running in another namespace.

Modes: ``inprocess`` runs the scheduler on the in-process client against the registry in the
same process and event loop (memory store, full admission and validation on every write);
``http`` runs ``kvert up --nodes 0 --store memory`` as its own process and the scheduler here
over HTTPS (the pods name a scheduler of their own, so ``kvert up``'s stays idle).

The figure is pods bound per wall-clock second from the end of the scheduler's initial list
until the last measured pod is bound: everything the scheduler does per pod (watch events,
the scheduling cycle, the Binding with the explanation, the Scheduled event) plus, in-process,
the API server's write path. ``cycle ms`` is the scheduling cycle alone (PreFilter .. Permit),
``cycles/s`` its inverse. Floors: scheduler_perf's thresholds for the 5000-node workloads
(SchedulingBasic 680-810 as published per release; TopologySpreading 5000Nodes_5000Pods 460;
SchedulingPodAntiAffinity 5000Nodes_2000Pods 60).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.client import InProcessClient
from kvert.client.http import HttpClient
from kvert.clock import VirtualClock, WallClock
from kvert.registry import Registry
from kvert.scheduler import Scheduler
from kvert.store import open_store

SCHEDULER = "bench-scheduler"
FLOORS = {"basic": "680-810", "spread": "460", "antiaffinity": "60"}
MEASURE = {"basic": 1000, "spread": 1000, "antiaffinity": 1000}
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(i: int, zones: bool) -> dict:
    name = f"node-{i:05d}"
    labels = {HOST: name}
    if zones:
        labels[ZONE] = f"moon-{i % 3 + 1}"
    alloc = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": alloc, "capacity": alloc}}


def pod(name: str, ns: str, workload: str, node_name: str = "") -> dict:
    spec: dict = {"schedulerName": SCHEDULER,
                  "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"requests": {"cpu": "100m", "memory": "500Mi"},
                                                "limits": {"cpu": "100m", "memory": "500Mi"}}}]}
    labels = {}
    if workload == "spread":
        labels = {"color": "blue"}
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"color": "blue"}}}]
    elif workload == "antiaffinity":
        labels = {"color": "green"}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": HOST}]}}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec}


def existing(workload: str, nodes: int) -> list[dict]:
    """Pods already bound before the measurement (scheduler_perf's initPods)."""
    if workload == "spread":
        return [pod(f"init-{i:05d}", "default", "basic", f"node-{i % nodes:05d}")
                for i in range(5000)]
    if workload == "antiaffinity":
        return [pod(f"init-{i:05d}", "sched-0", "antiaffinity", f"node-{i % nodes:05d}")
                for i in range(min(1000, nodes))]
    return [pod(f"init-{i:05d}", "default", "basic", f"node-{i % nodes:05d}") for i in range(1000)]


async def populate(client, workload: str, nodes: int, pods: int, concurrency: int) -> None:
    for ns in ("sched-0", "sched-1"):
        await client.create("namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": ns}})
    objects = [("nodes", node(i, workload == "spread"), None) for i in range(nodes)]
    objects += [("pods", p, p["metadata"]["namespace"]) for p in existing(workload, nodes)]
    ns = "sched-1" if workload == "antiaffinity" else "default"
    objects += [("pods", pod(f"pod-{i:05d}", ns, workload), ns) for i in range(pods)]
    queue = list(reversed(objects))

    async def worker():
        while queue:
            resource, obj, namespace = queue.pop()
            await client.create(resource, obj, namespace=namespace)
    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def measure(client, clock, pods: int, explain: bool, sleep) -> dict[str, float]:
    sched = Scheduler(client, clock, seed=1, explain_annotations=explain, name=SCHEDULER)
    cycle = [0.0]
    inner = sched.schedule_one

    def timed(qpi):
        t = time.perf_counter()
        inner(qpi)
        cycle[0] += time.perf_counter() - t
    sched.schedule_one = timed
    t0 = time.perf_counter()
    task = asyncio.ensure_future(sched.run())
    await sched.synced.wait()
    start = time.perf_counter()
    while sched.stats.scheduled < pods:
        await sleep()
        if task.done():
            task.result()
    await sched.wait_idle()
    wall = time.perf_counter() - start
    sched.stop()
    await task
    attempts = max(sched.stats.attempts, 1)
    return {"pods_per_second": pods / wall, "cycle_ms": 1000 * cycle[0] / attempts,
            "sync_seconds": start - t0, "unschedulable": sched.stats.unschedulable}


def run_inprocess(workload: str, nodes: int, pods: int, explain: bool) -> dict[str, float]:
    clock = VirtualClock()
    store = open_store("memory", clock=clock)
    registry = Registry(store, clock, default_chain(store, clock), seed=1)
    client = InProcessClient(registry)

    async def main() -> dict[str, float]:
        await bootstrap(registry)
        await populate(client, workload, nodes, pods, concurrency=1)
        return await measure(client, clock, pods, explain, lambda: clock.sleep(0.01))

    try:
        return clock.run(main())
    finally:
        store.close()


def run_http(workload: str, nodes: int, pods: int, explain: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kvert.cli.main", "up", "--port", "0", "--nodes", "0",
             "--no-vpa", "--store", "memory", "--data-dir", tmp, "--log-level", "warning"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            for line in proc.stdout:
                if "press Ctrl-C" in line:
                    break
            else:
                raise RuntimeError("kvert up did not start")

            async def main() -> dict[str, float]:
                client = HttpClient.from_kubeconfig(Path(tmp) / "kubeconfig")
                try:
                    await populate(client, workload, nodes, pods, concurrency=16)
                    return await measure(client, WallClock(), pods, explain,
                                         lambda: asyncio.sleep(0.01))
                finally:
                    await client.close()
            return asyncio.run(main())
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--workloads", default="basic,spread,antiaffinity")
    ap.add_argument("--modes", default="inprocess,http")
    ap.add_argument("--pods", type=int, default=0, help="measured pods (default per workload)")
    ap.add_argument("--no-explain", action="store_true", help="no explanation annotation")
    args = ap.parse_args()
    print(f"{'workload':<13} {'mode':<10} {'nodes':>6} {'pods':>5} {'pods/s':>7} "
          f"{'cycle ms':>9} {'cycles/s':>9} {'floor pods/s':>13} {'sync s':>7}")
    for workload in args.workloads.split(","):
        for mode in args.modes.split(","):
            pods = args.pods or MEASURE[workload]
            run = run_inprocess if mode == "inprocess" else run_http
            r = run(workload, args.nodes, pods, not args.no_explain)
            cycles = 1000 / r["cycle_ms"] if r["cycle_ms"] else 0
            print(f"{workload:<13} {mode:<10} {args.nodes:>6} {pods:>5} "
                  f"{r['pods_per_second']:>7.0f} {r['cycle_ms']:>9.2f} {cycles:>9.0f} "
                  f"{FLOORS[workload]:>13} {r['sync_seconds']:>7.2f}", flush=True)


if __name__ == "__main__":
    if os.environ.get("KVERT_BENCH_PROFILE"):
        import cProfile
        cProfile.run("main()", os.environ["KVERT_BENCH_PROFILE"])
    else:
        main()
