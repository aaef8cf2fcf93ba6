"""Aggregated usage per (VPA, container name): the recommender's state (``model/`` upstream).

``AggregateContainerState`` holds, for one container name under one VPA, the samples of every
pod that ever ran it -- pods that no longer exist included, until the history expires:

* a decaying histogram of CPU usage (cores), one sample per metrics sample, weighted by the
  container's CPU request at the time (at least ``minSampleWeight`` 0.1 core), so a raised
  request makes the older history count for less and the recommender reacts quickly to
  starvation;
* a decaying histogram of memory *peaks*: each container contributes one sample per
  aggregation interval (24h), the largest working set seen in it, filed at the interval's end;
  intervals are counted from the container's first memory sample;
* OOM kills as artificial peaks: ``max(memory + 100Mi, memory * 1.2)`` where memory is the
  larger of the container's memory request and its peak in the current interval
  (``RecordOOM``); an OOM older than the current interval's start is discarded;
* the first and last CPU sample times and the count of CPU samples (the confidence behind
  the bounds).

Per pod (the ``ContainerState`` upstream) it keeps the last CPU and memory sample times, the
current interval's end and its usage and OOM peaks. Samples are taken in arrival order, like
upstream's one-at-a-time ``AddSample``: a CPU sample not newer than the pod's last accepted one
is dropped (duplicates, out of order); a memory sample older than the last one is dropped
(OOMs never are); negative or NaN usage is dropped. One upstream quirk is kept: an interval
whose first memory sample is 0 keeps a peak of 0.

Everything is done on arrays: ``add_samples`` files a batch of any size with a few numpy
passes (grouping by pod, per-pod running maxima, one ``bincount`` per histogram); only OOM
events, which are rare, are handled one by one, in their place in the batch.

Times are Unix seconds (floats) at the interface and whole microseconds inside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from kvert.vpa.estimators import MAX_RESOURCE_AMOUNT, resource_amount, scale_resource
from kvert.vpa.histogram import DecayingHistogram
from kvert.vpa.recommendation import DEFAULT_CONFIG, RecommenderConfig, container_policy
from kvert.vpa.samples import seconds_to_us

UNSET = np.iinfo(np.int64).min


class _PodTable:
    """Per-pod state of one aggregate, as parallel int64 arrays indexed by a pod slot."""

    __slots__ = ("index", "names", "last_cpu", "last_mem", "window_end", "mem_peak", "oom_peak", "free")

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.names: list[str | None] = []
        self.free: list[int] = []
        self.last_cpu = np.zeros(0, dtype=np.int64)
        self.last_mem = np.zeros(0, dtype=np.int64)
        self.window_end = np.zeros(0, dtype=np.int64)
        self.mem_peak = np.zeros(0, dtype=np.int64)
        self.oom_peak = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.index)

    def slot(self, name: str) -> int:
        i = self.index.get(name)
        if i is not None:
            return i
        if self.free:
            i = self.free.pop()
            self.names[i] = name
        else:
            i = len(self.names)
            self.names.append(name)
            if i >= self.last_cpu.size:
                grow = max(16, 2 * self.last_cpu.size)
                for attr, fill in (("last_cpu", UNSET), ("last_mem", UNSET), ("window_end", UNSET),
                                   ("mem_peak", 0), ("oom_peak", 0)):
                    old = getattr(self, attr)
                    new = np.full(grow, fill, dtype=np.int64)
                    new[:old.size] = old
                    setattr(self, attr, new)
        self._reset(i)
        self.index[name] = i
        return i

    def _reset(self, i: int) -> None:
        self.last_cpu[i] = self.last_mem[i] = self.window_end[i] = UNSET
        self.mem_peak[i] = self.oom_peak[i] = 0

    def remove(self, name: str) -> bool:
        i = self.index.pop(name, None)
        if i is None:
            return False
        self.names[i] = None
        self._reset(i)
        self.free.append(i)
        return True

    def slots(self, pods: Any, n: int, pod_names: Sequence[str] | None = None) -> np.ndarray:
        """Slots for a batch: ``pods`` is one name, a sequence of names, or integer codes into
        ``pod_names`` (the fast form for big batches)."""
        if isinstance(pods, str):
            return np.full(n, self.slot(pods), dtype=np.int64)
        if pod_names is not None:
            lookup = np.array([self.slot(str(p)) for p in pod_names], dtype=np.int64)
            return lookup[np.asarray(pods, dtype=np.int64)]
        slot = self.slot
        cache: dict[str, int] = {}
        out = np.empty(n, dtype=np.int64)
        for k, p in enumerate(pods):
            s = cache.get(p)
            if s is None:
                s = cache[p] = slot(p)
            out[k] = s
        return out

    def copy(self) -> _PodTable:
        t = _PodTable()
        t.index, t.names, t.free = dict(self.index), list(self.names), list(self.free)
        for attr in ("last_cpu", "last_mem", "window_end", "mem_peak", "oom_peak"):
            setattr(t, attr, getattr(self, attr).copy())
        return t


@dataclass(frozen=True)
class PodMemoryState:
    """A pod's memory window (for explanations and tests)."""

    window_end: float | None   # Unix seconds, None before the first memory sample
    memory_peak: int
    oom_peak: int


