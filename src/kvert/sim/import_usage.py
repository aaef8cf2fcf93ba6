"""Recorded pods onto the imported workloads: who owned each pod, which replica slot it held,
and what the workload recorded over the window.

* **Owners.** A pod goes to the workload its owner names (kube-state-metrics' ``kube_pod_owner``,
  a ReplicaSet resolved to its Deployment and a Job to its CronJob by the source, or here by
  name: ``web-5d8f7c`` is Deployment ``web``'s, ``report-29012345`` CronJob ``report``'s);
  without an owner, to the workload whose controller would have named it so (``web-5d8f7c-x2b9q``:
  Deployment ``web``; ``db-2``: StatefulSet ``db``; the longest name wins), or to the bare Pod
  of its name. A pod no workload of the snapshot owns is left out, with a warning.
* **Slots.** A workload's pods that came and went are given replica slots: a StatefulSet's
  pod the slot of its ordinal; any other the lowest slot free when it first appears (the one
  a pod that had gone left), so the slots are as many as the pods that ran at once.
* **What was recorded** (the replay-fidelity reference): the mean over the window of the
  workload's CPU (cores) and memory working set (bytes) summed over its pods, its OOM kills
  and container restarts, its throttled seconds.

Warnings name the workload or pod and what was assumed: a history that starts late or ends
early, a container recorded but not in the template (left out) or in the template but never
recorded (kvert's default usage, half its requests), an OOM kill without a known memory limit
(not replayed: it was likely the node's OOM killer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from kvert.api.meta import format_time
from kvert.sim.import_cluster import ImportedWorkload, container_limit
from kvert.sim.recorded import ContainerSeries, PodKey, RecordedHistory
from kvert.sim.scenario import pod_template
from kvert.sim.tracefiles import WorkloadHistory
from kvert.vpa.history import format_duration, owns_by_name

MAX_POD_WARNINGS = 20
LATE_STEPS = 2                     # a history this many steps late (or early) is worth a warning


@dataclass
class WorkloadUsage:
    workload: ImportedWorkload
    history: WorkloadHistory | None = None
    recorded: dict = field(default_factory=dict)
    exit_after: float | None = None          # a Job's pods' typical run time (seconds)


@dataclass
class _Pod:
    key: PodKey
    containers: list[ContainerSeries]
    first: int
    last: int
    slot: int = -1


def _ordinal(name: str) -> int | None:
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


_RS_HASH = re.compile(r"^(.+)-[a-z0-9]{1,10}$")
_CRON_RUN = re.compile(r"^(.+)-[0-9]+$")


class _Owners:
    def __init__(self, workloads: list[ImportedWorkload]):
        self.by_ref = {(w.namespace, w.kind, w.name): w for w in workloads}
        self.by_name: dict[tuple[str, str], list[ImportedWorkload]] = {}
        for w in workloads:
            if w.kind != "Pod":
                self.by_name.setdefault((w.namespace, w.name), []).append(w)

    def find(self, namespace: str, pod: str, kind: str | None, name: str | None) -> ImportedWorkload | None:
        if kind and name:
            w = self.by_ref.get((namespace, kind, name))
            if w is not None:
                return w
            parent = {"ReplicaSet": ("Deployment", _RS_HASH), "Job": ("CronJob", _CRON_RUN)}.get(kind)
            if parent is not None:
                m = parent[1].match(name)
                if m and (namespace, parent[0], m.group(1)) in self.by_ref:
                    return self.by_ref[(namespace, parent[0], m.group(1))]
            if kind == "Node":
                return None                 # a static pod: nothing in the snapshot runs it
        w = self.by_ref.get((namespace, "Pod", pod))
        if w is not None:
            return w
        # a controller names its pods NAME-...: the workloads named by a prefix of the pod's name,
        # the longest first
        cuts = [i for i, ch in enumerate(pod) if ch == "-"]
        for cut in reversed(cuts):
            for w in self.by_name.get((namespace, pod[:cut]), ()):
                if owns_by_name(w.kind, w.name, pod):
                    return w
        return None


def _slots(pods: list[_Pod], ordinal: bool) -> int:
    """Give each pod its slot (see the module docstring); the number of slots."""
    rest, base = pods, 0
    if ordinal:
        rest = []
        for p in pods:
            n = _ordinal(p.key[1])
            if n is None:
                rest.append(p)
            else:
                p.slot = n
        base = max((p.slot for p in pods if p.slot >= 0), default=-1) + 1
    free_at: list[int] = []                  # slot -> the first step it is free again
    for p in sorted(rest, key=lambda p: (p.first, p.key[1])):
        j = next((j for j, at in enumerate(free_at) if at <= p.first), len(free_at))
        if j == len(free_at):
            free_at.append(0)
        free_at[j] = p.last + 1
        p.slot = base + j
    return max(p.slot for p in pods) + 1


def _window_time(history: RecordedHistory, step: int) -> str:
    return format_time(history.start + step * history.step)


def map_usage(workloads: list[ImportedWorkload], history: RecordedHistory) -> tuple[list[WorkloadUsage], list[str]]:
    """Each workload's usage from the recorded history, and the warnings (see the module docstring)."""
    warnings: list[str] = []
    owners = _Owners(workloads)
    by_pod: dict[PodKey, list[ContainerSeries]] = {}
    for series in history.containers:
        by_pod.setdefault((series.namespace, series.pod), []).append(series)
    grouped: dict[int, list[_Pod]] = {}
    unowned = []
    index = {id(w): i for i, w in enumerate(workloads)}
    for key, containers in sorted(by_pod.items()):
        record = history.pods.get(key)
        w = owners.find(key[0], key[1], record.owner_kind if record else None, record.owner_name if record else None)
        if w is None:
            unowned.append((key, record))
            continue
        seen = np.zeros(history.steps, dtype=bool)
        for c in containers:
            seen |= c.seen()
        if not seen.any():
            continue
        steps = np.flatnonzero(seen)
        grouped.setdefault(index[id(w)], []).append(_Pod(key, containers, int(steps[0]), int(steps[-1])))
    for key, record in unowned[:MAX_POD_WARNINGS]:
        owner = f" (owner {record.owner_kind} {record.owner_name})" if record and record.owner_kind else ""
        warnings.append(f"pod {key[0]}/{key[1]}{owner}: no workload of the snapshot owns it; its usage is left out")
    if len(unowned) > MAX_POD_WARNINGS:
        warnings.append(f"{len(unowned) - MAX_POD_WARNINGS} more pods no workload of the snapshot owns; their usage "
                        "is left out")
    out = []
    for i, w in enumerate(workloads):
        pods = grouped.get(i)
        usage = WorkloadUsage(w)
        out.append(usage)
        if not pods:
            warnings.append(f"{w.ref}: no usage recorded in the window; its containers use kvert's default "
                            "(half their requests)")
            continue
        _workload_usage(usage, pods, history, warnings)
    return out, warnings


