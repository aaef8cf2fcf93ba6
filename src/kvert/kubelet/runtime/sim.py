"""An in-memory container runtime: the Runtime protocol over simulated containers.

Each container follows a usage profile (``kvert.kubelet.usage``) given in
``ContainerConfig.annotations["kvert.io/usage"]`` (the node agent fills it with
``usage.container_annotations(pod, container)``). Without it a container uses a constant
half of the cpu its shares stand for (at least 10m) and 16Mi.

Programs. A container whose command (or known image's entrypoint) the simulated shell can
run runs it (``simprograms``): its output is the container's log, its exit status ends the
container (reason ``Completed`` for 0, ``Error`` otherwise), and what it listens on
(``simnet``: ``nc -l``, ``httpd``, agnhost ``netexec``) answers port-forward; the usage
profile still gives its cpu and memory. Any other container runs no program: its log is
made of kvert's lifecycle and usage lines (``simlogs``) and it runs until stopped (or its
``exitAfter``).

Time. The runtime's containers are rows of a ``Fleet`` (``kvert.kubelet.runtime.fleet``:
its own, or one shared by every simulated node of a process), which advances *lazily*, in
fixed ticks of ``tick`` seconds counted from the moment the fleet was created: every call
(and ``advance()``) first processes all tick boundaries up to the clock's ``now()``, for
every node of the fleet at once. The usage sampled at a boundary stands for the tick that
ends there. Results depend only on virtual time and on the calls made at which times, never
on how often anyone looked, so runs are deterministic in a VirtualClock. ``run()`` (or the
fleet's) is an optional coroutine that advances every tick, for callers who want OOM kills
to happen (and ``on_oom`` listeners to fire) without polling. Ticks are processed
vectorized (numpy, containers x ticks), so skipping an hour costs little.

Per tick, for each running container:

* cpu: demand from the profile, capped by the container's CFS quota (``quota/period``
  cores), then by the pod's quota (sandbox resources; containers scaled down
  proportionally), then by the node's cpu (``cpu_capacity``; shared by ``cpu.shares``,
  weighted max-min fair). Cumulative usage is in core-nanoseconds. Demand cut by a quota is
  *throttling*: every CFS period of the tick counts as throttled and the cpu time denied,
  ``(demand - allowed) * dt``, adds to the throttled nanoseconds (what ``cpu.stat``'s
  ``throttled_usec`` sums over cpus). ``cpu_periods`` counts the elapsed periods of a
  container under a quota with demand.
* memory: the working set comes from the profile. Above the container's
  ``memory_limit_in_bytes`` the container is OOM-killed: state ``exited``, reason
  ``OOMKilled``, exit code 137, ``oom_events`` 1, at that tick. When the containers of a
  pod together pass the pod's memory limit, or all containers pass ``memory_capacity``
  (the node; e.g. the kubepods limit), the kernel's choice is modelled: the container with
  the highest ``working_set + oom_score_adj * limit / 1000`` is killed, repeatedly, until
  the rest fit.
* a container with ``exitAfter`` exits at the first tick at or after that time: reason
  ``Completed`` (exit code 0) or ``Error``.

Restarting is the node agent's business: it sees the exited container through
``container_status``/``list_containers`` and creates a new one.

``update_container_resources`` applies new values from the current tick. A memory limit
below the container's current working set is refused with ``CriError`` and nothing is
changed: seed 000 says lowering a limit under pages in use may not take effect, and kvert
models the kernel refusing it (cgroup v1 answers such a write with EBUSY), so the node agent
keeps the old values and retries later. The same holds for a pod's memory limit below the
pod's current total (``update_pod_sandbox_resources``).

Test hooks: ``fail_next(call_name)`` makes the next call(s) of that method raise
``CriError``; ``set_usage(container_id, cpu, memory)`` pins a container's usage.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kvert.api.quantity import to_int
from kvert.clock.base import Clock
from kvert.kubelet.psi import ResourcePressure
from kvert.kubelet.runtime import simstreams
from kvert.kubelet.runtime.base import (
    ContainerConfig,
    ContainerResources,
    ContainerStats,
    ContainerStatus,
    CriError,
    FsStats,
    LinuxContainerResources,
    NodeStats,
    PodSandboxConfig,
    PodStats,
)
from kvert.kubelet.runtime.fleet import Fleet
from kvert.kubelet.runtime.logrotation import DEFAULT_POLICY, LogRotatePolicy, retained_bytes
from kvert.kubelet.runtime.simlogs import ContainerLog
from kvert.kubelet.runtime.simnet import PodNetwork
from kvert.kubelet.runtime.simprograms import MainProcess, ProgramLog, program_argv
from kvert.kubelet.runtime.simshell import Filesystem
from kvert.kubelet.runtime.tracebank import TraceBankError
from kvert.kubelet.usage import (
    DEFAULT_CPU_MILLI,
    DEFAULT_MEMORY_BYTES,
    USAGE_ANNOTATION,
    Constant,
    ContainerUsage,
    UsageError,
    disk_usage,
    log_written,
    parse_container_usage,
)

OOM_EXIT_CODE = 137
STOP_EXIT_CODE = 143          # 128 + SIGTERM
CALLS = frozenset({
    "run_pod_sandbox", "update_pod_sandbox_resources", "stop_pod_sandbox", "remove_pod_sandbox",
    "create_container", "start_container", "stop_container", "remove_container",
    "update_container_resources", "container_status", "list_containers",
})
DEFAULT_MAX_PID = 4_194_304   # /proc/sys/kernel/pid_max of a 64-bit node
BYTES_PER_INODE = 16_384      # mke2fs' default inode ratio
CONTAINER_INODES = 64         # files a container's writable layer and logs take
_EPS = 1e-9


@dataclass
class OomKill:
    """One OOM kill, for reports and tests."""
    time: float
    container_id: str
    sandbox_id: str
    name: str
    scope: str                 # "container" | "pod" | "node"
    usage: int                 # working set at the kill, bytes
    limit: int                 # the limit that was passed, bytes


@dataclass
class _Sandbox:
    id: str
    config: PodSandboxConfig
    resources: LinuxContainerResources | None
    state: str = "ready"
    created_at: float = 0.0
    slot: int = -1              # its row in the fleet's sandboxes
    network: PodNetwork = field(default_factory=PodNetwork)     # where its programs listen


class _Container:
    """One container instance; its counters live in the fleet's row while it exists."""

    def __init__(self, runtime: SimRuntime, container_id: str, sandbox_id: str, config: ContainerConfig,
                 usage: ContainerUsage, resources: LinuxContainerResources, created_at: float,
                 log: ContainerLog, argv: list[str] | None = None):
        self.id = container_id
        self.sandbox_id = sandbox_id
        self.config = config
        self.usage = usage
        self.resources = resources
        self.created_at = created_at
        self.state = "created"
        self.started_at = 0.0
        self.finished_at = 0.0
        self.exit_code = 0
        self.reason = ""
        self.oom_events = 0
        self.cpu_override: float | None = None
        self.memory_override: float | None = None
        self.log = log
        self.fs: Filesystem | None = None      # what exec sees, made at the first exec
        self.argv = argv                       # the program it runs (None: a simulated workload)
        self.process: MainProcess | None = None
        self._rows = runtime.fleet.rows
        self.slot = runtime.fleet.add_row(self, runtime.node, runtime._sandboxes[sandbox_id].slot)

    @property
    def cpu_ns(self) -> int:                  # core-nanoseconds
        return int(self._rows.cpu_ns[self.slot])

    @property
    def demand_ns(self) -> int:               # what it wanted, core-nanoseconds
        return int(self._rows.demand_ns[self.slot])

    @property
    def throttled_ns(self) -> int:
        return int(self._rows.throttled_ns[self.slot])

    @property
    def throttled_periods(self) -> int:       # in millionths of a period
        return int(self._rows.throttled_periods[self.slot])

    @property
    def periods(self) -> int:                 # in millionths of a period
        return int(self._rows.periods[self.slot])

    @property
    def memory(self) -> float:
        return float(self._rows.memory[self.slot])

    @memory.setter
    def memory(self, value: float) -> None:
        self._rows.memory[self.slot] = value


