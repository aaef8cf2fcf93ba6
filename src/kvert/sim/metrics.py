"""Per-policy metrics from a run's samples (numpy).

Slack is requests minus use, integrated over time: cpu in core-hours, memory in GiB-hours.
Its positive part (``*_overprovisioned``: paid for, unused) and negative part
(``*_underprovisioned``: used beyond the request, at risk of throttling, OOM kill or
eviction under pressure) are reported too, since they cancel in the net figure. Each sample
stands for the interval that ends at it.
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
)
CLUSTER_METRICS = (("node_hours", "Node-hours"),)


def _integral(values: np.ndarray, dt: float, scale: float) -> float:
    return float(np.sum(values) * dt / 3600.0 / scale)


def workload_metrics(series: dict[str, np.ndarray], counters: dict[str, float], pending: float,
                     dt: float) -> dict[str, float]:
    cpu = series["cpu_request"] - series["cpu_use"]            # millicores
    mem = series["memory_request"] - series["memory_use"]      # bytes
    return {
        "cpu_slack_core_hours": _integral(cpu, dt, 1000.0),
        "cpu_overprovisioned_core_hours": _integral(np.clip(cpu, 0, None), dt, 1000.0),
        "cpu_underprovisioned_core_hours": _integral(np.clip(-cpu, 0, None), dt, 1000.0),
        "memory_slack_gib_hours": _integral(mem, dt, GIB),
        "memory_overprovisioned_gib_hours": _integral(np.clip(mem, 0, None), dt, GIB),
        "memory_underprovisioned_gib_hours": _integral(np.clip(-mem, 0, None), dt, GIB),
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
    totals["node_hours"] = _integral(run.nodes_ready, run.interval, 1.0)
    return {"totals": _rounded(totals), "workloads": {w: _rounded(m) for w, m in per.items()}}
