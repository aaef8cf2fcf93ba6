"""The container runtime interface the node agent talks to, shaped like the CRI calls
seed 000 names: RunPodSandbox, CreateContainer, StartContainer, StopContainer,
UpdateContainerResources(ContainerResources{linux, windows}) and ContainerStatus, which
returns the resources actually applied. ``sim`` and (later) ``cgroupfs`` implement it; the
node agent's logic never asks which one it has.

All amounts are integers: cpu in millicores for requests, CFS quota/period in
microseconds, memory in bytes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeGuard

from kvert.kubelet.psi import ResourcePressure


class CriError(Exception):
    """A CRI call failed (the node agent rolls back and retries later)."""


@dataclass(frozen=True)
class LinuxContainerResources:
    cpu_period: int = 100_000          # CFS period, microseconds
    cpu_quota: int = 0                 # CFS quota, microseconds; 0 or -1 = unlimited
    cpu_shares: int = 2                # cgroup v1 shares (v2 weight is derived from it)
    memory_limit_in_bytes: int = 0     # 0 = unlimited
    oom_score_adj: int = 0
    cpuset_cpus: str = ""              # the CPU manager's cpuset ("" = not set: inherited)


@dataclass(frozen=True)
class WindowsContainerResources:
    cpu_shares: int = 0
    cpu_count: int = 0
    cpu_maximum: int = 0
    memory_limit_in_bytes: int = 0


@dataclass(frozen=True)
class ContainerResources:
    """CRI ``ContainerResources``: one of linux / windows is set."""
    linux: LinuxContainerResources | None = None
    windows: WindowsContainerResources | None = None


@dataclass(frozen=True)
class PodSandboxConfig:
    uid: str
    namespace: str
    name: str
    # pod-level cgroup values (seed 004 hierarchy: kubepods / QoS / pod / container)
    cgroup_parent: str = ""
    resources: LinuxContainerResources | None = None
    annotations: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Mount:
    """CRI ``Mount``: ``host_path`` (a volume the kubelet filled, or a hostPath) seen by the
    container at ``container_path``."""
    container_path: str
    host_path: str
    readonly: bool = False


@dataclass(frozen=True)
class LinuxContainerSecurity:
    """CRI ``LinuxContainerSecurityContext``, the part a runtime of processes applies: the
    user and groups the container's processes run as (None: the image's user, root where
    there are no images), ``no_new_privs`` (execve never grants privileges: setuid bits and
    file capabilities are ignored) and ``privileged``."""
    run_as_user: int | None = None
    run_as_group: int | None = None
    supplemental_groups: tuple[int, ...] = ()
    no_new_privs: bool = False
    privileged: bool = False


@dataclass(frozen=True)
class ContainerConfig:
    name: str
    image: str
    resources: ContainerResources
    # the usage profile that drives a simulated container (and ``kvert/stress``)
    annotations: dict = field(default_factory=dict)
    command: tuple[str, ...] = ()      # the image's entrypoint replaced (spec ``command``)
    args: tuple[str, ...] = ()         # its arguments (spec ``args``)
    env: tuple[tuple[str, str], ...] = ()
    working_dir: str = ""
    stdin: bool = False                # keep the main process's stdin open for attach
    stdin_once: bool = False           # close it when the first attach ends
    ports: tuple[int, ...] = ()        # the TCP containerPorts the spec declares
    mounts: tuple[Mount, ...] = ()     # the volumes at their mountPaths (a simulated container has no files)
    security: LinuxContainerSecurity = LinuxContainerSecurity()


@dataclass
class ContainerStatus:
    id: str
    name: str
    state: str                         # "created" | "running" | "exited"
    resources: ContainerResources      # as applied now (seed 000: ContainerStatus returns them)
    started_at: float = 0.0
    finished_at: float = 0.0
    exit_code: int = 0
    reason: str = ""                   # e.g. "OOMKilled", "Error", "Completed"
    cpu_usage_core_nanoseconds: int = 0          # cumulative
    memory_working_set_bytes: int = 0
    cpu_throttled_periods: int = 0
    cpu_throttled_nanoseconds: int = 0
    oom_events: int = 0
    cpu_periods: int = 0                         # elapsed CFS enforcement periods (cumulative)
    pressure: ResourcePressure | None = None     # PSI of its cgroup (None: none, e.g. cgroup v1)


# -- statistics (the kubelet's summary API: cAdvisor and the CRI's stats calls) --------------------

@dataclass
class ContainerStats:
    memory: int = 0                   # working set, bytes
    disk: int = 0                     # writable layer + logs, bytes
    inodes: int = 0


@dataclass
class PodStats:
    memory: int = 0
    disk: int = 0
    inodes: int = 0
    processes: int = 0
    containers: dict[str, ContainerStats] = field(default_factory=dict)


@dataclass
class FsStats:
    capacity: int
    available: int
    inodes: int
    inodes_free: int


@dataclass
class NodeStats:
    """The node's statistics at ``time`` (the summary API's node part, plus the pods')."""
    time: float
    memory_capacity: int
    memory_working_set: int           # everything on the node: pods and system daemons
    pods_memory_limit: int            # the pods cgroup's limit (allocatable, absolute)
    pods_memory_working_set: int
    nodefs: FsStats | None = None
    imagefs: FsStats | None = None    # None: the images share nodefs
    max_pid: int = 0
    processes: int = 0
    # the per-pod statistics, by pod uid, made only when asked for (ranking pods for an
    # eviction needs them; watching the node's totals does not)
    pod_stats: Callable[[], dict[str, PodStats]] | None = field(default=None, repr=False)
    _pods: dict[str, PodStats] | None = field(default=None, repr=False)

    @property
    def pods(self) -> dict[str, PodStats]:
        if self._pods is None:
            self._pods = self.pod_stats() if self.pod_stats is not None else {}
        return self._pods


