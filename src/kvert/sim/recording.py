"""What a simulation records, at the cost of changes rather than of samples.

``Tracker`` follows the pods through an informer: per workload the requests and counts of
the running and pending pods (kept as running sums, updated when a pod changes), pending
pod-seconds by reason, container restarts by the cause of the termination, evictions with
their reasons. ``FleetSampler`` reads usage per workload straight from the fleet's arrays
(one ``bincount`` per series), ``RecommendationLog`` keeps each VPA's recommendation
history as it changes, and ``ReplicaLog`` each workload's replicas (what an HPA sets).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kvert.api.quantity import to_int
from kvert.clock import Clock
from kvert.kubelet.runtime.fleet import Fleet

WORKLOAD_LABEL = "kvert.io/workload"


def workload_of(pod: dict) -> str | None:
    return ((pod.get("metadata") or {}).get("labels") or {}).get(WORKLOAD_LABEL)


def requests_of(pod: dict) -> tuple[int, int]:
    """(cpu millicores, memory bytes) the pod's containers request, as applied where known; a
    pod-level request (``spec.resources``, KEP-2837) replaces the containers' for its resource,
    as applied (``status.resources``, KEP-5419) where known."""
    status = pod.get("status") or {}
    applied = {cs.get("name"): (cs.get("resources") or {}).get("requests")
               for cs in status.get("containerStatuses") or []}
    cpu = mem = 0
    for c in pod["spec"].get("containers") or []:
        req = applied.get(c["name"]) or (c.get("resources") or {}).get("requests") or {}
        cpu += to_int("cpu", req["cpu"]) if "cpu" in req else 0
        mem += to_int("memory", req["memory"]) if "memory" in req else 0
    level = (pod["spec"].get("resources") or {}).get("requests") or {}
    if level:
        level = {**level, **((status.get("resources") or {}).get("requests") or {})}
        cpu = to_int("cpu", level["cpu"]) if "cpu" in level else cpu
        mem = to_int("memory", level["memory"]) if "memory" in level else mem
    return cpu, mem


def pending_reason(pod: dict) -> str:
    """Why a pod that is not running yet waits: the scheduler's reason while unbound
    (Unschedulable, SchedulingGated; Scheduling before the first attempt), else its first
    waiting container's reason (ContainerCreating, CrashLoopBackOff, ...)."""
    status = pod.get("status") or {}
    if not (pod.get("spec") or {}).get("nodeName"):
        for c in status.get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("status") == "False":
                return c.get("reason") or "Unschedulable"
        return "Scheduling"
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting:
            return waiting.get("reason") or "ContainerCreating"
    return "ContainerCreating"


def _resized(old: dict, new: dict) -> bool:
    """Whether a running pod's resize just completed: its containers' actual resources
    (``status.containerStatuses[].resources``) changed and no ``PodResizeInProgress`` is left,
    the moment its node writes the ``ResizeCompleted`` event. (A resize's status can show
    memory applied before CPU: only the write that ends it counts.)"""
    status = new.get("status") or {}
    before = (old.get("status") or {}).get("containerStatuses")
    after = status.get("containerStatuses")
    if not before or not after or before is after or status.get("phase") != "Running":
        return False
    was = {cs.get("name"): cs.get("resources") for cs in before}
    pod_level_before = (old.get("status") or {}).get("resources")
    pod_level_moved = pod_level_before is not None and status.get("resources") is not None and \
        status["resources"] != pod_level_before        # a pod-level resize (KEP-5419)
    if not pod_level_moved and not any(
            cs.get("name") in was and cs.get("resources") is not None and was[cs.get("name")] is not None
            and cs.get("resources") != was[cs.get("name")] for cs in after):
        return False
    return not any(c.get("type") == "PodResizeInProgress" for c in status.get("conditions") or ())


