"""Per-policy metrics from a run's samples (numpy).

Slack is requests minus use, integrated over time: cpu in core-hours, memory in GiB-hours.
Its positive part (``*_overprovisioned``: paid for, unused) and negative part
(``*_underprovisioned``: used beyond the request, at risk of throttling, OOM kill or
eviction under pressure) are reported too, since they cancel in the net figure. Each sample
stands for the interval that ends at it.

The same two parts as % of requests (``*_slack_percent``: requested but unused;
``*_under_percent``: used beyond the request) are averaged over the samples where the
workload has running pods that request something; a policy's total is the mean over its
workloads, each counting once. CPU demand (what the containers wanted, before limits and
contention) is integrated next to the CPU they were delivered.

``policy_breakdowns`` counts what happened by cause: OOM kills (with their times), restarts
by the containers' last termination reason, evictions by reason, pending time by reason.
"""

from __future__ import annotations

import numpy as np

from kvert.sim.engine import PolicyRun

GIB = float(2**30)
METRICS = (
    ("cpu_slack_core_hours", "CPU slack (core-h)"),
    ("cpu_overprovisioned_core_hours", "CPU over-provisioned (core-h)"),
    ("cpu_underprovisioned_core_hours", "CPU under-provisioned (core-h)"),
    ("memory_slack_gib_hours", "Memory slack (GiB-h)"),
    ("memory_overprovisioned_gib_hours", "Memory over-provisioned (GiB-h)"),
    ("memory_underprovisioned_gib_hours", "Memory under-provisioned (GiB-h)"),
    ("oom_kills", "OOM kills"),
    ("cpu_throttled_seconds", "CPU throttled time (s)"),
    ("evictions", "Evictions"),
    ("node_pressure_evictions", "  of which node-pressure"),
    ("in_place_resizes", "In-place resizes"),
    ("container_restarts", "Container restarts"),
    ("pending_pod_seconds", "Pending pod-seconds"),
    ("pods_created", "Pods created"),
    ("cpu_used_core_hours", "CPU delivered (core-h)"),
    ("cpu_demand_core_hours", "CPU demand (core-h)"),
)
PERCENT_METRICS = (
    ("cpu_slack_percent", "CPU slack (% of requests)"),
    ("cpu_under_percent", "CPU under-provisioned (% of requests)"),
    ("memory_slack_percent", "Memory slack (% of requests)"),
    ("memory_under_percent", "Memory under-provisioned (% of requests)"),
)
CLUSTER_METRICS = (("node_hours", "Node-hours"),)
# shown only when some run recorded them (an engine may not measure demand)
OPTIONAL_METRICS = frozenset({"cpu_demand_core_hours"})


def integral_hours(values: np.ndarray, dt: float, scale: float) -> float:
    """Samples of ``dt`` seconds each, summed into hours and divided by ``scale`` (1000: millicores
    to core-hours; GIB: bytes to GiB-hours)."""
    return float(np.sum(values) * dt / 3600.0 / scale)


def _percent_of_requests(request: np.ndarray, use: np.ndarray, running: np.ndarray) -> tuple[float, float]:
    """(slack, under) as the mean % of requests over the samples with running, requesting pods."""
    seen = (running > 0) & (request > 0)
    if not seen.any():
        return 0.0, 0.0
    ratio = (request[seen] - use[seen]) / request[seen]
    return float(np.mean(np.clip(ratio, 0, None)) * 100), float(np.mean(np.clip(-ratio, 0, None)) * 100)


