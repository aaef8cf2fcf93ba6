"""What a scheduling cycle sees of the cluster: node sets over the cache's arrays.

kube-scheduler copies its cache into a Snapshot at the start of every cycle. kvert's cycle
is synchronous (no ``await`` between taking the snapshot and reserving the chosen node), so
the cache's arrays cannot change under it and the snapshot is just a view: the node rows in
the order the scheduler walks them, plus :class:`NodeSet` -- a set of rows that Filter and
Score plugins evaluate at once with numpy (``cache.alloc[nodes.rows]`` ...).

The walk order is Kubernetes' node tree (seed 001, "スケジューラーはどのようにノードを探索
するか"): zones (``topology.kubernetes.io/region`` + ``zone``) in the order they appeared,
nodes taken round-robin across zones -- Node 1, Node 5, Node 2, Node 6, Node 3, Node 4 for
zones {1, 2, 3, 4} and {5, 6}. The cycle starts where the previous one stopped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from kvert.scheduler.nodeinfo import NodeInfo
from kvert.scheduler.reader import NodeCacheReader


class NodeSet:
    """Rows of the node cache that a plugin evaluates together."""

    __slots__ = ("cache", "rows")

    def __init__(self, cache: NodeCacheReader, rows: np.ndarray):
        self.cache = cache
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def subset(self, mask: np.ndarray) -> NodeSet:
        return NodeSet(self.cache, self.rows[mask])

    def take(self, positions: np.ndarray) -> NodeSet:
        return NodeSet(self.cache, self.rows[positions])

    def names(self) -> list[str]:
        names = self.cache.names
        return [names[int(r)] or "" for r in self.rows]

    def nodes(self) -> list[dict[str, Any]]:
        objs = self.cache.node_objs
        return [objs[int(r)] or {} for r in self.rows]

    def infos(self) -> Iterator[NodeInfo]:
        for r in self.rows:
            yield self.cache.node_info(int(r))


class Snapshot:
    """The nodes of one cycle, in walk order (``order``: cache rows)."""

    __slots__ = ("cache", "order", "generation")

    def __init__(self, cache: NodeCacheReader, order: np.ndarray, generation: int):
        self.cache = cache
        self.order = order
        self.generation = generation

    def __len__(self) -> int:
        return len(self.order)

    def all(self) -> NodeSet:
        return NodeSet(self.cache, self.order)

    def rows_for_names(self, names: Iterable[str]) -> np.ndarray:
        row_of = self.cache.row_of
        rows = sorted(row_of[n] for n in names if n in row_of)
        return np.asarray(rows, dtype=np.int64)


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind``: how many feasible nodes are enough to stop filtering.

    Under 100 nodes, all. Otherwise ``percentage`` of them (profile, else global; 0 or None
    means adaptive: 50 - nodes/125, at least 5), never fewer than 100 nodes.
    """
    min_feasible, min_percentage = 100, 5
    if num_all_nodes < min_feasible:
        return num_all_nodes
    pct = int(percentage or 0)
    if pct >= 100:
        return num_all_nodes
    if pct <= 0:
        pct = 50 - num_all_nodes // 125
        if pct < min_percentage:
            pct = min_percentage
    n = num_all_nodes * pct // 100
    return max(n, min_feasible)


__all__ = ["NodeInfo", "NodeSet", "Snapshot", "num_feasible_nodes_to_find"]
