"""Scheduler throughput: pods scheduled per second with 100, 1000 and 5000 nodes.

    python benchmarks/scheduler_bench.py [--pods N] [--nodes 100,1000,5000] [--no-explain]

Runs the real scheduler on the in-process cluster (memory store, full admission chain) in
virtual time: the nodes and N simple pending pods (one container, cpu and memory requests)
are created first, then the scheduler starts; the figure is wall-clock pods per second from
the end of the scheduler's initial list (reported apart as "sync s") until the last pod is
bound -- everything the scheduler does per pod included: watch events, the scheduling cycle (filter/score over numpy arrays), the
bind, the Scheduled event and the explanation annotation (``--no-explain`` leaves the
annotation out), with the API server's write path (admission, validation, store, watch
fan-out) in the same process. The scheduling cycle alone is reported too.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from kvert.apiserver.admission import bootstrap, default_chain
from kvert.client import InProcessClient
from kvert.clock import VirtualClock
from kvert.registry import Registry
from kvert.scheduler import Scheduler
from kvert.store import open_store


def node(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:05d}",
                         "labels": {"kubernetes.io/hostname": f"node-{i:05d}",
                                    "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def pod(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i:06d}", "namespace": "default", "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}


def run(nodes: int, pods: int, explain: bool) -> dict[str, float]:
    clock = VirtualClock()
    store = open_store("memory", clock=clock)
    registry = Registry(store, clock, default_chain(store, clock), seed=1)
    client = InProcessClient(registry)
    result: dict[str, float] = {}

    async def main() -> None:
        await bootstrap(registry)
        for i in range(nodes):
            await client.create("nodes", node(i))
        sched = Scheduler(client, clock, seed=1, explain_annotations=explain)
        cycle_time = [0.0]
        inner = sched.schedule_one

        def timed(qpi):  # measure the scheduling cycle itself
            t = time.perf_counter()
            inner(qpi)
            cycle_time[0] += time.perf_counter() - t
        sched.schedule_one = timed
        for i in range(pods):
            await client.create("pods", pod(i))
        t0 = time.perf_counter()
        task = asyncio.ensure_future(sched.run())
        await sched.synced.wait()
        start = time.perf_counter()
        result["sync_seconds"] = start - t0
        while sched.stats.scheduled < pods:
            await clock.sleep(0.01)
        await sched.wait_idle()
        wall = time.perf_counter() - start
        result["pods_per_second"] = pods / wall
        result["cycle_ms"] = 1000 * cycle_time[0] / max(sched.stats.attempts, 1)
        result["cycle_share"] = cycle_time[0] / wall
        sched.stop()
        await task

    clock.run(main())
    store.close()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--nodes", default="100,1000,5000")
    ap.add_argument("--no-explain", action="store_true")
    args = ap.parse_args()
    print(f"{'nodes':>6} {'pods':>6} {'pods/s':>9} {'cycle ms':>9} {'cycle share':>12} {'sync s':>7}")
    for n in (int(x) for x in args.nodes.split(",")):
        r = run(n, args.pods, not args.no_explain)
        print(f"{n:>6} {args.pods:>6} {r['pods_per_second']:>9.0f} {r['cycle_ms']:>9.2f} "
              f"{100 * r['cycle_share']:>11.0f}% {r['sync_seconds']:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