class AggregateContainerState:
    """``model.AggregateContainerState`` plus the per-pod ``ContainerState`` of its pods."""

    def __init__(self, config: RecommenderConfig | None = None, creation_time: float = 0.0) -> None:
        self.config = config or DEFAULT_CONFIG
        c = self.config
        self.cpu = DecayingHistogram(c.cpu_histogram_options(), c.cpu_histogram_decay_half_life)
        self.memory = DecayingHistogram(c.memory_histogram_options(), c.memory_histogram_decay_half_life)
        self.first_sample_start_us: int | None = None
        self.last_sample_start_us: int | None = None
        self.total_samples_count = 0
        self.creation_time = float(creation_time)
        self.pods = _PodTable()

    # -- reading ---------------------------------------------------------------------------------

    @property
    def first_sample_start(self) -> float | None:
        return None if self.first_sample_start_us is None else self.first_sample_start_us / 1e6

    @property
    def last_sample_start(self) -> float | None:
        return None if self.last_sample_start_us is None else self.last_sample_start_us / 1e6

    def is_empty(self) -> bool:
        return self.total_samples_count == 0

    def is_expired(self, now: float) -> bool:
        """``isExpired``: no CPU sample for the memory aggregation window (8 days), or none at
        all that long after creation."""
        window = self.config.memory_aggregation_window
        if self.is_empty():
            return now - self.creation_time >= window
        return now - self.last_sample_start_us / 1e6 >= window

    def pod_names(self) -> list[str]:
        return sorted(self.pods.index)

    def pod_memory(self, pod: str) -> PodMemoryState | None:
        i = self.pods.index.get(pod)
        if i is None:
            return None
        end = int(self.pods.window_end[i])
        return PodMemoryState(None if end == UNSET else end / 1e6, int(self.pods.mem_peak[i]),
                              int(self.pods.oom_peak[i]))

    # -- samples ---------------------------------------------------------------------------------

    def add_samples(self, pods: Any, times: Any, cpu: Any = None, memory: Any = None,
                    cpu_request: Any = None, oom: Any = None,
                    pod_names: Sequence[str] | None = None) -> tuple[int, int]:
        """File a batch of samples, in arrival order. Arrays (or scalars) broadcast together:

        * ``pods``: pod names (or one name; or integer codes into ``pod_names``);
        * ``times``: Unix seconds; ``cpu``: cores (NaN: none); ``memory``: bytes (NaN: none);
        * ``cpu_request``: the container's CPU request in cores when measured (weights the
          sample; missing or NaN counts as the minimum weight 0.1);
        * ``oom``: True where the row is an OOM kill; its ``memory`` is the memory request.

        Returns (CPU samples accepted, memory samples and OOMs accepted).
        """
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        n = t.size
        if n == 0:
            return 0, 0
        t_us = seconds_to_us(t)
        slots = self.pods.slots(pods, n, pod_names)
        oom_mask = None if oom is None else np.broadcast_to(np.asarray(oom, dtype=bool), (n,))
        if oom_mask is not None and not oom_mask.any():
            oom_mask = None
        accepted_cpu = accepted_mem = 0
        c = None if cpu is None else np.broadcast_to(np.asarray(cpu, dtype=np.float64), (n,))
        m = None if memory is None else np.broadcast_to(np.asarray(memory, dtype=np.float64), (n,))
        # When every row has both, CPU and memory share one grouping of the batch by pod.
        shared = None
        if c is not None and m is not None and oom_mask is None and not np.isnan(c).any() \
                and not np.isnan(m).any():
            shared = _arrival_order(slots, t_us)
        if c is not None:
            rq = None if cpu_request is None else np.broadcast_to(np.asarray(cpu_request, dtype=np.float64), (n,))
            if shared is not None:
                accepted_cpu = self._add_cpu(slots, t_us, c, rq, shared)
            else:
                keep = ~np.isnan(c) if oom_mask is None else ~np.isnan(c) & ~oom_mask
                accepted_cpu = self._add_cpu(slots[keep], t_us[keep], c[keep], None if rq is None else rq[keep])
        if m is not None:
            if shared is not None:
                accepted_mem = self._add_memory(slots, t_us, m, shared)
            elif oom_mask is None:
                keep = ~np.isnan(m)
                accepted_mem = self._add_memory(slots[keep], t_us[keep], m[keep])
            else:
                start = 0
                for k in np.flatnonzero(oom_mask):
                    seg = slice(start, k)
                    keep = ~np.isnan(m[seg]) & ~oom_mask[seg]
                    accepted_mem += self._add_memory(slots[seg][keep], t_us[seg][keep], m[seg][keep])
                    if not np.isnan(m[k]):
                        accepted_mem += self._record_oom(int(slots[k]), int(t_us[k]), float(m[k]))
                    start = k + 1
                keep = ~np.isnan(m[start:]) & ~oom_mask[start:]
                accepted_mem += self._add_memory(slots[start:][keep], t_us[start:][keep], m[start:][keep])
        return accepted_cpu, accepted_mem

    def add_cpu_samples(self, pods: Any, times: Any, usage_cores: Any, request_cores: Any = None,
                        pod_names: Sequence[str] | None = None) -> int:
        """CPU usage samples (cores averaged over the sample's interval). Returns how many were kept."""
        return self.add_samples(pods, times, cpu=usage_cores, cpu_request=request_cores, pod_names=pod_names)[0]

    def add_memory_samples(self, pods: Any, times: Any, usage_bytes: Any,
                           pod_names: Sequence[str] | None = None) -> int:
        """Memory working-set samples (bytes). Returns how many were kept."""
        return self.add_samples(pods, times, memory=usage_bytes, pod_names=pod_names)[1]

    def record_oom(self, pod: str, time: float, memory_request_bytes: float) -> bool:
        """An OOM kill of ``pod``'s container at ``time``; False when it is too old to count."""
        return bool(self._record_oom(self.pods.slot(pod), int(seconds_to_us(time)), float(memory_request_bytes)))

    def forget_pod(self, pod: str) -> bool:
        """The pod is gone: drop its per-pod state (its samples stay in the histograms)."""
        return self.pods.remove(pod)

    # -- internals -------------------------------------------------------------------------------

    def _add_cpu(self, slots: np.ndarray, t_us: np.ndarray, cores: np.ndarray, request: np.ndarray | None,
                 grouping: tuple | None = None) -> int:
        valid = cores >= 0
        if not valid.all():
            slots, t_us, cores = slots[valid], t_us[valid], cores[valid]
            request = None if request is None else request[valid]
            grouping = None
        if slots.size == 0:
            return 0
        order, g, t, prev = grouping or _arrival_order(slots, t_us)
        ok = t > np.maximum(prev, self.pods.last_cpu[g])
        sel = order[ok]
        if sel.size == 0:
            return 0
        g, t = g[ok], t[ok]
        if self.cpu.reference is None:
            # The histogram's reference comes from the first sample to arrive, as upstream.
            k = int(np.argmin(sel))
            for arr in (sel, g, t):
                arr[0], arr[k] = arr[k], arr[0]
        # Samples are ResourceAmounts: whole millicores.
        milli = np.minimum(np.floor(cores[sel] * 1000.0), MAX_RESOURCE_AMOUNT)
        if request is None:
            weights = np.full(sel.size, self.config.min_sample_weight)
        else:
            req = np.nan_to_num(np.floor(np.clip(request[sel], 0, None) * 1000.0), nan=0.0) / 1000.0
            weights = np.maximum(req, self.config.min_sample_weight)
        self.cpu.add(milli / 1000.0, weights, t / 1e6)
        np.maximum.at(self.pods.last_cpu, g, t)
        lo, hi = int(t.min()), int(t.max())
        if self.first_sample_start_us is None or lo < self.first_sample_start_us:
            self.first_sample_start_us = lo
        if self.last_sample_start_us is None or hi > self.last_sample_start_us:
            self.last_sample_start_us = hi
        self.total_samples_count += int(sel.size)
        return int(sel.size)

    def _add_memory(self, slots: np.ndarray, t_us: np.ndarray, usage: np.ndarray,
                    grouping: tuple | None = None) -> int:
        valid = usage >= 0
        if not valid.all():
            slots, t_us, usage = slots[valid], t_us[valid], usage[valid]
            grouping = None
        if slots.size == 0:
            return 0
        pods = self.pods
        order, g, t, prev = grouping or _arrival_order(slots, t_us)
        ok = t >= np.maximum(prev, pods.last_mem[g])
        if not ok.any():
            return 0
        g, t = g[ok], t[ok]
        arrival = order[ok]
        u = np.minimum(np.floor(usage[arrival]), MAX_RESOURCE_AMOUNT).astype(np.int64)
        n = g.size
        interval = int(round(self.config.memory_aggregation_interval * 1e6))
        # Within a pod the kept samples are in time order; a pod's first sample opens its window.
        group_start = np.empty(n, dtype=bool)
        group_start[0] = True
        np.not_equal(g[1:], g[:-1], out=group_start[1:])
        first_of_group = np.maximum.accumulate(np.where(group_start, np.arange(n), 0))
        W = pods.window_end[g]
        W = np.where(W == UNSET, t[first_of_group], W)
        # j = 0: the pod's current window; j >= 1: the j-th window after it (ends at W + j * I).
        j = np.where(t < W, 0, (t - W) // interval + 1)
        seg_start = group_start.copy()
        seg_start[1:] |= j[1:] != j[:-1]
        starts = np.flatnonzero(seg_start)
        peak = np.maximum.reduceat(u, starts)
        first = u[starts]
        sg, sj, sW = g[starts], j[starts], W[starts]
        # Upstream quirk: a window opened by a 0 sample keeps the peak 0.
        peak = np.where((first == 0) & (sj >= 1), 0, peak)
        add_vals: list[np.ndarray] = []
        add_times: list[np.ndarray] = []
        add_arrival: list[np.ndarray] = []     # the sample that caused each addition
        cur = sj == 0
        if cur.any():
            cg, cpeak, cW = sg[cur], peak[cur], sW[cur]
            old = np.maximum(pods.mem_peak[cg], pods.oom_peak[cg])
            upd = (old != 0) & (cpeak > old)
            if upd.any():
                self.memory.subtract(old[upd].astype(np.float64), 1.0, cW[upd] / 1e6)
                add_vals.append(cpeak[upd])
                add_times.append(cW[upd])
                if self.memory.reference is None:
                    seg_old = np.zeros(starts.size, dtype=np.int64)
                    seg_old[np.flatnonzero(cur)] = old
                    above = u > np.repeat(seg_old, np.diff(np.r_[starts, n]))
                    first_above = np.minimum.reduceat(np.where(above, arrival, n), starts)
                    add_arrival.append(first_above[np.flatnonzero(cur)[upd]])
                pods.mem_peak[cg[upd]] = cpeak[upd]
        new = ~cur
        if new.any():
            add_vals.append(peak[new])
            add_times.append(sW[new] + sj[new] * interval)
            add_arrival.append(arrival[starts[new]])
        if add_vals:
            values = np.concatenate(add_vals).astype(np.float64)
            times = np.concatenate(add_times)
            if self.memory.reference is None:
                # The histogram's reference comes from the first addition, as upstream.
                k = int(np.argmin(np.concatenate(add_arrival)))
                values[0], values[k] = values[k], values[0]
                times[0], times[k] = times[k], times[0]
            self.memory.add(values, 1.0, times / 1e6)
        # The state each pod ends the batch in: its last window.
        seg_end = np.r_[starts[1:], n] - 1
        last_seg = np.flatnonzero(np.r_[sg[1:] != sg[:-1], True])
        lg, lj = sg[last_seg], sj[last_seg]
        moved = lj >= 1
        pods.window_end[lg] = np.where(moved, sW[last_seg] + lj * interval, sW[last_seg])
        pods.mem_peak[lg[moved]] = peak[last_seg][moved]
        pods.oom_peak[lg[moved]] = 0
        pods.last_mem[lg] = t[seg_end[last_seg]]
        return int(n)

    def _record_oom(self, slot: int, t_us: int, request_bytes: float) -> int:
        pods, cfg = self.pods, self.config
        interval = int(round(cfg.memory_aggregation_interval * 1e6))
        W = int(pods.window_end[slot])
        if W != UNSET and t_us < W - interval:
            return 0  # "OOM event will be discarded - it is too old"
        used = max(resource_amount(request_bytes), int(pods.mem_peak[slot]))
        needed = max(used + resource_amount(cfg.oom_min_bump_up_bytes), scale_resource(used, cfg.oom_bump_up_ratio))
        pods.last_mem[slot] = t_us
        if W == UNSET:
            W = t_us
        if t_us < W:
            old = max(int(pods.mem_peak[slot]), int(pods.oom_peak[slot]))
            if old != 0 and needed > old:
                self.memory.subtract(float(old), 1.0, W / 1e6)
                self.memory.add(float(needed), 1.0, W / 1e6)
                pods.oom_peak[slot] = needed
        else:
            W += ((t_us - W) // interval + 1) * interval
            pods.mem_peak[slot] = 0
            pods.oom_peak[slot] = needed
            self.memory.add(float(needed), 1.0, W / 1e6)
        pods.window_end[slot] = W
        return 1

    # -- whole states ----------------------------------------------------------------------------

    def open_window_peaks(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """(peaks in bytes, window ends in seconds) of live pods whose current window is still
        open at ``now`` -- what a checkpoint leaves out, so that a restored recommender does
        not count these windows twice."""
        pods = self.pods
        live = np.array(sorted(pods.index.values()), dtype=np.int64)
        if live.size == 0:
            return np.zeros(0), np.zeros(0)
        W = pods.window_end[live]
        open_ = (W != UNSET) & (seconds_to_us(now) < W)
        peaks = np.maximum(pods.mem_peak[live], pods.oom_peak[live])[open_]
        return peaks.astype(np.float64), W[open_] / 1e6

    def merge(self, other: AggregateContainerState) -> None:
        """``MergeContainerState``: add another aggregate's history to this one."""
        self.cpu.merge(other.cpu)
        self.memory.merge(other.memory)
        if other.first_sample_start_us is not None and (
                self.first_sample_start_us is None or other.first_sample_start_us < self.first_sample_start_us):
            self.first_sample_start_us = other.first_sample_start_us
        if other.last_sample_start_us is not None and (
                self.last_sample_start_us is None or other.last_sample_start_us > self.last_sample_start_us):
            self.last_sample_start_us = other.last_sample_start_us
        self.total_samples_count += other.total_samples_count

    def copy(self) -> AggregateContainerState:
        a = object.__new__(AggregateContainerState)
        a.__dict__.update(self.__dict__)
        a.cpu, a.memory, a.pods = self.cpu.copy(), self.memory.copy(), self.pods.copy()
        return a

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
    """All aggregate states of a recommender, keyed by (namespace, VPA name, container name).

    The live recommender routes each pod's samples to the VPA that selects it; an aggregate
    outlives its pods and expires after the memory aggregation window without samples
    (``garbage_collect``).
    """

    def __init__(self, config: RecommenderConfig | None = None) -> None:
        self.config = config or DEFAULT_CONFIG
        self._aggregates: dict[AggregateKey, AggregateContainerState] = {}

    def __len__(self) -> int:
        return len(self._aggregates)

    def __iter__(self) -> Iterator[AggregateKey]:
        return iter(sorted(self._aggregates))

    def items(self) -> list[tuple[AggregateKey, AggregateContainerState]]:
        return sorted(self._aggregates.items())

    def get(self, namespace: str, vpa: str, container: str, *, config: RecommenderConfig | None = None,
            now: float = 0.0) -> AggregateContainerState:
        """The aggregate, created (with ``config``, else the store's) if missing."""
        key = (namespace, vpa, container)
        agg = self._aggregates.get(key)
        if agg is None:
            agg = self._aggregates[key] = AggregateContainerState(config or self.config, now)
        return agg

    def get_for_vpa(self, vpa: Mapping, container: str, now: float = 0.0) -> AggregateContainerState:
        """The aggregate of a VPA object's container, created with the configuration the VPA asks
        for (its ``vpa.kvert.io/*`` annotations and the container's policy) if missing."""
        meta = vpa.get("metadata") or {}
        config, _ = self.config.for_vpa(vpa)
        config = config.for_container(container_policy(vpa, container))
        return self.get(meta.get("namespace") or "default", meta.get("name", ""), container, config=config, now=now)

    def find(self, namespace: str, vpa: str, container: str) -> AggregateContainerState | None:
        return self._aggregates.get((namespace, vpa, container))

    def set(self, namespace: str, vpa: str, container: str, state: AggregateContainerState) -> None:
        self._aggregates[(namespace, vpa, container)] = state

    def for_vpa(self, namespace: str, vpa: str) -> dict[str, AggregateContainerState]:
        """Container name -> aggregate, the input of ``recommendation.recommend``."""
        return {c: a for (ns, v, c), a in self._aggregates.items() if ns == namespace and v == vpa}

    def add_samples(self, namespace: str, vpa: str, container: str, pods: Any, times: Any,
                    **columns: Any) -> tuple[int, int]:
        """``AggregateContainerState.add_samples`` on the (created if needed) aggregate."""
        return self.get(namespace, vpa, container).add_samples(pods, times, **columns)

    def record_oom(self, namespace: str, vpa: str, container: str, pod: str, time: float,
                   memory_request_bytes: float) -> bool:
        return self.get(namespace, vpa, container).record_oom(pod, time, memory_request_bytes)

    def forget_pod(self, namespace: str, pod: str) -> None:
        """A pod was deleted: its per-pod state goes, its samples stay in the aggregates."""
        for (ns, _, _), agg in self._aggregates.items():
            if ns == namespace:
                agg.forget_pod(pod)

    def remove_vpa(self, namespace: str, vpa: str) -> list[str]:
        gone = [k for k in self._aggregates if k[0] == namespace and k[1] == vpa]
        for k in gone:
            del self._aggregates[k]
        return [k[2] for k in gone]

    def garbage_collect(self, now: float) -> list[AggregateKey]:
        """Drop expired aggregates (no samples for 8 days); returns their keys."""
        gone = [k for k, a in self._aggregates.items() if a.is_expired(now)]
        for k in gone:
            del self._aggregates[k]
        return sorted(gone)

    def stats(self) -> Mapping[str, int]:
        return {"aggregates": len(self._aggregates),
                "pods": sum(len(a.pods) for a in self._aggregates.values()),
                "samples": sum(a.total_samples_count for a in self._aggregates.values())}
