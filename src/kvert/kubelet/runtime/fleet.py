"""Every simulated container of a cluster in one set of arrays, advanced together.

A ``Fleet`` holds the containers of all the ``SimRuntime`` nodes that share it (one per
simulation or ``kvert up`` process; a runtime made alone gets a fleet of its own). A
container is a *row*: its usage profile's parameters, its limits, its pod (a sandbox row),
its node, and its counters (cpu core-ns, throttled ns and periods, demand), all numpy
columns indexed by the row's slot. Advancing to the clock's now evaluates every running
row for the elapsed ticks at once, so a cluster of 20 000 containers costs a few numpy
passes per tick instead of a Python loop per node or per container.

Per-pod and per-node quantities (a pod's memory and cpu caps, the QoS tiers', kubepods'
and the machine's memory, the node's cpu shared by weight) are group sums over the rows
(``bincount``), so a step is the same arithmetic the runtime documents, for every node at
once. A step stops after the first tick with an event anywhere (an OOM kill, an exit); the
runtimes of the nodes with an event handle it (which container the kernel kills is their
business), and the next step goes on from there.

The fleet also wakes what watches it, as the kernel's notifications do: a node's memory
threshold (``watch_memory``: the eviction manager's memcg notification) and a container's
exit (``SimRuntime.events``: the evented PLEG's container events).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from kvert.clock.base import Clock
from kvert.kubelet.runtime.simpressure import FleetPressure
from kvert.kubelet.runtime.tracebank import TraceBank, TraceBankError
from kvert.kubelet.usage import Constant, ContainerUsage, Diurnal, Linear, Spikes, _uniform

_EPS = 1e-9
_CHUNK_CELLS = 1 << 18          # rows x ticks evaluated at once
_NPARAM = 5
KINDS: dict[type, int] = {Constant: 0, Diurnal: 1, Spikes: 2, Linear: 3}
REPLAY = 4
SERIES = 5                      # recorded usage from the fleet's trace bank (rows in cpu_p/mem_p[:, 0])
TIERS = {"": 0, "burstable": 1, "besteffort": 2}


def group_sum(groups: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Sums of ``values`` (rows x T) per group of rows: (n x T)."""
    t = values.shape[1]
    flat = (groups[:, None] * t + np.arange(t)).ravel()
    return np.bincount(flat, weights=values.ravel(), minlength=n * t).reshape(n, t)


def share(demand: np.ndarray, weights: np.ndarray, capacity: float) -> np.ndarray:
    """Weighted max-min fair share of ``capacity`` per column (tick) among rows' demands."""
    total = demand.sum(axis=0)
    over = total > capacity + _EPS
    if not over.any():
        return demand
    d = demand[:, over]
    alloc = np.zeros_like(d)
    remaining = np.full(d.shape[1], float(capacity))
    active = d > 0
    w = weights[:, None].astype(float)
    for _ in range(d.shape[0]):
        wsum = np.where(active, w, 0.0).sum(axis=0)
        per_weight = np.divide(remaining, wsum, out=np.zeros_like(remaining), where=wsum > 0)
        offer = np.where(active, w * per_weight, 0.0)
        need = d - alloc
        done = active & (need <= offer + _EPS)
        if not done.any():
            alloc += offer
            break
        granted = np.where(done, need, 0.0)
        alloc += granted
        remaining -= granted.sum(axis=0)
        active &= ~done
        if not active.any():
            break
    out = demand.copy()
    out[:, over] = alloc
    return out


class FleetMember(Protocol):
    """A node's runtime in the fleet (``kvert.kubelet.runtime.sim.SimRuntime``): told what
    happened to its containers at a tick."""

    def handle_events(self, slots: np.ndarray[Any, Any], now: float, memory: np.ndarray[Any, Any]) -> None:
        """Containers that ran out of memory or finished (``slots``) at ``now``."""

    def memory_notice(self) -> None:
        """The node's working set reached the watched level."""

    def set_profile(self, container_id: str, usage: ContainerUsage) -> None:
        """Give a running container a new usage profile (a workload's shared usage split
        anew among its replicas)."""


