"""Builders for scheduler tests: nodes, pods, a cache + framework, an in-process cluster."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import numpy as np

from kvert.scheduler.cache import NodeCache
from kvert.scheduler.config import build_framework, load_config
from kvert.scheduler.framework import CycleState, Diagnosis, Handle

_uid = itertools.count(1)


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", *, labels=None,
         taints=None, unschedulable: bool = False, extra: dict | None = None) -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"node-uid-{name}", "labels": dict(labels or {})},
            "spec": spec, "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def pod(name: str, cpu: str | None = None, memory: str | None = None, *, node_name: str = "",
        ns: str = "default", priority: int | None = None, containers: list | None = None,
        extra_requests: dict | None = None, **spec: Any) -> dict:
    if containers is None:
        requests = {}
        if cpu is not None:
            requests["cpu"] = cpu
        if memory is not None:
            requests["memory"] = memory
        requests.update(extra_requests or {})
        containers = [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                       "resources": {"requests": requests} if requests else {}}]
    s: dict[str, Any] = {"containers": containers, **spec}
    if node_name:
        s["nodeName"] = node_name
    if priority is not None:
        s["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}-{next(_uid)}",
                         "resourceVersion": "1"},
            "spec": s, "status": {"phase": "Pending"}}


class Bench:
    """A node cache plus one profile's framework, to run plugins outside the scheduler."""

    def __init__(self, nodes: list[dict], pods: list[dict] = (), config: Any = None):
        self.cache = NodeCache()
        for n in nodes:
            self.cache.add_node(n)
        for p in pods:
            self.cache.add_pod(p)
        cfg = load_config(config)
        self.fw = build_framework(cfg.profiles[0], Handle(self.cache))

    def nodes(self):
        return self.cache.snapshot().all()

    def names(self, rows) -> list[str]:
        return [self.cache.names[int(r)] for r in rows]

    def filter(self, p: dict, plugin: str | None = None):
        """Run PreFilter + Filter; returns (passing names, diagnosis, state)."""
        state = CycleState()
        nodes = self.nodes()
        _, st, _ = self.fw.run_pre_filter(state, p, nodes)
        assert st is None or st.is_success, st
        diagnosis = Diagnosis(num_all_nodes=len(nodes))
        if plugin is None:
            ok = self.fw.run_filters(state, p, nodes, diagnosis)
            return self.names(nodes.rows[ok]), diagnosis, state
        res = self.fw.plugin(plugin).filter(state, p, nodes)
        return res, state

    def score(self, p: dict, plugin: str, normalize: bool = True) -> dict[str, int]:
        state = CycleState()
        nodes = self.nodes()
        pl = self.fw.plugin(plugin)
        if hasattr(pl, "pre_filter"):
            pl.pre_filter(state, p, nodes)
        if hasattr(pl, "pre_score"):
            st = pl.pre_score(state, p, nodes)
            if st is not None and st.is_skip:
                return {}
        scores = np.asarray(pl.score(state, p, nodes))
        if normalize and hasattr(pl, "normalize_score"):
            scores = pl.normalize_score(state, p, nodes, scores)
        return dict(zip(self.names(nodes.rows), (int(s) for s in scores)))


class Cluster:
    """An in-process API server (memory store, default admission) in virtual time."""

    def __init__(self):
        from kvert.apiserver.admission import default_chain
        from kvert.client import InProcessClient
        from kvert.clock import VirtualClock
        from kvert.registry import Registry
        from kvert.store import open_store
        self.clock = VirtualClock()
        self.store = open_store("memory", clock=self.clock)
        self.registry = Registry(self.store, self.clock, default_chain(self.store, self.clock), seed=3)
        self.client = InProcessClient(self.registry)

    def run(self, main):
        async def wrapped():
            from kvert.apiserver.admission import bootstrap
            await bootstrap(self.registry)
            return await main()
        try:
            return self.clock.run(wrapped())
        finally:
            self.store.close()

    async def create_node(self, n: dict) -> dict:
        return await self.client.create("nodes", n)

    async def create_pod(self, p: dict) -> dict:
        p = {**p, "metadata": {k: v for k, v in p["metadata"].items()
                               if k not in ("uid", "resourceVersion")}}
        p.pop("status", None)
        return await self.client.create("pods", p, namespace=p["metadata"].get("namespace"))

    async def get_pod(self, name: str, ns: str = "default") -> dict:
        return await self.client.get("pods", name, ns)

    async def events(self, name: str, ns: str = "default") -> list[dict]:
        items = (await self.client.list("events", namespace=ns))["items"]
        return [e for e in items if e["involvedObject"].get("name") == name]

    async def settle(self, seconds: float = 0.5) -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        await self.clock.sleep(seconds)


def condition(pod_obj: dict, type_: str = "PodScheduled") -> dict | None:
    return next((c for c in (pod_obj.get("status") or {}).get("conditions") or []
                 if c.get("type") == type_), None)
