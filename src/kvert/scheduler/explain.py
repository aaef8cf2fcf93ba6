"""The scheduler's explanation of its last attempt for a pod (DESIGN principle 6).

Written as compact JSON to the pod annotation ``explain.kvert.io/scheduling`` (read by
``kvert explain pod``). Shape::

    {
      "result": "Scheduled" | "Unschedulable" | "Error",
      "profile": "default-scheduler",
      "attempt": 2,                                # scheduling attempts so far
      "time": "2026-01-01T00:00:12Z",
      "node": "node-2",                            # when scheduled
      "message": "0/3 nodes are available: ...",   # when not
      "nodes": {"total": 3, "evaluated": 3, "feasible": 2},
      "filtered": {"TaintToleration": {"node(s) had untolerated taint(s)": 1}},
      "rejected": [{"node": "node-1", "plugin": "TaintToleration",
                    "code": "UnschedulableAndUnresolvable",
                    "reason": "node(s) had untolerated taint(s)",
                    "detail": "untolerated taint node-role.kubernetes.io/control-plane:NoSchedule"}],
      "weights": {"NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1, "TaintToleration": 3},
      "scores": [{"node": "node-2", "total": 496, "NodeResourcesFit": 87,
                  "NodeResourcesBalancedAllocation": 96, "TaintToleration": 100}]
    }

``filtered`` counts every rejection by plugin and reason (all nodes); ``rejected`` lists at
most :data:`MAX_NODES` rejected nodes (in the order the scheduler examined them) and
``scores`` the :data:`MAX_NODES` best-scored feasible nodes (highest total first; among equal totals the
chosen node, then the order the scheduler examined them). Scores are
each plugin's normalized score (0-100); ``total`` is their sum weighted by ``weights``.
Plugins that skipped the pod (PreScore Skip) are absent. Without scoring (a single feasible
node) ``scores`` is absent.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from kvert.api.meta import format_time
from kvert.scheduler.framework import CODE_NAMES, CycleState, Diagnosis, Framework

ANNOTATION = "explain.kvert.io/scheduling"
MAX_NODES = 20


def rejected_nodes(fw: Framework, state: CycleState, pod: dict, diagnosis: Diagnosis,
                   limit: int = MAX_NODES) -> list[dict]:
    cache = fw.handle.cache
    out: list[dict] = []
    seen: set[int] = set()
    for rec in diagnosis.records:
        failed = np.flatnonzero(rec.result.codes != 0)
        plugin = fw.plugin(rec.plugin)
        explain_node = getattr(plugin, "explain_node", None)
        for i in failed:
            if len(out) >= limit:
                break
            row = int(rec.rows[i])
            if row in seen:
                continue
            seen.add(row)
            entry: dict[str, Any] = {
                "node": cache.names[row] or "",
                "plugin": rec.plugin,
                "code": CODE_NAMES[int(rec.result.codes[i])],
                "reason": ", ".join(rec.result.node_reasons(int(i))),
            }
            if callable(explain_node):
                try:
                    detail = explain_node(state, pod, row, cache)
                except Exception:
                    detail = None
                if detail:
                    entry["detail"] = detail
            out.append(entry)
    if diagnosis.absent_rows is not None and diagnosis.absent_status is not None:
        for row in diagnosis.absent_rows[: max(0, limit - len(out))]:
            out.append({"node": cache.names[int(row)] or "",
                        "plugin": diagnosis.absent_status.plugin,
                        "code": CODE_NAMES[diagnosis.absent_status.code],
                        "reason": diagnosis.absent_status.message()})
    return out


def top_scores(fw: Framework, rows: np.ndarray, per_plugin: dict[str, np.ndarray],
               total: np.ndarray, limit: int = MAX_NODES, selected: str = "") -> list[dict]:
    cache = fw.handle.cache
    total = np.asarray(total)
    chosen = cache.row_of.get(selected, -1)
    # highest total first; among equals the chosen node (ties are broken at random), then
    # the order in which the scheduler examined the nodes
    order = np.lexsort((np.arange(len(total)), rows != chosen, -total))[:limit]
    out = []
    for i in order:
        i = int(i)
        entry: dict[str, Any] = {"node": cache.names[int(rows[i])] or "", "total": int(total[i])}
        for plugin, scores in per_plugin.items():
            entry[plugin] = int(scores[i])
        out.append(entry)
    return out


def build(fw: Framework, state: CycleState, pod: dict, *, result: str, attempt: int, now: float,
          node: str = "", message: str = "", total_nodes: int = 0, evaluated: int = 0,
          feasible: int = 0, diagnosis: Diagnosis | None = None,
          scored_rows: np.ndarray | None = None, per_plugin: dict[str, np.ndarray] | None = None,
          total: np.ndarray | None = None) -> dict:
    out: dict[str, Any] = {"result": result, "profile": fw.profile_name, "attempt": attempt,
                           "time": format_time(now)}
    if node:
        out["node"] = node
    if message:
        out["message"] = message
    out["nodes"] = {"total": total_nodes, "evaluated": evaluated, "feasible": feasible}
    if diagnosis is not None:
        hist = diagnosis.plugin_histogram()
        if hist:
            out["filtered"] = hist
        rejected = rejected_nodes(fw, state, pod, diagnosis)
        if rejected:
            out["rejected"] = rejected
    if per_plugin is not None and total is not None and scored_rows is not None:
        out["weights"] = {p: fw.weights.get(p, 1) for p in per_plugin}
        out["scores"] = top_scores(fw, scored_rows, per_plugin, total, selected=node)
    return out


def encode(explanation: dict) -> str:
    return json.dumps(explanation, separators=(",", ":"))


def annotation_patch(explanation: dict) -> dict:
    return {"metadata": {"annotations": {ANNOTATION: encode(explanation)}}}