class Tracker:
    """Pod lifecycle bookkeeping from an informer."""

    def __init__(self, clock: Clock, workloads: list[str]):
        self.clock = clock
        self.index = {w: i for i, w in enumerate(workloads)}
        n = len(workloads)
        # running sums per workload: cpu request, memory request, pods running, pods pending
        self.sums = np.zeros((4, n))
        self._part: dict[str, tuple[int, tuple]] = {}       # uid -> (workload index, its part)
        self.created: dict[str, float] = {}                        # uid -> created at
        self.started: set[str] = set()                             # uids that reached Running
        self.pending = {w: 0.0 for w in workloads}
        self.pending_by_reason: dict[str, dict[str, float]] = {w: {} for w in workloads}
        self._waiting: dict[str, tuple[str, float]] = {}           # uid -> (reason, since)
        self.restarts: dict[str, int] = {w: 0 for w in workloads}
        self.restarts_by_cause: dict[str, dict[str, int]] = {w: {} for w in workloads}
        self._restart_counts: dict[tuple[str, str], int] = {}      # (uid, container) -> restartCount
        self.workload_of_uid: dict[str, str] = {}
        self.workload_of_pod: dict[tuple[str, str], str] = {}
        self.evictions: dict[str, int] = {w: 0 for w in workloads}
        self.resizes: dict[str, int] = {w: 0 for w in workloads}
        self.pods_created: dict[str, int] = {w: 0 for w in workloads}
        self.evicted: set[str] = set()
        self.events: list[dict] = []
        # pods a scale-down (an HPA's) is about to delete, and those it deleted: not evictions
        self.scale_down_pending: dict[str, int] = {w: 0 for w in workloads}
        self.scaled_down: dict[str, int] = {w: 0 for w in workloads}
        self.start = clock.now()
        self.stopped = False

    # -- informer handlers ------------------------------------------------------------------------------

    def on_add(self, pod: dict) -> None:
        if not self.stopped:
            self._see(pod)

    def on_update(self, old: dict, new: dict) -> None:
        if not self.stopped:
            self._see(new)
            if _resized(old, new):
                w = self.workload_of_uid.get(new["metadata"]["uid"])
                if w is not None:
                    self.resizes[w] += 1

    def on_delete(self, pod: dict) -> None:
        if self.stopped:
            return
        self._see(pod)
        uid = pod["metadata"]["uid"]
        w = self.workload_of_uid.get(uid)
        if w is None:
            return
        self._set_part(uid, None)
        self._stop_waiting(uid, w)
        if uid in self.evicted:
            return
        self.evicted.add(uid)
        if (pod.get("status") or {}).get("phase") == "Succeeded":
            return        # a finished pod cleaned up (a Job's history, its TTL): nothing was disrupted
        target = next((c for c in (pod.get("status") or {}).get("conditions") or []
                       if c.get("type") == "DisruptionTarget"), None)
        if target is None and self.scale_down_pending[w] > 0:
            # the ReplicaSet deleting the pods its Deployment no longer wants
            self.scale_down_pending[w] -= 1
            self.scaled_down[w] += 1
            return
        self.evictions[w] += 1
        self._event("eviction", w, pod, cause=(target or {}).get("reason") or "api",
                    message=(target or {}).get("message", ""))

    # -- bookkeeping ---------------------------------------------------------------------------------------

    def _see(self, pod: dict) -> None:
        w = workload_of(pod)
        if w is None or w not in self.index:
            return
        meta = pod["metadata"]
        uid = meta["uid"]
        now = self.clock.now()
        if uid not in self.created:
            self.created[uid] = now
            self.workload_of_uid[uid] = w
            self.workload_of_pod[(meta.get("namespace", "default"), meta["name"])] = w
            self.pods_created[w] += 1
        status = pod.get("status") or {}
        phase = status.get("phase", "Pending")
        part: tuple = (0.0, 0.0, 0.0, 0.0)
        if phase == "Running":
            cpu, mem = requests_of(pod)
            part = (float(cpu), float(mem), 1.0, 0.0)
            self.started.add(uid)
            self._stop_waiting(uid, w)
        elif phase == "Pending":
            part = (0.0, 0.0, 0.0, 1.0)
            if uid not in self.started:
                self._wait(uid, w, pending_reason(pod), now)
        else:
            self._stop_waiting(uid, w)
        self._set_part(uid, part)
        for cs in status.get("containerStatuses") or []:
            key = (uid, cs.get("name", ""))
            count = int(cs.get("restartCount") or 0)
            before = self._restart_counts.get(key, 0)
            if count > before:
                self._restart_counts[key] = count
                cause = (((cs.get("lastState") or {}).get("terminated") or {}).get("reason")) or "Unknown"
                self.restarts[w] += count - before
                causes = self.restarts_by_cause[w]
                causes[cause] = causes.get(cause, 0) + count - before
        if phase == "Failed" and status.get("reason") == "Evicted" and uid not in self.evicted:
            # evicted by its node (node pressure): it stays, Failed; counted once
            self.evicted.add(uid)
            self.evictions[w] += 1
            self._event("eviction", w, pod, cause="node-pressure", message=status.get("message", ""))

    def _set_part(self, uid: str, part: tuple | None) -> None:
        """The pod's (cpu request, memory request, running, pending) in its workload's sums."""
        i = self.index[self.workload_of_uid[uid]] if part is not None else -1
        old = self._part.get(uid)
        if old is not None and old == (i, part):
            return          # most writes (a status) change none of it
        if old is not None:
            del self._part[uid]
            self.sums[:, old[0]] -= old[1]
        if part is not None:
            self.sums[:, i] += part
            self._part[uid] = (i, part)

    def _wait(self, uid: str, w: str, reason: str, now: float) -> None:
        current = self._waiting.get(uid)
        if current is not None and current[0] == reason:
            return
        self._stop_waiting(uid, w)
        self._waiting[uid] = (reason, now)

    def _stop_waiting(self, uid: str, w: str) -> None:
        current = self._waiting.pop(uid, None)
        if current is None:
            return
        reason, since = current
        waited = self.clock.now() - since
        self.pending[w] += waited
        by_reason = self.pending_by_reason[w]
        by_reason[reason] = by_reason.get(reason, 0.0) + waited

    def _event(self, kind: str, workload: str, pod: dict, **detail: Any) -> None:
        self.events.append({"time": round(self.clock.now() - self.start, 3), "kind": kind, "workload": workload,
                            "pod": pod["metadata"]["name"], "node": (pod.get("spec") or {}).get("nodeName", ""),
                            **detail})

    def finish(self) -> None:
        self.stopped = True
        for uid in list(self._waiting):
            self._stop_waiting(uid, self.workload_of_uid[uid])


