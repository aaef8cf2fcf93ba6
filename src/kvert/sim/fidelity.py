"""Replay fidelity: what the "as is" replay of an imported scenario did next to what the
recorded cluster measured, per workload, so the what-if columns beside it can be trusted.

Both sides give, over the window: ``cpu_cores_mean`` (the workload's CPU summed over its
pods, averaged over time), ``memory_bytes_mean`` (its working sets, likewise), ``oom_kills``,
``restarts`` (container restarts, every cause) and ``throttled_seconds``. The replayed side
reads the run's samples (each sample stands for the interval ending at it) and counters.
``within`` says whether the replay holds: mean CPU and memory within ``TOLERANCE`` (5%) of
the recorded, OOM kills within one; a workload whose recorded mean is 0 holds when the
replayed one is too.
"""

from __future__ import annotations

import numpy as np

from kvert.sim.engine import PolicyRun
from kvert.sim.scenario import Scenario

TOLERANCE = 0.05
OOM_SLACK = 1
FIGURES = ("cpu_cores_mean", "memory_bytes_mean", "oom_kills", "restarts", "throttled_seconds")


def as_is_policy(scn: Scenario) -> str | None:
    """The name of the policy that replays the cluster as it was (every workload its own VPA)."""
    return next((p.name for p in scn.policies if p.existing and p.select is None), None)


def _close(recorded: float, replayed: float) -> bool:
    if recorded == 0:
        return replayed == 0
    return abs(replayed - recorded) <= TOLERANCE * abs(recorded)


def replayed_figures(run: PolicyRun, key: str) -> dict:
    series = run.workloads.get(key) or {}
    counters = run.counters.get(key) or {}
    cpu = series.get("cpu_use")
    memory = series.get("memory_use")
    return {"cpu_cores_mean": round(float(np.mean(cpu)) / 1000.0, 6) if cpu is not None and cpu.size else 0.0,
            "memory_bytes_mean": round(float(np.mean(memory)), 3) if memory is not None and memory.size else 0.0,
            "oom_kills": int(counters.get("oom_kills", 0)), "restarts": int(counters.get("restarts", 0)),
            "throttled_seconds": round(float(counters.get("throttled_seconds", 0.0)), 3)}


def replay_fidelity(scn: Scenario, runs: list[PolicyRun]) -> list[dict]:
    """One entry per workload with recorded figures (empty without an "as is" run)."""
    name = as_is_policy(scn)
    run = next((r for r in runs if r.policy == name and not r.skipped), None)
    if run is None:
        return []
    out = []
    for w in scn.workloads:
        if not w.recorded:
            continue
        recorded = {k: w.recorded.get(k, 0) for k in FIGURES}
        replayed = replayed_figures(run, w.key)
        within = (_close(recorded["cpu_cores_mean"], replayed["cpu_cores_mean"])
                  and _close(recorded["memory_bytes_mean"], replayed["memory_bytes_mean"])
                  and abs(replayed["oom_kills"] - recorded["oom_kills"]) <= OOM_SLACK)
        out.append({"namespace": w.namespace, "workload": w.name, "kind": w.kind, "key": w.key,
                    "recorded": recorded, "replayed": replayed, "within": within})
    return out


__all__ = ["FIGURES", "OOM_SLACK", "TOLERANCE", "as_is_policy", "replay_fidelity", "replayed_figures"]