@dataclass
class _Failure:
    remaining: int
    error: Exception | None = None


def _default_usage(resources: LinuxContainerResources) -> ContainerUsage:
    shares = resources.cpu_shares
    request = shares * 1000 // 1024 if shares > 2 else 0
    return ContainerUsage(cpu=Constant(value=float(request // 2 or DEFAULT_CPU_MILLI)),
                          memory=Constant(value=float(DEFAULT_MEMORY_BYTES)))


def _tier_of(cgroup_parent: str) -> str:
    """The QoS tier of a pod cgroup path (cgroupfs or systemd naming)."""
    for tier in ("burstable", "besteffort"):
        if f"/{tier}/" in cgroup_parent or f"kubepods-{tier}.slice" in cgroup_parent:
            return tier
    return ""


class SimRuntime:
    """The Runtime protocol in memory, driven by usage profiles in virtual (or wall) time.

    ``cpu_capacity`` (millicores) and ``memory_capacity`` (bytes) bound the node as a whole;
    None means unbounded. ``name`` seeds the (deterministic) ids.
    """

    # containerLogMaxSize / containerLogMaxFiles (the node agent's assembly sets the node's)
    log_policy: LogRotatePolicy = DEFAULT_POLICY

    def __init__(self, clock: Clock, tick: float = 1.0, *, cpu_capacity: int | None = None,
                 memory_capacity: int | None = None, name: str = "sim", disk_capacity: int | None = None,
                 inodes: int | None = None, max_pid: int = DEFAULT_MAX_PID, system_memory: int = 0,
                 system_processes: int = 0, fleet: Fleet | None = None) -> None:
        if fleet is None:
            fleet = Fleet(clock, tick)
        elif fleet.clock is not clock:
            raise ValueError("a runtime joins a fleet on the fleet's clock")
        self.fleet = fleet
        self.clock = clock
        self.tick = fleet.tick
        self.cpu_capacity = cpu_capacity
        self.memory_capacity = memory_capacity
        self.name = name
        self.disk_capacity = disk_capacity
        self.inodes = inodes if inodes is not None else (
            disk_capacity // BYTES_PER_INODE if disk_capacity else None)
        self.max_pid = max_pid
        self.system_memory = system_memory           # what the node's own daemons use
        self.system_processes = system_processes
        self.node = fleet.join(self)
        fleet.set_node(self.node, cpu=cpu_capacity, memory=memory_capacity, system_memory=system_memory)
        self._node_cgroups: dict[str, LinuxContainerResources] = {}
        self.origin = fleet.origin
        self.oom_kills: list[OomKill] = []
        self.on_oom: list[Callable[[OomKill], None]] = []
        # set when a container exits or is killed (the evented PLEG's container events)
        self.events = asyncio.Event()
        # set when the node's statistics may have passed a watched level: the working set at
        # or above ``watch_memory``'s (every tick it is), a container created or removed
        self.stats_events = asyncio.Event()
        self._sandboxes: dict[str, _Sandbox] = {}
        self._containers: dict[str, _Container] = {}
        # (sandbox, container name) -> the log of the instance removed last (for ``previous``)
        self._removed_logs: dict[tuple[str, str], ContainerLog] = {}
        self._failures: dict[str, _Failure] = {}
        self._counter = 0

    # -- hooks for tests --------------------------------------------------------------------

    def fail_next(self, call_name: str, error: Exception | str | None = None, times: int = 1) -> None:
        """Make the next ``times`` calls of ``call_name`` (e.g. ``"update_container_resources"``)
        raise ``error`` (a CriError by default) without doing anything."""
        if call_name not in CALLS:
            raise ValueError(f"unknown runtime call {call_name!r}; expected one of {sorted(CALLS)}")
        if isinstance(error, str):
            error = CriError(error)
        self._failures[call_name] = _Failure(times, error)

    def set_usage(self, container_id: str, cpu: int | str | None = None, memory: int | str | None = None) -> None:
        """Pin a container's usage from now on: cpu in millicores (or a quantity string),
        memory in bytes (or a quantity). ``None`` leaves that resource to its profile;
        ``set_usage(id)`` with neither restores both."""
        self.advance()
        c = self._container(container_id)
        if cpu is None and memory is None:
            c.cpu_override = c.memory_override = None
        else:
            if cpu is not None:
                c.cpu_override = float(to_int("cpu", cpu) if isinstance(cpu, str) else cpu)
            if memory is not None:
                c.memory_override = float(to_int("memory", memory) if isinstance(memory, str) else memory)
        if c.state == "running" and c.memory_override is not None:
            c.memory = c.memory_override
        self._sync(c)

    def set_profile(self, container_id: str, usage: ContainerUsage) -> None:
        """Replace a container's usage profile from now on."""
        self.advance()
        c = self._container(container_id)
        c.usage = usage
        self._sync(c)

    def _check_failure(self, call: str) -> None:
        failure = self._failures.get(call)
        if failure is None:
            return
        failure.remaining -= 1
        if failure.remaining <= 0:
            del self._failures[call]
        raise failure.error or CriError(f"injected failure of {call}")

    # -- ids and lookups ----------------------------------------------------------------------

    def _new_id(self, kind: str) -> str:
        self._counter += 1
        return hashlib.sha256(f"{self.name}/{kind}/{self._counter}".encode()).hexdigest()

    def _container(self, container_id: str) -> _Container:
        c = self._containers.get(container_id)
        if c is None:
            raise CriError(f"container {container_id!r} not found")
        return c

    def _sandbox(self, sandbox_id: str) -> _Sandbox:
        s = self._sandboxes.get(sandbox_id)
        if s is None:
            raise CriError(f"pod sandbox {sandbox_id!r} not found")
        return s

    # -- time ----------------------------------------------------------------------------------

    async def run(self) -> None:
        """Advance every tick (optional: the runtime also advances whenever it is called)."""
        while True:
            await self.clock.sleep(self.tick)
            self.advance()

    def advance(self) -> None:
        """Process every tick boundary up to the clock's now (for the whole fleet)."""
        self.fleet.advance()

    def _sync(self, c: _Container) -> None:
        """The container's row in the fleet, after its resources, usage or state changed."""
        fleet, sandbox = self.fleet, self._sandboxes[c.sandbox_id]
        fleet.set_usage(c.slot, c.usage, c.started_at, c.cpu_override, c.memory_override)
        fleet.set_limits(c.slot, mem_limit=float(c.resources.memory_limit_in_bytes or math.inf),
                         quota_cap=self._cap(c.resources), weight=float(max(2, c.resources.cpu_shares)),
                         period_s=self._period(c, sandbox), tier=_tier_of(sandbox.config.cgroup_parent))
        fleet.set_running(c.slot, c.state == "running")

    def _sync_sandbox(self, sandbox: _Sandbox) -> None:
        self.fleet.set_sandbox(sandbox.slot, self._cap(sandbox.resources), self._pod_memory_limit(sandbox.id))
        for c in self._containers.values():
            if c.sandbox_id == sandbox.id:
                self._sync(c)

    def watch_memory(self, working_set: int | None) -> None:
        """Set ``stats_events`` at every tick the node's working set (pods and system) is at
        least ``working_set`` bytes (None: stop), as a memcg threshold notification."""
        self.fleet.watch_memory(self.node, math.inf if working_set is None else float(working_set))

    def memory_notice(self) -> None:
        self.stats_events.set()

    def stats_static(self) -> bool:
        """Whether only memory changes between calls: no container writes to disk, so disk,
        inode and process counts move only when containers are created or removed."""
        return all(c.usage.disk is None for c in self._containers.values())

    def _shared_limits(self, containers: list[_Container]) -> list[tuple[list[int], float, str]]:
        """Memory limits shared by many pods, innermost first: the QoS tiers' and kubepods'
        cgroups (set by the node agent through ``set_node_cgroups``), then the machine's
        memory less what the system uses. Each as (indexes of the containers under it,
        limit, the OOM kill's scope)."""
        out = []
        everyone = list(range(len(containers)))
        for tier in ("burstable", "besteffort"):
            res = self._node_cgroups.get(tier)
            if res is not None and res.memory_limit_in_bytes > 0:
                out.append(([i for i, c in enumerate(containers)
                             if _tier_of(self._sandboxes[c.sandbox_id].config.cgroup_parent) == tier],
                            float(res.memory_limit_in_bytes), tier))
        kubepods = self._node_cgroups.get("kubepods")
        if kubepods is not None and kubepods.memory_limit_in_bytes > 0:
            out.append((everyone, float(kubepods.memory_limit_in_bytes), "kubepods"))
        if self.memory_capacity is not None:
            out.append((everyone, float(self.memory_capacity - self.system_memory), "node"))
        return out

    @staticmethod
    def _cap(res: LinuxContainerResources | None) -> float:
        if res is None or res.cpu_quota <= 0 or res.cpu_period <= 0:
            return math.inf
        return res.cpu_quota * 1000.0 / res.cpu_period

    @staticmethod
    def _period(c: _Container, sandbox: _Sandbox) -> float:
        if c.resources.cpu_quota > 0 and c.resources.cpu_period > 0:
            return c.resources.cpu_period / 1e6
        if sandbox.resources is not None and sandbox.resources.cpu_period > 0:
            return sandbox.resources.cpu_period / 1e6
        return 0.1

    def _pod_memory_limit(self, sandbox_id: str) -> float:
        res = self._sandboxes[sandbox_id].resources
        return float(res.memory_limit_in_bytes) if res is not None and res.memory_limit_in_bytes > 0 else math.inf

    def handle_events(self, slots: np.ndarray, now: float, memory: np.ndarray) -> None:
        """The fleet found an event at ``now`` among this node's running rows ``slots``
        (working sets ``memory``): OOM kills, scope by scope, and exits."""
        running: list[_Container] = [self.fleet.owners[int(s)] for s in slots]
        memory = np.asarray(memory, dtype=float)
        alive = np.ones(len(running), dtype=bool)
        for i, c in enumerate(running):
            limit = c.resources.memory_limit_in_bytes
            if limit > 0 and memory[i] > limit:
                self._oom(c, now, "container", memory[i], limit)
                alive[i] = False
        by_sandbox: dict[str, list[int]] = {}
        for i, c in enumerate(running):
            by_sandbox.setdefault(c.sandbox_id, []).append(i)
        for sandbox_id, rows in by_sandbox.items():
            self._kill_until_fits(running, rows, alive, memory, self._pod_memory_limit(sandbox_id), now, "pod")
        for rows, shared_limit, scope in self._shared_limits(running):
            self._kill_until_fits(running, rows, alive, memory, shared_limit, now, scope)
        for i, c in enumerate(running):
            if not alive[i] or c.usage.exit_after is None:
                continue
            if now + _EPS >= c.started_at + c.usage.exit_after:
                code = c.usage.exit_code
                self._finish(c, now, code, "Completed" if code == 0 else "Error")

    def _kill_until_fits(self, running: list[_Container], rows: list[int], alive: np.ndarray,
                         memory: np.ndarray, limit: float, now: float, scope: str) -> None:
        if not math.isfinite(limit):
            return
        while True:
            live = [i for i in rows if alive[i]]
            total = float(sum(memory[i] for i in live))
            if not live or total <= limit:
                return
            victim = max(live, key=lambda i: (memory[i] + running[i].resources.oom_score_adj * limit / 1000.0,
                                              memory[i]))
            self._oom(running[victim], now, scope, total, limit)
            alive[victim] = False

    def _oom(self, c: _Container, now: float, scope: str, usage: float, limit: float) -> None:
        c.oom_events += 1
        self.fleet.oom_killed(c.slot, now)
        if c.argv is None:
            c.log.say(now, f"killed: out of memory ({scope} limit {int(limit)}, usage {int(usage)})")
        self._finish(c, now, OOM_EXIT_CODE, "OOMKilled")
        kill = OomKill(now, c.id, c.sandbox_id, c.config.name, scope, int(usage), int(limit))
        self.oom_kills.append(kill)
        for listener in list(self.on_oom):
            listener(kill)

    def _finish(self, c: _Container, now: float, code: int, reason: str) -> None:
        c.state = "exited"
        c.finished_at = now
        c.exit_code = code
        c.reason = reason
        c.memory = 0.0
        self.fleet.set_running(c.slot, False)
        c.log.finished_at = now
        if c.process is not None:
            c.process.stop()
        if c.argv is None:
            c.log.say(now, f"exited: code {code}" + (f" ({reason})" if reason else ""))
        self.events.set()

    def _program_exited(self, c: _Container, code: int) -> None:
        self.advance()           # an OOM kill or exitAfter before this moment comes first
        if c.state == "running" and self._containers.get(c.id) is c:
            self._finish(c, self.clock.now(), code, "Completed" if code == 0 else "Error")

    # -- status ----------------------------------------------------------------------------------

    def _status(self, c: _Container) -> ContainerStatus:
        return ContainerStatus(
            id=c.id, name=c.config.name, state=c.state,
            resources=ContainerResources(linux=c.resources),
            started_at=c.started_at, finished_at=c.finished_at, exit_code=c.exit_code, reason=c.reason,
            cpu_usage_core_nanoseconds=c.cpu_ns,
            memory_working_set_bytes=int(round(c.memory)),
            cpu_throttled_periods=c.throttled_periods // 1_000_000,
            cpu_throttled_nanoseconds=c.throttled_ns,
            oom_events=c.oom_events,
            cpu_periods=c.periods // 1_000_000,
            pressure=self.fleet.pressure.row(c.slot),
        )

    def pod_pressure(self, sandbox_id: str) -> ResourcePressure | None:
        """The pod cgroup's PSI (``simpressure``)."""
        self.advance()
        return self.fleet.pressure.sandbox(self._sandbox(sandbox_id).slot)

    def node_pressure(self) -> ResourcePressure | None:
        self.advance()
        return self.fleet.pressure.node(self.node)

    def status(self, container_id: str) -> ContainerStatus:
        """Synchronous ``container_status`` (no failure injection)."""
        self.advance()
        return self._status(self._container(container_id))

    def sandbox_of(self, container_id: str) -> str:
        return self._container(container_id).sandbox_id

    def sandbox_config(self, sandbox_id: str) -> PodSandboxConfig:
        return self._sandbox(sandbox_id).config

    def sandbox_resources(self, sandbox_id: str) -> LinuxContainerResources | None:
        """The pod-level values applied to a sandbox now."""
        return self._sandbox(sandbox_id).resources

    def sandbox_state(self, sandbox_id: str) -> str:
        return self._sandbox(sandbox_id).state

    def list_sandboxes(self) -> list[str]:
        return list(self._sandboxes)

    def set_node_cgroups(self, values: dict[str, LinuxContainerResources]) -> None:
        """The node-level cgroups the kubelet's container manager writes itself (not through
        the CRI): ``kubepods``, ``burstable``, ``besteffort``. Their memory limits bound the
        pods under them (an OOM kill in that scope when passed): the fleet applies them to
        the rows under them, so no container's own row changes."""
        self.advance()
        if values != self._node_cgroups:
            self._node_cgroups = dict(values)
            self.fleet.set_node_cgroups(self.node, {
                name: float(res.memory_limit_in_bytes) for name, res in values.items()
                if res.memory_limit_in_bytes > 0})

    def node_cgroups(self) -> dict[str, LinuxContainerResources]:
        return dict(self._node_cgroups)

    async def node_stats(self) -> NodeStats:
        """The node's statistics now (the kubelet's summary API), for the eviction manager."""
        self.advance()
        now = self.clock.now()
        containers = [c for c in self._containers.values() if c.sandbox_id in self._sandboxes]
        running = [c for c in containers if c.state == "running"]
        pods_ws = int(round(sum(c.memory for c in running)))
        processes = self.system_processes + sum(c.usage.pids for c in running)
        disks = self._disks(containers, now)
        nodefs = None
        if self.disk_capacity:
            used = int(sum(disks))
            inodes = self.inodes or 0
            nodefs = FsStats(self.disk_capacity, max(0, self.disk_capacity - used), inodes,
                             max(0, inodes - CONTAINER_INODES * len(containers)))

        def pod_stats() -> dict[str, PodStats]:
            pods: dict[str, PodStats] = {}
            for i, c in enumerate(containers):
                ps = pods.setdefault(self._sandboxes[c.sandbox_id].config.uid, PodStats())
                memory = int(round(c.memory)) if c.state == "running" else 0
                disk = int(disks[i])
                ps.containers[c.config.name] = ContainerStats(memory=memory, disk=disk, inodes=CONTAINER_INODES)
                ps.memory += memory
                ps.disk += disk
                ps.inodes += CONTAINER_INODES
                if c.state == "running":
                    ps.processes += c.usage.pids
            return pods

        capacity = self.memory_capacity or 0
        kubepods = self._node_cgroups.get("kubepods")
        pods_limit = kubepods.memory_limit_in_bytes if kubepods is not None and \
            kubepods.memory_limit_in_bytes > 0 else capacity
        return NodeStats(time=now, memory_capacity=capacity, memory_working_set=pods_ws + self.system_memory,
                         pods_memory_limit=pods_limit, pods_memory_working_set=pods_ws, nodefs=nodefs,
                         max_pid=self.max_pid, processes=processes, pod_stats=pod_stats)

    def _disks(self, containers: list[_Container], now: float) -> list[float]:
        """Each container's ephemeral storage: its writable layer (``disk`` profile) and its
        logs, as rotation keeps them (the ``logs`` profile's bytes, and what was said)."""
        usages = [c.usage for c in containers]
        started = [c.started_at or c.created_at for c in containers]
        disks = disk_usage(usages, now, started).tolist()
        written = log_written(usages, now, started).tolist() if any(u.logs is not None for u in usages) \
            else [0.0] * len(containers)
        return [disk + retained_bytes(int(w), self.log_policy) + c.log.disk_usage
                for c, disk, w in zip(containers, disks, written)]

    def memory_working_set(self) -> int:
        """The working sets of all running containers together (bytes), now."""
        self.advance()
        return int(round(sum(c.memory for c in self._containers.values() if c.state == "running")))

    # -- the Runtime protocol ------------------------------------------------------------------------

    async def run_pod_sandbox(self, config: PodSandboxConfig) -> str:
        self.advance()
        self._check_failure("run_pod_sandbox")
        sandbox_id = self._new_id("sandbox")
        sandbox = _Sandbox(sandbox_id, config, config.resources, "ready", self.clock.now(),
                           slot=self.fleet.add_sandbox(self.node, config))
        self._sandboxes[sandbox_id] = sandbox
        self._sync_sandbox(sandbox)
        return sandbox_id

    async def update_pod_sandbox_resources(self, sandbox_id: str, resources: LinuxContainerResources) -> None:
        self.advance()
        self._check_failure("update_pod_sandbox_resources")
        sandbox = self._sandbox(sandbox_id)
        limit = resources.memory_limit_in_bytes
        in_use = sum(c.memory for c in self._containers.values()
                     if c.sandbox_id == sandbox_id and c.state == "running")
        if limit > 0 and in_use > limit:
            raise CriError(f"pod sandbox {sandbox_id[:12]}: cannot set memory limit {limit} below the "
                           f"pod's current usage {int(in_use)}")
        sandbox.resources = resources
        self._sync_sandbox(sandbox)

    async def stop_pod_sandbox(self, sandbox_id: str) -> None:
        self.advance()
        self._check_failure("stop_pod_sandbox")
        sandbox = self._sandboxes.get(sandbox_id)
        if sandbox is None:
            return
        now = self.clock.now()
        for c in self._containers.values():
            if c.sandbox_id == sandbox_id and c.state == "running":
                self._finish(c, now, STOP_EXIT_CODE, "Error")
        sandbox.state = "notready"

    async def remove_pod_sandbox(self, sandbox_id: str) -> None:
        self.advance()
        self._check_failure("remove_pod_sandbox")
        if sandbox_id not in self._sandboxes:
            return
        for cid in [c.id for c in self._containers.values() if c.sandbox_id == sandbox_id]:
            removed = self._containers.pop(cid)
            if removed.process is not None:
                removed.process.stop()
            self.fleet.drop_row(removed.slot)
        for key in [k for k in self._removed_logs if k[0] == sandbox_id]:
            del self._removed_logs[key]
        self.fleet.drop_sandbox(self._sandboxes.pop(sandbox_id).slot)
        self.stats_events.set()

    async def create_container(self, sandbox_id: str, config: ContainerConfig) -> str:
        self.advance()
        self._check_failure("create_container")
        sandbox = self._sandbox(sandbox_id)
        if sandbox.state != "ready":
            raise CriError(f"pod sandbox {sandbox_id[:12]} is not ready")
        resources = (config.resources.linux if config.resources is not None else None) or LinuxContainerResources()
        spec = (config.annotations or {}).get(USAGE_ANNOTATION)
        try:
            usage = parse_container_usage(spec, config.name) if spec else _default_usage(resources)
            if usage.series is not None:
                self.fleet.check_series(usage.series, config.name)
        except (UsageError, TraceBankError) as err:
            raise CriError(f"container {config.name!r}: invalid {USAGE_ANNOTATION}: {err}") from None
        container_id = self._new_id("container")
        argv = program_argv(config)
        c = _Container(self, container_id, sandbox_id, config, usage, resources, created_at=self.clock.now(),
                       log=ProgramLog(usage, policy=self.log_policy) if argv is not None
                       else ContainerLog(usage, policy=self.log_policy), argv=argv)
        self._containers[container_id] = c
        self._sync(c)
        self.stats_events.set()
        return container_id

    async def start_container(self, container_id: str) -> None:
        self.advance()
        self._check_failure("start_container")
        c = self._container(container_id)
        if c.state != "created":
            raise CriError(f"container {container_id[:12]} is {c.state}, only a created container can start")
        if self._sandbox(c.sandbox_id).state != "ready":
            raise CriError(f"pod sandbox {c.sandbox_id[:12]} is not ready")
        now = self.clock.now()
        c.state = "running"
        c.started_at = now
        c.log.started_at = now
        self._sync(c)
        c.memory = self.fleet.memory_at(c.slot, now)
        if c.argv is None:
            command = " ".join(c.config.command + c.config.args)
            c.log.say(now, f"started: image {c.config.image}" + (f", command {command}" if command else ""))
            return
        c.process = MainProcess(c.argv, c.config, self._filesystem(c), self._env(c),
                                self._sandbox(c.sandbox_id).network, c.log, self.clock,
                                on_exit=lambda code: self._program_exited(c, code))
        c.process.start()

    async def stop_container(self, container_id: str, timeout_seconds: int = 0) -> None:
        self.advance()
        self._check_failure("stop_container")
        c = self._container(container_id)
        if c.state == "running":
            self._finish(c, self.clock.now(), STOP_EXIT_CODE, "Error")
        elif c.state == "created":
            self._finish(c, self.clock.now(), 0, "")

    async def remove_container(self, container_id: str) -> None:
        self.advance()
        self._check_failure("remove_container")
        removed = self._containers.pop(container_id, None)
        if removed is not None:
            if removed.process is not None:
                removed.process.stop()
            self._removed_logs[(removed.sandbox_id, removed.config.name)] = removed.log
            self.fleet.drop_row(removed.slot)
            self.stats_events.set()

    async def update_container_resources(self, container_id: str, resources: ContainerResources) -> None:
        self.advance()
        self._check_failure("update_container_resources")
        c = self._container(container_id)
        linux = resources.linux if resources is not None else None
        if linux is None:
            raise CriError("UpdateContainerResources: linux resources are required by this runtime")
        limit = linux.memory_limit_in_bytes
        if c.state == "running" and limit > 0 and c.memory > limit:
            raise CriError(f"container {container_id[:12]}: cannot set memory limit {limit} below the current "
                           f"usage {int(round(c.memory))} (the kernel refused it)")
        c.resources = linux
        if c.argv is None:
                c.log.say(self.clock.now(), f"resources updated: cpu shares {linux.cpu_shares}, cpu quota "
                                        f"{linux.cpu_quota}/{linux.cpu_period}, memory limit "
                                        f"{linux.memory_limit_in_bytes or 'none'}")
        self._sync(c)

    def container_log(self, sandbox_id: str, name: str, *, previous: bool = False) -> ContainerLog | None:
        """The log of a pod's container (``previous``: of the instance before the current one,
        as ``kubectl logs -p``), or None when there is no such instance."""
        instances = sorted((c for c in self._containers.values()
                            if c.sandbox_id == sandbox_id and c.config.name == name),
                           key=lambda c: c.created_at)
        if not previous:
            return instances[-1].log if instances else None
        if len(instances) > 1:
            return instances[-2].log
        return self._removed_logs.get((sandbox_id, name))

    def _running(self, container_id: str) -> _Container:
        self.advance()
        c = self._container(container_id)
        if c.state != "running":
            raise CriError(f"container {container_id[:12]} is not running (state {c.state})")
        return c

    def _filesystem(self, c: _Container) -> Filesystem:
        if c.fs is None:
            sandbox = self._sandbox(c.sandbox_id).config
            c.fs = simstreams.new_filesystem(sandbox.name, sandbox.namespace, c.config.image)
        return c.fs

    def runs_program(self, container_id: str) -> bool:
        """Whether the container runs a program (its exec probes are run, ``prober``)."""
        c = self._containers.get(container_id)
        return c is not None and c.argv is not None

    def _env(self, c: _Container) -> dict[str, str]:
        return {"HOSTNAME": self._sandbox(c.sandbox_id).config.name, **dict(c.config.env)}

    async def exec(self, container_id: str, command, io) -> int:
        c = self._running(container_id)
        return await simstreams.exec_in(self._filesystem(c), self._env(c), " ".join(c.config.command + c.config.args),
                                        command, io, self.clock, network=self._sandbox(c.sandbox_id).network)

    async def attach(self, container_id: str, io) -> None:
        c = self._running(container_id)
        if c.process is not None:
            await c.process.attach(io)
            return
        await simstreams.attach_to(c.log, self.clock, io)

    async def port_forward(self, sandbox_id: str, port: int):
        sandbox = self._sandbox(sandbox_id)
        listening = await sandbox.network.dial(port)
        if listening is not None:
            return listening
        running = [c for c in self._containers.values() if c.sandbox_id == sandbox_id and c.state == "running"]
        ports = {p: c for c in running for p in c.config.ports}
        for c in running:
            if simstreams.web_root(c.config.image):
                ports.setdefault(simstreams.WEB_PORT, c)
        owner = ports.get(port)
        answer = None
        if owner is not None:
            banner = (f"kvert simulated container {owner.config.name} ({owner.config.image}) of pod "
                      f"{sandbox.config.namespace}/{sandbox.config.name}, port {port}")
            answer = simstreams.responder(self._filesystem(owner), owner.config.image, banner)
        return await simstreams.connect(set(ports), port, answer)

    async def container_status(self, container_id: str) -> ContainerStatus:
        self.advance()
        self._check_failure("container_status")
        return self._status(self._container(container_id))

    async def list_containers(self, sandbox_id: str | None = None) -> list[ContainerStatus]:
        self.advance()
        self._check_failure("list_containers")
        return [self._status(c) for c in self._containers.values()
                if sandbox_id is None or c.sandbox_id == sandbox_id]


def usage_annotation(spec: dict) -> dict[str, str]:
    """``{"kvert.io/usage": json}`` for a ContainerConfig, from a container-level spec dict."""
    return {USAGE_ANNOTATION: json.dumps(spec, sort_keys=True)}


__all__ = ["CALLS", "OOM_EXIT_CODE", "OomKill", "STOP_EXIT_CODE", "SimRuntime", "usage_annotation"]