class FleetSampler:
    """Usage per workload from the fleet: cpu used and demanded over the last interval
    (millicores), working sets now (bytes), throttled time (seconds, accumulated).

    CPU is read from cumulative counters, per workload the sum over every container it had:
    the rows present in the fleet (running or exited) and those removed since the sampler
    began (``Fleet.retired``, kept per pod at removal). An interval's cpu is the difference
    of two such sums, so a container that exited, was killed or was removed during the
    interval still counts what it used in it, and nothing is counted twice. The working set
    is the running containers' at the sample instant.
    """

    COUNTERS = (("cpu_use", "cpu_ns"), ("cpu_demand", "demand_ns"), ("throttled", "throttled_ns"))

    def __init__(self, fleet: Fleet, tracker: Tracker):
        self.fleet = fleet
        self.tracker = tracker
        self.n = len(tracker.index)
        self._serial = np.zeros(0, dtype=np.int64)        # sandbox slot -> serial it was tagged for
        self._workload = np.zeros(0, dtype=np.int64)      # sandbox slot -> workload index, -1 none
        if fleet.retired is None:
            fleet.retired = {}
        self._removed = np.zeros((len(self.COUNTERS), self.n))    # counters of removed containers
        self._last = self._totals()
        self.throttled_ns = np.zeros(self.n)

    def _workloads(self, idx: np.ndarray) -> np.ndarray:
        """The workload index of each row (-1: not a workload's), tagged once per pod."""
        fleet = self.fleet
        size = fleet.sandboxes.capacity
        if self._serial.size < size:
            grow = size - self._serial.size
            self._serial = np.concatenate([self._serial, np.zeros(grow, dtype=np.int64)])
            self._workload = np.concatenate([self._workload, np.full(grow, -1, dtype=np.int64)])
        sandboxes = fleet.rows.sandbox[idx]
        serials = fleet.sandboxes.serial[sandboxes]
        for slot in np.unique(sandboxes[self._serial[sandboxes] != serials]).tolist():
            w = self.tracker.workload_of_uid.get(fleet.pods[slot].uid)
            if w is None:
                continue                        # not seen by the tracker yet: next time
            self._workload[slot] = self.tracker.index[w]
            self._serial[slot] = fleet.sandboxes.serial[slot]
        return np.where(self._serial[sandboxes] == serials, self._workload[sandboxes], -1)

    def _totals(self) -> np.ndarray:
        """Per counter and workload: core-ns of every container so far (present rows and
        removed ones). A row whose pod the tracker does not know yet counts from the sample
        after it learns it, with everything the row used before."""
        fleet, rows = self.fleet, self.fleet.rows
        retired = fleet.retired
        assert retired is not None          # a dict from __init__ on, replaced at each sample
        fleet.retired = {}
        for uid, counts in retired.items():
            workload = self.tracker.workload_of_uid.get(uid)
            if workload is not None:
                self._removed[:, self.tracker.index[workload]] += counts
        idx = np.flatnonzero(rows.serial[:rows.used])
        w = self._workloads(idx)
        mine = w >= 0
        idx, w = idx[mine], w[mine]
        totals = self._removed.copy()
        for i, (_, column) in enumerate(self.COUNTERS):
            totals[i] += np.bincount(w, weights=getattr(rows, column)[idx].astype(float), minlength=self.n)
        return totals

    def sample(self, interval: float) -> dict[str, np.ndarray]:
        fleet = self.fleet
        fleet.advance()
        rows = fleet.rows
        idx = fleet.running()
        w = self._workloads(idx)
        mine = w >= 0
        out = {"memory_use": np.bincount(w[mine], weights=rows.memory[idx[mine]], minlength=self.n)}
        totals = self._totals()
        delta, self._last = totals - self._last, totals
        for i, (name, _) in enumerate(self.COUNTERS):
            if name == "throttled":
                self.throttled_ns += delta[i]
            else:
                out[name] = delta[i] / 1e6 / interval           # core-ns per second -> millicores
        return out