def workload_metrics(series: dict[str, np.ndarray], counters: dict[str, float], pending: float,
                     dt: float) -> dict[str, float]:
    cpu = series["cpu_request"] - series["cpu_use"]            # millicores
    mem = series["memory_request"] - series["memory_use"]      # bytes
    running = series["pods_running"]
    cpu_slack, cpu_under = _percent_of_requests(series["cpu_request"], series["cpu_use"], running)
    mem_slack, mem_under = _percent_of_requests(series["memory_request"], series["memory_use"], running)
    demand = series.get("cpu_demand")
    return {
        "cpu_slack_percent": cpu_slack, "cpu_under_percent": cpu_under,
        "memory_slack_percent": mem_slack, "memory_under_percent": mem_under,
        "cpu_used_core_hours": integral_hours(series["cpu_use"], dt, 1000.0),
        "cpu_demand_core_hours": 0.0 if demand is None else integral_hours(demand, dt, 1000.0),
        "cpu_slack_core_hours": integral_hours(cpu, dt, 1000.0),
        "cpu_overprovisioned_core_hours": integral_hours(np.clip(cpu, 0, None), dt, 1000.0),
        "cpu_underprovisioned_core_hours": integral_hours(np.clip(-cpu, 0, None), dt, 1000.0),
        "memory_slack_gib_hours": integral_hours(mem, dt, GIB),
        "memory_overprovisioned_gib_hours": integral_hours(np.clip(mem, 0, None), dt, GIB),
        "memory_underprovisioned_gib_hours": integral_hours(np.clip(-mem, 0, None), dt, GIB),
        "oom_kills": int(counters.get("oom_kills", 0)),
        "cpu_throttled_seconds": float(counters.get("throttled_seconds", 0.0)),
        "evictions": int(counters.get("evictions", 0)),
        "node_pressure_evictions": int(counters.get("node_pressure_evictions", 0)),
        "in_place_resizes": int(counters.get("resizes", 0)),
        "container_restarts": int(counters.get("restarts", 0)),
        "pending_pod_seconds": float(pending),
        "pods_created": int(counters.get("pods_created", 0)),
    }


def _rounded(d: dict[str, float]) -> dict[str, float]:
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in d.items()}


def policy_metrics(run: PolicyRun) -> dict:
    """``{"totals": {...}, "workloads": {name: {...}}}`` for one run (empty when skipped)."""
    if run.skipped:
        return {"totals": {}, "workloads": {}}
    per = {w: workload_metrics(s, run.counters[w], run.pending_seconds.get(w, 0.0), run.interval)
           for w, s in run.workloads.items()}
    totals: dict[str, float] = {}
    for key, _ in METRICS:
        values = [m[key] for m in per.values()]
        totals[key] = sum(values) if values else 0
    for key, _ in PERCENT_METRICS:
        values = [m[key] for m in per.values()]
        totals[key] = float(np.mean(values)) if values else 0.0
    totals["node_hours"] = integral_hours(run.nodes_ready, run.interval, 1.0)
    return {"totals": _rounded(totals), "workloads": {w: _rounded(m) for w, m in per.items()}}


def _count(into: dict[str, float], key: str, amount: float = 1) -> None:
    into[key] = into.get(key, 0) + amount


def policy_breakdowns(run: PolicyRun) -> dict[str, dict]:
    """Per workload: ``oom_kills`` (time, pod, container, cause, in time order),
    ``oom_kills_by_cause``, ``restarts_by_cause``, ``evictions_by_reason`` and
    ``pending_by_reason`` (pod-seconds)."""
    out: dict[str, dict] = {}
    for w in run.workloads:
        out[w] = {"oom_kills": [], "oom_kills_by_cause": {}, "evictions_by_reason": {},
                  "restarts_by_cause": dict(sorted(run.restarts_by_cause.get(w, {}).items())),
                  "pending_by_reason": {k: round(float(v), 3)
                                        for k, v in sorted(run.pending_by_reason.get(w, {}).items())}}
    for e in run.events:
        entry = out.get(e.get("workload", ""))
        if entry is None:
            continue
        cause = str(e.get("cause") or "unknown")
        if e["kind"] == "oom-kill":
            entry["oom_kills"].append({"time": e["time"], "pod": e.get("pod", ""),
                                       "container": e.get("container", ""), "cause": cause})
            _count(entry["oom_kills_by_cause"], cause)
        elif e["kind"] == "eviction":
            _count(entry["evictions_by_reason"], cause)
    for entry in out.values():
        entry["oom_kills"].sort(key=lambda k: (k["time"], k["pod"], k["container"]))
    return out
