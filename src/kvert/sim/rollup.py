"""A run's figures rolled up by namespace, and what they cost.

Per namespace (summed over its workloads): CPU requested and used (core-hours), memory
requested and used (GiB-hours), the slack (requested − used) of each, OOM kills, evictions,
container restarts and pending pod-seconds. Cost, given the scenario's ``prices``
(``cpuCoreHour``, ``memoryGiBHour``): of what the workloads *requested* (what right-sized nodes
would be bought for), per namespace and in all, and of the nodes that were Ready (each node's
capacity at those prices, for its Ready hours).
"""

from __future__ import annotations

from kvert.sim.engine import PolicyRun
from kvert.sim.metrics import GIB, integral_hours
from kvert.sim.scenario import Scenario


def _namespace_figures(run: PolicyRun, keys: list[str]) -> dict:
    out = {"cpu_requested_core_hours": 0.0, "cpu_used_core_hours": 0.0, "memory_requested_gib_hours": 0.0,
           "memory_used_gib_hours": 0.0, "oom_kills": 0, "evictions": 0, "container_restarts": 0,
           "pending_pod_seconds": 0.0, "workloads": len(keys)}
    dt = run.interval
    for key in keys:
        s = run.workloads.get(key)
        if s is None:
            continue
        out["cpu_requested_core_hours"] += integral_hours(s["cpu_request"], dt, 1000.0)
        out["cpu_used_core_hours"] += integral_hours(s["cpu_use"], dt, 1000.0)
        out["memory_requested_gib_hours"] += integral_hours(s["memory_request"], dt, GIB)
        out["memory_used_gib_hours"] += integral_hours(s["memory_use"], dt, GIB)
        c = run.counters.get(key) or {}
        out["oom_kills"] += int(c.get("oom_kills", 0))
        out["evictions"] += int(c.get("evictions", 0))
        out["container_restarts"] += int(c.get("restarts", 0))
        out["pending_pod_seconds"] += float(run.pending_seconds.get(key, 0.0))
    out["cpu_slack_core_hours"] = out["cpu_requested_core_hours"] - out["cpu_used_core_hours"]
    out["memory_slack_gib_hours"] = out["memory_requested_gib_hours"] - out["memory_used_gib_hours"]
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in out.items()}


def _request_cost(figures: dict, prices: dict[str, float]) -> float:
    return (figures["cpu_requested_core_hours"] * prices.get("cpu_core_hour", 0.0)
            + figures["memory_requested_gib_hours"] * prices.get("memory_gib_hour", 0.0))


def rollup(scn: Scenario, run: PolicyRun) -> dict:
    """``{"namespaces": {ns: figures}, "cost": {...}}`` for one run (empty when skipped)."""
    if run.skipped:
        return {}
    by_namespace: dict[str, list[str]] = {}
    for w in scn.workloads:
        by_namespace.setdefault(w.namespace, []).append(w.key)
    namespaces = {ns: _namespace_figures(run, keys) for ns, keys in sorted(by_namespace.items())}
    out: dict = {"namespaces": namespaces}
    prices = scn.prices
    if prices:
        nodes = scn.node_count or 1
        node_price = sum(p.count * (p.capacity.get("cpu", 0) / 1000.0 * prices.get("cpu_core_hour", 0.0)
                                    + p.capacity.get("memory", 0) / GIB * prices.get("memory_gib_hour", 0.0))
                         for p in scn.pools) / nodes
        node_hours = integral_hours(run.nodes_ready, run.interval, 1.0)
        per_ns = {ns: round(_request_cost(f, prices), 4) for ns, f in namespaces.items()}
        out["cost"] = {"prices": dict(prices), "requests": round(sum(per_ns.values()), 4),
                       "requests_by_namespace": per_ns, "node_hours": round(node_hours, 4),
                       "nodes": round(node_hours * node_price, 4)}
    return out


__all__ = ["rollup"]
