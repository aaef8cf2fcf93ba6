"""The scheduler's explanation of an attempt to place a pod (DESIGN principle 6).

One shape for the live scheduler, which writes it as compact JSON to the pod annotation
``explain.kvert.io/scheduling`` (shown by ``kvert explain pod``), and for ``kvert schedule``,
which prints it for every pending pod of a cluster snapshot::

    {
      "result": "Scheduled" | "Unschedulable" | "Error",
      "profile": "default-scheduler",
      "attempt": 2,                                # scheduling attempts so far
      "time": "2026-01-01T00:00:12Z",
      "node": "node-2",                            # null when not scheduled
      "nominatedNode": null,                       # where preemption made room for the pod
      "victims": [],                               # "namespace/name" of the pods preempted
      "message": "",                               # the FailedScheduling text when not scheduled
      "nodes": {"total": 3, "evaluated": 3, "feasible": 2},
      "filtered": {"node-1": ["node(s) had untolerated taint(s)"]},
      "details": {"node-1": "untolerated taint node-role.kubernetes.io/control-plane:NoSchedule"},
      "weights": {"TaintToleration": 3, "NodeResourcesFit": 1, ...},
      "scores": {"node-2": {"TaintToleration": 100, "NodeResourcesFit": 87, ...}, ...},
      "totals": {"node-2": 496, "node-3": 410}
    }

``filtered`` gives each rejected node the reasons of the Filter plugin that rejected it
(kube-scheduler's reason strings; a node a PreFilter result left out gets "node(s) didn't
satisfy plugin(s) [...]"), in the order the scheduler examined the nodes. ``scores`` are
each plugin's score after NormalizeScore and before its weight; ``totals`` the weighted
sums; highest total first (among equal totals the chosen node, then the examined order).
Plugins that skipped the pod (PreScore Skip) are absent; with a single feasible node nothing
is scored, as in kube-scheduler. The live annotation keeps at most :data:`MAX_NODES` nodes in
each map (``nodes`` has the full counts); ``kvert schedule`` keeps them all.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson

from kvert.api.meta import format_time
from kvert.scheduler.cache import pod_key
from kvert.scheduler.framework import CycleState, Diagnosis, Framework

ANNOTATION = "explain.kvert.io/scheduling"
MAX_NODES = 10


def filtered_nodes(fw: Framework, state: CycleState, pod: dict, diagnosis: Diagnosis,
                   limit: int | None = MAX_NODES) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(node -> reasons, node -> detail) of the rejected nodes, in examined order."""
    cache = fw.handle.cache
    reasons: dict[str, list[str]] = {}
    details: dict[str, str] = {}
    full = (lambda: False) if limit is None else (lambda: len(reasons) >= limit)
    for rec in diagnosis.records:
        if full():
            break
        plugin = fw.plugin(rec.plugin)
        explain_node = getattr(plugin, "explain_node", None)
        for i in np.flatnonzero(rec.result.codes != 0):
            if full():
                break
            row = int(rec.rows[i])
            name = cache.names[row] or ""
            if name in reasons:
                continue
            reasons[name] = rec.result.node_reasons(int(i))
            if callable(explain_node):
                try:
                    detail = explain_node(state, pod, row, cache)
                except Exception:
                    detail = None
                if detail:
                    details[name] = detail
    if diagnosis.absent_rows is not None and diagnosis.absent_status is not None:
        for row in diagnosis.absent_rows:
            if full():
                break
            name = cache.names[int(row)] or ""
            reasons.setdefault(name, list(diagnosis.absent_status.reasons))
    return reasons, details


def node_scores(fw: Framework, rows: np.ndarray, per_plugin: dict[str, np.ndarray],
                total: np.ndarray, limit: int | None = MAX_NODES, selected: str = ""
                ) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """(node -> plugin -> score, node -> total), highest total first."""
    cache = fw.handle.cache
    total = np.asarray(total)
    chosen = cache.row_of.get(selected, -1)
    candidates = np.arange(len(total))
    if limit is not None and len(total) > limit:
        # only the best ``limit`` (and every node tied with the last of them) need sorting
        cut = np.partition(total, len(total) - limit)[len(total) - limit]
        candidates = np.flatnonzero(total >= cut)
    # among equal totals the chosen node first (ties are broken at random), then the order
    # in which the scheduler examined the nodes
    sub = total[candidates]
    order = candidates[np.lexsort((candidates, rows[candidates] != chosen, -sub))]
    if limit is not None:
        order = order[:limit]
    names = [cache.names[r] or "" for r in rows[order].tolist()]
    plugins = list(per_plugin)
    columns = [per_plugin[p][order].tolist() for p in plugins]
    scores = {name: dict(zip(plugins, values)) for name, values in zip(names, zip(*columns))} \
        if plugins else {name: {} for name in names}
    totals = dict(zip(names, total[order].tolist()))
    return scores, totals


def build(fw: Framework, state: CycleState, pod: dict, *, result: str, attempt: int, now: float,
          node: str = "", message: str = "", total_nodes: int = 0, evaluated: int = 0,
          feasible: int = 0, diagnosis: Diagnosis | None = None,
          scored_rows: np.ndarray | None = None, per_plugin: dict[str, np.ndarray] | None = None,
          total: np.ndarray | None = None, nominated: str = "",
          victims: list[dict] | None = None, limit: int | None = MAX_NODES) -> dict:
    out: dict[str, Any] = {"result": result, "profile": fw.profile_name, "attempt": attempt,
                           "time": format_time(now), "node": node or None,
                           "nominatedNode": nominated or None,
                           "victims": [pod_key(v) for v in victims or ()],
                           "message": message,
                           "nodes": {"total": total_nodes, "evaluated": evaluated,
                                     "feasible": feasible}}
    filtered: dict[str, list[str]] = {}
    details: dict[str, str] = {}
    if diagnosis is not None:
        filtered, details = filtered_nodes(fw, state, pod, diagnosis, limit)
    out["filtered"] = filtered
    if details:
        out["details"] = details
    scores: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    if per_plugin is not None and total is not None and scored_rows is not None:
        out["weights"] = {p: fw.weights.get(p, 1) for p in per_plugin}
        scores, totals = node_scores(fw, scored_rows, per_plugin, total, limit, selected=node)
    out["scores"] = scores
    out["totals"] = totals
    return out


def encode(explanation: dict) -> str:
    # orjson: compact, keys in order, a tenth of json.dumps's time (one per binding)
    return orjson.dumps(explanation, option=orjson.OPT_SERIALIZE_NUMPY).decode()


def annotation_patch(explanation: dict) -> dict:
    return {"metadata": {"annotations": {ANNOTATION: encode(explanation)}}}
