"""Recorded usage, replayed by simulated containers: a ``TraceBank``.

A container whose usage entry is ``{"series": GROUP}`` (``kvert.kubelet.usage``) uses what a
real cluster recorded for the containers of the same name of the workload ``GROUP``: the
fleet evaluates it by indexing the bank's matrices (rows: recorded series, columns: steps of
``step`` seconds from ``origin``, a clock time), so a week of a thousand nodes' containers
costs one fancy-indexing pass per tick, whatever its length.

A workload's group has ``slots``: a replica's recorded history each (pods that came and went
in the recorded window were given the slots they would have held; ``kvert.sim.importer``).
A simulated pod takes a slot when its first container starts and keeps it until its sandbox
is removed, so a restarted container goes on with the same history: the lowest free slot,
or for a group with ``ordinal`` slots (a StatefulSet) the ordinal of its name (``db-2``: slot
2). A pod beyond the slots reuses them in turn (slot ``j`` replays slot ``j mod slots``).
Memory is always per slot. CPU is per slot too, unless the group's CPU is ``shared``: then
the bank holds one row per container with the workload's total, and each running pod of the
group gets an equal part (what a load balancer in front of an autoscaled workload does; the
same rule as a scenario's ``sharedUsage``). Before the first step the first applies, after
the last the last.

A recorded OOM kill is a peak above the container's limit at its step (``peaks``: the value
the peak replaced, per memory row and step). A container OOM-killed in such a step *spends*
the peak: until the step ends its row replays the value under it, as the recorded container
came back after its kill; a container whose limit holds the peak keeps it the whole step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class TraceBankError(ValueError):
    """A series reference the bank cannot serve."""


@dataclass
class TraceGroup:
    key: str
    slots: int
    cpu_rows: dict[str, int]            # container -> first cpu row (one row when shared, else ``slots``)
    memory_rows: dict[str, int]         # container -> first memory row (``slots`` rows)
    shared_cpu: bool = False
    ordinal: bool = False
    index: int = 0                      # the group's number in its bank
    # pod uid -> its slot; freed when the pod's sandbox goes
    assigned: dict[str, int] = field(default_factory=dict)


class TraceBank:
    """Recorded cpu (millicores) and memory (bytes) per row and step."""

    def __init__(self, step: float, cpu: np.ndarray, memory: np.ndarray, groups: list[TraceGroup],
                 origin: float = 0.0, peaks: dict[tuple[int, int], float] | None = None):
        if step <= 0:
            raise ValueError("step must be positive")
        if cpu.ndim != 2 or memory.ndim != 2 or cpu.shape[1] != memory.shape[1] or cpu.shape[1] == 0:
            raise ValueError("cpu and memory must be matrices with the same, positive number of steps")
        self.step = float(step)
        self.cpu = np.ascontiguousarray(cpu, dtype=np.float32)
        self.memory = np.ascontiguousarray(memory, dtype=np.float32)
        self.origin = float(origin)
        self.groups = {g.key: g for g in groups}
        self.peaks = dict(peaks or {})            # (memory row, step) -> the value under the peak
        self.spent = np.full(self.memory.shape[0], -1, dtype=np.intp)   # memory row -> step of its spent peak
        for i, g in enumerate(groups):
            g.index = i
        self._shared = np.array([g.shared_cpu for g in groups], dtype=bool)
        self._holders: dict[str, TraceGroup] = {}   # pod uid -> the group it holds a slot of

    @property
    def steps(self) -> int:
        return int(self.cpu.shape[1])

    def group(self, key: str) -> TraceGroup:
        g = self.groups.get(key)
        if g is None:
            raise TraceBankError(f"no recorded usage for {key!r} (the scenario's traces have "
                                 f"{len(self.groups)} workloads)")
        return g

    def columns(self, times: np.ndarray) -> np.ndarray:
        """The step index of each clock time."""
        k = np.floor((np.asarray(times, dtype=np.float64) - self.origin) / self.step)
        return np.clip(k, 0, self.steps - 1).astype(np.intp)

    def memory_at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Memory of ``rows`` (k) at step columns ``cols`` (T): (k x T), a spent peak replaced."""
        memory = self.memory[rows[:, None], cols[None, :]].astype(np.float64)
        if self.peaks:
            hit = self.spent[rows][:, None] == cols[None, :]
            if hit.any():
                for i, j in zip(*np.nonzero(hit)):
                    memory[i, j] = self.peaks.get((int(rows[i]), int(cols[j])), memory[i, j])
        return memory

    def spend(self, row: int, when: float) -> None:
        """The peak of memory row ``row`` at the step of clock time ``when`` is spent (an OOM kill)."""
        col = int(self.columns(np.array([when]))[0])
        if (row, col) in self.peaks:
            self.spent[row] = col

    def check(self, key: str, container: str) -> TraceGroup:
        """The group of ``key``, which has recorded usage for ``container``; else TraceBankError."""
        g = self.group(key)
        if container not in g.memory_rows:
            raise TraceBankError(f"no recorded usage for container {container!r} of {key!r} (recorded: "
                                 f"{', '.join(sorted(g.memory_rows))})")
        return g

    def take(self, key: str, container: str, pod_uid: str, pod_name: str) -> tuple[int, int, int]:
        """(cpu row, memory row, group index) for a container of a pod, assigning the pod
        its slot on first sight."""
        g = self.check(key, container)
        slot = g.assigned.get(pod_uid)
        if slot is None:
            slot = self._free_slot(g, pod_name)
            g.assigned[pod_uid] = slot
            self._holders[pod_uid] = g
        row = slot % g.slots
        cpu_row = g.cpu_rows[container] + (0 if g.shared_cpu else row)
        return cpu_row, g.memory_rows[container] + row, g.index

    @staticmethod
    def _free_slot(g: TraceGroup, pod_name: str) -> int:
        if g.ordinal:
            suffix = pod_name.rsplit("-", 1)[-1]
            if suffix.isdigit():
                return int(suffix)
        taken = set(g.assigned.values())
        return next(j for j in range(len(taken) + 1) if j not in taken)

    def reset(self) -> None:
        """No pod holds a slot and no peak is spent (a new simulation run)."""
        for g in self.groups.values():
            g.assigned.clear()
        self._holders.clear()
        self.spent[:] = -1

    def release(self, pod_uid: str) -> None:
        g = self._holders.pop(pod_uid, None)
        if g is not None:
            g.assigned.pop(pod_uid, None)

    def shared_groups(self) -> np.ndarray:
        """Per group index: whether its cpu is shared among its running pods."""
        return self._shared


__all__ = ["TraceBank", "TraceBankError", "TraceGroup"]
