"""A copy-on-write view of the node cache: "as if these pods were gone / those were there".

Preemption asks whether a pod would fit a node once some of its pods are removed, and
every cycle asks whether it still fits once the pods nominated to a node are added
(``RunFilterPluginsWithNominatedPods``). kube-scheduler clones the NodeInfo for that;
kvert's plugins read the cache's arrays, so a :class:`CacheView` answers to the same
attributes and methods as :class:`~kvert.scheduler.cache.NodeCache`, sharing every node
attribute with it (allocatable, taints, labels, images: pods do not change them) and
copying the per-pod arrays (requests, pod counts, host ports) on its first change, so the
cache itself is never touched. Plugins evaluate a NodeSet over the view
(``NodeSet(view, rows)``) exactly as over the cache.

A plugin's cycle state is updated separately, by its PreFilterExtensions
(``pre_filter_add_pod`` / ``pre_filter_remove_pod``), as in Kubernetes. Pod counts per
query (:meth:`NodeCache.count_matching`) are the cache's, not the view's: plugins read
them in PreFilter, before any view exists.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from kvert.scheduler.cache import NodeCache, count_ports
from kvert.scheduler.nodeinfo import NodeInfo
from kvert.scheduler.podentry import HostPort, PodEntry, pod_uid
from kvert.scheduler.reader import NodeCacheReader


class CacheView:
    """The cache with some pods added or removed (see the module docstring)."""

    def __init__(self, base: NodeCache | CacheView):
        # a view of a view reads through to the first view's state
        self.base = base
        self.req: np.ndarray = base.req
        self.nonzero: np.ndarray = base.nonzero
        self.pod_count: np.ndarray = base.pod_count
        self.port_count: np.ndarray = base.port_count
        self._copied = False
        self._node_pods: dict[str, dict[str, PodEntry]] = {}
        self._ports: dict[str, Counter[HostPort]] = {}
        self._uids: dict[str, PodEntry | None] = {}

    def __getattr__(self, name: str) -> Any:
        # everything a pod does not change is the base's
        return getattr(self.base, name)

    def __len__(self) -> int:
        return len(self.base)

    # ---- changes ---------------------------------------------------------------------------

    def _copy(self) -> None:
        if not self._copied:
            self.req = self.req.copy()
            self.nonzero = self.nonzero.copy()
            self.pod_count = self.pod_count.copy()
            self.port_count = self.port_count.copy()
            self._copied = True

    def _members(self, node: str) -> dict[str, PodEntry]:
        members = self._node_pods.get(node)
        if members is None:
            members = {e.uid: e for e in self.base.node_entries(node)}
            self._node_pods[node] = members
        return members

    def _ports_of(self, node: str) -> Counter[HostPort]:
        ports = self._ports.get(node)
        if ports is None:
            ports = Counter(self.base.used_ports.get(node) or ())
            self._ports[node] = ports
        return ports

    def _account(self, e: PodEntry, row: int, sign: int) -> None:
        self._copy()
        cols = self.base.cols
        for res, value in e.req.items():
            c = cols.get(res)
            if c is not None:   # a resource no node has: nothing to account it against
                self.req[row, c] += sign * value
        self.nonzero[row, 0] += sign * e.nz_cpu
        self.nonzero[row, 1] += sign * e.nz_mem
        self.pod_count[row] += sign
        if e.ports:
            count_ports(self._ports_of(e.node), e.ports, sign)
            self.port_count[row] += sign * len(e.ports)

    def add_pod(self, pod: dict[str, Any], node: str) -> PodEntry:
        """Count ``pod`` on ``node`` (a nominated pod, or a victim given back)."""
        row = self.base.row_of[node]
        e = self.base._entry({**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node}}, node)
        members = self._members(node)
        if e.uid in members:
            raise ValueError(f"pod {e.key} is already on node {node} in this view")
        members[e.uid] = e
        self._uids[e.uid] = e
        self._account(e, row, +1)
        return e

    def remove_pod(self, pod: dict[str, Any] | PodEntry) -> PodEntry:
        """Take a pod off its node (a preemption victim)."""
        uid = pod.uid if isinstance(pod, PodEntry) else pod_uid(pod)
        e = self.entry(uid)
        if e is None:
            raise KeyError(f"pod {uid} is not on any node of this view")
        self._members(e.node).pop(uid, None)
        self._uids[uid] = None
        row = self.base.row_of.get(e.node)
        if row is not None:
            self._account(e, row, -1)
        return e

    # ---- reads -----------------------------------------------------------------------------

    def entry(self, uid: str) -> PodEntry | None:
        if uid in self._uids:
            return self._uids[uid]
        return self.base.entry(uid)

    def node_entries(self, name: str) -> list[PodEntry]:
        members = self._node_pods.get(name)
        if members is None:
            return self.base.node_entries(name)
        return list(members.values())

    @property
    def used_ports(self) -> dict[str, Counter[HostPort]]:
        if not self._ports:
            return self.base.used_ports
        return {**self.base.used_ports, **self._ports}

    def node_info(self, row: int) -> NodeInfo:
        info = self.base.node_info(row)
        cols = self.base.cols
        info.requested = {n: int(self.req[row, c]) for n, c in cols.items() if self.req[row, c]}
        info.non_zero_requested = {"cpu": int(self.nonzero[row, 0]),
                                   "memory": int(self.nonzero[row, 1])}
        info.pods = [e.pod for e in sorted(self.node_entries(info.name), key=lambda e: e.uid)]
        return info


def base_cache(cache: NodeCacheReader) -> NodeCacheReader:
    """The cache under any views: what pods are indexed in and images are counted by
    (a view shares them with its cache)."""
    while isinstance(cache, CacheView):
        cache = cache.base
    return cache


__all__ = ["CacheView", "base_cache"]