class _Columns:
    """Named numpy columns of one length that grow together (capacity doubling)."""

    def __init__(self, spec: Mapping[str, tuple[Any, Any, tuple[int, ...]]]) -> None:
        self._spec = spec                     # name -> (dtype, fill, extra shape)
        self.capacity = 0
        self.used = 0                          # slots ever handed out (high-water mark)
        self.free: list[int] = []
        for name, (dtype, fill, extra) in spec.items():
            setattr(self, name, np.full((0, *extra), fill, dtype=dtype))

    def __getattr__(self, name: str) -> np.ndarray[Any, Any]:
        # only reached for a name that is not a column (the columns are instance attributes):
        # says to the type checker that every column is an array
        raise AttributeError(name)

    def allocate(self) -> int:
        if self.free:
            return self.free.pop()
        if self.used == self.capacity:
            new = max(64, self.capacity * 2)
            for name, (dtype, fill, extra) in self._spec.items():
                old = getattr(self, name)
                grown = np.full((new, *extra), fill, dtype=dtype)
                grown[:self.capacity] = old
                setattr(self, name, grown)
            self.capacity = new
        self.used += 1
        return self.used - 1

    def release(self, slot: int) -> None:
        for name, (_, fill, _) in self._spec.items():
            getattr(self, name)[slot] = fill
        self.free.append(slot)


_ROW = {
    "serial": (np.int64, 0, ()),         # which container holds the slot (0: none)
    "running": (bool, False, ()), "node": (np.int64, 0, ()), "sandbox": (np.int64, 0, ()),
    "started": (float, 0.0, ()), "mem_limit": (float, math.inf, ()), "quota_cap": (float, math.inf, ()),
    "weight": (float, 2.0, ()), "period_s": (float, 0.1, ()), "tier": (np.int64, 0, ()),
    "exit_at": (float, math.inf, ()), "cpu_pin": (float, math.nan, ()), "mem_pin": (float, math.nan, ()),
    "cpu_kind": (np.int64, 0, ()), "mem_kind": (np.int64, 0, ()), "series_group": (np.int64, -1, ()),
    "cpu_p": (float, 0.0, (_NPARAM,)), "mem_p": (float, 0.0, (_NPARAM,)),
    "cpu_from_start": (bool, False, ()), "mem_from_start": (bool, False, ()),
    "cpu_noise": (float, 0.0, ()), "mem_noise": (float, 0.0, ()),
    "cpu_noise_iv": (float, 60.0, ()), "mem_noise_iv": (float, 60.0, ()),
    "cpu_seed": (np.uint64, 0, ()), "mem_seed": (np.uint64, 0, ()),
    # counters: integers per tick, so totals do not depend on how ticks were grouped in steps
    "cpu_ns": (np.int64, 0, ()), "demand_ns": (np.int64, 0, ()), "throttled_ns": (np.int64, 0, ()),
    "throttled_periods": (np.int64, 0, ()), "periods": (np.int64, 0, ()), "memory": (float, 0.0, ()),
}
_SANDBOX = {"serial": (np.int64, 0, ()), "node": (np.int64, 0, ()), "cpu_cap": (float, math.inf, ()),
            "mem_limit": (float, math.inf, ())}
_NODE = {"cpu": (float, math.inf, ()), "memory": (float, math.inf, ()), "system_memory": (float, 0.0, ()),
         "kubepods": (float, math.inf, ()), "burstable": (float, math.inf, ()),
         "besteffort": (float, math.inf, ()), "notify_at": (float, math.inf, ())}


def _profile_params(profile: Any) -> tuple[int, list[float]]:
    kind = KINDS[type(profile)]
    if kind == 0:
        return kind, [profile.value]
    if kind == 1:
        return kind, [profile.min, profile.max, profile.period, profile.phase]
    if kind == 2:
        return kind, [profile.base, profile.peak, profile.every, profile.duration, profile.offset]
    return kind, [profile.start, profile.rate, math.inf if profile.max is None else profile.max]


