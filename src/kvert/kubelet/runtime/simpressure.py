"""Pressure stall of simulated containers, pods and nodes: the fleet's PSI columns.

Per tick the fleet knows each running row's cpu demand, what its quotas allowed, what the
node gave, and its working set against its limit; ``kvert.kubelet.psi.cpu_stall`` and
``memory_stall`` turn those into stalled fractions (the model is documented there). A pod's
``some`` is the chance that any of its containers stalls, ``1 - prod(1 - some_i)``, and its
``full`` that all do, ``prod(full_i)`` (containers taken as independent); a node's likewise
over every container on it, with cpu ``full`` zero as the kernel reports it for the system.
IO is not modelled: zeros.

Totals are integer nanoseconds per tick (so they do not depend on how ticks were grouped
in steps); averages are the kernel's 10/60/300 s decaying averages (``psi.decay_average``).
States are columns in the order ``STATES``.
"""

from __future__ import annotations

import numpy as np

from kvert.kubelet.psi import PSIStats, ResourcePressure, cpu_stall, decay_average, memory_stall, psi_stats, tick_decay

STATES = ("cpu_some", "cpu_full", "memory_some", "memory_full")
_N = len(STATES)


class _Table:
    """Totals (n x 4, ns) and averages (n x 4 x 3, percent) growing by doubling."""

    def __init__(self) -> None:
        self.total = np.zeros((0, _N), dtype=np.int64)
        self.avg = np.zeros((0, _N, 3))

    def ensure(self, n: int) -> None:
        if n <= self.total.shape[0]:
            return
        size = max(64, n, 2 * self.total.shape[0])
        total = np.zeros((size, _N), dtype=np.int64)
        avg = np.zeros((size, _N, 3))
        total[:self.total.shape[0]] = self.total
        avg[:self.avg.shape[0]] = self.avg
        self.total, self.avg = total, avg

    def clear(self, slot: int) -> None:
        if slot < self.total.shape[0]:
            self.total[slot] = 0
            self.avg[slot] = 0.0

    def add(self, slots: np.ndarray, fractions: list[np.ndarray], dt: np.ndarray, tick: float) -> None:
        """Rows ``slots`` stalled ``fractions[s]`` (k x T) of ticks lasting ``dt`` (k x T)."""
        x = np.stack(fractions, axis=1)                                  # (k, states, T)
        k, t = x.shape[0], x.shape[2]
        self.total[slots] += np.rint(x * (dt[:, None, :] * 1e9)).astype(np.int64).sum(axis=2)
        avg = decay_average(self.avg[slots].reshape(k * _N, 3), x.reshape(k * _N, t), tick)
        self.avg[slots] = avg.reshape(k, _N, 3)

    def decay(self, slots: np.ndarray, ticks: int, tick: float) -> None:
        """Rows ``slots`` stalled nothing for ``ticks`` ticks: their averages only decay."""
        self.avg[slots] *= (tick_decay(tick) ** ticks)[None, None, :]

    def stats(self, slot: int) -> ResourcePressure:
        if slot >= self.total.shape[0]:
            return ResourcePressure(cpu=PSIStats(), memory=PSIStats(), io=PSIStats())
        t, a = self.total[slot], self.avg[slot]
        return ResourcePressure(
            cpu=PSIStats(some=psi_stats(t[0], a[0]), full=psi_stats(t[1], a[1])),
            memory=PSIStats(some=psi_stats(t[2], a[2]), full=psi_stats(t[3], a[3])),
            io=PSIStats())


def _group_sums(groups: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Sums of ``values`` (rows x T) per group of rows: (n x T)."""
    t = values.shape[1]
    flat = (groups[:, None] * t + np.arange(t)).ravel()
    return np.bincount(flat, weights=values.ravel(), minlength=n * t).reshape(n, t)


class FleetPressure:
    """The PSI of every row, sandbox and node of a fleet."""

    def __init__(self) -> None:
        self.rows = _Table()
        self.sandboxes = _Table()
        self.nodes = _Table()

    def advance(self, idx: np.ndarray, sandboxes: np.ndarray, nodes: np.ndarray, *, want: np.ndarray,
                allowed: np.ndarray, used: np.ndarray, memory: np.ndarray, mem_limit: np.ndarray,
                dt: np.ndarray, tick: float, n_sandboxes: int, n_nodes: int) -> None:
        """One fleet step: running rows ``idx`` (of pods ``sandboxes`` on ``nodes``) over T
        ticks; ``mem_limit`` (k,) is the limit each row's memory is charged against."""
        cpu_some, cpu_full = cpu_stall(want, allowed, used)
        mem_some, mem_full = memory_stall(memory, mem_limit[:, None])
        self.rows.ensure(int(idx.max()) + 1)
        t = want.shape[1]
        # most rows stall nothing: only their averages decay, and only the stalled ones are
        # summed into their pods and nodes
        stalled = (cpu_some > 0).any(axis=1) | (mem_some > 0).any(axis=1)
        sub = np.flatnonzero(stalled)
        self.rows.decay(idx[~stalled], t, tick)
        cpu_some, cpu_full, mem_some, mem_full = (x[sub] for x in (cpu_some, cpu_full, mem_some, mem_full))
        if sub.size:
            self.rows.add(idx[sub], [cpu_some, cpu_full, mem_some, mem_full], dt[sub], tick)
        live = dt[sub] > 0         # a container not started yet in a tick stalls nothing in it
        # products over a group's rows as sums of logarithms (a zero is -inf: the product 0):
        # log(1 - some) for "any stalls", log(full) for "all stall"; a row that stalled
        # nothing makes its group's "all" 0
        with np.errstate(divide="ignore"):
            logs = [np.log1p(-np.clip(np.where(live, cpu_some, 0.0), 0.0, 1.0)),
                    np.log(np.clip(np.where(live, cpu_full, 1.0), 0.0, 1.0)),
                    np.log1p(-np.clip(np.where(live, mem_some, 0.0), 0.0, 1.0)),
                    np.log(np.clip(np.where(live, mem_full, 1.0), 0.0, 1.0))]
        for table, groups, n, system in ((self.sandboxes, sandboxes, n_sandboxes, False),
                                         (self.nodes, nodes, n_nodes, True)):
            present = np.unique(groups)
            table.ensure(n)
            hot = np.unique(groups[sub])
            table.decay(np.setdiff1d(present, hot, assume_unique=True), t, tick)
            if not hot.size:
                continue
            calm = np.zeros(n, dtype=bool)
            calm[groups[~stalled]] = True
            sums = [_group_sums(groups[sub], x, n)[hot] for x in logs]
            every = ~calm[hot][:, None]
            parts = [1.0 - np.exp(sums[0]), np.zeros_like(sums[1]) if system else np.exp(sums[1]) * every,
                     1.0 - np.exp(sums[2]), np.exp(sums[3]) * every]
            table.add(hot, parts, np.full((hot.size, t), tick), tick)

    def row(self, slot: int) -> ResourcePressure:
        return self.rows.stats(slot)

    def sandbox(self, slot: int) -> ResourcePressure:
        return self.sandboxes.stats(slot)

    def node(self, index: int) -> ResourcePressure:
        return self.nodes.stats(index)


__all__ = ["FleetPressure", "STATES"]