class RecommendationLog:
    """Each VPA's recommendation, per container, every time it changed (an informer's handler)."""

    def __init__(self, clock: Clock, start: float, keys: dict[tuple[str, str], str] | None = None):
        self.clock = clock
        self.start = start
        # (namespace, VPA name) -> the name its history is kept under (its workload's key);
        # without it, the VPA's name
        self.keys = keys
        self.history: dict[str, dict[str, list[dict]]] = {}
        self._last: dict[str, Any] = {}
        self.updates = 0                         # VPA writes seen (what the VPA components cost)

    def on_change(self, *objs: dict) -> None:
        self.updates += len(objs) - 1            # an update hands (old, new), an add (new)
        vpa = objs[-1]
        meta = vpa.get("metadata") or {}
        name = meta.get("name", "")
        if self.keys is not None:
            name = self.keys.get((meta.get("namespace", ""), name), name)
        rec = ((vpa.get("status") or {}).get("recommendation") or {}).get("containerRecommendations") or []
        if rec == self._last.get(name):
            return
        self._last[name] = rec
        t = round(self.clock.now() - self.start, 3)
        for item in rec:
            entry: dict[str, Any] = {"time": t}
            for bound in ("target", "lowerBound", "upperBound", "uncappedTarget"):
                values = item.get(bound) or {}
                entry[bound] = {r: to_int(r, v) for r, v in values.items() if r in ("cpu", "memory")}
            self.history.setdefault(name, {}).setdefault(item.get("containerName", ""), []).append(entry)


class ReplicaLog:
    """Each workload's Deployment ``spec.replicas`` (an informer's handler): the current values
    (one per workload, in order) and every change with its time (an HPA's rescales). A
    decrease tells ``tracker`` that as many deletions of the workload's pods are a scale-down,
    not evictions."""

    def __init__(self, clock: Clock, start: float, workloads: list[str], replicas: list[int],
                 tracker: Tracker | None = None, objects: dict[tuple[str, str, str], str] | None = None):
        self.clock = clock
        self.tracker = tracker
        self.start = start
        self.index = {w: i for i, w in enumerate(workloads)}
        # (kind, namespace, name) of each workload's object -> its key (default: the name is the key)
        self.objects = objects
        self.values = np.array(replicas, dtype=float)
        self.changes: dict[str, list[dict]] = {}

    def on_change(self, *objs: dict) -> None:
        dep = objs[-1]
        meta = dep.get("metadata") or {}
        key = meta.get("name", "")
        if self.objects is not None:
            key = self.objects.get((dep.get("kind", "Deployment"), meta.get("namespace", "default"), key), "")
        i = self.index.get(key)
        if i is None:
            return
        replicas = float((dep.get("spec") or {}).get("replicas", 1))
        if replicas == self.values[i]:
            return
        entry = {"time": round(self.clock.now() - self.start, 3), "from": int(self.values[i]), "to": int(replicas)}
        self.changes.setdefault(key, []).append(entry)
        if self.tracker is not None and replicas < self.values[i]:
            self.tracker.scale_down_pending[key] += int(self.values[i] - replicas)
        self.values[i] = replicas


__all__ = ["FleetSampler", "RecommendationLog", "ReplicaLog", "Tracker", "WORKLOAD_LABEL", "pending_reason",
           "requests_of", "workload_of"]
