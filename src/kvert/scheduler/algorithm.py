"""One scheduling attempt: filter, then score (``schedulePod``), shared by the live scheduler
and ``kvert schedule``.

:meth:`SchedulingAlgorithm.schedule_pod` runs PreFilter, tries the pod's nominated node
first (``evaluateNominatedNode``: a node preemption made room on is likely the only one that
fits), then runs Filter over every node at once (numpy), stopping once enough feasible nodes
are found (``percentageOfNodesToScore``: adaptive 50 - nodes/125 %, at least 5 % and 100
nodes, walking the nodes round-robin from where the last attempt stopped), then PreScore,
Score and NormalizeScore on the feasible ones, and picks the highest weighted total (ties at
random). It raises :class:`~kvert.scheduler.framework.FitError` when no node fits (the
caller runs PostFilter), ``PluginError`` for a plugin's error and :class:`NoNodes` on an
empty cluster. It changes nothing: assuming the pod on the node is the caller's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from kvert.scheduler.cache import NodeCache
from kvert.scheduler.framework import (
    Code,
    CycleState,
    Diagnosis,
    FitError,
    Framework,
    Status,
    _go_list,
    _PluginError,
)
from kvert.scheduler.snapshot import NodeSet, num_feasible_nodes_to_find

ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
_MIN_CHUNK = 256

PluginError = _PluginError


class NoNodes(Exception):
    """The cluster has no nodes (``ErrNoNodesAvailable``)."""

    def __str__(self) -> str:
        return ERR_NO_NODES_AVAILABLE


@dataclass
class ScheduleResult:
    node: str
    row: int
    evaluated: int
    feasible: int
    diagnosis: Diagnosis
    scored_rows: np.ndarray | None = None
    per_plugin: dict[str, np.ndarray] | None = None
    total: np.ndarray | None = None


def nominated_node_name(cache: NodeCache, pod: dict) -> str:
    """The node preemption nominated the pod to: its status, else the scheduler's own
    nomination not yet reported back by the API."""
    return ((pod.get("status") or {}).get("nominatedNodeName") or "") or cache.nominated_node(pod)


class SchedulingAlgorithm:
    def __init__(self, cache: NodeCache, rng: random.Random | None = None):
        self.cache = cache
        self.rng = rng or random.Random()
        self.next_start = 0     # where the next attempt starts walking the nodes

    def schedule_pod(self, fw: Framework, state: CycleState, pod: dict) -> ScheduleResult:
        cache = self.cache
        snap = cache.snapshot()
        n_all = len(snap)
        if n_all == 0:
            raise NoNodes()
        diagnosis = Diagnosis(num_all_nodes=n_all)
        all_nodes = snap.all()
        pre, st, narrowing = fw.run_pre_filter(state, pod, all_nodes)
        if st is not None and not st.is_success:
            if st.code == Code.ERROR:
                raise _PluginError(st)
            diagnosis.pre_filter_msg = st.message()
            diagnosis.pre_filter_status = st
            diagnosis.add_plugin_status(st)
            diagnosis.absent_rows = snap.order
            diagnosis.absent_status = st
            raise FitError(pod, n_all, diagnosis)
        order = snap.order
        narrowed = pre is not None and not pre.all_nodes()
        if narrowed and pre is not None:
            wanted = snap.rows_for_names(pre.node_names or ())
            keep = np.isin(order, wanted)
            diagnosis.absent_rows = order[~keep]
            diagnosis.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                "node(s) didn't satisfy plugin(s) " + _go_list(sorted(narrowing)),
                plugin=sorted(narrowing)[0] if narrowing else "")
            for p in narrowing:
                diagnosis.unschedulable_plugins.add(p)
            order = order[keep]

        nominated = nominated_node_name(cache, pod)
        if nominated:
            row = cache.row_of.get(nominated)
            if row is not None and (not narrowed or np.any(order == row)):
                # a failure here is forgotten: the full pass below evaluates the node again
                ok = fw.run_filters(state, pod, NodeSet(cache, np.array([row], np.int64)),
                                    Diagnosis(num_all_nodes=n_all))
                if len(ok):
                    return ScheduleResult(nominated, row, 1, 1, diagnosis)

        n = len(order)
        to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, n)
        start = 0 if narrowed or n == 0 else self.next_start % n
        rotated = np.concatenate([order[start:], order[:start]]) if start else order
        feasible_parts: list[np.ndarray] = []
        found = pos = processed = 0
        chunk = max(to_find, _MIN_CHUNK)
        while pos < n and found < to_find:
            seg = rotated[pos:pos + chunk]
            ok = fw.run_filters(state, pod, NodeSet(cache, seg), diagnosis)
            need = to_find - found
            if len(ok) >= need and len(ok):
                ok = ok[:need]
                processed = pos + int(ok[-1]) + 1
            else:
                processed = pos + len(seg)
            feasible_parts.append(seg[ok])
            found += len(ok)
            pos += len(seg)
            chunk *= 2
        if not narrowed and n_all:
            self.next_start = (self.next_start + processed) % n_all
        feasible = np.concatenate(feasible_parts) if feasible_parts else np.zeros(0, np.int64)
        if len(feasible) == 0:
            raise FitError(pod, n_all, diagnosis)
        if len(feasible) == 1:
            row = int(feasible[0])
            return ScheduleResult(cache.names[row] or "", row, processed, 1, diagnosis)
        nodes = NodeSet(cache, feasible)
        st = fw.run_pre_score(state, pod, nodes)
        if st is not None and not st.is_success:
            raise _PluginError(st)
        per_plugin, total = fw.run_score(state, pod, nodes)
        best = np.flatnonzero(total == total.max())
        pick = int(best[self.rng.randrange(len(best))]) if len(best) > 1 else int(best[0])
        row = int(feasible[pick])
        return ScheduleResult(cache.names[row] or "", row, processed, len(feasible), diagnosis,
                              feasible, per_plugin, total)


__all__ = ["ERR_NO_NODES_AVAILABLE", "NoNodes", "PluginError", "ScheduleResult",
           "SchedulingAlgorithm", "nominated_node_name"]