def _workload_usage(usage: WorkloadUsage, pods: list[_Pod], history: RecordedHistory, warnings: list[str]) -> None:
    w = usage.workload
    template = pod_template(w.manifest).get("spec") or {}
    names = [c["name"] for c in (template.get("containers") or [])] + \
        [c["name"] for c in (template.get("initContainers") or [])]
    recorded_names = {s.container for p in pods for s in p.containers}
    for extra in sorted(recorded_names - set(names)):
        warnings.append(f"{w.ref}: container {extra!r} was recorded but is not in the template; left out")
    containers = [c for c in names if c in recorded_names]
    for missing in [c for c in w.containers if c not in recorded_names]:
        warnings.append(f"{w.ref}: container {missing!r} has no recorded usage; it uses kvert's default (half its "
                        "requests)")
    if not containers:
        return
    slots = _slots(pods, w.kind == "StatefulSet")
    steps = history.steps
    shape = (slots, steps)
    # float32, as the trace files hold them (a 20 000-container week is 1.6 GB in it)
    cpu = {c: np.full(shape, np.nan, dtype=np.float32) for c in containers}
    memory = {c: np.full(shape, np.nan, dtype=np.float32) for c in containers}
    oom = {c: np.zeros(shape, dtype=np.float32) for c in containers}
    ooms = restarts = 0
    throttled = 0.0
    unknown_limit = 0
    for p in pods:
        for s in p.containers:
            if s.container not in cpu:
                continue
            known = ~np.isnan(s.cpu)
            cpu[s.container][p.slot, known] = s.cpu[known] * 1000.0
            known = ~np.isnan(s.memory)
            memory[s.container][p.slot, known] = s.memory[known]
            ooms += int(s.ooms.size)
            restarts += int(s.restarts.size)
            if s.throttled is not None:
                throttled += float(np.nansum(s.throttled)) * history.step
            for t in np.unique(s.ooms).tolist():
                limit = _limit_at(s, int(t), w)
                if limit is None:
                    unknown_limit += 1
                else:
                    oom[s.container][p.slot, t] = limit
    if unknown_limit:
        warnings.append(f"{w.ref}: {unknown_limit} OOM kills without a known memory limit (no limit in the template "
                        "or in kube_pod_container_resource_limits); not replayed (likely the node's OOM killer)")
    usage.history = WorkloadHistory(history.start, history.step, containers, cpu, memory, oom)
    usage.recorded = {
        "cpu_cores_mean": round(float(sum(np.nansum(v, dtype=np.float64) for v in cpu.values())) / 1000.0 / steps, 6),
        "memory_bytes_mean": round(float(sum(np.nansum(v, dtype=np.float64) for v in memory.values())) / steps, 3),
        "oom_kills": ooms, "restarts": restarts, "throttled_seconds": round(throttled, 3), "pods": len(pods)}
    first, last = min(p.first for p in pods), max(p.last for p in pods)
    periodic = w.kind in ("Job", "CronJob")      # their pods run now and then: gaps are their nature
    if not periodic and first > LATE_STEPS:
        warnings.append(f"{w.ref}: usage recorded only from {_window_time(history, first)} "
                        f"({format_duration(first * history.step)} into the window); before it, its first values "
                        "are held")
    if not periodic and last < steps - 1 - LATE_STEPS:
        warnings.append(f"{w.ref}: usage recorded only until {_window_time(history, last + 1)} "
                        f"({format_duration((steps - 1 - last) * history.step)} before the end); after it, its last "
                        "values are held")
    replicas = (w.manifest.get("spec") or {}).get("replicas", 1) if w.kind in ("Deployment", "StatefulSet",
                                                                               "ReplicaSet") else None
    if isinstance(replicas, int) and replicas > slots:
        warnings.append(f"{w.ref}: the snapshot asks for {replicas} replicas, the history had at most {slots} pods at "
                        f"a time; the other replicas replay the mean of those that ran")
    if w.kind in ("Job", "CronJob"):
        usage.exit_after = float(np.median([(p.last - p.first + 1) * history.step for p in pods]))


def _limit_at(series: ContainerSeries, step: int, w: ImportedWorkload) -> float | None:
    if series.memory_limit is not None and np.isfinite(series.memory_limit[step]) and series.memory_limit[step] > 0:
        return float(series.memory_limit[step])
    if series.limits.get("memory"):
        return float(series.limits["memory"])
    limit = container_limit(w, series.container, "memory")
    return None if limit is None else float(limit)


__all__ = ["WorkloadUsage", "map_usage"]
