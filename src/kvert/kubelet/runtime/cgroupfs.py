"""A real container runtime: the Runtime protocol over processes in Linux cgroups.

A pod sandbox is a cgroup (seed 004's ``kubepods/<tier>/pod<uid>``, under the node's own
``kvert-<node>``; see ``cgroupfs_tree``), a container a cgroup below it and a process
group in a session of its own, started in its cgroups before it runs anything (the
child writes its pid to each ``cgroup.procs`` and its ``oom_score_adj`` between fork and
exec). There are no images, network or pid namespaces: the command runs on the host as
it is named (``command`` + ``args``), in the host's network (see
docs/kubernetes-choices.md); the image is recorded, never pulled. The image
``kvert/stress`` (any tag) runs ``kvert stress``, the built-in load generator, with the
pod's usage profile (``kvert.io/usage``) in ``KVERT_USAGE``; the image ``kvert.IMAGE_REPOSITORY``
(any tag) runs this installation's ``kvert`` with the container's arguments.

Every container runs in a mount namespace of its own (``mountns``), where its volumes
(``ContainerConfig.mounts``) are bound at their mountPaths over the host's filesystem, kvert's
data directory is covered by an empty tmpfs (the store, the PKI, the admin kubeconfig, the
other pods' volumes and logs) and ``/sys/fs/cgroup`` is read-only (but for a privileged
container); the host's mounts do not change. Then the child takes the container's user,
groups and no_new_privs (``credentials``: ``runAsUser``, ``runAsGroup``, the supplemental
groups), last before exec; a process exec'd in the container joins its mounts and takes
the same.

Output goes to a CRI-format log file per container instance under
``<data_dir>/pods/<namespace>_<pod>_<uid>/<container>/<n>.log`` (``crilog``).

A container that ends by SIGKILL while its cgroup's ``oom_kill`` counter grew was
OOM-killed (reason ``OOMKilled``); otherwise exit code 0 is ``Completed`` and anything
else ``Error``, a signal ``128 + signal``. When the main process ends, what is left in
the container's cgroup is killed, and a stopped pod's cgroup loses every process it has
(``NodeCgroups.kill``: ``cgroup.kill``, or frozen and killed, so a process that forks or
daemonizes meanwhile goes too) before it is removed. Resource updates are written all or nothing: a refused
write (a memory limit under the pages in use: EBUSY) restores what was written and raises
``CriError``, so the node agent keeps the old values and retries, as with the sim runtime.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kvert
from kvert.clock import wait_event
from kvert.clock.base import Clock
from kvert.kubelet.cgroups import cgroup_files, qos_cgroup_path
from kvert.kubelet.psi import ResourcePressure, read_pressure
from kvert.kubelet.runtime import credentials, mountns
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
    StreamIO,
)
from kvert.kubelet.runtime.cgroupfs_tree import ROOT, CgroupError, NodeCgroups, detect, write_value
from kvert.kubelet.runtime.crilog import FileLog, LogWriter
from kvert.kubelet.runtime.logrotation import DEFAULT_POLICY, LogRotatePolicy
from kvert.kubelet.runtime.logrotation import disk_usage as log_disk_usage
from kvert.kubelet.usage import USAGE_ANNOTATION

log = logging.getLogger(__name__)

STRESS_IMAGE = "kvert/stress"
STRESS_ENV = "KVERT_USAGE"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
START_ERROR_EXIT_CODE = 128
REAP_TIMEOUT = 5.0             # seconds to wait for a killed process group to be gone
_READ = 65536


@dataclass
class _Sandbox:
    id: str
    config: PodSandboxConfig
    rel: str                               # the pod cgroup, relative to the node's base
    resources: LinuxContainerResources | None
    state: str = "ready"


@dataclass
class _Container:
    id: str
    sandbox_id: str
    config: ContainerConfig
    rel: str
    resources: LinuxContainerResources
    argv: list[str]
    env: dict[str, str]
    created_at: float
    log: FileLog
    state: str = "created"
    finished_at: float = 0.0
    exit_code: int = 0
    reason: str = ""
    oom_base: int = 0
    mounts: mountns.Plan | None = None     # its own mount namespace (None: the host's)
    creds: credentials.Credentials = field(default_factory=credentials.Credentials)
    proc: asyncio.subprocess.Process | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    listeners: list[asyncio.Queue] = field(default_factory=list)


def _repository(image: str) -> str:
    """``kvert/stress:v1`` -> ``kvert/stress`` (a registry port's colon is kept)."""
    name = image.split("@", 1)[0]
    head, _, tag = name.rpartition(":")
    return head if head and "/" not in tag else name


def _is_image(image: str, repository: str) -> bool:
    """Whether ``image`` (any tag or digest) is ``repository``, with or without Docker Hub's
    implicit ``docker.io/`` prefix."""
    name = _repository(image)
    return name == repository or (not repository.split("/")[0].count(".") and name == f"docker.io/{repository}")


def _kvert_entrypoint(module: str = "kvert.cli.main") -> tuple[list[str], dict[str, str]]:
    """This installation's ``kvert`` (or one command's ``module``), as the image's entrypoint
    would run it."""
    return [sys.executable, "-m", module], {"PYTHONPATH": str(Path(kvert.__file__).resolve().parents[1])}


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _meminfo(path: Path = Path("/proc/meminfo")) -> dict[str, int]:
    out = {}
    for line in path.read_text().splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return out


def machine_capacity() -> dict[str, int]:
    """This machine's cpus (the ones this process may use, in millicores) and memory, and the
    kubelet's default pod count: a node's capacity when none is given."""
    return {"cpu": len(os.sched_getaffinity(0)) * 1000, "memory": _meminfo().get("MemTotal", 0), "pods": 110}


def unavailable() -> str | None:
    """Why this machine cannot run the cgroupfs runtime, or None."""
    if os.geteuid() != 0:
        return "the cgroupfs runtime needs root (it writes cgroups and oom_score_adj)"
    if detect() is None:
        return f"no cgroup filesystem (v1 cpu and memory, or v2) at {ROOT}"
    try:            # a hierarchy of our own can be made, and removed
        NodeCgroups.open(f"probe-{os.getpid()}").remove("")
    except CgroupError as e:
        return str(e.strerror or e)
    return None


class CgroupfsRuntime:
    """Containers as processes in the cgroups of ``tree`` (a ``NodeCgroups``); logs under
    ``data_dir``. ``close()`` kills every container and removes the node's cgroups."""

    id_scheme = "cgroupfs"      # of containerIDs, as containerd:// or cri-o://
    real_processes = True       # probes reach them (kvert.kubelet.prober)
    # containerLogMaxSize / containerLogMaxFiles (the node agent's assembly sets the node's)
    log_policy: LogRotatePolicy = DEFAULT_POLICY

    def __init__(self, clock: Clock, tree: NodeCgroups, data_dir: Path, *, name: str = "node",
                 cgroup_driver: str = "cgroupfs", masked: Sequence[Path] | None = None) -> None:
        self.clock = clock
        self.tree = tree
        self.data_dir = Path(data_dir)
        # what no container sees (an empty directory in its mount namespace)
        self.masked = [Path(p) for p in masked] if masked is not None else kvert_directories(self.data_dir)
        self.name = name
        self.cgroup_driver = cgroup_driver
        self._sandboxes: dict[str, _Sandbox] = {}
        self._containers: dict[str, _Container] = {}
        self._logs: dict[Path, FileLog] = {}       # the logs of this run's containers, removed ones too
        self._node_cgroups: dict[str, LinuxContainerResources] = {}
        self._tasks: set[asyncio.Task] = set()
        self._closed = False
        self._clean_leftovers()

    @classmethod
    def open(cls, clock: Clock, node: str, data_dir: Path, **options: Any) -> CgroupfsRuntime:
        """The runtime of ``node`` on this machine's cgroup filesystem (CgroupError without one)."""
        return cls(clock, NodeCgroups.open(node), data_dir, name=node, **options)

    def _clean_leftovers(self) -> None:
        """A previous run of this node that did not stop cleanly left processes and cgroups."""
        self._kill_everything()
        shutil.rmtree(self.data_dir / "mounts", ignore_errors=True)
        for tier in ("", "burstable", "besteffort"):
            self.tree.create(qos_cgroup_path(tier, self.cgroup_driver).strip("/"))

    # -- lookups -------------------------------------------------------------------------------

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

    def _check_open(self) -> None:
        if self._closed:
            raise CriError(f"the runtime of node {self.name} is shut down")

    def node_info(self) -> dict[str, str]:
        """What the Node's ``status.nodeInfo`` says of this machine and runtime."""
        release = {}
        with contextlib.suppress(OSError):
            for line in Path("/etc/os-release").read_text().splitlines():
                key, _, value = line.partition("=")
                release[key] = value.strip('"')
        return {"kernelVersion": os.uname().release, "osImage": release.get("PRETTY_NAME", "Linux"),
                "containerRuntimeVersion": f"{self.id_scheme}://cgroup-v{self.tree.version}"}

    def sandbox_state(self, sandbox_id: str) -> str:
        return self._sandbox(sandbox_id).state

    def _files(self, res: LinuxContainerResources, kubelet: bool) -> dict[str, str]:
        return cgroup_files(res, self.tree.version, kubelet=kubelet)

    def _write(self, rel: str, values: dict[str, str], what: str) -> None:
        try:
            self.tree.write(rel, values)
        except CgroupError as e:
            raise CriError(f"{what}: {e.strerror or e}") from None

    # -- node level ---------------------------------------------------------------------------------

    def set_node_cgroups(self, values: dict[str, LinuxContainerResources]) -> None:
        """kubepods and the QoS tiers, written by the kubelet itself (not through the CRI)."""
        for level, res in values.items():
            tier = "" if level == "kubepods" else level
            rel = qos_cgroup_path(tier, self.cgroup_driver).strip("/")
            try:
                self.tree.write(rel, self._files(res, kubelet=True))
            except CgroupError as e:
                log.warning("node %s: %s cgroup not updated: %s", self.name, level, e)
                continue
            self._node_cgroups[level] = res

    def node_cgroups(self) -> dict[str, LinuxContainerResources]:
        return dict(self._node_cgroups)

    # -- sandboxes ----------------------------------------------------------------------------------

    async def run_pod_sandbox(self, config: PodSandboxConfig) -> str:
        self._check_open()
        sandbox_id = os.urandom(32).hex()
        rel = config.cgroup_parent.strip("/")
        try:
            self.tree.create(rel)
        except CgroupError as e:
            raise CriError(f"pod sandbox cgroup {rel}: {e.strerror or e}") from None
        if config.resources is not None:
            try:
                self._write(rel, self._files(config.resources, kubelet=True), f"pod sandbox cgroup {rel}")
            except CriError:
                self.tree.remove(rel)
                raise
        self._sandboxes[sandbox_id] = _Sandbox(sandbox_id, config, rel, config.resources)
        return sandbox_id

    async def update_pod_sandbox_resources(self, sandbox_id: str, resources: LinuxContainerResources) -> None:
        sandbox = self._sandbox(sandbox_id)
        self._write(sandbox.rel, self._files(resources, kubelet=True), f"pod sandbox {sandbox_id[:12]}")
        sandbox.resources = resources

    async def stop_pod_sandbox(self, sandbox_id: str) -> None:
        sandbox = self._sandboxes.get(sandbox_id)
        if sandbox is None:
            return
        for c in self._of(sandbox_id):
            await self._kill(c, 0)
        self.tree.kill(sandbox.rel)     # whatever is left in the pod's cgroups, wherever it forked
        sandbox.state = "notready"

    async def remove_pod_sandbox(self, sandbox_id: str) -> None:
        sandbox = self._sandboxes.get(sandbox_id)
        if sandbox is None:
            return
        for c in self._of(sandbox_id):
            await self.remove_container(c.id)
        await self._remove_cgroup(sandbox.rel)
        pod_logs = self._pod_logs(sandbox.config)
        for path in [p for p in self._logs if pod_logs in p.parents]:
            del self._logs[path]
        for path in sorted(pod_logs.rglob("*"), key=lambda p: -len(p.parts)) if pod_logs.is_dir() else []:
            path.rmdir() if path.is_dir() else path.unlink()
        with contextlib.suppress(OSError):
            pod_logs.rmdir()
        del self._sandboxes[sandbox_id]

    def _of(self, sandbox_id: str) -> list[_Container]:
        return [c for c in self._containers.values() if c.sandbox_id == sandbox_id]

    async def _remove_cgroup(self, rel: str) -> None:
        deadline = self.clock.now() + REAP_TIMEOUT
        while not self.tree.remove(rel):
            self.tree.kill(rel)
            if self.clock.now() > deadline:
                log.warning("node %s: cgroup %s still has processes; left in place", self.name, rel)
                return
            await self.clock.sleep(0.05)

    # -- containers ---------------------------------------------------------------------------------

    def _command(self, config: ContainerConfig) -> tuple[list[str], dict[str, str]]:
        """The argv and the environment of the container's main process."""
        env = {"PATH": DEFAULT_PATH}
        entrypoint: list[str] = []
        command = list(config.command)
        if _is_image(config.image, STRESS_IMAGE):
            entrypoint, extra = _kvert_entrypoint("kvert.cli.stress")
            env.update(extra)
            usage = (config.annotations or {}).get(USAGE_ANNOTATION)
            if usage:
                env[STRESS_ENV] = usage
        elif _is_image(config.image, kvert.IMAGE_REPOSITORY):
            entrypoint, extra = _kvert_entrypoint()
            env.update(extra)
            if command and os.path.basename(command[0]) == "kvert":
                # the image's own kvert, named as a command: this installation's here too
                command = entrypoint + command[1:]
        argv = list(command or entrypoint) + list(config.args)
        if not argv:
            raise CriError(f"container {config.name!r}: the cgroupfs runtime does not pull images, so "
                           f"image {config.image!r} has no entrypoint here: give the container a command")
        env.update(config.env)
        return argv, env

    async def create_container(self, sandbox_id: str, config: ContainerConfig) -> str:
        sandbox = self._sandbox(sandbox_id)
        if sandbox.state != "ready":
            raise CriError(f"pod sandbox {sandbox_id[:12]} is not ready")
        argv, env = self._command(config)
        env.setdefault("HOSTNAME", sandbox.config.name)
        resources = (config.resources.linux if config.resources is not None else None) or LinuxContainerResources()
        container_id = os.urandom(32).hex()
        creds = credentials.resolve(config.security)
        try:
            mounts = mountns.plan(config.mounts, self._staging(container_id), config.working_dir or "/",
                                  masks=[str(p) for p in self.masked],
                                  readonly=[] if config.security.privileged else [str(ROOT)],
                                  expose=self._image_files(config) if creds.uid else [])
        except OSError as e:
            raise CriError(f"container {config.name!r}: mounts: {e.strerror or e}") from None
        rel = f"{sandbox.rel}/{container_id}"
        try:
            self.tree.create(rel)
        except CgroupError as e:
            raise CriError(f"container cgroup {rel}: {e.strerror or e}") from None
        values = self._files(resources, kubelet=False)
        if self.tree.version == 2:
            values["memory.oom.group"] = "1"     # the kubelet's default: kill the whole container
        try:
            self._write(rel, values, f"container {config.name!r}")
        except CriError:
            self.tree.remove(rel)
            raise
        logs = _numbered_logs(self._pod_logs(sandbox.config) / config.name)
        # numbered on from what is there, as the kubelet's <restart count>.log (a restarted
        # runtime finds the files of its predecessor)
        path = self._pod_logs(sandbox.config) / config.name / f"{int(logs[-1].stem) + 1 if logs else 0}.log"
        self._logs[path] = FileLog(path)
        self._containers[container_id] = _Container(container_id, sandbox_id, config, rel, resources, argv, env,
                                                    self.clock.now(), self._logs[path], mounts=mounts,
                                                    creds=creds)
        return container_id

    @staticmethod
    def _image_files(config: ContainerConfig) -> list[str]:
        """What the images that run this installation's kvert need to read: its interpreter
        and its sources (a user's container reaches them even below root's 0700 home)."""
        if not (_is_image(config.image, STRESS_IMAGE) or _is_image(config.image, kvert.IMAGE_REPOSITORY)):
            return []
        return [os.path.realpath(sys.executable), sys.prefix, sys.base_prefix,
                str(Path(kvert.__file__).resolve().parents[1])]

    def _staging(self, container_id: str) -> Path:
        """Empty mount points for a container's mount namespace (nothing shows there on the host)."""
        return self.data_dir / "mounts" / container_id

    def _pod_logs(self, config: PodSandboxConfig) -> Path:
        return self.data_dir / "pods" / f"{config.namespace}_{config.name}_{config.uid}"

    def _joiner(self, c: _Container, *, exec_in: int | None = None):
        """What the child runs between fork and exec: join the container's cgroups, take its
        oom_score_adj (kept across exec), then make its mount namespace (or, for a process
        exec'd in the container, join that of its main process ``exec_in``), then take the
        container's user, groups and no_new_privs (all of it needs root until then)."""
        procs = [str(p) for p in self.tree.procs_files(c.rel)]
        adj = str(c.resources.oom_score_adj)
        plan, cwd, creds = c.mounts, c.config.working_dir or "/", c.creds
        if plan is not None:
            mountns.load()

        def join() -> None:
            pid = str(os.getpid())
            for path in procs:
                write_value(path, pid)
            try:
                write_value("/proc/self/oom_score_adj", adj)
            except OSError:
                pass     # lowering it needs CAP_SYS_RESOURCE: the process keeps the runtime's
            try:
                if plan is not None:
                    if exec_in is not None:
                        mountns.enter(exec_in, cwd)
                    else:
                        mountns.apply(plan)
            except OSError as e:
                # the parent learns only that preexec failed: the reason goes to the log
                os.write(2, f"kvert: container mounts: {e}\n".encode())
                raise
            try:
                credentials.apply(creds)
            except OSError as e:
                os.write(2, f"kvert: container user: {e}\n".encode())
                raise
        return join

    def _cwd(self, c: _Container) -> str:
        # with mounts the working directory may be in a volume: entered once they are there
        return "/" if c.mounts is not None else c.config.working_dir or "/"

    async def start_container(self, container_id: str) -> None:
        c = self._container(container_id)
        self._check_open()
        if c.state != "created":
            raise CriError(f"container {container_id[:12]} is {c.state}, only a created container can start")
        if self._sandbox(c.sandbox_id).state != "ready":
            raise CriError(f"pod sandbox {c.sandbox_id[:12]} is not ready")
        c.oom_base = self.tree.stats(c.rel).oom_kills
        try:
            c.proc = await asyncio.create_subprocess_exec(
                *c.argv, stdin=subprocess.PIPE if c.config.stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=c.env, cwd=self._cwd(c),
                start_new_session=True, preexec_fn=self._joiner(c))
        except (OSError, subprocess.SubprocessError) as e:
            self._finish(c, START_ERROR_EXIT_CODE, "StartError")
            raise CriError(f"container {c.config.name!r}: cannot run {c.argv[0]!r}: {e}") from None
        c.state = "running"
        c.log.started_at = self.clock.now()
        self._spawn(self._supervise(c))

    def _spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _supervise(self, c: _Container) -> None:
        """Copy the output to the log (and attached streams) until the process ends; then
        the container's status."""
        assert c.proc is not None
        writer = LogWriter(c.log.path, self.clock, self.log_policy)
        pumps = [asyncio.ensure_future(self._pump(c, c.proc.stdout, "stdout", writer)),
                 asyncio.ensure_future(self._pump(c, c.proc.stderr, "stderr", writer))]
        try:
            code = await c.proc.wait()
            oom = self.tree.stats(c.rel).oom_kills > c.oom_base
            self.tree.kill(c.rel)        # what the main process left behind goes with it
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*pumps), REAP_TIMEOUT)
        finally:
            for p in pumps:
                p.cancel()
            writer.close()
        exit_code = _exit_code(code)
        if code == -signal.SIGKILL and oom:
            reason = "OOMKilled"
        else:
            reason = "Completed" if exit_code == 0 else "Error"
        self._finish(c, exit_code, reason)

    async def _pump(self, c: _Container, stream: asyncio.StreamReader | None, name: str,
                    writer: LogWriter) -> None:
        while stream is not None:
            data = await stream.read(_READ)
            if not data:
                return
            await writer.append(name, data)     # waits while the log rotates
            for queue in c.listeners:
                queue.put_nowait((name, data))

    def _finish(self, c: _Container, exit_code: int, reason: str) -> None:
        if c.state == "exited":
            return
        c.state = "exited"
        c.exit_code = exit_code
        c.reason = reason
        c.finished_at = c.log.finished_at = self.clock.now()
        c.ended.set()
        for queue in c.listeners:
            queue.put_nowait(None)

    async def _kill(self, c: _Container, grace: int) -> None:
        """SIGTERM, SIGKILL after ``grace`` seconds; returns once the container has ended."""
        if c.state == "created":
            self._finish(c, 0, "")
            return
        if c.state != "running" or c.proc is None:
            return
        if grace > 0:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(c.proc.pid, signal.SIGTERM)
            await wait_event(c.ended, grace)
        if not c.ended.is_set():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(c.proc.pid, signal.SIGKILL)
            self.tree.kill(c.rel)
            await wait_event(c.ended, REAP_TIMEOUT)

    async def stop_container(self, container_id: str, timeout_seconds: int = 0) -> None:
        await self._kill(self._container(container_id), timeout_seconds)

    async def remove_container(self, container_id: str) -> None:
        c = self._containers.get(container_id)
        if c is None:
            return
        await self._kill(c, 0)
        await self._remove_cgroup(c.rel)
        # empty directories on the host: the mounts were the container's namespace's
        shutil.rmtree(self._staging(container_id), ignore_errors=True)
        del self._containers[container_id]

    async def update_container_resources(self, container_id: str, resources: ContainerResources) -> None:
        c = self._container(container_id)
        linux = resources.linux if resources is not None else None
        if linux is None:
            raise CriError("UpdateContainerResources: linux resources are required by this runtime")
        self._write(c.rel, self._files(linux, kubelet=False), f"container {container_id[:12]}")
        c.resources = linux

    def container_log(self, sandbox_id: str, name: str, *, previous: bool = False) -> FileLog | None:
        """The log of the container's current instance, or (``previous``) of the one before it,
        which may be a file a previous run of the runtime left."""
        instances = sorted((c for c in self._containers.values()
                            if c.sandbox_id == sandbox_id and c.config.name == name), key=lambda c: c.created_at)
        if not previous:
            return instances[-1].log if instances else None
        sandbox = self._sandboxes.get(sandbox_id)
        if sandbox is None:
            return None
        current = int(instances[-1].log.path.stem) if instances else None
        older = [p for p in _numbered_logs(self._pod_logs(sandbox.config) / name)
                 if current is None or int(p.stem) < current]
        if not older:
            return None
        return self._logs.get(older[-1]) or FileLog.of_file(older[-1])

    # -- status and statistics ----------------------------------------------------------------------

    def _status(self, c: _Container) -> ContainerStatus:
        stats = self.tree.stats(c.rel)
        return ContainerStatus(
            id=c.id, name=c.config.name, state=c.state, resources=ContainerResources(linux=c.resources),
            started_at=c.log.started_at, finished_at=c.finished_at, exit_code=c.exit_code, reason=c.reason,
            cpu_usage_core_nanoseconds=stats.cpu_ns,
            memory_working_set_bytes=stats.working_set if c.state == "running" else 0,
            cpu_throttled_periods=stats.throttled_periods, cpu_throttled_nanoseconds=stats.throttled_ns,
            oom_events=max(0, stats.oom_kills - c.oom_base), cpu_periods=stats.periods,
            pressure=self._pressure(c.rel))

    def _pressure(self, rel: str) -> ResourcePressure | None:
        """PSI of a cgroup of this node (``rel`` "" is the node's own): cgroup v2 only, as
        upstream, whose cAdvisor reads it through runc's v2 manager."""
        return read_pressure(self.tree.dirs(rel)[0]) if self.tree.version == 2 else None

    def pod_pressure(self, sandbox_id: str) -> ResourcePressure | None:
        return self._pressure(self._sandbox(sandbox_id).rel)

    def node_pressure(self) -> ResourcePressure | None:
        return self._pressure("")

    async def container_status(self, container_id: str) -> ContainerStatus:
        return self._status(self._container(container_id))

    async def list_containers(self, sandbox_id: str | None = None) -> list[ContainerStatus]:
        return [self._status(c) for c in list(self._containers.values())
                if sandbox_id is None or c.sandbox_id == sandbox_id]

    async def node_stats(self) -> NodeStats:
        """The machine's memory (``/proc/meminfo``), the kubepods cgroup's, the data directory's
        filesystem and the processes of the node."""
        meminfo = _meminfo()
        capacity = meminfo.get("MemTotal", 0)
        kubepods_rel = qos_cgroup_path("", self.cgroup_driver).strip("/")
        pods = self.tree.stats(kubepods_rel)
        kubepods = self._node_cgroups.get("kubepods")
        limit = kubepods.memory_limit_in_bytes if kubepods is not None and kubepods.memory_limit_in_bytes else capacity
        fs = os.statvfs(self.data_dir if self.data_dir.exists() else "/")
        nodefs = FsStats(fs.f_blocks * fs.f_frsize, fs.f_bavail * fs.f_frsize, fs.f_files, fs.f_favail)
        containers = list(self._containers.values())

        def pod_stats() -> dict[str, PodStats]:
            out: dict[str, PodStats] = {}
            for c in containers:
                sandbox = self._sandboxes.get(c.sandbox_id)
                if sandbox is None:
                    continue
                ps = out.setdefault(sandbox.config.uid, PodStats())
                stats = self.tree.stats(c.rel)
                memory = stats.working_set if c.state == "running" else 0
                disk = log_disk_usage(c.log.path)     # its logs, rotated ones too (no writable layer)
                ps.containers[c.config.name] = ContainerStats(memory=memory, disk=disk, inodes=1)
                ps.memory += memory
                ps.disk += disk
                ps.inodes += 1
                ps.processes += len(self.tree.pids(c.rel)) if c.state == "running" else 0
            return out

        processes = sum(1 for entry in os.scandir("/proc") if entry.name.isdigit())
        max_pid = int(Path("/proc/sys/kernel/pid_max").read_text())  # noqa: ASYNC240 - procfs never blocks
        return NodeStats(time=self.clock.now(), memory_capacity=capacity,
                         memory_working_set=max(0, capacity - meminfo.get("MemAvailable", capacity)),
                         pods_memory_limit=limit, pods_memory_working_set=pods.working_set, nodefs=nodefs,
                         max_pid=max_pid, processes=processes, pod_stats=pod_stats)

    # -- streaming -------------------------------------------------------------------------------------

    def _exec_joiner(self, c: _Container):
        return self._joiner(c, exec_in=c.proc.pid if c.proc is not None else None)

    async def exec(self, container_id: str, command: Sequence[str], io: StreamIO) -> int:
        c = self._container(container_id)
        if c.state != "running":
            raise CriError(f"container {container_id[:12]} is not running")
        if not command:
            raise CriError("exec: no command")
        if io.tty:
            return await self._exec_tty(c, list(command), io)
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=c.env,
            cwd=self._cwd(c), start_new_session=True, preexec_fn=self._exec_joiner(c))
        feeder = asyncio.ensure_future(_feed(io, proc.stdin))
        try:
            await asyncio.gather(_drain(proc.stdout, io.write_stdout), _drain(proc.stderr, io.write_stderr))
            return _exit_code(await proc.wait())
        finally:
            feeder.cancel()
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()

    async def _exec_tty(self, c: _Container, command: list[str], io: StreamIO) -> int:
        master, child = pty.openpty()
        join = self._exec_joiner(c)

        def setup() -> None:
            join()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)    # the pty becomes the session's terminal
        try:
            proc = await asyncio.create_subprocess_exec(
                *command, stdin=child, stdout=child, stderr=child, env={"TERM": "xterm", **c.env},
                cwd=self._cwd(c), start_new_session=True, preexec_fn=setup)
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(child)
        os.set_blocking(master, False)
        loop = asyncio.get_running_loop()
        output: asyncio.Queue[bytes | None] = asyncio.Queue()

        def readable() -> None:
            try:
                data = os.read(master, _READ)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:                       # EIO: every holder of the terminal closed it
                data = b""
            if not data:
                loop.remove_reader(master)
            output.put_nowait(data or None)

        async def copy_out() -> None:
            while (data := await output.get()) is not None:
                await io.write_stdout(data)

        async def copy_in() -> None:
            while (data := await io.read_stdin()) is not None:
                os.write(master, data)

        async def resize() -> None:
            while (size := await io.next_resize()) is not None:
                width, height = size
                fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))

        loop.add_reader(master, readable)
        helpers = [asyncio.ensure_future(copy_in()), asyncio.ensure_future(resize())]
        try:
            code = await proc.wait()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(copy_out(), 1.0)
            return _exit_code(code)
        finally:
            for task in helpers:
                task.cancel()
            loop.remove_reader(master)
            os.close(master)
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)

    async def attach(self, container_id: str, io: StreamIO) -> None:
        """The main process's output from now on (and its stdin, if the container keeps one),
        until the process ends."""
        c = self._container(container_id)
        if c.state != "running":
            raise CriError(f"container {container_id[:12]} is not running")
        queue: asyncio.Queue = asyncio.Queue()
        c.listeners.append(queue)
        stdin = c.proc.stdin if c.proc is not None else None
        feeder = asyncio.ensure_future(_feed(io, stdin, close=c.config.stdin_once)) if stdin else None
        try:
            while (item := await queue.get()) is not None:
                name, data = item
                await (io.write_stdout(data) if name == "stdout" or io.tty else io.write_stderr(data))
        finally:
            c.listeners.remove(queue)
            if feeder is not None:
                feeder.cancel()

    async def port_forward(self, sandbox_id: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Containers share the host's network: the pod's port is the host's loopback port."""
        self._sandbox(sandbox_id)
        try:
            return await asyncio.open_connection("127.0.0.1", port)
        except OSError as e:
            raise CriError(f"port {port} of pod sandbox {sandbox_id[:12]}: {e.strerror or e}") from None

    # -- shutdown ----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Kill every container (at once: nothing waits for a grace period) and remove the
        node's cgroups; no container starts afterwards."""
        self._closed = True
        self._kill_everything()
        shutil.rmtree(self.data_dir / "mounts", ignore_errors=True)
        self.tree.remove("")
        for c in self._containers.values():
            self._finish(c, _exit_code(-signal.SIGKILL), "Error")

    async def wait_closed(self) -> None:
        """Until the killed processes are reaped and their pipes closed (after ``close()``)."""
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _kill_everything(self) -> None:
        for _ in range(10):      # a process may fork while it is being killed
            pids = self.tree.kill("")
            if not pids:
                break
            _wait_gone(pids, REAP_TIMEOUT)
        for d in self.tree.dirs(""):
            for child in d.iterdir() if d.is_dir() else []:
                if child.is_dir():
                    self.tree.remove(child.name)


def kvert_directories(data_dir: Path) -> list[Path]:
    """What a node's containers must not see by default: its own data directory and, for a
    node of ``kvert up`` (``<data-dir>/nodes/<name>``), the cluster's (the store, the PKI,
    the kubeconfigs and every node's pods)."""
    out = [data_dir]
    if data_dir.parent.name == "nodes":
        out.insert(0, data_dir.parent.parent)
    return out


def _numbered_logs(directory: Path) -> list[Path]:
    """``0.log``, ``1.log``, ... of a container's log directory, in order."""
    found = [p for p in directory.glob("*.log") if p.stem.isdigit()] if directory.is_dir() else []
    return sorted(found, key=lambda p: int(p.stem))


def _wait_gone(pids: list[int], timeout: float) -> None:
    """Until the processes have exited (pidfds become readable then), at most ``timeout``."""
    fds = []
    for pid in pids:
        with contextlib.suppress(OSError):
            fds.append(os.pidfd_open(pid))
    try:
        waiting = list(fds)
        while waiting:
            ready, _, _ = select.select(waiting, [], [], timeout)
            if not ready:
                return
            waiting = [fd for fd in waiting if fd not in ready]
    finally:
        for fd in fds:
            os.close(fd)


async def _feed(io: StreamIO, pipe: asyncio.StreamWriter | None, close: bool = True) -> None:
    """Copy the caller's stdin into a process's until either closes."""
    if pipe is None:
        return
    try:
        while (data := await io.read_stdin()) is not None:
            pipe.write(data)
            await pipe.drain()
    except (BrokenPipeError, ConnectionResetError):
        return
    if close:
        pipe.close()


async def _drain(stream: asyncio.StreamReader | None, write) -> None:
    while stream is not None:
        data = await stream.read(_READ)
        if not data:
            return
        await write(data)


__all__ = ["CgroupfsRuntime", "STRESS_ENV", "STRESS_IMAGE", "kvert_directories", "machine_capacity", "unavailable"]