# -- streaming (the CRI's Exec, Attach and PortForward) --------------------------------------------

class StreamIO(Protocol):
    """The caller's end of an exec or attach session (the API server's remotecommand
    stream, or a test). With ``tty`` the container has one terminal: stderr is merged into
    stdout and ``next_resize`` reports the terminal's size changes."""
    tty: bool
    stdin: bool           # whether the caller sends stdin at all

    async def read_stdin(self) -> bytes | None:
        """The next chunk of stdin; None once stdin is closed (or was never opened)."""

    async def write_stdout(self, data: bytes) -> None: ...

    async def write_stderr(self, data: bytes) -> None: ...

    async def next_resize(self) -> tuple[int, int] | None:
        """The next (width, height) of the terminal; None when no more will come."""


class Runtime(Protocol):
    async def run_pod_sandbox(self, config: PodSandboxConfig) -> str: ...

    async def update_pod_sandbox_resources(self, sandbox_id: str,
                                           resources: LinuxContainerResources) -> None: ...

    async def stop_pod_sandbox(self, sandbox_id: str) -> None: ...

    async def remove_pod_sandbox(self, sandbox_id: str) -> None: ...

    async def create_container(self, sandbox_id: str, config: ContainerConfig) -> str: ...

    async def start_container(self, container_id: str) -> None: ...

    async def stop_container(self, container_id: str, timeout_seconds: int = 0) -> None: ...

    async def remove_container(self, container_id: str) -> None: ...

    async def update_container_resources(self, container_id: str,
                                         resources: ContainerResources) -> None: ...

    async def container_status(self, container_id: str) -> ContainerStatus: ...

    async def list_containers(self, sandbox_id: str | None = None) -> list[ContainerStatus]: ...

    async def node_stats(self) -> NodeStats: ...

    def set_node_cgroups(self, values: dict[str, LinuxContainerResources]) -> None:
        """The kubepods and QoS-level cgroups, which the kubelet writes itself."""

    async def exec(self, container_id: str, command: Sequence[str], io: StreamIO) -> int:
        """Run ``command`` in the running container with ``io`` as its stdin/stdout/stderr;
        the exit code. Raises CriError when the container is not running and
        FileNotFoundError when the command does not exist."""

    async def attach(self, container_id: str, io: StreamIO) -> None:
        """Connect ``io`` to the container's main process until it ends or ``io`` closes."""

    async def port_forward(self, sandbox_id: str,
                           port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to ``port`` inside the pod's network namespace; raises CriError
        when nothing listens there."""


class EventedRuntime(Runtime, Protocol):
    """A runtime that says itself when something changed, so the node agent need not poll:
    container events (the evented PLEG) and memory thresholds (memcg notifications)."""
    events: asyncio.Event                 # set when a container's state changed
    stats_events: asyncio.Event           # set when the node's memory reached the watched level

    def watch_memory(self, working_set: int | None) -> None:
        """Set ``stats_events`` when the node's working set reaches ``working_set`` (None: never)."""

    def stats_static(self) -> bool:
        """Whether the statistics stay as they are until ``stats_events`` says otherwise."""


class PressureRuntime(Runtime, Protocol):
    """A runtime that reports the PSI of pod and node cgroups (containers' is in ContainerStatus)."""

    def pod_pressure(self, sandbox_id: str) -> ResourcePressure | None: ...

    def node_pressure(self) -> ResourcePressure | None: ...


def reports_pressure(runtime: Runtime) -> TypeGuard[PressureRuntime]:
    return hasattr(runtime, "pod_pressure") and hasattr(runtime, "node_pressure")


def is_evented(runtime: Runtime) -> TypeGuard[EventedRuntime]:
    return hasattr(runtime, "stats_events")
