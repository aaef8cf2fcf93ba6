"""The live VPA recommender's loop over many VPAs: milliseconds per loop (samples in,
recommendations out) once the VPAs have their first recommendation.

    python benchmarks/recommender_bench.py [--vpas 2000] [--pods 10] [--loops 20] [--profile]

An in-memory fake API (VPAs, Deployments, Pods; status patches land in the cache and reach the
informer handlers, as an informer would deliver them) and a synthetic metrics source that
answers both ``usage_table()`` (one row per container, the same keys every loop) and
``pod_metrics()`` (the PodMetrics objects an older recommender reads), so the same script
measures either. Every container starts with ``--history-hours`` of minutely history (as a
recommender restored from checkpoints has), so the bounds have settled as they do in a long
run. Checkpoints are left out (``checkpoint_interval`` beyond the run).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import time
from typing import Any

import numpy as np

from kvert.api.errors import NotFound
from kvert.vpa.recommender import VPAS, Recommender

T0 = 1714521600.0


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def now(self) -> float:
        return self.t


class FakeInformer:
    def __init__(self, objects: dict) -> None:
        self.objects = objects
        self.handlers: list[tuple] = []

    def add_handlers(self, on_add=None, on_update=None, on_delete=None) -> None:
        self.handlers.append((on_add, on_update, on_delete))
        if on_add is not None:
            for obj in list(self.objects.values()):
                on_add(obj)

    def catch_up(self) -> None:
        pass

    def list(self) -> list[dict]:
        return list(self.objects.values())


class FakeApi:
    """Client and informer factory at once, over plain dicts."""

    def __init__(self) -> None:
        self.data: dict[str, dict[tuple[str, str], dict]] = {}
        self.informers: dict[str, FakeInformer] = {}
        self.rv = 0
        self.patches = 0

    def put(self, resource: str, obj: dict) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        store = self.data.setdefault(resource, {})
        old = store.get(key)
        store[key] = obj
        informer = self.informers.get(resource)
        for on_add, on_update, _ in informer.handlers if informer else ():
            if old is None and on_add:
                on_add(obj)
            elif old is not None and on_update:
                on_update(old, obj)

    # informer factory
    def informer(self, resource: str) -> FakeInformer:
        if resource not in self.informers:
            self.informers[resource] = FakeInformer(self.data.setdefault(resource, {}))
        return self.informers[resource]

    async def synced(self, resource: str) -> FakeInformer:
        return self.informer(resource)

    # client
    async def list(self, resource: str, namespace: str | None = None, **_: Any) -> dict:
        return {"items": list(self.data.get(resource, {}).values())}

    async def get(self, resource: str, name: str, namespace: str = "") -> dict:
        try:
            return self.data[resource][(namespace, name)]
        except KeyError:
            raise NotFound(resource, name) from None

    async def create(self, resource: str, obj: dict, namespace: str = "", **_: Any) -> dict:
        self.put(resource, obj)
        return obj

    async def update(self, resource: str, obj: dict, **_: Any) -> dict:
        self.put(resource, obj)
        return obj

    async def delete(self, resource: str, name: str, namespace: str = "", **_: Any) -> None:
        self.data.get(resource, {}).pop((namespace, name), None)

    async def patch(self, resource: str, name: str, ops: list, kind: str, namespace: str = "", **_: Any) -> dict:
        self.patches += 1
        try:
            obj = dict(self.data[resource][(namespace, name)])
        except KeyError:
            raise NotFound(resource, name) from None
        obj["metadata"] = dict(obj["metadata"])
        obj["status"] = ops[0]["value"]
        self.put(resource, obj)
        return obj


class Source:
    """Usage of every container: a steady level per workload with noise."""

    def __init__(self, clock: Clock, keys: list[tuple[str, str, str]], seed: int = 1) -> None:
        try:
            from kvert.vpa.metrics_source import UsageTable
        except ImportError:                 # a recommender from before usage tables
            UsageTable = None
        self.clock, self.keys, self.table_type = clock, keys, UsageTable
        self.rng = np.random.default_rng(seed)
        self.level = self.rng.uniform(0.05, 2.0, len(keys))

    def _usage(self) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.keys)
        return (self.level * self.rng.gamma(8, 1 / 8, n),
                self.level * 2.5e8 * self.rng.uniform(0.9, 1.1, n))

    async def usage_table(self):
        cpu, mem = self._usage()
        return self.table_type(self.keys, 0, np.full(len(self.keys), self.clock.now()), cpu, mem)

    async def pod_metrics(self) -> list[dict]:
        from kvert.api.meta import format_time
        cpu, mem = self._usage()
        stamp = format_time(self.clock.now())
        return [{"metadata": {"namespace": ns, "name": pod}, "timestamp": stamp, "window": "60s",
                 "containers": [{"name": c, "usage": {"cpu": f"{int(cpu[i] * 1e9)}n", "memory": str(int(mem[i]))}}]}
                for i, (ns, pod, c) in enumerate(self.keys)]


def build(vpas: int, pods: int) -> tuple[FakeApi, list[tuple[str, str, str]]]:
    api = FakeApi()
    keys = []
    for w in range(vpas):
        name = f"w{w}"
        api.put("apps/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default", "uid": f"d{w}"},
            "spec": {"replicas": pods, "selector": {"matchLabels": {"app": name}}}})
        api.put(VPAS, {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                       "metadata": {"name": name, "namespace": "default",
                                    "creationTimestamp": "2024-05-01T00:00:00Z"},
                       "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                                "updatePolicy": {"updateMode": "Off"}}})
        for p in range(pods):
            pod = f"{name}-abc-{p}"
            api.put("pods", {"metadata": {"name": pod, "namespace": "default", "uid": f"{w}-{p}",
                                          "labels": {"app": name, "pod-template-hash": "abc"}},
                             "spec": {"containers": [{"name": "app", "resources": {
                                 "requests": {"cpu": "100m", "memory": "100Mi"}}}]},
                             "status": {"phase": "Running"}})
            keys.append(("default", pod, "app"))
    return api, keys


def preload(rec: Recommender, api: FakeApi, source: Source, hours: float, pods: int) -> None:
    """``hours`` of minutely history per container before T0, as restored from a checkpoint."""
    minutes = int(hours * 60)
    if minutes <= 0:
        return
    times = np.repeat(T0 - 60.0 * np.arange(minutes, 0, -1), pods)
    codes = np.tile(np.arange(pods), minutes)
    rng = np.random.default_rng(7)
    for w, vpa in enumerate(api.data[VPAS].values()):
        level = source.level[w * pods:(w + 1) * pods][codes]
        names = [f"{vpa['metadata']['name']}-abc-{p}" for p in range(pods)]
        rec.store.get_for_vpa(vpa, "app", T0).add_samples(
            codes, times, cpu=level * rng.gamma(8, 1 / 8, codes.size),
            memory=level * 2.5e8 * rng.uniform(0.9, 1.1, codes.size), pod_names=names)


async def main(args: argparse.Namespace) -> None:
    api, keys = build(args.vpas, args.pods)
    clock = Clock()
    source = Source(clock, keys)
    rec = Recommender(api, clock, source, interval=60.0, checkpoint_interval=1e12, informers=api)
    rec.restored = True
    rec.last_checkpoint = clock.now()
    start = time.perf_counter()
    preload(rec, api, source, args.history_hours, args.pods)
    print(f"preloaded {args.history_hours:g} h of history in {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    await rec.run_once()
    first = time.perf_counter() - start
    for _ in range(args.warmup):
        clock.t += 60
        await rec.run_once()
    patches = api.patches
    profiler = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    for _ in range(args.loops):
        clock.t += 60
        if profiler:
            profiler.enable()
        await rec.run_once()
        if profiler:
            profiler.disable()
    dt = time.perf_counter() - start
    print(f"{args.vpas} VPAs x {args.pods} pods: first loop {first * 1e3:.0f} ms; "
          f"{dt / args.loops * 1e3:.1f} ms per loop over {args.loops} loops "
          f"({(api.patches - patches) / args.loops:.1f} status writes per loop)")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    start = time.perf_counter()
    written = await rec.write_checkpoints(rec._vpas)
    print(f"one checkpoint pass: {written} checkpoints in {(time.perf_counter() - start) * 1e3:.0f} ms "
          f"(every checkpoint_interval; upstream writes them every loop within a time budget)")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vpas", type=int, default=2000)
    p.add_argument("--pods", type=int, default=10)
    p.add_argument("--history-hours", type=float, default=36.0,
                   help="minutely history per container before the run (36: half way through a memory window)")
    p.add_argument("--warmup", type=int, default=5, help="loops before measuring")
    p.add_argument("--loops", type=int, default=20)
    p.add_argument("--profile", action="store_true", help="cProfile the measured loops")
    asyncio.run(main(p.parse_args()))
