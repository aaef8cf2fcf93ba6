"""Aggregated usage per (VPA, container name): the recommender's state (``model/`` upstream).

An aggregate holds, for one container name under one VPA, the samples of every pod that ever
ran it -- pods that no longer exist included, until the history expires:

* a decaying histogram of CPU usage (cores), one sample per metrics sample, each weighing the
  minimum sample weight 0.1 (upstream 1.4+; before, the weight was the container's CPU
  request, but the request it read was always 0 -- kubernetes/autoscaler#7818 -- and the
  weighting was removed);
* a decaying histogram of memory *peaks*: each container contributes one sample per
  aggregation interval (24h), the largest working set seen in it, filed at the interval's end;
  intervals are counted from the container's first memory sample;
* OOM kills as artificial peaks: ``max(memory + 100Mi, memory * 1.2)`` where memory is the
  larger of the container's memory request and its peak in the current interval
  (``RecordOOM``); an OOM more than one interval older than the container's last memory sample
  is discarded (upstream 1.8; before, one older than the current interval's start);
* the first and last CPU sample times and the count of CPU samples (the confidence behind
  the bounds);
* (kvert) whether the container was seen running to completion (``batch``: what
  ``vpa.kvert.io/workload: auto`` decides by, ``recommendation.resolve_workload``).

Per pod (the ``ContainerState`` upstream) it keeps the last CPU and memory sample times, the
current interval's end and its usage and OOM peaks. Samples are taken in arrival order, like
upstream's one-at-a-time ``AddSample``: a CPU sample not newer than the pod's last accepted one
is dropped (duplicates, out of order); a memory sample older than the last one is dropped
(OOMs never are); negative or NaN usage is dropped. One upstream quirk is kept: an interval
whose first memory sample is 0 keeps a peak of 0.

Storage: an ``AggregateBank`` holds every aggregate of a recommender as one row of arrays
(the histograms in ``HistogramBank``s, the per-aggregate scalars in vectors) and every pod's
state as one slot of per-pod vectors, so a batch of samples for any number of aggregates is
filed with a few numpy passes (grouping by pod, per-pod running maxima, ``np.add.at`` into
the banks); only OOM events, which are rare, are handled one by one, in their place in the
batch. ``AggregateContainerState`` is one row seen as one aggregate (its ``cpu`` and
``memory`` read as ``DecayingHistogram`` copies and can be replaced, e.g. from a checkpoint);
a state made on its own gets a bank of its own.

Times are Unix seconds (floats) at the interface and whole microseconds inside.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kvert.vpa.estimators import MAX_RESOURCE_AMOUNT, resource_amount, scale_resource
from kvert.vpa.histogram import DecayingHistogram, ExponentialOptions, HistogramBank
from kvert.vpa.recommendation import DEFAULT_CONFIG, RecommenderConfig, container_policy
from kvert.vpa.samples import seconds_to_us

UNSET = np.iinfo(np.int64).min      # no time yet (last samples, window ends, last sample start)
NO_FIRST = np.iinfo(np.int64).max   # no first sample start yet


def _grown(a: np.ndarray, size: int, fill: Any) -> np.ndarray:
    out = np.full((size,) + a.shape[1:], fill, dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


class AggregateBank:
    """Every aggregate with one pair of histogram shapes (``ExponentialOptions``), as rows.

    Per row: the CPU and memory histograms (``cpu``, ``memory``: ``HistogramBank``), the first
    and last CPU sample start (µs), the CPU sample count, the creation time, the config, the
    memory interval and the sample weight; ``dirty`` marks rows whose samples changed since a
    reader cleared it. Per pod slot: its row and its ``ContainerState`` (last CPU and memory
    sample, window end, usage and OOM peaks). ``pods[row]`` maps a row's pod names to slots.
    """

    def __init__(self, cpu_options: ExponentialOptions, memory_options: ExponentialOptions,
                 capacity: int = 16) -> None:
        self.cpu = HistogramBank(cpu_options, 0)
        self.memory = HistogramBank(memory_options, 0)
        self.first_us = np.zeros(0, dtype=np.int64)
        self.last_us = np.zeros(0, dtype=np.int64)
        self.count = np.zeros(0, dtype=np.int64)
        self.creation = np.zeros(0)
        self.interval_us = np.zeros(0, dtype=np.int64)
        self.window = np.zeros(0)               # memory aggregation window (expiry), seconds
        self.sample_weight = np.zeros(0)
        self.batch = np.zeros(0, dtype=bool)    # seen running to completion (workload: auto)
        self.dirty = np.zeros(0, dtype=bool)
        self.used = np.zeros(0, dtype=bool)
        self.configs: list[RecommenderConfig | None] = []
        self.keys: list[Any] = []               # what the owner calls each row (AggregateStore: its key)
        self.serial = np.zeros(0, dtype=np.int64)   # a new number each time a row is taken
        self._serials = 0
        self.pods: list[dict[str, int]] = []
        self._free_rows: list[int] = []
        self.slot_row = np.zeros(0, dtype=np.int64)
        self.last_cpu = np.zeros(0, dtype=np.int64)
        self.last_mem = np.zeros(0, dtype=np.int64)
        self.window_end = np.zeros(0, dtype=np.int64)
        self.mem_peak = np.zeros(0, dtype=np.int64)
        self.oom_peak = np.zeros(0, dtype=np.int64)
        self._free_slots: list[int] = []
        self._slots_used = 0
        self._grow_rows(capacity)

    # -- rows ------------------------------------------------------------------------------------

    def _grow_rows(self, capacity: int) -> None:
        old = len(self.configs)
        if capacity <= old:
            return
        self.cpu.grow(capacity)
        self.memory.grow(capacity)
        self.first_us = _grown(self.first_us, capacity, NO_FIRST)
        self.last_us = _grown(self.last_us, capacity, UNSET)
        self.count = _grown(self.count, capacity, 0)
        self.creation = _grown(self.creation, capacity, 0.0)
        self.interval_us = _grown(self.interval_us, capacity, 1)
        self.window = _grown(self.window, capacity, 0.0)
        self.sample_weight = _grown(self.sample_weight, capacity, 0.0)
        self.batch = _grown(self.batch, capacity, False)
        self.dirty = _grown(self.dirty, capacity, False)
        self.used = _grown(self.used, capacity, False)
        self.configs += [None] * (capacity - old)
        self.keys += [None] * (capacity - old)
        self.serial = _grown(self.serial, capacity, 0)
        self.pods += [{} for _ in range(capacity - old)]
        self._free_rows += list(range(capacity - 1, old - 1, -1))

    def new_row(self, config: RecommenderConfig, creation_time: float) -> int:
        if not self._free_rows:
            self._grow_rows(max(16, 2 * len(self.configs)))
        row = self._free_rows.pop()
        self.cpu.reset(row, config.cpu_histogram_decay_half_life)
        self.memory.reset(row, config.memory_histogram_decay_half_life)
        self.first_us[row], self.last_us[row], self.count[row] = NO_FIRST, UNSET, 0
        self.creation[row] = creation_time
        self.interval_us[row] = int(round(config.memory_aggregation_interval * 1e6))
        self.window[row] = config.memory_aggregation_window
        self.sample_weight[row] = config.min_sample_weight
        self.batch[row] = False
        self.dirty[row] = True
        self.used[row] = True
        self.configs[row] = config
        self._serials += 1
        self.serial[row] = self._serials
        self.pods[row] = {}
        return row

    def config_of(self, row: int) -> RecommenderConfig:
        """The config of a taken row."""
        config = self.configs[row]
        if config is None:
            raise KeyError(f"row {row} is free")
        return config

    def free_row(self, row: int) -> None:
        for slot in self.pods[row].values():
            self._free_slot(slot)
        self.pods[row] = {}
        self.configs[row] = None
        self.keys[row] = None
        self.dirty[row] = False
        self.used[row] = False
        self._free_rows.append(row)

    def rows(self) -> np.ndarray:
        """The rows in use."""
        return np.flatnonzero(self.used)

    # -- pod slots -------------------------------------------------------------------------------

    def slot(self, row: int, pod: str) -> int:
        """The pod's slot under ``row``, created if missing."""
        slot = self.pods[row].get(pod)
        if slot is not None:
            return slot
        if self._free_slots:
            slot = self._free_slots.pop()
        else:
            slot = self._slots_used
            self._slots_used += 1
            if slot >= self.slot_row.size:
                size = max(64, 2 * self.slot_row.size)
                self.slot_row = _grown(self.slot_row, size, -1)
                for name in ("last_cpu", "last_mem", "window_end", "mem_peak", "oom_peak"):
                    setattr(self, name, _grown(getattr(self, name), size, 0))
        self.slot_row[slot] = row
        self.last_cpu[slot] = self.last_mem[slot] = self.window_end[slot] = UNSET
        self.mem_peak[slot] = self.oom_peak[slot] = 0
        self.pods[row][pod] = slot
        return slot

    def forget_pod(self, row: int, pod: str) -> bool:
        slot = self.pods[row].pop(pod, None)
        if slot is None:
            return False
        self._free_slot(slot)
        return True

    def _free_slot(self, slot: int) -> None:
        self.slot_row[slot] = -1
        self._free_slots.append(slot)

    # -- samples ---------------------------------------------------------------------------------

    def add_samples(self, slots: np.ndarray, t_us: np.ndarray, cpu: np.ndarray | None, memory: np.ndarray | None,
                    oom: np.ndarray | None = None, *, unique: bool = False) -> tuple[int, int]:
        """File a batch (pod slots, µs, cores, bytes; NaN: none; ``oom`` rows are OOM kills whose
        ``memory`` is the memory request), in arrival order. ``unique``: no slot appears twice
        (one metrics scrape), which saves grouping the batch by pod. Returns (CPU samples
        accepted, memory samples and OOMs accepted)."""
        n = t_us.size
        if n == 0:
            return 0, 0
        if oom is not None and not oom.any():
            oom = None
        if unique and oom is None:
            return (0 if cpu is None else self._add_cpu_once(slots, t_us, cpu),
                    0 if memory is None else self._add_memory_once(slots, t_us, memory))
        accepted_cpu = accepted_mem = 0
        shared = None
        if cpu is not None and memory is not None and oom is None and not np.isnan(cpu).any() \
                and not np.isnan(memory).any():
            shared = _arrival_order(slots, t_us)
        if cpu is not None:
            if shared is not None:
                accepted_cpu = self._add_cpu(slots, t_us, cpu, shared)
            else:
                keep = ~np.isnan(cpu) if oom is None else ~np.isnan(cpu) & ~oom
                accepted_cpu = self._add_cpu(slots[keep], t_us[keep], cpu[keep])
        if memory is not None:
            m = memory
            if shared is not None:
                accepted_mem = self._add_memory(slots, t_us, m, shared)
            elif oom is None:
                keep = ~np.isnan(m)
                accepted_mem = self._add_memory(slots[keep], t_us[keep], m[keep])
            else:
                start = 0
                for k in np.flatnonzero(oom):
                    seg = slice(start, k)
                    keep = ~np.isnan(m[seg]) & ~oom[seg]
                    accepted_mem += self._add_memory(slots[seg][keep], t_us[seg][keep], m[seg][keep])
                    if not np.isnan(m[k]):
                        accepted_mem += self.record_oom(int(slots[k]), int(t_us[k]), float(m[k]))
                    start = int(k) + 1
                keep = ~np.isnan(m[start:]) & ~oom[start:]
                accepted_mem += self._add_memory(slots[start:][keep], t_us[start:][keep], m[start:][keep])
        return accepted_cpu, accepted_mem

    # One sample per pod (a metrics scrape): the general grouping below reduces to these.

    def _add_cpu_once(self, slots: np.ndarray, t_us: np.ndarray, cores: np.ndarray) -> int:
        with np.errstate(invalid="ignore"):
            ok = (cores >= 0) & (t_us > self.last_cpu[slots])
        if not ok.all():
            slots, t_us, cores = slots[ok], t_us[ok], cores[ok]
        if slots.size == 0:
            return 0
        rows = self.slot_row[slots]
        milli = np.minimum(np.floor(cores * 1000.0), MAX_RESOURCE_AMOUNT)
        self.cpu.add(rows, milli / 1000.0, self.sample_weight[rows], t_us / 1e6)
        self.last_cpu[slots] = t_us
        earlier = t_us < self.first_us[rows]
        if earlier.any():
            np.minimum.at(self.first_us, rows[earlier], t_us[earlier])
        np.maximum.at(self.last_us, rows, t_us)
        np.add.at(self.count, rows, 1)
        self.dirty[rows] = True
        return int(slots.size)

    def _add_memory_once(self, slots: np.ndarray, t_us: np.ndarray, usage: np.ndarray) -> int:
        with np.errstate(invalid="ignore"):
            ok = (usage >= 0) & (t_us >= self.last_mem[slots])
        if not ok.all():
            slots, t_us, usage = slots[ok], t_us[ok], usage[ok]
        if slots.size == 0:
            return 0
        u = np.minimum(np.floor(usage), MAX_RESOURCE_AMOUNT).astype(np.int64)
        rows = self.slot_row[slots]
        interval = self.interval_us[rows]
        W = self.window_end[slots]
        W = np.where(W == UNSET, t_us, W)
        j = np.where(t_us < W, 0, (t_us - W) // interval + 1)
        old = np.maximum(self.mem_peak[slots], self.oom_peak[slots])
        cur = j == 0
        rise = cur & (old != 0) & (u > old)
        new = ~cur
        if rise.any():
            self.memory.subtract(rows[rise], old[rise].astype(np.float64), 1.0, W[rise] / 1e6)
        end = W + j * interval
        filed = rise | new
        if filed.any():
            self.memory.add(rows[filed], u[filed].astype(np.float64), 1.0, end[filed] / 1e6)
        self.mem_peak[slots[filed]] = u[filed]
        self.oom_peak[slots[new]] = 0
        self.window_end[slots] = end
        self.last_mem[slots] = t_us
        self.dirty[rows] = True
        return int(slots.size)

    def _add_cpu(self, slots: np.ndarray, t_us: np.ndarray, cores: np.ndarray, grouping: tuple | None = None) -> int:
        valid = cores >= 0
        if not valid.all():
            slots, t_us, cores = slots[valid], t_us[valid], cores[valid]
            grouping = None
        if slots.size == 0:
            return 0
        order, g, t, prev = grouping or _arrival_order(slots, t_us)
        ok = t > np.maximum(prev, self.last_cpu[g])
        sel = order[ok]
        if sel.size == 0:
            return 0
        g, t = g[ok], t[ok]
        rows = self.slot_row[g]
        # Samples are ResourceAmounts: whole millicores.
        milli = np.minimum(np.floor(cores[sel] * 1000.0), MAX_RESOURCE_AMOUNT)
        self.cpu.add(rows, milli / 1000.0, self.sample_weight[rows], t / 1e6, arrival=sel)
        np.maximum.at(self.last_cpu, g, t)
        np.minimum.at(self.first_us, rows, t)
        np.maximum.at(self.last_us, rows, t)
        np.add.at(self.count, rows, 1)
        self.dirty[rows] = True
        return int(sel.size)

    def _add_memory(self, slots: np.ndarray, t_us: np.ndarray, usage: np.ndarray,
                    grouping: tuple | None = None) -> int:
        valid = usage >= 0
        if not valid.all():
            slots, t_us, usage = slots[valid], t_us[valid], usage[valid]
            grouping = None
        if slots.size == 0:
            return 0
        order, g, t, prev = grouping or _arrival_order(slots, t_us)
        ok = t >= np.maximum(prev, self.last_mem[g])
        if not ok.any():
            return 0
        g, t = g[ok], t[ok]
        arrival = order[ok]
        u = np.minimum(np.floor(usage[arrival]), MAX_RESOURCE_AMOUNT).astype(np.int64)
        n = g.size
        interval = self.interval_us[self.slot_row[g]]
        # Within a pod the kept samples are in time order; a pod's first sample opens its window.
        group_start = np.empty(n, dtype=bool)
        group_start[0] = True
        np.not_equal(g[1:], g[:-1], out=group_start[1:])
        first_of_group = np.maximum.accumulate(np.where(group_start, np.arange(n), 0))
        W = self.window_end[g]
        W = np.where(W == UNSET, t[first_of_group], W)
        # j = 0: the pod's current window; j >= 1: the j-th window after it (ends at W + j * I).
        j = np.where(t < W, 0, (t - W) // interval + 1)
        seg_start = group_start.copy()
        seg_start[1:] |= j[1:] != j[:-1]
        starts = np.flatnonzero(seg_start)
        peak = np.maximum.reduceat(u, starts)
        first = u[starts]
        sg, sj, sW, sI = g[starts], j[starts], W[starts], interval[starts]
        # Upstream quirk: a window opened by a 0 sample keeps the peak 0.
        peak = np.where((first == 0) & (sj >= 1), 0, peak)
        add_vals: list[np.ndarray] = []
        add_times: list[np.ndarray] = []
        add_slots: list[np.ndarray] = []
        add_arrival: list[np.ndarray] = []     # the sample that caused each addition
        cur = sj == 0
        if cur.any():
            cg, cpeak, cW = sg[cur], peak[cur], sW[cur]
            old = np.maximum(self.mem_peak[cg], self.oom_peak[cg])
            upd = (old != 0) & (cpeak > old)
            if upd.any():
                self.memory.subtract(self.slot_row[cg[upd]], old[upd].astype(np.float64), 1.0, cW[upd] / 1e6)
                add_vals.append(cpeak[upd])
                add_times.append(cW[upd])
                add_slots.append(cg[upd])
                # (a pod with a peak has filed one before, so its row has its reference already)
                add_arrival.append(arrival[starts[cur][upd]])
                self.mem_peak[cg[upd]] = cpeak[upd]
        new = ~cur
        if new.any():
            add_vals.append(peak[new])
            add_times.append(sW[new] + sj[new] * sI[new])
            add_slots.append(sg[new])
            add_arrival.append(arrival[starts[new]])
        if add_vals:
            # The histogram's reference comes from the first addition to arrive, as upstream.
            self.memory.add(self.slot_row[np.concatenate(add_slots)], np.concatenate(add_vals).astype(np.float64),
                            1.0, np.concatenate(add_times) / 1e6, arrival=np.concatenate(add_arrival))
        # The state each pod ends the batch in: its last window.
        seg_end = np.r_[starts[1:], n] - 1
        last_seg = np.flatnonzero(np.r_[sg[1:] != sg[:-1], True])
        lg, lj = sg[last_seg], sj[last_seg]
        moved = lj >= 1
        self.window_end[lg] = np.where(moved, sW[last_seg] + lj * sI[last_seg], sW[last_seg])
        self.mem_peak[lg[moved]] = peak[last_seg][moved]
        self.oom_peak[lg[moved]] = 0
        self.last_mem[lg] = t[seg_end[last_seg]]
        self.dirty[self.slot_row[lg]] = True
        return int(n)

    def record_oom(self, slot: int, t_us: int, request_bytes: float) -> int:
        """An OOM kill of the slot's container (``RecordOOM``); 0 when it is too old to count."""
        row = int(self.slot_row[slot])
        cfg = self.config_of(row)
        interval = int(self.interval_us[row])
        W = int(self.window_end[slot])
        last = int(self.last_mem[slot])
        # Too old against the last memory sample, not the window's end, which can be a whole
        # interval ahead of it (upstream 1.8, kubernetes/autoscaler#8548).
        if last != UNSET and t_us < last - interval:
            return 0  # "OOM event will be discarded - it is too old"
        used = max(resource_amount(request_bytes), int(self.mem_peak[slot]))
        needed = max(used + resource_amount(cfg.oom_min_bump_up_bytes), scale_resource(used, cfg.oom_bump_up_ratio))
        self.last_mem[slot] = t_us
        if W == UNSET:
            W = t_us
        rows = np.array([row])
        if t_us < W:
            old = max(int(self.mem_peak[slot]), int(self.oom_peak[slot]))
            if old != 0 and needed > old:
                self.memory.subtract(rows, np.array([float(old)]), 1.0, np.array([W / 1e6]))
                self.memory.add(rows, np.array([float(needed)]), 1.0, np.array([W / 1e6]))
                self.oom_peak[slot] = needed
        else:
            W += ((t_us - W) // interval + 1) * interval
            self.mem_peak[slot] = 0
            self.oom_peak[slot] = needed
            self.memory.add(rows, np.array([float(needed)]), 1.0, np.array([W / 1e6]))
        self.window_end[slot] = W
        self.dirty[row] = True
        return 1

    def record_pressure(self, slot: int, t_us: int, working_set: float, ratio: float, min_bump: float) -> int:
        """AEP-9926's ``RecordPressure``: a pressure peak, ``max(used + min_bump, used * ratio)``
        of ``used = max(working set, the interval's usage peak)``, replaces the current memory
        interval's peak when higher; accepted only inside that interval (0 otherwise), and it
        never rolls the interval nor moves the last-sample watermark."""
        row = int(self.slot_row[slot])
        interval = int(self.interval_us[row])
        W = int(self.window_end[slot])
        if W == UNSET or t_us < W - interval or t_us >= W:
            return 0
        used = max(resource_amount(working_set), int(self.mem_peak[slot]))
        needed = max(used + resource_amount(min_bump), scale_resource(used, ratio))
        old = max(int(self.mem_peak[slot]), int(self.oom_peak[slot]))
        if needed <= old:
            return 1
        rows = np.array([row])
        if old:
            self.memory.subtract(rows, np.array([float(old)]), 1.0, np.array([W / 1e6]))
        self.memory.add(rows, np.array([float(needed)]), 1.0, np.array([W / 1e6]))
        self.oom_peak[slot] = needed
        self.dirty[row] = True
        return 1

    # -- reading ---------------------------------------------------------------------------------

    def expired(self, rows: np.ndarray, now: float) -> np.ndarray:
        """``isExpired`` per row: no CPU sample for the memory aggregation window (8 days), or
        none at all that long after creation."""
        since = np.where(self.count[rows] == 0, self.creation[rows], self.last_us[rows] / 1e6)
        return now - since >= self.window[rows]

    def history_span(self, rows: np.ndarray) -> np.ndarray:
        """Seconds from the first to the last CPU sample start per row (0 without samples):
        how much history backs a row, whatever its sampling rate."""
        first, last = self.first_us[rows], self.last_us[rows]
        return np.where((first == NO_FIRST) | (last == UNSET), 0.0, (last - first) / 1e6)

    def confidence(self, rows: np.ndarray, interval: np.ndarray | float) -> np.ndarray:
        """``estimators.get_confidence`` per row."""
        first, last = self.first_us[rows], self.last_us[rows]
        lifespan = np.where((first == NO_FIRST) | (last == UNSET), 0.0, (last - first) / 1e6 / interval)
        return np.minimum(lifespan, self.count[rows] / (np.asarray(interval) / 60.0))


@dataclass(frozen=True)
class PodMemoryState:
    """A pod's memory window (for explanations and tests)."""

    window_end: float | None   # Unix seconds, None before the first memory sample
    memory_peak: int
    oom_peak: int


class AggregateContainerState:
    """``model.AggregateContainerState`` plus the per-pod ``ContainerState`` of its pods: one
    row of an ``AggregateBank`` (its own unless ``bank`` is given)."""

    def __init__(self, config: RecommenderConfig | None = None, creation_time: float = 0.0, *,
                 bank: AggregateBank | None = None) -> None:
        config = config or DEFAULT_CONFIG
        if bank is None:
            bank = AggregateBank(config.cpu_histogram_options(), config.memory_histogram_options(), capacity=1)
        self.bank = bank
        self.row = bank.new_row(config, float(creation_time))

    # -- reading ---------------------------------------------------------------------------------

    @property
    def config(self) -> RecommenderConfig:
        return self.bank.config_of(self.row)

    @property
    def creation_time(self) -> float:
        return float(self.bank.creation[self.row])

    @property
    def cpu(self) -> DecayingHistogram:
        """A copy of the CPU histogram (assign one to replace it)."""
        return self.bank.cpu.histogram(self.row)

    @cpu.setter
    def cpu(self, histogram: DecayingHistogram) -> None:
        self.bank.cpu.set_histogram(self.row, histogram)
        self.bank.dirty[self.row] = True

    @property
    def memory(self) -> DecayingHistogram:
        """A copy of the memory peaks histogram (assign one to replace it)."""
        return self.bank.memory.histogram(self.row)

    @memory.setter
    def memory(self, histogram: DecayingHistogram) -> None:
        self.bank.memory.set_histogram(self.row, histogram)
        self.bank.dirty[self.row] = True

    @property
    def first_sample_start_us(self) -> int | None:
        us = int(self.bank.first_us[self.row])
        return None if us == NO_FIRST else us

    @first_sample_start_us.setter
    def first_sample_start_us(self, us: int | None) -> None:
        self.bank.first_us[self.row] = NO_FIRST if us is None else us
        self.bank.dirty[self.row] = True

    @property
    def last_sample_start_us(self) -> int | None:
        us = int(self.bank.last_us[self.row])
        return None if us == UNSET else us

    @last_sample_start_us.setter
    def last_sample_start_us(self, us: int | None) -> None:
        self.bank.last_us[self.row] = UNSET if us is None else us
        self.bank.dirty[self.row] = True

    @property
    def batch(self) -> bool:
        """Whether the container was seen running to completion (``workload: auto`` makes it a
        batch workload's)."""
        return bool(self.bank.batch[self.row])

    @batch.setter
    def batch(self, value: bool) -> None:
        self.bank.batch[self.row] = bool(value)
        self.bank.dirty[self.row] = True

    @property
    def total_samples_count(self) -> int:
        return int(self.bank.count[self.row])

    @total_samples_count.setter
    def total_samples_count(self, count: int) -> None:
        self.bank.count[self.row] = count
        self.bank.dirty[self.row] = True

    @property
    def pods(self) -> Mapping[str, int]:
        """Pod name -> slot in the bank."""
        return self.bank.pods[self.row]

    @property
    def first_sample_start(self) -> float | None:
        us = self.first_sample_start_us
        return None if us is None else us / 1e6

    @property
    def last_sample_start(self) -> float | None:
        us = self.last_sample_start_us
        return None if us is None else us / 1e6

    def is_empty(self) -> bool:
        return self.total_samples_count == 0

    def is_expired(self, now: float) -> bool:
        """``isExpired``: no CPU sample for the memory aggregation window (8 days), or none at
        all that long after creation."""
        return bool(self.bank.expired(np.array([self.row]), now)[0])

    def pod_names(self) -> list[str]:
        return sorted(self.pods)

    def pod_memory(self, pod: str) -> PodMemoryState | None:
        i = self.pods.get(pod)
        if i is None:
            return None
        b = self.bank
        end = int(b.window_end[i])
        return PodMemoryState(None if end == UNSET else end / 1e6, int(b.mem_peak[i]), int(b.oom_peak[i]))

    # -- samples ---------------------------------------------------------------------------------

    def add_samples(self, pods: Any, times: Any, cpu: Any = None, memory: Any = None, oom: Any = None,
                    pod_names: Sequence[str] | None = None, cpu_request: Any = None) -> tuple[int, int]:
        """File a batch of samples, in arrival order. Arrays (or scalars) broadcast together:

        * ``pods``: pod names (or one name; or integer codes into ``pod_names``);
        * ``times``: Unix seconds; ``cpu``: cores (NaN: none); ``memory``: bytes (NaN: none);
        * ``oom``: True where the row is an OOM kill; its ``memory`` is the memory request;
        * ``cpu_request`` is ignored: CPU samples weigh the minimum sample weight (upstream
          1.4+); it is accepted for callers written for the request weighting.

        Returns (CPU samples accepted, memory samples and OOMs accepted).
        """
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        n = t.size
        if n == 0:
            return 0, 0
        c = None if cpu is None else np.broadcast_to(np.asarray(cpu, dtype=np.float64), (n,))
        m = None if memory is None else np.broadcast_to(np.asarray(memory, dtype=np.float64), (n,))
        o = None if oom is None else np.broadcast_to(np.asarray(oom, dtype=bool), (n,))
        return self.bank.add_samples(self._slots(pods, n, pod_names), seconds_to_us(t), c, m, o)

    def _slots(self, pods: Any, n: int, pod_names: Sequence[str] | None) -> np.ndarray:
        slot, row = self.bank.slot, self.row
        if isinstance(pods, str):
            return np.full(n, slot(row, pods), dtype=np.int64)
        if pod_names is not None:
            lookup = np.array([slot(row, str(p)) for p in pod_names], dtype=np.int64)
            return lookup[np.asarray(pods, dtype=np.int64)]
        cache: dict[str, int] = {}
        out = np.empty(n, dtype=np.int64)
        for k, p in enumerate(pods):
            s = cache.get(p)
            if s is None:
                s = cache[p] = slot(row, p)
            out[k] = s
        return out

    def add_cpu_samples(self, pods: Any, times: Any, usage_cores: Any,
                        pod_names: Sequence[str] | None = None) -> int:
        """CPU usage samples (cores averaged over the sample's interval). Returns how many were kept."""
        return self.add_samples(pods, times, cpu=usage_cores, pod_names=pod_names)[0]

    def add_memory_samples(self, pods: Any, times: Any, usage_bytes: Any,
                           pod_names: Sequence[str] | None = None) -> int:
        """Memory working-set samples (bytes). Returns how many were kept."""
        return self.add_samples(pods, times, memory=usage_bytes, pod_names=pod_names)[1]

    def record_oom(self, pod: str, time: float, memory_request_bytes: float) -> bool:
        """An OOM kill of ``pod``'s container at ``time``; False when it is too old to count."""
        slot = self.bank.slot(self.row, pod)
        return bool(self.bank.record_oom(slot, int(seconds_to_us(time)), float(memory_request_bytes)))

    def record_pressure(self, pod: str, time: float, working_set: float, ratio: float, min_bump: float) -> bool:
        """A pressure peak of ``pod``'s container (``AggregateBank.record_pressure``)."""
        slot = self.bank.slot(self.row, pod)
        return bool(self.bank.record_pressure(slot, int(seconds_to_us(time)), working_set, ratio, min_bump))

    def forget_pod(self, pod: str) -> bool:
        """The pod is gone: drop its per-pod state (its samples stay in the histograms)."""
        return self.bank.forget_pod(self.row, pod)

    # -- whole states ----------------------------------------------------------------------------

    def open_window_peaks(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """(peaks in bytes, window ends in seconds) of live pods whose current window is still
        open at ``now`` -- what a checkpoint leaves out, so that a restored recommender does
        not count these windows twice."""
        b = self.bank
        live = np.array(sorted(self.pods.values()), dtype=np.int64)
        if live.size == 0:
            return np.zeros(0), np.zeros(0)
        W = b.window_end[live]
        open_ = (W != UNSET) & (seconds_to_us(now) < W)
        peaks = np.maximum(b.mem_peak[live], b.oom_peak[live])[open_]
        return peaks.astype(np.float64), W[open_] / 1e6

    def merge(self, other: AggregateContainerState) -> None:
        """``MergeContainerState``: add another aggregate's history to this one."""
        cpu, memory = self.cpu, self.memory
        cpu.merge(other.cpu)
        memory.merge(other.memory)
        self.cpu, self.memory = cpu, memory
        if other.first_sample_start_us is not None and (
                self.first_sample_start_us is None or other.first_sample_start_us < self.first_sample_start_us):
            self.first_sample_start_us = other.first_sample_start_us
        if other.last_sample_start_us is not None and (
                self.last_sample_start_us is None or other.last_sample_start_us > self.last_sample_start_us):
            self.last_sample_start_us = other.last_sample_start_us
        self.total_samples_count += other.total_samples_count

    def __repr__(self) -> str:
        return (f"AggregateContainerState(samples={self.total_samples_count}, pods={len(self.pods)}, "
                f"cpu={self.cpu!r}, memory={self.memory!r})")


def _arrival_order(slots: np.ndarray, t_us: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Group a batch by pod keeping arrival order within each pod. Returns (order, pods, times,
    prev) in grouped order, where prev is the latest time of the same pod earlier in the batch
    (UNSET for a pod's first sample) -- the running maximum a one-by-one ``AddSample`` sees."""
    n = slots.size
    if n > 1 and (slots[0] == slots).all():
        order = np.arange(n)
    else:
        order = np.argsort(slots, kind="stable")
    g, t = slots[order], t_us[order]
    prev = np.full(n, UNSET, dtype=np.int64)
    if n <= 1:
        return order, g, t, prev
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(g[1:], g[:-1], out=new[1:])
    seg = np.cumsum(new) - 1
    tmin = int(t.min())
    span = int(t.max()) - tmin + 1
    if (int(seg[-1]) + 1) * span < 2**62:
        # One running maximum over (segment, time) keys computes every pod's at once.
        key = seg * span + (t - tmin)
        cm = np.maximum.accumulate(key)
        prev[1:] = cm[:-1] - seg[1:] * span + tmin
        prev[new] = UNSET
    else:  # times too far apart to pack: per pod
        starts = np.flatnonzero(new)
        for s, e in zip(starts, np.r_[starts[1:], n]):
            if e - s > 1:
                prev[s + 1:e] = np.maximum.accumulate(t[s:e - 1])
    return order, g, t, prev


# -- all aggregates of a recommender -------------------------------------------------------------

AggregateKey = tuple[str, str, str]   # (namespace, VPA name, container name)


class AggregateStore:
    """All aggregate states of a recommender, keyed by (namespace, VPA name, container name),
    as rows of one ``AggregateBank`` per histogram shape (one, unless annotations change the
    histogram options).

    The live recommender routes each pod's samples to the VPA that selects it; an aggregate
    outlives its pods and expires after the memory aggregation window without samples
    (``garbage_collect``).
    """

    def __init__(self, config: RecommenderConfig | None = None) -> None:
        self.config = config or DEFAULT_CONFIG
        self._aggregates: dict[AggregateKey, AggregateContainerState] = {}
        self._by_vpa: dict[tuple[str, str], dict[str, AggregateContainerState]] = {}
        self.banks: dict[tuple[ExponentialOptions, ExponentialOptions], AggregateBank] = {}

    def __len__(self) -> int:
        return len(self._aggregates)

    def __iter__(self) -> Iterator[AggregateKey]:
        return iter(sorted(self._aggregates))

    def items(self) -> list[tuple[AggregateKey, AggregateContainerState]]:
        return sorted(self._aggregates.items())

    def bank_for(self, config: RecommenderConfig) -> AggregateBank:
        shape = (config.cpu_histogram_options(), config.memory_histogram_options())
        bank = self.banks.get(shape)
        if bank is None:
            bank = self.banks[shape] = AggregateBank(*shape)
        return bank

    def get(self, namespace: str, vpa: str, container: str, *, config: RecommenderConfig | None = None,
            now: float = 0.0) -> AggregateContainerState:
        """The aggregate, created (with ``config``, else the store's) if missing."""
        key = (namespace, vpa, container)
        agg = self._aggregates.get(key)
        if agg is None:
            config = config or self.config
            agg = AggregateContainerState(config, now, bank=self.bank_for(config))
            agg.bank.keys[agg.row] = key
            self._aggregates[key] = agg
            self._by_vpa.setdefault((namespace, vpa), {})[container] = agg
        return agg

    def get_for_vpa(self, vpa: Mapping, container: str, now: float = 0.0) -> AggregateContainerState:
        """The aggregate of a VPA object's container, created with the configuration the VPA asks
        for (its ``vpa.kvert.io/*`` annotations and the container's policy) if missing."""
        meta = vpa.get("metadata") or {}
        key = (meta.get("namespace") or "default", meta.get("name", ""), container)
        agg = self._aggregates.get(key)
        if agg is not None:
            return agg
        config, _ = self.config.for_vpa(vpa)
        config = config.for_container(container_policy(vpa, container))
        return self.get(*key, config=config, now=now)

    def find(self, namespace: str, vpa: str, container: str) -> AggregateContainerState | None:
        return self._aggregates.get((namespace, vpa, container))

    def set(self, namespace: str, vpa: str, container: str, state: AggregateContainerState) -> None:
        """Make ``state``'s history (histograms, sample times and count; not its pods) the
        aggregate of (namespace, vpa, container), replacing what was there."""
        self._remove((namespace, vpa, container))
        agg = self.get(namespace, vpa, container, config=state.config, now=state.creation_time)
        agg.cpu, agg.memory = state.cpu, state.memory
        agg.first_sample_start_us = state.first_sample_start_us
        agg.last_sample_start_us = state.last_sample_start_us
        agg.total_samples_count = state.total_samples_count
        agg.batch = state.batch

    def vpas(self) -> Any:
        """The (namespace, VPA name) pairs with aggregates (a live view)."""
        return self._by_vpa.keys()

    def for_vpa(self, namespace: str, vpa: str) -> dict[str, AggregateContainerState]:
        """Container name -> aggregate, the input of ``recommendation.recommend``."""
        return dict(self._by_vpa.get((namespace, vpa)) or {})

    def add_samples(self, namespace: str, vpa: str, container: str, pods: Any, times: Any,
                    **columns: Any) -> tuple[int, int]:
        """``AggregateContainerState.add_samples`` on the (created if needed) aggregate."""
        return self.get(namespace, vpa, container).add_samples(pods, times, **columns)

    def record_oom(self, namespace: str, vpa: str, container: str, pod: str, time: float,
                   memory_request_bytes: float) -> bool:
        return self.get(namespace, vpa, container).record_oom(pod, time, memory_request_bytes)

    def forget_pod(self, namespace: str, pod: str) -> None:
        """A pod was deleted: its per-pod state goes, its samples stay in the aggregates."""
        for (ns, _), aggs in self._by_vpa.items():
            if ns == namespace:
                for agg in aggs.values():
                    agg.forget_pod(pod)

    def _remove(self, key: AggregateKey) -> None:
        agg = self._aggregates.pop(key, None)
        if agg is None:
            return
        aggs = self._by_vpa.get((key[0], key[1]))
        if aggs is not None:
            aggs.pop(key[2], None)
            if not aggs:
                del self._by_vpa[(key[0], key[1])]
        agg.bank.free_row(agg.row)

    def remove(self, namespace: str, vpa: str, container: str) -> None:
        """Drop one aggregate (nothing when there is none)."""
        self._remove((namespace, vpa, container))

    def remove_vpa(self, namespace: str, vpa: str) -> list[str]:
        containers = sorted(self._by_vpa.get((namespace, vpa)) or {})
        for c in containers:
            self._remove((namespace, vpa, c))
        return containers

    def garbage_collect(self, now: float) -> list[AggregateKey]:
        """Drop expired aggregates (no samples for 8 days); returns their keys."""
        gone: list[AggregateKey] = []
        for bank in self.banks.values():
            rows = bank.rows()
            gone += [bank.keys[r] for r in rows[bank.expired(rows, now)].tolist()]
        for k in gone:
            self._remove(k)
        return sorted(gone)

    def stats(self) -> Mapping[str, int]:
        return {"aggregates": len(self._aggregates),
                "pods": sum(len(a.pods) for a in self._aggregates.values()),
                "samples": sum(a.total_samples_count for a in self._aggregates.values())}