def _evaluate_kind(kind: int, p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Profile values of one kind: parameters (k x 5), effective times (k x T)."""
    if kind == 0:
        return np.broadcast_to(p[:, 0:1], t.shape).copy()
    if kind == 1:
        lo, hi, period, phase = p[:, 0:1], p[:, 1:2], p[:, 2:3], p[:, 3:4]
        angle = 2 * np.pi * np.mod(t + phase, period) / period
        return lo + (hi - lo) * (1 - np.cos(angle)) / 2
    if kind == 2:
        base, peak, every, duration, offset = (p[:, i:i + 1] for i in range(5))
        x = t - offset
        return np.where((x >= 0) & (np.mod(x, every) < duration), peak, base)
    start, rate, cap = p[:, 0:1], p[:, 1:2], p[:, 2:3]
    return np.minimum(start + rate * np.maximum(t, 0.0), cap)


class Fleet:
    """The rows of every container of the runtimes that joined, on one clock and tick."""

    def __init__(self, clock: Clock, tick: float = 1.0) -> None:
        if tick <= 0:
            raise ValueError("tick must be positive")
        self.clock = clock
        self.tick = float(tick)
        self.origin = clock.now()
        self.k = 0                                   # last processed tick: origin + k * tick
        self.rows = _Columns(_ROW)
        self.sandboxes = _Columns(_SANDBOX)
        self.nodes = _Columns(_NODE)
        self.runtimes: list[FleetMember] = []       # by node index
        self.owners: dict[int, Any] = {}            # row slot -> the runtime's container
        self.replays: dict[int, Any] = {}           # row slot -> its Replay (evaluated one by one)
        self.bank: TraceBank | None = None          # recorded usage of ``series`` containers
        self._shared_counts: tuple[Any, np.ndarray] | None = None   # (running set, pods per shared group)
        self.pods: dict[int, Any] = {}              # sandbox slot -> its PodSandboxConfig
        self.serials = 0
        self._running: np.ndarray | None = None     # running slots, cached until one starts or stops
        self.steps = 0
        # pod uid -> [cpu_ns, demand_ns, throttled_ns] of its removed rows, kept only when a
        # reader asks (a simulation's FleetSampler sets a dict and empties it at each sample)
        self.retired: dict[str, list[int]] | None = None
        self.pressure = FleetPressure()             # PSI of rows, sandboxes and nodes

    # -- membership ----------------------------------------------------------------------------------

    def join(self, runtime: FleetMember) -> int:
        node = self.nodes.allocate()
        self.runtimes.append(runtime)
        return node

    def set_node(self, node: int, *, cpu: float | None = None, memory: float | None = None,
                 system_memory: float = 0.0) -> None:
        self.nodes.cpu[node] = math.inf if cpu is None else float(cpu)
        self.nodes.memory[node] = math.inf if memory is None else float(memory)
        self.nodes.system_memory[node] = float(system_memory)

    def set_node_cgroups(self, node: int, limits: dict[str, float]) -> None:
        for name in ("kubepods", "burstable", "besteffort"):
            getattr(self.nodes, name)[node] = limits.get(name, math.inf)

    def watch_memory(self, node: int, working_set: float) -> None:
        """Wake the node's runtime (``memory_notice``) at every tick its working set (pods
        and system) is at least ``working_set`` bytes; ``inf`` stops watching."""
        self.nodes.notify_at[node] = working_set

    def add_sandbox(self, node: int, config: Any) -> int:
        slot = self.sandboxes.allocate()
        self.serials += 1
        self.sandboxes.serial[slot] = self.serials
        self.sandboxes.node[slot] = node
        self.pods[slot] = config
        return slot

    def set_sandbox(self, slot: int, cpu_cap: float, mem_limit: float) -> None:
        self.sandboxes.cpu_cap[slot] = cpu_cap
        self.sandboxes.mem_limit[slot] = mem_limit

    def drop_sandbox(self, slot: int) -> None:
        self.sandboxes.release(slot)
        self.pressure.sandboxes.clear(slot)
        pod = self.pods.pop(slot, None)
        if pod is not None and self.bank is not None:
            self.bank.release(pod.uid)

    def add_row(self, owner: Any, node: int, sandbox: int) -> int:
        slot = self.rows.allocate()
        self.serials += 1
        self.rows.serial[slot] = self.serials
        self.rows.node[slot] = node
        self.rows.sandbox[slot] = sandbox
        self.owners[slot] = owner
        return slot

    def drop_row(self, slot: int) -> None:
        if self.rows.running[slot]:
            self._running = None
        if self.retired is not None:
            # a removed container's counters would vanish with its row: kept per pod, so cpu
            # over an interval also counts the containers removed during it
            pod = self.pods.get(int(self.rows.sandbox[slot]))
            if pod is not None:
                total = self.retired.setdefault(pod.uid, [0, 0, 0])
                total[0] += int(self.rows.cpu_ns[slot])
                total[1] += int(self.rows.demand_ns[slot])
                total[2] += int(self.rows.throttled_ns[slot])
        self.rows.release(slot)
        self.pressure.rows.clear(slot)
        self.owners.pop(slot, None)
        self.replays.pop(slot, None)

    def set_running(self, slot: int, running: bool) -> None:
        if bool(self.rows.running[slot]) != running:
            self.rows.running[slot] = running
            self._running = None

    def set_usage(self, slot: int, usage: Any, started: float, cpu_pin: float | None,
                  memory_pin: float | None) -> None:
        r = self.rows
        r.started[slot] = started
        r.exit_at[slot] = math.inf if usage.exit_after is None else started + usage.exit_after
        r.cpu_pin[slot] = math.nan if cpu_pin is None else cpu_pin
        r.mem_pin[slot] = math.nan if memory_pin is None else memory_pin
        if usage.replay is not None:
            self.replays[slot] = usage.replay
            r.cpu_kind[slot] = r.mem_kind[slot] = REPLAY
            r.series_group[slot] = -1
            return
        self.replays.pop(slot, None)
        if usage.series is not None:
            name = self.owners[slot].config.name
            self.check_series(usage.series, name)      # a bank at all (set_profile may bring a series)
            assert self.bank is not None
            pod = self.pods[int(r.sandbox[slot])]
            cpu_row, mem_row, group = self.bank.take(usage.series, name, pod.uid, pod.name)
            r.cpu_kind[slot] = r.mem_kind[slot] = SERIES
            r.cpu_p[slot, 0], r.mem_p[slot, 0] = cpu_row, mem_row
            r.series_group[slot] = group
            r.cpu_noise[slot] = r.mem_noise[slot] = 0.0
            self._shared_counts = None
            return
        r.series_group[slot] = -1
        for prefix, profile in (("cpu", usage.cpu), ("mem", usage.memory)):
            kind, params = _profile_params(profile)
            getattr(r, f"{prefix}_kind")[slot] = kind
            p = getattr(r, f"{prefix}_p")
            p[slot] = 0.0
            p[slot, :len(params)] = params
            getattr(r, f"{prefix}_from_start")[slot] = profile.anchor == "start"
            getattr(r, f"{prefix}_noise")[slot] = profile.noise
            getattr(r, f"{prefix}_noise_iv")[slot] = profile.noise_interval
            getattr(r, f"{prefix}_seed")[slot] = np.uint64(profile.seed)

    def oom_killed(self, slot: int, now: float) -> None:
        """A container was OOM-killed: a recorded OOM's peak it replays is spent (the
        container restarts to the recorded working set, as the recorded one did)."""
        if self.bank is not None and self.rows.mem_kind[slot] == SERIES:
            self.bank.spend(int(self.rows.mem_p[slot, 0]), now - self.tick / 2)

    def check_series(self, series: str, container: str) -> None:
        """Raise TraceBankError unless the bank has recorded usage for ``container`` of ``series``."""
        if self.bank is None:
            raise TraceBankError(f"series {series!r}: this fleet has no recorded usage (only a simulation of an "
                                 "imported scenario has a trace bank)")
        self.bank.check(series, container)

    def set_limits(self, slot: int, *, mem_limit: float, quota_cap: float, weight: float, period_s: float,
                   tier: str) -> None:
        r = self.rows
        r.mem_limit[slot] = mem_limit
        r.quota_cap[slot] = quota_cap
        r.weight[slot] = weight
        r.period_s[slot] = period_s
        r.tier[slot] = TIERS[tier]

    # -- evaluation ------------------------------------------------------------------------------------

    def running(self) -> np.ndarray:
        if self._running is None:
            self._running = np.flatnonzero(self.rows.running[:self.rows.used])
        return self._running

    def evaluate(self, idx: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cpu millicores, memory bytes) demanded by rows ``idx`` at ``times``: (k x T) each."""
        r = self.rows
        cpu, memory = self._profiled("cpu", idx, times), self._profiled("mem", idx, times)
        if self.replays:
            for j in np.flatnonzero(r.cpu_kind[idx] == REPLAY):
                cpu[j], memory[j] = self._replayed(int(idx[j]), times)
        if self.bank is not None:
            recorded = np.flatnonzero(r.cpu_kind[idx] == SERIES)
            if recorded.size:
                cpu[recorded], memory[recorded] = self._recorded(idx, recorded, times)
        for pin, values in ((r.cpu_pin[idx], cpu), (r.mem_pin[idx], memory)):
            pins = ~np.isnan(pin)
            if pins.any():
                values[pins] = pin[pins][:, None]
        np.maximum(cpu, 0.0, out=cpu)
        np.maximum(memory, 0.0, out=memory)
        return cpu, memory

    def memory_at(self, slot: int, when: float) -> float:
        """Memory bytes row ``slot`` demands at ``when`` (``evaluate``'s, without its CPU: a
        container starting needs only this)."""
        pin = float(self.rows.mem_pin[slot])
        if not math.isnan(pin):
            return max(pin, 0.0)
        times = np.array([when])
        if slot in self.replays:
            return max(float(self._replayed(slot, times)[1][0]), 0.0)
        if self.bank is not None and self.rows.mem_kind[slot] == SERIES:
            row = np.array([int(self.rows.mem_p[slot, 0])])
            return max(float(self.bank.memory_at(row, self.bank.columns(times))[0, 0]), 0.0)
        return max(float(self._profiled("mem", np.array([slot]), times)[0, 0]), 0.0)

    def _recorded(self, idx: np.ndarray, recorded: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bank's values for rows ``idx[recorded]`` at ``times``: cpu of a shared group
        divided among the group's running pods."""
        bank = self.bank
        assert bank is not None
        rows = idx[recorded]
        cols = bank.columns(times - self.tick / 2)[None, :]      # a tick's value is the one of the step it is in
        cpu = bank.cpu[self.rows.cpu_p[rows, 0].astype(np.intp)[:, None], cols].astype(np.float64)
        memory = bank.memory_at(self.rows.mem_p[rows, 0].astype(np.intp), cols[0])
        groups = self.rows.series_group[rows]
        shared = bank.shared_groups()
        if shared.any():
            among = shared[groups]
            if among.any():
                counts = self._pods_per_group(shared.size)
                cpu[among] /= np.maximum(counts[groups[among]], 1.0)[:, None]
        return cpu, memory

    def _pods_per_group(self, groups: int) -> np.ndarray:
        """Running pods per trace-bank group (rows of one pod count once)."""
        running = self.running()
        cached = self._shared_counts
        if cached is not None and cached[0] is running:
            return cached[1]
        r = self.rows
        g = r.series_group[running]
        mine = g >= 0
        pairs = np.unique(np.stack([g[mine], r.sandbox[running][mine]]), axis=1)
        counts = np.bincount(pairs[0], minlength=groups).astype(np.float64)
        self._shared_counts = (running, counts)
        return counts

    def _replayed(self, slot: int, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        replay = self.replays[slot]
        if replay.anchor == "start":
            return replay.values(np.maximum(times - self.rows.started[slot], 0.0))
        return replay.values(times)

    def _profiled(self, prefix: str, idx: np.ndarray, times: np.ndarray) -> np.ndarray:
        """The ``cpu`` or ``mem`` profiles (with noise) of rows ``idx`` at ``times``; replayed
        rows are left 0 and pins are not applied."""
        r = self.rows
        values = np.zeros((idx.size, times.size))
        kinds = getattr(r, f"{prefix}_kind")[idx]
        from_start = getattr(r, f"{prefix}_from_start")[idx]
        teff = times[None, :] - np.where(from_start, r.started[idx], 0.0)[:, None]
        teff = np.where(from_start[:, None], np.maximum(teff, 0.0), teff)
        present = np.flatnonzero(np.bincount(kinds, minlength=SERIES + 1)).tolist()   # kinds: 0..SERIES
        if len(present) == 1 and present[0] < REPLAY:    # one kind for every row (most fleets)
            values = _evaluate_kind(present[0], getattr(r, f"{prefix}_p")[idx], teff)
        else:
            for kind in present:
                if kind < REPLAY:
                    sel = np.flatnonzero(kinds == kind)
                    values[sel] = _evaluate_kind(kind, getattr(r, f"{prefix}_p")[idx[sel]], teff[sel])
        noise = getattr(r, f"{prefix}_noise")[idx]
        noisy = np.flatnonzero(noise > 0)
        if noisy.size == idx.size:       # every row noisy (most fleets): no selection
            buckets = np.floor(teff / getattr(r, f"{prefix}_noise_iv")[idx][:, None])
            values *= 1.0 + noise[:, None] * _uniform(getattr(r, f"{prefix}_seed")[idx][:, None], buckets)
        elif noisy.size:
            buckets = np.floor(teff[noisy] / getattr(r, f"{prefix}_noise_iv")[idx[noisy]][:, None])
            values[noisy] *= 1.0 + noise[noisy][:, None] * _uniform(
                getattr(r, f"{prefix}_seed")[idx[noisy]][:, None], buckets)
        return values

    # -- time --------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Advance at every tick, so kills and exits happen when due with nobody asking."""
        while True:
            await self.clock.sleep(self.origin + (self.k + 1) * self.tick - self.clock.now())
            self.advance()

    def advance(self) -> None:
        """Process every tick boundary up to the clock's now."""
        target = math.floor((self.clock.now() - self.origin) / self.tick + _EPS)
        while self.k < target:
            idx = self.running()
            if not idx.size:
                self.k = target
                return
            count = min(target - self.k, max(1, _CHUNK_CELLS // idx.size))
            self._step(idx, self.k + 1, count)

    def _step(self, idx: np.ndarray, first: int, count: int) -> None:
        """Ticks first .. first+count-1, stopping after the first tick with an event."""
        self.steps += 1
        r, nd, sb = self.rows, self.nodes, self.sandboxes
        times = self.origin + self.tick * np.arange(first, first + count, dtype=float)
        demand, memory = self.evaluate(idx, times)
        nodes, sandboxes = r.node[idx], r.sandbox[idx]
        n_nodes, n_sandboxes = nd.used, sb.used
        mem_limit = r.mem_limit[idx]

        # -- events: the first tick with an OOM or an exit anywhere ends this step
        event = (memory > mem_limit[:, None]).any(axis=0)
        pod_limit = sb.mem_limit[:n_sandboxes]
        pod_memory = None
        if np.isfinite(pod_limit).any():
            pod_memory = group_sum(sandboxes, memory, n_sandboxes)
            event |= (pod_memory > pod_limit[:, None]).any(axis=0)
        node_memory = group_sum(nodes, memory, n_nodes)
        node_limits = [np.minimum(nd.kubepods[:n_nodes], nd.memory[:n_nodes] - nd.system_memory[:n_nodes])]
        tier_memory = []
        for code, name in ((1, "burstable"), (2, "besteffort")):
            limit = getattr(nd, name)[:n_nodes]
            if np.isfinite(limit).any():
                rows = r.tier[idx] == code
                tier_memory.append((rows, group_sum(nodes[rows], memory[rows], n_nodes), limit))
        for limit in node_limits:
            event |= (node_memory > limit[:, None]).any(axis=0)
        for _, sums, limit in tier_memory:
            event |= (sums > limit[:, None]).any(axis=0)
        exit_at = r.exit_at[idx]
        exiting = np.flatnonzero(np.isfinite(exit_at))
        if exiting.size:
            first_exit = np.searchsorted(times, exit_at[exiting] - _EPS, side="left")
            due = first_exit[first_exit < count]
            event[due] = True
        last = int(np.argmax(event)) if event.any() else count - 1
        t = times[:last + 1]

        # -- cpu over the ticks up to and including that one
        started = r.started[idx]
        dt = np.clip(t[None, :] - np.maximum(t[None, :] - self.tick, started[:, None]), 0.0, self.tick)
        want = demand[:, :last + 1]
        allowed = np.minimum(want, r.quota_cap[idx][:, None])
        pod_cap = sb.cpu_cap[:n_sandboxes]
        if np.isfinite(pod_cap).any():
            sums = group_sum(sandboxes, allowed, n_sandboxes)
            factor = np.minimum(1.0, np.divide(pod_cap[:, None], sums, out=np.ones_like(sums), where=sums > 0))
            allowed = allowed * factor[sandboxes]
        used = allowed
        node_cpu = nd.cpu[:n_nodes]
        if np.isfinite(node_cpu).any():
            over = (group_sum(nodes, allowed, n_nodes) > node_cpu[:, None] + _EPS).any(axis=1)
            if over.any():
                used = allowed.copy()
                weights = r.weight[idx]
                for node in np.flatnonzero(over):
                    rows = np.flatnonzero(nodes == node)
                    used[rows] = share(allowed[rows], weights[rows], float(node_cpu[node]))
        throttled = want - allowed
        self.pressure.advance(idx, sandboxes, nodes, want=want, allowed=allowed, used=used, memory=memory[:, :last + 1],
                              mem_limit=np.where(np.isfinite(mem_limit), mem_limit, sb.mem_limit[sandboxes]),
                              dt=dt, tick=self.tick, n_sandboxes=n_sandboxes, n_nodes=n_nodes)
        periods = np.rint(dt / r.period_s[idx][:, None] * 1e6).astype(np.int64)
        under_quota = np.isfinite(r.quota_cap[idx]) | np.isfinite(pod_cap[sandboxes])
        r.cpu_ns[idx] += np.rint(used * dt * 1e6).astype(np.int64).sum(axis=1)
        r.demand_ns[idx] += np.rint(want * dt * 1e6).astype(np.int64).sum(axis=1)
        r.throttled_ns[idx] += np.rint(throttled * dt * 1e6).astype(np.int64).sum(axis=1)
        r.throttled_periods[idx] += np.where(throttled > _EPS, periods, 0).sum(axis=1)
        r.periods[idx] += np.where(under_quota[:, None] & (want > 0), periods, 0).sum(axis=1)
        r.memory[idx] = memory[:, last]
        self.k = first + last
        now = float(times[last])

        if event[last]:
            at = memory[:, last]
            hit = np.zeros(n_nodes, dtype=bool)
            hit[nodes[(at > mem_limit) | (exit_at <= now + _EPS)]] = True
            if pod_memory is not None:
                over_pods = np.flatnonzero(pod_memory[:, last] > pod_limit)
                hit[sb.node[over_pods]] = True
            for limit in node_limits:
                hit |= node_memory[:, last] > limit
            for _, sums, limit in tier_memory:
                hit |= sums[:, last] > limit
            for node in np.flatnonzero(hit):
                rows = np.flatnonzero(nodes == node)
                self.runtimes[node].handle_events(idx[rows], now, at[rows])
        notify = nd.notify_at[:n_nodes]
        if np.isfinite(notify).any():
            working = node_memory[:, last] + nd.system_memory[:n_nodes]
            for node in np.flatnonzero(working >= notify):
                self.runtimes[node].memory_notice()


__all__ = ["Fleet", "group_sum", "share"]
